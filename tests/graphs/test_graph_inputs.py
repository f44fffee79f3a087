"""Graphs as users load them: bad input is a named PrivpubError (the class
asserted, the value at fault in the message), never a bare numpy or Python
error, and nothing is converted across kinds."""

from __future__ import annotations

import igraph as ig
import networkx as nx
import numpy as np
import pandas as pd
import pytest

from privpub.core.errors import (
    DataTypeError,
    DomainError,
    MissingValueError,
    ParameterError,
    QueryError,
)
from privpub.graphs import (
    CQ,
    Graph,
    LaplaceMechanism,
    MultipleQueryMechanism,
    NegativeLeakageMechanism,
    RelationshipMechanism,
    SmoothTriangleMechanism,
    clique,
    count,
    cycle,
    local_sensitivity,
    path_from,
    pattern,
    triangle,
    two_path,
)
from privpub.graphs import graph as graph_module

TRIANGLE_EDGES = [[0, 1], [1, 2], [2, 0]]
LES_MISERABLES_ASSIGNMENTS = 2_802   # 467 triangles × 3! ordered assignments


def raises(cls, match, call):
    """call() raises exactly cls (not a parent or a bare built-in) with match in it."""
    with pytest.raises(Exception) as info:
        call()
    assert info.type is cls, f"{info.type.__name__}: {info.value}"
    assert match in str(info.value), str(info.value)
    return info.value


# ------------------------------------------------- direction: undirected default
@pytest.fixture(scope="module")
def les_miserables() -> nx.Graph:
    return nx.les_miserables_graph()


def test_an_edge_list_is_undirected_by_default(les_miserables):
    G = les_miserables
    triangles = sum(nx.triangles(G).values()) // 3
    assert 6 * triangles == LES_MISERABLES_ASSIGNMENTS
    edges = list(G.edges())                     # each friendship once, as in a file
    h = ig.Graph.TupleList(edges, directed=False)
    assert len(h.list_triangles()) == triangles
    frame = nx.to_pandas_edgelist(G)            # source, target, weight
    for g in (Graph.from_edges(edges), Graph.from_edges(np.array(edges)),
              Graph.from_frame(frame), Graph.from_frame(frame[["target", "source"]])):
        assert not g.directed and g.symmetric
        assert (g.m, g.tuples) == (77, 2 * 254)
        assert count(g, triangle()) == count(g, triangle(), method="join") == \
            LES_MISERABLES_ASSIGNMENTS
        assert count(g, two_path()) == sum(d * (d - 1) for _, d in G.degree())
    # The same relation as networkx's own (undirected) graph gives.
    g = Graph.from_edges(edges)
    nxg = Graph.from_networkx(G)
    assert {tuple(p) for p in g.labels[g.edges()].tolist()} == \
        {tuple(p) for p in nxg.labels[nxg.edges()].tolist()}
    # A mechanism answers around the true count, not around 0.
    answers = [LaplaceMechanism.for_graph(1e3, triangle(), g).answer(g, seed=s).value
               for s in range(9)]
    assert np.median(answers) == LES_MISERABLES_ASSIGNMENTS


def test_directed_true_reads_each_row_as_one_tuple(les_miserables):
    edges = list(les_miserables.edges())
    g = Graph.from_edges(edges, directed=True)
    assert g.directed and g.tuples == 254 and not g.symmetric
    # As main counted it: the rows' orientations close no directed cycle.
    dg = nx.DiGraph(edges)
    cycles3 = sum(1 for c in nx.simple_cycles(dg, length_bound=3) if len(c) == 3)
    assert count(g, triangle()) == 3 * cycles3 == 0
    assert count(Graph.from_frame(nx.to_pandas_edgelist(les_miserables), directed=True),
                 triangle()) == 0
    # One directed 3-cycle (0→1→2→0: 3 rotations); 0, 2, 3 is a triangle only undirected.
    rows = [[0, 1], [1, 2], [2, 0], [2, 3], [3, 0]]
    d = Graph.from_edges(rows, directed=True)
    assert count(d, triangle()) == 3 and count(Graph.from_edges(rows), triangle()) == 12
    assert {tuple(p) for p in d.edges().tolist()} == {tuple(p) for p in rows}
    assert count(d, "q(x, y) :- R(x, y), R(y, x)") == 0           # no reciprocal tuple
    assert count(Graph.from_networkx(nx.DiGraph(rows)), triangle()) == 3
    # Both orientations of one friendship in an undirected list: named, with both ways out.
    err = raises(DomainError, "edge row 1 (1, 0) repeats an earlier tuple of R (undirected",
                 lambda: Graph.from_edges([[0, 1], [1, 0]]))
    assert "duplicates='merge'" in str(err) and "directed=True" in str(err)
    assert Graph.from_edges([[0, 1], [1, 0]], directed=True).tuples == 2


