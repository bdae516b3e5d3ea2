#!/usr/bin/env bash
# Fails when a tracked C++ file differs from what clang-format (.clang-format) makes of it.
# Fix with 'make format'. Debian 12's clang-format 14 is the reference version.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v clang-format >/dev/null 2>&1; then
  echo "check-format: clang-format is not installed (scripts/setup-deps.sh installs it)" >&2
  exit 1
fi
files=$(git ls-files '*.cpp' '*.hpp' 2>/dev/null || find src include tests bench fuzz -name '*.[ch]pp')
if ! out=$(clang-format --dry-run --Werror $files 2>&1); then
  echo "$out" | grep -E "^[^ ].*(error|warning):" | cut -d: -f1 | sort | uniq -c | sed 's/^/check-format: /'
  echo "check-format: run 'make format'" >&2
  exit 1
fi
echo "check-format: ok ($(echo "$files" | wc -l) files)"
