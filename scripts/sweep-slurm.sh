# scripts/sweep-slurm.sh: the Slurm half of scripts/sweep (sourced by it, not run alone).
# It writes DIR/sweep.sbatch (a job array, one task per run) and DIR/collect.sbatch (builds
# results.csv/results.md), and with --submit submits both, the collect job with
# --dependency=afterany on the array: it runs once every task has ended, whether the
# tasks finished, failed or hit their time limit, so the table is built exactly once,
# after the last run. (Collecting from "the last task" instead would race: with a throttle
# or a requeue, no task knows it is the last one to end.)
# shellcheck shell=bash
# Uses from scripts/sweep: die, SELF, DIR, N, THREADS, JOBS, SLURM, SUBMIT.

# Options for the job, as given (empty: not given). SL_ARGS: --sbatch-arg passthroughs.
declare -A SL=([time]="" [mem]="" [cpus-per-task]="" [partition]="" [account]="" [throttle]="")
SL_ARGS=()

slurm_option() {  # slurm_option NAME VALUE (NAME without the leading --)
  if [ "$1" = sbatch-arg ]; then SL_ARGS+=("$2"); else SL[$1]=$2; fi
}

# Cheap format checks, so that a typo is refused here rather than by sbatch, after the
# sweep folder was written (or, for a typo sbatch accepts, by a job that never starts).
slurm_check() {
  local key value
  if [ "$SLURM" = 0 ]; then
    for key in "${!SL[@]}"; do
      [ -z "${SL[$key]}" ] || die "--$key: found without --slurm, expected it with --slurm (it sets the Slurm job)"
    done
    [ ${#SL_ARGS[@]} -eq 0 ] || die "--sbatch-arg: found without --slurm, expected it with --slurm"
    [ "$SUBMIT" = 0 ] || die "--submit: found without --slurm, expected --slurm --submit"
    return 0
  fi
  [ -z "$JOBS" ] || die "-j: found with --slurm, expected --throttle N (at most N array tasks at once)"
  value=${SL[time]}
  [ -z "$value" ] || [[ $value =~ ^[0-9]+(:[0-9]{1,2}){0,2}$ ]] ||
    [[ $value =~ ^[0-9]+-[0-9]{1,2}(:[0-9]{1,2}){0,2}$ ]] ||
    die "--time: found '$value', expected minutes, [HH:]MM:SS or D-HH[:MM[:SS]] (e.g. 90, 1:30:00, 2-00)"
  value=${SL[mem]}
  [ -z "$value" ] || [[ $value =~ ^[0-9]+[KMGTkmgt]?$ ]] ||
    die "--mem: found '$value', expected a size per run such as 2G or 500M"
  value=${SL[cpus-per-task]}
  if [ -n "$value" ]; then
    [[ $value =~ ^[1-9][0-9]*$ ]] || die "--cpus-per-task: found '$value', expected a positive integer"
    [ "$value" -ge "$THREADS" ] ||
      die "--cpus-per-task: found $value with --threads $THREADS, expected at least the threads each run starts"
  fi
  SL[cpus-per-task]=${value:-$THREADS}
  value=${SL[throttle]}
  [ -z "$value" ] || [[ $value =~ ^[1-9][0-9]*$ ]] ||
    die "--throttle: found '$value', expected a positive integer (array tasks at once)"
  value=${SL[partition]}
  [ -z "$value" ] || [[ $value =~ ^[A-Za-z0-9_.-]+(,[A-Za-z0-9_.-]+)*$ ]] ||
    die "--partition: found '$value', expected a partition name (or a comma-separated list)"
  value=${SL[account]}
  [ -z "$value" ] || [[ $value =~ ^[A-Za-z0-9_.-]+$ ]] ||
    die "--account: found '$value', expected an account name"
  for value in "${SL_ARGS[@]}"; do
    [[ $value =~ ^-[^[:space:]] && $value != *$'\n'* ]] ||
      die "--sbatch-arg: found '$value', expected one sbatch option such as --qos=short"
    # The sweep owns these: another array or output file would break the run <-> task map.
    [[ ! $value =~ ^(--array|--output|--error|--chdir|-[aoeD]) ]] ||
      die "--sbatch-arg: found '$value', expected an option other than --array/--output/--error/--chdir (the sweep sets them)"
  done
  # #SBATCH lines are split at whitespace and --output expands %-patterns: such folders
  # would silently become other paths.
  [[ ! $DIR =~ [[:space:]%] ]] ||
    die "--out: found '$DIR', expected a folder path without whitespace or '%' (it goes on #SBATCH lines)"
  [[ ! $PWD =~ [[:space:]] ]] ||
    die "working directory: found '$PWD', expected a path without whitespace (it goes on #SBATCH --chdir)"
  if [ "$SUBMIT" = 1 ]; then
    command -v sbatch >/dev/null || die "--submit: sbatch not found on PATH, expected a Slurm client"
  fi
  return 0
}

# The #SBATCH lines both jobs share: where they run from and on which partition/account.
slurm_common_lines() {
  echo "#SBATCH --chdir=$PWD"
  [ -z "${SL[partition]}" ] || echo "#SBATCH --partition=${SL[partition]}"
  [ -z "${SL[account]}" ] || echo "#SBATCH --account=${SL[account]}"
}

slurm_write() {
  local name array
  name=attnfc-sweep-$(basename "$DIR" | tr -c 'A-Za-z0-9_.\n-' '_')
  array="0-$((N - 1))${SL[throttle]:+%${SL[throttle]}}"
  {
    echo "#!/usr/bin/env bash"
    echo "#SBATCH --job-name=$name"
    echo "#SBATCH --array=$array"
    echo "#SBATCH --cpus-per-task=${SL[cpus-per-task]}"
    echo "#SBATCH --output=$DIR/runs/slurm-%A_%a.out"
    slurm_common_lines
    [ -z "${SL[time]}" ] || echo "#SBATCH --time=${SL[time]}"
    [ -z "${SL[mem]}" ] || echo "#SBATCH --mem=${SL[mem]}"
    local a
    for a in "${SL_ARGS[@]}"; do echo "#SBATCH $a"; done
    echo "# One array task per run (DIR/runs.tsv line SLURM_ARRAY_TASK_ID + 1); finished runs"
    echo "# are skipped and interrupted ones resume, so resubmitting this file is safe."
    # shellcheck disable=SC2016  # $SLURM_ARRAY_TASK_ID is the task's, expanded when it runs
    printf 'exec %q --run-task "$SLURM_ARRAY_TASK_ID" %q\n' "$SELF" "$DIR"
  } >"$DIR/sweep.sbatch"
  # Small and short on purpose: it only reads the runs' metrics.json files.
  {
    echo "#!/usr/bin/env bash"
    echo "#SBATCH --job-name=$name-collect"
    echo "#SBATCH --cpus-per-task=1"
    echo "#SBATCH --mem=512M"
    echo "#SBATCH --time=0:10:00"
    echo "#SBATCH --output=$DIR/slurm-collect-%j.out"
    slurm_common_lines
    echo "# Submitted with --dependency=afterany:<array job id>: runs once every task has ended."
    printf 'exec %q --collect %q\n' "$SELF" "$DIR"
  } >"$DIR/collect.sbatch"
  echo "sweep: $N runs -> $DIR/sweep.sbatch (array $array), results by $DIR/collect.sbatch"
}

# sbatch --parsable prints "<job id>" or "<job id>;<cluster>".
slurm_sbatch() {  # slurm_sbatch ARGS... -> the job id on stdout
  local out
  out=$(sbatch --parsable "$@") || return 1
  out=${out%%;*}
  [[ $out =~ ^[0-9]+$ ]] || { echo "sweep: sbatch printed '$out', expected a job id" >&2; return 1; }
  echo "$out"
}

slurm_submit() {
  if [ "$SUBMIT" = 0 ]; then
    echo "  submit:  scripts/sweep ... --submit (the same command plus --submit), or by hand:"
    echo "           jid=\$(sbatch --parsable $DIR/sweep.sbatch) &&" \
      "sbatch --dependency=afterany:\${jid%%;*} $DIR/collect.sbatch"
    echo "  collect: scripts/sweep --collect $DIR (any time; the collect job does it at the end)"
    return 0
  fi
  local array_id collect_id
  echo "sweep: sbatch --parsable $DIR/sweep.sbatch"
  array_id=$(slurm_sbatch "$DIR/sweep.sbatch") || {
    echo "sweep: sbatch refused $DIR/sweep.sbatch (its message is above); nothing was submitted" >&2
    exit 1
  }
  echo "sweep: sbatch --parsable --dependency=afterany:$array_id $DIR/collect.sbatch"
  collect_id=$(slurm_sbatch --dependency="afterany:$array_id" "$DIR/collect.sbatch") || {
    echo "sweep: sbatch refused $DIR/collect.sbatch; job array $array_id runs without it:" \
      "run scripts/sweep --collect $DIR once it has ended" >&2
    exit 1
  }
  echo "$array_id $collect_id" >"$DIR/slurm-jobs"
  echo "sweep: submitted job array $array_id ($N runs) and collect job $collect_id (after it)"
  echo "  watch:   squeue -j $array_id,$collect_id"
  echo "  results: $DIR/results.csv and results.md once job $collect_id has ended"
  echo "  logs:    $DIR/runs/slurm-${array_id}_<task>.out, $DIR/runs/<run>.log"
}
