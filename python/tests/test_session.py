"""Sessions: threads, outputs in place, zero-copy inputs, plan, profile,
save and load."""

import pickle
import threading
import time

import numpy as np
import pytest

import tessel
from conftest import MODELS, SHARED, compiled_shared, shared_io

X = np.arange(4, dtype=np.float32).reshape(1, 4)


def test_version_and_targets():
    assert tessel.__version__.count(".") == 2
    assert "cpu" in tessel.targets() and "reference" in tessel.targets()
    assert isinstance(tessel.devices(), list)
    assert tessel.planner_algorithms()


def test_model_describes_itself(affine, affine_path):
    (i,) = affine.inputs
    (o,) = affine.outputs
    assert (i.name, i.dtype, i.shape, i.type) == ("input", np.dtype(np.float32), (1, 4), "float32")
    assert (o.name, o.dtype, o.shape) == ("output", np.dtype(np.float32), (1, 4))
    assert affine.target == "cpu"
    assert affine.description.startswith("cpu")
    assert isinstance(affine.target_options, dict)
    assert affine.source == str(affine_path)
    assert "input" in repr(affine)
    assert isinstance(affine.summary(), str)


def test_plan_and_svg(affine, tmp_path):
    plan = affine.plan
    assert plan.workspace_bytes >= plan.lower_bound_bytes >= 0
    assert plan.algorithm
    assert all(isinstance(p, tessel.PlanPool) for p in plan.pools)
    svg = plan.svg(tmp_path / "plan.svg")
    assert "<svg" in svg
    assert (tmp_path / "plan.svg").read_text() == svg


def test_plan_of_a_shared_model():
    plan = compiled_shared("squeezenet1_1").plan
    assert plan.workspace_bytes >= plan.lower_bound_bytes > 0
    kinds = {b.kind for b in plan.buffers}
    assert "activation" in kinds, kinds
    pools = {p.name for p in plan.pools}
    assert all(b.pool in pools for b in plan.buffers if b.pool)
    assert all(b.first_step <= b.last_step and b.size_bytes >= 0 for b in plan.buffers)
    assert "<svg" in plan.svg()


def test_plan_instance():
    csvs = sorted((SHARED / "planning").glob("*.csv")) if (SHARED / "planning").exists() else []
    if not csvs:
        pytest.skip(f"skipped: no planning instance in {SHARED / 'planning'}")
    p = tessel.plan_instance(csvs[0])
    assert p.pool_bytes >= p.lower_bound_bytes > 0
    assert len(p.offsets) == p.buffers
    assert "<svg" in p.svg()


def test_save_load_serialize_pickle_round_trip(affine, tmp_path):
    path = tmp_path / "affine.tsl"
    affine.save(path)
    for m in (tessel.load(path), tessel.load(str(path)), tessel.deserialize(affine.serialize()),
              pickle.loads(pickle.dumps(affine))):
        np.testing.assert_array_equal(m.run({"input": X})["output"], X * 2 + 1)
        assert [i.name for i in m.inputs] == ["input"]


def test_outputs_are_written_in_place(affine):
    s = affine.session()
    out = np.full((1, 4), -7, np.float32)
    result = s.run({"input": X}, outputs={"output": out})
    assert result["output"] is out  # the caller's array, no new one
    np.testing.assert_array_equal(out, X * 2 + 1)


def test_c_contiguous_inputs_are_lent_not_copied(affine):
    s = affine.session()
    before = tessel._tessel._input_copies()
    s.run({"input": X})
    assert tessel._tessel._input_copies() == before
    strided = np.zeros((1, 8), np.float32)[:, ::2]  # not contiguous: copied once
    strided[:] = X
    np.testing.assert_array_equal(s.run({"input": strided})["output"], X * 2 + 1)
    assert tessel._tessel._input_copies() == before + 1
    swapped = X.astype(">f4")  # another byte order: copied
    np.testing.assert_array_equal(s.run({"input": swapped})["output"], X * 2 + 1)


