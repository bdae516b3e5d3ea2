#!/usr/bin/env bash
# Runs every BUILD_DIR/bench_* program in several separate processes at each thread
# count, takes medians per (bench, case, metric, threads), prints a table with the
# ratio to the in-process reference, and writes bench/results/<host>-<date>.json.
#
#   scripts/bench.sh BUILD_DIR
#   BENCH_RUNS=5 BENCH_THREADS="1 2" BENCH_FILTER=NT scripts/bench.sh build
#
# When bench_model ran and Debian's /usr/bin/python3 can import torch, PyTorch trains the
# same shapes side by side (scripts/torch_reference.py --bench: every thread count of
# BENCH_THREADS, with the pthread and the OpenMP OpenBLAS, BENCH_TORCH_SECONDS timed
# seconds each, default 10); the table "attnfc vs PyTorch" compares attnfc's best thread
# count with torch's best setting. BENCH_TORCH=0 skips it; BENCH_TORCH_PYTHON picks another
# interpreter. Without torch the table still prints attnfc's side, and says why.
#
# Each program prints JSON lines (docs/CONTRIBUTING.md, "Benchmarks"):
#   {"bench":"gemm","case":"NT 4096x384x128","metric":"GFLOP/s","value":123.4,"ref":"openblas","ref_value":130.2}
# Only bash and awk (mawk is enough) are needed.
set -euo pipefail

