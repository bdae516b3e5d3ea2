#!/bin/bash
# Old (022359e) and new binaries, M4 configs cut to 2 epochs of 20 steps (so the work
# outside the steps shows), 2 threads, taking turns; wall seconds of `train`.
cd /work/runs/ab
for round in 1 2; do
  for cfg in quantiles intervals; do
    for b in old new; do
      bin=/work/runs/m4v/attnfc; [ $b = new ] && bin=/work/runs/ab/attnfc-new
      rm -rf r-$cfg-$b
      s=$(date +%s.%N)
      OMP_NUM_THREADS=2 $bin --log-level error train --quiet --config /work/main/configs/m4_hourly_$cfg.json \
        --set data.path=/work/runs/m4v/full.csv --set train.epochs=2 --set train.max_steps_per_epoch=20 --out r-$cfg-$b > /dev/null
      e=$(date +%s.%N)
      echo "$round,$cfg,$b,$(echo "$e - $s" | bc)" | tee -a ab.csv
    done
    cmp -s r-$cfg-old/model.safetensors r-$cfg-new/model.safetensors && echo "$cfg same model" || echo "$cfg MODEL DIFFERS"
  done
done
