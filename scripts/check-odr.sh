#!/usr/bin/env bash
# Fails when two of our files define a type of the same name in the same named namespace.
# The One Definition Rule lets the linker keep one of the two inline functions such types
# bring (a vector<T>'s growth, a move constructor), so the other file silently runs code
# built for a different layout: two attnfc::cli::ForecastWindow structs once made
# 'attnfc plot' write past a buffer under ASan and nowhere else. GCC reports this only with
# -flto -Wodr, which our builds do not use; this scan is the cheap substitute. It reads
# namespace-scope definitions (clang-format does not indent namespaces, so they start in
# column 0) and ignores those inside an anonymous namespace, which are private to a file, and
# those in a kernel namespace named by the ATTNFC_ISA macro, which each ISA build defines anew.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck disable=SC2016
scan='
  FNR == 1 { depth = 0 }
  /^namespace [A-Za-z_:]+ \{/ { stack[++depth] = $2; next }
  /^namespace \{/ { stack[++depth] = "(anonymous)"; next }
  /^\}  \/\/ namespace/ { if (depth > 0) depth--; next }
  /^(struct|class|enum class|enum|union) [A-Za-z_][A-Za-z0-9_]*( final)?( : [^;]*)? *\{/ ||
  /^using [A-Za-z_][A-Za-z0-9_]* = / {
    name = ($1 == "enum" && $2 == "class") ? $3 : $2
    sub(/[^A-Za-z0-9_].*/, "", name)
    ns = ""
    for (i = 1; i <= depth; i++) {
      if (stack[i] == "(anonymous)" || stack[i] ~ /ATTNFC_ISA/) next
      ns = ns stack[i] "::"
    }
    print ns name "\t" FILENAME ":" FNR
  }'
hits=$(find src include -name '*.hpp' -o -name '*.cpp' | sort | xargs awk "$scan" | sort)
# A name defined twice in one file is a preprocessor branch; count the files per name.
dups=$(sed -E 's/:[0-9]+$//' <<<"$hits" | sort -u | cut -f1 | uniq -d)
if [ -n "$dups" ]; then
  while IFS= read -r name; do
    echo "odr: $name is defined more than once:"
    awk -F'\t' -v n="$name" '$1 == n { print "  " $2 }' <<<"$hits"
  done <<<"$dups"
  echo "odr: rename one of them or move it into an anonymous namespace"
  exit 1
fi
echo "odr: $(wc -l <<<"$hits") namespace-scope types, each name defined once per namespace"
