#!/usr/bin/env python3
"""Zero-waste packing by a sweep in time over PQ-trees (research prototype).

Not part of tessel: a reference for a possible C++ strategy, measured in
docs/benchmarks.md ("guillotine_09_4000: fourth round").

In a zero-waste packing every address is taken at every moment, so at each
moment t the buffers ending at t fall into address blocks ("junctions"), and
the buffers starting at t fill exactly those blocks. The sweep keeps, as a
PQ-tree, every bottom-to-top order of the live buffers that the junctions so
far allow. At t it chooses the junctions: groups of enders with groups of
starters of equal total. Each group of enders must be made consecutive
(`reduce`); the group's starters then replace it as one new P-node. A
packing exists when the sweep reaches the last moment; `extract` walks back
from it to offsets, and `check` verifies them.

Constraints applied early ("eager"): when every balanced way to pair the
enders and starters of a future moment t' keeps a set F of enders as one
block, F must be consecutive from the moment its last member starts (in a
zero-waste packing, whatever lies between two live buffers keeps lying
between them). If that moment has a single ender e, F minus the starters
there plus e must already be consecutive one moment earlier, and so on.

Usage: pq_sweep.py INSTANCE.csv [NODE_BUDGET]
"""
import collections
import csv
import functools
import itertools
import os
import sys
import time

sys.setrecursionlimit(1000000)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pq_tree import Fail, clone, is_leaf, leaf, leaves, normalize, reduce, substitute  # noqa: E402

UNIT = 1024  # the shared instances use multiples of 1 KiB in time and size


