"""Every error a caller can cause: the documented exception, one line, and
the interpreter (this process) alive after it."""

import sys

import numpy as np
import pytest

import tessel
from conftest import one_line, unknown_op_model_bytes

X = np.arange(4, dtype=np.float32).reshape(1, 4)


def still_runs(model):
    np.testing.assert_array_equal(model.run({"input": X})["output"], X * 2 + 1)


def test_wrong_dtype_is_a_type_error_naming_the_input(affine):
    with pytest.raises(TypeError) as e:
        affine.run({"input": X.astype(np.float64)})
    msg = one_line(e.value)
    assert "'input'" in msg and "float64" in msg and "float32" in msg
    assert isinstance(e.value, tessel.TypeMismatchError) and isinstance(e.value, tessel.Error)
    assert e.value.code == tessel.ErrorCode.TYPE_MISMATCH
    still_runs(affine)


def test_wrong_shape_is_a_value_error_naming_both_shapes(affine):
    with pytest.raises(ValueError) as e:
        affine.run({"input": np.zeros((2, 4), np.float32)})
    msg = one_line(e.value)
    assert "'input'" in msg and "(2, 4)" in msg and "(1, 4)" in msg
    assert e.value.code == tessel.ErrorCode.SHAPE_MISMATCH
    still_runs(affine)


def test_missing_input_is_a_value_error_naming_it(affine):
    with pytest.raises(ValueError) as e:
        affine.run({})
    assert "missing input 'input'" in one_line(e.value)
    still_runs(affine)


def test_extra_input_is_a_value_error_naming_it(affine):
    with pytest.raises(ValueError) as e:
        affine.run({"input": X, "bogus": X})
    assert "unknown input 'bogus'" in one_line(e.value)
    still_runs(affine)


@pytest.mark.parametrize("feeds", [[X], X, None, {0: X}])
def test_feeds_not_a_dict_of_names_is_a_type_error(affine, feeds):
    with pytest.raises(TypeError) as e:
        affine.run(feeds)
    one_line(e.value)
    still_runs(affine)


def test_lists_are_converted_to_the_input_dtype(affine):
    out = affine.run({"input": [[0, 1, 2, 3]]})
    np.testing.assert_array_equal(out["output"], X * 2 + 1)


def test_corrupt_tsl_is_a_tessel_error(affine, tmp_path):
    p = tmp_path / "m.tsl"
    affine.save(p)
    data = p.read_bytes()
    p.write_bytes(data[: len(data) // 2])
    with pytest.raises(tessel.CorruptFileError) as e:
        tessel.load(p)
    one_line(e.value)
    assert isinstance(e.value, RuntimeError) and e.value.code == tessel.ErrorCode.CORRUPT_FILE
    with pytest.raises(tessel.Error):
        tessel.deserialize(data[:10])
    still_runs(affine)


@pytest.mark.parametrize("call", ["compile", "load", "read_tensor", "plan_instance", "check"])
def test_missing_file_is_file_not_found(tmp_path, call):
    missing = tmp_path / "no-such-file"
    with pytest.raises(FileNotFoundError) as e:
        getattr(tessel, call)(missing)
    one_line(e.value)
    assert isinstance(e.value, tessel.Error) and e.value.code == tessel.ErrorCode.NOT_FOUND


def test_unsupported_op_is_a_tessel_error_naming_it(tmp_path, affine):
    p = tmp_path / "unknown_op.onnx"
    p.write_bytes(unknown_op_model_bytes())
    with pytest.raises(tessel.Error) as e:
        tessel.compile(p)
    msg = one_line(e.value)
    assert "TesselNoSuchOp" in msg, msg
    assert e.value.code == tessel.ErrorCode.UNSUPPORTED
    with pytest.raises(tessel.Error):
        tessel.compile(unknown_op_model_bytes())  # the same from bytes
    still_runs(affine)


def test_unknown_keyword_is_a_type_error_naming_it(affine_path):
    with pytest.raises(TypeError, match="'frobnicate'"):
        tessel.compile(affine_path, frobnicate=True)
    with pytest.raises(TypeError, match="device is an option of target 'opencl'"):
        tessel.compile(affine_path, device="opencl:0")
    with pytest.raises(TypeError, match="threads must be int, got str"):
        tessel.compile(affine_path, threads="2")
    with pytest.raises(TypeError, match="'bogus'"):
        tessel.check(affine_path.parent, bogus=1)


def test_unknown_target_is_a_value_error(affine_path):
    with pytest.raises(ValueError, match="unknown target 'tpu'"):
        tessel.compile(affine_path, target="tpu")


def test_bad_option_values_are_value_errors(affine_path):
    for options in ({"isa": "sse9"}, {"winograd": "9x9"}, {"planner": "no-such-planner"},
                    {"input_shapes": {"nope": [1, 4]}}):
        with pytest.raises(ValueError) as e:
            tessel.compile(affine_path, **options)
        one_line(e.value)


def test_wrong_output_array_is_refused(affine):
    s = affine.session()
    with pytest.raises(TypeError):
        s.run({"input": X}, outputs={"output": np.empty((1, 4), np.float64)})
    with pytest.raises(ValueError):
        s.run({"input": X}, outputs={"output": np.empty((4, 1), np.float32)})
    with pytest.raises(ValueError):
        s.run({"input": X}, outputs={"output": np.empty((1, 8), np.float32)[:, ::2]})
    ro = np.empty((1, 4), np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError):
        s.run({"input": X}, outputs={"output": ro})
    with pytest.raises(ValueError, match="unknown output 'nope'"):
        s.run({"input": X}, outputs={"nope": np.empty((1, 4), np.float32)})


def test_bad_benchmark_arguments_are_value_errors(affine):
    with pytest.raises(ValueError) as e:
        affine.session().benchmark(warmup=-1, repeat=0)
    one_line(e.value)


def test_tune_on_the_cpu_is_unsupported(affine):
    with pytest.raises(tessel.UnsupportedError) as e:
        affine.session().tune()
    one_line(e.value)


def test_a_raising_callback_does_not_reach_cpp(affine_path, monkeypatch):
    # Reported as unraisable (like a failing __del__), and compiling goes on.
    reported = []
    monkeypatch.setattr(sys, "unraisablehook", reported.append)
    calls = []

    def progress(line):
        calls.append(line)
        raise RuntimeError("from the callback")

    model = tessel.compile(affine_path, progress=progress)
    still_runs(model)
    assert len(reported) == len(calls)
    assert all(isinstance(r.exc_value, RuntimeError) for r in reported)
