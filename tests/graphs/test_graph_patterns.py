"""Patterns counted by their meaning (privpub.graphs.patterns): special paths
for any spelling of a pattern on a symmetric relation, and the generic join
with the pattern's automorphisms broken — against brute force on small
random graphs (directed and undirected, constants, with and without
disequalities) and against networkx on Les Misérables."""

from __future__ import annotations

import itertools
import math

import networkx as nx
import numpy as np
import pytest
from graph_brute import brute_count

from privpub.graphs import CQ, Graph, clique, count
from privpub.graphs.patterns import join_arguments, special_path

DISTINCT4 = "a != b, a != c, a != d, b != c, b != d, c != d"
DISTINCT5 = DISTINCT4 + ", a != e, b != e, c != e, d != e"
QUERIES = {
    "triangle, 3 atoms not a cycle": "q(a, b, c) :- R(a, b), R(a, c), R(b, c), "
                                     "a != b, b != c, a != c",
    "K_4, 6 atoms": f"q(a, b, c, d) :- R(a, b), R(a, c), R(a, d), R(b, c), R(b, d), R(c, d), "
                    f"{DISTINCT4}",
    "K_4, 12 atoms": str(clique(4)),
    "4-cycle, mixed orientations": f"q(a, b, c, d) :- R(a, b), R(c, b), R(c, d), R(a, d), "
                                   f"{DISTINCT4}",
    "5-cycle": f"q(a, b, c, d, e) :- R(a, b), R(b, c), R(c, d), R(d, e), R(e, a), {DISTINCT5}",
    "diamond": f"q(a, b, c, d) :- R(a, b), R(a, c), R(b, c), R(b, d), R(c, d), {DISTINCT4}",
    "4-path": f"q(a, b, c, d) :- R(a, b), R(b, c), R(c, d), {DISTINCT4}",
    "4-walk, no disequalities": "q(a, b, c, d) :- R(a, b), R(b, c), R(c, d)",
    "4-path, two head variables": f"q(a, d) :- R(a, b), R(b, c), R(c, d), {DISTINCT4}",
    "3-star at a constant": "q(a, b, c) :- R(2, a), R(2, b), R(2, c), a != b, b != c, a != c",
    "3-star at a constant, one leaf not 4": "q(a, b, c) :- R(2, a), R(2, b), R(2, c), "
                                            "a != b, b != c, a != c, a != 4",
    "3-star at a variable, no leaf the constant": "q(x, a, b, c) :- R(x, a), R(x, b), "
                                                  "R(x, c), a != b, b != c, a != c, x != a, "
                                                  "x != b, x != c, a != 0, b != 0, c != 0",
    "triangle with a self-loop": "q(a, b, c) :- R(a, a), R(a, b), R(b, c), R(c, a), "
                                 "a != b, b != c, a != c",
}


def random_graph(rng: np.random.Generator, m: int, n: int, directed: bool) -> Graph:
    edges = rng.integers(0, m, size=(n, 2))
    return Graph.from_edges(edges, directed=directed, m=m, duplicates="merge")


def labelled(g: Graph) -> set[tuple[int, int]]:
    return {(int(g.labels[u]), int(g.labels[v])) for u, v in g.edges()}


@pytest.mark.parametrize("name", list(QUERIES))
def test_join_and_special_paths_agree_with_brute_force(name):
    q = CQ.parse(QUERIES[name])
    rng = np.random.default_rng(24)
    for trial in range(6):
        g = random_graph(rng, 6, 16, directed=trial % 2 == 1)
        if any(c.value not in set(g.labels.tolist()) for c in q.constants):
            continue
        want = brute_count(q, labelled(g), 6)
        assert count(g, q) == want, (name, trial)
        assert count(g, q, method="join") == want, (name, trial)
        assert count(g, q, method="join", progress=lambda done, total: None) == want


def test_a_pattern_takes_its_special_path_whatever_its_spelling():
    sym = Graph.from_edges([[0, 1], [1, 2], [2, 0]], directed=False)
    directed = Graph.from_edges([[0, 1], [1, 2], [2, 0]], directed=True)
    for name in ("triangle, 3 atoms not a cycle", "K_4, 6 atoms", "K_4, 12 atoms"):
        assert special_path(sym, CQ.parse(QUERIES[name])) == "cliques"
    assert special_path(sym, CQ.parse(QUERIES["4-cycle, mixed orientations"])) == "four_cycles"
    wedge = CQ.parse("q(a, b, c) :- R(b, a), R(b, c), a != b, b != c, a != c")
    assert special_path(sym, wedge) == "two_paths"
    # On a directed relation the spelling is the meaning: b ← a → c is no x → y → z.
    for name in ("triangle, 3 atoms not a cycle", "K_4, 6 atoms",
                 "4-cycle, mixed orientations"):
        assert special_path(directed, CQ.parse(QUERIES[name])) is None
    assert special_path(directed, wedge) is None
    # Without every disequality (or with a constant or a self-loop) a count is
    # not the pattern's embeddings: no special path.
    for text in ["q(a, b, c) :- R(a, b), R(a, c), R(b, c), a != b, b != c",
                 "q(a, b) :- R(a, b), R(a, 1), a != b",
                 QUERIES["triangle with a self-loop"], QUERIES["4-path, two head variables"]]:
        assert special_path(sym, CQ.parse(text)) is None, text


