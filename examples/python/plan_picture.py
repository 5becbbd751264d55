"""Write a model's memory plan as SVG: schedule across, address down.
python3 plan_picture.py MODEL.onnx [OUT.svg] [--planner NAME]"""
import argparse

import tessel

p = argparse.ArgumentParser()
p.add_argument("model")
p.add_argument("out", nargs="?", default="plan.svg")
p.add_argument("--planner", default="auto")
args = p.parse_args()

plan = tessel.compile(args.model, planner=args.planner).plan
plan.svg(args.out)
print(f"{args.out}: {plan.algorithm}, {len(plan.buffers)} buffers, workspace "
      f"{plan.workspace_bytes / 2**20:.2f} MiB (lower bound {plan.lower_bound_bytes / 2**20:.2f} MiB)")
for pool in plan.pools:
    print(f"  pool {pool.name}: {pool.size_bytes} bytes{' (read-only)' if pool.read_only else ''}")
