#!/bin/bash
# Ad hoc validation script of 2026-12-06 (docs/RESULTS.md "M4 Hourly: quantile_positions on validation"); ran in /tmp/m4v; exp3.sh was this with BIN=/tmp/attnfc-exp2 (the median-weight-1 build)
# exp.sh NAME SEED [--set k=v ...]: one quantile network, validation score (raw intervals)
BIN=/tmp/attnfc-exp; cd /tmp/m4v
name=$1; seed=$2; shift 2
out=runs/$name-s$seed; rm -rf $out
start=$(date +%s)
OMP_NUM_THREADS=${THREADS:-2} $BIN --log-level error train --quiet --config /work/main/configs/m4_hourly_quantiles.json --set data.path=/tmp/m4v/full.csv --set train.ensemble=1 --set train.seed=$seed --set train.evaluate_test=false "$@" --out $out > /dev/null || { echo "$name train failed"; exit 1; }
end=$(date +%s)
$BIN --log-level error predict -m $out/model.safetensors --uncalibrated -i histm48.csv -o $out/val_fc.csv > /dev/null
$BIN score --forecast $out/val_fc.csv --actual val.csv --history histm48.csv --id-column id --season 24 --out $out/val_score.json > /dev/null
echo "$name,$seed,$((end-start)),$(jq -r '[.methods.attnfc.smape, .methods.attnfc.mase, .methods.attnfc.owa] | map(tostring) | join(",")' $out/val_score.json),$(jq -r "[.intervals[\"80\"].attnfc.msis, .intervals[\"95\"].attnfc.msis, .intervals[\"95\"].attnfc.coverage] | map(tostring) | join(\",\")" $out/val_score.json)"
