"""Exact values of CQ(≠) queries over a :class:`Graph`, computed by the Rust core.

:func:`count` returns the number of distinct head assignments (Rastogi et
al., Sec. 2.1). Every query is answered by a generic join over the sorted
adjacency (rust/src/graph/join.rs); two shapes take a special path that is
exact and faster: K_k (and Δ) on a symmetric R by degree-ordered clique
listing, c_4 from two-path counters, and ∨ from degrees (rust/src/graph/patterns.rs).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np
from tqdm import tqdm

from privpub import _core
from privpub.core.errors import ParameterError, QueryError
from privpub.graphs.graph import Graph, check_graph
from privpub.graphs.query import CQ, Const, Term, Var, as_query

METHODS = ("auto", "join")
PARTS = 64  # generic-join counts with progress: Rust calls over node-id ranges
MAX_CLIQUE = 32  # the clique path's largest k (rust/src/graph/patterns.rs); the join does more


def _shape(query: CQ) -> tuple[int, set[tuple[int, int]]] | None:
    """(k, directed pattern edges over 0..k−1) when the query counts all
    assignments of k pairwise distinct variables without constants; else None."""
    xs = sorted(query.variables)
    if (query.constants or set(query.head) != set(xs)
            or any(len(a.terms) != 2 for a in query.atoms)):
        return None
    if query.neq != frozenset(frozenset(p) for p in itertools.combinations(xs, 2)):
        return None
    index = {x: i for i, x in enumerate(xs)}
    return len(xs), {(index[a.terms[0]], index[a.terms[1]]) for a in query.goals}


def _one_cycle(edges: set[tuple[int, int]], k: int) -> bool:
    """Whether the pattern is one directed cycle through all k nodes."""
    succ = dict(edges)
    if len(succ) != k or sorted(succ.values()) != list(range(k)):
        return False
    node, seen = 0, set()
    while node not in seen:
        seen.add(node)
        node = succ[node]
    return len(seen) == k


def special_path(graph: Graph, query: CQ) -> str | None:
    """The special path :func:`count` takes for this graph and query, if any."""
    shape = _shape(query)
    if shape is None:
        return None
    k, edges = shape
    every = {(a, b) for a in range(k) for b in range(k) if a != b}
    directed_cycle = k == 3 and len(edges) == 3 and _one_cycle(edges, k)
    if graph.symmetric and 2 <= k <= MAX_CLIQUE and (edges == every or directed_cycle):
        return "cliques"
    if k == 4 and len(edges) == 4 and _one_cycle(edges, k):
        return "four_cycles"
    if k == 3 and len(edges) == 2:
        (a, b), (c, d) = sorted(edges)
        if b == c or d == a:  # x → y → z
            return "two_paths"
    return None


def checked_inputs(graph: Graph, query: CQ | str) -> CQ:
    """The query (parsed from text) after checking that ``graph`` is a Graph and
    the query reads only its binary relation, by a name the graph has
    (:attr:`Graph.relation_names`). Every function where a query meets a graph
    (count, local sensitivity, the mechanisms' ``for_graph`` and ``answer``)
    checks through here."""
    check_graph(graph)
    query = as_query(query)
    check_relation(query, graph)
    return query


def check_relation(query: CQ, graph: Graph | None = None) -> None:
    """QueryError unless every subgoal is binary over one relation (a graph),
    named as ``graph`` names it when a graph is given."""
    names = {a.relation for a in query.atoms}
    bad = [a for a in query.atoms if len(a.terms) != 2]
    if bad:
        raise QueryError(f"subgoal {bad[0]} has arity {len(bad[0].terms)}; a graph is a binary "
                         "relation R(u, v)")
    if len(names) > 1:
        raise QueryError(f"the query uses relations {sorted(names)}; a graph holds one binary "
                         "relation")
    if graph is None:
        return
    (name,) = names
    if name not in graph.relation_names:
        has = " or ".join(repr(n) for n in graph.relation_names)
        raise QueryError(
            f"query {query.name} reads relation {name!r}, but the graph's relation is {has}: "
            f"write the query over {graph.relation_names[0]} (the catalog functions take "
            f"relation=), or declare {name!r} as a name of the graph when building it "
            f"(relation=[{', '.join(repr(n) for n in (*graph.relation_names, name))}])")


def count(graph: Graph, query: CQ | str, *, method: str = "auto",
          progress: bool | Callable[[int, int], None] = False) -> int:
    """q(I): the number of distinct assignments of the query's head variables.

    Parameters
    ----------
    graph : Graph
    query : CQ or str
        A query or its datalog text (parsed with :meth:`CQ.parse`).
    method : {"auto", "join"}
        ``"join"`` forces the generic join (for cross-checks); ``"auto"`` takes
        a special path where one applies (:func:`special_path`).
    progress : bool or callable(done, total)
        For a generic-join count: split the first-bound variable's nodes into
        up to 64 ranges of ids, counted by separate Rust calls (each releases
        the GIL and runs in parallel), and report after each: ``True`` shows a
        tqdm bar (silent when stderr is not a terminal), a callable gets
        (nodes done, m). The special paths are fast and ignore it.

    Examples
    --------
    >>> import numpy as np
    >>> from privpub.graphs import Graph, triangle
    >>> g = Graph.from_edges(np.array([[0, 1], [1, 2], [2, 0], [2, 3]]), directed=False)
    >>> count(g, triangle())      # one undirected triangle, 3! ordered assignments
    6
    """
    if method not in METHODS:
        raise ParameterError(f"method must be one of {METHODS}, got {method!r}")
    if not (isinstance(progress, bool) or callable(progress)):
        raise ParameterError(f"progress must be True, False or a callable(done, total), got "
                             f"{progress!r}")
    query = checked_inputs(graph, query)
    path = special_path(graph, query) if method == "auto" else None
    if path == "cliques":
        k = len(query.variables)
        return int(_core.graph_cliques(graph.relation, k))
    if path == "four_cycles":
        return int(_core.graph_four_cycles(graph.relation))
    if path == "two_paths":
        return int(_core.graph_two_paths(graph.relation))
    order = list(query.head) + sorted(query.variables - set(query.head))
    index = {x: i for i, x in enumerate(order)}

    def code(t: Term) -> int:
        if isinstance(t, Var):
            return index[t]
        assert isinstance(t, Const)
        return -(graph.node(t.value) + 1)

    atoms = [(code(a.terms[0]), code(a.terms[1])) for a in query.atoms]
    neq = [(code(a), code(b)) for a, b in query.neq_pairs()]
    args = (graph.relation, len(order), len(query.head), atoms, neq)
    if progress is False:
        return int(_core.graph_count(*args, (0, graph.m)))
    return _count_in_parts(args, graph.m, bool(query.head), progress)


def _count_in_parts(args: tuple, m: int, has_head: bool,
                    progress: bool | Callable[[int, int], None]) -> int:
    """The count as parts over ranges of the first variable's node ids: their sum,
    or for a query without head variables (0 or 1) their largest."""
    bounds = np.linspace(0, m, min(PARTS, m) + 1).round().astype(int).tolist()
    bar = tqdm(total=m, desc="count", unit="node", disable=None) if progress is True else None
    parts = []
    try:
        for lo, hi in itertools.pairwise(bounds):
            parts.append(int(_core.graph_count(*args, (lo, hi))))
            if bar is not None:
                bar.update(hi - lo)
            elif callable(progress):
                progress(hi, m)
    finally:
        if bar is not None:
            bar.close()
    return sum(parts) if has_head else max(parts)
