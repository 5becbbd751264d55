#!/usr/bin/env python3
"""Sixth-round measurements on a shared guillotine instance, judged against
the generator's tree (truth.py). Research only.

  judge.py anchors INSTANCE       bands whose height some buffer has alone
  judge.py series INSTANCE HMIN   same-height buffers where one ends as the
                                  other starts, the only such pair at that
                                  moment and height: how many the tree joins
  judge.py merge INSTANCE HMIN OUT.csv
                                  joins those pairs (repeatedly) into one
                                  buffer and writes the smaller instance
  judge.py merge-tree INSTANCE OUT.csv
                                  joins exactly the tree's runs of buffers
                                  that follow each other in one chain
  judge.py collapse INSTANCE K OUT.csv [FRACTION SEED]
                                  replaces each largest subtree of at most K
                                  buffers by one buffer (its bounding box),
                                  or only a random FRACTION of them
  judge.py generate N COUNT DIR   writes COUNT instances of about N buffers,
                                  made like the shared ones with other seeds
                                  (seed i: 7919 * i + N), as DIR/gN_i.1048576.csv
  judge.py drop-bands INSTANCE PART HEIGHTS OUT_PREFIX
                                  writes PART without its bands of the given
                                  heights (comma-separated), capacity in name
Sizes and steps are in units of 1 KiB, as the generator makes them.
"""
import random
import sys
from collections import defaultdict

import truth


def buffers(tree):
    return {k: (r[0], r[1], r[3]) for k, (r, _) in tree.items()}


def write(path, items):
    with open(path, "w") as out:
        out.write("id,lower,upper,size\n")
        for k, (s, e, h) in items.items():
            out.write(f"{k},{s * truth.UNIT},{e * truth.UNIT},{h * truth.UNIT}\n")


def unique_pairs(items, hmin):
    """(a, b): a ends where b starts, same height >= hmin, no other such pair."""
    starting, ending = defaultdict(list), defaultdict(list)
    for k, (s, e, h) in items.items():
        starting[(s, h)].append(k)
        ending[(e, h)].append(k)
    for k, (s, e, h) in items.items():
        if h >= hmin and len(starting[(e, h)]) == 1 and len(ending[(e, h)]) == 1:
            yield k, starting[(e, h)][0]


def anchors(tree):
    by_band = defaultdict(list)
    heights = defaultdict(int)
    for k, (r, p) in tree.items():
        by_band[(truth.part_of(p), truth.band_of(p))].append(k)
        heights[(truth.part_of(p), r[3])] += 1
    for (part, band), keys in sorted(by_band.items(), key=lambda kv: -len(kv[1])):
        alone = [k for k in keys if truth.chain_of(tree[k][1]) == band]
        height = tree[alone[0]][0][3] if alone else None
        same = heights[(part, height)] - len(alone) if alone else 0
        print(f"part {part}: band of {len(keys)} buffers: "
              + (f"height {height}, {len(alone)} buffers span it alone, "
                 f"{same} others in the part have that height" if alone
                 else "no buffer spans it alone"))


def series(tree, hmin):
    items = buffers(tree)
    joined = apart = 0
    for a, b in unique_pairs(items, hmin):
        if truth.chain_of(tree[a][1]) == truth.chain_of(tree[b][1]):
            joined += 1
        else:
            apart += 1
    print(f"height >= {hmin}: {joined + apart} unique pairs, {joined} in one chain, {apart} not")


def merge(tree, hmin, out):
    items = buffers(tree)
    merges = 0
    while True:
        pairs = list(unique_pairs(items, hmin))
        done = set()
        for a, b in pairs:
            if a in done or b in done:
                continue
            items[a] = (items[a][0], items[b][1], items[a][2])
            del items[b]
            done.update((a, b))
            merges += 1
        if not done:
            break
    write(out, items)
    print(f"{merges} joins, {len(items)} buffers left: {out}")


