#!/usr/bin/env bash
# CTest's cortex_m7_model: a small MobileNet (build/demo/mobilenet_m7.onnx)
# as generated C on QEMU's mps2-an500 (Cortex-M7, FPU, newlib-nano with
# semihosting), checked against the reference target by NAME_check.c
# through QEMU's exit code, twice:
#   U1  one workspace pool (static, in SRAM), the weights compiled in (flash);
#   U3  the workspace in SRAM up to 128 KiB and the rest in PSRAM, the weights
#       in a constant pool in flash, each pool in its own linker section.
# Prints each build's flash and RAM per section (arm-none-eabi-size -A).
# Exit 77 (skipped) without the cross toolchain or QEMU.
#   check_model.sh SOURCE_DIR TESSEL MODEL WORK_DIR
set -uo pipefail
src="$1" tessel="$2" model="$3" work="$4"
example="$src/examples/c/cortex-m7"
source "$(dirname "$0")/toolchain.sh"
rm -rf "$work"

run_case() {  # run_case CASE EXTRA_CPPFLAGS [tessel flags...]
  local case="$1" cppflags="$2"
  shift 2
  echo "== $case: tessel compile --target c $*"
  if ! "$tessel" compile "$model" --target c -o "$work/$case/gen" --name m7 --check "$@"; then
    echo "FAIL: $case did not compile"
    exit 1
  fi
  if ! make -s -f "$example/Makefile" GEN_DIR="$work/$case/gen" NAME=m7 \
    APP="$work/$case/gen/m7_check.c" BUILD_DIR="$work/$case/build" EXTRA_CPPFLAGS="$cppflags"; then
    echo "FAIL: $case did not build for Cortex-M7"
    exit 1
  fi
  local out status
  out="$("$example/run.sh" "$work/$case/build/m7.elf" 600)"
  status=$?
  echo "$out"
  if [ $status -ne 0 ] || ! grep -q '^PASS$' <<<"$out"; then
    echo "FAIL: $case exited $status under QEMU"
    exit 1
  fi
}

run_case u1 ""
run_case u3 "-DTESSEL_M7_SRAM_SECTION_NAME=\\\".sram_pool\\\" -DTESSEL_M7_PSRAM_SECTION_NAME=\\\".psram_pool\\\" -DTESSEL_M7_FLASH_SECTION_NAME=\\\".flash_pool\\\"" \
  --workspace-pool name=sram,size=128KiB --workspace-pool name=psram --constant-pool name=flash
sizes="$(cat "$work/u3/build/m7.size")"
for section in .sram_pool .psram_pool .flash_pool; do
  bytes="$(awk -v s="$section" '$1 == s {print $2}' <<<"$sizes")"
  if [ -z "$bytes" ] || [ "$bytes" -le 0 ]; then
    echo "FAIL: U3 put nothing in $section"
    exit 1
  fi
done
echo "U1 and U3 match the reference on the Cortex-M7; U3's pools sit in their sections"
