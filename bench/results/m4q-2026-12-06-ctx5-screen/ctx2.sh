#!/bin/bash
# Singles of the committed M4 quantile config (ensemble 1, no ensemble_contexts) at five
# context lengths, seeds 1-2, two at a time at one thread each (longest first); rows to ctx2.csv.
cd /work/runs/m4v
printf '%s\n' "504 1" "504 2" "408 1" "408 2" "336 1" "336 2" "240 1" "240 2" "168 1" "168 2" |
  xargs -P 2 -L 1 sh -c 'THREADS=1 ./exp.sh ctx$0 $1 --set train.ensemble_contexts=[] --set model.context_length=$0 --set model.linear_lookback=$0 >> ctx2.csv'
echo done >> ctx2.csv
