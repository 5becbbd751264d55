# tessel: the two commands of the README, and their helpers.
#   make demo   compile and run the bundled demo model
#   make test   build and run every test (unit, end-to-end, error cases)
# Each installs missing system dependencies first (scripts/install-deps.sh).

BUILD ?= build
BUILD_ASAN ?= build-asan
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
MAKEFLAGS += --no-print-directory

.PHONY: all deps build demo test test-sanitize clean

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

# The same tests under AddressSanitizer and UndefinedBehaviorSanitizer.
test-sanitize: deps
	@cmake -S . -B $(BUILD_ASAN) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTESSEL_SANITIZE=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD_ASAN) -j$(JOBS)
	@cd $(BUILD_ASAN) && ctest --output-on-failure -j$(JOBS)

clean:
	rm -rf $(BUILD) $(BUILD_ASAN)
