#!/bin/bash
# The point config (configs/m4_hourly.json) with the quantile config's three changes, seeds 1-2.
cd /work/runs/m4v
V="--set train.batch_size=128 --set model.patch_stride=12 --set train.micro_batches=2 --set train.patience=0"
THREADS=1 ./exp_point.sh pbase 1 >> pscreen.csv &
THREADS=1 ./exp_point.sh pbase 2 >> pscreen.csv &
wait
THREADS=1 ./exp_point.sh pnew 1 $V >> pscreen.csv &
THREADS=1 ./exp_point.sh pnew 2 $V >> pscreen.csv &
wait
echo pdone >> screen.log
