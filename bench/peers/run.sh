#!/usr/bin/env bash
# tessel next to ONNX Runtime and OpenVINO on the same models:
#
#   bench/peers/run.sh MODEL.onnx... [--threads 1,2] [--rounds 3] [--warmup 5] [--repeat 30]
#                      [--isa auto|avx2] [--markdown] [--ort-nospin] [--json FILE]
#
# Creates build/peers-venv (python3 -m venv) on first use and pip-installs
# onnxruntime and openvino into it; builds build/tessel if it is missing.
# Engines run interleaved, each in its own process, with the same thread
# count; see compare.py for what is measured.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
venv="$root/build/peers-venv"
if [ $# -eq 0 ]; then
  sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
if [ ! -x "$venv/bin/python" ]; then
  if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
    echo "run.sh: python3 cannot create virtual environments; install python3-venv (apt-get install python3-venv)" >&2
    exit 2
  fi
  python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c 'import onnxruntime, openvino, numpy' 2>/dev/null; then
  "$venv/bin/pip" install -q onnxruntime openvino numpy
fi
if [ ! -x "$root/build/tessel" ]; then
  cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$root/build" -j2 --target tessel
fi
exec "$venv/bin/python" "$root/bench/peers/compare.py" "$root/build/tessel" "$@"
