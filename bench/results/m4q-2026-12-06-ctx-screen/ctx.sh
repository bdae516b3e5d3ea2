#!/bin/bash
# Ensemble diversity: the final quantile config at other context lengths (seeds 1-2), to
# average with the 336 networks' validation forecasts.
cd /work/runs/m4v
THREADS=1 ./exp.sh ctx504 1 --set model.context_length=504 --set model.linear_lookback=504 >> ctx.csv &
THREADS=1 ./exp.sh ctx168 1 --set model.context_length=168 --set model.linear_lookback=168 >> ctx.csv &
wait
THREADS=1 ./exp.sh ctx504 2 --set model.context_length=504 --set model.linear_lookback=504 >> ctx.csv &
THREADS=1 ./exp.sh ctx168 2 --set model.context_length=168 --set model.linear_lookback=168 >> ctx.csv &
wait
echo done >> ctx.csv
