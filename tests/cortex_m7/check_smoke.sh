#!/usr/bin/env bash
# CTest's cortex_m7_smoke: builds the hand-written stand-in model of
# examples/c/cortex-m7/smoke for Cortex-M7 and runs it on QEMU's mps2-an500.
# Passes when the run exits 0 and prints PASS, and a build whose expected
# values are wrong (SMOKE_EXPECT_WRONG) exits 1: a wrong result must fail
# through QEMU's exit code, not only in the output.
# Exit 77 (skipped) without arm-none-eabi-gcc, its newlib or qemu-system-arm
# (scripts/install-deps.sh installs them).
#   check_smoke.sh SOURCE_DIR WORK_DIR
set -uo pipefail
src="$1"
work="$2"
example="$src/examples/c/cortex-m7"

source "$(dirname "$0")/toolchain.sh"

rm -rf "$work"
build() {  # build DIR [EXTRA_CPPFLAGS]
  make -s -f "$example/Makefile" GEN_DIR="$example/smoke" NAME=smoke APP="$example/smoke/main.c" \
    BUILD_DIR="$1" EXTRA_CPPFLAGS="${2:-}"
}

if ! build "$work/right"; then
  echo "FAIL: the stand-in did not build"
  exit 1
fi
out="$("$example/run.sh" "$work/right/smoke.elf" 60)"
status=$?
echo "$out"
if [ $status -ne 0 ] || ! grep -q '^cortex-m7 smoke: PASS$' <<<"$out"; then
  echo "FAIL: the stand-in exited $status under QEMU"
  exit 1
fi

if ! build "$work/wrong" -DSMOKE_EXPECT_WRONG >/dev/null; then
  echo "FAIL: the stand-in with a wrong expected value did not build"
  exit 1
fi
"$example/run.sh" "$work/wrong/smoke.elf" 60 >/dev/null
status=$?
if [ $status -ne 1 ]; then
  echo "FAIL: with a wrong expected value the run exited $status, not 1"
  exit 1
fi
echo "a wrong result exits 1 through QEMU, as it should"
