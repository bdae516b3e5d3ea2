#!/usr/bin/env bash
# Data-parallel training over Open MPI on loopback (docs/SCALING.md): one process and
# mpirun -np 1, 2 and 3 write byte-identical models; a 2-process run stopped mid-epoch and
# resumed as one process ends with the same model; runs stopped by Ctrl-C or by a lost
# process resume to the state of an uninterrupted run; what a multi-process run cannot do is
# refused naming the key. Exit 77 (skipped) with the reason when Open MPI cannot be had.
#
#   tests/mpi/check_mpi.sh path/to/attnfc
set -euo pipefail

BIN=$(readlink -f "${1:?usage: check_mpi.sh path/to/attnfc}")
REPO=$(cd "$(dirname "$0")/../.." && pwd)
skip() { echo "mpi: SKIPPED: $*"; exit 77; }
fail() { echo "mpi: FAILED: $*" >&2; exit 1; }

if ! command -v mpirun >/dev/null; then
  "$REPO/scripts/setup-deps.sh" >/dev/null 2>&1 || true
  command -v mpirun >/dev/null ||
    skip "mpirun not found and Open MPI could not be installed (Debian: openmpi-bin libopenmpi-dev)"
fi
"$BIN" --version | grep -q "^MPI: Open MPI" ||
  skip "$BIN was built without MPI ('attnfc --version' says: $("$BIN" --version | grep '^MPI')); configure again with libopenmpi-dev installed"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/attnfc_mpi.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
# Sanitizer builds: Open MPI's own allocations at exit are no leak of ours.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
# Root in a container: mpirun refuses root without these; one core per rank is not needed.
MPIRUN=(mpirun --allow-run-as-root --oversubscribe --bind-to none)
export OMPI_MCA_btl_vader_single_copy_mechanism=none  # no CMA/ptrace in many containers

head -n 1001 "$REPO/datasets/ETTh1.csv" >data.csv
cat >config.json <<'EOF'
{
  "data": {"path": "data.csv", "columns": ["OT", "HUFL"],
           "split": {"train_rows": 600, "val_rows": 200, "test_rows": 200}},
  "model": {"context_length": 48, "patch_len": 8, "horizon": 12, "d_model": 16, "n_heads": 2,
            "n_layers": 1, "ff_mult": 2, "dropout": 0.1},
  "train": {"epochs": 2, "batch_size": 24, "micro_batches": 6, "max_steps_per_epoch": 8,
            "lr": 0.003, "seed": 5, "patience": 0}
}
EOF

train() {  # train OUT [mpirun -np N] -- extra attnfc args
  local out=$1; shift
  local -a launcher=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do launcher+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  if ! "${launcher[@]}" "$BIN" --log-level warn "$@" train --config config.json --out "$out" \
    >"$out.log" 2>&1; then
    cat "$out.log" >&2
    return 1
  fi
}

# A safetensors file after its JSON header: 8 bytes of header length (little-endian), the
# header, then the tensors' bytes.
header_length() { od -An -t u8 -N 8 "$1" | tr -d ' '; }
tensor_bytes() { tail -c +$((9 + $(header_length "$1"))) "$1"; }

start=$(date +%s)
train single -- --threads 2 || fail "one process, 2 threads"
for n in 1 2 3; do
  train "np$n" "${MPIRUN[@]}" -np "$n" -- --threads 1 || fail "mpirun -np $n"
done
for n in 1 2 3; do
  cmp single/model.safetensors "np$n/model.safetensors" ||
    fail "mpirun -np $n wrote another model.safetensors than one process"
  # The checkpoint's metadata holds timings; its tensors (weights, Adam moments) must agree.
  cmp <(tensor_bytes single/checkpoint.safetensors) <(tensor_bytes "np$n/checkpoint.safetensors") ||
    fail "mpirun -np $n wrote other checkpoint tensors than one process"
