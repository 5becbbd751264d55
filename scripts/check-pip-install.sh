#!/usr/bin/env bash
# `pip install .` and `pip wheel .` of the Python binding, each into a fresh
# venv of Debian's Python, then an import and a run of a model there.
# Exits 77, saying why, where the package index cannot be reached (the
# build needs scikit-build-core and numpy from it).
#   scripts/check-pip-install.sh          # builds the project once (~10+ min on 2 cores)
# Faster with ccache: it passes -DCMAKE_CXX_COMPILER_LAUNCHER=ccache when
# ccache is installed; JOBS (default 2) builds in parallel.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
python=/usr/bin/python3
work=$(mktemp -d /tmp/tessel-pip.XXXXXX)
trap 'rm -rf "$work"' EXIT

if ! "$python" -m venv "$work/probe" >/dev/null 2>&1; then
  echo "skipped: $python cannot make a venv (apt-get install python3-venv)"
  exit 77
fi
if ! timeout 120 "$work/probe/bin/pip" download --quiet --no-deps -d "$work/probe-dl" \
    scikit-build-core >/dev/null 2>&1; then
  echo "skipped: the package index is unreachable (pip download scikit-build-core failed)"
  exit 77
fi

export CMAKE_BUILD_PARALLEL_LEVEL=${JOBS:-2}
if command -v ccache >/dev/null; then
  export CMAKE_ARGS="${CMAKE_ARGS:-} -DCMAKE_CXX_COMPILER_LAUNCHER=ccache"
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(dirname "$root")}
fi

# Imports tessel from the venv (not the source tree), runs a model: the
# shared squeezenet against its expected output, else a small model.
smoke() {
  (cd "$work" && "$1/bin/python" - "$root" <<'PY'
import pathlib, sys
import numpy as np
import tessel
root = pathlib.Path(sys.argv[1])
where = pathlib.Path(tessel.__file__).parent
assert not str(where).startswith(str(root)), f"imported from the source tree: {where}"
print(f"  tessel {tessel.__version__} from {where}; targets {tessel.targets()}")
d = root.parent / "shared/models/squeezenet1_1"
if (d / "model.onnx").exists():
    model = tessel.compile(d / "model.onnx")
    x = tessel.read_tensor(d / "test_data_set_0/input_0.pb")
    want = tessel.read_tensor(d / "test_data_set_0/output_0.pb")
else:
    sys.path.insert(0, str(root / "python/tests"))
    from conftest import affine_model_bytes
    model = tessel.compile(affine_model_bytes())
    x = np.arange(4, dtype=np.float32).reshape(1, 4)
    want = x * 2 + 1
y = model.run({model.inputs[0].name: x})[model.outputs[0].name]
np.testing.assert_allclose(y, want, rtol=1e-3, atol=1e-4)
print(f"  {model}: output {y.shape} matches (max abs error {np.max(np.abs(y - want)):.1e})")
PY
  )
}

echo "== pip install $root"
"$python" -m venv "$work/venv-install"
start=$SECONDS
"$work/venv-install/bin/pip" install --quiet "$root"
echo "  built and installed in $((SECONDS - start)) s"
smoke "$work/venv-install"

echo "== pip wheel $root, then the wheel into another venv"
"$python" -m venv "$work/venv-wheel"
start=$SECONDS
"$work/venv-wheel/bin/pip" wheel --quiet --no-deps -w "$work/wheels" "$root"
wheel=$(ls "$work"/wheels/tessel-*.whl)
echo "  $(basename "$wheel") in $((SECONDS - start)) s:"
"$python" -m zipfile -l "$wheel" | awk 'NR > 1 { print "    " $1 }'
"$work/venv-wheel/bin/pip" install --quiet "$wheel"
so=$(ls "$work"/venv-wheel/lib/python3*/site-packages/tessel/_tessel*.so)
echo "  _tessel RUNPATH: $(readelf -d "$so" | sed -n 's/.*R\(UN\)\?PATH.*\[\(.*\)\]/\2/p')"
smoke "$work/venv-wheel"
echo "pip install and pip wheel: OK"
