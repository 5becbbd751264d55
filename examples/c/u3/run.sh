#!/usr/bin/env bash
# The U3 example: a model's buffers pinned to four named memories, two
# read-write (a small fast dtcm, then sram) and two read-only (a small itcm,
# then flash), in order of preference; a buffer goes to the first that holds
# it. tessel's NAME_check.c provides each pool (on a board, the build places
# them with TESSEL_NET_<POOL>_SECTION_NAME; see examples/c/cortex-m7) and
# compares the run with the reference target.
#   run.sh TESSEL MODEL.onnx WORK_DIR
set -euo pipefail
tessel=$1 model=$2 work=$3
rm -rf "$work"
"$tessel" compile "$model" --target c -o "$work/gen" --name net --check \
  --workspace-pool name=dtcm,size=64KiB --workspace-pool name=sram \
  --constant-pool name=itcm,size=16KiB --constant-pool name=flash
for macro in DTCM_WORKSPACE_SIZE SRAM_WORKSPACE_SIZE ITCM_CONSTANT_SIZE FLASH_CONSTANT_SIZE; do
  grep -q "#define TESSEL_NET_$macro [1-9]" "$work/gen/net.h" || {
    echo "FAIL: pool TESSEL_NET_$macro is missing or empty"
    exit 1
  }
done
grep -E "#define TESSEL_NET_(DTCM|SRAM|ITCM|FLASH)_" "$work/gen/net.h"
cc -std=c99 -O2 -Wall -Wextra -Werror -pedantic -I"$work/gen" "$work"/gen/*.c -lm -o "$work/u3"
"$work/u3"
