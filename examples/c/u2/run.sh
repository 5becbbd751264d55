#!/usr/bin/env bash
# Builds and runs the U2 example: the demo network and its small variant,
# both compiled with --workspace-pool name=sram, sharing one buffer.
#   run.sh TESSEL BIG.onnx SMALL.onnx WORK_DIR
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tessel=$1 big=$2 small=$3 work=$4
rm -rf "$work"
"$tessel" compile "$big" --target c -o "$work/gen" --name big --workspace-pool name=sram
"$tessel" compile "$small" --target c -o "$work/gen" --name small --workspace-pool name=sram
cc -std=c99 -O2 -Wall -Wextra -Werror -pedantic -I"$work/gen" "$here/main.c" "$work"/gen/*.c \
  -lm -o "$work/u2"
"$work/u2"
