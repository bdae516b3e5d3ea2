#!/bin/bash
# analyse.sh SEED: window B scored raw, calibrated by attnfc (per step), and by cal.py's variants.
M=/work/runs/m4v; cd /work/runs/m4cal; d=${NAME:-ens}-s$1
score(){ $M/attnfc score --forecast $1 --actual $M/val.csv --history $M/histm48.csv --id-column id --season 24 --out /tmp/s3.json >/dev/null; jq -r '[.methods.attnfc.owa, .intervals["80"].attnfc.msis, .intervals["80"].attnfc.coverage, .intervals["95"].attnfc.msis, .intervals["95"].attnfc.coverage] | map(.*10000|round/10000|tostring) | join(",")' /tmp/s3.json; }
echo "seed,variant,owa,msis80,cov80,msis95,cov95"
echo "$1,raw,$(score $d/raw_B.csv)"
echo "$1,attnfc per step,$(score $d/cal_B.csv)"
for m in perstep pooled "smooth 2" "smooth 4" "smooth 8"; do
  ./cal.py $d/raw_A.csv $M/winA.csv $d/raw_B.csv /tmp/c3.csv $m 2>/dev/null
  echo "$1,cal.py $m,$(score /tmp/c3.csv)"
done
