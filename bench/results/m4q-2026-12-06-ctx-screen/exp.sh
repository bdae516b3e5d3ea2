#!/bin/bash
# exp.sh NAME SEED [--set k=v ...]: one quantile network of configs/m4_hourly_quantiles.json
# trained on the full file (split last_horizon: never sees the test rows), forecast from the
# history without its last 48 hours, raw intervals, scored against those 48 hours.
BIN=${BIN:-/work/main/build/attnfc}; cd /work/runs/m4v
name=$1; seed=$2; shift 2
out=runs/$name-s$seed; rm -rf $out
start=$(date +%s)
OMP_NUM_THREADS=${THREADS:-2} $BIN --log-level error train --quiet --config /work/main/configs/m4_hourly_quantiles.json --set data.path=/work/runs/m4v/full.csv --set train.ensemble=1 --set train.seed=$seed --set train.evaluate_test=false "$@" --out $out > /dev/null || { echo "$name train failed"; exit 1; }
end=$(date +%s)
OMP_NUM_THREADS=${THREADS:-2} $BIN --log-level error predict -m $out/model.safetensors --uncalibrated -i histm48.csv -o $out/val_fc.csv > /dev/null
$BIN score --forecast $out/val_fc.csv --actual val.csv --history histm48.csv --id-column id --season 24 --out $out/val_score.json > /dev/null
echo "$name,$seed,$((end-start)),$(jq -r '[.methods.attnfc.smape, .methods.attnfc.mase, .methods.attnfc.owa] | map(tostring) | join(",")' $out/val_score.json),$(jq -r "[.intervals[\"80\"].attnfc.msis, .intervals[\"95\"].attnfc.msis, .intervals[\"95\"].attnfc.coverage] | map(tostring) | join(\",\")" $out/val_score.json),$*"
