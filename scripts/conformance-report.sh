#!/usr/bin/env bash
# Regenerates docs/conformance.md: builds tessel, runs the ONNX backend test
# suites (Debian package libonnx-testdata, and the node tests of the newest
# onnx wheel, tests/conformance/newest_suite.sh) through `tessel
# conformance` on every target, and writes the per-op outcome table with
# the totals, every skip's reason, the command and the date: the reference
# target's in docs/conformance.md, the cpu and opencl targets' in
# docs/conformance-cpu.md and docs/conformance-opencl.md, each listing every
# test the reference passes and it does not, with the reason.
#   scripts/conformance-report.sh            # build dir: build (or $BUILD)
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD="${BUILD:-build}"
DATA=/usr/share/libonnx-testdata/data

bash scripts/install-deps.sh
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD" -j"$(nproc)" --target tessel

# Exit 1 means some test failed: the report lists those, so it is still
# written; exit 2 (bad input) stops here.
status=0
# The newest onnx release's node tests join Debian's suite when its wheel
# can be installed (tests/conformance/newest_suite.sh writes them once).
newest=()
if bash tests/conformance/newest_suite.sh "$BUILD/tessel" --filter 'test_abs$' >/dev/null 2>&1; then
  newest=(build/onnx-tests/node-*)
else
  echo "conformance-report: the newest onnx node suite cannot be made here (no PyPI); Debian's only" >&2
fi
suites=("$DATA/node" "$DATA/pytorch-converted" "$DATA/pytorch-operator" "$DATA/simple" "${newest[@]}")
reference_json="$BUILD/conformance-reference.json"
for target in reference cpu opencl; do
  out=docs/conformance.md
  extra=(--json "$reference_json")
  if [ "$target" != reference ]; then
    out="docs/conformance-$target.md"
    extra=(--baseline "$reference_json")
  fi
  status=0
  "$BUILD/tessel" conformance "${suites[@]}" --suite-faults tests/conformance/suite_faults.txt \
    --target "$target" --markdown "$out" "${extra[@]}" >/dev/null || status=$?
  if [ "$status" -gt 1 ]; then
    echo "conformance-report: tessel conformance --target $target exited with $status" >&2
    [ "$target" = opencl ] && continue  # no OpenCL device here: said above
    exit "$status"
  fi
  echo "conformance-report: wrote $out"
done
