#!/usr/bin/env python3
"""CLI and API latency side by side, in one run: the same compiled model
(.tsl, compiled once by the CLI) timed by `tessel bench`, by the C++ API
(bench/api/api_bench.cc: Load, Prepare, Session::Benchmark; as an
application runs it, and again with the CLI's GOMP_SPINCOUNT) and by the
Python binding (Session.benchmark), interleaved over rounds, each engine's
best kept (a 2-vCPU machine swings +-30%).

  bench/api/cli_vs_api.py [--build build] [--rounds 5] [--repeat 30] [MODEL.onnx ...]

Default models: the four of ../shared/models. Prints a markdown table.
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="*")
    ap.add_argument("--build", default=str(ROOT / "build"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=30)
    args = ap.parse_args()
    build = pathlib.Path(args.build)
    models = [pathlib.Path(m) for m in args.models] or sorted(
        (ROOT.parent / "shared" / "models").glob("*/model.onnx"))
    if not models:
        print("cli_vs_api: no models (../shared/models is absent)", file=sys.stderr)
        return 77
    tessel = str(build / "tessel")
    api_bench = str(build / "api_bench")
    py_env = dict(os.environ, PYTHONPATH=str(build / "python"))
    # The C++ API again with the CLI's OpenMP spin count (docs/api.md,
    # "Process settings"), which a library cannot set for its process.
    spin_env = dict(os.environ, GOMP_SPINCOUNT="100000")
    py_code = ("import sys, json, tessel; s = tessel.load(sys.argv[1]).session(); "
               "r = s.benchmark(int(sys.argv[2]), int(sys.argv[3])); "
               "print(json.dumps({'min_ms': r.min_ms, 'median_ms': r.median_ms}))")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for m in models:
            name = m.parent.name if m.name == "model.onnx" else m.stem
            tsl = pathlib.Path(tmp) / (name + ".tsl")
            subprocess.run([tessel, "compile", str(m), "-o", str(tsl)], check=True, capture_output=True)
            best = {}
            for _ in range(args.rounds):
                cli = json.loads(subprocess.run(
                    [tessel, "bench", str(tsl), "--warmup", str(args.warmup), "--repeat", str(args.repeat),
                     "--json"], check=True, capture_output=True, text=True).stdout)
                cpp = json.loads(subprocess.run(
                    [api_bench, str(tsl), str(args.warmup), str(args.repeat)], check=True,
                    capture_output=True, text=True).stdout)
                cpp_spin = json.loads(subprocess.run(
                    [api_bench, str(tsl), str(args.warmup), str(args.repeat)], check=True,
                    capture_output=True, text=True, env=spin_env).stdout)
                py = json.loads(subprocess.run(
                    ["/usr/bin/python3", "-c", py_code, str(tsl), str(args.warmup), str(args.repeat)],
                    check=True, capture_output=True, text=True, env=py_env).stdout)
                for engine, mn, md in (("cli", cli["latency_ms"]["min"], cli["latency_ms"]["median"]),
                                       ("c++", cpp["min_ms"], cpp["median_ms"]),
                                       ("c++ spin", cpp_spin["min_ms"], cpp_spin["median_ms"]),
                                       ("python", py["min_ms"], py["median_ms"])):
                    b = best.setdefault(engine, [float("inf"), float("inf")])
                    b[0], b[1] = min(b[0], mn), min(b[1], md)
            rows.append((name, best))
    print("| model | CLI min / median ms | C++ API | C++ API, GOMP_SPINCOUNT=100000 | Python API "
          "| C++/CLI | C++ spin/CLI | Python/CLI (medians) |")
    print("|---|---|---|---|---|---|---|---|")
    for name, b in rows:
        cell = lambda e: f"{b[e][0]:.2f} / {b[e][1]:.2f}"
        print(f"| {name} | {cell('cli')} | {cell('c++')} | {cell('c++ spin')} | {cell('python')} | "
              f"{b['c++'][1] / b['cli'][1]:.2f} | {b['c++ spin'][1] / b['cli'][1]:.2f} | "
              f"{b['python'][1] / b['cli'][1]:.2f} |")
    return 0

if __name__ == "__main__":
    sys.exit(main())
