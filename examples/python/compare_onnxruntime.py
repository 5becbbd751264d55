"""Latency of tessel vs ONNX Runtime on one model, in interleaved rounds,
each engine's best round kept.  Exits 77 without onnxruntime.
python3 compare_onnxruntime.py [MODEL_DIR] [--threads N] [--rounds R] [--runs K]"""
import argparse
import pathlib
import sys
import time

import tessel

try:
    import onnxruntime as ort
except ImportError:
    print("skipped: onnxruntime is not installed (pip install onnxruntime)")
    sys.exit(77)

root = pathlib.Path(__file__).resolve().parents[2]
p = argparse.ArgumentParser()
p.add_argument("dir", nargs="?", default=str(root.parent / "shared/models/mobilenet_v2"))
p.add_argument("--threads", type=int, default=1)
p.add_argument("--rounds", type=int, default=5)
p.add_argument("--runs", type=int, default=20)
args = p.parse_args()
d = pathlib.Path(args.dir)

x = tessel.read_tensor(d / "test_data_set_0/input_0.pb")
session = tessel.compile(d / "model.onnx", threads=args.threads).session()
name = session.inputs[0].name
so = ort.SessionOptions()
so.intra_op_num_threads = so.inter_op_num_threads = args.threads
ref = ort.InferenceSession(str(d / "model.onnx"), so, providers=["CPUExecutionProvider"])
engines = {"tessel": lambda: session.run({name: x}),
           "onnxruntime": lambda: ref.run(None, {ref.get_inputs()[0].name: x})}

best = {k: float("inf") for k in engines}
for f in engines.values():  # warm up
    f()
for _ in range(args.rounds):
    for k, f in engines.items():
        t = time.perf_counter()
        for _ in range(args.runs):
            f()
        best[k] = min(best[k], (time.perf_counter() - t) / args.runs * 1e3)
print(f"{d.name}, {args.threads} thread(s), best of {args.rounds} rounds of {args.runs} runs:")
for k, ms in best.items():
    print(f"  {k:12s} {ms:8.3f} ms")
print(f"  tessel / onnxruntime: {best['tessel'] / best['onnxruntime']:.2f}x")
