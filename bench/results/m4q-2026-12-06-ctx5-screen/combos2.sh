#!/bin/bash
# combos2.sh < LIST: validation scores of the mean (avg.sh) and the element-wise median
# (med.sh) of single networks' raw forecasts; a member "504s1" is runs/ctx504-s1.
cd /work/runs/m4v
echo "members,combine,smape,mase,owa,msis80,msis95,coverage95"
while read -r members; do
  files=(); for m in $members; do files+=("runs/ctx${m%s*}-s${m#*s}/val_fc.csv"); done
  for how in avg med; do
    ./$how.sh /tmp/combo2.csv "${files[@]}"
    ./attnfc score --forecast /tmp/combo2.csv --actual val.csv --history histm48.csv --id-column id --season 24 --out /tmp/combo2.json > /dev/null
    echo "$members,$how,$(jq -r '[.methods.attnfc.smape, .methods.attnfc.mase, .methods.attnfc.owa, .intervals["80"].attnfc.msis, .intervals["95"].attnfc.msis, .intervals["95"].attnfc.coverage] | map(tostring) | join(",")' /tmp/combo2.json)"
  done
done
