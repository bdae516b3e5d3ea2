#!/usr/bin/env bash
# make demo: inspect a bundled real dataset (ETTh1, datasets/README.md), train on its OT
# column with configs/default.json, forecast the 96 hours after its last row, and score
# the model beside the baselines on the test split (printed by train).
set -euo pipefail
BUILD=${1:-build}
BIN="$BUILD/attnfc"
cd "$(dirname "$0")/.."

"$BIN" --version
"$BIN" inspect datasets/ETTh1.csv --columns OT
rm -rf runs/demo
"$BIN" --log-level info train --config configs/default.json --out runs/demo
"$BIN" predict --model runs/demo/model.safetensors --input datasets/ETTh1.csv \
  --output runs/demo/forecast.csv
echo
echo "demo: model    -> runs/demo/model.safetensors"
echo "demo: log      -> runs/demo/train_log.csv"
echo "demo: forecast -> runs/demo/forecast.csv"
