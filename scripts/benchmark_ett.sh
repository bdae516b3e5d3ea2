#!/usr/bin/env bash
# scripts/benchmark_ett.sh: the ETTh1 part of the accuracy suite (scripts/benchmark.sh
# --suites etth1), kept for the commands in docs/RESULTS.md. Options as benchmark.sh's;
# the output folder defaults to bench/ett.
set -euo pipefail
here=$(dirname "$(readlink -f "$0")")
exec "$here/benchmark.sh" --suites etth1 --out bench/ett "$@"
