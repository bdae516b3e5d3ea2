#!/usr/bin/env bash
# scripts/covariate_benchmark.sh: what each covariate role adds, on the bundled pollution.csv
# (Beijing PM2.5, hourly; datasets/README.md). PM2.5 is the target; the weather columns DEWP,
# TEMP, PRES and Iws are past covariates (observed up to the forecast origin); the calendar
# ("auto": hour of day, day of week, day of month, month, ISO week as sin/cos pairs) is
# future-known. Five configs, the same split (70/10/20 by rows, "custom"), the same test
# windows and seeds:
#   pollution_S        PM2.5 alone, linear head
#   pollution_past     + past weather, linear head
#   pollution_cross    PM2.5 alone, cross-attention decoder (what the decoder alone changes)
#   pollution_calendar + calendar (future-known), decoder
#   pollution_both     + past weather + calendar, decoder
# Missing PM2.5 values are masked (data.missing "mask"): never a target.
#
#   scripts/covariate_benchmark.sh [--out DIR] [--bin PATH] [--seeds 1,2,3] [--threads T]
#                                  [--configs "pollution_S ..."] [--keep-models]
# Output: DIR/<config>_seed<S>/ run folders (config.json, metrics.json, train_log.csv; the
# model and checkpoint files are deleted unless --keep-models), DIR/wall_seconds.csv (one
# line per run: config, seed, wall seconds) and DIR/RESULTS.md; default DIR
# bench/results/covariates. A run folder that already holds metrics.json is not run again.
set -euo pipefail
REPO=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
cd "$REPO"
OUT=bench/results/covariates BIN=build/attnfc SEEDS=1,2,3 THREADS=2 KEEP=0
CONFIGS="pollution_S pollution_past pollution_cross pollution_calendar pollution_both"
while [ $# -gt 0 ]; do
  case $1 in
    --out) OUT=$2; shift ;;
    --bin) BIN=$2; shift ;;
    --seeds) SEEDS=$2; shift ;;
    --threads) THREADS=$2; shift ;;
    --configs) CONFIGS=$2; shift ;;
    --keep-models) KEEP=1 ;;
    -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "covariate_benchmark: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
