"""Counts by inclusion–exclusion over homomorphism counts (privpub.graphs.inclusion,
privpub.graphs.elimination) against brute force on random small graphs and
random patterns (directed and undirected relations, with and without loops,
constants, partial disequality sets), against the generic join on larger
random graphs, and the int64 bound that sends a count to the join."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from graph_brute import brute_count
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from privpub import _core
from privpub.core.errors import ParameterError
from privpub.graphs import CQ, Graph, count
from privpub.graphs import elimination as elimination_module
from privpub.graphs.elimination import eliminable
from privpub.graphs.inclusion import _connected_sign, injective_count
from privpub.graphs.query import Const


@st.composite
def graphs(draw, max_m: int = 6) -> Graph:
    m = draw(st.integers(1, max_m))
    directed, loops = draw(st.booleans()), draw(st.booleans())
    cells = [(i, j) for i in range(m) for j in range(m) if loops or i != j]
    chosen = draw(st.lists(st.sampled_from(cells), max_size=2 * m * m, unique=True)) \
        if cells else []
    edges = np.array(chosen, dtype=np.int64).reshape(-1, 2)
    return Graph.from_edges(edges, directed=directed, m=m, duplicates="merge")


@st.composite
def queries(draw, g: Graph) -> CQ:
    """Up to 5 variables and 7 subgoals (self-loops and constants included),
    every variable in the head, each possible disequality drawn."""
    k = draw(st.integers(1, 5))
    xs = [f"x{i}" for i in range(k)]
    consts = draw(st.lists(st.sampled_from(g.labels.tolist()), max_size=2, unique=True)) \
        if len(g.labels) else []
    terms = xs + [str(c) for c in consts]
    atoms = draw(st.lists(st.tuples(st.sampled_from(terms), st.sampled_from(terms)),
                          min_size=1, max_size=7))
    used = sorted({t for a in atoms for t in a if t in xs})
    if not used:  # a subgoal over constants only still needs a variable
        atoms.append((xs[0], terms[-1]))
        used = [xs[0]]
    named = used + [t for t in terms if t not in xs and any(t in a for a in atoms)]
    pairs = [p for p in itertools.combinations(named, 2) if p[0] in xs or p[1] in xs]
    neq = [p for p in pairs if draw(st.booleans())]
    body = [f"R({a}, {b})" for a, b in atoms] + [f"{a} != {b}" for a, b in neq]
    return CQ.parse(f"q({', '.join(used)}) :- {', '.join(body)}")


def dense(g: Graph, q: CQ) -> tuple[CQ, set[tuple[int, int]]]:
    """The query with constants as dense node ids, and R over dense ids (for brute_count)."""
    def term(t):
        return Const(g.node(t.value)) if isinstance(t, Const) else t
    q = CQ(q.name, q.head, tuple(type(a)(a.relation, tuple(map(term, a.terms))) for a in q.atoms),
           frozenset(frozenset(map(term, p)) for p in q.neq))
    return q, {(int(u), int(v)) for u, v in g.edges()}


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_inclusion_exclusion_agrees_with_brute_force(data):
    g = data.draw(graphs())
    q = data.draw(queries(g))
    want = brute_count(*dense(g, q), g.m)
    got = injective_count(g, q)
    if got is None:  # treewidth > 2 (four variables pairwise linked) or the like
        with pytest.raises(ParameterError, match="method='elimination'"):
            count(g, q, method="elimination")
    else:
        assert got == want
        assert count(g, q, method="elimination") == want
    assert count(g, q) == want


PATTERNS = {
    "5-cycle": "R(a, b), R(b, c), R(c, d), R(d, e), R(e, a)",
    "6-cycle": "R(a, b), R(b, c), R(c, d), R(d, e), R(e, f), R(f, a)",
    "diamond": "R(a, b), R(a, c), R(b, c), R(b, d), R(c, d)",
    "house": "R(a, b), R(b, c), R(c, d), R(d, a), R(a, e), R(b, e)",
    "5-path": "R(a, b), R(b, c), R(c, d), R(d, e)",
    "theta": "R(a, b), R(b, c), R(a, d), R(d, c), R(a, e), R(e, c)",
    "paw with a constant": "R(a, b), R(b, c), R(c, a), R(a, 3)",
    "star with a loop": "R(a, a), R(a, b), R(a, c), R(d, a)",
}


@pytest.mark.parametrize("name", list(PATTERNS))
@pytest.mark.parametrize("directed", [False, True])
def test_larger_graphs_agree_with_the_join(name, directed):
    rng = np.random.default_rng(7)
    edges = rng.integers(0, 40, size=(260, 2))
    g = Graph.from_edges(edges, directed=directed, m=40, duplicates="merge")
    body = PATTERNS[name]
    xs = sorted({c for c in body if c in "abcdef"})
    for neq in (list(itertools.combinations(xs, 2)), list(zip(xs, xs[1:], strict=False))):
        text = f"q({', '.join(xs)}) :- {body}, " + ", ".join(f"{a} != {b}" for a, b in neq)
        assert count(g, text, method="elimination") == count(g, text, method="join"), text


def test_counts_past_int64_go_to_the_join(monkeypatch):
    # With the bound lowered, the products of a 5-cycle on K_6 (entries of A²
    # up to 5) are refused: auto counts by the join, elimination says it cannot.
    g = Graph.from_edges(list(itertools.combinations(range(6), 2)))
    text = ("q(a, b, c, d, e) :- R(a, b), R(b, c), R(c, d), R(d, e), R(e, a), "
            + ", ".join(f"{a} != {b}" for a, b in itertools.combinations("abcde", 2)))
    assert injective_count(g, CQ.parse(text)) == 6 * 5 * 4 * 3 * 2
    monkeypatch.setattr(elimination_module, "LIMIT", 4)
    assert injective_count(g, CQ.parse(text)) is None
    assert count(g, text) == 720
    with pytest.raises(ParameterError, match="method='elimination'"):
        count(g, text, method="elimination")


def test_exact_sum_past_float_precision():
    values = np.array([2**62 - 1, 2**62 - 1, 3], dtype=np.int64)
    assert elimination_module.exact_sum(values) == 2**63 + 1


def test_connected_sign_is_the_partition_lattice_mobius_function():
    # With every pair unequal, f(B) = (−1)^{|B|−1} (|B| − 1)!; on a path of
    # three, only the two edges together connect it: f = +1.
    for size, want in [(1, 1), (2, -1), (3, 2), (4, -6), (5, 24)]:
        block = frozenset(range(size))
        pairs = {frozenset(p) for p in itertools.combinations(range(size), 2)}
        assert _connected_sign(block, pairs, {}) == want
    assert _connected_sign(frozenset({0, 1, 2}), {frozenset({0, 1}), frozenset({1, 2})}, {}) == 1


def test_treewidth_two_patterns_only():
    k4 = set(itertools.combinations(range(4), 2))
    k33 = {(i, j) for i in range(3) for j in range(3, 6)}
    assert not eliminable(k4) and not eliminable(k33)
    assert eliminable(k4 - {(0, 1)})  # the diamond
    assert eliminable({(i, j) for i in range(2) for j in range(2, 5)})  # K_{2,3}
    assert eliminable({(0, 1), (1, 2), (2, 3), (3, 4), (4, 0), (0, 0), (0, -1)})
    # K_4 (treewidth 3) is left to the join. On K_5, a relation without loops,
    # every homomorphism of K_4 is injective even with no disequality.
    g = Graph.from_edges(list(itertools.combinations(range(5), 2)))
    text = "q(a, b, c, d) :- R(a, b), R(a, c), R(a, d), R(b, c), R(b, d), R(c, d)"
    assert injective_count(g, CQ.parse(text)) is None
    assert count(g, text) == 5 * 4 * 3 * 2


def test_auto_takes_the_elimination_when_the_join_costs_more(monkeypatch):
    # A 5-cycle on 8,000 edges: the join would enumerate every 4-path, the
    # elimination is two sparse products and 10 small triangles. Under a
    # budget of nothing it stops and the join counts.
    rng = np.random.default_rng(3)
    edges = rng.integers(0, 1000, size=(8000, 2))
    g = Graph.from_edges(edges[edges[:, 0] != edges[:, 1]], m=1000, duplicates="merge")
    text = ("q(a, b, c, d, e) :- R(a, b), R(b, c), R(c, d), R(d, e), R(e, a), "
            + ", ".join(f"{a} != {b}" for a, b in itertools.combinations("abcde", 2)))
    want = count(g, text, method="join")
    assert injective_count(g, CQ.parse(text), budget=0) is None
    monkeypatch.setattr(_core.graph, "count", None)  # the join would fail
    assert count(g, text) == want


def test_too_many_partitions_go_to_the_join():
    # Twelve variables, ten disequalities: past the partitions it tries, the
    # elimination gives way to the join.
    g = Graph.from_edges(np.random.default_rng(0).integers(0, 8, size=(20, 2)),
                         duplicates="merge")
    xs = [f"x{i}" for i in range(12)]
    body = ", ".join(f"R({a}, {b})" for a, b in zip(xs, xs[1:], strict=False))
    neq = ", ".join(f"{a} != {b}" for a, b in zip(xs, xs[2:], strict=False))
    q = CQ.parse(f"q({', '.join(xs)}) :- {body}, {neq}")
    assert injective_count(g, q) is None
    assert count(g, q) == count(g, q, method="join")
