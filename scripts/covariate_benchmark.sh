#!/usr/bin/env bash
# scripts/covariate_benchmark.sh: what past covariates add, on the bundled pollution.csv
# (Beijing PM2.5, hourly; datasets/README.md). PM2.5 is the target, the weather columns DEWP,
# TEMP, PRES and Iws are past covariates (observed up to the forecast origin). Two configs
# with the same mixed-channel model, the same split (70/10/20 by rows, "custom"), the same
# windows and seeds: configs/pollution_S.json (PM2.5 alone) and configs/pollution_past.json
# (+ the covariates). Missing PM2.5 values are masked (data.missing "mask"): never a target.
#
#   scripts/covariate_benchmark.sh [--out DIR] [--bin PATH] [--seeds 1,2,3] [--threads T]
# Output: DIR/<config>_seed<S>/ run folders and DIR/RESULTS.md; default DIR
# bench/results/covariates.
set -euo pipefail
REPO=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
cd "$REPO"
OUT=bench/results/covariates BIN=build/attnfc SEEDS=1,2,3 THREADS=2
while [ $# -gt 0 ]; do
  case $1 in
    --out) OUT=$2; shift ;;
    --bin) BIN=$2; shift ;;
    --seeds) SEEDS=$2; shift ;;
    --threads) THREADS=$2; shift ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "covariate_benchmark: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
command -v jq >/dev/null || { echo "covariate_benchmark: jq is required" >&2; exit 2; }
mkdir -p "$OUT"
for config in pollution_S pollution_past; do
  for seed in ${SEEDS//,/ }; do
    run=$OUT/${config}_seed$seed
    "$BIN" --log-level warn --threads "$THREADS" train --config "configs/$config.json" \
      --set "train.seed=$seed" --out "$run"
  done
done
# Test MSE / MAE of PM2.5 (scaled, and MAE in µg/m³), mean over seeds; the baselines are
# the same for both configs (they read the target only) and come from the first run.
row() {  # config model
  for seed in ${SEEDS//,/ }; do
    jq -r --arg m "$2" '.test.models[$m] | "\(.scaled.mse) \(.scaled.mae) \(.original.mae)"' \
      "$OUT/${1}_seed$seed/metrics.json"
  done | awk '{ a += $1; b += $2; c += $3; n++ } END { printf "%.4f | %.4f | %.2f", a/n, b/n, c/n }'
}
first=${SEEDS%%,*}
{
  echo "| model | test MSE (scaled) | test MAE (scaled) | test MAE (µg/m³) |"
  echo "|---|---|---|---|"
  echo "| PM2.5 alone (pollution_S) | $(row pollution_S attnfc) |"
  echo "| + past weather (pollution_past) | $(row pollution_past attnfc) |"
  for m in nlinear repeat-last; do echo "| $m | $(row pollution_S "$m") |"; done
  jq -r '.test.models | keys[] | select(startswith("seasonal-naive"))' \
    "$OUT/pollution_S_seed$first/metrics.json" | while read -r m; do
    echo "| $m | $(row pollution_S "$m") |"; done
  echo
  echo "Seeds: $SEEDS; test windows: $(jq -r .test.windows "$OUT/pollution_S_seed$first/metrics.json")."
} > "$OUT/RESULTS.md"
cat "$OUT/RESULTS.md"
