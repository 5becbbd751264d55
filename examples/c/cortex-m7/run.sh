#!/usr/bin/env bash
# Runs a bare-metal ELF of this directory's Makefile on QEMU's mps2-an500
# (Cortex-M7) and exits with the program's exit code.
#
#   examples/c/cortex-m7/run.sh ELF [TIMEOUT_SECONDS]   (default 120)
#
# The program's stdout and stderr reach this script's through semihosting.
# newlib's exit(n) becomes semihosting SYS_EXIT_EXTENDED, which QEMU turns
# into its own exit code n (0-255); a fault in the program exits with
# 128 + the exception number (startup.c). A program that runs past the
# timeout is killed: exit code 124. QEMU models no timing: the wall time of
# a run says nothing about the speed of a Cortex-M7.
set -uo pipefail
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: run.sh ELF [TIMEOUT_SECONDS]" >&2
  exit 2
fi
elf="$1"
timeout_s="${2:-120}"
if [ ! -f "$elf" ]; then
  echo "run.sh: no such ELF: $elf" >&2
  exit 2
fi
timeout "$timeout_s" qemu-system-arm -machine mps2-an500 -cpu cortex-m7 \
  -nographic -monitor none -serial none \
  -semihosting-config enable=on,target=native -kernel "$elf" </dev/null
status=$?
if [ $status -eq 124 ]; then
  echo "run.sh: $elf ran past ${timeout_s} s; killed" >&2
fi
exit $status
