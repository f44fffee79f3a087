"""Graphs as users load them: bad input is a named PrivpubError (the class
asserted, the value at fault in the message), never a bare numpy or Python
error, and nothing is converted across kinds."""

from __future__ import annotations

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
from privpub.graphs import CQ, Graph, clique, count, local_sensitivity, path_from, pattern
from privpub.graphs import graph as graph_module

TRIANGLE_EDGES = [[0, 1], [1, 2], [2, 0]]


def raises(cls, match, call):
    """call() raises exactly cls (not a parent or a bare built-in) with match in it."""
    with pytest.raises(Exception) as info:
        call()
    assert info.type is cls, f"{info.type.__name__}: {info.value}"
    assert match in str(info.value), str(info.value)
    return info.value


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
    assert Graph.from_edges(nx.path_graph(3).edges()).tuples in (2, 4)
    assert Graph.from_edges(zip([0, 1], [1, 2], strict=True)).m == 3


def test_bad_edge_containers_are_named():
    raises(DataTypeError, "got shape (2,)", lambda: Graph.from_edges([[1, 2], [3]]))
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
