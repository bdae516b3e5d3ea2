#!/usr/bin/env bash
# Installs what attnfc needs to build and test, from Debian 12 packages only.
# Does nothing when everything is present; says what to run when it cannot install.
set -euo pipefail

# jq and parallel drive scripts/sweep (its test runs in make test). Open MPI: data-parallel
# training under mpirun (docs/SCALING.md); a build without it still works, one process a run.
packages=(g++ make cmake clang-format libcli11-dev nlohmann-json3-dev libspdlog-dev doctest-dev zlib1g-dev libhowardhinnant-date-dev jq parallel libopenmpi-dev openmpi-bin)
# Optional groups, by name: `scripts/setup-deps.sh fuzz` also installs clang and its
# libFuzzer/sanitizer runtimes (make fuzz); `slurm` installs Slurm (slurmctld, slurmd,
# sbatch) and munge, which the `slurm` ctest entry starts on localhost to test
# scripts/sweep --slurm (tests/slurm/run_slurm_test.sh); `browser` installs Debian's
# chromium, in which the `browser` ctest entry renders `attnfc plot`'s page headless
# (tests/browser/plot_in_chromium.sh); `bench` installs what `make bench` measures against:
# Debian's OpenBLAS (pthread and OpenMP builds; bench_gemm loads it with dlopen) and PyTorch
# with NumPy (scripts/torch_reference.py --bench, run by /usr/bin/python3).
for group in "$@"; do
  case "$group" in
    fuzz) packages+=(clang libclang-rt-14-dev) ;;
    slurm) packages+=(slurm-wlm munge) ;;
    browser) packages+=(chromium) ;;
    bench) packages+=(libopenblas0-pthread libopenblas0-openmp python3-torch python3-numpy) ;;
    *) echo "setup-deps: unknown group '$group'; expected: fuzz, slurm, browser or bench" >&2; exit 2 ;;
  esac
done
missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "setup-deps: missing Debian packages: ${missing[*]}" >&2
if ! command -v apt-get >/dev/null 2>&1; then
  echo "setup-deps: apt-get is not available here. Install the equivalents of: ${missing[*]}" >&2
  echo "            (CLI11, nlohmann/json, spdlog, doctest, zlib, Howard Hinnant's date, CMake >= 3.25, g++ with OpenMP)" >&2
  exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO=sudo
  else
    echo "setup-deps: not root. Run this once, then 'make' again:" >&2
    echo "    sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
else
  SUDO=
fi
echo "setup-deps: installing ${missing[*]}" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