command -v jq >/dev/null || { echo "covariate_benchmark: jq is required" >&2; exit 2; }
mkdir -p "$OUT"
[ -f "$OUT/wall_seconds.csv" ] || echo "config,seed,wall_seconds" > "$OUT/wall_seconds.csv"
for config in $CONFIGS; do
  for seed in ${SEEDS//,/ }; do
    run=$OUT/${config}_seed$seed
    [ -f "$run/metrics.json" ] && continue
    t0=$(date +%s.%N)
    "$BIN" --log-level warn --threads "$THREADS" train --config "configs/$config.json" \
      --set "train.seed=$seed" --out "$run"
    t1=$(date +%s.%N)
    echo "$config,$seed,$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')" \
      >> "$OUT/wall_seconds.csv"
    [ "$KEEP" = 1 ] || rm -f "$run/model.safetensors" "$run/checkpoint.safetensors" "$run/.lock"
  done
done

has() { case " $CONFIGS " in *" $1 "*) return 0 ;; esac; return 1; }
seeds=${SEEDS//,/ }
first=${SEEDS%%,*}
# Test MSE (mean ± sample std over seeds), MAE scaled (mean ± sample std), MAE in µg/m³
# (mean) of PM2.5.
stats() {  # config model
  for seed in $seeds; do
    jq -r --arg m "$2" '.test.models[$m] | "\(.scaled.mse) \(.scaled.mae) \(.original.mae)"' \
      "$OUT/${1}_seed$seed/metrics.json"
  done | awk '
    { for (i = 1; i <= 3; i++) { if ($i == "null" || $i ~ /nan/) bad = 1; s[i] += $i; q[i] += $i * $i }; n++ }
    END {
      if (bad) { printf "NaN | NaN | NaN"; exit }
      for (i = 1; i <= 2; i++) {
        m[i] = s[i] / n; v = n > 1 ? (q[i] - n * m[i] * m[i]) / (n - 1) : 0; sd[i] = v > 0 ? sqrt(v) : 0
      }
      printf "%.4f ± %.4f | %.4f ± %.4f | %.2f", m[1], sd[1], m[2], sd[2], s[3] / n
    }'
}
kept() {  # config: each seed's kept epoch, "0*" when the kept model is the initial one
  for seed in $seeds; do
    jq -r '(.kept.epoch | tostring) + (if .kept.model == "trained" then "" else "*" end)' \
      "$OUT/${1}_seed$seed/metrics.json"
  done | paste -sd' '
}
valmse() {  # config: mean validation MSE of the kept model (what early stopping chose on)
  for seed in $seeds; do jq -r .val.models.attnfc.scaled.mse "$OUT/${1}_seed$seed/metrics.json"; done |
    awk '{ s += $1; n++ } END { printf "%.4f", s / n }'
}
secs() {  # config: mean train_seconds of metrics.json
  for seed in $seeds; do jq -r .train_seconds "$OUT/${1}_seed$seed/metrics.json"; done |
    awk '{ s += $1; n++ } END { printf "%.0f", s / n }'
}
label() {
  case $1 in
    pollution_S) echo "PM2.5 alone (linear head)" ;;
    pollution_past) echo "+ past weather (linear head)" ;;
    pollution_cross) echo "PM2.5 alone (cross-attention decoder)" ;;
    pollution_calendar) echo "+ calendar (future-known, decoder)" ;;
    pollution_both) echo "+ past weather + calendar (decoder)" ;;
    *) echo "$1" ;;
  esac
}
# Every run and every model in it must score the same test windows, else the rows do not
# compare.
windows=$(for config in $CONFIGS; do for seed in $seeds; do
  jq -r '.test.windows, (.test.models[] | .scaled.windows)' "$OUT/${config}_seed$seed/metrics.json"
done; done | sort -u)
base=pollution_S; has "$base" || base=${CONFIGS%% *}
{
  echo "| model | config | test MSE (scaled) | test MAE (scaled) | test MAE (µg/m³) | val MSE | epochs kept | train s/run |"
  echo "|---|---|---|---|---|---|---|---|"
  for config in $CONFIGS; do
    echo "| $(label "$config") | $config | $(stats "$config" attnfc) | $(valmse "$config") | $(kept "$config") | $(secs "$config") |"
  done
  for m in nlinear repeat-last; do echo "| $m | $base | $(stats "$base" "$m") | | | |"; done
  # The seasonal period is detected over every channel the run reads (covariates too), so
  # runs with the weather columns may have another seasonal-naive: list each once, from
  # the first config that has it (base first).
  for config in $base $CONFIGS; do
    jq -r --arg c "$config" '.test.models | keys[] | select(startswith("seasonal-naive")) | "\(.) \($c)"' \
      "$OUT/${config}_seed$first/metrics.json"
  done | awk '!seen[$1]++' | while read -r m config; do
    echo "| $m | $config | $(stats "$config" "$m") | | | |"; done
  echo
  echo "Seeds: $SEEDS; mean ± sample std over seeds (µg/m³ MAE and val MSE: mean); test"
  echo "metrics of PM2.5 only. Baselines forecast PM2.5 from PM2.5 alone; each comes from the"
  echo "runs of the config in its row. Epochs kept: each seed's best epoch; a '*' marks a run"
  echo "that kept its initial (untrained) model, epoch 0, i.e. the naive start. train s/run:"
  echo "train_seconds of metrics.json, mean over seeds."
  if [ "$(echo "$windows" | wc -l)" = 1 ]; then
    echo "Test windows: $windows, the same in every run and for every model."
  else
    echo "WARNING: test window counts differ between runs or models: $(echo "$windows" | paste -sd' ')."
  fi
} > "$OUT/RESULTS.md"
cat "$OUT/RESULTS.md"
