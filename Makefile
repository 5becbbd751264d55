# tessel: the two commands of the README, and their helpers.
#   make demo   compile and run the bundled demo model
#   make test   build and run every test (unit, end-to-end, error cases)
#   make format / make format-check   apply / check .clang-format (clang-format-14)
# Each installs missing system dependencies first (scripts/install-deps.sh).

BUILD ?= build
BUILD_ASAN ?= build-asan
BUILD_FUZZ ?= build-fuzz
BUILD_TSAN ?= build-tsan
FUZZ_SECONDS ?= 60
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
MAKEFLAGS += --no-print-directory

.PHONY: all deps build demo test test-avx2 test-sanitize test-tsan zoo fuzz clean format format-check

all: build

deps:
	@bash scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j$(JOBS)

demo: build
	@echo "== the demo model: a MobileNetV2-style network with seeded weights =="
	@$(BUILD)/tessel show --summary $(BUILD)/demo/mobilenet_demo.onnx
	@echo "== tessel compile =="
	@$(BUILD)/tessel compile $(BUILD)/demo/mobilenet_demo.onnx -o $(BUILD)/demo/mobilenet_demo.tsl
	@echo "== tessel run =="
	@$(BUILD)/tessel run $(BUILD)/demo/mobilenet_demo.tsl --repeat 10

test: build
	@cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

# The same tests with every kernel held to AVX2, as on a laptop without
# AVX-512: oneDNN's dispatch (DNNL_MAX_CPU_ISA; ONEDNN_MAX_CPU_ISA in 3.x),
# which the CPU target also reads as this CPU's best ISA (the snippets JIT
# included). On an AVX2 machine this is `make test`.
test-avx2: build
	@cd $(BUILD) && DNNL_MAX_CPU_ISA=AVX2 ONEDNN_MAX_CPU_ISA=AVX2 ctest --output-on-failure -j$(JOBS)

# The model zoo: export every model of tests/zoo/zoo.py (PyPI's torch into
# build/zoo-venv), check it on every target, time it against ONNX Runtime
# and OpenVINO, and rewrite docs/zoo.md.
zoo: build
	@bash tests/zoo/make_zoo.sh

# The same tests under AddressSanitizer and UndefinedBehaviorSanitizer.
test-sanitize: deps
	@cmake -S . -B $(BUILD_ASAN) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTESSEL_SANITIZE=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD_ASAN) -j$(JOBS)
	@cd $(BUILD_ASAN) && ctest --output-on-failure -j$(JOBS)

# The API's concurrency test (docs/api.md, "Concurrency") under
# ThreadSanitizer: 8 threads x 50 runs over two sessions of one model, on the
# reference target and on CPU sessions of one thread each. GNU OpenMP (the
# runtime of oneDNN and of the CPU target's pool) is not instrumented, so
# TSan cannot see its barriers: sessions of several threads are left out
# here and run in the other builds. Only the test and what it links are
# built (OpenCL off: PoCL's LLVM is not instrumented either).
test-tsan: deps
	@cmake -S . -B $(BUILD_TSAN) -DCMAKE_BUILD_TYPE=Release -DTESSEL_SANITIZE_THREAD=ON \
	  -DTESSEL_WITH_OPENCL=OFF $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD_TSAN) -j$(JOBS) --target api_tests
	@cd $(BUILD_TSAN) && TSAN_OPTIONS="halt_on_error=1 abort_on_error=0 exitcode=66" \
	  ./api_tests --gtest_filter='ApiConcurrency.*:-ApiConcurrency.CpuSessionsOfTwoThreads'

clean:
	rm -rf $(BUILD) $(BUILD_ASAN) $(BUILD_TSAN)

# Every tracked C++ source (*.cc, *.h) against .clang-format. The version is
# pinned: clang-format-14 is Debian 12's, and another version formats some
# constructs differently, so the check never falls back to plain clang-format.
CLANG_FORMAT ?= clang-format-14
FORMAT_FILES = git ls-files -z '*.cc' '*.h'

format: deps
	@$(FORMAT_FILES) | xargs -0 $(CLANG_FORMAT) -i

format-check: deps
	@$(FORMAT_FILES) | xargs -0 $(CLANG_FORMAT) --dry-run --Werror
	@echo "format-check: $$(git ls-files '*.cc' '*.h' | wc -l) files match .clang-format ($(CLANG_FORMAT))"

# Coverage-guided fuzzing (fuzz/README.md): every fuzzer of fuzz/ built with
# clang under ASan and UBSan, each run FUZZ_SECONDS from its seed corpus;
# fails on the first crash, leak or sanitizer report (saved under
# $(BUILD_FUZZ)/crashes).
fuzz:
	@bash scripts/install-deps.sh --fuzz
	@CC=clang CXX=clang++ cmake -S . -B $(BUILD_FUZZ) -DTESSEL_FUZZ=ON -DTESSEL_BUILD_TESTS=OFF \
	  -DTESSEL_WITH_OPENCL=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD_FUZZ) -j$(JOBS) --target fuzzers
	@bash fuzz/run.sh $(BUILD_FUZZ) $(FUZZ_SECONDS)

