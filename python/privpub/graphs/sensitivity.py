"""Sensitivity of CQ(≠) queries: the global sensitivity GS_q over a domain of
m nodes (for the Laplace (DMNS) baseline and the min(λ, GS) form of
Algorithm 2.1), and the exact local sensitivity LS_q(I) of a given graph.

Neighbouring instances differ in one tuple of R (|I| = |I'|, I + t = I' + t',
Def. 3.1). CQ(≠) queries are monotone, so |q(I') − q(I)| is at most the
largest gain from adding one tuple t (q(I − t' + t) − q(I) ≤ q(I − t' + t) −
q(I − t'), and the same for a loss). Every figure below bounds that gain, so
it is also the global sensitivity under adding or removing one tuple
(differential privacy's neighbours), and exact there wherever it is exact
here:

- a *pattern* query (binary subgoals with two distinct variables, all
  variables pairwise distinct, no constants, head = all variables) with k
  variables and j distinct subgoals has GS = j·(m−2)(m−3)…(m−k+1) exactly
  (m ≥ k): an assignment is injective, so it uses t = (a, b) in at most one
  subgoal, which fixes two variables; the other k−2 take distinct nodes
  outside {a, b}. All are realised when every other tuple is present and
  t' is a self-loop, which no subgoal matches. Δ: 3(m−2) (the paper's m−2
  counts triangles as sets; we count assignments, docs/design.md,
  "A query's value"), ∨: 2(m−2).
- d_{i,v}: 1 for i = 1; for i ≥ 2 at most m (the range is 0..m), reached for
  m ≥ 3 (v → a added, a → every node present).
- any other query: the upper bound min(m^|head|, Σ_g m^{v − |vars(g)|}) (each
  gained head assignment has an assignment using t in some subgoal g).

Local sensitivity (:func:`local_sensitivity`) is the largest change of q(I)
when one tuple is added to I or removed from it. Def. 3.1 of the paper
changes one tuple for another (I' = I − t' + t); for a monotone query that
change is at most the larger of the two (q(I') − q(I) ≤ q(I + t) − q(I) and
q(I) − q(I') ≤ q(I) − q(I − t')), so the value here is an upper bound on
Def. 3.1's LS_q(I) (tested on every instance of tiny domains).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import privpub._core as _core
from privpub.core.errors import QueryError
from privpub.graphs.exact import checked_inputs
from privpub.graphs.graph import Graph
from privpub.graphs.intervals import QueryRange
from privpub.graphs.query import CQ, Const, Var


@dataclass(frozen=True)
class Sensitivity:
    """GS_q and whether it is exact or an upper bound, with the reason."""

    value: int
    exact: bool
    reason: str


def _falling(n: int, k: int) -> int:
    out = 1
    for i in range(k):
        out *= max(n - i, 0)
    return out


def _is_pattern(q: CQ) -> bool:
    xs = sorted(q.variables)
    return (not q.constants and set(q.head) == set(xs)
            and all(len(a.terms) == 2 and a.terms[0] != a.terms[1] for a in q.atoms)
            and q.neq == frozenset(frozenset((a, b)) for i, a in enumerate(xs)
                                   for b in xs[i + 1:]))


def _is_path_from(q: CQ) -> int | None:
    """i when q is d_{i,v}(x_i) :- R(v, x_1), …, R(x_{i−1}, x_i); else None."""
    atoms = list(q.atoms)
    if q.neq or len(q.head) != 1 or any(len(a.terms) != 2 for a in atoms):
        return None
    if len({a.relation for a in atoms}) != 1 or len(set(atoms)) != len(atoms):
        return None
    starts = [a for a in atoms if isinstance(a.terms[0], Const)]
    if len(starts) != 1 or any(isinstance(a.terms[1], Const) for a in atoms):
        return None
    chain, current, left = 0, starts[0], set(atoms)
    while True:
        left.discard(current)
        chain += 1
        end = current.terms[1]
        nxt = [a for a in left if a.terms[0] == end]
        if not nxt:
            break
        if len(nxt) > 1:
            return None
        current = nxt[0]
    if left or end != q.head[0] or len(q.variables) != chain:
        return None
    return chain


def global_sensitivity(q: CQ, m: int) -> Sensitivity:
    """GS_q over instances of R on m nodes (see the module notes)."""
    if _is_pattern(q) and m >= q.v:
        k, j = q.v, q.g
        return Sensitivity(j * _falling(m - 2, k - 2), True,
                           f"pattern with k = {k} variables and j = {j} subgoals: "
                           f"j·(m−2)…(m−k+1)")
    i = _is_path_from(q)
    if i == 1:
        return Sensitivity(1, True, "d_{1,v}: one tuple changes one out-neighbour of v")
    if i is not None:
        return Sensitivity(m, m >= 3, f"d_{{{i},v}}: range 0..m" + (
            ", reached for m ≥ 3" if m >= 3 else " (an upper bound for m < 3)"))
    head = m ** len(q.head)
    atoms = sum(m ** (q.v - len({t for t in a.terms if isinstance(t, Var)}))
                for a in q.goals)
    return Sensitivity(min(head, atoms), False,
                       "upper bound min(m^|head|, Σ_g m^(v − |vars(g)|)) for a general query")


def query_range(q: CQ, m: int) -> QueryRange:
    """[0, max] holding q(I) for every instance of R over m nodes (clamping an
    answer into it is post-processing: it reads only public facts).

    - a pattern query with k variables: m(m−1)…(m−k+1), the injective
      assignments, every one of them an answer in the complete graph (all
      tuples R(a, b), a ≠ b), so exact;
    - d_{i,v}: m (distinct end nodes; the paper's range 0..m), reached when v
      reaches every node;
    - any other query: m^|head| (distinct head assignments), an upper bound.
    """
    if _is_pattern(q):
        return QueryRange(_falling(m, q.v), True,
                          f"m(m−1)…(m−k+1) for k = {q.v} variables: every injective "
                          "assignment, reached by the complete graph")
    if _is_path_from(q) is not None:
        return QueryRange(m, True, "d_{i,v} counts distinct end nodes: 0..m")
    return QueryRange(m ** len(q.head), False,
                      f"at most m^{len(q.head)} distinct head assignments (an upper bound)")


@dataclass(frozen=True)
class LocalSensitivity:
    """LS_q(I) under adding or removing one tuple of R.

    ``added`` is the largest gain from adding an absent tuple and
    ``removed`` the largest loss from removing a present one; ``value`` is
    the larger. ``add_tuple`` / ``remove_tuple`` are the first tuples (by
    dense ids) reaching them, as original node ids (None when the change is
    0 or a node has no original id because m exceeds the ids seen).
    """

    value: int
    added: int
    removed: int
    add_tuple: tuple[Any, Any] | None
    remove_tuple: tuple[Any, Any] | None


def _label(graph: Graph, pair: tuple[int, int]) -> tuple[Any, Any] | None:
    if pair[0] < 0 or max(pair) >= len(graph.labels):
        return None
    a, b = graph.labels[list(pair)].tolist()
    return a, b


def local_sensitivity(graph: Graph, query: CQ | str) -> LocalSensitivity:
    """Exact LS_q(I) of a pattern query on this graph, computed in Rust.

    A pattern query has pairwise distinct variables, all in the head, no
    constants and binary subgoals R(x, y) with x ≠ y (Δ, ∨, c_i, K_i,
    h_{i,j}). Such an assignment uses a tuple t in at most one subgoal, so
    adding or removing t changes q by the number of assignments with some
    subgoal forced to t and the others in I; the Rust kernel counts these
    for every tuple at once (rust/src/graph/sensitivity.rs).

    Examples
    --------
    >>> import numpy as np
    >>> from privpub.graphs import Graph, triangle
    >>> g = Graph.from_edges(np.array([[0, 1], [1, 2], [2, 0], [2, 3]]), directed=False)
    >>> ls = local_sensitivity(g, triangle())
    >>> ls.removed, ls.remove_tuple   # R(0, 1) fills one subgoal of 3 assignments
    (3, (0, 1))
    >>> ls.added, ls.add_tuple        # R(0, 3) closes the triangle 0-2-3
    (3, (0, 3))
    """
    query = checked_inputs(graph, query)
    if not _is_pattern(query):
        raise QueryError(f"exact local sensitivity is computed for pattern queries (pairwise "
                         f"distinct variables, all in the head, no constants, no R(x, x)); "
                         f"{query.name} is not one")
    xs = sorted(query.variables)
    index = {x: i for i, x in enumerate(xs)}
    goals = sorted((index[a.terms[0]], index[a.terms[1]]) for a in query.goals)
    if len(goals) * graph.m ** (len(xs) - 2) >= 2**127:  # the kernel's own bound, named
        raise QueryError(f"{query.name} has {len(xs)} variables: over m = {graph.m:,} nodes "
                         f"its local-sensitivity sums (up to g·m^(k−2) = {len(goals)}·"
                         f"{graph.m}^{len(xs) - 2}) may overflow the kernel's 128-bit counts")
    added, add_at, removed, remove_at = _core.graph.local_sensitivity(
        graph.relation, len(xs), goals)
    return LocalSensitivity(max(int(added), int(removed)), int(added), int(removed),
                            _label(graph, add_at), _label(graph, remove_at))
