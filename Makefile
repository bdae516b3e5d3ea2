# attnfc: everyday entry points. Everything goes through CMake in $(BUILD).
BUILD    ?= build
SANBUILD ?= build-sanitize
PORTBUILD ?= build-portable
JOBS     ?= $(shell nproc 2>/dev/null || echo 2)
MAKEFLAGS += --no-print-directory
CMAKE_FLAGS ?=

.PHONY: all deps build test test-portable demo bench sanitize format clean fuzz test-torch

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
	@cmake -S . -B $(PORTBUILD) -DCMAKE_BUILD_TYPE=Release -DATTNFC_NATIVE=OFF -DATTNFC_BUILD_BENCH=OFF >/dev/null
	@cmake --build $(PORTBUILD) -j $(JOBS)
	@cd $(PORTBUILD) && ctest --output-on-failure -j $(JOBS)

demo: build
	@scripts/demo.sh $(BUILD)

bench: build
	@scripts/bench.sh $(BUILD)

sanitize: deps
	@cmake -S . -B $(SANBUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTNFC_SANITIZE=address,undefined -DATTNFC_BUILD_BENCH=OFF >/dev/null
	@cmake --build $(SANBUILD) -j $(JOBS)
	@cd $(SANBUILD) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j $(JOBS)

fuzz:
	@scripts/fuzz.sh

test-torch: build
	@scripts/test-torch.sh $(BUILD)

format:
	@git ls-files '*.cpp' '*.hpp' | xargs clang-format -i

clean:
	rm -rf $(BUILD) $(SANBUILD) build-*
