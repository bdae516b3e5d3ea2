#!/usr/bin/env bash
# scripts/m4_benchmark.sh: M4 Hourly (414 series, H = 48, m = 24) with the M4 protocol.
#   1. The official train and test files (datasets/m4/, unmodified) become long CSVs
#      (scripts/m4-to-long.sh): the history alone, and history + test in one file.
#   2. One global model per seed is trained on history + test with data.split
#      "last_horizon": per series, the last 48 rows (the M4 test) are the test part, the 48
#      before them validation (early stopping and every choice of configuration), the rest
#      training. No test value reaches training, scaling or selection.
#   3. `attnfc predict` forecasts the 48 hours after each series' history, and `attnfc score`
#      scores them once against the test file: sMAPE, MASE (in-sample seasonal scaling,
#      m = 24) and OWA as the M4 evaluation defines them, beside Naive1, sNaive, Naive2 and
#      Theta computed by attnfc from the same histories. A quantile model
#      (model.quantiles) writes its intervals too, and score adds M4's MSIS, coverage and
#      ACD per interval, beside seasonal naive with intervals from its own in-sample errors;
#      a calibrated one (train.calibrate) is also scored without its correction
#      (predict --uncalibrated).
#
#   scripts/m4_benchmark.sh [--out DIR] [--bin PATH] [--config FILE] [--seeds 1,2,3]
#                           [--threads T] [--set KEY=VALUE]...
# Output: DIR/seed<S>/ (run folder, forecast.csv, score.json, per_series.csv) and
# DIR/RESULTS.md; default DIR bench/results/m4.
set -euo pipefail
REPO=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
cd "$REPO"

OUT=bench/results/m4 BIN=build/attnfc CONFIG=configs/m4_hourly.json SEEDS=1,2,3 THREADS=2
SETS=()
while [ $# -gt 0 ]; do
  case $1 in
    --out) OUT=$2; shift ;;
    --bin) BIN=$2; shift ;;
    --config) CONFIG=$2; shift ;;
    --seeds) SEEDS=$2; shift ;;
    --threads) THREADS=$2; shift ;;
    --set) SETS+=(--set "$2"); shift ;;
    -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "m4_benchmark: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
[ -x "$BIN" ] || { echo "m4_benchmark: $BIN not found; run 'make build' first" >&2; exit 2; }
command -v jq >/dev/null || { echo "m4_benchmark: jq is required (sudo apt-get install jq)" >&2; exit 2; }

DATA=$OUT/data
mkdir -p "$DATA"
scripts/m4-to-long.sh datasets/m4/Hourly-train.csv > "$DATA/m4_hourly_history.csv"
scripts/m4-to-long.sh datasets/m4/Hourly-train.csv datasets/m4/Hourly-test.csv \
  > "$DATA/m4_hourly.csv"
# The test rows: per id, the rows of the full file beyond the history's count.
awk -F, 'NR == FNR { n[$1]++; next } FNR == 1 { print; next } { if (++seen[$1] > n[$1]) print }' \
  "$DATA/m4_hourly_history.csv" "$DATA/m4_hourly.csv" > "$DATA/m4_hourly_test.csv"

