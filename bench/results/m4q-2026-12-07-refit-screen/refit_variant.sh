#!/bin/bash
# refit_variant.sh MEMBER NAME KEY=VALUE...: refit R1r's member MEMBER from its selected model with other refit keys, score on B.
set -e
m=$1 name=$2; shift 2
B=/work/main/build/attnfc
d=/work/runs/recency/var/m$m-$name
rm -rf $d; mkdir -p var; cp -r runs/${SRC:-R1r-s1}/members/$m $d
rm -f $d/metrics.json; [ -f $d/selected.safetensors ] && rm -f $d/model.safetensors $d/linear_start.safetensors
if [ -f $d/selected.safetensors ]; then cp $d/selected.safetensors $d/model.safetensors; cp $d/linear_start_selected.safetensors $d/linear_start.safetensors; fi
sets=()
for kv in "$@"; do k=${kv%%=*}; v=${kv#*=}; jq ".train.$k = $v" $d/config.json > $d/c.json && mv $d/c.json $d/config.json; sets+=(--set "train.$kv"); done
OMP_NUM_THREADS=1 $B --log-level warn train --config $d/config.json --out $d --resume > $d.log 2>&1
$B --log-level error predict -m $d/model.safetensors -i Hm48.csv -o $d/fc.csv > /dev/null 2>&1
$B score --forecast $d/fc.csv --actual B.csv --history Hm48.csv --id-column id --season 24 --out $d/score.json > /dev/null
echo "m$m,$name,$(jq -c .refit.train_loss $d/metrics.json),$(jq -r '[.methods.attnfc.smape, .methods.attnfc.mase, .methods.attnfc.owa, .intervals["95"].attnfc.msis, .intervals["95"].attnfc.coverage]|map(.*10000|round/10000)|map(tostring)|join(",")' $d/score.json)"
