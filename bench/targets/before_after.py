#!/usr/bin/env python3
"""Latency of two tessel binaries side by side on the shared models.

    bench/targets/before_after.py OLD_TESSEL NEW_TESSEL [--rounds 5] [--repeat 30]

Interleaves the binaries over several rounds (each round runs every model on
each binary, `tessel bench --json`) and keeps each binary's best median per
model, since a small shared machine swings from run to run. Prints a
Markdown table: median ms of each, and new / old.
"""
import argparse
import json
import pathlib
import subprocess
import sys

SHARED = pathlib.Path(__file__).resolve().parents[2].parent / "shared" / "models"


def median_ms(binary, model, repeat, extra):
    out = subprocess.run([binary, "bench", str(model), "--repeat", str(repeat), "--warmup", "5",
                          "--json", *extra], check=True, capture_output=True, text=True).stdout
    return json.loads(out)["latency_ms"]["median"]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--repeat", type=int, default=30)
    p.add_argument("--shared", default=str(SHARED))
    p.add_argument("extra", nargs="*", help="options passed to both, after --")
    args = p.parse_args()
    models = sorted(d for d in pathlib.Path(args.shared).iterdir() if (d / "model.onnx").exists())
    best = {}
    for r in range(args.rounds):
        for m in models:
            for name, binary in (("old", args.old), ("new", args.new)):
                ms = median_ms(binary, m / "model.onnx", args.repeat, args.extra)
                key = (m.name, name)
                best[key] = min(best.get(key, float("inf")), ms)
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
    print("| model | before (ms) | after (ms) | after / before |")
    print("|---|---:|---:|---:|")
    for m in models:
        old, new = best[(m.name, "old")], best[(m.name, "new")]
        print(f"| {m.name} | {old:.3f} | {new:.3f} | {new / old:.2f} |")


if __name__ == "__main__":
    main()
