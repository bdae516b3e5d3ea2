#!/usr/bin/env bash
# scripts/benchmark.sh: the accuracy suite. Each dataset with its standard protocol (scaler fit
# on the training rows only; every stride-1 window of the test split, none dropped; MSE/MAE
# on scaled data, averaged over windows), several seeds per cell, through scripts/sweep (so
# it resumes after an interruption). Per cell the table shows the model kept (mean ± std over
# seeds), its own linear start (the least-squares NLinear inside it, scored on the same
# windows), our NLinear and repeat-last baselines, the best published MSE, the epochs kept
# and the training time. datasets/README.md gives each file's origin and licence.
#
#   suite     setting   config                 split                          horizons
#   etth1     S, M      configs/etth1_{S,M}    ETTh1: 12/4/4 months           96 192 336 720
#   exchange  M         configs/exchange_M     70/10/20 by rows (LTSF rule)   96 192 336 720
#   ili       M         configs/ili_M          70/10/20 by rows (LTSF rule)   24 36 48 60
#   m4        Hourly    configs/m4_hourly      M4: last 48 of each series     48
#                                              (scripts/m4_benchmark.sh: official files,
#                                              sMAPE/MASE/OWA, and MSIS with --quantiles)
#
#   scripts/benchmark.sh [--suites "etth1 exchange ili m4"] [--out DIR] [--bin PATH]
#                        [--seeds 1,2,3] [-j N] [--threads T] [--settings "S M"] [--horizons "..."]
#                        [--set KEY=VALUE]... [--quantiles]
# --quantiles runs each setting's quantile config (configs/<suite>_<setting>_quantiles.json)
# and adds DIR/QUANTILES.md: per cell wQL (GluonTS's weighted quantile loss, the CRPS
# approximation) and 80%/95% coverage of the model, of the model calibrated on validation
# (where its config calibrates) and of the interval baselines, on the same windows.
# --settings keeps only those settings, --horizons replaces every suite's horizons (for a
# quick look). RESULTS.md ends with the same runs scored on the windows the published numbers
# were scored on (scripts/benchmark-published-windows.sh). Output: DIR/RESULTS.md,
# DIR/<suite>_<setting>.csv (each sweep's results.csv) and the sweeps themselves in
# DIR/<suite>_<setting>/; default DIR: bench/results. m4 runs its seeds one after another in
# DIR/m4_hourly/ (-j and --horizons do not apply to it).
set -euo pipefail
REPO=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
cd "$REPO"

OUT=bench/results BIN=build/attnfc SEEDS=1,2,3 JOBS="" THREADS=1 SUITES="etth1 exchange ili m4"
HORIZONS_OVERRIDE="" SETTINGS_FILTER="" SETS=() QUANTILES=""
while [ $# -gt 0 ]; do
  case $1 in
    --suites) SUITES=$2; shift ;;
    --out) OUT=$2; shift ;;
    --bin) BIN=$2; shift ;;
    --seeds) SEEDS=$2; shift ;;
    -j) JOBS=$2; shift ;;
    --threads) THREADS=$2; shift ;;
    --horizons) HORIZONS_OVERRIDE=$2; shift ;;
    --settings) SETTINGS_FILTER=$2; shift ;;
    --set) SETS+=(--set "$2"); shift ;;
    --quantiles) QUANTILES=_quantiles ;;
    -h|--help) sed -n '2,31p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "benchmark: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
command -v jq >/dev/null || { echo "benchmark: jq is required (sudo apt-get install jq)" >&2; exit 2; }

