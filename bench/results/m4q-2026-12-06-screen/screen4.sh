#!/bin/bash
# Round 4: batch 128, patch stride 12, gradient in two parts; seeds 1-4.
cd /work/runs/m4v
while ! grep -q done3 screen.log; do sleep 10; done
for pair in "1 2" "3 4"; do
  set -- $pair
  THREADS=1 ./exp.sh b128s12mb2 $1 --set train.batch_size=128 --set model.patch_stride=12 --set train.micro_batches=2 >> screen.csv &
  THREADS=1 ./exp.sh b128s12mb2 $2 --set train.batch_size=128 --set model.patch_stride=12 --set train.micro_batches=2 >> screen.csv &
  wait
done
echo done4 >> screen.log