done
# Only rank 0 writes the run folder and prints the summary.
[ "$(grep -c '^trained ' np3.log)" = 1 ] || fail "np3 printed the summary $(grep -c '^trained ' np3.log) times"
echo "mpi: one process and mpirun -np 1, 2, 3: byte-identical model and checkpoint ($(( $(date +%s) - start )) s)"

# Stopped after 5 steps (mid-epoch) as 2 processes, resumed as 1: the uninterrupted model.
rc=0
"${MPIRUN[@]}" -np 2 "$BIN" --log-level warn --threads 1 train --config config.json \
  --out stopped --stop-after-steps 5 >stopped.log 2>&1 || rc=$?
[ "$rc" = 130 ] || { cat stopped.log >&2; fail "the stopped 2-process run exited $rc, expected 130"; }
[ -f stopped/checkpoint.safetensors ] || fail "the stopped run left no checkpoint"
"$BIN" --log-level warn --threads 2 train --out stopped --resume >resumed.log 2>&1 ||
  { cat resumed.log >&2; fail "resuming with one process"; }
cmp single/model.safetensors stopped/model.safetensors ||
  fail "2 processes stopped and resumed as 1 gave another model"
echo "mpi: a 2-process run stopped at step 5 and resumed by one process: the same model"

# The two interrupted runs below are long (600 epochs) so that the interruption surely
# lands mid-run; running them to their end, three times, took 498 s of the sanitizer build
# (AMD EPYC Zen 3 class, 2026-12-07). So a resumed run goes on for more_steps steps only
# and stops, and its full state (weights and Adam moments, the checkpoint's tensors) must
# equal that of one uninterrupted process stopped at the same step. That a resume then ends
# with the uninterrupted model is checked above, on the 2-process run stopped at step 5.
# About 1 s for 120 epochs at one thread on a fast CPU (AMD EPYC Zen 5 class, 2026-12-06):
# there the run could end before mpirun passed Ctrl-C on, so 600 (about 5 s there).
long=(--set train.epochs=600 --set train.max_steps_per_epoch=0)
more_steps=30

# checkpoint_step DIR: the global step a run folder's checkpoint was saved at (its JSON
# header holds the loop state, escaped, as metadata).
checkpoint_step() {
  local file=$1/checkpoint.safetensors
  head -c $((8 + $(header_length "$file"))) "$file" | grep -ao 'global_step[^0-9]*[0-9]*' |
    head -n 1 | grep -o '[0-9]*$'
}

# same_state_after_resume NAME: resumes NAME with one process for more_steps steps and
# compares its checkpoint with an uninterrupted one-process run stopped at the same step;
# prints the step NAME was interrupted at (and nothing else on stdout).
same_state_after_resume() {
  local name=$1 step rc=0
  step=$(checkpoint_step "$name")
  [ -n "$step" ] || fail "$name: no global_step in its checkpoint"
  "$BIN" --log-level warn --threads 1 train --out "$name" --resume --stop-after-steps "$more_steps" \
    >"${name}_resumed.log" 2>&1 || rc=$?
  [ "$rc" = 130 ] || { cat "${name}_resumed.log" >&2; fail "resuming $name with one process (exit $rc)"; }
  rc=0
  "$BIN" --log-level warn --threads 1 train --config config.json "${long[@]}" \
    --out "${name}_reference" --stop-after-steps $((step + more_steps)) >"${name}_reference.log" 2>&1 ||
    rc=$?
  [ "$rc" = 130 ] || { cat "${name}_reference.log" >&2; fail "the uninterrupted run for $name (exit $rc)"; }
  cmp <(tensor_bytes "$name/checkpoint.safetensors") \
    <(tensor_bytes "${name}_reference/checkpoint.safetensors") >&2 ||
    fail "$name, resumed by one process, reached another state at step $((step + more_steps)) than an uninterrupted run"
  echo "$step"
}