# ------------------------------------------------------------------------- m
@pytest.mark.parametrize("build", [
    lambda m: Graph.from_edges(TRIANGLE_EDGES, m=m),
    lambda m: Graph.from_frame(pd.DataFrame(TRIANGLE_EDGES, columns=["source", "target"]), m=m),
    lambda m: Graph.from_networkx(nx.cycle_graph(3), m=m),
], ids=["edges", "frame", "networkx"])
def test_m_beyond_the_supported_range_is_named(build):
    raises(ParameterError, f"m = {2**70} is beyond the supported range", lambda: build(2**70))
    raises(ParameterError, f"m = {2**32} is beyond", lambda: build(2**32))
    raises(ParameterError, "m = 18446744073709551615", lambda: build(np.uint64(2**64 - 1)))
    raises(ParameterError, "m must be at least 0, got -1", lambda: build(-1))
    raises(ParameterError, "m must be an integer, got 3.0", lambda: build(3.0))
    raises(ParameterError, "m must be an integer, got True", lambda: build(True))
    assert build(4).m == 4


def test_m_whose_csr_does_not_fit_in_memory_is_named(monkeypatch):
    # The Rust allocator aborts the process when the offsets do not fit: checked first.
    monkeypatch.setattr(graph_module, "_physical_memory", lambda: 2**30)
    raises(ParameterError, f"m = {2**27}: the CSR holds two offset arrays",
           lambda: Graph.from_edges(TRIANGLE_EDGES, m=2**27))
    assert Graph.from_edges(TRIANGLE_EDGES, m=2**20).m == 2**20   # 16 MiB fits


def test_more_distinct_ids_than_the_core_holds_is_named(monkeypatch):
    monkeypatch.setattr(graph_module, "MAX_NODES", 3)
    raises(DomainError, "4 distinct node ids, beyond the supported range",
           lambda: Graph.from_edges([[0, 1], [2, 3]]))
    raises(ParameterError, "m = 4 is beyond the supported range",
           lambda: Graph.from_edges([[0, 1]], m=4))
    assert Graph.from_edges([[0, 1], [1, 2]]).m == 3


# ----------------------------------------------------------------------- ids
def test_non_integral_and_bool_ids_are_named():
    raises(DomainError, "node id 0.5 (source of edge row 1) is not an integer",
           lambda: Graph.from_edges(np.array([[1.0, 2.0], [0.5, 1.0]])))
    raises(DomainError, "node id inf (target of edge row 0)",
           lambda: Graph.from_edges(np.array([[1.0, np.inf]])))
    raises(DomainError, "node id 2.5 (target of edge row 0)",
           lambda: Graph.from_frame(pd.DataFrame({"source": [1], "target": [2.5]})))
    raises(DomainError, "node id 2.5 (target of edge row 1)",     # mixed int/float list
           lambda: Graph.from_edges([[1, 2], [3, 2.5]]))
    raises(DataTypeError, "node id True (source of edge row 0) is a bool",
           lambda: Graph.from_edges(np.array([[True, False]])))
    raises(DataTypeError, "node id True (source of edge row 1) is a bool",
           lambda: Graph.from_edges([[0, 1], [True, 2]]))          # True would merge with 1
    raises(DataTypeError, "node id [1] (target of edge row 0) is a list",
           lambda: Graph.from_edges([[0, [1]]]))
    raises(MissingValueError, "edge row 1 has a missing target node id",
           lambda: Graph.from_frame(pd.DataFrame({"source": [1, 2],
                                                  "target": pd.array([2, None], "Int64")})))
    # Whole-number floats are ids like any other (no conversion).
    g = Graph.from_edges(np.array([[1.0, 2.0]]), directed=True)
    assert g.labels.tolist() == [1.0, 2.0] and count(g, "q(x) :- R(1, x)") == 1


