"""A small PQ-tree (Booth and Lueker, 1976) for the time-sweep prototype.

A PQ-tree stands for a set of orders of its leaves: the children of a P-node
may come in any order, those of a Q-node only as listed or reversed.
`reduce(root, S)` restricts the set to the orders in which the leaves in S are
consecutive (the templates are applied recursively, which is fine for the few
hundred leaves live at one moment); `substitute` then replaces that block by
a new subtree. Research code, not part of tessel; `self_test()` compares both
with brute force on small random trees.

Node: ('L', item) | ['P', children] | ['Q', children]  (lists, mutable).
"""
class Fail(Exception): pass

def leaf(x): return ('L', x)
def is_leaf(n): return n[0]=='L'

def clone(n):
    if is_leaf(n): return n
    return [n[0], [clone(c) for c in n[1]]]

def leaves(n, out=None):
    if out is None: out=[]
    if is_leaf(n): out.append(n[1])
    else:
        for c in n[1]: leaves(c, out)
    return out

def mkP(ch):
    if len(ch)==1: return ch[0]
    return ['P', ch]
def mkQ(ch):
    if len(ch)==1: return ch[0]
    if len(ch)==2: return ['P', ch]
    return ['Q', ch]

def count(n, S, memo):
    """number of S-leaves under n"""
    k=id(n)
    if k in memo: return memo[k]
    if is_leaf(n): r=1 if n[1] in S else 0
    else: r=sum(count(c,S,memo) for c in n[1])
    memo[k]=r; return r

def reduce(root, S):
    """Make the leaves in S consecutive. Returns (new_root, block) where block is a node
    whose leaves are exactly S (it is in the tree). Raises Fail."""
    memo={}
    total=len(S)
    if count(root,S,memo)!=total: raise RuntimeError('reduce: leaves missing')
    # find pertinent root: deepest node with count==total
    node=root
    while not is_leaf(node):
        nxt=None
        for c in node[1]:
            if count(c,S,memo)==total: nxt=c; break
        if nxt is None: break
        node=nxt
    pr=node
    nleaves={}
    def nl(n):
        k=id(n)
        if k not in nleaves: nleaves[k]=len(leaves(n))
        return nleaves[k]
    def status(n):
        c=count(n,S,memo)
        if c==0: return 'E'
        if c==nl(n): return 'F'
        return 'Pa'
    def red(n, is_root):
        """Returns (kind, node): kind 'E','F' or 'Pa' (Q-node ordered empty..full) or at root
        returns ('ROOT', new_node, block)."""
        st=status(n)
        if st=='E' and not is_root: return ('E', n)
        if st=='F':
            return ('ROOT', n, n) if is_root else ('F', n)
        kids=n[1]
        res=[]
        for c in kids:
            s=status(c)
            if s=='Pa': res.append(red(c, False))
            else: res.append((s, c))
        if n[0]=='P':
            E=[c for s,c in res if s=='E']; F=[c for s,c in res if s=='F']; Pa=[c for s,c in res if s=='Pa']
            if not is_root:
                if len(Pa)>1: raise Fail
                seq=[]
                if E: seq.append(mkP(E))
                if Pa: seq+=Pa[0][1]
                if F: seq.append(mkP(F))
                return ('Pa', ['Q', seq])
            # root
            if len(Pa)>2: raise Fail
            if not Pa:
                blk=mkP(F)
                new=mkP(E+[blk])
                return ('ROOT', new, blk)
            seq=list(Pa[0][1])
            if F: seq.append(mkP(F))
            if len(Pa)==2: seq+=list(reversed(Pa[1][1]))
            q=['Q', seq]
            # block: a consecutive range of q; wrap it as a sub-node? Q ranges can't be grouped
            new=mkP(E+[q]) if E else q
            return ('ROOT', new, ('QRANGE', q))
        else:  # Q node
            # expand partial children into sequences (empty..full), try both orientations
            items=[]
            for s,c in res:
                if s=='Pa': items.append(('Pa', c[1]))
                else: items.append((s,c))
            for orient in (items, list(reversed(items))):
                out=tryq(orient, is_root)
                if out is not None:
                    seq=out
                    if not is_root: return ('Pa', ['Q', seq])
                    q=['Q', seq]
                    return ('ROOT', q, ('QRANGE', q))
            raise Fail
    def tryq(items, is_root):
        # statuses along the sequence; need: E* [Pa] F* [Pa] E*  (root) ; E* [Pa] F* (non-root, full at the end)
        sts=[s for s,_ in items]
        idx=[i for i,s in enumerate(sts) if s!='E']
        if not idx: return None
        a,b=idx[0],idx[-1]
        mid=sts[a:b+1]
        if any(s=='E' for s in mid): return None
        pas=[i for i in range(a,b+1) if sts[i]=='Pa']
        for i in pas:
            if i!=a and i!=b: return None
        if not is_root:
            # full part must reach the end (b == last) and a partial only at a
            if b!=len(sts)-1: return None
            if sts[b]=='Pa' and b!=a: return None
        seq=[]
        for i,(s,c) in enumerate(items):
            if s=='Pa':
                ch=c  # list ordered empty..full
                if i==b and i!=a: ch=list(reversed(ch))   # right end: full..empty
                seq+=ch
            else: seq.append(c)
        return seq
    res=red(pr, True)
    _, new, blk = res
    # splice new in place of pr
    if pr is root: root=new
    else: replace(root, pr, new)
    return root, blk

