#!/bin/bash
# Ad hoc validation driver of 2026-12-06 (docs/RESULTS.md "M4 Hourly: quantile_positions on validation"), run in /tmp/m4v.
# exp2.sh / exp3.sh were bench/results/m4q-2026-12-05-val2/exp.sh with BIN set to the builds of
# 9cf16ce (median weight 1/Q) and of the median-weight-1 change (committed as 9667611).
# quantile_positions on M4 validation: "all" vs "last", seeds given, two runs at a time (1 thread each)
cd /tmp/m4v
for seed in "$@"; do
  THREADS=1 ./exp2.sh qpall $seed --set model.quantile_positions=all >> qp.csv &
  THREADS=1 ./exp2.sh qplast $seed --set model.quantile_positions=last >> qp.csv &
  wait
done