def test_outputs_own_their_memory(affine):
    out = affine.session().run({"input": X})["output"]
    out2 = affine.run({"input": X + 1})["output"]
    assert out.flags.writeable and out.flags.c_contiguous
    np.testing.assert_array_equal(out, X * 2 + 1)
    np.testing.assert_array_equal(out2, X * 2 + 3)


def test_profile_benchmark_stats(affine):
    s = affine.session(profile=True, threads=1)
    for _ in range(3):
        s.run({"input": X})
    rows = s.profile()
    assert rows and all(r.nodes >= 1 and r.ms >= 0 for r in rows)
    assert isinstance(s.profile_report(), str)
    b = s.benchmark(warmup=1, repeat=5)
    assert b.runs == 5 and 0 <= b.min_ms <= b.median_ms
    assert s.stats.threads >= 1
    assert s.description.startswith("cpu")


def test_notes_and_progress_reach_python(affine_path):
    lines = []
    model = tessel.compile(affine_path, progress=lines.append)
    model.session(note=lines.append)
    assert all(isinstance(line, str) for line in lines)


def _threads_over_two_sessions(model, feeds_list, threads=8, runs=20):
    expected = [model.session().run(f) for f in feeds_list]
    sessions = [model.session(), model.session()]
    failures = []

    def work(t):
        s = sessions[t % 2]
        for r in range(runs):
            k = (t + r) % len(feeds_list)
            got = s.run(feeds_list[k])
            for name, want in expected[k].items():
                if not np.array_equal(got[name], want):
                    failures.append((t, r, name))

    ts = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not failures, failures[:5]


def test_threads_over_two_sessions_small_model(affine):
    feeds = [{"input": X + k} for k in range(4)]
    _threads_over_two_sessions(affine, feeds)


def test_threads_over_two_sessions_shared_model():
    model = compiled_shared("squeezenet1_1")
    x, _ = shared_io("squeezenet1_1")
    feeds = [{model.inputs[0].name: x * s} for s in (1.0, 0.5, -1.0)]
    _threads_over_two_sessions(model, feeds, threads=8, runs=20)


@pytest.mark.parametrize("call", ["run", "benchmark"])
def test_the_gil_is_released_while_running(call):
    # Python in the main thread goes on during one call in another thread:
    # stamps in the middle of the call's span (none if it held the GIL).
    model = compiled_shared("squeezenet1_1")
    x, _ = shared_io("squeezenet1_1")
    s = model.session()
    feeds = {model.inputs[0].name: x}
    s.run(feeds)
    span = {}

    def work():
        span["start"] = time.perf_counter()
        if call == "run":
            s.run(feeds)
        else:
            s.benchmark(warmup=0, repeat=3)
        span["end"] = time.perf_counter()

    t = threading.Thread(target=work)
    stamps = []
    t.start()
    while t.is_alive():
        stamps.append(time.perf_counter())
    t.join()
    a, b = span["start"], span["end"]
    middle = [x for x in stamps if a + 0.25 * (b - a) < x < a + 0.75 * (b - a)]
    assert middle, f"no Python ran during {call} ({(b - a) * 1e3:.1f} ms)"


def test_opencl_runs_like_the_reference_and_tunes(affine_path, tmp_path):
    if "opencl" not in tessel.targets():
        pytest.skip("this build has no OpenCL target")
    if not tessel.devices():
        pytest.skip("no OpenCL device (install pocl-opencl-icd)")
    cache = tmp_path / "tuning.json"
    model = tessel.compile(affine_path, target="opencl", tuning_cache=str(cache))
    assert model.target == "opencl"
    ref = tessel.compile(affine_path, target="reference")
    np.testing.assert_allclose(model.run({"input": X})["output"], ref.run({"input": X})["output"],
                               rtol=1e-6)
    result = tessel.tune(model, budget_seconds=5, rounds=1, repeat=2)
    assert result.kernels >= 1 and result.device
    assert cache.exists()  # saved where the model's options say
    with pytest.raises(tessel.Error, match="nothing to tune"):
        tessel.tune(ref)
