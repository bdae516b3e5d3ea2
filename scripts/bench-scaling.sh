#!/usr/bin/env bash
# Data-parallel training throughput (docs/SCALING.md): one process with T threads against
# mpirun -np 2 with T/2 threads each, on the M shape (ETTh1 OT, context 336, d_model 128,
# 8 heads, 3 layers, horizon 96, batch 32) and on an M4 Hourly panel run
# (configs/m4_hourly.json). Samples per second of the training steps (train_log.csv,
# validation excluded), median over epochs 2.. of REPEATS runs.
#
#   scripts/bench-scaling.sh [build/attnfc] [REPEATS]
set -euo pipefail
BIN=$(readlink -f "${1:-build/attnfc}")
REPEATS=${2:-3}
REPO=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/attnfc_scaling.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
MPIRUN=(mpirun --allow-run-as-root --oversubscribe --bind-to none)
export OMPI_MCA_btl_vader_single_copy_mechanism=none

M_SHAPE=(--set 'data.columns=["OT"]' --set model.context_length=336 --set model.patch_len=16
  --set model.horizon=96 --set model.d_model=128 --set model.n_heads=8 --set model.n_layers=3
  --set model.linear_lookback=336 --set train.batch_size=32 --set train.epochs=4
  --set train.max_steps_per_epoch=40 --set train.max_val_windows=64 --set train.patience=0
  --set train.evaluate_test=false --set train.ensemble=1)
M4=(--set train.epochs=4 --set train.max_steps_per_epoch=40 --set train.max_val_windows=256
  --set train.patience=0 --set train.evaluate_test=false --set train.ensemble=1)

# The median of the samples/s column over epochs 2.. of every run folder given.
median_rate() {
  for run in "$@"; do tail -n +3 "$run/train_log.csv" | cut -d, -f7; done |
    sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}

measure() {  # measure NAME CONFIG LAUNCH THREADS MICRO EXTRA...
  local name=$1 config=$2 launch=$3 threads=$4 micro=$5
  shift 5
  local -a runs=() pre=()
  [ "$launch" = 1 ] || pre=("${MPIRUN[@]}" -np "$launch")
  for i in $(seq "$REPEATS"); do
    local out="$WORK/$name-$i"
    (cd "$REPO" && "${pre[@]}" "$BIN" --log-level error --threads "$threads" train --quiet \
      --config "$config" "$@" --set "train.micro_batches=$micro" --out "$out" >/dev/null)
    runs+=("$out")
  done
  median_rate "${runs[@]}"
}

row() {  # row LABEL CONFIG EXTRA...
  local label=$1 config=$2
  shift 2
  local one two_micro mpi
  one=$(measure "$label-1x2" "$config" 1 2 1 "$@")
  two_micro=$(measure "$label-1x2m" "$config" 1 2 2 "$@")
  mpi=$(measure "$label-2x1" "$config" 2 1 2 "$@")
  local single
  single=$(measure "$label-1x1" "$config" 1 1 1 "$@")
  printf '| %s | %.0f | %.0f | %.0f | %.0f | %.2f | %.2f |\n' "$label" "$single" "$one" \
    "$two_micro" "$mpi" "$(echo "$mpi / $two_micro" | bc -l)" "$(echo "$mpi / $one" | bc -l)"
}

echo "CPU: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; $("$BIN" --version | tail -1)"
echo "| run | 1 proc x 1 thread | 1 proc x 2 threads | 1 proc x 2 threads, micro_batches 2 | mpirun -np 2 x 1 thread, micro_batches 2 | np2 / 1x2 (same config) | np2 / 1x2 (micro_batches 1) |"
echo "|---|---|---|---|---|---|---|"
row "M shape (ETTh1 OT)" configs/etth1_S.json "${M_SHAPE[@]}"
# The M4 Hourly panel (414 series) as scripts/m4_benchmark.sh makes it: history + test, long.
"$REPO/scripts/m4-to-long.sh" "$REPO/datasets/m4/Hourly-train.csv" \
  "$REPO/datasets/m4/Hourly-test.csv" >"$WORK/m4_hourly.csv"
row "M4 Hourly panel" configs/m4_hourly.json --set "data.path=$WORK/m4_hourly.csv" "${M4[@]}"
