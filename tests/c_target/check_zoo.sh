#!/usr/bin/env bash
# The zoo's small CNNs of the CI subset (resnet18, mobilenet_v3_small,
# lraspp_mobilenet_v3_large), as exported by ctest zoo_subset into
# build/zoo/models, through the c target (check_model.sh each: gcc, clang,
# the sanitizers, against the exported expected outputs).
#   check_zoo.sh TESSEL SOURCE_DIR WORK_DIR
# Exits 77 (skipped) when the zoo could not be exported here (no PyPI).
set -uo pipefail
tessel=$1 src=$2 work=$3
models="$src/build/zoo/models"
mkdir -p "$(dirname "$work")"
status=0
ran=0
for m in resnet18 mobilenet_v3_small lraspp_mobilenet_v3_large; do
  if [[ ! -d $models/$m/test_data_set_0 ]]; then
    echo "note: $m is not exported (zoo_subset makes it where PyPI is reachable)"
    continue
  fi
  ran=$((ran + 1))
  if bash "$src/tests/c_target/check_model.sh" "$tessel" "$models/$m" "$m" "$work/$m" \
    > "$work.$m.log" 2>&1; then
    echo "$m: PASS ($(grep -m1 'elements off' "$work.$m.log"))"
  else
    echo "$m: FAIL"
    tail -20 "$work.$m.log"
    status=1
  fi
done
if [[ $ran -eq 0 ]]; then
  echo "skipped: no zoo model is exported here"
  exit 77
fi
exit $status
