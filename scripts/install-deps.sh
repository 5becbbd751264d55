#!/usr/bin/env bash
# Installs every system dependency of tessel from Debian 12 packages.
# Idempotent: when everything is present it only checks, in well under a second.
#   scripts/install-deps.sh          # what make, make test, make demo and make format-check need
#   scripts/install-deps.sh --fuzz   # and clang with libFuzzer (make fuzz)
set -euo pipefail

packages=(
  build-essential cmake pkg-config python3 python3-venv
  libonnx-dev libprotobuf-dev protobuf-compiler
  libcli11-dev nlohmann-json3-dev libxbyak-dev libdnnl-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libonnx-testdata
  clang-format-14
  python3-dev python3-numpy python3-pytest pybind11-dev
  ocl-icd-opencl-dev opencl-c-headers opencl-clhpp-headers pocl-opencl-icd clinfo
  # The Cortex-M7 example (examples/c/cortex-m7): cross compiler, newlib, emulator.
  gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm
)
if [ "${1:-}" = "--fuzz" ]; then
  packages+=(clang libclang-rt-dev)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
