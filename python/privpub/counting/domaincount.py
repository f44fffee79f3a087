"""Q(D): how many tuples of the whole domain satisfy a condition, exactly.

Rastogi, Suciu, Hong, VLDB 2007, Sec. 4.1 (line 3 of Algorithm 3):

- **direct**: when the attributes the condition reads span a small
  projection of D (at most ``DIRECT_LIMIT`` tuples), evaluate the condition
  on that projection and scale by the attributes it does not read;
- **QonD** (Algorithm 4): otherwise, write the condition in disjunctive
  normal form over its atoms and use inclusion–exclusion over clause subsets,
  Q(D) = Σ_{S ≠ ∅} (−1)^{|S|+1} ConD(∧_{i ∈ S} C_i), up to ``MAX_CLAUSES``
  clauses; when the negation has fewer clauses, Q(D) = m − (¬Q)(D);
- **ConD** (Algorithms 5–6): for a conjunction of literals, each literal's
  truth table over its attributes' domain projection (numpy broadcasting,
  DuckDB for what needs it; counting/truthtable.py), then sum–product over a
  min-fill elimination order (the tree decomposition it induces has the
  reported width) as float64 BLAS products, exact at any size
  (counting/elimination.py). Attributes no predicate reads contribute a
  factor |D_j|.

A weighted variant sums Π_j w_j(t_j) over Q(D) for per-attribute weights
(the source-distribution estimator's Σ_{t ∈ Q(D)} β(t)).

Nothing enumerates D: the cost depends on the predicates' attribute sets,
not on m, and every table is checked against a memory budget first.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from privpub.core.errors import QueryError
from privpub.counting import intervals
from privpub.counting.elimination import count_by_elimination, weighted_sum_by_elimination
from privpub.counting.evaluation import PROJECTION_LIMIT
from privpub.counting.query import Condition, QueryLike
from privpub.counting.querytree import short
from privpub.domain.attributes import IntRange

if TYPE_CHECKING:  # (a Schema is passed in: its module is not needed at run time)
    from privpub.domain.schema import Schema

#: Evaluate the whole condition on its attributes' projection up to this many tuples.
DIRECT_LIMIT = PROJECTION_LIMIT
#: Largest truth table built over a projection of D (cells); an integer attribute
#: with more values is counted through intervals (privpub.counting.intervals).
TABLE_LIMIT = 1 << 24
#: Largest ConD table stored (cells) — 2^26 u128 cells is 1 GiB. Eliminating a
#: variable iterates over that table times the variable's domain size.
TABLE_BUDGET = 1 << 26
#: Inclusion–exclusion runs over 2^clauses − 1 subsets.
MAX_CLAUSES = 12


@dataclass(frozen=True)
class DomainCount:
    """Q(D) and how it was computed."""

    value: int | float
    method: str            # "direct", "inclusion-exclusion" or "complement"
    clauses: int = 0       # DNF clauses (of the condition or of its negation)
    width: int = 0         # largest tree-decomposition width over the ConD calls


def count(schema: Schema, where: QueryLike, tables: Mapping[str, pd.DataFrame] | None = None,
          weights: Sequence[np.ndarray] | None = None, method: str = "auto",
          budget: int = TABLE_BUDGET) -> DomainCount:
    """Q(D) for ``where`` (or Σ_{t ∈ Q(D)} Π_j weights[j][t_j] with ``weights``).

    ``method`` is ``"auto"`` (direct when small, else QonD/ConD), ``"direct"``
    or ``"cond"``. Raises QueryError when a table would exceed ``budget``
    cells or the DNF has more than ``MAX_CLAUSES`` clauses.
    """
    reuse = isinstance(where, Condition) and where.schema == schema and not tables
    cond = where if reuse else Condition(schema, where, tables)
    if method not in ("auto", "direct", "cond"):
        raise QueryError(f"method must be 'auto', 'direct' or 'cond', got {method!r}")
    cache = cond.__dict__.setdefault("_domain_counts", {})
    key = (method, budget, None if weights is None else tuple(id(w) for w in weights))
    if weights is None and key in cache:
        return cache[key]
    counter = _Counter(schema, cond, weights, budget)
    if method == "direct" or (method == "auto" and counter.projection_size() <= DIRECT_LIMIT):
        result = DomainCount(counter.direct(), "direct")
    else:
        result = counter.qond()
    if weights is None:
        cache[key] = result
    return result


def count_domain(schema: Schema, where: QueryLike = None,
                 tables: Mapping[str, pd.DataFrame] | None = None) -> int:
    """Q(D): the exact number of domain tuples satisfying ``where`` (SQL WHERE
    text, a ``privpub.col`` expression, {attribute: value} or None for every
    tuple); ``tables`` registers auxiliary tables for IN-subqueries. How it was
    computed (method, clauses, width) is :func:`count`'s :class:`DomainCount`."""
    return int(count(schema, where, tables).value)


