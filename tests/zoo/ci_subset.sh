#!/usr/bin/env bash
# The zoo's fast subset (zoo.CI_SUBSET), for `make test`:
#
#   tests/zoo/ci_subset.sh TESSEL_BINARY TARGETS   (TARGETS: cpu or cpu,opencl)
#
# Makes build/zoo-venv when it can (PyPI reachable); when it cannot, exits 77,
# which CTest counts as skipped, saying why. Exit 1 when a model fails.
set -uo pipefail
source "$(dirname "$0")/env.sh"
tessel="$1"
targets="$2"
if ! zoo_env --timeout 60 --retries 1; then
  echo "skipped: the zoo's Python environment (torch, onnxruntime from PyPI) cannot be made here; see above"
  exit 77
fi
cd "$zoo_root"
# (tessel info's output is read whole: grep -q closing the pipe early would
# fail the pipeline under pipefail, and skip OpenCL where it exists.)
if [[ "$targets" == *opencl* ]] && ! grep "opencl:0" <<<"$("$tessel" info 2>/dev/null)" >/dev/null; then
  echo "note: no OpenCL device here; the subset runs on the CPU target only"
  targets=cpu
fi
# Where OpenCL runs, it runs with buffers and with textures (--storage texture).
if [[ "$targets" == *opencl* && "$targets" != *opencl-texture* ]]; then
  targets="$targets,opencl-texture"
fi
subset="$("$zoo_python" -c 'import sys; sys.path.insert(0, "tests/zoo"); import zoo; print(",".join(zoo.CI_SUBSET))')"
"$zoo_python" tests/zoo/export.py build/zoo/models --only "$subset" || exit 1
exec "$zoo_python" tests/zoo/run_zoo.py "$tessel" build/zoo/models --only "$subset" \
  --targets "$targets" --no-bench
