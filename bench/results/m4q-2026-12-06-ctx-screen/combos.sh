#!/bin/bash
# combos.sh: validation scores of means of single networks' raw forecasts (avg.sh), the
# ensembles train.ensemble_contexts would train (an ensemble's forecast is the mean of its
# members' forecasts, bit for bit: tests/train/test_ensemble.cpp). Seeds: 336 s1 is
# b128s12mb2-s1 (the config's seed 1: patience 3 never stopped it), s2-s4 b128s12mb2p0.
cd /work/runs/m4v
declare -A F=([336s1]=runs/b128s12mb2-s1 [336s2]=runs/b128s12mb2p0-s2 [336s3]=runs/b128s12mb2p0-s3
  [336s4]=runs/b128s12mb2p0-s4 [168s1]=runs/ctx168-s1 [168s2]=runs/ctx168-s2
  [504s1]=runs/ctx504-s1 [504s2]=runs/ctx504-s2)
echo "members,smape,owa,msis95,coverage95"
while read -r members; do
  files=(); for m in $members; do files+=("${F[$m]}/val_fc.csv"); done
  ./avg.sh /tmp/combo.csv "${files[@]}"
  /work/main/build/attnfc score --forecast /tmp/combo.csv --actual val.csv --history histm48.csv --id-column id --season 24 --out /tmp/combo.json > /dev/null
  echo "$members,$(jq -r '[.methods.attnfc.smape, .methods.attnfc.owa, .intervals["95"].attnfc.msis, .intervals["95"].attnfc.coverage] | map(tostring) | join(",")' /tmp/combo.json)"
done <<'LIST'
336s1 336s2
336s1 336s2 336s3 336s4
168s1 168s2
504s1 504s2
336s1 168s1
336s1 504s1
336s2 168s2
504s1 336s1 168s1
504s2 336s2 168s2
504s1 336s1 168s1 504s2
504s1 336s1 168s1 504s2 336s2
504s1 336s1 168s1 504s2 168s2
504s1 336s1 168s1 504s2 336s2 168s2
336s1 336s2 168s1 168s2
336s1 336s2 336s3 168s1 168s2
504s1 504s2 168s1 168s2
LIST