settings() {  # the settings of a suite (those of --settings only)
  local all
  case $1 in etth1) all="S M" ;; exchange|ili) all="M" ;; m4) all="hourly" ;;
    *) echo "benchmark: unknown suite '$1' (expected etth1, exchange, ili or m4)" >&2; exit 2 ;; esac
  for s in $all; do
    if [ -z "$SETTINGS_FILTER" ] || [[ " $SETTINGS_FILTER " == *" $s "* ]]; then echo "$s"; fi
  done
}
settings_all() {  # every sweep suite's settings (not m4's), as "suite_setting" words
  for suite in ${SUITES/m4/}; do for s in $(settings "$suite"); do echo -n "${suite}_$s$QUANTILES "; done; done
}
horizons() {
  if [ -n "$HORIZONS_OVERRIDE" ]; then echo "$HORIZONS_OVERRIDE"; return; fi
  case $1 in ili) echo "24 36 48 60" ;; m4) echo "48" ;; *) echo "96 192 336 720" ;; esac
}
# The best published test MSE of the era's papers, and whose (scripts/published_ltsf.tsv,
# which also holds the test batch each was scored with).
published() {
  awk -F'\t' -v s="$1" -v t="$2" -v h="$3" '!/^#/ && $1 == s && $2 == t && $3 == h {
    printf "%s (%s)", $4, $5; found = 1 } END { if (!found) printf "-" }' scripts/published_ltsf.tsv
}

# Every config first: a missing one must not surface after hours of the other sweeps.
for suite in $SUITES; do
  for s in $(settings "$suite"); do
    [ -f "configs/${suite}_$s$QUANTILES.json" ] ||
      { echo "benchmark: configs/${suite}_$s$QUANTILES.json not found" >&2; exit 2; }
  done
done

status=0
mkdir -p "$OUT"
for suite in $SUITES; do
  if [ "$suite" = m4 ]; then  # one global model over the panel, scored by M4's own metrics
    [ -n "$(settings m4)" ] || continue
    scripts/m4_benchmark.sh --out "$OUT/m4_hourly$QUANTILES" --bin "$BIN" --seeds "$SEEDS" \
      --config "configs/m4_hourly$QUANTILES.json" --threads "$THREADS" "${SETS[@]}" || status=1
    continue
  fi
  grid=$(printf '%s\n' $(horizons "$suite") | jq -s -c '{"model.horizon": .}')
  for s in $(settings "$suite"); do
    # The quantile runs in folders of their own: a sweep resumes whatever its folder holds.
    cell=${suite}_$s$QUANTILES
    echo "$grid" >"$OUT/grid_$cell.json"
    scripts/sweep "configs/$cell.json" "$OUT/grid_$cell.json" --seeds "$SEEDS" --out "$OUT/$cell" \
      --bin "$BIN" --threads "$THREADS" ${JOBS:+-j "$JOBS"} "${SETS[@]}" || status=1
    cp "$OUT/$cell/results.csv" "$OUT/$cell.csv"
  done
done

