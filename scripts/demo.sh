#!/usr/bin/env bash
# make demo: train on a bundled real dataset with configs/default.json, then forecast.
# Runs what exists so far and says what does not yet.
set -euo pipefail
BUILD=${1:-build}
BIN="$BUILD/attnfc"
cd "$(dirname "$0")/.."
has() { "$BIN" --help 2>/dev/null | grep -qE "^\s+$1\b"; }

"$BIN" --version
if has inspect; then
  "$BIN" inspect datasets/ETTh1.csv --columns OT
fi
if has train && has predict; then
  rm -rf runs/demo
  "$BIN" --log-level info train --config configs/default.json --out runs/demo
  "$BIN" predict --model runs/demo/model.safetensors --input datasets/ETTh1.csv \
    --output runs/demo/forecast.csv
  echo
  echo "demo: model    -> runs/demo/model.safetensors"
  echo "demo: log      -> runs/demo/train_log.csv"
  echo "demo: forecast -> runs/demo/forecast.csv"
else
  echo "demo: 'attnfc train' and 'attnfc predict' have not landed yet (issues 7 and 8);"
  echo "      this demo ran what exists so far."
fi
