#!/bin/bash
# (2026-12-06, late; binary of 022359e, the config as at 712ac40) Singles of the committed M4 quantile config with model.quantile_positions "last" at the
# config's three context lengths, seeds 1-2, two at a time at one thread each; rows to qlast.csv (renamed qp3.csv here).
# Stopped after the two 504 runs (their rows are all of qp3.csv): their intervals were clearly
# worse than those of the same networks with "all" (docs/RESULTS.md). exp.sh is that of
# ../m4q-2026-12-06-ctx5-screen (../m4q-2026-12-06-screen/exp.sh with BIN set).
cd /work/runs/m4v
printf '%s\n' "504 1" "504 2" "336 1" "336 2" "168 1" "168 2" |
  xargs -P 2 -L 1 sh -c 'THREADS=1 ./exp.sh qlast$0 $1 --set train.ensemble_contexts=[] --set model.context_length=$0 --set model.linear_lookback=$0 --set model.quantile_positions=last >> qlast.csv'
echo done >> qlast.csv
