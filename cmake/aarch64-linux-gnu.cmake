# CMake toolchain for an ARM64 (aarch64) build on a Debian x86-64 host, tested under qemu:
#   scripts/setup-arm64.sh
#   cmake -S . -B build-arm64 --toolchain cmake/aarch64-linux-gnu.cmake \
#         -DATTNFC_NATIVE=OFF -DATTNFC_BUILD_BENCH=OFF
#   cmake --build build-arm64 && (cd build-arm64 && ctest)
# (make test-arm64 does all of this.) ctest runs every test executable through
# CMAKE_CROSSCOMPILING_EMULATOR, so no binfmt_misc registration is needed for it.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(ATTNFC_CROSS_TRIPLE aarch64-linux-gnu)
set(CMAKE_C_COMPILER ${ATTNFC_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${ATTNFC_CROSS_TRIPLE}-g++)
# Debian multiarch: libraries installed as <pkg>:arm64 (libspdlog, libfmt) live in
# /usr/lib/aarch64-linux-gnu, their headers and the architecture-independent CMake configs
# (CLI11, nlohmann_json, doctest) under /usr. CMake searches <prefix>/lib/<arch> for this.
set(CMAKE_LIBRARY_ARCHITECTURE ${ATTNFC_CROSS_TRIPLE})

# Where target files are looked for: the cross toolchain's own root (libc, libstdc++,
# libgomp from the *-arm64-cross packages), the arm64 multiarch library directory, and "/"
# so that /usr/lib/aarch64-linux-gnu/cmake/{spdlog,fmt} and /usr/share/cmake are found
# too. Host x86-64 libraries are never picked: they sit in /usr/lib/x86_64-linux-gnu,
# which a search for the aarch64-linux-gnu library architecture does not visit.
set(CMAKE_FIND_ROOT_PATH /usr/${ATTNFC_CROSS_TRIPLE} /usr/lib/${ATTNFC_CROSS_TRIPLE} /)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)  # build tools run on the host
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# Run target programs (ctest, try_run) under qemu user-mode emulation, on the arm64
# multiarch runtime: the dynamic loader /lib/ld-linux-aarch64.so.1, libc, libstdc++ and
# libgomp of the libc6/libstdc++6/libgomp1:arm64 packages (libspdlog:arm64 depends on the
# first two; scripts/setup-arm64.sh installs them). Not '-L /usr/aarch64-linux-gnu': qemu
# would then take the loader from the cross toolchain's libc6-arm64-cross (2.36-8cross1),
# while that loader, reading /etc/ld.so.cache, loads libc.so.6 from libc6:arm64 (a newer
# Debian revision, 2.36-9+deb12u14 here). The two share private data layouts, and with
# that mismatch pthread_create loops forever (glibc's stack-cache list), so every OpenMP
# program hangs. '-L /' (no prefix) also matches what binfmt_misc does for programs that
# a test starts itself (tests/cli). ATTNFC_QEMU_LD_PREFIX overrides the prefix.
find_program(ATTNFC_QEMU_AARCH64 NAMES qemu-aarch64-static qemu-aarch64)
if(NOT ATTNFC_QEMU_AARCH64)
  message(FATAL_ERROR "qemu-aarch64(-static) was not found: run scripts/setup-arm64.sh "
    "(installs qemu-user-static with apt-get).")
endif()
set(ATTNFC_QEMU_LD_PREFIX "/" CACHE PATH "qemu -L: where the arm64 loader and libraries are")
set(CMAKE_CROSSCOMPILING_EMULATOR ${ATTNFC_QEMU_AARCH64} -L ${ATTNFC_QEMU_LD_PREFIX})
