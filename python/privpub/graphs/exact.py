"""Exact values of CQ(≠) queries over a :class:`Graph`, computed by the Rust core.

:func:`count` returns the number of distinct head assignments (Rastogi et
al., Sec. 2.1). Every query is answered by a generic join over the sorted
adjacency (rust/src/graph/join.rs), with the pattern's automorphisms broken
where the count is one of embeddings; three shapes take a special path that
is exact and faster: K_k (and Δ) on a symmetric R by degree-ordered clique
listing, c_4 from two-path counters, and ∨ from degrees
(rust/src/graph/patterns.rs), recognised by the pattern's meaning, not its
spelling (privpub.graphs.patterns). A query over all its variables whose
pattern has treewidth ≤ 2 (paths, cycles, trees, diamonds) may instead be
counted by inclusion–exclusion over homomorphism counts, each a variable
elimination of sparse products (privpub.graphs.inclusion), when the join's
estimated cost is higher.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np

import privpub._core as _core
from privpub.core.errors import ParameterError, QueryError
from privpub.core.optional import progress_bar
from privpub.graphs.graph import Graph, check_graph
from privpub.graphs.inclusion import MAX_TERMS, injective_count, join_cost
from privpub.graphs.patterns import join_arguments, special_path
from privpub.graphs.query import CQ, as_query

METHODS = ("auto", "join", "elimination")
PARTS = 64  # generic-join counts with progress: Rust calls over node-id ranges


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
    method : {"auto", "join", "elimination"}
        ``"join"`` forces the generic join and ``"elimination"`` the
        inclusion–exclusion over homomorphism counts (for cross-checks; a
        ParameterError for a query it cannot count); ``"auto"`` takes a
        special path where one applies (:func:`special_path`), else whichever
        of the two a cost estimate prefers.
    progress : bool or callable(done, total)
        For a generic-join count: split the first-bound variable's nodes into
        up to 64 ranges of ids (of degree ranks when symmetries are broken),
        counted by separate Rust calls (each releases
        the GIL and runs in parallel), and report after each: ``True`` shows a
        tqdm bar (silent when stderr is not a terminal; none where tqdm, the
        extra ``privpub[progress]``, is not installed), a callable gets
        (nodes done, m). The special paths and the elimination are fast
        and ignore it.

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
        return int(_core.graph.cliques(graph.relation, k))
    if path == "four_cycles":
        return int(_core.graph.four_cycles(graph.relation))
    if path == "two_paths":
        return int(_core.graph.two_paths(graph.relation))
    if method == "elimination":
        value = injective_count(graph, query)
        if value is None:
            raise ParameterError(
                f"method='elimination' counts queries whose head holds every variable and "
                f"whose pattern (and each merge of it) has treewidth ≤ 2, within int64 and "
                f"{MAX_TERMS} merges; query {query.name} is not one: use method='auto'")
        return value
    args, factor = join_arguments(graph, query)
    if method == "auto":
        value = injective_count(graph, query, budget=join_cost(graph, query, factor))
        if value is not None:
            return value
    args = (graph.relation, *args)
    if progress is False:
        return factor * int(_core.graph.count(*args, (0, graph.m)))
    return factor * _count_in_parts(args, graph.m, bool(query.head), progress)


def true_answers(data: object, queries: list[str]) -> list[int]:
    """The exact answers q(I) of ``queries`` on ``data``, the :class:`Graph` a
    released answer was made on (the card shows them beside the released ones)."""
    if not isinstance(data, Graph):
        raise ParameterError(f"data for a graph answer's card must be the privpub.Graph it "
                             f"answered on, got {type(data).__name__}")
    return [int(count(data, q)) for q in queries]


def _count_in_parts(args: tuple, m: int, has_head: bool,
                    progress: bool | Callable[[int, int], None]) -> int:
    """The count as parts over ranges of the first variable's node ids: their sum,
    or for a query without head variables (0 or 1) their largest."""
    bounds = np.linspace(0, m, min(PARTS, m) + 1).round().astype(int).tolist()
    bar = progress_bar(total=m, desc="count", unit="node") if progress is True else None
    parts = []
    try:
        for lo, hi in itertools.pairwise(bounds):
            parts.append(int(_core.graph.count(*args, (lo, hi))))
            if bar is not None:
                bar.update(hi - lo)
            elif callable(progress):
                progress(hi, m)
    finally:
        if bar is not None:
            bar.close()
    return sum(parts) if has_head else max(parts)
