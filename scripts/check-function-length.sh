#!/usr/bin/env bash
# Fails when a function in src/ or include/ is longer than the limit (default 80 lines,
# from the line holding its opening brace to the one holding its closing brace), or a
# file is longer than 400 lines. CONTRIBUTING.md: short files and functions.
# A function is a brace block at namespace or class level whose header (the text since
# the previous ; { or }) holds a parameter list and is not a namespace, class, struct,
# enum or union; lambdas and blocks inside it count as its lines. String and character
# literals and comments are ignored when matching braces.
set -euo pipefail
cd "$(dirname "$0")/.."
max_fn=${1:-80}
max_file=${2:-400}
status=0
files=$(find src include -name '*.cpp' -o -name '*.hpp' | sort)
for f in $files; do
  lines=$(wc -l <"$f")
  if [ "$lines" -gt "$max_file" ]; then
    echo "length: $f has $lines lines (limit $max_file)"
    status=1
  fi
done
# shellcheck disable=SC2086
awk -v max="$max_fn" '
function strip(s,   out, i, c, n, q) {
  # Drops string/char literals and // comments; keeps the braces that matter.
  out = ""; n = length(s); q = ""
  for (i = 1; i <= n; i++) {
    c = substr(s, i, 1)
    if (in_block) { if (c == "*" && substr(s, i + 1, 1) == "/") { in_block = 0; i++ } continue }
    if (q != "") { if (c == "\\") { i++; continue } if (c == q) q = ""; continue }
    if (c == "\"" || c == "\x27") { q = c; continue }
    if (c == "/" && substr(s, i + 1, 1) == "/") break
    if (c == "/" && substr(s, i + 1, 1) == "*") { in_block = 1; i++; continue }
    out = out c
  }
  return out
}
FNR == 1 { depth = 0; fn_depth = -1; header = ""; in_block = 0 }
{
  line = strip($0)
  if (line ~ /^[ \t]*#/) next  # preprocessor
  n = length(line)
  for (i = 1; i <= n; i++) {
    c = substr(line, i, 1)
    if (c == "{") {
      if (fn_depth < 0 && header ~ /\)/ && header !~ /(^|[^A-Za-z_])(namespace|class|struct|enum|union)[ \t]/ && header !~ /=[ \t]*$/) {
        fn_depth = depth; fn_start = FNR; fn_name = header
      }
      depth++; header = ""
    } else if (c == "}") {
      depth--; header = ""
      if (fn_depth >= 0 && depth == fn_depth) {
        len = FNR - fn_start + 1
        if (len > max) {
          gsub(/^[ \t]+|[ \t]+$/, "", fn_name)
          printf "length: %s:%d: a function of %d lines (limit %d): %s\n", FILENAME, fn_start, len, max, substr(fn_name, 1, 90)
          bad = 1
        }
        fn_depth = -1
      }
    } else if (c == ";") {
      header = ""
    } else {
      header = header c
    }
  }
  header = header " "
}
END { exit bad }
' $files || status=1
[ $status -eq 0 ] && echo "length: ok (functions <= $max_fn lines, files <= $max_file lines)"
exit $status