class _Counter:
    def __init__(self, schema: Schema, cond: Condition, weights, budget: int):
        self.schema, self.cond, self.budget = schema, cond, budget
        self.index = {n: j for j, n in enumerate(schema.names)}
        if weights is not None:
            weights = [np.asarray(w, dtype=float) for w in weights]
            if [len(w) for w in weights] != list(schema.radices):
                raise QueryError("weights need one array per attribute, one entry per value")
        self.weights = weights
        self.width = 0

    # ---- totals over attributes ----------------------------------------------------------
    def free_factor(self, used: Sequence[str]) -> int | float:
        """Σ over the attributes not in ``used`` (a count, or the weight sums)."""
        free = [j for n, j in self.index.items() if n not in used]
        if self.weights is None:
            return math.prod(self.schema.radices[j] for j in free)
        return math.prod(float(self.weights[j].sum()) for j in free)

    def total(self) -> int | float:
        return self.free_factor(())

    def projection_size(self) -> int:
        return self.projection_of(self.cond.attributes)

    # ---- direct ---------------------------------------------------------------------------
    def direct(self) -> int | float:
        attrs = self.cond.attributes
        mask = self.cond.truth_table()
        if mask is None:
            mask = self.cond.evaluate(self.schema.projection(attrs, query=True))
        if self.weights is None:
            return int(mask.sum()) * self.free_factor(attrs)
        w = self._weight_grid(attrs)
        return float(w[mask].sum()) * self.free_factor(attrs)

    def _weight_grid(self, attrs: Sequence[str]) -> np.ndarray:
        grid = np.ones(1)
        for a in attrs:
            grid = np.multiply.outer(grid, self.weights[self.index[a]]).reshape(-1)
        return grid

    # ---- QonD -----------------------------------------------------------------------------
    def qond(self) -> DomainCount:
        clauses = _dnf(_nnf(self.cond.formula, False))
        negated = _dnf(_nnf(self.cond.formula, True))
        use_complement = negated is not None and (clauses is None or len(negated) < len(clauses))
        chosen = negated if use_complement else clauses
        if chosen is None or len(chosen) > MAX_CLAUSES:
            sizes = [len(c) for c in (clauses, negated) if c is not None]
            raise QueryError(f"the condition expands to {min(sizes) if sizes else 'too many'} "
                             f"DNF clauses (its negation too); inclusion–exclusion supports up "
                             f"to {MAX_CLAUSES}: {short(self.cond.text)}")
        memo: dict[frozenset, int | float] = {}
        value: int | float = 0
        for size in range(1, len(chosen) + 1):
            for subset in combinations(chosen, size):
                literals = frozenset().union(*subset)
                if literals not in memo:
                    memo[literals] = self.cond_count(literals)
                value += (-1) ** (size + 1) * memo[literals]
        if use_complement:
            value = self.total() - value
        return DomainCount(value, "complement" if use_complement else "inclusion-exclusion",
                           len(chosen), self.width)

    def truth_table(self, atom: int) -> np.ndarray:
        table = self.cond.atom_table(atom, TABLE_LIMIT)
        if table is None:
            attrs = list(self.cond.atoms[atom].attributes)
            raise QueryError(f"the atom {self.cond.atoms[atom].text!r} reads {attrs}, whose "
                             f"projection has {self.projection_of(attrs):,} tuples, more than "
                             f"the budget of {TABLE_LIMIT:,} cells a truth table may hold")
        return table

    def projection_of(self, attributes: Sequence[str]) -> int:
        return math.prod(self.schema[a].size for a in attributes)

    def cond_count(self, literals: frozenset) -> int | float:
        """ConD for a conjunction of (atom, positive) literals."""
        if any((a, not p) in literals for a, p in literals):
            return 0
        by_scope: dict[tuple[int, ...], np.ndarray] = {}
        huge: dict[str, intervals.Intervals] = {}
        for atom, positive in literals:
            if self._huge(atom):
                name = self.cond.atoms[atom].attributes[0]
                found = self.interval_set(atom, positive)
                huge[name] = intervals.intersect(huge[name], found) if name in huge else found
                continue
            scope = tuple(self.index[a] for a in self.cond.atoms[atom].attributes)
            table = self.truth_table(atom) if positive else ~self.truth_table(atom)
            by_scope[scope] = by_scope[scope] & table if scope in by_scope else table
        used = sorted({v for scope in by_scope for v in scope})
        names = [self.schema.names[v] for v in used]
        # Attributes counted by their intervals multiply in, independent of the rest.
        factor = math.prod(intervals.size(iv) for iv in huge.values())
        if factor == 0 or any(not t.any() for t in by_scope.values()):
            return 0
        order, width = _min_fill_order(list(by_scope), used, self.schema.radices, self.budget,
                                       self.schema.names)
        self.width = max(self.width, width)
        radices = list(self.schema.radices)
        scopes = [list(s) for s in by_scope]
        if self.weights is None:
            tables = list(by_scope.values())
            inner = count_by_elimination(scopes, tables, radices, order) if order \
                else int(all(t[0] for t in tables))
        else:
            tables = [t.astype(float) for t in by_scope.values()]
            scopes += [[v] for v in used]
            tables += [self.weights[v] for v in used]
            inner = weighted_sum_by_elimination(scopes, tables, radices, order) if order \
                else float(all(t[0] for t in tables[:len(by_scope)]))
        return inner * factor * self.free_factor(names + list(huge))

    def _huge(self, atom: int) -> bool:
        """An atom on one integer attribute too large for a truth table."""
        attrs = self.cond.atoms[atom].attributes
        # (an IntRange: the one attribute kind with bounds lo..hi)
        return (len(attrs) == 1 and isinstance(self.schema[attrs[0]], IntRange)
                and self.schema[attrs[0]].size > TABLE_LIMIT)

    def interval_set(self, atom: int, positive: bool) -> intervals.Intervals:
        name, sql = self.cond.atoms[atom].attributes[0], self.cond.atoms[atom].sql
        attr = self.schema[name]
        found = intervals.of_atom(self.cond.atoms[atom].node, name, attr.lo, attr.hi)
        if found is None or self.weights is not None:
            raise QueryError(f"attribute {name!r} has {attr.size:,} values, too many for a "
                             f"truth table; {short(sql)!r} must compare it with constants "
                             f"(=, <>, <, <=, >, >=, BETWEEN, IN), unweighted, to be counted "
                             f"exactly")
        return found if positive else intervals.complement(found, attr.lo, attr.hi)


