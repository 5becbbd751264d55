#!/usr/bin/env python3
"""Measures one engine on one model in this process and prints JSON.

Usage: driver.py ENGINE MODEL --threads N --warmup N --repeat N
ENGINE: onnxruntime | onnxruntime-nospin (intra-op threads sleep instead of
spinning, like tessel with OMP_WAIT_POLICY=passive) | openvino.

Memory is measured as tessel bench measures itself: peak resident set
(VmHWM) minus the resident set just before the model is loaded (the engine's
module is already imported then). Inputs are seeded random values like
tessel's (floats in [-1, 1), integers in [0, 8)).
"""
import argparse
import json
import statistics
import sys
import time

import numpy as np


def proc_status_bytes(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


NUMPY_TYPES = {
    "tensor(float)": np.float32, "tensor(double)": np.float64, "tensor(int64)": np.int64,
    "tensor(int32)": np.int32, "tensor(bool)": np.bool_, "f32": np.float32, "i64": np.int64,
    "i32": np.int32, "f64": np.float64, "boolean": np.bool_,
}


def random_input(shape, dtype, rng):
    if np.issubdtype(dtype, np.floating):
        return rng.uniform(-1, 1, size=shape).astype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    return rng.integers(0, 8, size=shape).astype(dtype)


def load_onnxruntime(model, threads, rng, spin=True):
    import onnxruntime as ort
    before = proc_status_bytes("VmRSS")
    so = ort.SessionOptions()
    if not spin:
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    feeds = {i.name: random_input([d if isinstance(d, int) else 1 for d in i.shape],
                                  NUMPY_TYPES[i.type], rng) for i in sess.get_inputs()}
    return before, lambda: sess.run(None, feeds), ort.__version__


def load_openvino(model, threads, rng):
    import openvino as ov
    core = ov.Core()
    before = proc_status_bytes("VmRSS")
    # float32 like the others: without the hint OpenVINO may run bf16 on CPUs
    # that have it.
    compiled = core.compile_model(model, "CPU", {
        "INFERENCE_NUM_THREADS": threads, "NUM_STREAMS": 1, "PERFORMANCE_HINT": "LATENCY",
        "INFERENCE_PRECISION_HINT": "f32"})
    request = compiled.create_infer_request()
    feeds = {}
    for port in compiled.inputs:
        shape = [int(d) for d in port.get_partial_shape().to_shape()]
        feeds[port.any_name] = random_input(shape, NUMPY_TYPES[port.get_element_type().get_type_name()], rng)
    return before, lambda: request.infer(feeds), ov.get_version()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("engine", choices=["onnxruntime", "onnxruntime-nospin", "openvino"])
    p.add_argument("model")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--repeat", type=int, default=20)
    a = p.parse_args()
    rng = np.random.default_rng(1)
    if a.engine == "openvino":
        before, run, version = load_openvino(a.model, a.threads, rng)
    else:
        before, run, version = load_onnxruntime(a.model, a.threads, rng,
                                                spin=a.engine == "onnxruntime")
    for _ in range(a.warmup):
        run()
    times = []
    for _ in range(a.repeat):
        t0 = time.perf_counter()
        run()
        times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    peak = proc_status_bytes("VmHWM")
    json.dump({"engine": a.engine, "version": str(version), "model": a.model, "threads": a.threads,
               "runs": a.repeat,
               "latency_ms": {"min": times[0], "median": statistics.median(times),
                              "p90": times[min(len(times) - 1, int(0.9 * len(times)))]},
               "rss_before_load_bytes": before, "peak_rss_bytes": peak,
               "rss_delta_bytes": peak - before}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