def replace(root, old, new):
    stack=[root]
    while stack:
        n=stack.pop()
        if is_leaf(n): continue
        for i,c in enumerate(n[1]):
            if c is old: n[1][i]=new; return True
            stack.append(c)
    raise RuntimeError('not found')

def substitute(root, blk, S, new):
    """Replace the block (consecutive S) by node new."""
    if isinstance(blk, tuple) and blk[0]=='QRANGE':
        q=blk[1]; ch=q[1]
        full=[i for i,c in enumerate(ch) if set(leaves(c))<=S]
        # full run must be consecutive
        a,b=full[0],full[-1]
        assert full==list(range(a,b+1)), 'range not consecutive'
        seq=ch[:a]+[new]+ch[b+1:]
        nq=mkQ(seq)
        if nq is not q:
            if q is root: return nq
            replace(root, q, nq)
        else: q[1]=seq
        return root
    if blk is root: return new
    replace(root, blk, new)
    return normalize(root)

def normalize(n):
    if is_leaf(n): return n
    n[1]=[normalize(c) for c in n[1]]
    if len(n[1])==1: return n[1][0]
    if n[0]=='Q' and len(n[1])==2: n[0]='P'
    return n

def _orders(n):
    import itertools
    if is_leaf(n): return [[n[1]]]
    subs=[_orders(c) for c in n[1]]
    res=[]
    perms=itertools.permutations(range(len(subs))) if n[0]=='P' else \
        [list(range(len(subs))), list(reversed(range(len(subs))))]
    for perm in perms:
        for combo in itertools.product(*[subs[i] for i in perm]):
            res.append(sum(combo, []))
    return res

def self_test(trials=600, seed=1):
    """Brute-force check of reduce() and substitute() on small random trees."""
    import random
    rng=random.Random(seed)
    def consec(o, S):
        idx=[i for i,x in enumerate(o) if x in S]
        return idx[-1]-idx[0]+1==len(S)
    for _ in range(trials):
        n=rng.randint(3,7)
        root=['P',[leaf(i) for i in range(n)]]
        alive=list(range(n)); nxt=100
        for _ in range(4):
            if len(alive)<3: break
            S=set(rng.sample(alive, rng.randint(2,len(alive)-1)))
            before=[o for o in _orders(root) if consec(o,S)]
            try:
                r2,blk=reduce(clone(root),S)
            except Fail:
                assert not before, 'reduce failed on a feasible set'
                break
            assert {tuple(o) for o in _orders(r2)}=={tuple(o) for o in before}, 'reduce'
            X=nxt; nxt+=1
            r3=substitute(r2,blk,S,leaf(X))
            exp=set()
            for o in before:
                i=min(k for k,x in enumerate(o) if x in S)
                exp.add(tuple([x for x in o[:i] if x not in S]+[X]+[x for x in o[i:] if x not in S]))
            assert {tuple(o) for o in _orders(r3)}==exp, 'substitute'
            root=r3; alive=[x for x in alive if x not in S]+[X]
    return True

if __name__=="__main__":
    print('self test passed' if self_test() else 'failed')
