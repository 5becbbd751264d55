#!/usr/bin/env python3
"""Runs tessel, ONNX Runtime and OpenVINO on the same models, interleaved.

Usage: compare.py TESSEL_BINARY MODEL... [--threads 1,2] [--rounds 3]
       [--warmup 5] [--repeat 30] [--markdown] [--ort-nospin]

Each (model, threads) pair runs `rounds` rounds; a round runs every engine
once, each in its own process (tessel bench --json, driver.py for the
peers), so no engine warms the caches of another and slow drifts of the
machine hit all engines alike. Per engine it reports the median over rounds
of the per-process median latency and of the memory (peak RSS minus RSS just
before the model is loaded), and the ratio to tessel.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ENGINES = ["tessel", "onnxruntime", "openvino"]


def measure(engine, tessel, model, threads, warmup, repeat):
    if engine == "tessel":
        cmd = [tessel, "bench", model, "--json", "--threads", str(threads), "--warmup", str(warmup),
               "--repeat", str(repeat)]
    else:
        cmd = [sys.executable, os.path.join(HERE, "driver.py"), engine, model, "--threads",
               str(threads), "--warmup", str(warmup), "--repeat", str(repeat)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out[out.index("{"):])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("tessel")
    p.add_argument("models", nargs="+")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--repeat", type=int, default=30)
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
            for _ in range(a.rounds):
                for engine in engines:
                    results[engine].append(measure(engine, a.tessel, model, threads, a.warmup, a.repeat))
            summary = {}
            for engine, rs in results.items():
                summary[engine] = (statistics.median(r["latency_ms"]["median"] for r in rs),
                                   statistics.median(r["rss_delta_bytes"] for r in rs))
            rows.append((name, threads, summary))
            print(f"# {name} threads={threads}: " + ", ".join(
                f"{e} {summary[e][0]:.2f} ms {summary[e][1] / 2**20:.1f} MiB" for e in engines),
                file=sys.stderr)
    names = {"tessel": "tessel", "onnxruntime": "ORT", "openvino": "OpenVINO",
             "onnxruntime-nospin": "ORT no-spin"}
    peers = [e for e in engines if e != "tessel"]
    header = (["model", "threads"] + [f"{names[e]} ms" for e in engines] +
              [f"{names[e]} / tessel" for e in peers] + [f"{names[e]} MiB" for e in engines])
    rows_out = []
    for name, threads, s in rows:
        t = s["tessel"]
        rows_out.append([name, str(threads)] + [f"{s[e][0]:.2f}" for e in engines] +
                        [f"{s[e][0] / t[0]:.2f}" for e in peers] +
                        [f"{s[e][1] / 2**20:.1f}" for e in engines])
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


if __name__ == "__main__":
    main()
