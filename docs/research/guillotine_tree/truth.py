#!/usr/bin/env python3
"""Rebuilds the generator's tree of a shared guillotine instance, to judge
planner strategies against it (research only; tessel never reads it).

`../shared/planning/make_instances.py` is deterministic: replaying its random
cuts with the same seeds gives every buffer's rectangle and its path in the
cut tree ('T0'/'T1' for the early/late side of a cut in time, 'A0'/'A1' for
the low/high side of a cut in address). The replay is checked against the CSV.

    python3 truth.py ../../../../shared/planning/guillotine_09_4000.1048576.csv

prints, for each part between cuts in time at the top, its bands (the
pieces of its top stack of address cuts) with their heights and sizes.
"""
import csv
import random
import re
import sys

CAPACITY, SPAN, UNIT = 1 << 20, 1 << 20, 1024
SIZES = [40, 80, 120, 160, 200, 260, 320, 400, 1000, 4000]


def partition(rng, x0, x1, y0, y1, n, path):
    # The generator's recursion, unchanged in its random calls, plus the path.
    if n <= 1 or (x1 - x0 < 2 * UNIT and y1 - y0 < 2 * UNIT):
        return [((x0, x1, y0, y1), path)]
    cut_time = (x1 - x0 >= 2 * UNIT) and (y1 - y0 < 2 * UNIT or rng.random() < 0.5)
    lo, hi = (x0, x1) if cut_time else (y0, y1)
    at = lo + UNIT * rng.randint(1, (hi - lo) // UNIT - 1)
    k = max(1, min(n - 1, round(n * (at - lo) / (hi - lo))))
    c = "T" if cut_time else "A"
    if cut_time:
        return (partition(rng, x0, at, y0, y1, k, path + c + "0") +
                partition(rng, at, x1, y0, y1, n - k, path + c + "1"))
    return (partition(rng, x0, x1, y0, at, k, path + c + "0") +
            partition(rng, x0, x1, at, y1, n - k, path + c + "1"))


def load(instance_csv):
    """{buffer id: ((lower, upper, offset, size) in units of 1 KiB, path)}."""
    seed = int(re.search(r"guillotine_(\d+)_", instance_csv).group(1))
    rng = random.Random(1000 + seed)
    rects = partition(rng, 0, SPAN, 0, CAPACITY, SIZES[seed], "")
    rng.shuffle(rects)
    tree = {f"b{i}": ((x0 // UNIT, x1 // UNIT, y0 // UNIT, (y1 - y0) // UNIT), p)
            for i, ((x0, x1, y0, y1), p) in enumerate(rects)}
    for row in csv.DictReader(open(instance_csv)):
        (lower, upper, _, size), _ = tree[row["id"]]
        if (lower * UNIT, upper * UNIT, size * UNIT) != (
                int(row["lower"]), int(row["upper"]), int(row["size"])):
            sys.exit(f"{row['id']}: the replay does not match the file")
    return tree


def strip(path, kind, at):
    """The prefix of `path` up to where a run of `kind` cuts starts at `at`."""
    i = at
    while i < len(path) and path[i] == kind:
        i += 2
    return path[:i]


def part_of(path):
    return strip(path, "T", 0)


def band_of(path):
    """The band: the node below the part's top stack of address cuts."""
    return strip(path, "A", len(part_of(path)))


def chain_of(path):
    """The node whose run of cuts in time ends at this buffer: buffers of one
    chain have the same height and follow each other in time."""
    i = len(path)
    while i >= 2 and path[i - 2] == "T":
        i -= 2
    return path[:i]


if __name__ == "__main__":
    tree = load(sys.argv[1])
    parts = {}
    for key, (rect, path) in tree.items():
        parts.setdefault(part_of(path), {}).setdefault(band_of(path), []).append(rect)
    for part, bands in sorted(parts.items()):
        rects = [r for b in bands.values() for r in b]
        print(f"part {part or '(root)'}: steps [{min(r[0] for r in rects)}, "
              f"{max(r[1] for r in rects)}), {len(rects)} buffers, {len(bands)} bands")
        for band, rs in sorted(bands.items(), key=lambda kv: min(r[2] for r in kv[1])):
            low = min(r[2] for r in rs)
            high = max(r[2] + r[3] for r in rs)
            print(f"  band at {low:4d}, height {high - low:4d}: {len(rs)} buffers")
