#!/usr/bin/env python3
"""Runs tessel, ONNX Runtime and OpenVINO on the same models, interleaved.

Usage: compare.py TESSEL_BINARY MODEL... [--threads 1,2] [--rounds 3]
       [--warmup 5] [--repeat 30] [--isa auto|avx2] [--markdown]
       [--ort-nospin] [--json FILE]

Each (model, threads) pair runs `rounds` rounds; a round runs every engine
once, each in its own process (tessel bench --json, driver.py for the
peers), so no engine warms the caches of another and slow drifts of the
machine hit all engines alike. Per engine it keeps the best round (the
lowest per-process median latency: a 2-vCPU machine swings by +-30% from
run to run) and the median over rounds of the memory (peak RSS minus RSS
just before the model is loaded), and reports the ratio to tessel. The last line is the
geometric mean over the rows of the best peer's latency over tessel's.

--isa avx2 forces AVX2 on an AVX-512 machine: tessel runs with --isa avx2,
OpenVINO with ONEDNN_MAX_CPU_ISA=AVX2; ONNX Runtime has no such switch and
runs on what the CPU has.

A peer that fails on a model (exits non-zero or crashes) is reported as
failed with its last line, and the row compares with the others; a model
tessel fails on is reported and left out.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ENGINES = ["tessel", "onnxruntime", "openvino"]


def measure(engine, tessel, model, threads, warmup, repeat, isa="auto"):
    env = dict(os.environ)
    if engine == "tessel":
        cmd = [tessel, "bench", model, "--json", "--threads", str(threads), "--warmup", str(warmup),
               "--repeat", str(repeat)]
        if isa != "auto":
            cmd += ["--isa", isa]
    else:
        cmd = [sys.executable, os.path.join(HERE, "driver.py"), engine, model, "--threads",
               str(threads), "--warmup", str(warmup), "--repeat", str(repeat)]
        if isa != "auto" and engine == "openvino":
            env["ONEDNN_MAX_CPU_ISA"] = isa.upper()
            env["DNNL_MAX_CPU_ISA"] = isa.upper()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out[out.index("{"):])


def geomean(values):
    values = [v for v in values if v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else 0.0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("tessel")
    p.add_argument("models", nargs="+")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--repeat", type=int, default=30)
    p.add_argument("--isa", default="auto", choices=["auto", "avx2"])
    p.add_argument("--json", default="", help="also write the results to this file")
    p.add_argument("--markdown", action="store_true", help="print a Markdown table")
    p.add_argument("--ort-nospin", action="store_true",
                   help="also ONNX Runtime with intra-op spinning off (one more column)")
    a = p.parse_args()
    engines = ENGINES + (["onnxruntime-nospin"] if a.ort_nospin else [])
    rows = []
    for model in a.models:
        name = os.path.basename(os.path.dirname(os.path.abspath(model))) or model
        for threads in [int(t) for t in a.threads.split(",")]:
            results = {e: [] for e in engines}
            failed = {}
            for _ in range(a.rounds):
                for engine in engines:
                    if engine in failed:
                        continue
                    try:
                        results[engine].append(
                            measure(engine, a.tessel, model, threads, a.warmup, a.repeat, a.isa))
                    except subprocess.CalledProcessError as e:
                        # A peer that crashes on a model (OpenVINO forced to
                        # AVX2 has) is reported, and the others go on.
                        why = (e.stderr or "").strip().splitlines()[-1:] or [f"exit {e.returncode}"]
                        failed[engine] = why[0]
            if "tessel" in failed:
                print(f"# {name} threads={threads}: tessel failed: {failed['tessel']}",
                      file=sys.stderr)
                continue
            summary = {}
            for engine, rs in results.items():
                if rs:
                    summary[engine] = (min(r["latency_ms"]["median"] for r in rs),
                                       statistics.median(r["rss_delta_bytes"] for r in rs))
            rows.append((name, threads, summary))
            print(f"# {name} threads={threads}: " + ", ".join(
                f"{e} {summary[e][0]:.2f} ms {summary[e][1] / 2**20:.1f} MiB" if e in summary
                else f"{e} failed ({failed[e]})" for e in engines), file=sys.stderr)
    names = {"tessel": "tessel", "onnxruntime": "ORT", "openvino": "OpenVINO",
             "onnxruntime-nospin": "ORT no-spin"}
    peers = [e for e in engines if e != "tessel"]
    header = (["model", "threads"] + [f"{names[e]} ms" for e in engines] +
              [f"{names[e]} / tessel" for e in peers] + [f"{names[e]} MiB" for e in engines])
    rows_out = []
    for name, threads, s in rows:
        t = s["tessel"]
        rows_out.append([name, str(threads)] +
                        [f"{s[e][0]:.2f}" if e in s else "failed" for e in engines] +
                        [f"{s[e][0] / t[0]:.2f}" if e in s else "-" for e in peers] +
                        [f"{s[e][1] / 2**20:.1f}" if e in s else "-" for e in engines])
    speedups = [min(s[e][0] for e in peers if e in s) / s["tessel"][0] for _, _, s in rows
                if any(e in s for e in peers)]
    summary_line = (f"geometric mean of the best peer's latency over tessel's: "
                    f"{geomean(speedups):.2f} over {len(speedups)} rows; tessel fastest in "
                    f"{sum(1 for x in speedups if x >= 1)}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"isa": a.isa, "rows": [{"model": n, "threads": t, "engines": {
                e: {"ms": v[0], "rss_delta_bytes": v[1]} for e, v in s.items()}}
                for n, t, s in rows], "geomean_speedup": geomean(speedups)}, f, indent=1)
    if a.markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for r in rows_out:
            print("| " + " | ".join(r) + " |")
    else:
        widths = [max(len(h), max(len(r[i]) for r in rows_out)) for i, h in enumerate(header)]
        print("  ".join(h.rjust(w) for h, w in zip(header, widths)))
        for r in rows_out:
            print("  ".join(c.rjust(w) for c, w in zip(r, widths)))
    print(summary_line)


if __name__ == "__main__":
    main()
