#!/bin/bash
# Raw forecasts of the v96 A/B models (../m4cal/v96-s*) from every validation origin (cuts
# 96..144 rows from the history's end) and from B's (cut 48).
BIN=/work/main/build/attnfc; H=/work/runs/m4v/hist.csv; cd /work/runs/m4orig
awk -F, 'NR>1{n[$1]++} END{for(k in n) print k","n[k]}' $H > counts.csv
for cut in 48 $(seq 96 144); do
  awk -F, -v cut=$cut 'NR==FNR{n[$1]=$2; next} FNR==1{print; next} {if (++i[$1] <= n[$1]-cut) print}' counts.csv $H > cut.csv
  for s in 1 2; do
    mkdir -p s$s
    OMP_NUM_THREADS=1 $BIN --log-level error predict -m ../m4cal/v96-s$s/model.safetensors --uncalibrated -i cut.csv -o s$s/raw_$cut.csv > /dev/null
  done
done
rm cut.csv; echo done