def _nnf(formula, negate: bool):
    """Negation normal form: ("lit", atom, positive), ("and"|"or", [...])."""
    kind = formula[0]
    if kind == "atom":
        return ("lit", formula[1], not negate)
    if kind == "not":
        return _nnf(formula[1], not negate)
    flipped = {"and": "or", "or": "and"}[kind] if negate else kind
    return (flipped, [_nnf(f, negate) for f in formula[1]])


#: Stop expanding a DNF beyond this many clauses (inclusion–exclusion would refuse anyway).
_DNF_CAP = 4 * MAX_CLAUSES


def _dnf(formula) -> list[frozenset] | None:
    """Clauses as sets of (atom, positive) literals; None if larger than the cap.
    Contradictory clauses are dropped and subsumed ones absorbed."""
    kind = formula[0]
    if kind == "lit":
        return [frozenset({(formula[1], formula[2])})]
    parts = [_dnf(f) for f in formula[1]]
    if any(p is None for p in parts):
        return None
    if kind == "or":
        clauses = [c for p in parts for c in p]
    else:
        clauses = [frozenset()]
        for p in parts:
            clauses = [a | b for a in clauses for b in p]
            clauses = [c for c in clauses if not any((x, not s) in c for x, s in c)]
            if len(clauses) > _DNF_CAP:
                return None
    return _absorbed(clauses)


def _absorbed(clauses: list[frozenset]) -> list[frozenset] | None:
    """Distinct clauses, those holding another dropped; None past the cap.
    Smallest first: a clause is absorbed only by a smaller kept one, and the
    kept ones only grow, so the work is O(len(clauses) · cap), not quadratic
    (an OR chain of 10,000 terms is 10,000 clauses)."""
    kept: list[frozenset] = []
    for c in sorted(dict.fromkeys(clauses), key=len):
        if not any(o < c for o in kept):
            kept.append(c)
            if len(kept) > _DNF_CAP:
                return None
    order = {c: i for i, c in enumerate(dict.fromkeys(clauses))}
    return sorted(kept, key=order.__getitem__)


def _min_fill_order(scopes: list[tuple[int, ...]], variables: list[int], radices, budget: int,
                    names: Sequence[str]) -> tuple[list[int], int]:
    """A min-fill elimination order of the primal graph, its width, and a check
    that no intermediate table exceeds ``budget`` cells."""
    neighbours = {v: set() for v in variables}
    for scope in scopes:
        for v in scope:
            neighbours[v] |= set(scope) - {v}
    order, width = [], 0
    while neighbours:
        def fill(v):
            ns = list(neighbours[v])
            return sum(1 for i, a in enumerate(ns) for b in ns[i + 1:] if b not in neighbours[a])
        v = min(neighbours, key=lambda u: (fill(u), len(neighbours[u]), u))
        cells = math.prod(radices[u] for u in neighbours[v])
        if cells > budget:
            raise QueryError(f"ConD would build a table over "
                             f"{[names[u] for u in sorted(neighbours[v])]} with {cells:,} cells, "
                             f"more than the budget of {budget:,}")
        width = max(width, len(neighbours[v]))
        for a in neighbours[v]:
            neighbours[a] |= neighbours[v] - {a}
            neighbours[a].discard(v)
        del neighbours[v]
        order.append(v)
    return order, width
