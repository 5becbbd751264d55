#!/usr/bin/env python3
"""pq_cbj.py with finer explanations (research prototype, not part of tessel;
measured in docs/benchmarks.md, "guillotine_09_4000: what was measured",
fifth round).

A failure is explained in three steps: a minimal core of constraints
(QuickXplain, as in pq_cbj.py); then a minimal set W of live buffers on which
the core, projected, still admits no order (a projection of a consecutive
set stays consecutive, so this is sound); then only the moments behind the
facts "w is in S" and "w is not in S" for w in W and S in the core. Each
constraint keeps those moments per buffer: a starter joins S through a
junction that took one ender of S (that ender's moments and the junction's),
and stays out of S when every ender of its junction was out of S.

Usage: pq_cbj_witness.py INSTANCE.csv [NODE_BUDGET] [-v]
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pq_tree import Fail, leaf, leaves, reduce  # noqa: E402
from pq_sweep import check, extract, load  # noqa: E402
from pq_cbj import BackjumpingSweep, maxbit  # noqa: E402


def feasible(W, sets):
    """Whether some order of W keeps every set (projected onto W) consecutive."""
    Wset = set(W)
    try:
        root = ['P', [leaf(k) for k in W]] if len(W) > 1 else leaf(next(iter(W)))
        for S in sets:
            s = S & Wset
            if 2 <= len(s) < len(Wset):
                root, _ = reduce(root, s)
        return True
    except Fail:
        return False


class WitnessSweep(BackjumpingSweep):
    """Constraints are (S, base, member moments, non-member moments): the
    moments behind S itself, and per buffer those behind its (non-)membership."""

    def explain(self, live, cons, X, xtag):
        self.nexpl += 1
        cons = sorted(cons, key=lambda c: maxbit(c[1] | max([0] + list(c[2].values()))))
        sets = [c[0] for c in cons]
        X = frozenset(X)
        if feasible(live, sets + [X]):
            self.coarse += 1
            t = xtag
            for c in cons:
                t |= c[1]
                for v in c[2].values(): t |= v
                for v in c[3].values(): t |= v
            return t
        def incons(B):
            return not feasible(live, [c[0] for c in B] + [X])
        def qx(B, delta, C):
            if delta and incons(B): return []
            if len(C) == 1: return C
            k = len(C) // 2
            D2 = qx(B + C[:k], C[:k], C[k:])
            D1 = qx(B + D2, D2, C[:k])
            return D1 + D2
        core = qx([], [], cons) if not incons([]) else []
        csets = [c[0] for c in core] + [X]
        W = set()
        for s in csets: W |= s
        for x in sorted(W, key=lambda x: -self.start_level[x]):
            W2 = W - {x}
            if len(W2) >= 2 and not feasible(W2, csets):
                W = W2
        t = xtag
        for S, base, mt, nt in core:
            t |= base
            for w in W:
                t |= mt.get(w, 0) if w in S else nt.get(w, 0)
        self.coresz.append(len(W))
        return t

    def carry(self, cons, G, pick, bit, live_after):
        out = {}
        P = frozenset(pick)
        def emit(S, base, mt, nt):
            if len(S) <= 1 or len(S) >= live_after or S in out: return
            out[S] = (S, base, mt, nt)
        for S, base, mt, nt in cons:
            inter = S & G
            if inter:
                rin = bit | min((mt.get(g, 0) for g in inter), key=maxbit)
                mt2 = {x: v for x, v in mt.items() if x not in G}
                for p in P: mt2[p] = rin
                nt2 = {x: v for x, v in nt.items() if x not in G}
                emit((S - G) | P, base, mt2, nt2)
                if not G <= S:
                    rp = rin | min((nt.get(g, 0) for g in G - S), key=maxbit)
                    emit(S - G, base | rp, {x: v for x, v in mt.items() if x not in G}, nt2)
            else:
                rout = bit
                for g in G: rout |= nt.get(g, 0)
                nt2 = {x: v for x, v in nt.items() if x not in G}
                for p in P: nt2[p] = rout
                emit(S, base, mt, nt2)
        if 2 <= len(P) < live_after and P not in out:
            out[P] = (P, bit, {}, {})
        return list(out.values())

    def reduce_tracked(self, root, cons, X, xtag):
        try:
            root, blk = reduce(root, set(X))
        except Fail:
            f = Fail(); f.expl = self.explain(leaves(root), cons, X, xtag); raise f
        X = frozenset(X)
        if 2 <= len(X) < len(leaves(root)) and not any(c[0] == X for c in cons):
            cons = cons + [(X, xtag, {}, {})]
        return root, blk, cons

    def run(self, node_budget, **kw):
        self.start_level = {}
        for ki, t in enumerate(self.times):
            for k in self.starts.get(t, []): self.start_level[k] = ki
        return super().run(node_budget, **kw)


if __name__ == '__main__':
    items = load(sys.argv[1])
    budget = int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2].isdigit() else 20000
    sw = WitnessSweep(items)
    t0 = time.time()
    r = sw.run(budget, verbose='-v' in sys.argv)
    cs = sw.coresz
    print(f"{sys.argv[1].split('/')[-1]}: {sw.nodes} nodes, {time.time()-t0:.1f}s, result={r}, deepest {sw.deepest}/{len(sw.times)-1}, jumps {sw.jumps}, explanations {sw.nexpl} (unexplained {sw.coarse}), witness avg {sum(cs)/max(1,len(cs)):.1f}", flush=True)
    if r: print('violations', check(items, extract(sw), sum(i[3] for i in items if i[1] == 0)))
