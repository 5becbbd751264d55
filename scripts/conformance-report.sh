#!/usr/bin/env bash
# Regenerates docs/conformance.md: builds tessel, runs the ONNX backend test
# suite (Debian package libonnx-testdata) through `tessel conformance`, and
# writes the per-op outcome table with the totals, the command and the date.
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
"$BUILD/tessel" conformance "$DATA/node" "$DATA/pytorch-converted" "$DATA/pytorch-operator" \
  "$DATA/simple" --suite-faults tests/conformance/suite_faults.txt \
  --markdown docs/conformance.md >/dev/null || status=$?
if [ "$status" -gt 1 ]; then
  echo "conformance-report: tessel conformance exited with $status" >&2
  exit "$status"
fi
echo "conformance-report: wrote docs/conformance.md"
