# attnfc: everyday entry points. Everything goes through CMake in $(BUILD).
BUILD    ?= build
SANBUILD ?= build-sanitize
PORTBUILD ?= build-portable
JOBS     ?= $(shell nproc 2>/dev/null || echo 2)
MAKEFLAGS += --no-print-directory
CMAKE_FLAGS ?=

.PHONY: all deps build test test-portable demo bench sanitize format clean fuzz test-torch test-arm64

# make test-arm64: cross-build for aarch64 (cmake/aarch64-linux-gnu.cmake) and run the suites
# under qemu user-mode emulation (ctest goes through CMAKE_CROSSCOMPILING_EMULATOR).
ARM64BUILD  ?= build-arm64
# Every suite above base on both aarch64 kernel paths, neon and portable; isa-symbols reads
# the aarch64 objects with the host's nm.
ARM64_PATHS ?= neon portable
ARM64_TESTS ?= base data isa-symbols $(foreach l,kernels autograd nn model train,$(foreach p,$(ARM64_PATHS),$(l)@$(p)))
# libgomp's default spin-waiting is emulated instruction by instruction under qemu; on a
# shared 2-core machine passive waiting made kernels@portable 1.5x faster (114 s -> 76 s).
ARM64_OMP_WAIT_POLICY ?= passive

all: build

deps:
	@scripts/setup-deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The whole suite on a build without -march=native (the kernels still dispatch at run time).
test-portable: deps
	@cmake -S . -B $(PORTBUILD) -DCMAKE_BUILD_TYPE=Release -DATTNFC_NATIVE=OFF -DATTNFC_BUILD_BENCH=OFF -DATTNFC_TEST_ISAS=default >/dev/null
	@cmake --build $(PORTBUILD) -j $(JOBS)
	@cd $(PORTBUILD) && ctest --output-on-failure -j $(JOBS)

demo: build
	@scripts/demo.sh $(BUILD)

# Installs the references it measures against first (OpenBLAS, PyTorch: setup-deps.sh bench).
bench: build
	@scripts/setup-deps.sh bench
	@scripts/bench.sh $(BUILD)

# Built for the baseline x86-64 (ATTNFC_NATIVE=OFF, kernels dispatched at run time), so this
# one build also checks what test-portable checks; CI runs it instead of test-portable.
# -O1 -g1: ASan's own advice for usable speed; -g1 still gives file:line in every report,
# and the whole step took 679 s instead of 1067 s at -O2 -g (fresh clones, AMD EPYC, 2 cores).
sanitize: deps
	@cmake -S . -B $(SANBUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" -DATTNFC_SANITIZE=address,undefined -DATTNFC_NATIVE=OFF -DATTNFC_BUILD_BENCH=OFF -DATTNFC_TEST_ISAS=default >/dev/null
	@cmake --build $(SANBUILD) -j $(JOBS)
	@cd $(SANBUILD) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j $(JOBS)

# cli@neon and cli@portable run the attnfc binary through popen, so the kernel itself must
# start an aarch64 program: that needs qemu registered with binfmt_misc. They run when that
# works, else they are left out with the reason.
test-arm64:
	@scripts/setup-arm64.sh
	@if [ -f $(ARM64BUILD)/CMakeCache.txt ] && ! grep -q '^CMAKE_TOOLCHAIN_FILE.*aarch64-linux-gnu.cmake' $(ARM64BUILD)/CMakeCache.txt; then \
	  echo "test-arm64: $(ARM64BUILD) was configured without cmake/aarch64-linux-gnu.cmake; run 'rm -rf $(ARM64BUILD)' and try again" >&2; exit 1; fi
	@cmake -S . -B $(ARM64BUILD) $(if $(wildcard $(ARM64BUILD)/CMakeCache.txt),,--toolchain cmake/aarch64-linux-gnu.cmake) \
	  -DCMAKE_BUILD_TYPE=Release -DATTNFC_NATIVE=OFF -DATTNFC_BUILD_BENCH=OFF -DATTNFC_MPI=OFF $(CMAKE_FLAGS) >/dev/null
	@start=$$(date +%s); cmake --build $(ARM64BUILD) -j $(JOBS) && \
	  echo "test-arm64: build took $$(( $$(date +%s) - start )) s"
	@tests="$(ARM64_TESTS)"; \
	if $(ARM64BUILD)/attnfc --version >/dev/null 2>&1; then tests="$$tests $(foreach p,$(ARM64_PATHS),cli@$(p))"; \
	else echo "test-arm64: leaving out $(foreach p,$(ARM64_PATHS),cli@$(p)): they start $(ARM64BUILD)/attnfc (aarch64) with popen," \
	  "and this kernel cannot run aarch64 programs (no qemu-aarch64 in binfmt_misc; a container" \
	  "may not have it). To include them, as root: mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc;" \
	  "cat /usr/lib/binfmt.d/qemu-aarch64.conf > /proc/sys/fs/binfmt_misc/register" >&2; fi; \
	regex="^($$(echo $$tests | sed 's/ /|/g'))\$$"; \
	echo "test-arm64: running under qemu: $$tests"; \
	cd $(ARM64BUILD) && OMP_WAIT_POLICY=$(ARM64_OMP_WAIT_POLICY) ctest --output-on-failure -R "$$regex"

fuzz:
	@scripts/fuzz.sh

test-torch: build
	@scripts/test-torch.sh $(BUILD)

format:
	@git ls-files '*.cpp' '*.hpp' | xargs clang-format -i

clean:
	rm -rf $(BUILD) $(SANBUILD) build-*
