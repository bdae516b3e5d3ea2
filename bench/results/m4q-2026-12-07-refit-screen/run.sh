#!/bin/bash
# run.sh NAME DATA SEED [--set ...]: train the quantile config on DATA (last_horizon split), forecast B from Hm48, score.
set -e
name=$1 data=$2 seed=$3; shift 3
B=/work/main/build/attnfc
out=runs/$name-s$seed
s=$(date +%s)
OMP_NUM_THREADS=${THREADS:-1} $B --log-level warn train --config /work/main/configs/m4_hourly_quantiles.json --set data.path=$PWD/$data --set train.seed=$seed "$@" --out $out > $out.log 2>&1
e=$(date +%s)
$B --log-level error predict -m $out/model.safetensors --uncalibrated -i Hm48.csv -o $out/fc.csv
$B score --forecast $out/fc.csv --actual B.csv --history Hm48.csv --id-column id --season 24 --out $out/score.json > /dev/null
echo "$name,$seed,$((e-s)),$(jq -r '[.methods.attnfc.smape, .methods.attnfc.mase, .methods.attnfc.owa, .intervals["95"].attnfc.msis, .intervals["95"].attnfc.coverage] | map(tostring) | join(",")' $out/score.json)"
