#!/usr/bin/env bash
# make fuzz: libFuzzer on the three readers of untrusted files, each built with Debian's
# clang and -fsanitize=fuzzer,address,undefined:
#   fuzz_csv         the CSV reader and series loader            (fuzz/fuzz_csv.cpp)
#   fuzz_checkpoint  safetensors + the checkpoint checks          (fuzz/fuzz_checkpoint.cpp)
#   fuzz_config      parse_json_bounded + the run config reader   (fuzz/fuzz_config.cpp)
#
#   scripts/fuzz.sh                                  # 5 minutes per target
#   FUZZ_SECONDS=60 scripts/fuzz.sh                  # CI
#   FUZZ_TARGETS="checkpoint config" scripts/fuzz.sh # some of them
#
# Seed corpora are written to build-fuzz/corpus-<target>: heads of the bundled datasets
# and tricky hand-made CSVs; configs/*.json; micro checkpoints in attnfc's format
# (fuzz/make_checkpoint_seeds.cpp) plus any run's model.safetensors under 64 KB.
# Findings go to build-fuzz/findings-<target>. Exit status: 0 when nothing was found.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-300}
out=${FUZZ_BUILD:-build-fuzz}
targets=${FUZZ_TARGETS:-csv checkpoint config}

scripts/setup-deps.sh fuzz  # clang and libFuzzer, from Debian's packages
cxx=""
for c in clang++ clang++-16 clang++-15 clang++-14; do
  if command -v "$c" >/dev/null 2>&1; then cxx=$c; break; fi
done
if [[ -z "$cxx" ]]; then
  echo "fuzz.sh: clang++ not found; install it with 'sudo apt-get install clang' (Debian's" \
       "clang ships libFuzzer)" >&2
  exit 2
fi

flags=(-std=c++20 -g -O1 -fno-omit-frame-pointer -fno-sanitize-recover=undefined -Iinclude
       -DATTNFC_VERSION='"fuzz"')
base_srcs=(src/base/error.cpp src/base/json_parse.cpp src/base/json_config.cpp
           src/base/input_file.cpp src/base/gzip_input.cpp src/base/safetensors.cpp
           src/base/atomic_file.cpp)
libs=(-lz)  # zlib (gzip_input.cpp), from zlib1g-dev
model_srcs=(src/model/model_config.cpp src/model/checkpoint_read.cpp)

# Every source is compiled once, in parallel, with the fuzzer's coverage instrumentation
# (fuzzer-no-link); each target links its own objects.
jobs=$(nproc 2>/dev/null || echo 2)
compile() {  # compile <sources...>: objects in $out/obj
  mkdir -p "$out/obj"
  printf '%s\n' "$@" | sort -u | xargs -P "$jobs" -I{} sh -c \
    'o="$0/obj/$(echo "$1" | tr / _).o"; [ -f "$o" ] ||
     "$2" $3 -fsanitize=fuzzer-no-link,address,undefined -c "$1" -o "$o"' \
    "$out" {} "$cxx" "${flags[*]}"
}
objects() {  # objects <sources...>: their object paths
  for f in "$@"; do printf '%s ' "$out/obj/$(echo "$f" | tr / _).o"; done
}
build() {  # build <target> <sources...>
  local name=$1; shift
  echo "fuzz.sh: building $out/fuzz_$name with $cxx"
  compile "$@"
  # shellcheck disable=SC2046
  "$cxx" -fsanitize=fuzzer,address,undefined $(objects "$@") "${libs[@]}" -o "$out/fuzz_$name"
}

seed_csv() {
  local dir=$1
  # The first byte of each file selects delimiter and options (see fuzz_csv.cpp).
  for f in datasets/*.csv; do
    { printf '\x00'; head -c 1500 "$f"; } > "$dir/seed-$(basename "$f")"
  done
  printf '\x80date,v\n2020-01-01,1\n2020-01-02,NA\n2020-01-04,"3"\n' > "$dir/seed-na"
  printf '\x05"a;b";c\r\n"2020-01-01";"x""y"\r\n' > "$dir/seed-quotes"
  printf '\x00year,month,day,hour,v\n2010,1,1,0,1\n2010,1,1,1,2\n' > "$dir/seed-composite"
  printf '\x20Month,v\n1949-01,1\n1949-02,2\n1949-04,3' > "$dir/seed-months"
}

seed_checkpoint() {
  local dir=$1
  "$cxx" -std=c++20 -O1 -Iinclude -DATTNFC_VERSION='"fuzz"' fuzz/make_checkpoint_seeds.cpp \
    "${base_srcs[@]}" "${model_srcs[@]}" "${libs[@]}" -o "$out/make_checkpoint_seeds"
  "$out/make_checkpoint_seeds" "$dir"
  # A fresh clone has no runs/ folder: nothing to add then.
  [ -d runs ] || return 0
  find runs -name 'model.safetensors' -size -64k | head -5 | while read -r f; do
    cp "$f" "$dir/seed-run-$(echo "$f" | tr '/' '_')"
  done
}

seed_config() {
  local dir=$1
  for f in configs/*.json; do cp "$f" "$dir/seed-$(basename "$f")"; done
  printf '{"model": {"d_model": 64, "d_model": 65}}' > "$dir/seed-duplicate"
  printf '{"train": {"lr": 1e999}}' > "$dir/seed-overflow"
  printf '{"data": {"path": "x.csv", "delimiter": "a\\nb"}}' > "$dir/seed-newline"
}

mkdir -p "$out"
rm -rf "$out/obj"  # objects are shared between the targets of this run only
declare -A extra
for t in $targets; do
  mkdir -p "$out/corpus-$t" "$out/findings-$t"
  case $t in
    csv)
      build csv fuzz/fuzz_csv.cpp src/data/*.cpp "${base_srcs[@]}"
      seed_csv "$out/corpus-$t"; extra[$t]="-dict=fuzz/csv.dict -max_len=4096" ;;
    checkpoint)
      build checkpoint fuzz/fuzz_checkpoint.cpp "${base_srcs[@]}" "${model_srcs[@]}"
      seed_checkpoint "$out/corpus-$t"; extra[$t]="-max_len=16384" ;;
    config)
      build config fuzz/fuzz_config.cpp src/train/run_config*.cpp src/train/split_config.cpp \
        src/train/auto_sizes.cpp \
        src/data/*.cpp \
        "${base_srcs[@]}" "${model_srcs[@]}"
      seed_config "$out/corpus-$t"; extra[$t]="-dict=fuzz/json.dict -max_len=8192" ;;
    *) echo "fuzz.sh: unknown target '$t' (expected csv, checkpoint or config)" >&2; exit 2 ;;
  esac
done

# The targets run at the same time (libFuzzer is single-threaded; the cores are shared),
# each into its own log, printed when all are done.
declare -A pid
for t in $targets; do
  echo "fuzz.sh: running fuzz_$t for ${seconds}s (findings, if any, in $out/findings-$t)"
  # shellcheck disable=SC2086
  "$out/fuzz_$t" "$out/corpus-$t" ${extra[$t]} -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=2048 -artifact_prefix="$out/findings-$t/" -print_final_stats=1 \
    >"$out/log-$t" 2>&1 &
  pid[$t]=$!
done
status=0
for t in $targets; do
  if wait "${pid[$t]}"; then result=clean; else result=FAILED; status=1; fi
  echo "fuzz.sh: fuzz_$t $result; the last lines of $out/log-$t:"
  tail -n 12 "$out/log-$t"
done
exit $status
