#!/usr/bin/env bash
# Regenerates docs/conformance.md: builds tessel, runs the ONNX backend test
# suites (Debian package libonnx-testdata, and the node tests of the newest
# onnx wheel, tests/conformance/newest_suite.sh) through `tessel
# conformance`, and writes the per-op outcome table with the totals, every
# skip's reason, the command and the date.
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
"$BUILD/tessel" conformance "$DATA/node" "$DATA/pytorch-converted" "$DATA/pytorch-operator" \
  "$DATA/simple" "${newest[@]}" --suite-faults tests/conformance/suite_faults.txt \
  --markdown docs/conformance.md >/dev/null || status=$?
if [ "$status" -gt 1 ]; then
  echo "conformance-report: tessel conformance exited with $status" >&2
  exit "$status"
fi
echo "conformance-report: wrote docs/conformance.md"
