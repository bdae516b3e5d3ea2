#!/bin/bash
# The committed M4 quantile config (5 members) trained on the history only (split
# last_horizon: test = its last 48 hours = window B, validation = the 48 before = window A),
# then raw and calibrated forecasts of A (from history minus 96) and B (from history minus 48).
# run.sh SEED; NAME (default ens) names the folder NAME-s<SEED>, EXTRA adds --set options
# (the v96 runs: NAME=v96 EXTRA='--set data.split={"val_rows":96,"test_rows":48}').
BIN=/work/runs/m4v/attnfc; D=/work/runs/m4v; cd /work/runs/m4cal
seed=${1:-1}; out=${NAME:-ens}-s$seed
OMP_NUM_THREADS=${THREADS:-1} $BIN --log-level error train --quiet --config /work/main/configs/m4_hourly_quantiles.json --set data.path=$D/hist.csv --set train.seed=$seed --set train.evaluate_test=false $EXTRA --out $out > /dev/null || { echo train failed; exit 1; }
for w in A:histm96 B:histm48; do
  OMP_NUM_THREADS=1 $BIN --log-level error predict -m $out/model.safetensors --uncalibrated -i $D/${w#*:}.csv -o $out/raw_${w%:*}.csv > /dev/null
  OMP_NUM_THREADS=1 $BIN --log-level error predict -m $out/model.safetensors -i $D/${w#*:}.csv -o $out/cal_${w%:*}.csv > /dev/null
done
echo done
