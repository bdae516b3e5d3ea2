#!/bin/bash
# Validation only: ILI and exchange with ensembles of one context and of mixed contexts,
# H = first and last of each suite (the rule of docs/RESULTS.md: mean validation MSE).
cd /work/main
run() {  # NAME CONFIG GRID [--set ...]
  local name=$1 cfg=$2 grid=$3; shift 3
  scripts/sweep $cfg $grid --seeds 1 -j 2 --threads 1 --out /work/runs/suite-ens/$name \
    --set train.evaluate_test=false "$@" > /work/runs/suite-ens/$name.log 2>&1
}
echo '{"model.horizon":[24,60]}' > /work/runs/suite-ens/ili_grid.json
echo '{"model.horizon":[96,720]}' > /work/runs/suite-ens/exch_grid.json
G=/work/runs/suite-ens
run ili_single configs/ili_M.json $G/ili_grid.json
run ili_ens5 configs/ili_M.json $G/ili_grid.json --set train.ensemble=5
run ili_mix configs/ili_M.json $G/ili_grid.json --set train.ensemble=5 --set 'train.ensemble_contexts=[104,84,64]'
run ili_mix148 configs/ili_M.json $G/ili_grid.json --set model.context_length=148 --set model.linear_lookback=148 --set train.ensemble=5 --set 'train.ensemble_contexts=[148,104,60]'
run exch_single configs/exchange_M.json $G/exch_grid.json
run exch_mix configs/exchange_M.json $G/exch_grid.json --set train.ensemble=3 --set 'train.ensemble_contexts=[96,64,32]'
echo done > $G/done
