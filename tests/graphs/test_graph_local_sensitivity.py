"""Exact local sensitivity (privpub.graphs.local_sensitivity): against
recounting after each single-tuple change on random small graphs and random
patterns, and against every instance of R on a 3-node domain, where it also
bounds Def. 3.1's replacement form."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from graph_brute import all_instances

from privpub.core.errors import ParameterError, QueryError
from privpub.graphs import (
    Graph,
    clique,
    count,
    cycle,
    local_sensitivity,
    path_from,
    pattern,
    triangle,
    two_path,
)


def graph_of(edges: set[tuple[int, int]], m: int) -> Graph:
    arr = np.array(sorted(edges), dtype=np.int64).reshape(-1, 2)
    return Graph.from_edges(arr, directed=True, m=m)


def recount(edges: set[tuple[int, int]], m: int, q) -> tuple[int, int]:
    """(largest gain over absent tuples, largest loss over present ones) by
    toggling each of the m² tuples and recounting with the generic join."""
    base = count(graph_of(edges, m), q, method="join")
    gain = loss = 0
    for t in itertools.product(range(m), repeat=2):
        changed = count(graph_of(edges ^ {t}, m), q, method="join")
        if t in edges:
            loss = max(loss, base - changed)
        else:
            gain = max(gain, changed - base)
    return gain, loss


def random_pattern(rng: np.random.Generator):
    k = int(rng.integers(2, 5))
    pairs = [(a, b) for a in range(k) for b in range(k) if a != b]
    while True:
        chosen = [p for p in pairs if rng.random() < 0.35]
        if {v for p in chosen for v in p} == set(range(k)):
            return pattern(chosen)


@pytest.mark.parametrize("symmetric", [False, True])
def test_random_patterns_agree_with_recounting(symmetric):
    rng = np.random.default_rng(21 if symmetric else 22)
    checked_positive = 0
    for _ in range(25):
        m = int(rng.integers(4, 8))
        edges = {(a, b) for a in range(m) for b in range(m) if rng.random() < 0.35}
        if symmetric:
            edges |= {(b, a) for a, b in edges}
        q = random_pattern(rng)
        got = local_sensitivity(graph_of(edges, m), q)
        gain, loss = recount(edges, m, q)
        assert (got.added, got.removed) == (gain, loss), (sorted(edges), str(q))
        assert got.value == max(gain, loss)
        checked_positive += got.value > 0
        for change, at, present in ((got.added, got.add_tuple, False),
                                    (got.removed, got.remove_tuple, True)):
            if change:
                assert (at in edges) is present
                after = count(graph_of(edges ^ {at}, m), q)
                assert abs(after - count(graph_of(edges, m), q)) == change
            else:
                assert at is None
    assert checked_positive >= 15


@pytest.mark.parametrize("query", [triangle(), two_path(), pattern([(0, 1), (2, 1)])],
                         ids=str)
def test_every_instance_of_a_three_node_domain(query):
    m = 3
    values = all_instances(query, m)
    index = np.arange(values.size)
    # Add/remove one tuple: flip one bit of the instance's index.
    flips = np.stack([np.abs(values[index ^ (1 << bit)] - values) for bit in range(m * m)])
    expected = flips.max(axis=0)
    for code in range(values.size):
        edges = {(bit // m, bit % m) for bit in range(m * m) if code >> bit & 1}
        got = local_sensitivity(graph_of(edges, m), query)
        assert got.value == expected[code], (sorted(edges), str(query))
        # Def. 3.1 (replace t' ∈ I by t ∉ I) is bounded by the add/remove form.
        replaced = max((abs(int(values[code - (1 << o) + (1 << i)]) - int(values[code]))
                        for o in range(m * m) if code >> o & 1
                        for i in range(m * m) if not code >> i & 1), default=0)
        assert replaced <= got.value


def test_original_ids_name_the_tuples():
    g = Graph.from_edges(np.array([["a", "b"], ["b", "c"], ["c", "a"], ["c", "d"]]),
                         directed=False)
    got = local_sensitivity(g, triangle())
    assert got.removed == 3 and got.remove_tuple == ("a", "b")
    assert got.added == 3 and got.add_tuple == ("a", "d")


def test_cliques_and_cycles_on_a_symmetric_graph():
    rng = np.random.default_rng(3)
    m = 7
    edges = {(a, b) for a in range(m) for b in range(a + 1, m) if rng.random() < 0.6}
    edges |= {(b, a) for a, b in edges}
    for q in (clique(4), cycle(4), clique(3)):
        got = local_sensitivity(graph_of(edges, m), q)
        assert (got.added, got.removed) == recount(edges, m, q), str(q)


def test_queries_outside_the_pattern_class_are_refused():
    g = graph_of({(0, 1), (1, 2)}, 3)
    with pytest.raises(QueryError, match="pattern queries"):
        local_sensitivity(g, path_from(0, 2))
    with pytest.raises(QueryError, match="pattern queries"):
        local_sensitivity(g, "q(x, y) :- R(x, y), R(y, x)")  # no x != y
    with pytest.raises(QueryError, match="arity"):
        local_sensitivity(g, "q(x, y, z) :- R(x, y, z), x != y, y != z, x != z")
    with pytest.raises(ParameterError, match="Graph"):
        local_sensitivity([(0, 1)], triangle())