@pytest.mark.parametrize(("name", "undirected", "directed"), [
    ("K_4, 6 atoms", 24, 1), ("K_4, 12 atoms", 24, 24), ("5-cycle", 10, 5),
    ("diamond", 4, 1), ("4-path", 2, 1), ("3-star at a constant", 6, 6),
    ("3-star at a constant, one leaf not 4", 2, 2), ("4-cycle, mixed orientations", 8, 4),
    ("4-walk, no disequalities", 1, 1), ("4-path, two head variables", 1, 1),
    ("triangle with a self-loop", 2, 1),
])
def test_the_join_multiplies_by_the_automorphisms_it_breaks(name, undirected, directed):
    # Both graphs hold node 4, so every query's constants are nodes.
    q = CQ.parse(QUERIES[name])
    sym = Graph.from_edges([[0, 1], [2, 3], [3, 4]], directed=False)
    one_way = Graph.from_edges([[0, 1], [2, 3], [3, 4]], directed=True)
    (*_, less), factor = join_arguments(sym, q)
    assert factor == undirected and len(less) >= (factor > 1)
    assert join_arguments(one_way, q)[1] == directed


def les_miserables() -> tuple[Graph, nx.Graph]:
    nxg = nx.les_miserables_graph()
    index = {v: i for i, v in enumerate(nxg)}
    edges = np.array([[index[u], index[v]] for u, v in nxg.edges()])
    return Graph.from_edges(edges, directed=False), nx.relabel_nodes(nxg, index)


def test_les_miserables_agrees_with_networkx():
    g, nxg = les_miserables()
    adjacency = {v: set(nxg[v]) for v in nxg}
    triangles = sum(nx.triangles(nxg).values()) // 3
    k4 = sum(1 for c in nx.enumerate_all_cliques(nxg) if len(c) == 4)
    five_cycles = sum(1 for c in nx.simple_cycles(nxg, length_bound=5) if len(c) == 5)
    # A diamond is two triangles on an edge: C(common neighbours, 2) per edge.
    diamonds = sum(math.comb(len(adjacency[u] & adjacency[v]), 2) for u, v in nxg.edges())
    # 4-paths a-b-c-d: each ordered edge (b, c) with a ∈ N(b)∖c, d ∈ N(c)∖b,
    # less the choices a = d (a triangle on b, c: 6 ordered edges per triangle).
    paths = sum((nxg.degree(b) - 1) * (nxg.degree(c) - 1) for b, c in nxg.edges()) * 2
    paths -= 6 * triangles
    want = {"triangle, 3 atoms not a cycle": 6 * triangles, "K_4, 6 atoms": 24 * k4,
            "K_4, 12 atoms": 24 * k4, "5-cycle": 10 * five_cycles, "diamond": 4 * diamonds,
            "4-path": paths}
    assert k4 > 0 and five_cycles > 0
    for name, value in want.items():
        q = CQ.parse(QUERIES[name])
        assert count(g, q) == value, name
        assert count(g, q, method="join") == value, name
    stars = sum(math.comb(len(adjacency[v]), 3) for v in nxg)
    spelt = "q(x, a, b, c) :- R(a, x), R(x, b), R(c, x), a != b, b != c, a != c, " \
            "x != a, x != b, x != c"
    assert count(g, spelt) == 6 * stars
    hub = max(nxg, key=nxg.degree)
    at_hub = CQ.parse(QUERIES["3-star at a constant"].replace("R(2,", f"R({hub},"))
    assert count(g, at_hub) == 6 * math.comb(nxg.degree(hub), 3)


def test_orbits_are_taken_over_constants_fixed():
    # x and y are symmetric only while neither is pinned by a constant.
    g = Graph.from_edges(list(itertools.combinations(range(5), 2)), directed=False)
    free = CQ.parse("q(x, y) :- R(0, x), R(0, y), x != y")
    pinned = CQ.parse("q(x, y) :- R(0, x), R(0, y), R(x, 3), x != y")
    assert join_arguments(g, free)[1] == 2 and join_arguments(g, pinned)[1] == 1
    assert count(g, free) == 4 * 3
    assert count(g, pinned) == 3 * 3  # x ∈ {1, 2, 4}, y ∈ N(0) ∖ x