def test_ids_keep_their_kind():
    # numpy would make [[1, "a"]] the strings "1", "a": the int must stay an int.
    g = Graph.from_edges([[1, "a"], ["a", "b"]], directed=True)
    assert sorted(map(repr, g.labels.tolist())) == ["'a'", "'b'", "1"]
    assert count(g, "q(x) :- R(1, x)") == 1
    raises(DomainError, "node '1' is not in the graph", lambda: count(g, "q(x) :- R('1', x)"))
    # Negative and huge ints are ids (labels), not positions: they are not out of range.
    g = Graph.from_edges([[-1, 2**70], [2**70, 5]], directed=True)
    assert g.m == 3 and count(g, "q(x) :- R(-1, x), R(x, 5)") == 1
    assert count(g, f"q(x) :- R({2**70}, x)") == 1
    # An all-int list keeps an integer dtype, as an array would.
    assert Graph.from_edges([[0, 1]]).labels.dtype == np.int64
    # Iterables of pairs (networkx edge views, zip) are read as lists.
    assert Graph.from_edges(nx.path_graph(3).edges()).tuples == 4    # undirected
    assert Graph.from_edges(zip([0, 1], [1, 2], strict=True)).m == 3


def test_bad_edge_containers_are_named():
    raises(DataTypeError, "got shape (2,)", lambda: Graph.from_edges([[1, 2], [3]]))
    raises(DataTypeError, "got shape (1,)", lambda: Graph.from_edges([7]))
    empty = Graph.from_edges([], m=5)                     # no edges: isolated nodes
    assert (empty.m, empty.tuples, count(empty, triangle())) == (5, 0, 0)
    raises(DataTypeError, "got shape (1, 3)", lambda: Graph.from_edges([[1, 2, 3]]))
    raises(DataTypeError, "got NoneType", lambda: Graph.from_edges(None))
    raises(DataTypeError, "got str", lambda: Graph.from_edges("0 1"))
    raises(DataTypeError, "the int given is not one", lambda: Graph.from_edges(5))
    raises(DataTypeError, "no column ['a']",
           lambda: Graph.from_frame(pd.DataFrame({"a": [0], "b": [1]}), source=["a"]))
    raises(DataTypeError, "needs a networkx graph, got list",
           lambda: Graph.from_networkx(TRIANGLE_EDGES))
    err = raises(DomainError, "edge row 1 ('a', 'b') repeats",
                 lambda: Graph.from_edges(np.array([["a", "b"], ["a", "b"]], dtype=object),
                                          directed=True))
    assert "duplicates='merge'" in str(err)


# ------------------------------------------------------------------- queries
def test_bad_constants_and_counting_limits_are_named():
    g = Graph.from_edges(TRIANGLE_EDGES, directed=False)
    raises(DomainError, "node True is a bool", lambda: count(g, path_from(True, 1)))
    raises(DomainError, f"node {2**70} is not in the graph",
           lambda: count(g, f"q(x) :- R({2**70}, x)"))
    raises(QueryError, "constant [1] is a list", lambda: path_from([1], 2))
    raises(QueryError, "constant [1] is a list",
           lambda: CQ.build("q", ["x"], [("R", ("x", [1]))]))
    raises(QueryError, "pattern node [1]", lambda: pattern([(0, [1])]))
    # Past the clique path's k = 32 the generic join counts (no kernel error).
    assert count(g, clique(33)) == 0 and count(g, clique(3)) == 6
    big = Graph.from_edges(TRIANGLE_EDGES, directed=False, m=2**21)
    raises(QueryError, "may overflow the kernel's 128-bit counts",
           lambda: local_sensitivity(big, clique(9)))
    assert local_sensitivity(big, clique(3)).removed == 6


