"""The four shared models through Python, against their expected outputs
(and against ONNX Runtime where it is importable)."""

import numpy as np
import pytest

import tessel
from conftest import ATOL, RTOL, SHARED_MODELS, compiled_shared, shared_io, shared_model_dir


@pytest.mark.parametrize("name", SHARED_MODELS)
def test_shared_model_matches_expected_output(name):
    model = compiled_shared(name)
    x, expected = shared_io(name)
    (info,) = model.inputs
    assert info.dtype == x.dtype and tuple(info.shape) == x.shape
    out = model.run({info.name: x})
    assert list(out) == [o.name for o in model.outputs]
    y = out[model.outputs[0].name]
    assert y.dtype == expected.dtype and y.shape == expected.shape
    np.testing.assert_allclose(y, expected, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("name", SHARED_MODELS)
def test_shared_model_matches_onnxruntime(name):
    d = shared_model_dir(name)
    ort = pytest.importorskip("onnxruntime", reason="skipped: onnxruntime is not importable")
    x, _ = shared_io(name)
    model = compiled_shared(name)
    sess = ort.InferenceSession(str(d / "model.onnx"), providers=["CPUExecutionProvider"])
    (want,) = sess.run(None, {sess.get_inputs()[0].name: x})[:1]
    got = model.run({model.inputs[0].name: x})[model.outputs[0].name]
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


def test_check_passes_on_a_shared_model():
    d = shared_model_dir("squeezenet1_1")
    report = tessel.check(d)
    assert report.ok and bool(report), report.results
    assert report.target.startswith("cpu")
    assert report.results and all(r.ok for r in report.results)


def test_read_tensor_gives_an_owning_array():
    x, y = shared_io("transformer_encoder")
    assert x.dtype == np.int64 and x.shape == (1, 128)
    assert y.dtype == np.float32 and y.shape == (1, 128, 256)
    x[0, 0] = 1  # writeable, and lives on after the call
    assert x[0, 0] == 1