def load(path):
    rows = list(csv.DictReader(open(path)))
    return [(r['id'], int(r['lower']) // UNIT, int(r['upper']) // UNIT, int(r['size']) // UNIT) for r in rows]


class Sweep:
    def __init__(self, items):
        self.items = items
        self.times = sorted({i[1] for i in items} | {i[2] for i in items})
        self.starts = collections.defaultdict(list)
        ends = collections.defaultdict(list)
        for k, i in enumerate(items):
            self.starts[i[1]].append(k)
            ends[i[2]].append(k)
        self.size = [i[3] for i in items]
        self.end = [i[2] for i in items]
        self.eager = collections.defaultdict(list)  # moment -> sets consecutive from then on
        self.num_eager = 0
        for t, enders in ends.items():
            if len(enders) < 2 or t not in self.starts:
                continue
            for block in self.forced_blocks(enders, self.starts[t]):
                F = frozenset(block)
                while len(F) >= 2:
                    m = max(items[k][1] for k in F)
                    self.eager[m].append(F)
                    self.num_eager += 1
                    started = {k for k in F if items[k][1] == m}
                    if not started or len(started) == len(F) or len(ends.get(m, [])) != 1:
                        break
                    F = frozenset((F - started) | {ends[m][0]})

    def forced_blocks(self, enders, starters):
        """Blocks of enders found in every balanced pairing with the starters."""
        enders = list(enders)
        reach = 1
        for k in starters:
            reach |= reach << self.size[k]
        total = sum(self.size[k] for k in enders)
        if len(enders) > 12:  # only the all-in-one case
            sums = {0}
            for k in enders:
                sums |= {a + self.size[k] for a in sums}
            return [enders] if not any(0 < a < total and (reach >> a) & 1 for a in sums) else []
        sizes = sorted((self.size[k] for k in starters), reverse=True)

        @functools.lru_cache(maxsize=None)
        def starters_fill(block_sums):
            bins = list(block_sums)

            def place(i):
                if i == len(sizes):
                    return all(b == 0 for b in bins)
                tried = set()
                for j in range(len(bins)):
                    if bins[j] >= sizes[i] and bins[j] not in tried:
                        tried.add(bins[j])
                        bins[j] -= sizes[i]
                        ok = place(i + 1)
                        bins[j] += sizes[i]
                        if ok:
                            return True
                return False
            return place(0)

        partitions = []

        def gen(i, blocks):
            if i == len(enders):
                sums = tuple(sorted(sum(self.size[enders[j]] for j in b) for b in blocks))
                if all((reach >> x) & 1 for x in sums) and starters_fill(sums):
                    partitions.append({frozenset(enders[j] for j in b) for b in blocks})
                return
            for b in blocks:
                b.append(i)
                gen(i + 1, blocks)
                b.pop()
            blocks.append([i])
            gen(i + 1, blocks)
            blocks.pop()
        gen(0, [])
        if not partitions:
            return []
        common = functools.reduce(lambda a, b: a & b, partitions)
        return [list(c) for c in common if len(c) > 1]

    def starter_sets(self, target, avail, keys, cls):
        """Ways to take `target` from the starters, by class (size, end)."""
        ks = [k for k in keys if avail[k] > 0]
        suffix = [0] * (len(ks) + 1)
        for j in range(len(ks) - 1, -1, -1):
            suffix[j] = suffix[j + 1] + ks[j][0] * avail[ks[j]]
        out = []

        def rec(j, rem, chosen):
            if len(out) >= self.max_sets:
                return
            if rem == 0:
                out.append(list(chosen))
                return
            if j == len(ks) or suffix[j] < rem:
                return
            k = ks[j]
            for c in range(min(avail[k], rem // k[0]), -1, -1):
                chosen.extend([k] * c)
                rec(j + 1, rem - c * k[0], chosen)
                if c:
                    del chosen[-c:]
        rec(0, target, [])
        for choice in out:
            left = dict(avail)
            pick = []
            for k, c in collections.Counter(choice).items():
                used = len(cls[k]) - avail[k]
                pick += cls[k][used:used + c]
                left[k] -= c
            yield pick, left

    def step(self, root, t, state=None, level=0):
        """(tree, state) after each way to choose the junctions at t."""
        enders = {x for x in leaves(root) if self.end[x] == t}
        cls = collections.defaultdict(list)
        for k in self.starts.get(t, []):
            cls[(self.size[k], self.end[k])].append(k)
        keys = sorted(cls, key=lambda c: (-c[0], c[1]))
        yield from self.junctions(root, state, enders, {c: len(cls[c]) for c in keys}, keys, cls, t,
                                  level, frozenset(), frozenset(), ())

    # Hooks for sweeps that keep more than the tree (pq_cbj.py). `tag` is
    # 1 << level for a junction chosen at that level, 0 for an eager set.
    def reduce_tracked(self, root, state, X, tag):
        """reduce(root, X) and the state after it; raises Fail."""
        root, block = reduce(root, set(X))
        return root, block, state

    def carry(self, state, G, pick, tag, live_after):
        """The state after enders G are replaced by starters `pick`."""
        return state

    def failed(self, fail):
        """Called with each Fail met while choosing junctions."""

    def ender_groups(self, enders, avail, keys):
        """(group, total) for the junction of the largest ender: coarse first,
        the largest groups with it first; only totals the starters reach."""
        e = max(enders, key=lambda x: (self.size[x], x))
        others = sorted(enders - {e})
        if len(others) <= 10:
            groups = [frozenset(c) | {e} for r in range(len(others), -1, -1)
                      for c in itertools.combinations(others, r)]
        else:
            groups = [frozenset(enders), frozenset([e])]
        reach = 1
        for k in keys:
            for _ in range(avail[k]):
                reach |= reach << k[0]
        for G in groups:
            total = sum(self.size[x] for x in G)
            if (reach >> total) & 1:
                yield G, total

    def junctions(self, root, state, enders, avail, keys, cls, t, level, done, placed, chosen):
        if not enders:
            for F in self.eager.get(t, ()):
                if F in done:
                    continue
                try:
                    root, _, state = self.reduce_tracked(root, state, F, 0)
                except Fail as f:
                    self.failed(f)
                    return
            self.last_junctions = chosen
            yield root, state
            return
        for G, total in self.ender_groups(enders, avail, keys):
            try:
                reduced, block, after = self.reduce_tracked(clone(root), state, G, 1 << level)
            except Fail as f:
                self.failed(f)
                continue
            for pick, left in self.starter_sets(total, avail, keys, cls):
                new = leaf(pick[0]) if len(pick) == 1 else ['P', [leaf(p) for p in pick]]
                tree = substitute_copy(reduced, block, set(G), new)
                carried = self.carry(after, G, pick, 1 << level, len(leaves(tree)))
                now_placed = placed | set(pick)
                now_done = set(done)
                ok = True
                for F in self.eager.get(t, ()):  # check eager sets as soon as all are placed
                    if F in now_done or not all(self.items[x][1] != t or x in now_placed for x in F):
                        continue
                    try:
                        tree, _, carried = self.reduce_tracked(tree, carried, F, 0)
                    except Fail as f:
                        self.failed(f)
                        ok = False
                        break
                    now_done.add(F)
                if ok:
                    yield from self.junctions(tree, carried, enders - G, left, keys, cls, t, level,
                                              frozenset(now_done), frozenset(now_placed),
                                              chosen + ((frozenset(G), tuple(pick)),))

    def run(self, node_budget, max_sets=50):
        """Depth-first over the moments, chronological backtracking."""
        self.max_sets = max_sets
        times = self.times
        root = ['P', [leaf(k) for k in self.starts[times[0]]]]
        for F in self.eager.get(times[0], ()):
            root, _ = reduce(root, set(F))
        self.nodes = 0
        self.deepest = 0
        self.trail = {}

        def dfs(ki, root):
            self.nodes += 1
            if self.nodes > node_budget:
                raise TimeoutError
            self.deepest = max(self.deepest, ki)
            if ki == len(times) - 1:
                self.final = root
                return True
            before = clone(root)
            for new, _ in self.step(root, times[ki]):
                self.trail[ki] = (before, self.last_junctions)
                if dfs(ki + 1, new):
                    return True
            return False
        try:
            return dfs(1, root)
        except TimeoutError:
            return None


def substitute_copy(tree, block, S, new):
    """substitute() on a copy of `tree`, keeping `block` pointing into the copy."""
    copies = {}

    def cp(n):
        if is_leaf(n):
            return n
        m = [n[0], [cp(c) for c in n[1]]]
        copies[id(n)] = m
        return m
    root = cp(tree)
    if isinstance(block, tuple) and block[0] == 'QRANGE':
        return substitute(root, ('QRANGE', copies[id(block[1])]), S, new)
    if is_leaf(block):
        if is_leaf(root):
            return new
        return replace_leaf(root, block[1], new)
    return substitute(root, copies[id(block)], S, new)


def replace_leaf(root, item, new):
    stack = [root]
    while stack:
        n = stack.pop()
        if is_leaf(n):
            continue
        for i, c in enumerate(n[1]):
            if is_leaf(c) and c[1] == item:
                n[1][i] = new
                return normalize(root)
            stack.append(c)
    raise RuntimeError('leaf not found')


def extract(sweep):
    """Offsets (in units) from a finished sweep, walking back from the last moment.

    At each moment the order after it is known; every junction's starters are a
    run in it. The order before it must keep the other buffers where they are,
    put each junction's enders where its starters are, and be allowed by the
    tree before the moment: pinned by reducing every adjacent pair."""
    times = sweep.times
    order = leaves(sweep.final)
    offsets = {}

    def record(order):
        at = 0
        for x in order:
            if offsets.get(x, at) != at:
                raise AssertionError(f'item {x} gets two offsets')
            offsets[x] = at
            at += sweep.size[x]
    record(order)
    for ki in range(len(times) - 2, 0, -1):
        before, junctions = sweep.trail[ki]
        pos = {x: i for i, x in enumerate(order)}
        token = {}
        for j, (_, pick) in enumerate(junctions):
            ps = sorted(pos[p] for p in pick)
            assert ps[-1] - ps[0] + 1 == len(ps), 'starters of a junction are not a run'
            token[ps[0]] = ('J', j)
        taken = {pos[p] for _, pick in junctions for p in pick}
        seq = [token[i] if i in token else ('X', x) for i, x in enumerate(order) if i in token or i not in taken]

        def members(u):
            return set(junctions[u[1]][0]) if u[0] == 'J' else {u[1]}
        tree = clone(before)
        for G, _ in junctions:
            tree, _ = reduce(tree, set(G))
        for a, b in zip(seq, seq[1:]):
            tree, _ = reduce(tree, members(a) | members(b))
        order = leaves(tree)
        if len(seq) > 1 and min(order.index(x) for x in members(seq[0])) > \
                min(order.index(x) for x in members(seq[-1])):
            order.reverse()
        record(order)
    return offsets


def check(items, offsets, capacity):
    """Number of violations: out of range, or overlapping while both live."""
    bad = sum(1 for k, it in enumerate(items) if offsets[k] < 0 or offsets[k] + it[3] > capacity)
    for t in sorted({i[1] for i in items}):
        spans = sorted((offsets[k], offsets[k] + it[3]) for k, it in enumerate(items) if it[1] <= t < it[2])
        bad += sum(1 for (_, b), (c, _) in zip(spans, spans[1:]) if c < b)
    return bad


if __name__ == '__main__':
    path = sys.argv[1]
    budget = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
    items = load(path)
    sweep = Sweep(items)
    t0 = time.time()
    ok = sweep.run(budget)
    line = (f'{os.path.basename(path)}: {len(items)} buffers, {len(sweep.times)} moments, '
            f'{sweep.num_eager} eager sets, {sweep.nodes} nodes, {time.time() - t0:.2f} s: ')
    if ok:
        offsets = extract(sweep)
        capacity = int(path.split('.')[-2]) // UNIT
        print(line + f'packed, {check(items, offsets, capacity)} violations')
    else:
        print(line + f'no packing within the budget (deepest moment {sweep.deepest})')
