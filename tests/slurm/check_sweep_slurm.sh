#!/usr/bin/env bash
# scripts/sweep --slurm without a Slurm: what it checks (binary, every file the config
# names, option formats), the files it writes (sweep.sbatch/collect.sbatch lines, absolute
# paths), --submit against a stand-in sbatch, and the job script run by hand as a task
# would run it, from another folder.
#   tests/slurm/check_sweep_slurm.sh ATTNFC_BINARY
set -euo pipefail
SRC=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
BIN=$(readlink -f "${1:?usage: check_sweep_slurm.sh ATTNFC_BINARY}")
# shellcheck source=tests/slurm/common.sh
source "$SRC/tests/slurm/common.sh"
SWEEP=$SRC/scripts/sweep
for tool in jq parallel; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed (scripts/setup-deps.sh)"; exit 77; }
done

T=$(mktemp -d /tmp/attnfc-sweep-check.XXXXXX)
trap 'rm -rf "$T"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
# run CODE ARGS...: runs scripts/sweep ARGS from $T/caller into $T/out.txt; a failure when
# its exit code is not CODE.
run() {
  local want=$1 rc=0
  shift
  (cd "$T/caller" && "$SWEEP" "$@") >"$T/out.txt" 2>&1 || rc=$?
  [ "$rc" = "$want" ] || { fail "sweep $* exited $rc, expected $want"; sed 's/^/    /' "$T/out.txt" >&2; }
}
has() {  # has FILE TEXT: FILE has a line that is exactly TEXT
  grep -qxF -- "$2" "$1" || { fail "$1: no line '$2'"; sed 's/^/    /' "$1" >&2; }
}
says() {  # says TEXT: the last run printed TEXT
  grep -qF -- "$1" "$T/out.txt" || { fail "expected output containing '$1'"; sed 's/^/    /' "$T/out.txt" >&2; }
}

mkdir -p "$T/caller"
make_inputs "$T/caller"
C=$T/caller

echo "== a missing or non-executable binary is refused under --slurm too"
run 2 base.json grid.json --slurm --out sw --bin "$T/no-such-attnfc"
says "sweep: --bin: found no executable at '$T/no-such-attnfc', expected the attnfc binary"
touch "$T/not-executable"
run 2 base.json grid.json --slurm --out sw --bin "$T/not-executable"
says "--bin: found no executable at '$T/not-executable'"
[ ! -e "$C/sw" ] || fail "a refused sweep left its folder $C/sw"

echo "== every missing file is reported, one line each, naming the key and the path"
echo '{"data.path": ["data/head.csv", "data/gone.csv"]}' >"$C/grid_paths.json"
run 2 base.json grid_paths.json --slurm --out sw --bin "$BIN" --set data.holidays=hol.csv
says "sweep: data.path: found 'data/gone.csv' (grid grid_paths.json), expected a readable file (relative paths are read from $C)"
says "sweep: data.holidays: found 'hol.csv' (--set data.holidays=hol.csv), expected a readable file"
[ "$(grep -c '^sweep: ' "$T/out.txt")" = 2 ] || fail "expected 2 error lines"
jq '.data.path = "data/missing.csv"' "$C/base.json" >"$C/base_missing.json"
run 2 base_missing.json grid.json --out sw --bin "$BIN"  # without --slurm too
says "sweep: data.path: found 'data/missing.csv' (base config base_missing.json), expected a readable file"
jq '.data.path = "-"' "$C/base.json" >"$C/base_stdin.json"
run 2 base_stdin.json grid.json --slurm --out sw --bin "$BIN"
says "data.path: found \"-\" (base config base_stdin.json), expected a file"
jq 'del(.data.path)' "$C/base.json" >"$C/base_nopath.json"
run 2 base_nopath.json grid.json --slurm --out sw --bin "$BIN"
says "data.path: found none in base_nopath.json or --set, expected the CSV file to read"
# The base's missing file does not matter when --set replaces it.
run 0 base_missing.json grid.json --slurm --out sw_set --bin "$BIN" --set data.path=data/head.csv

