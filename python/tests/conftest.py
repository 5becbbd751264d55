"""Fixtures of the Python binding's tests: the shared models (skipped, saying
so, where ../shared/models is absent) and small ONNX models written here, byte
by byte, so that no test needs the onnx package."""

import os
import pathlib

import numpy as np
import pytest

import tessel

HERE = pathlib.Path(__file__).resolve().parent
SHARED = pathlib.Path(os.environ.get("TESSEL_SHARED_DIR", HERE.parents[2] / "shared"))
MODELS = SHARED / "models"
SHARED_MODELS = ["mobilenet_v2", "squeezenet1_1", "shufflenet_v2_x1_0", "transformer_encoder"]
# The tolerances of tests/models_test.cc (tessel check's defaults).
RTOL, ATOL = 1e-3, 1e-4


def shared_model_dir(name: str) -> pathlib.Path:
    d = MODELS / name
    if not (d / "model.onnx").exists():
        pytest.skip(f"skipped: {d} is absent (../shared not beside the checkout; "
                    "set TESSEL_SHARED_DIR)")
    return d


# ---------------------------------------------------------------- ONNX bytes
# The few fields of onnx.proto a small model needs, in protobuf's wire format.


def _varint(n: int) -> bytes:
    out = bytearray()
    n &= (1 << 64) - 1
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(num: int, value) -> bytes:
    if isinstance(value, int):
        return _varint(num << 3) + _varint(value)
    if isinstance(value, str):
        value = value.encode()
    return _varint(num << 3 | 2) + _varint(len(value)) + value


FLOAT, INT64 = 1, 7


def _value_info(name: str, elem_type: int, shape) -> bytes:
    dims = b"".join(_field(1, _field(1, d)) for d in shape)
    tensor_type = _field(1, elem_type) + _field(2, dims)
    return _field(1, name) + _field(2, _field(1, tensor_type))


def _tensor(name: str, values: np.ndarray) -> bytes:
    values = np.ascontiguousarray(values, np.float32)
    dims = b"".join(_field(1, d) for d in values.shape)
    return dims + _field(2, FLOAT) + _field(8, name) + _field(9, values.tobytes())


def _node(op: str, inputs, outputs, name: str, domain: str = "") -> bytes:
    return (b"".join(_field(1, i) for i in inputs) + b"".join(_field(2, o) for o in outputs) +
            _field(3, name) + _field(4, op) + (_field(7, domain) if domain else b""))


def onnx_model(nodes, inputs, outputs, initializers=(), opset: int = 13) -> bytes:
    graph = (b"".join(_field(1, n) for n in nodes) + _field(2, "g") +
             b"".join(_field(5, t) for t in initializers) +
             b"".join(_field(11, v) for v in inputs) + b"".join(_field(12, v) for v in outputs))
    return (_field(1, 8) + _field(2, "tessel-python-tests") + _field(7, graph) +
            _field(8, _field(2, opset)))


def affine_model_bytes(n: int = 4) -> bytes:
    """output = input * 2 + 1, float32 [1, n]."""
    return onnx_model(
        nodes=[_node("Mul", ["input", "two"], ["t"], "mul"),
               _node("Add", ["t", "one"], ["output"], "add")],
        inputs=[_value_info("input", FLOAT, [1, n])],
        outputs=[_value_info("output", FLOAT, [1, n])],
        initializers=[_tensor("two", np.array([2.0], np.float32)),
                      _tensor("one", np.array([1.0], np.float32))],
    )


def unknown_op_model_bytes() -> bytes:
    """One node of an op no opset has."""
    return onnx_model(
        nodes=[_node("TesselNoSuchOp", ["input"], ["output"], "the_unknown_node")],
        inputs=[_value_info("input", FLOAT, [1, 4])],
        outputs=[_value_info("output", FLOAT, [1, 4])],
    )


@pytest.fixture(scope="session")
def affine_path(tmp_path_factory) -> pathlib.Path:
    p = tmp_path_factory.mktemp("models") / "affine.onnx"
    p.write_bytes(affine_model_bytes())
    return p


@pytest.fixture(scope="session")
def affine(affine_path) -> tessel.Model:
    return tessel.compile(affine_path, threads=1)


_compiled = {}


def compiled_shared(name: str) -> tessel.Model:
    """A shared model compiled once per test session."""
    d = shared_model_dir(name)
    if name not in _compiled:
        _compiled[name] = tessel.compile(d / "model.onnx")
    return _compiled[name]


def shared_io(name: str):
    d = shared_model_dir(name) / "test_data_set_0"
    return tessel.read_tensor(d / "input_0.pb"), tessel.read_tensor(d / "output_0.pb")


def one_line(e: BaseException) -> str:
    s = str(e)
    assert s and "\n" not in s, f"not one line: {s!r}"
    return s