def merge_tree(tree, out):
    items = {}
    chains = defaultdict(list)
    for k, (r, p) in tree.items():
        chains[truth.chain_of(p)].append(k)
    for keys in chains.values():
        keys.sort(key=lambda k: tree[k][0][0])
        run = [keys[0]]
        for k in keys[1:] + [None]:
            last = tree[run[-1]][0]
            if k is not None and tree[k][0][0] == last[1] and tree[k][0][2:] == last[2:]:
                run.append(k)
                continue
            first = tree[run[0]][0]
            items[run[0]] = (first[0], last[1], first[3])
            run = [k]
    write(out, items)
    print(f"{len(tree) - len(items)} joins, {len(items)} buffers left: {out}")


def collapse(tree, k, out, fraction=1.0, seed=1):
    rng = random.Random(seed)
    leaves = defaultdict(int)
    for _, p in tree.values():
        for i in range(0, len(p) + 1, 2):
            leaves[p[:i]] += 1
    tops = defaultdict(list)
    for key, (_, p) in tree.items():
        top = next(p[:i] for i in range(0, len(p) + 1, 2) if leaves[p[:i]] <= k)
        tops[top].append(key)
    items = {}
    for keys in tops.values():
        rects = [tree[x][0] for x in keys]
        if len(keys) > 1 and rng.random() < fraction:
            low = min(r[2] for r in rects)
            items[keys[0]] = (min(r[0] for r in rects), max(r[1] for r in rects),
                              max(r[2] + r[3] for r in rects) - low)
        else:
            items.update({x: (r[0], r[1], r[3]) for x, r in zip(keys, rects)})
    write(out, items)
    print(f"{len(items)} buffers: {out}")


def generate(n, count, folder):
    for i in range(1, count + 1):
        rng = random.Random(7919 * i + n)
        rects = truth.partition(rng, 0, truth.SPAN, 0, truth.CAPACITY, n, "")
        rng.shuffle(rects)
        path = f"{folder}/g{n}_{i}.{truth.CAPACITY}.csv"
        write(path, {f"b{j}": (x0 // truth.UNIT, x1 // truth.UNIT, (y1 - y0) // truth.UNIT)
                     for j, ((x0, x1, y0, y1), _) in enumerate(rects)})
        print(path)


def drop_bands(tree, part, heights, prefix):
    by_band = defaultdict(list)
    for k, (r, p) in tree.items():
        if truth.part_of(p) == part:
            by_band[truth.band_of(p)].append(k)
    items = {}
    for keys in by_band.values():
        rects = [tree[k][0] for k in keys]
        height = max(r[2] + r[3] for r in rects) - min(r[2] for r in rects)
        if height not in heights:
            items.update({k: (tree[k][0][0], tree[k][0][1], tree[k][0][3]) for k in keys})
    start = min(s for s, _, _ in items.values())
    capacity = sum(h for s, _, h in items.values() if s == start) * truth.UNIT
    out = f"{prefix}.{capacity}.csv"
    write(out, items)
    print(f"{len(items)} buffers: {out}")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    if sys.argv[1] == "generate":
        generate(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
        sys.exit(0)
    cmd, inst = sys.argv[1], sys.argv[2]
    tree = truth.load(inst)
    if cmd == "anchors":
        anchors(tree)
    elif cmd == "series":
        series(tree, int(sys.argv[3]))
    elif cmd == "merge":
        merge(tree, int(sys.argv[3]), sys.argv[4])
    elif cmd == "merge-tree":
        merge_tree(tree, sys.argv[3])
    elif cmd == "collapse":
        extra = sys.argv[5:7]
        collapse(tree, int(sys.argv[3]), sys.argv[4],
                 float(extra[0]) if extra else 1.0, int(extra[1]) if len(extra) > 1 else 1)
    elif cmd == "drop-bands":
        drop_bands(tree, sys.argv[3], {int(h) for h in sys.argv[4].split(",")}, sys.argv[5])
    else:
        sys.exit(__doc__)
