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
  of UTF-8).

Not mirrored (DuckDB evaluates them): LIKE / ILIKE, division and modulo
(DuckDB's conventions for signs and zero divisors), and integers past int64.
The domain holds no NULLs, so SQL's three-valued logic never arises.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlglot import exp

if TYPE_CHECKING:
    from privpub.tables.schema import Schema

#: Largest magnitude an integer intermediate may reach (int64 arithmetic stays exact).
INT_BOUND = 1 << 62

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
    shape = [schema[a].size for a in attributes]
    if node is None:
        return np.ones(math.prod(shape), dtype=bool)
    axes = {}
    for j, name in enumerate(attributes):
        attr = schema[name]
        values = np.asarray(attr._query_values(np.arange(attr.size)))
        if values.dtype.kind in "iu":
            if attr.size and max(abs(int(values.min())), abs(int(values.max()))) >= INT_BOUND:
                return None
            values = values.astype(np.int64)
        elif values.dtype.kind == "O" and not all(isinstance(v, str) for v in values):
            return None  # mixed objects: leave their comparisons to DuckDB
        elif values.dtype.kind not in "fbO":
            return None
        axes[name] = values.reshape([-1 if i == j else 1 for i in range(len(shape))])
    try:
        value = _Grid(axes).truth(node)
    except _Unsupported:
        return None
    return np.ascontiguousarray(np.broadcast_to(value, shape)).reshape(-1)


class _Grid:
    def __init__(self, axes: dict[str, np.ndarray]):
        self.axes = axes

    def truth(self, node: exp.Expression) -> Any:
        if isinstance(node, exp.Paren):
            return self.truth(node.this)
        if isinstance(node, exp.Boolean):
            return np.bool_(node.this)
        if isinstance(node, exp.Not):
            return ~np.asarray(self.truth(node.this), dtype=bool)
        if isinstance(node, exp.And):
            return np.logical_and(self.truth(node.this), self.truth(node.expression))
        if isinstance(node, exp.Or):
            return np.logical_or(self.truth(node.this), self.truth(node.expression))
        if type(node) in _COMPARE:
            return _boolean(_COMPARE[type(node)](self.value(node.this),
                                                 self.value(node.expression)))
        if isinstance(node, exp.In) and node.args.get("expressions") \
                and not node.args.get("query"):
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
                return float(node.this)
        if isinstance(node, exp.Boolean):
            return np.bool_(node.this)
        if isinstance(node, exp.Neg):
            return -self.value(node.this)
        if type(node) in _ARITH:
            op, bound = _ARITH[type(node)]
            a, b = self.value(node.this), self.value(node.expression)
            if _is_int(a) and _is_int(b):
                # The largest magnitude the result can reach, in exact Python ints.
                _checked(bound(_magnitude(a), _magnitude(b)))
            return op(a, b)
        raise _Unsupported(type(node).__name__)


def _boolean(x: Any) -> np.ndarray:
    return np.asarray(x, dtype=bool)


def _is_int(x: Any) -> bool:
    return isinstance(x, int) or (isinstance(x, np.ndarray) and x.dtype.kind in "iu")


def _magnitude(x: Any) -> int:
    return abs(x) if isinstance(x, int) else (int(np.abs(x).max()) if x.size else 0)


def _checked(x: int) -> int:
    if abs(x) >= INT_BOUND:
        raise _Unsupported("an integer past 2^62")
    return x
