#!/usr/bin/env bash
# Runs every fuzzer of BUILD (make fuzz builds them) for SECONDS each, from
# its seed corpus in fuzz/corpus/NAME plus what earlier runs found
# (BUILD/corpus/NAME), and prints one line per fuzzer: executions, coverage,
# corpus size. Exits 1 on the first crash, leak, timeout or sanitizer
# report; the input is saved as BUILD/crashes/NAME-*, to be added to
# fuzz/regressions/NAME/ once fixed (the tests replay those).
#   fuzz/run.sh BUILD SECONDS [NAME...]
set -euo pipefail
build="$1"
seconds="$2"
shift 2
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  names=(tsl tensor_pb instance_csv cli_options onnx_model program_cache ops tune_cache)
fi
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$build/crashes"
for name in "${names[@]}"; do
  work="$build/corpus/$name"
  mkdir -p "$work"
  log="$build/fuzz_$name.log"
  status=0
  "$build/fuzz_$name" "$work" "$here/corpus/$name" -max_total_time="$seconds" \
    -timeout=10 -rss_limit_mb=2048 -max_len=262144 -print_final_stats=1 \
    -artifact_prefix="$build/crashes/$name-" >"$log" 2>&1 || status=$?
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo 0)
  corpus=$(find "$work" -type f | wc -l)
  printf '%-13s %10s executions in %ss, coverage %s edges, corpus %s inputs\n' \
    "$name" "$runs" "$seconds" "$cov" "$corpus"
  if [ "$status" -ne 0 ]; then
    echo "fuzz: $name failed (exit $status); the report is in $log:" >&2
    grep -m 3 -E 'ERROR|SUMMARY|runtime error' "$log" >&2 || tail -5 "$log" >&2
    exit 1
  fi
done
