"""Truth tables of conditions over a projection of D, by numpy broadcasting.

Q(D) (direct counts and ConD's factors) and Q(V) (lookups by a view's
digits) both need a condition's truth value on every tuple of the domain
projection over the attributes it reads, first attribute slowest. Each
attribute becomes one axis of a broadcast grid holding its query values
(ordered attributes: their domain indices), and the SQL tree is evaluated
on the grid: a 50 × 50 table costs microseconds, where building a frame of
the projection and running DuckDB on it costs ~2 ms.

DuckDB stays the one semantics of record. numpy mirrors it exactly on this
part of SQL only, and :func:`grid_table` returns None for anything else, so
the caller asks DuckDB:

- comparisons (=, <>, <, <=, >, >=), IN lists, BETWEEN (inclusive,
  ordered bounds), AND / OR / NOT, TRUE / FALSE;
- unary minus, +, − and × on numbers, when integers provably stay below
  2^62 in magnitude (DuckDB raises on int64 overflow where numpy would wrap);
- strings compare by code point in both (DuckDB's default binary collation
  of UTF-8);
- an IN list of any length as one membership test (``numpy.isin``, a pandas
  hash lookup for strings), so n values cost O(n log n), not n passes.

Not mirrored (DuckDB evaluates them): LIKE / ILIKE, division and modulo
(DuckDB's conventions for signs and zero divisors), integers past int64,
arithmetic with a decimal literal (DuckDB computes ``a * 0.7`` in DECIMAL,
exactly: 3 * 0.7 = 2.1 there, not in float64), and decimal literals beside
integer attributes past 2^53 (float64 would round them). The domain holds no
NULLs, so SQL's three-valued logic never arises. AND / OR chains of any
length are evaluated without recursion.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from sqlglot import exp

from privpub.counting.querytree import Formula, ValueList, chain, in_values
from privpub.domain.attributes import IntRange

if TYPE_CHECKING:
    from privpub.domain.schema import Schema

#: Largest magnitude an integer intermediate may reach (int64 arithmetic stays exact).
INT_BOUND = 1 << 62
#: Integers float64 holds exactly: past this, a decimal literal is left to DuckDB.
FLOAT_EXACT = 1 << 53

_COMPARE = {exp.EQ: operator.eq, exp.NEQ: operator.ne, exp.GT: operator.gt,
            exp.GTE: operator.ge, exp.LT: operator.lt, exp.LTE: operator.le}
_ARITH = {exp.Add: (operator.add, lambda a, b: a + b), exp.Sub: (operator.sub, lambda a, b: a + b),
          exp.Mul: (operator.mul, lambda a, b: a * b)}


class _Unsupported(Exception):
    """The tree holds SQL whose DuckDB semantics numpy does not mirror here."""


def grid_table(schema: Schema, attributes: Sequence[str],
               node: exp.Expression | None) -> np.ndarray | None:
    """The truth table of ``node`` over the projection on ``attributes``
    (schema order, first slowest) as a flat bool array, or None when the tree
    needs DuckDB (module docstring). ``node`` None means TRUE."""
    if node is None:
        return np.ones(math.prod(schema[a].size for a in attributes), dtype=bool)
    return _tabled(schema, attributes, lambda grid: grid.truth(node))


def combined_table(schema: Schema, attributes: Sequence[str], formula: Formula,
                   atoms: Sequence[tuple[Sequence[str], np.ndarray]]) -> np.ndarray:
    """A condition's table over ``attributes`` from its ``formula`` (as
    ``Condition.formula``: ``("atom", i)``, ``("not", f)``, ``("and", [f,
    …])``, ``("or", [f, …])``) over its atoms' tables (``atoms[i]``: the
    attributes the atom reads, a subset of ``attributes`` in schema order, and
    its :func:`grid_table`). The condition's tree is these atoms joined by AND /
    OR / NOT, so this is the table :func:`grid_table` makes of the tree,
    element by element (each atom's numpy evaluation needs only its own
    attributes' bounds), made from tables that an atom shared by many
    conditions makes once."""
    sizes = [schema[a].size for a in attributes]

    def truth(formula: Formula) -> np.ndarray:
        kind, inner = formula
        if isinstance(inner, int):
            read, table = atoms[inner]
            return table.reshape([n if a in read else 1
                                  for a, n in zip(attributes, sizes, strict=True)])
        if isinstance(inner, tuple):
            return ~truth(inner)
        combine = np.logical_and if kind == "and" else np.logical_or
        value = np.full([1] * len(sizes), kind == "and")  # (an empty AND: no condition)
        for i, part in enumerate(inner):
            value = truth(part) if i == 0 else combine(value, truth(part))
        return value

    return np.ascontiguousarray(np.broadcast_to(truth(formula), sizes)).reshape(-1)


def _tabled(schema: Schema, attributes: Sequence[str], truth: Callable[[_Grid], Any]
            ) -> np.ndarray | None:
    """``truth`` of a grid over the projection on ``attributes``, flat; None
    when it needs DuckDB."""
    shape = [schema[a].size for a in attributes]
    axes = {}
    for j, name in enumerate(attributes):
        values = _domain_axis(schema[name])
        if values is None:
            return None
        axes[name] = values.reshape([-1 if i == j else 1 for i in range(len(shape))])
    # Axes that are a whole integer range lo, lo+1, …: membership by indexing.
    ranges = {a: schema[a].lo for a in attributes if isinstance(schema[a], IntRange) and a in axes}
    try:
        value = truth(_Grid(axes, _widest_of(schema, attributes), ranges))
    except _Unsupported:
        return None
    return np.ascontiguousarray(np.broadcast_to(value, shape)).reshape(-1)


def row_mask(schema: Schema, attributes: Sequence[str], node: exp.Expression | None,
             digits: dict[str, np.ndarray], rows: int) -> np.ndarray | None:
    """The condition on rows given by their domain indices (one array per
    attribute), by numpy with the same semantics as :func:`grid_table` (the
    exactness bounds come from the whole domain), or None when the tree needs
    DuckDB. For conditions whose projection is too large for a table."""
    if node is None:
        return np.ones(rows, dtype=bool)
    axes = {}
    for name in attributes:
        values = _axis(schema[name], np.asarray(digits[name]))
        if values is None:
            return None
        axes[name] = values
    try:
        value = _Grid(axes, _widest_of(schema, attributes)).truth(node)
    except _Unsupported:
        return None
    return np.ascontiguousarray(np.broadcast_to(value, (rows,)))


def _axis(attr: Any, digits: np.ndarray) -> np.ndarray | None:
    """An attribute's query values at these domain indices, as numpy compares
    them (int64 when the domain's integers stay below 2^62), or None for
    values left to DuckDB."""
    values = np.asarray(attr.query_values(digits))
    if values.dtype.kind in "iu":
        return values.astype(np.int64) if _widest(attr) < INT_BOUND else None
    if values.dtype.kind == "O" and not all(isinstance(v, str) for v in values):
        return None  # mixed objects: leave their comparisons to DuckDB
    return values if values.dtype.kind in "fbO" else None


@functools.lru_cache(maxsize=64)
def _domain_axis(attr: Any) -> np.ndarray | None:
    """:func:`_axis` over an attribute's whole domain, made once per attribute
    (read-only): every truth table over the attribute starts from it, and
    decoding a domain's values costs more than most tables. The last 64
    attributes' are kept (a table's attribute has at most
    ``evaluation.PROJECTION_LIMIT`` = 2^20 values: at most 64 × 8 MiB held)."""
    values = _axis(attr, np.arange(attr.size))
    if values is not None:
        values.setflags(write=False)
    return values


def _widest_of(schema: Schema, attributes: Sequence[str]) -> int:
    return max((_widest(schema[a]) for a in attributes), default=0)


@functools.lru_cache(maxsize=256)
def _widest(attr: Any) -> int:
    """The largest integer magnitude among an attribute's query values (its
    whole domain; 0 when it holds no integers numpy can hold)."""
    if isinstance(attr, IntRange):
        return max(abs(attr.lo), abs(attr.hi))
    if attr.ordered:
        return attr.size - 1
    values = np.asarray(attr.query_values(np.arange(attr.size)))
    if values.dtype.kind in "iu" and values.size:
        return max(abs(int(values.min())), abs(int(values.max())))
    return 0


class _Grid:
    def __init__(self, axes: dict[str, np.ndarray], widest: int = 0,
                 ranges: dict[str, int] | None = None):
        self.axes, self.widest, self.ranges = axes, widest, ranges or {}

    def truth(self, node: exp.Expression) -> Any:
        while isinstance(node, exp.Paren):
            node = node.this
        if isinstance(node, exp.Boolean):
            return np.bool_(node.this)
        if isinstance(node, exp.Not):
            return ~np.asarray(self.truth(node.this), dtype=bool)
        if isinstance(node, (exp.And, exp.Or)):
            combine = np.logical_and if isinstance(node, exp.And) else np.logical_or
            value = None
            for part in chain(node):  # a chain of any length, no recursion along it
                truth = self.truth(part)
                value = truth if value is None else combine(value, truth)
            return value
        if type(node) in _COMPARE:
            return _boolean(_COMPARE[type(node)](self.value(node.this),
                                                 self.value(node.expression)))
        if isinstance(node, exp.In) and not node.args.get("query"):
            listed = in_values(node)
            column = node.this
            while isinstance(column, exp.Paren):
                column = column.this
            if listed is not None and listed.ints is not None and \
                    isinstance(column, exp.Column) and column.name in self.ranges:
                return _range_member(self.axes[column.name], self.ranges[column.name], listed)
            if listed is not None:
                return _member(self.value(node.this), listed)
            if not node.args.get("expressions"):
                raise _Unsupported("IN without a list")
            x = self.value(node.this)
            hit = np.zeros(np.shape(x), dtype=bool)
            for option in node.args["expressions"]:
                hit = hit | _boolean(x == self.value(option))
            return hit
        if isinstance(node, exp.Between):
            x = self.value(node.this)
            return _boolean(self.value(node.args["low"]) <= x) \
                & _boolean(x <= self.value(node.args["high"]))
        raise _Unsupported(type(node).__name__)

    def value(self, node: exp.Expression) -> Any:
        if isinstance(node, exp.Paren):
            return self.value(node.this)
        if isinstance(node, exp.Column):
            return self.axes[node.name]
        if isinstance(node, exp.Literal):
            if node.is_string:
                return node.this
            try:
                return _checked(int(node.this))
            except ValueError:
                if self.widest > FLOAT_EXACT:
                    raise _Unsupported("a decimal literal beside integers past 2^53") from None
                return float(node.this)
        if isinstance(node, exp.Boolean):
            return np.bool_(node.this)
        if isinstance(node, exp.Neg):
            return -self.value(node.this)
        if type(node) in _ARITH:
            op, bound = _ARITH[type(node)]
            a, b = self.value(node.this), self.value(node.expression)
            if (isinstance(a, float) and not _is_float_array(b)) or \
                    (isinstance(b, float) and not _is_float_array(a)):
                raise _Unsupported("arithmetic with a decimal literal (DECIMAL in DuckDB)")
            if _is_int(a) and _is_int(b):
                # The largest magnitude the result can reach, in exact Python ints.
                _checked(bound(_magnitude(a), _magnitude(b)))
            return op(a, b)
        raise _Unsupported(type(node).__name__)


def _range_member(axis: np.ndarray, lo: int, listed: ValueList) -> np.ndarray:
    """axis IN (ints) for an axis holding lo, lo+1, …: a mask set by index, O(n + size)."""
    index = listed.ints - lo
    hit = np.zeros(axis.size, dtype=bool)
    hit[index[(index >= 0) & (index < axis.size)]] = True
    return hit.reshape(axis.shape)


def _member(x: Any, listed: ValueList) -> np.ndarray:
    """x IN (values) elementwise, as DuckDB decides it: numbers by value (an
    integer matches an integral float; nothing outside int64 matches an
    integer), strings and booleans exactly."""
    x = np.asarray(x)
    if listed.ints is not None and x.dtype.kind in "iuf":
        return np.isin(x, listed.ints)
    values = listed.values
    if x.dtype.kind in "iu":
        wanted = {int(v) for v in values if isinstance(v, (int, float))
                  and not isinstance(v, bool) and (isinstance(v, int) or v.is_integer())}
        low, high = -(1 << 63), (1 << 63) - 1
        keys = np.fromiter((v for v in wanted if low <= v <= high), dtype=np.int64)
        return np.isin(x, keys)
    if x.dtype.kind == "f":
        keys = np.array([v for v in values if isinstance(v, (int, float))
                         and not isinstance(v, bool)], dtype=np.float64)
        return np.isin(x, keys)
    flat = pd.Index(x.ravel(), dtype=object)
    return np.asarray(flat.isin(values)).reshape(x.shape)


def _boolean(x: Any) -> np.ndarray:
    return np.asarray(x, dtype=bool)


def _is_int(x: Any) -> bool:
    return isinstance(x, int) or (isinstance(x, np.ndarray) and x.dtype.kind in "iu")


def _is_float_array(x: Any) -> bool:
    return isinstance(x, np.ndarray) and x.dtype.kind == "f"


def _magnitude(x: Any) -> int:
    return abs(x) if isinstance(x, int) else (int(np.abs(x).max()) if x.size else 0)


def _checked(x: int) -> int:
    if abs(x) >= INT_BOUND:
        raise _Unsupported("an integer past 2^62")
    return x