# Ctrl-C on mpirun (it passes SIGTERM or SIGINT to every process) once the first epoch is
# logged: all stop after the same step, rank 0 saves a checkpoint, and one process resumes
# it to the state of an uninterrupted run.
set -m  # job control: a background job of a script would otherwise ignore SIGINT
"${MPIRUN[@]}" -np 2 "$BIN" --log-level warn --threads 1 train --config config.json \
  "${long[@]}" --out ctrl_c >ctrl_c.log 2>&1 &
launcher=$!
set +m
for _ in $(seq 600); do [ -s ctrl_c/train_log.csv ] && break; sleep 0.1; done
kill -INT "$launcher" 2>/dev/null || true
rc=0
wait "$launcher" || rc=$?
[ -f ctrl_c/checkpoint.safetensors ] || { cat ctrl_c.log >&2; fail "Ctrl-C on mpirun left no checkpoint"; }
[ ! -f ctrl_c/metrics.json ] || fail "the run ended before Ctrl-C reached it (make it longer)"
grep -q "resume with: attnfc train --out ctrl_c --resume" ctrl_c.log ||
  { cat ctrl_c.log >&2; fail "Ctrl-C on mpirun (exit $rc): no 'resume with' line"; }
step=$(same_state_after_resume ctrl_c)
echo "mpi: Ctrl-C on mpirun -np 2 (exit $rc) at step $step, resumed by one process: the uninterrupted state $more_steps steps on"

# A lost process (SIGKILL to one rank after the first epoch): Open MPI stops the whole job
# within seconds, the folder keeps the last epoch's checkpoint, and one process resumes it
# to the state of an uninterrupted run.
set -m
"${MPIRUN[@]}" -np 2 "$BIN" --log-level warn --threads 1 train --config config.json \
  "${long[@]}" --out lost >lost.log 2>&1 &
launcher=$!
set +m
for _ in $(seq 600); do [ -s lost/train_log.csv ] && break; sleep 0.1; done
victim=$(pgrep -f "^$BIN .*--out lost" | tail -n 1)
[ -n "$victim" ] || fail "no attnfc process of the 'lost' run to kill"
kill -KILL "$victim"
for _ in $(seq 300); do kill -0 "$launcher" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$launcher" 2>/dev/null; then
  kill -KILL "$launcher"
  fail "mpirun still ran 30 s after one of its processes was killed"
fi
rc=0
wait "$launcher" || rc=$?
[ "$rc" != 0 ] || fail "mpirun exited 0 after losing a process"
[ ! -f lost/metrics.json ] || fail "the run ended before the kill reached it (make it longer)"
step=$(same_state_after_resume lost)
echo "mpi: a process killed mid-run: mpirun stopped (exit $rc), the checkpoint of step $step resumed to the uninterrupted state $more_steps steps on"

# refused NAME PROCESSES MESSAGE --set...: a run every rank refuses, naming the key (MESSAGE),
# that writes no model.
refused() {
  local name=$1 np=$2 message=$3 rc=0
  shift 3
  "${MPIRUN[@]}" -np "$np" "$BIN" train --config config.json "$@" --out "$name" >"$name.log" 2>&1 ||
    rc=$?
  [ "$rc" != 0 ] || fail "-np $np with $* was accepted"
  grep -q "$message" "$name.log" || { cat "$name.log" >&2; fail "-np $np with $*: no message naming the key"; }
  [ ! -e "$name/model.safetensors" ] || fail "a refused run ($*) wrote a model"
}
# More processes than micro-batches.
refused refused 4 "train.micro_batches: found 3, expected at least the number of processes (4)" \
  --set train.micro_batches=3
# A refit (train.refit_epochs) runs after the final choice, on one process.
refused refused_refit 2 "train.refit_epochs: found 1, expected 0 in a run of 2 processes" \
  --set train.refit_epochs=1
echo "mpi: ok ($(( $(date +%s) - start )) s)"
