#!/bin/bash
# M4 Hourly validation screen of 2026-12-06 (session 4): one quantile network per variant,
# seeds 1 and 2, two runs at a time at one thread each; rows appended to screen.csv.
cd /work/runs/m4v
run_pair() {  # run_pair NAME [--set ...]: seeds 1 and 2 side by side
  local name=$1; shift
  THREADS=1 ./exp.sh "$name" 1 "$@" >> screen.csv &
  THREADS=1 ./exp.sh "$name" 2 "$@" >> screen.csv &
  wait
}
run_pair base
run_pair series --set train.series_weighting=series
run_pair steps400 --set train.max_steps_per_epoch=400
run_pair warmup200 --set train.warmup_steps=200
run_pair stride12 --set model.patch_stride=12
run_pair batch128 --set train.batch_size=128
run_pair wd01 --set train.weight_decay=0.1
run_pair heads8 --set model.n_heads=8
echo done >> screen.log
