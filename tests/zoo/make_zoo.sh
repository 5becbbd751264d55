#!/usr/bin/env bash
# make zoo: exports every zoo model (tests/zoo/zoo.py) with random weights to
# build/zoo/models in the ONNX test format, runs `tessel check` on the CPU
# and OpenCL targets (buffers and textures), measures latency and memory
# against ONNX Runtime and OpenVINO, and rewrites docs/zoo.md.
#
#   tests/zoo/make_zoo.sh [--only NAME,...] [--no-bench] [--rounds N] [--threads N]
#
# Nothing is downloaded but the Python packages of requirements.txt (into
# build/zoo-venv). Exit status 1 when a model fails a target.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$zoo_root"
if ! zoo_env; then
  echo "make_zoo.sh: cannot make the zoo's Python environment (above)" >&2
  exit 2
fi
if [ ! -x build/tessel ]; then
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build -j"$(nproc)" --target tessel
fi
export_args=()
run_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --only) export_args+=(--only "$2"); run_args+=(--only "$2"); shift 2 ;;
    --no-bench) run_args+=(--no-bench); shift ;;
    --rounds|--threads) run_args+=("$1" "$2"); shift 2 ;;
    *) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
  esac
done
echo "== exporting the zoo to build/zoo/models =="
status=0
"$zoo_python" tests/zoo/export.py build/zoo/models "${export_args[@]}" || status=1
echo "== tessel check on every target, and the peers =="
"$zoo_python" tests/zoo/run_zoo.py build/tessel build/zoo/models "${run_args[@]}" \
  --markdown docs/zoo.md --json build/zoo/results.json || status=1
exit $status
