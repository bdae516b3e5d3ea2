#!/usr/bin/env bash
# Training throughput beside busy neighbours (issue 16): the default run (no --threads, no
# OMP_* variables) against --threads 1 and --threads N, quiet and beside 1 and 3 CPU-bound
# processes (shell loops). Shapes S (ETTh1 OT, context 336, patch 16, d_model 64, 4 heads,
# 2 layers, horizon 96, batch 32) and M (d_model 128, 8 heads, 3 layers). Samples per second
# of the training steps (train_log.csv, validation excluded), median over epochs 2.. of
# REPEATS runs; the variants take turns so a change in the machine hits them alike. PARTS
# (default 2, train.micro_batches' default) sets the parts a batch is cut into: the base
# config, configs/etth1_S.json, says 1 to keep its published bits.
#
#   scripts/bench-busy.sh [build/attnfc] [REPEATS] [NEIGHBOUR COUNTS, e.g. "0 1 3"]
set -euo pipefail
BIN=$(readlink -f "${1:-build/attnfc}")
REPEATS=${2:-3}
LOADS=${3:-0 1 3}
REPO=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/attnfc_busy.XXXXXX")
NEIGHBOURS=()
stop_neighbours() {
  for p in "${NEIGHBOURS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${NEIGHBOURS[@]}"; do wait "$p" 2>/dev/null || true; done
  NEIGHBOURS=()
}
trap 'stop_neighbours; rm -rf "$WORK"' EXIT
unset OMP_NUM_THREADS OMP_WAIT_POLICY GOMP_SPINCOUNT OMP_DYNAMIC
CORES=$(nproc)

COMMON=(--set 'data.columns=["OT"]' --set model.context_length=336 --set model.patch_len=16
  --set model.horizon=96 --set model.linear_lookback=336 --set train.batch_size=32
  --set train.epochs=4 --set train.max_steps_per_epoch=150 --set train.max_val_windows=64
  --set train.patience=0 --set train.evaluate_test=false --set train.ensemble=1
  --set train.micro_batches="${PARTS:-2}")
S=(--set model.d_model=64 --set model.n_heads=4 --set model.n_layers=2)
M=(--set model.d_model=128 --set model.n_heads=8 --set model.n_layers=3)

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

run_once() {  # run_once OUT THREADS(0 = default) SHAPE...
  local out=$1 threads=$2
  shift 2
  local -a flag=()
  [ "$threads" = 0 ] || flag=(--threads "$threads")
  (cd "$REPO" && "$BIN" --log-level error "${flag[@]}" train --quiet \
    --config configs/etth1_S.json "${COMMON[@]}" "$@" --out "$out" >/dev/null)
  tail -n +3 "$out/train_log.csv" | cut -d, -f7
}

echo "CPU: $(lscpu | sed -n 's/^Model name: *//p'), $CORES cores; $("$BIN" --version | grep -i kernel | head -1)"
echo "| shape | neighbours | default | --threads 1 | --threads $CORES | default / --threads 1 |"
echo "|---|---|---|---|---|---|"
for shape in ${SHAPES:-S M}; do
  declare -n dims=$shape
  for load in $LOADS; do
    for _ in $(seq "$load"); do (while :; do :; done) & NEIGHBOURS+=($!); done
    for v in 0 1 "$CORES"; do : >"$WORK/rates-$v"; done
    for i in $(seq "$REPEATS"); do
      for v in 0 1 "$CORES"; do
        run_once "$WORK/$shape-$load-$v-$i" "$v" "${dims[@]}" >>"$WORK/rates-$v"
      done
    done
    stop_neighbours
    d=$(median <"$WORK/rates-0") one=$(median <"$WORK/rates-1") all=$(median <"$WORK/rates-$CORES")
    printf '| %s | %s | %.0f | %.0f | %.0f | %.2f |\n' "$shape" "$load" "$d" "$one" "$all" \
      "$(echo "$d / $one" | bc -l)"
  done
done
