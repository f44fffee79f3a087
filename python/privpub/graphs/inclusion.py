"""Exact counts of CQ(≠) queries from homomorphism counts, by inclusion–exclusion.

A query whose head holds every variable counts the assignments satisfying
its subgoals and its disequalities D. Writing each disequality as "not
equal", inclusion–exclusion over the subsets S ⊆ D gives

    q(I) = Σ_{S ⊆ D} (−1)^{|S|} hom(P / S),

where P / S is the pattern with the terms S equates merged. Grouped by the
partition π the merge makes (its blocks are the connected parts of S), the
sum is Σ_π μ(π) hom(P / π) with μ(π) = Π_B f(B), f(B) the signed number of
edge sets of D inside the block B that connect it (Lovász, *Large networks
and graph limits*, Sec. 5.2: the Möbius inversion from homomorphisms to
injective maps over the partition lattice; with D all pairs,
f(B) = (−1)^{|B|−1}(|B|−1)!). Partitions whose merge cannot hold add nothing
and are never built: a block with two constants (different nodes), and, on a
relation without loops, a block holding both terms of a subgoal (it would
need R(x, x)). Each hom(P / π) is a variable elimination
(:mod:`privpub.graphs.elimination`); they share its memo of products.

Whether this beats the generic join is a cost estimate (:func:`join_cost`):
the join's work grows with the partial assignments it enumerates, the
elimination's with its sparse products, whose multiplications are counted
exactly before each is computed and charged to a budget; past the budget the
elimination stops and the join counts.
"""

from __future__ import annotations

import itertools

import numpy as np

from privpub.graphs.elimination import Eliminator, Overflow, TooCostly, Unsupported
from privpub.graphs.graph import Graph
from privpub.graphs.query import CQ, Const, Term, Var

MAX_TERMS = 5000  # partitions past this: the join (each term is a few products)
#: Seconds per partial assignment the join enumerates (as :func:`join_cost`
#: bounds them), its fixed cost (relabelling by degree rank, threads), and
#: seconds per multiplication of the elimination's products: fitted on
#: facebook and ca-GrQc, 2 cores under load (docs/graphs.md). The join's
#: time per assignment ranged 5–25 ns over the patterns tried (paths and
#: stars cheapest, cycles dearest), the elimination's 2–6 ns.
JOIN_STEP = 15e-9
JOIN_FIXED = 5e-3
ELIMINATION_STEP = 4e-9
#: A homomorphism count's fixed cost (Python, a few small arrays), in multiplications.
TERM_COST = 250_000


def coded(graph: Graph, query: CQ) -> tuple[int, set[tuple[int, int]], set[tuple[int, int]]] | None:
    """(k, subgoals, disequalities) with terms coded as the join codes them
    (variable index, or −(node + 1) for a constant), or None when the query
    is not a count of all assignments (a head variable missing: distinct
    projections, which the join counts). A disequality between two
    constants (different ids, so different nodes) always holds and is left
    out."""
    if set(query.head) != query.variables:
        return None
    index = {x: i for i, x in enumerate(sorted(query.variables))}

    def code(t: Term) -> int:
        if isinstance(t, Var):
            return index[t]
        assert isinstance(t, Const)
        return -(graph.node(t.value) + 1)

    atoms = {(code(a.terms[0]), code(a.terms[1])) for a in query.goals}
    neq = {(code(a), code(b)) for a, b in query.neq_pairs()}
    return len(index), atoms, {(a, b) for a, b in neq if a >= 0 or b >= 0}


def _connected_sign(block: frozenset[int], neq: set[frozenset[int]], memo: dict) -> int:
    """f(B) = Σ over subsets S of D's pairs inside B that connect B of (−1)^{|S|},
    by f(B) = g(B) − Σ_{A ∋ min B, A ⊊ B} f(A)·g(B ∖ A), where g(X) = Σ over
    all subsets = 1 when D has no pair inside X, else 0."""
    if block in memo:
        return memo[block]
    if len(block) == 1:
        return 1
    first, rest = min(block), sorted(block - {min(block)})

    def g(xs: frozenset[int]) -> int:
        return int(not any(frozenset(p) in neq for p in itertools.combinations(xs, 2)))

    value = g(block)
    for r in range(len(rest)):  # A = {first} ∪ a proper subset of the rest
        for part in itertools.combinations(rest, r):
            a = frozenset((first, *part))
            value -= _connected_sign(a, neq, memo) * g(block - a)
    memo[block] = value
    return value


