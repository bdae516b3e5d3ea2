#!/bin/bash
# quantile_positions on M4 validation: "all" vs "last", seeds given, two runs at a time (1 thread each)
cd /tmp/m4v
for seed in "$@"; do
  THREADS=1 ./exp2.sh qpall $seed --set model.quantile_positions=all >> qp.csv &
  THREADS=1 ./exp2.sh qplast $seed --set model.quantile_positions=last >> qp.csv &
  wait
done
