#!/bin/bash
# Round 3: batch 128 with its gradient in two parts (parts run side by side at 2 threads).
cd /work/runs/m4v
while ! grep -q done2 screen.log; do sleep 10; done
THREADS=1 ./exp.sh b128mb2 1 --set train.batch_size=128 --set train.micro_batches=2 >> screen.csv &
THREADS=1 ./exp.sh b128mb2 2 --set train.batch_size=128 --set train.micro_batches=2 >> screen.csv &
wait
echo done3 >> screen.log