usage() {
  echo "usage: $0 BUILD_DIR   (env: BENCH_RUNS>=1, BENCH_THREADS, BENCH_FILTER, BENCH_OUT," >&2
  echo "                       BENCH_TORCH=0|1, BENCH_TORCH_SECONDS, BENCH_TORCH_PYTHON)" >&2
}
if [[ $# -ne 1 ]]; then usage; exit 2; fi
build_dir=$1
if [[ ! -d "$build_dir" ]]; then
  echo "bench.sh: build directory '$build_dir' does not exist (run 'make build' first)" >&2
  exit 2
fi
runs=${BENCH_RUNS:-5}
threads_list=${BENCH_THREADS:-"1 2"}
filter=${BENCH_FILTER:-}
if ! [[ "$runs" =~ ^[1-9][0-9]*$ ]]; then
  echo "bench.sh: BENCH_RUNS must be a positive integer, got '$runs'" >&2
  exit 2
fi
torch_seconds=${BENCH_TORCH_SECONDS:-10}
if ! [[ "$torch_seconds" =~ ^[0-9]+([.][0-9]+)?$ ]]; then
  echo "bench.sh: BENCH_TORCH_SECONDS must be a number of seconds, got '$torch_seconds'" >&2
  exit 2
fi
for t in $threads_list; do
  if ! [[ "$t" =~ ^[1-9][0-9]*$ ]]; then
    echo "bench.sh: BENCH_THREADS must list positive integers, got '$t'" >&2
    exit 2
  fi
done

repo_root=$(cd "$(dirname "$0")/.." && pwd)
programs=()
for p in "$build_dir"/bench_*; do
  [[ -f "$p" && -x "$p" ]] && programs+=("$p")
done
if [[ ${#programs[@]} -eq 0 ]]; then
  echo "bench.sh: no bench_* programs in '$build_dir' (configure with -DATTNFC_BUILD_BENCH=ON)" >&2
  exit 2
fi

load_start=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo 0)
raw=$(mktemp)
trap 'rm -f "$raw" "$raw.json" "$raw.torch"' EXIT
: >"$raw.torch"
failed=0
echo "bench.sh: ${#programs[@]} programs x threads {$threads_list} x $runs runs; load average $load_start" >&2
if awk -v l="$load_start" -v n="$(nproc 2>/dev/null || echo 1)" 'BEGIN { exit !(l > 0.5 * n) }'; then
  echo "bench.sh: warning: the machine is busy (load $load_start); multi-thread numbers will suffer" >&2
  if [[ -z "${OMP_WAIT_POLICY:-}" ]]; then
    echo "bench.sh: (most with OpenMP's default spin-waiting; OMP_WAIT_POLICY=passive is more robust)" >&2
  fi
fi
for t in $threads_list; do
  for ((r = 1; r <= runs; ++r)); do
    for p in "${programs[@]}"; do
      name=$(basename "$p")
      echo "bench.sh: $name --threads $t (run $r/$runs)" >&2
      args=(--threads "$t")
      [[ -n "$filter" ]] && args+=(--filter "$filter")
      if ! out=$(OMP_NUM_THREADS=$t "$p" "${args[@]}"); then
        echo "bench.sh: $name failed at $t threads (run $r)" >&2
        failed=1
      fi
      # Tag each JSON line with its thread count; anything else on stdout is ignored.
      printf '%s\n' "$out" | awk -v t="$t" '/^\{.*\}$/ { print t "\t" $0 }' >>"$raw"
    done
  done
done

# PyTorch side by side (issue 7): the same model shapes as bench_model, on this machine, now.
torch_py=${BENCH_TORCH_PYTHON:-/usr/bin/python3}  # Debian python3-torch lives there, not in a pyenv
torch_status="not run: bench_model was not among the programs"
for p in "${programs[@]}"; do
  [[ $(basename "$p") == bench_model ]] || continue
  if [[ "${BENCH_TORCH:-1}" == 0 ]]; then
    torch_status="skipped: BENCH_TORCH=0"
  elif ! "$torch_py" -c "import torch, numpy" 2>/dev/null; then
    torch_status="skipped: $torch_py cannot import torch and numpy (Debian: python3-torch python3-numpy)"
  else
    echo "bench.sh: PyTorch side by side: scripts/torch_reference.py --bench (threads {$threads_list}, ${torch_seconds} s per setting)" >&2
    torch_args=(--bench --threads $threads_list --seconds "$torch_seconds")
    [[ -n "$filter" ]] && torch_args+=(--filter "$filter")
    if "$torch_py" "$repo_root/scripts/torch_reference.py" "${torch_args[@]}" >"$raw.torch"; then
      torch_status="measured"
    else
      torch_status="failed (some settings did not finish)"
      failed=1
    fi
  fi
done
[[ "$torch_status" == measured ]] || echo "bench.sh: PyTorch comparison $torch_status" >&2

host=$(hostname -s 2>/dev/null || true)
cpu=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)
slug=$(printf '%s' "${host:-}" | tr -c 'A-Za-z0-9_.-' '-' | tr -s '-')
if [[ -z "$slug" || "$slug" == "localhost" ]]; then
  slug=$(printf '%s' "${cpu:-unknown-cpu}" | tr -c 'A-Za-z0-9' '-' | tr -s '-' | sed 's/^-//; s/-$//')
fi
stamp=$(date -u +%Y-%m-%dT%H%M)
commit=$(git -C "$repo_root" rev-parse --short HEAD 2>/dev/null || echo unknown)
# The kernel path the programs ran on (ATTNFC_KERNELS or the CPU's best), as --version says it.
kernels=$("$build_dir/attnfc" --version 2>/dev/null | sed -n 's/^kernels: \([a-z0-9]*\).*/\1/p' || true)
echo "bench.sh: kernel path ${kernels:-unknown} on ${cpu:-unknown cpu}"
out_dir=${BENCH_OUT:-"$repo_root/bench/results"}
mkdir -p "$out_dir"
out_file="$out_dir/$slug-$stamp.json"

load_end=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo 0)
awk -F'\t' -v json="$raw.json" -v host="$host" -v cpu="$cpu" -v date="$stamp" \
    -v commit="$commit" -v runs="$runs" -v nproc="$(nproc 2>/dev/null || echo 0)" -v kernels="$kernels" \
    -v load_start="$load_start" -v load_end="$load_end" -v wait_policy="${OMP_WAIT_POLICY:-}" \
    -v torch_file="$raw.torch" -v torch_status="$torch_status" '
function str(line, key,    m) {
  if (match(line, "\"" key "\":\"[^\"]*\"")) {
    m = substr(line, RSTART, RLENGTH); sub("^\"" key "\":\"", "", m); sub("\"$", "", m); return m
  }
  return ""
}
function num(line, key,    m) {
  if (match(line, "\"" key "\":-?[0-9.]+([eE][-+]?[0-9]+)?")) {
    m = substr(line, RSTART, RLENGTH); sub("^\"" key "\":", "", m); return m
  }
  return ""
}
# Median of the space-separated numbers in s (insertion sort: mawk has no asort).
function median(s,    n, a, i, j, v) {
  n = split(s, a, " ")
  if (n == 0) return ""
  for (i = 2; i <= n; ++i) {
    v = a[i] + 0
    for (j = i - 1; j >= 1 && a[j] + 0 > v; --j) a[j + 1] = a[j]
    a[j + 1] = v
  }
  return (n % 2) ? a[(n + 1) / 2] + 0 : (a[n / 2] + a[n / 2 + 1]) / 2
}
function count(s,    a) { return split(s, a, " ") }
function esc(s) { gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s); return s }
# Ratio that reads "how many times better than the reference": metrics whose unit is a
# time or a size, or one per item ("fwd+bwd ms", "state MiB", "ns/op"), are
# lower-is-better, everything else
# (GFLOP/s, Gelem/s, "MB/s per CPU-second", ...) is higher-is-better.
function lower_is_better(metric) {
  return metric ~ /(^|[ _])(ns|us|ms|s|seconds|KiB|MiB|GiB|KB|MB|GB|bytes)(\/(op|step|call|iter|sample|token|elem|batch))?$/
}
function better(metric, v, r) {
  if (v == "" || r == "" || v + 0 == 0 || r + 0 == 0) return ""
  return lower_is_better(metric) ? r / v : v / r
}
FILENAME == torch_file {
  # torch_reference.py --bench lines: every setting, then "best":true per case and metric.
  if ($0 !~ /^\{.*\}$/) next
  torch_lines[++ntorch] = $0
  if ($0 ~ /"best":true/) {
    c = str($0, "case"); m = str($0, "metric")
    torch_best[c SUBSEP m] = num($0, "value")
    torch_setting[c] = str($0, "setting")
  }
  next
}
{
  t = $1; line = $2
  b = str(line, "bench"); c = str(line, "case"); m = str(line, "metric")
  v = num(line, "value"); rn = str(line, "ref"); rv = num(line, "ref_value")
  if (b == "" || m == "" || v == "") next
  row = b SUBSEP c SUBSEP m
  if (!(row in seen_row)) { seen_row[row] = 1; rows[++nrows] = row }
  if (!(t in seen_t)) { seen_t[t] = 1; ts[++nts] = t }
  k = row SUBSEP t
  vals[k] = vals[k] " " v
  if (rv != "") refs[k] = refs[k] " " rv
  if (rn != "") refname[row] = rn
}
END {
  # Table, with columns as wide as the longest name.
  wb = 5; wc = 4; wm = 6
  for (r = 1; r <= nrows; ++r) {
    split(rows[r], parts, SUBSEP)
    if (length(parts[1]) > wb) wb = length(parts[1])
    if (length(parts[2]) > wc) wc = length(parts[2])
    if (length(parts[3]) > wm) wm = length(parts[3])
  }
  rowfmt = "%-" wb "s  %-" wc "s  %-" wm "s"
  hdr = sprintf(rowfmt, "bench", "case", "metric")
  for (i = 1; i <= nts; ++i) hdr = hdr sprintf(" | %9s %9s %7s", "ours@" ts[i], "ref@" ts[i], "better")
  print hdr
  sep = hdr; gsub(/./, "-", sep); print sep
  prev = ""
  for (r = 1; r <= nrows; ++r) {
    split(rows[r], parts, SUBSEP)
    if (parts[1] != prev && prev != "") print ""
    prev = parts[1]
    lineout = sprintf(rowfmt, parts[1], parts[2], parts[3])
    for (i = 1; i <= nts; ++i) {
      k = rows[r] SUBSEP ts[i]
      mv = (k in vals) ? median(vals[k]) : ""
      mr = (k in refs) ? median(refs[k]) : ""
      ratio = better(parts[3], mv, mr)
      lineout = lineout sprintf(" | %9s %9s %7s", mv == "" ? "-" : sprintf("%.4g", mv),
                                mr == "" ? "-" : sprintf("%.4g", mr),
                                ratio == "" ? "-" : sprintf("%.2fx", ratio))
    }
    print lineout
  }
  print ""
  print "ours/ref: medians over runs. better: how many times better than the reference (throughput: ours/ref; time, memory: ref/ours)."
  # attnfc vs PyTorch: attnfc at its best thread count (median over runs), torch at its best
  # setting; memory is the peak RSS increase of each process over the RSS after building the model.
  nvs = 0
  for (r = 1; r <= nrows; ++r) {
    split(rows[r], parts, SUBSEP)
    if (parts[1] != "model_train" || parts[3] != "samples/s") continue
    c = parts[2]; best_t = ""; best_v = 0
    for (i = 1; i <= nts; ++i) {
      k = rows[r] SUBSEP ts[i]
      if ((k in vals) && median(vals[k]) > best_v) { best_v = median(vals[k]); best_t = ts[i] }
    }
    if (best_t == "") continue
    mk = "model_train" SUBSEP c SUBSEP "peak RSS MB" SUBSEP best_t
    vs_case[++nvs] = c; vs_t[nvs] = best_t; vs_speed[nvs] = best_v
    vs_mem[nvs] = (mk in vals) ? median(vals[mk]) : ""
    # "S-parts" (the batch in two parts, as `attnfc train` runs it by default) is the same
    # model and batch as the "S" that torch trains, computing the batch at once.
    tc = c; sub(/-parts$/, "", tc)
    vs_tspeed[nvs] = ((tc SUBSEP "samples/s") in torch_best) ? torch_best[tc SUBSEP "samples/s"] : ""
    vs_tmem[nvs] = ((tc SUBSEP "peak RSS MB") in torch_best) ? torch_best[tc SUBSEP "peak RSS MB"] : ""
    vs_tset[nvs] = (tc in torch_setting) ? torch_setting[tc] : ""
  }
  if (nvs > 0) {
    print ""
    print "attnfc vs PyTorch (" torch_status ")"
    hdr = sprintf("%-16s | %10s %3s | %10s %-11s | %6s | %10s %10s | %8s", "case", "attnfc s/s", "@t",
                  "torch s/s", "setting", "speed", "attnfc MB", "torch MB", "mem a/t")
    print hdr
    sep = hdr; gsub(/./, "-", sep); print sep
    for (i = 1; i <= nvs; ++i) {
      sr = (vs_tspeed[i] != "" && vs_tspeed[i] + 0 > 0) ? sprintf("%.2fx", vs_speed[i] / vs_tspeed[i]) : "-"
      mr = (vs_mem[i] != "" && vs_tmem[i] != "" && vs_tmem[i] + 0 > 0) ? sprintf("%.3f", vs_mem[i] / vs_tmem[i]) : "-"
      printf "%-16s | %10.4g %3s | %10s %-11s | %6s | %10s %10s | %8s\n", vs_case[i], vs_speed[i], vs_t[i],
             vs_tspeed[i] == "" ? "-" : sprintf("%.4g", vs_tspeed[i]), vs_tset[i] == "" ? "-" : vs_tset[i], sr,
             vs_mem[i] == "" ? "-" : sprintf("%.1f", vs_mem[i]), vs_tmem[i] == "" ? "-" : sprintf("%.1f", vs_tmem[i]), mr
    }
    print "s/s: training samples/s (attnfc: median over runs at its best thread count @t; torch: its best of"
    print "threads x {pthread, OpenMP} OpenBLAS, median step). speed: attnfc/torch. MB: peak RSS increase while"
    print "training over the RSS after building the model (10^6 bytes). mem a/t: attnfc/torch (lower is better)."
  }
  # JSON.
  printf "{\n  \"host\": \"%s\",\n  \"cpu\": \"%s\",\n  \"cores\": %d,\n  \"date\": \"%s\",\n  \"commit\": \"%s\",\n  \"kernels\": \"%s\",\n  \"runs\": %d,\n", esc(host), esc(cpu), nproc, date, commit, esc(kernels), runs > json
  printf "  \"load_average_start\": %.2f,\n  \"load_average_end\": %.2f,\n  \"omp_wait_policy\": \"%s\",\n  \"results\": [", load_start, load_end, esc(wait_policy) > json
  first = 1
  for (r = 1; r <= nrows; ++r) {
    split(rows[r], parts, SUBSEP)
    for (i = 1; i <= nts; ++i) {
      k = rows[r] SUBSEP ts[i]
      if (!(k in vals)) continue
      printf "%s\n    {\"bench\":\"%s\",\"case\":\"%s\",\"metric\":\"%s\",\"threads\":%d,\"value\":%.6g,\"samples\":%d", first ? "" : ",", esc(parts[1]), esc(parts[2]), esc(parts[3]), ts[i], median(vals[k]), count(vals[k]) > json
      if (k in refs) printf ",\"ref\":\"%s\",\"ref_value\":%.6g", esc(refname[rows[r]]), median(refs[k]) > json
      printf "}" > json
      first = 0
    }
  }
  printf "\n  ],\n  \"torch\": {\"status\": \"%s\", \"runs\": [", esc(torch_status) > json
  for (i = 1; i <= ntorch; ++i) printf "%s\n    %s", (i > 1 ? "," : ""), torch_lines[i] > json
  printf "\n  ]},\n  \"versus_torch\": [" > json
  for (i = 1; i <= nvs; ++i) {
    printf "%s\n    {\"case\":\"%s\",\"attnfc_threads\":%d,\"attnfc_samples_per_s\":%.6g", (i > 1 ? "," : ""), esc(vs_case[i]), vs_t[i], vs_speed[i] > json
    if (vs_mem[i] != "") printf ",\"attnfc_peak_rss_mb\":%.6g", vs_mem[i] > json
    if (vs_tspeed[i] != "") printf ",\"torch_setting\":\"%s\",\"torch_samples_per_s\":%.6g,\"speed_ratio\":%.4g", esc(vs_tset[i]), vs_tspeed[i], (vs_tspeed[i] + 0 > 0 ? vs_speed[i] / vs_tspeed[i] : 0) > json
    if (vs_tmem[i] != "") printf ",\"torch_peak_rss_mb\":%.6g", vs_tmem[i] > json
    if (vs_mem[i] != "" && vs_tmem[i] + 0 > 0) printf ",\"memory_ratio\":%.4g", vs_mem[i] / vs_tmem[i] > json
    printf "}" > json
  }
  printf "\n  ]\n}\n" > json
  close(json)
}' "$raw" "$raw.torch"

mv "$raw.json" "$out_file"
echo "bench.sh: wrote $out_file" >&2
exit "$failed"
