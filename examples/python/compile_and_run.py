"""Compile a model in the ONNX test layout, run it, compare with its expected
output.  python3 compile_and_run.py [DIR]   (default ../shared/models/squeezenet1_1)"""
import pathlib
import sys

import numpy as np

import tessel

root = pathlib.Path(__file__).resolve().parents[2]
d = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else root.parent / "shared/models/squeezenet1_1")

model = tessel.compile(d / "model.onnx", threads=2)
print(model)
x = tessel.read_tensor(d / "test_data_set_0/input_0.pb")
expected = tessel.read_tensor(d / "test_data_set_0/output_0.pb")
y = model.run({model.inputs[0].name: x})[model.outputs[0].name]
err = float(np.max(np.abs(y - expected)))
ok = np.allclose(y, expected, rtol=1e-3, atol=1e-4)
print(f"output {model.outputs[0].name}: {y.dtype} {y.shape}, max abs error {err:.2e}: "
      f"{'matches' if ok else 'MISMATCH'}")
sys.exit(0 if ok else 1)
