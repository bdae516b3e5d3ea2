#!/usr/bin/env bash
# scripts/sweep --slurm --submit on a real single-node Slurm that this test starts:
# installs slurm-wlm and munge (scripts/setup-deps.sh slurm), starts munged (as the munge
# user) and slurmctld + slurmd on localhost with everything (config, key, socket, state,
# spool, logs, pid files, ports) in a temp folder, submits a 2-configuration x 2-seed
# sweep (4 array tasks, at most 2 at once) from another folder with a relative data path,
# waits for the array and its collect job, and checks every task's output and results.csv.
# Every process it started is stopped on exit, whatever happened.
#   tests/slurm/run_slurm_test.sh ATTNFC_BINARY
# Exit 0 passed, 1 failed, 77 skipped (the packages cannot be installed here, or not root:
# munged must run as the munge user and slurmd as root), with the reason printed.
set -euo pipefail
SRC=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
BIN=$(readlink -f "${1:?usage: run_slurm_test.sh ATTNFC_BINARY}")
# shellcheck source=tests/slurm/common.sh
source "$SRC/tests/slurm/common.sh"
START=$SECONDS

skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "not root: starting munged as the munge user and slurmd needs root"
"$SRC/scripts/setup-deps.sh" slurm ||
  skip "slurm-wlm and munge cannot be installed here (scripts/setup-deps.sh slurm said why above)"
for tool in slurmctld slurmd sbatch squeue scontrol sinfo munged munge unmunge setpriv jq parallel; do
  command -v "$tool" >/dev/null || skip "$tool not found after scripts/setup-deps.sh slurm"
done
echo "slurm-test: packages ready after $((SECONDS - START)) s"

# 0755: munged runs as the munge user and must reach $T/munge.
T=$(mktemp -d /tmp/attnfc-slurm-test.XXXXXX)
chmod 0755 "$T"
mkdir -p "$T/etc" "$T/state" "$T/spool" "$T/log"
# Every process started from here on carries this in its environment (the daemons, the
# job steps they start and the runs): cleanup finds leftovers by it, and by nothing broader.
export ATTNFC_SLURM_TEST_DIR=$T
export SLURM_CONF=$T/etc/slurm.conf
PIDS=()

