#!/bin/bash
# The seeds 3 and 4 of the same study (see qp.sh).
cd /tmp/m4v
for seed in 3 4; do
  THREADS=1 ./exp2.sh qpall $seed --set model.quantile_positions=all >> qp.csv &
  THREADS=1 ./exp2.sh qplast $seed --set model.quantile_positions=last >> qp.csv &
  wait
  THREADS=1 ./exp3.sh qplastw1 $seed --set model.quantile_positions=last >> qp.csv
done
echo done2 >> qp.log
