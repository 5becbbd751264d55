#!/usr/bin/env python3
"""The share of a model's run that copies data (issue 38's Done-when 3).

    bench/gpu/copy_share.py TESSEL MODEL... [--target opencl|cpu] [--repeat 30]

Runs `TESSEL bench MODEL --profile` per model and prints, per model, the
median latency, the kernel time and the share of it in copies: on cpu the
Transpose, Concat, Split, Slice and Expand kernels that move data (views and
relayouts that move nothing are not counted; `--profile --json`); on opencl
the copy kernels among the profile's listed ones (strided copies, gathers,
concatenations), with the share of the kernels the profile does not list
(it names the 15 slowest) as an upper bound on what more could be copies.
Also the share of attention kernels. Single runs at these sizes swing by up
to 2x on a 2-vCPU machine; compare shares, not milliseconds.
"""
import argparse
import json
import re
import subprocess

CPU_COPIES = ("Transpose", "Concat", "Split", "Slice", "Expand")
GPU_COPIES = ("copy", "transpose", "concat", "gather", "slice", "split", "expand", "shuffle")


def cpu_share(tessel, model, repeat):
    out = subprocess.run([tessel, "bench", model, "--threads", "2", "--repeat", str(repeat),
                          "--profile", "--json"], capture_output=True, text=True, check=True)
    d = json.loads(out.stdout)
    prof = d["profile"]
    total = sum(e["ms"] for e in prof) or 1.0
    copies = sum(e["ms"] for e in prof if e["op_type"] in CPU_COPIES and "view" not in e["kernel"]
                 and "relayout" not in e["kernel"])
    attention = sum(e["ms"] for e in prof if e["op_type"] == "FusedAttention")
    return d["latency_ms"]["median"], total, copies / total, 0.0, attention / total


def gpu_share(tessel, model, repeat):
    out = subprocess.run([tessel, "bench", model, "--target", "opencl", "--profile", "--warmup",
                          "5", "--repeat", str(repeat)], capture_output=True, text=True,
                         check=True).stdout
    head = re.search(r"(\d+) launches, ([\d.]+) ms of kernels", out)
    latency = re.search(r"median ([\d.]+) ms", out)
    total = float(head.group(2)) or 1.0
    rows = re.findall(r"^  (\S+)\s+([\d.]+)\s+([\d.]+)%\s+(\d+)", out, re.M)
    listed = sum(float(ms) for _, ms, _, _ in rows)
    copies = sum(float(ms) for k, ms, _, _ in rows if any(w in k for w in GPU_COPIES))
    attention = sum(float(ms) for k, ms, _, _ in rows if "attention" in k)
    return (float(latency.group(1)), total, copies / total, max(total - listed, 0.0) / total,
            attention / total)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("tessel")
    p.add_argument("models", nargs="+")
    p.add_argument("--target", choices=["cpu", "opencl"], default="opencl")
    p.add_argument("--repeat", type=int, default=30)
    args = p.parse_args()
    measure = gpu_share if args.target == "opencl" else cpu_share
    for m in args.models:
        try:
            ms, total, copies, unlisted, attention = measure(args.tessel, m, args.repeat)
        except (subprocess.CalledProcessError, AttributeError, KeyError) as e:
            print(f"{m}: not measured ({type(e).__name__})")
            continue
        extra = f" (+{unlisted * 100:.1f}% unlisted)" if args.target == "opencl" else ""
        print(f"{m}: {ms:.3f} ms, kernels {total:.3f} ms, copies {copies * 100:.1f}%{extra}, "
              f"attention {attention * 100:.1f}%")


if __name__ == "__main__":
    main()