echo "== option formats"
run 2 base.json grid.json --slurm --out sw --bin "$BIN" --time 1h
says "sweep: --time: found '1h', expected minutes, [HH:]MM:SS or D-HH[:MM[:SS]]"
run 2 base.json grid.json --slurm --out sw --bin "$BIN" --mem 2GB
says "sweep: --mem: found '2GB', expected a size per run"
run 2 base.json grid.json --slurm --out sw --bin "$BIN" --threads 2 --cpus-per-task 1
says "sweep: --cpus-per-task: found 1 with --threads 2, expected at least the threads each run starts"
run 2 base.json grid.json --slurm --out sw --bin "$BIN" --throttle 0
says "sweep: --throttle: found '0', expected a positive integer"
run 2 base.json grid.json --slurm --out sw --bin "$BIN" --partition 'a b'
says "sweep: --partition: found 'a b', expected a partition name"
run 2 base.json grid.json --slurm --out sw --bin "$BIN" --sbatch-arg --array=0-9
says "sweep: --sbatch-arg: found '--array=0-9', expected an option other than"
run 2 base.json grid.json --slurm --out sw --bin "$BIN" -j 2
says "sweep: -j: found with --slurm, expected --throttle N"
run 2 base.json grid.json --out sw --bin "$BIN" --time 10
says "sweep: --time: found without --slurm, expected it with --slurm"
run 2 base.json grid.json --slurm --out 'has space' --bin "$BIN"
says "sweep: --out: found '$C/has space', expected a folder path without whitespace or '%'"
run 2 base.json grid.json --slurm --out sw --bin "$BIN" --time
says "sweep: --time: found no value, expected one"
run 2 base.json grid.json --slurm --out sw --bin "$BIN" --frobnicate
says "sweep: unknown option '--frobnicate'"
# A PATH with every tool but sbatch (/bin is /usr/bin on Debian 12).
mkdir -p "$T/nosbatch"
find /usr/bin -maxdepth 1 ! -name sbatch ! -path /usr/bin -exec ln -s -t "$T/nosbatch" {} +
PATH=$T/nosbatch run 2 base.json grid.json --slurm --submit --out sw --bin "$BIN"
says "sweep: --submit: sbatch not found on PATH"
[ ! -e "$C/sw" ] || fail "a refused sweep left its folder $C/sw"

echo "== the job files: every path absolute, the options on #SBATCH lines"
run 0 base.json grid.json --slurm --out sw --bin "$BIN" --seeds 1,2 --threads 2 --time 0:20:00 \
  --mem 1G --partition debug --account lab --throttle 2 --sbatch-arg=--qos=short
D=$C/sw
S=$D/sweep.sbatch
has "$S" "#SBATCH --array=0-3%2"
has "$S" "#SBATCH --cpus-per-task=2"
has "$S" "#SBATCH --chdir=$C"
has "$S" "#SBATCH --output=$D/runs/slurm-%A_%a.out"
has "$S" "#SBATCH --time=0:20:00"
has "$S" "#SBATCH --mem=1G"
has "$S" "#SBATCH --partition=debug"
has "$S" "#SBATCH --account=lab"
has "$S" "#SBATCH --qos=short"
has "$S" "#SBATCH --job-name=attnfc-sweep-sw"
has "$S" "exec $SWEEP --run-task \"\$SLURM_ARRAY_TASK_ID\" $D"
has "$D/collect.sbatch" "#SBATCH --chdir=$C"
has "$D/collect.sbatch" "#SBATCH --partition=debug"
has "$D/collect.sbatch" "#SBATCH --output=$D/slurm-collect-%j.out"
has "$D/collect.sbatch" "exec $SWEEP --collect $D"
bash -n "$S" || fail "$S is not valid bash"
says "jid=\$(sbatch --parsable $S) && sbatch --dependency=afterany:\${jid%%;*} $D/collect.sbatch"
# shellcheck disable=SC1091
(want_bin=$BIN && source "$D/sweep.env" && [ "$BASE" = "$C/base.json" ] && [ "$BIN" = "$want_bin" ] &&
  [ "${EXTRA_SETS[*]}" = "data.path=\"$C/data/head.csv\"" ]) ||
  { fail "sweep.env: expected absolute BASE, BIN and data.path"; cat "$D/sweep.env" >&2; }