# ------------------------------------------------------------ relation names
WRONG = "q(x) :- Friends(x, y)"
WHERE_A_QUERY_MEETS_A_GRAPH = {
    "count": lambda g, q: count(g, q),
    "count (join)": lambda g, q: count(g, q, method="join"),
    "local_sensitivity": lambda g, q: local_sensitivity(g, q),
    "RelationshipMechanism.for_graph": lambda g, q: RelationshipMechanism.for_graph(
        1.0, 0.5, q, g),
    "LaplaceMechanism.for_graph": lambda g, q: LaplaceMechanism.for_graph(1.0, q, g),
    "NegativeLeakageMechanism.for_graph": lambda g, q: NegativeLeakageMechanism.for_graph(
        1.0, 0.5, q, g),
    "MultipleQueryMechanism.for_graph": lambda g, q: MultipleQueryMechanism.for_graph(
        1.0, 0.9, [triangle(g.relation_names[0]), q], g),
    "RelationshipMechanism.answer": lambda g, q: RelationshipMechanism(
        1.0, 0.5, q, g.m).answer(g, seed=1),
    "LaplaceMechanism.answer": lambda g, q: LaplaceMechanism(1.0, q, g.m).answer(g, seed=1),
    "NegativeLeakageMechanism.answer": lambda g, q: NegativeLeakageMechanism(
        1.0, 0.5, q, g.m).answer(g, seed=1),
    "MultipleQueryMechanism.answer": lambda g, q: MultipleQueryMechanism(
        1.0, 0.9, [q], g.m).answer(g, seed=1),
}


@pytest.mark.parametrize("call", WHERE_A_QUERY_MEETS_A_GRAPH.values(),
                         ids=WHERE_A_QUERY_MEETS_A_GRAPH.keys())
def test_a_query_must_name_the_graphs_relation(call):
    g = Graph.from_edges(TRIANGLE_EDGES, directed=False, m=8)
    wrong = "triangle(x, y, z) :- Friends(x, y), Friends(y, z), Friends(z, x), x != y, " \
            "y != z, z != x"
    err = raises(QueryError, "reads relation 'Friends', but the graph's relation is 'R'",
                 lambda: call(g, wrong))
    assert "relation=['R', 'Friends']" in str(err)
    call(g, triangle())                                   # R is the default name
    named = Graph.from_edges(TRIANGLE_EDGES, directed=False, m=8, relation="Friends")
    call(named, wrong)
    raises(QueryError, "reads relation 'R', but the graph's relation is 'Friends'",
           lambda: call(named, triangle()))
    both = Graph.from_edges(TRIANGLE_EDGES, directed=False, m=8, relation=["Friends", "R"])
    call(both, wrong)
    call(both, triangle())


def test_relation_names_on_every_builder_and_in_the_catalog():
    frame = pd.DataFrame(TRIANGLE_EDGES, columns=["source", "target"])
    for g in (Graph.from_edges(TRIANGLE_EDGES, directed=False, relation="Friends"),
              Graph.from_frame(frame, directed=False, relation="Friends"),
              Graph.from_networkx(nx.cycle_graph(3), relation="Friends")):
        assert g.relation_names == ("Friends",) and "relation=Friends" in repr(g)
        assert count(g, "q(x, y) :- Friends(x, y)") == 6
        assert count(g, triangle("Friends")) == 6 and count(g, two_path("Friends")) == 6
        assert count(g, cycle(3, "Friends")) == 6 and count(g, clique(3, "Friends")) == 6
        assert count(g, path_from(0, 2, "Friends")) == 3
        assert count(g, pattern([(0, 1), (1, 2)], relation="Friends")) == 6
        raises(QueryError, "reads relation 'R'", lambda g=g: count(g, WRONG.replace(
            "Friends", "R")))
        # The smooth mechanism counts Δ itself, over whatever the relation is called.
        mech = SmoothTriangleMechanism.for_graph(1.0, 1e-3, g)
        assert isinstance(mech.answer(g, seed=1).value, int)
    for bad in ("", "1R", "R S", ["R", "R"], [], None, 5, ["R", 5]):
        raises(ParameterError, "relation", lambda bad=bad: Graph.from_edges(
            TRIANGLE_EDGES, relation=bad))
    raises(ParameterError, "relation must be a relation name", lambda: triangle("R(x"))
    raises(ParameterError, "relation must be a relation name", lambda: Graph.from_networkx(
        nx.cycle_graph(3), relation="no such"))
