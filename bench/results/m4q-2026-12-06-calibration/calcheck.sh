#!/bin/bash
# Additive against scaled conformal calibration, validation only: one network of the
# config trained on the history without its last 48 hours (histm48.csv; its own last 48
# are its "test" part W2, the 48 before its validation W1, where calibration is fitted),
# forecast from histm96.csv and scored on W2. The M4 test file is not read.
cd /work/runs/m4v
BIN=/work/main/build/attnfc
one() {  # one METHOD SEED
  out=runs/cal-$1-s$2; rm -rf $out
  OMP_NUM_THREADS=1 $BIN --log-level error train --quiet --config /work/main/configs/m4_hourly_quantiles.json \
    --set data.path=/work/runs/m4v/histm48.csv --set train.ensemble=1 --set train.seed=$2 \
    --set train.evaluate_test=false --set train.calibrate=$1 --out $out > /dev/null || exit 1
  for mode in cal raw; do
    flag=; [ $mode = raw ] && flag=--uncalibrated
    OMP_NUM_THREADS=1 $BIN --log-level error predict -m $out/model.safetensors $flag -i histm96.csv -o $out/w2_$mode.csv > /dev/null
    $BIN score --forecast $out/w2_$mode.csv --actual w2.csv --history histm96.csv --season 24 --out $out/w2_$mode.json > /dev/null
    echo "$1,$2,$mode,$(jq -r '[.methods.attnfc.owa, .intervals["80"].attnfc.msis, .intervals["80"].attnfc.coverage, .intervals["95"].attnfc.msis, .intervals["95"].attnfc.coverage] | map(tostring) | join(",")' $out/w2_$mode.json)"
  done
}
for seed in "$@"; do
  one conformal $seed >> calcheck.csv &
  one conformal_scaled $seed >> calcheck.csv &
  wait
done