def partitions(atoms: set[tuple[int, int]], neq: set[tuple[int, int]],
               loops: bool) -> list[tuple[int, dict[int, int]]] | None:
    """(μ(π), term → representative) for each partition π with μ ≠ 0 whose
    merge can hold (see the module notes); None past MAX_TERMS. Only terms
    in a disequality are ever merged; a block's representative is its
    constant if it has one, else its least variable."""
    terms = sorted({t for p in neq for t in p}, key=lambda t: (t < 0, t))
    pairs = {frozenset(p) for p in neq}
    linked = {frozenset(p) for p in atoms if p[0] != p[1]}
    out: list[tuple[int, dict[int, int]]] = []
    memo: dict = {}
    blocks: list[list[int]] = []

    def fits(block: list[int], t: int) -> bool:
        if t < 0 and any(s < 0 for s in block):
            return False
        return loops or not any(frozenset((s, t)) in linked for s in block)

    def place(i: int) -> bool:
        if i == len(terms):
            mu = 1
            for b in blocks:
                mu *= _connected_sign(frozenset(b), pairs, memo)
                if mu == 0:
                    return True
            rep = {}
            for b in blocks:
                r = min(b) if min(b) < 0 else b[0]
                rep.update({t: r for t in b})
            out.append((mu, rep))
            return len(out) <= MAX_TERMS
        t = terms[i]
        for b in blocks:
            if fits(b, t):
                b.append(t)
                going = place(i + 1)
                b.pop()
                if not going:
                    return False
        blocks.append([t])
        going = place(i + 1)
        blocks.pop()
        return going

    return out if place(0) else None


def injective_count(graph: Graph, query: CQ, budget: float | None = None) -> int | None:
    """q(I) by inclusion–exclusion over homomorphism counts, or None when
    this method does not apply or would cost more: the head misses a
    variable, the pattern has treewidth > 2 (or a merged one does), too many
    partitions, an intermediate past int64, or products past ``budget``
    multiplications."""
    shape = coded(graph, query)
    if shape is None:
        return None
    _, atoms, neq = shape
    engine = Eliminator(graph, budget)
    terms = partitions(atoms, neq, engine.loops > 0)
    if terms is None:
        return None
    total = 0
    # The unmerged pattern first: its products (A² for a cycle) are memoised
    # before the merged patterns, triangles mostly, reuse them.
    terms.sort(key=lambda term: -len(set(term[1].values())))
    try:
        for mu, rep in terms:
            merged = {(rep.get(s, s), rep.get(t, t)) for s, t in atoms}
            engine.charge(TERM_COST)
            total += mu * engine.hom(merged)
    except (Overflow, TooCostly, Unsupported):
        return None
    return total


def join_cost(graph: Graph, query: CQ, automorphisms: int) -> float:
    """An estimate of the generic join's time, in multiplications of the
    elimination's products: a fixed cost plus the partial assignments it
    enumerates (all variables but the last, which it counts), bounded for
    each prefix of its order by the homomorphisms of a spanning forest of the
    prefix (one subgoal to an earlier variable each; exact by matrix–vector
    products), divided by the automorphisms it breaks."""
    shape = coded(graph, query)
    if shape is None:
        return float("inf")
    k, atoms, _ = shape
    out_off, out_tgt, in_off, in_src = graph.csr
    import scipy.sparse as sp  # on use: scipy costs `import privpub` ~0.3 s

    m = graph.m
    ones = np.ones(out_tgt.size)
    fwd = sp.csr_array((ones, out_tgt.astype(np.int64), out_off.astype(np.int64)), shape=(m, m))
    bwd = sp.csr_array((ones, in_src.astype(np.int64), in_off.astype(np.int64)), shape=(m, m))
    order = _join_order(k, atoms)
    work = sum(_forest_homs(order[:size], atoms, fwd, bwd, m) for size in range(1, k))
    return (JOIN_FIXED + work / automorphisms * JOIN_STEP) / ELIMINATION_STEP


def _join_order(k: int, atoms: set[tuple[int, int]]) -> list[int]:
    """The join's order of binding (rust/src/graph/join.rs, `order`): the
    variable with the most subgoals to bound terms, then the most subgoals."""
    bound: list[int] = []
    for _ in range(k):
        def rank(x: int) -> tuple:
            links = sum(1 for p in atoms for me, other in (p, p[::-1])
                        if me == x and other != x and (other < 0 or other in bound))
            total = sum(1 for p in atoms for me in p if me == x)
            return (links, total, -x)
        bound.append(max((x for x in range(k) if x not in bound), key=rank))
    return bound


def _forest_homs(prefix: list[int], atoms: set[tuple[int, int]], fwd, bwd, m: int) -> float:
    """Homomorphisms of the spanning forest of ``prefix`` that links each
    variable to the first earlier one it has a subgoal with (constants: the
    constant's neighbours), an upper bound on the prefix's assignments."""
    parent: dict[int, tuple[int, bool]] = {}
    unary: dict[int, np.ndarray] = {x: np.ones(m) for x in prefix}
    for i, x in enumerate(prefix):
        for s, t in sorted(atoms):
            if x not in (s, t) or s == t:
                continue
            other, out = (t, True) if s == x else (s, False)  # out: x → other
            if other < 0:
                row = (fwd if not out else bwd)[[-other - 1], :]
                mask = np.zeros(m)
                mask[row.tocsr().indices] = 1.0
                unary[x] = unary[x] * mask
            elif other in prefix[:i] and x not in parent:
                parent[x] = (other, out)
    value = dict(unary)
    for x in reversed(prefix):  # children after their parents in the order
        if x in parent:
            p, out = parent[x]
            value[p] = value[p] * ((fwd if out else bwd).T @ value[x])
    return float(sum(value[x].sum() for x in prefix if x not in parent))
