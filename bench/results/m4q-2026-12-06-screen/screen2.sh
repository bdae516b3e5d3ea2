#!/bin/bash
# Round 2 of the 2026-12-06 M4 validation screen (see screen.sh): around batch 128 and patch stride 12.
cd /work/runs/m4v
run_pair() {  # run_pair NAME SEED_A SEED_B [--set ...]
  local name=$1 a=$2 b=$3; shift 3
  THREADS=1 ./exp.sh "$name" "$a" "$@" >> screen.csv &
  THREADS=1 ./exp.sh "$name" "$b" "$@" >> screen.csv &
  wait
}
run_pair batch128 3 4 --set train.batch_size=128
run_pair stride12 3 4 --set model.patch_stride=12
run_pair b128steps100 1 2 --set train.batch_size=128 --set train.max_steps_per_epoch=100
run_pair b128lr3 1 2 --set train.batch_size=128 --set train.lr=0.003
run_pair b128stride12 1 2 --set train.batch_size=128 --set model.patch_stride=12
run_pair batch256 1 2 --set train.batch_size=256
echo done2 >> screen.log
