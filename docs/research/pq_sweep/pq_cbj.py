#!/usr/bin/env python3
"""The PQ-tree sweep with conflict-directed backjumping (research prototype).

Not part of tessel; measured in docs/benchmarks.md ("guillotine_09_4000:
what was measured", fifth round).

The sweep of pq_sweep.py backtracks chronologically. Here each level (moment)
returns, when it fails, a conflict set: the earlier moments whose choices the
failure depends on (Prosser's conflict-directed backjumping). A failed
reduction of X is explained by a minimal set of consecutive-set constraints
on the live buffers that, with X, admit no order (QuickXplain, preferring
constraints from early moments). Every constraint is carried forward through
each junction (enders G replaced by starters P): S meeting G becomes
(S - G) | P, and S - G too when S and G only overlap; each carries the moments
it passed. With that rule the constraints rebuild exactly the sweep's tree
(checked by counting orders).

Usage: pq_cbj.py INSTANCE.csv [NODE_BUDGET] [-v]
"""
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pq_tree import Fail, clone, leaf, leaves, reduce  # noqa: E402
from pq_sweep import Sweep, check, extract, load  # noqa: E402


def maxbit(t): return t.bit_length() - 1


def num_orders(n):
    """How many leaf orders a PQ-tree stands for."""
    if n[0] == 'L':
        return 1
    r = math.factorial(len(n[1])) if n[0] == 'P' else 2
    for c in n[1]:
        r *= num_orders(c)
    return r


def build(live, cons):
    """The PQ-tree of the orders of `live` that satisfy every constraint."""
    root = ['P', [leaf(k) for k in live]] if len(live) > 1 else leaf(next(iter(live)))
    for S, _ in cons:
        root, _ = reduce(root, set(S))
    return root


class BackjumpingSweep(Sweep):
    """Constraints are (frozenset of live buffers, bitmask of the moments they
    depend on); a conflict set is such a bitmask."""

    def consistent(self, live, cons, X):
        try:
            root = build(live, cons)
            reduce(root, set(X))
            return True
        except Fail:
            return False

    def explain(self, live, cons, X, xtag):
        """The moments behind a failed reduction of X: those of a minimal
        subset of `cons` that admits no order with X consecutive."""
        self.nexpl += 1
        cons = sorted(cons, key=lambda c: maxbit(c[1]))
        if self.consistent(live, cons, X):
            self.coarse += 1
            t = xtag
            for _, g in cons: t |= g
            return t
        # QuickXplain
        def incons(B):
            return not self.consistent(live, B, X)
        def qx(B, delta, C):
            if delta and incons(B): return []
            if len(C) == 1: return C
            k = len(C) // 2
            C1, C2 = C[:k], C[k:]
            D2 = qx(B + C1, C1, C2)
            D1 = qx(B + D2, D2, C1)
            return D1 + D2
        core = qx([], [], cons) if not incons([]) else []
        t = xtag
        for _, g in core: t |= g
        self.coresz.append(len(core))
        return t

    def carry(self, cons, G, pick, bit, live_after):
        """The constraints after enders G are replaced by starters `pick`."""
        out = {}
        pickset = frozenset(pick)
        for S, tag in cons:
            cands = []
            if S & G:
                cands.append(((S - G) | pickset, tag | bit))
                if not (G <= S):
                    cands.append((S - G, tag | bit))
            else:
                cands.append((S, tag))
            for S2, tag2 in cands:
                if len(S2) <= 1 or len(S2) >= live_after: continue
                if S2 in out and maxbit(out[S2]) <= maxbit(tag2): continue
                out[S2] = tag2
        if 2 <= len(pickset) < live_after:
            if pickset not in out or maxbit(out[pickset]) > maxbit(bit):
                out[pickset] = bit
        return list(out.items())

    def reduce_tracked(self, root, cons, X, xtag):
        """reduce(), recording X as a constraint; a Fail carries .expl."""
        try:
            root, blk = reduce(root, set(X))
        except Fail:
            live = leaves(root)
            f = Fail(); f.expl = self.explain(live, cons, X, xtag); raise f
        X = frozenset(X)
        if 2 <= len(X) < len(leaves(root)):
            cons = cons + [(X, xtag)]
        return root, blk, cons

    def failed(self, fail):
        self.expl |= fail.expl

    def run(self, node_budget, max_sets=50, verbose=False, check_orders=False):
        self.max_sets = max_sets
        self.check_orders = check_orders
        times = self.times
        root = ['P', [leaf(k) for k in self.starts[times[0]]]]
        cons = []
        self.expl = 0; self.nexpl = 0; self.coarse = 0; self.coresz = []
        for F in self.eager.get(times[0], ()):
            root, _, cons = self.reduce_tracked(root, cons, F, 0)
        self.nodes = 0; self.deepest = 0; self.trail = {}; self.jumps = 0; self.jumpdist = 0
        t0 = time.time()

        def dfs(ki, root, cons):
            self.nodes += 1
            if self.nodes > node_budget: raise TimeoutError
            if ki > self.deepest:
                self.deepest = ki
                if verbose: print(f"  depth {ki} nodes {self.nodes} cons {len(cons)} {time.time()-t0:.1f}s", flush=True)
            if ki == len(times) - 1:
                self.final = root; return True
            before = clone(root)
            conf = 0
            self.expl = 0
            bit = 1 << ki
            for new, c in self.step(root, times[ki], cons, ki):
                if self.check_orders and num_orders(new) != num_orders(build(leaves(new), c)):
                    raise AssertionError(f'moment {ki}: the constraints lose orders of the tree')
                conf |= self.expl; self.expl = 0
                self.trail[ki] = (before, self.last_junctions)
                r = dfs(ki + 1, new, c)
                if r is True: return True
                if not (r & bit):
                    self.jumps += 1
                    return r
                conf |= r & ~bit
                self.expl = 0
            conf |= self.expl
            conf &= ~bit
            return conf
        try:
            r = dfs(1, root, cons)
            return True if r is True else False
        except TimeoutError:
            return None

if __name__ == '__main__':
    items = load(sys.argv[1])
    budget = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
    sw = BackjumpingSweep(items)
    t0 = time.time()
    r = sw.run(budget, verbose='-v' in sys.argv, check_orders='--check-orders' in sys.argv)
    cs = sw.coresz
    print(f"{sys.argv[1].split('/')[-1]}: {len(items)} buffers, {len(sw.times)} moments, {sw.nodes} nodes, "
          f"{time.time()-t0:.2f} s, result={r}, deepest {sw.deepest}, jumps {sw.jumps}, "
          f"explanations {sw.nexpl} (unexplained {sw.coarse}), constraints per core {sum(cs)/max(1,len(cs)):.1f}", flush=True)
    if r:
        off = extract(sw)
        print("violations", check(items, off, sum(i[3] for i in items if i[1] == 0)))
