#!/usr/bin/env bash
# Installs what the ARM64 (aarch64) cross build and its qemu test run need (make test-arm64),
# from Debian 12 packages only. Does nothing when everything is present; says what to run
# when it cannot install.
#
#   host tools:   g++-aarch64-linux-gnu (cross g++, its libstdc++/libgomp in /usr/aarch64-linux-gnu)
#                 qemu-user-static (qemu-aarch64-static; qemu-user's qemu-aarch64 also does)
#                 cmake make, clang-format (the 'format' ctest)
#   header-only:  libcli11-dev nlohmann-json3-dev doctest-dev are Architecture: all and
#                 Multi-Arch: foreign; their CMake configs (/usr/share/cmake, /usr/lib/cmake)
#                 carry no 32/64-bit check, so the host packages serve the cross build.
#                 libhowardhinnant-date-dev is Architecture: amd64 (it ships a tz library
#                 too), but attnfc uses only its headers (/usr/include/date, the same for
#                 every architecture), so the host package serves the cross build as well.
#   arm64 libs:   libspdlog-dev:arm64 (compiled libspdlog.so) and libfmt-dev:arm64 (which
#                 spdlog is built against), after 'dpkg --add-architecture arm64'. They are
#                 Multi-Arch: same, so they sit next to the amd64 ones (versions must match).
#                 They pull in libc6:arm64 and libstdc++6:arm64, so the test programs run on
#                 that multiarch arm64 runtime (see cmake/aarch64-linux-gnu.cmake for why not
#                 on /usr/aarch64-linux-gnu), which needs libgomp1:arm64 too; zlib1g-dev:arm64
#                 (libz, for gzip-compressed CSVs) is Multi-Arch: same as well.
set -euo pipefail

host_packages=(g++-aarch64-linux-gnu cmake make clang-format libcli11-dev nlohmann-json3-dev doctest-dev
  libhowardhinnant-date-dev)
arm64_packages=(libspdlog-dev:arm64 libfmt-dev:arm64 zlib1g-dev:arm64 libgomp1:arm64)

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

missing=()
for p in "${host_packages[@]}" "${arm64_packages[@]}"; do
  installed "$p" || missing+=("$p")
done
# Either qemu package provides an aarch64 user-mode emulator; prefer the static one.
if ! installed qemu-user-static && ! installed qemu-user; then
  missing+=(qemu-user-static)
fi
need_arch=0
if ! dpkg --print-foreign-architectures 2>/dev/null | grep -qx arm64; then
  need_arch=1
fi
[ ${#missing[@]} -eq 0 ] && [ $need_arch -eq 0 ] && exit 0

echo "setup-arm64: missing Debian packages: ${missing[*]}" >&2
if ! command -v apt-get >/dev/null 2>&1 || ! command -v dpkg >/dev/null 2>&1; then
  echo "setup-arm64: apt-get/dpkg are not available here. Install the equivalents of:" >&2
  echo "             an aarch64-linux-gnu g++ cross compiler, qemu-aarch64 (user mode)," >&2
  echo "             and aarch64 builds of spdlog and fmt, plus CLI11, nlohmann/json, doctest" >&2
  exit 1
fi
arch_cmd=""
[ $need_arch -eq 1 ] && arch_cmd="dpkg --add-architecture arm64 && "
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO=sudo
  else
    echo "setup-arm64: not root. Run this once, then 'make test-arm64' again:" >&2
    echo "    sudo sh -c '${arch_cmd}apt-get update && apt-get install -y ${missing[*]}'" >&2
    exit 1
  fi
else
  SUDO=
fi
if [ $need_arch -eq 1 ]; then
  echo "setup-arm64: adding the arm64 architecture to dpkg" >&2
  $SUDO dpkg --add-architecture arm64
fi
echo "setup-arm64: installing ${missing[*]}" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