ours() {  # ours PID: PID's environment holds our marker
  tr '\0' '\n' 2>/dev/null <"/proc/$1/environ" | grep -qxF "ATTNFC_SLURM_TEST_DIR=$T"
}
cleanup() {
  local rc=$? pid i left
  trap - EXIT
  if [ -f "$T/sweep/slurm-jobs" ] && [ ${#PIDS[@]} -gt 0 ]; then
    # shellcheck disable=SC2046  # two job ids
    timeout 10 scancel $(cat "$T/sweep/slurm-jobs") 2>/dev/null || true
  fi
  # slurmd, then slurmctld, then munged (newest first); each by the PID this test got.
  for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do kill -TERM "${PIDS[i]}" 2>/dev/null || true; done
  for _ in $(seq 1 50); do
    left=0
    for pid in "${PIDS[@]}"; do kill -0 "$pid" 2>/dev/null && left=1; done
    [ "$left" = 0 ] && break
    sleep 0.2
  done
  for pid in "${PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  # What the daemons left: job steps (slurmstepd) and their runs, found by the marker.
  for pid in /proc/[0-9]*; do
    pid=${pid#/proc/}
    if [ "$pid" != $$ ] && ours "$pid"; then kill -KILL "$pid" 2>/dev/null || true; fi
  done
  wait 2>/dev/null || true
  if [ "$rc" = 0 ] || [ -z "${KEEP_SLURM_TEST:-}" ]; then rm -rf "$T"; else echo "slurm-test: kept $T"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

show_logs() {
  local f
  for f in "$T"/log/* "$T"/sweep/slurm-collect-*.out "$T"/sweep/runs/slurm-*.out "$T"/sweep.out; do
    [ -f "$f" ] || continue
    echo "----- $f (last 40 lines)"
    tail -n 40 "$f"
  done
}
fail() {
  echo "FAIL: $*" >&2
  show_logs >&2
  exit 1
}
# wait_for SECONDS WHAT COMMAND...: polls COMMAND every 0.5 s; a failure after SECONDS.
wait_for() {
  local limit=$1 what=$2 end=$((SECONDS + $1))
  shift 2
  until "$@" >/dev/null 2>&1; do
    [ "$SECONDS" -lt "$end" ] || fail "$what: not after $limit s"
    sleep 0.5
  done
}

# Two free TCP ports of our own: a Slurm already running here keeps 6817/6818.
free_port() {
  local p
  while true; do
    p=$(shuf -i 20000-45000 -n 1)
    [[ " ${PORTS[*]-} " == *" $p "* ]] && continue
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { PORTS+=("$p"); return 0; }
  done
}
PORTS=()
free_port
free_port

echo "== munged on $T/munge/munge.socket, as the munge user"
# munged wants its socket's folder searchable by all (the clients) and not writable by others.
install -d -o munge -g munge -m 0755 "$T/munge"
head -c 1024 /dev/urandom >"$T/munge/munge.key"
chown munge:munge "$T/munge/munge.key"
chmod 0400 "$T/munge/munge.key"
SOCK=$T/munge/munge.socket
setpriv --reuid=munge --regid=munge --init-groups munged --foreground --socket="$SOCK" \
  --key-file="$T/munge/munge.key" --pid-file="$T/munge/munged.pid" \
  --log-file="$T/munge/munged.log" --seed-file="$T/munge/munged.seed" \
  >"$T/log/munged.out" 2>&1 &
PIDS+=($!)
munge_ok() { munge -n -S "$SOCK" | unmunge -S "$SOCK"; }
wait_for 20 "munged answering on $SOCK" munge_ok

HOST=$(hostname -s)
cat >"$SLURM_CONF" <<EOF
# A one-node cluster for tests/slurm/run_slurm_test.sh; every path in $T.
ClusterName=attnfctest
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=${PORTS[0]}
SlurmdPort=${PORTS[1]}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SOCK
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/log/slurmctld.log
SlurmdLogFile=$T/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# No cgroups (a container may have none writable): plain process tracking, no task binding;
# with these plugins slurmd reads no cgroup.conf.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/builtin
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
# The node as written here, whatever this machine has: CPUs=2 lets 2 tasks run at once.
SlurmdParameters=config_overrides
NodeName=attnfctest NodeHostname=$HOST NodeAddr=127.0.0.1 CPUs=2 RealMemory=1024 State=UNKNOWN
PartitionName=test Nodes=attnfctest Default=YES MaxTime=INFINITE State=UP
EOF

echo "== slurmctld (port ${PORTS[0]}) and slurmd (port ${PORTS[1]}) on $HOST"
slurmctld -D -f "$SLURM_CONF" >"$T/log/slurmctld.out" 2>&1 &
PIDS+=($!)
wait_for 30 "slurmctld answering (scontrol ping)" bash -c 'scontrol ping | grep -q UP'
slurmd -D -N attnfctest -f "$SLURM_CONF" >"$T/log/slurmd.out" 2>&1 &
PIDS+=($!)
node_idle() { [ "$(sinfo -h -n attnfctest -o %t)" = idle ]; }
wait_for 60 "node attnfctest idle (sinfo)" node_idle
echo "slurm-test: Slurm up after $((SECONDS - START)) s"

echo "== the sweep, submitted from $T/caller with a relative data path"
mkdir -p "$T/caller"
make_inputs "$T/caller"
(cd "$T/caller" && "$SRC/scripts/sweep" base.json grid.json --slurm --submit --seeds 1,2 \
  --throttle 2 --time 5 --mem 256M --partition test --out ../sweep --bin "$BIN") \
  >"$T/sweep.out" 2>&1 || fail "scripts/sweep --slurm --submit exited $?"
cat "$T/sweep.out"
read -r ARRAY COLLECT <"$T/sweep/slurm-jobs" || fail "no job ids in $T/sweep/slurm-jobs"
grep -qxF "#SBATCH --chdir=$T/caller" "$T/sweep/sweep.sbatch" || fail "sweep.sbatch: no --chdir line"
scontrol show job "$ARRAY" | grep -q "ArrayTaskThrottle=2" ||
  fail "job $ARRAY: no ArrayTaskThrottle=2 in scontrol show job"

# The collect job ends last (afterany on the whole array).
state() { scontrol show job "$1" | grep -o 'JobState=[A-Z_]*' | head -n 1 | cut -d= -f2; }
ended() { case $(state "$COLLECT") in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY) ;; *) return 1 ;; esac; }
wait_for 150 "collect job $COLLECT ended" ended
echo "slurm-test: jobs ended after $((SECONDS - START)) s"

echo "== checks"
[ "$(state "$COLLECT")" = COMPLETED ] || fail "collect job $COLLECT: $(state "$COLLECT"), expected COMPLETED"
tasks=$(scontrol -o show job "$ARRAY" | grep -c 'JobState=COMPLETED.*ExitCode=0:0' || true)
[ "$tasks" = 4 ] || fail "job array $ARRAY: $tasks of 4 tasks COMPLETED with exit 0:0 ($(scontrol -o show job "$ARRAY" | grep -o 'ArrayTaskId=[0-9]* JobState=[A-Z_]*' | tr '\n' ' '))"
csv=$T/sweep/results.csv
[ -f "$csv" ] || fail "no $csv"
[ "$(tail -n +2 "$csv" | wc -l)" = 4 ] || fail "$csv: expected 4 runs, found $(tail -n +2 "$csv" | wc -l)"
for row in c00_s1,c00,1,8,done c00_s2,c00,2,8,done c01_s1,c01,1,16,done c01_s2,c01,2,16,done; do
  grep -q "^$row," "$csv" || fail "$csv: no row starting '$row'"
done
grep -qF "| c00 | 8 | 2/2 |" "$T/sweep/results.md" || fail "results.md: no row for c00 with 2/2 seeds"
grep -qF "| c01 | 16 | 2/2 |" "$T/sweep/results.md" || fail "results.md: no row for c01 with 2/2 seeds"
for task in 0 1 2 3; do
  out=$T/sweep/runs/slurm-${ARRAY}_$task.out
  run=$(sed -n "$((task + 1))p" "$T/sweep/runs.tsv" | cut -f1)
  grep -q "^done   $run\$" "$out" || fail "$out: no 'done   $run'"
  jq -e --arg p "$T/caller/data/head.csv" '.data.path == $p' "$T/sweep/runs/$run/config.json" \
    >/dev/null || fail "runs/$run/config.json: data.path is not $T/caller/data/head.csv"
done
grep -q "sweep: results -> $T/sweep/results.csv" "$T"/sweep/slurm-collect-"$COLLECT".out ||
  fail "collect job output: no 'sweep: results ->' line"
cat "$T/sweep/results.md"

# docs/SCALING.md's recipe: one training run over the 2 tasks of a job, mpirun inside
# sbatch (Open MPI reads the allocation), gives the model one process gives.
if "$BIN" --version | grep -q "^MPI: Open MPI"; then
  echo "== one run on 2 processes: mpirun inside an sbatch job of 2 tasks"
  mpi_train=(--log-level warn --threads 1 train --config base.json --set train.micro_batches=4
    --set train.max_steps_per_epoch=4)
  cat >"$T/caller/mpi.sbatch" <<JOB
#!/bin/bash
#SBATCH --ntasks=2
#SBATCH --time=5
#SBATCH --chdir=$T/caller
#SBATCH --output=$T/log/mpi-job.out
export OMPI_MCA_btl_vader_single_copy_mechanism=none
# A sanitizer build (make sanitize): Open MPI's own allocations at exit are no leak of ours.
export ASAN_OPTIONS=\${ASAN_OPTIONS:+\$ASAN_OPTIONS:}detect_leaks=0
mpirun --allow-run-as-root --bind-to none "$BIN" ${mpi_train[*]} --out mpi_run
JOB
  MPI_JOB=$(sbatch --parsable "$T/caller/mpi.sbatch") || fail "sbatch mpi.sbatch exited $?"
  mpi_ended() { case $(state "$MPI_JOB") in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY) ;; *) return 1 ;; esac; }
  wait_for 120 "the mpirun job $MPI_JOB ended" mpi_ended
  [ "$(state "$MPI_JOB")" = COMPLETED ] ||
    fail "mpirun job $MPI_JOB: $(state "$MPI_JOB"), expected COMPLETED"
  (cd "$T/caller" && "$BIN" "${mpi_train[@]}" --out one_run) >"$T/log/one_run.out" 2>&1 ||
    fail "the one-process run beside it exited $?"
  cmp "$T/caller/mpi_run/model.safetensors" "$T/caller/one_run/model.safetensors" ||
    fail "the 2-process Slurm job wrote another model than one process"
  echo "slurm-test: mpirun in a 2-task sbatch job wrote the one-process model, byte for byte"
else
  echo "slurm-test: no MPI job: $BIN was built without MPI ($("$BIN" --version | grep '^MPI'))"
fi
echo "slurm-test: passed in $((SECONDS - START)) s"
