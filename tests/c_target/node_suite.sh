#!/usr/bin/env bash
# The ONNX backend node tests (Debian's libonnx-testdata) through the c
# target, op by op: each test folder's model compiled with --target c and
# --check-data (its test_data_set_0), built with gcc -std=c99 -Wall -Wextra
# -Werror -pedantic and run. A test whose model the c target refuses at
# compile time (an op without a C kernel, named in one line) is skipped and
# counted; every other must build and match its expected outputs, and at
# least MIN_PASSED must pass (what passed when the suite was added: a c
# target that refused everything would otherwise pass).
#   node_suite.sh TESSEL DATA_DIR WORK_DIR MIN_PASSED
# Exits 77 (skipped) without the test data.
set -uo pipefail
tessel=$1 data=$2 work=$3 min_passed=$4
if [[ ! -d $data ]]; then
  echo "SKIP: no ONNX node tests at $data (Debian package libonnx-testdata)"
  exit 77
fi
rm -rf "$work"
mkdir -p "$work"

one() {  # one TEST_DIR: prints "pass NAME", "skip NAME: why" or "fail NAME: why"
  local dir=$1 name w log
  name=$(basename "$dir")
  w="$work/$name"
  mkdir -p "$w"
  if ! "$tessel" compile "$dir/model.onnx" --target c -o "$w/gen" --name t --check-data "$dir" \
    > "$w/compile.log" 2>&1; then
    echo "skip $name: $(tail -1 "$w/compile.log")"
    return
  fi
  if ! gcc -std=c99 -O1 -Wall -Wextra -Werror -pedantic -I"$w/gen" "$w"/gen/*.c -lm \
    -o "$w/check" > "$w/build.log" 2>&1; then
    echo "fail $name: does not build: $(grep -m1 error "$w/build.log")"
    return
  fi
  if ! "$w/check" > "$w/run.log" 2>&1; then
    echo "fail $name: $(grep -m1 -v PASS "$w/run.log")"
    return
  fi
  echo "pass $name"
  rm -rf "$w"
}
export -f one
export tessel work
find "$data" -mindepth 1 -maxdepth 1 -type d -name 'test_*' | sort |
  xargs -P "$(nproc)" -I{} bash -c 'one {}' > "$work/results.txt"
pass=$(grep -c '^pass ' "$work/results.txt")
skip=$(grep -c '^skip ' "$work/results.txt")
fail=$(grep -c '^fail ' "$work/results.txt")
grep '^fail ' "$work/results.txt"
echo "ONNX node tests on the c target: $pass passed, $fail failed, $skip skipped (refused at" \
  "compile time; $work/results.txt says why)"
if [[ $pass -lt $min_passed ]]; then
  echo "FAIL: $pass passed, fewer than the $min_passed that passed before"
  exit 1
fi
[[ $fail -eq 0 ]]