# One cell: "mean ± std | start mean | wins | NLinear | repeat-last | epochs | windows | s/run",
# from a sweep's results.csv (columns found by name) and one run's metrics.json.
cell() {  # cell SWEEP_DIR H
  local dir=$1 h=$2
  local stats run windows
  stats=$(awk -F, -v h="$h" '
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    $col["model.horizon"] == h && $col["status"] == "done" {
      x = $col["test_mse"]; n++; m += x; mm += x * x; t += $col["train_seconds"]
      y = $col["linear_start_test_mse"]; if (y != "-") { ns++; ls += y; if (x < y) wins++ }
      nl = $col["nlinear_test_mse"]; rl = $col["repeat_last_test_mse"]
      ep = ep (ep == "" ? "" : " ") $col["best_epoch"]
      if (first == "") first = $col["run"] }
    END {
      if (!n) { print "- | - | - | - | - | - | - | -"; exit }
      # The variance clamped at 0: identical seeds can round to a tiny negative number.
      v = n > 1 ? (mm - n * (m / n)^2) / (n - 1) : 0
      printf "%.4f ± %.4f | %s | %s | %.4f | %.4f | %s | %.0f | %s\n", m / n, (v > 0 ? sqrt(v) : 0),
        ns ? sprintf("%.4f", ls / ns) : "-", ns ? (wins + 0) "/" ns : "-", nl, rl, ep, t / n, first
    }' "$dir/results.csv" 2>/dev/null || echo "- | - | - | - | - | - | - | -")
  run=${stats##*| }
  windows=-
  [ -f "$dir/runs/$run/metrics.json" ] && windows=$(jq -r '.test.windows' "$dir/runs/$run/metrics.json")
  echo " ${stats% | *} | $windows "
}

# M4 Hourly: scripts/m4_benchmark.sh's table (the model, its linear start and the M4
# benchmarks over every series' test), the published best, the epochs kept and the time.
m4_section() {  # m4_section DIR
  local dir=$1 seeds
  echo
  echo "## M4 Hourly: 414 series, H = 48, the last 48 hours of each series scored once"
  echo
  echo "sMAPE, MASE (m = 24) and OWA (against Naive2) as the M4 evaluation computes them."
  echo
  [ -f "$dir/RESULTS.md" ] || { echo "(no results: the M4 runs failed)"; return; }
  cat "$dir/RESULTS.md"
  echo "| published: Doornik–Hendry–Castle (best Hourly OWA) | 8.913 | 0.801 | 0.410 | |"
  echo "| published: Smyl (M4 winner) | 9.328 | 0.893 | 0.440 | |"
  echo
  seeds=${SEEDS//,/ }
  echo "Epochs kept per seed: $(for s in $seeds; do jq -r '.kept.epoch' "$dir/seed$s/metrics.json"; done |
    xargs); training s per seed: $(for s in $seeds; do cat "$dir/seed$s/train_seconds"; done | xargs)."
}

{
  echo "# Accuracy suite (test split, scaled units, every stride-1 window)"
  echo
  echo "Generated by \`scripts/benchmark.sh\` on $(date -u +%Y-%m-%d) ($(nproc) cores, $(lscpu 2>/dev/null |
    sed -n 's/^Model name: *//p' | head -1)); seeds $SEEDS."
  echo "\"linear start\" is the model before training (its least-squares NLinear shortcut, the same"
  echo "windows); \"beats start\" counts the seeds whose kept model has a lower test MSE than its own"
  echo "linear start; \"epochs kept\" lists each seed's best epoch (0 = the linear start was kept)."
  echo
  echo "| dataset | setting | H | attnfc MSE | linear start | beats start | NLinear (ours) | repeat-last | best published | epochs kept | train s/run | test windows |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
  for suite in $SUITES; do
    [ "$suite" != m4 ] || continue
    for s in $(settings "$suite"); do
      for h in $(horizons "$suite"); do
        IFS='|' read -r mse start wins nl rl ep secs windows <<<"$(cell "$OUT/${suite}_$s$QUANTILES" "$h")"
        echo "| $suite | $s | $h |$mse|$start|$wins|$nl|$rl| $(published "$suite" "$s" "$h") |$ep|$secs|$windows|"
      done
    done
  done
  if [[ " $SUITES " == *" m4 "* ]] && [ -n "$(settings m4)" ]; then m4_section "$OUT/m4_hourly$QUANTILES"; fi
} >"$OUT/RESULTS.md"
# The same runs on the windows the published numbers were scored on (their test loaders
# dropped the last incomplete batch): a second table, appended.
if [ -z "$QUANTILES" ] && [ -n "$(settings_all)" ]; then
  echo >>"$OUT/RESULTS.md"
  scripts/benchmark-published-windows.sh "$OUT" "$BIN" "$(settings_all)" \
    "$(for suite in ${SUITES/m4/}; do echo "$suite:$(horizons "$suite" | tr ' ' ,)"; done)" \
    >>"$OUT/RESULTS.md" || status=1
fi
cat "$OUT/RESULTS.md"
[ -z "$QUANTILES" ] || [ -z "$(settings_all)" ] ||
  scripts/benchmark-quantiles-table.sh "$OUT" "${SUITES/m4/}" "$(settings_all)" \
  "$(for suite in ${SUITES/m4/}; do echo "$suite:$(horizons "$suite" | tr ' ' ,)"; done)"
exit $status
