#!/usr/bin/env python3
"""Yardstick, not part of tessel: the smallest balanced set of a part that
has a seam at a given step, found by OR-tools CP-SAT (pip install ortools,
in a scratch virtual environment), and how it spreads over the tree's bands.

  seam_cpsat.py INSTANCE PART STEP...

A set is balanced when its live sizes add up to the same total at every
moment of the part; it has a seam at STEP when none of its buffers crosses
STEP. Every true band with a cut in time at STEP is such a set.
"""
import sys
import time
from collections import Counter

from ortools.sat.python import cp_model

import truth


def smallest(tree, part, step):
    items = {k: (r[0], r[1], r[3]) for k, (r, p) in tree.items() if truth.part_of(p) == part}
    x0 = min(s for s, _, _ in items.values())
    x1 = max(e for _, e, _ in items.values())
    height = sum(h for s, _, h in items.values() if s == x0)
    m = cp_model.CpModel()
    z = {k: m.NewBoolVar(k) for k in items}
    total = m.NewIntVar(1, height - 1, "total")
    moments = sorted({s for s, _, _ in items.values()} | {e for _, e, _ in items.values()})
    for t in moments:
        starting = sum(h * z[k] for k, (s, _, h) in items.items() if s == t)
        ending = sum(h * z[k] for k, (_, e, h) in items.items() if e == t)
        if t == x0:
            m.Add(starting == total)
        elif t == x1:
            m.Add(ending == total)
        else:
            m.Add(starting == ending)
    for k, (s, e, _) in items.items():
        if s < step < e:
            m.Add(z[k] == 0)
    m.Minimize(total)
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = 30
    solver.parameters.num_workers = 2
    began = time.time()
    status = solver.Solve(m)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        print(f"step {step}: {solver.StatusName(status)}")
        return
    chosen = [k for k in items if solver.Value(z[k])]
    bands = Counter(truth.band_of(tree[k][1]) for k in chosen)
    sizes = Counter(truth.band_of(p) for k, (_, p) in tree.items() if truth.part_of(p) == part)
    spread = ", ".join(f"{n} of {sizes[b]}" for b, n in bands.most_common())
    print(f"step {step}: total {solver.Value(total)}, {len(chosen)} buffers "
          f"({solver.StatusName(status)}, {time.time() - began:.1f} s) from "
          f"{len(bands)} bands: {spread}")


if __name__ == "__main__":
    tree = truth.load(sys.argv[1])
    for step in sys.argv[3:]:
        smallest(tree, sys.argv[2], int(step))
