# shellcheck shell=bash
# Shared by the scripts/sweep --slurm tests: the inputs of a micro sweep.

# make_inputs FOLDER: FOLDER/data/head.csv (the first 600 rows of ETTh1), FOLDER/base.json
# (a micro run config that names the data by a path relative to FOLDER) and
# FOLDER/grid.json (2 configurations).
make_inputs() {
  local folder=$1
  mkdir -p "$folder/data"
  head -n 601 "$SRC/datasets/ETTh1.csv" >"$folder/data/head.csv"
  cat >"$folder/base.json" <<'JSON'
{
  "data": {"path": "data/head.csv", "columns": ["OT"],
           "split": {"train_rows": 400, "val_rows": 80, "test_rows": 80}},
  "model": {"context_length": 32, "patch_len": 8, "horizon": 8, "d_model": 8, "n_heads": 2,
            "n_layers": 1, "ff_mult": 2, "linear_lookback": 32},
  "train": {"epochs": 1, "batch_size": 16, "max_steps_per_epoch": 2}
}
JSON
  echo '{"model.d_model": [8, 16]}' >"$folder/grid.json"
}
