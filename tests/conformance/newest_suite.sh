#!/usr/bin/env bash
# The node tests of the newest onnx release (requirements.txt), through
# `tessel conformance`:
#
#   tests/conformance/newest_suite.sh TESSEL_BINARY [conformance options...]
#
# Makes build/onnx-venv (onnx and numpy from PyPI) and writes the tests to
# build/onnx-tests/node-<release> once; runs them with the suite faults of
# tests/conformance/suite_faults.txt. Exit 77, saying why, when the
# environment cannot be made (CTest counts that as skipped); otherwise
# tessel conformance's exit status.
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
tessel="$1"
shift
venv="$root/build/onnx-venv"
req="$root/tests/conformance/requirements.txt"
if ! { [ -x "$venv/bin/python" ] && cmp -s "$req" "$venv/.requirements"; }; then
  if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
    echo "skipped: python3 cannot create virtual environments (install python3-venv)"
    exit 77
  fi
  mkdir -p "$root/build"
  if ! { [ -x "$venv/bin/python" ] || python3 -m venv "$venv"; } ||
     ! "$venv/bin/pip" install -q --disable-pip-version-check --timeout 60 --retries 1 -r "$req"; then
    echo "skipped: the onnx wheel cannot be installed from PyPI here; the newest node suite needs it"
    exit 77
  fi
  cp "$req" "$venv/.requirements"
fi
release="$("$venv/bin/python" -c 'import onnx; print(".".join(onnx.__version__.split(".")[:2]))')"
suite="$root/build/onnx-tests/node-$release"
stamp="$suite/.generated"
if ! cmp -s "$req" "$stamp"; then
  "$venv/bin/python" "$root/tests/conformance/generate_node_tests.py" "$root/build/onnx-tests" ||
    exit 1
  cp "$req" "$stamp"
fi
exec "$tessel" conformance "$suite" --suite-faults "$root/tests/conformance/suite_faults.txt" "$@"