[ "$(wc -l <"$D/runs.tsv")" = 4 ] || fail "runs.tsv: expected 4 runs"
# Without a throttle, --cpus-per-task follows --threads.
run 0 base.json grid.json --slurm --out sw1 --bin "$BIN" --seeds 1
has "$C/sw1/sweep.sbatch" "#SBATCH --array=0-1"
has "$C/sw1/sweep.sbatch" "#SBATCH --cpus-per-task=1"
# A grid over data files: each value absolute in runs.tsv.
cp "$C/data/head.csv" "$C/data/other.csv"
echo '{"data.path": ["data/head.csv", "data/other.csv"]}' >"$C/grid_data.json"
run 0 base.json grid_data.json --slurm --out swd --bin "$BIN" --seeds 1
[ "$(cut -f4 "$C/swd/runs.tsv" | jq -r '."data.path"' | tr '\n' ' ')" = "$C/data/head.csv $C/data/other.csv " ] ||
  { fail "runs.tsv: expected absolute data paths"; cat "$C/swd/runs.tsv" >&2; }

echo "== --submit: the array, then the collect job after it (a stand-in sbatch)"
mkdir -p "$T/fakebin"
cat >"$T/fakebin/sbatch" <<EOF
#!/usr/bin/env bash
echo "\$*" >>"$T/sbatch.calls"
[ ! -e "$T/sbatch.refuse" ] || { echo "sbatch: error: invalid partition specified" >&2; exit 1; }
n=\$(wc -l <"$T/sbatch.calls")
[ "\$n" = 1 ] && echo 4101 || echo "4102;cluster"
EOF
chmod +x "$T/fakebin/sbatch"
PATH=$T/fakebin:$PATH run 0 base.json grid.json --slurm --submit --out sw --bin "$BIN" --seeds 1,2 \
  --threads 2 --time 0:20:00 --mem 1G --partition debug --account lab --throttle 2 --sbatch-arg=--qos=short
has "$T/sbatch.calls" "--parsable $D/sweep.sbatch"
has "$T/sbatch.calls" "--parsable --dependency=afterany:4101 $D/collect.sbatch"
has "$D/slurm-jobs" "4101 4102"
says "sweep: submitted job array 4101 (4 runs) and collect job 4102 (after it)"
touch "$T/sbatch.refuse"
PATH=$T/fakebin:$PATH run 1 base.json grid.json --slurm --submit --out sw --bin "$BIN" --seeds 1,2 \
  --threads 2 --time 0:20:00 --mem 1G --partition debug --account lab --throttle 2 --sbatch-arg=--qos=short
says "sweep: sbatch refused $D/sweep.sbatch (its message is above); nothing was submitted"

echo "== a task run by hand from another folder, as Slurm runs it, then the collect job"
(cd / && SLURM_ARRAY_TASK_ID=0 bash "$S") >"$T/task.txt" 2>&1 || { fail "task 0 failed"; cat "$T/task.txt" >&2; }
grep -q "^done   c00_s1" "$T/task.txt" || { fail "task 0: expected 'done   c00_s1'"; cat "$T/task.txt" >&2; }
jq -e --arg p "$C/data/head.csv" '.data.path == $p' "$D/runs/c00_s1/config.json" >/dev/null ||
  fail "runs/c00_s1/config.json: expected data.path $C/data/head.csv"
(cd / && bash "$D/collect.sbatch") >"$T/collect.txt" 2>&1 || { fail "collect failed"; cat "$T/collect.txt" >&2; }
grep -q "^c00_s1,c00,1,8,done," "$D/results.csv" || { fail "results.csv: expected c00_s1 done"; cat "$D/results.csv" >&2; }
grep -q "^c01_s2,c01,2,16,missing," "$D/results.csv" || fail "results.csv: expected c01_s2 missing"

if [ "$failures" -gt 0 ]; then
  echo "check_sweep_slurm: $failures check(s) failed" >&2
  exit 1
fi
echo "check_sweep_slurm: all checks passed"