export OMP_NUM_THREADS=$THREADS
for seed in ${SEEDS//,/ }; do
  run=$OUT/seed$seed
  start=$(date +%s)
  "$BIN" --log-level warn train --config "$CONFIG" --set "data.path=$DATA/m4_hourly.csv" \
    --set "train.seed=$seed" "${SETS[@]}" --out "$run"
  end=$(date +%s)
  echo "$((end - start))" > "$run/train_seconds"
  start=$(date +%s%N)
  "$BIN" --log-level error predict -m "$run/model.safetensors" -i "$DATA/m4_hourly_history.csv" \
    -o "$run/forecast.csv"
  end=$(date +%s%N)
  echo "$(( (end - start) / 1000000 ))" > "$run/predict_ms"
  "$BIN" score --forecast "$run/forecast.csv" --actual "$DATA/m4_hourly_test.csv" \
    --history "$DATA/m4_hourly_history.csv" --id-column id --season 24 \
    --out "$run/score.json" --per-series "$run/per_series.csv" | tee "$run/score.txt"
  if [ "$(jq -r '.train.calibrate // "none"' "$run/config.json")" != none ]; then
    "$BIN" --log-level error predict -m "$run/model.safetensors" --uncalibrated \
      -i "$DATA/m4_hourly_history.csv" -o "$run/forecast_uncalibrated.csv"
    "$BIN" score --forecast "$run/forecast_uncalibrated.csv" --actual "$DATA/m4_hourly_test.csv" \
      --history "$DATA/m4_hourly_history.csv" --id-column id --season 24 \
      --out "$run/score_uncalibrated.json" > "$run/score_uncalibrated.txt"
  fi
  # The run's own linear start (its least-squares NLinear shortcut), scored the same way.
  "$BIN" --log-level error predict -m "$run/linear_start.safetensors" \
    -i "$DATA/m4_hourly_history.csv" -o "$run/forecast_start.csv"
  "$BIN" score --forecast "$run/forecast_start.csv" --actual "$DATA/m4_hourly_test.csv" \
    --history "$DATA/m4_hourly_history.csv" --id-column id --season 24 \
    --out "$run/score_start.json" > "$run/score_start.txt"
done

# One table: the model and its linear start as mean ± sample std over seeds, the
# benchmarks (deterministic) from the first seed's scoring; read from score.json (score's
# printed table has interval rows too).
mean_std() {  # mean_std: "mean ± sample std" of the numbers on stdin, one per line
  awk '{ s += $1; q += $1 * $1; n++ } END { m = s / n; v = n > 1 ? (q - n * m * m) / (n - 1) : 0
         printf "%.3f ± %.3f", m, sqrt(v > 0 ? v : 0) }'
}
first=${SEEDS%%,*}
{
  echo "| method | sMAPE | MASE | OWA | seeds |"
  echo "|---|---|---|---|---|"
  for what in score score_start; do
    label=attnfc; [ "$what" = score_start ] && label="linear start"
    row="| $label |"
    for metric in smape mase owa; do
      row+=" $(for seed in ${SEEDS//,/ }; do jq -r ".methods.attnfc.$metric" "$OUT/seed$seed/$what.json"; done | mean_std) |"
    done
    echo "$row $(wc -w <<<"${SEEDS//,/ }") |"
  done
  for method in Naive1 sNaive Naive2 Theta; do
    jq -r --arg m "$method" '.methods[$m] | "\(.smape) \(.mase) \(.owa)"' "$OUT/seed$first/score.json" |
      awk -v m="$method" '{ printf "| %s | %.3f | %.3f | %.3f | |\n", m, $1, $2, $3 }'
  done
} > "$OUT/RESULTS.md"

# Intervals (quantile models): per level, MSIS, coverage and ACD as mean ± std over seeds,
# then seasonal naive's (deterministic) from the first seed's scoring.
if jq -e '.intervals' "$OUT/seed$first/score.json" >/dev/null; then
  over_seeds() {  # over_seeds FILE_STEM METHOD LEVEL FIELD: "mean ± std" over seeds
    for seed in ${SEEDS//,/ }; do jq -r ".intervals[\"$3\"][\"$2\"].$4" "$OUT/seed$seed/$1.json"; done |
      mean_std
  }
  {
    echo
    echo "| method | interval | MSIS | coverage | ACD |"
    echo "|---|---|---|---|---|"
    for level in $(jq -r '.intervals | keys[]' "$OUT/seed$first/score.json" | sort -n); do
      for stem in score score_uncalibrated; do
        [ -f "$OUT/seed$first/$stem.json" ] || continue
        label=attnfc; [ $stem = score_uncalibrated ] && label="attnfc, uncalibrated"
        echo "| $label | $level% | $(over_seeds $stem attnfc "$level" msis) | $(over_seeds $stem attnfc "$level" coverage) | $(over_seeds $stem attnfc "$level" acd) |"
      done
      jq -r --arg l "$level" '.intervals[$l].sNaive | "\(.msis) \(.coverage) \(.acd)"' \
        "$OUT/seed$first/score.json" |
        awk -v l="$level" '{ printf "| sNaive, empirical | %s%% | %.3f | %.3f | %.3f |\n", l, $1, $2, $3 }'
    done
  } >> "$OUT/RESULTS.md"
fi
cat "$OUT/RESULTS.md"
echo "m4_benchmark: results in $OUT/RESULTS.md and $OUT/seed*/score.txt"
