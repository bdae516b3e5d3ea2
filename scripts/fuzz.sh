#!/usr/bin/env bash
# make fuzz: libFuzzer on the CSV reader and series loader (fuzz/fuzz_csv.cpp),
# built with Debian's clang and -fsanitize=fuzzer,address,undefined.
#
#   scripts/fuzz.sh                 # 5 minutes
#   FUZZ_SECONDS=60 scripts/fuzz.sh
#
# The seed corpus is written to build-fuzz/corpus (heads of the bundled
# datasets plus tricky hand-made files); findings go to build-fuzz/findings.
# Exit status is libFuzzer's: 0 when nothing was found.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-300}
out=${FUZZ_BUILD:-build-fuzz}

cxx=""
for c in clang++ clang++-16 clang++-15 clang++-14; do
  if command -v "$c" >/dev/null 2>&1; then cxx=$c; break; fi
done
if [[ -z "$cxx" ]]; then
  echo "fuzz.sh: clang++ not found; install it with 'sudo apt-get install clang' (Debian's" \
       "clang ships libFuzzer)" >&2
  exit 2
fi

mkdir -p "$out/corpus" "$out/findings"
echo "fuzz.sh: building $out/fuzz_csv with $cxx"
"$cxx" -std=c++20 -g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined \
  -fno-sanitize-recover=undefined -Iinclude \
  fuzz/fuzz_csv.cpp src/data/*.cpp src/base/error.cpp -o "$out/fuzz_csv"

# Seeds: the first byte of each file selects delimiter and options (see fuzz_csv.cpp).
for f in datasets/*.csv; do
  { printf '\x00'; head -c 1500 "$f"; } > "$out/corpus/seed-$(basename "$f")"
done
printf '\x80date,v\n2020-01-01,1\n2020-01-02,NA\n2020-01-04,"3"\n' > "$out/corpus/seed-na"
printf '\x05"a;b";c\r\n"2020-01-01";"x""y"\r\n' > "$out/corpus/seed-quotes"
printf '\x00year,month,day,hour,v\n2010,1,1,0,1\n2010,1,1,1,2\n' > "$out/corpus/seed-composite"
printf '\x20Month,v\n1949-01,1\n1949-02,2\n1949-04,3' > "$out/corpus/seed-months"

echo "fuzz.sh: running for ${seconds}s (findings, if any, in $out/findings)"
"$out/fuzz_csv" "$out/corpus" -dict=fuzz/csv.dict -max_total_time="$seconds" -max_len=4096 \
  -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$out/findings/" -print_final_stats=1
