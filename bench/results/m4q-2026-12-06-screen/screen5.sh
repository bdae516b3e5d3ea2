#!/bin/bash
# Round 5: patience 0 (train every epoch, keep the best on validation): the runs that early
# stopping cut at epoch 5-8 were the outliers of rounds 1-4.
cd /work/runs/m4v
V="--set train.batch_size=128 --set model.patch_stride=12 --set train.micro_batches=2 --set train.patience=0"
THREADS=1 ./exp.sh b128s12mb2p0 2 $V >> screen.csv &
THREADS=1 ./exp.sh b128s12mb2p0 3 $V >> screen.csv &
wait
THREADS=1 ./exp.sh b128s12mb2p0 4 $V >> screen.csv &
THREADS=1 ./exp.sh b128p0 1 --set train.batch_size=128 --set train.patience=0 >> screen.csv &
wait
echo done5 >> screen.log
