#!/usr/bin/env bash
# CTest's check of the newest onnx node suite (newest_suite.sh): no test
# fails, and no fewer pass than tests/conformance/expected_min_passed_newest.txt
# records (a number that only goes up). Exit 77 when the suite cannot be made.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$(bash "$here/newest_suite.sh" "$1")"
status=$?
if [ $status -eq 77 ]; then
  echo "$out"
  exit 77
fi
totals="$(echo "$out" | tail -1)"
echo "$totals"
if [ $status -ne 0 ]; then
  echo "$out" | sed -n '/^failed tests:/,/^$/p'
  exit 1
fi
passed="${totals%% passed*}"
expected="$(cat "$here/expected_min_passed_newest.txt")"
if [ "$passed" -lt "$expected" ]; then
  echo "only $passed tests passed; tests/conformance/expected_min_passed_newest.txt records $expected"
  exit 1
fi
if [ "$passed" -gt "$expected" ]; then
  echo "note: $passed tests pass; raise tests/conformance/expected_min_passed_newest.txt to it"
fi
