"""The expression API of counting queries: ``col("age") > 50``, ``&``, ``|``,
``~``, ``.isin``, ``.between`` and arithmetic across attributes (``col("score")
< 3 * col("age")``). An :class:`Expr` holds the sqlglot tree a
:class:`~privpub.counting.query.Condition` reads, and knows its nesting depth
and AND/OR operands as it is built, so one past ``querytext.MAX_DEPTH`` or
``MAX_TERMS`` is refused where it is built (:mod:`privpub.counting.querytext`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
from sqlglot import exp

from privpub.core.errors import QueryError
from privpub.counting import querytext
from privpub.counting.querytext import python_values
from privpub.counting.querytree import DIALECT, short, values_node


def _node(value: Any) -> exp.Expression:
    """A sqlglot node for an Expr or a Python literal."""
    if isinstance(value, Expr):
        return value.node
    if isinstance(value, (bool, np.bool_)):
        return exp.Boolean(this=bool(value))
    if isinstance(value, (int, float, np.integer, np.floating)):
        number = exp.Literal.number(value.item() if isinstance(value, np.generic) else value)
        return exp.Neg(this=exp.Literal.number(-value)) if value < 0 else number
    if isinstance(value, str):
        return exp.Literal.string(value)
    raise QueryError(f"cannot use {value!r} ({type(value).__name__}) in a query; "
                     "use attributes, numbers, strings or booleans")


#: Operators whose left operand of the same operator needs no parentheses
#: ((a + b) + c is a + b + c); AND and OR also on the right (exact either way).
_ASSOCIATIVE = (exp.And, exp.Or, exp.Add, exp.Mul)


def _operand(value: Any, parent: type, right: bool) -> tuple[exp.Expression, int, int]:
    """(node, depth, connectives) of an operand, parenthesised when compound
    so the generated SQL keeps Python's grouping; a chain of one associative
    operator stays a chain (one level, rendered without nesting)."""
    if isinstance(value, Expr):
        node, depth, connectives = value.node, value.depth, value.connectives
    else:
        node = _node(value)
        depth, connectives = (2 if isinstance(node, exp.Neg) else 1), 0
    chain = type(node) is parent and parent in _ASSOCIATIVE and (
        not right or parent in (exp.And, exp.Or))
    if isinstance(node, (exp.Binary, exp.Not)) and not chain:
        node, depth = exp.Paren(this=node), depth + 1
    same = isinstance(node, exp.Connector) and type(node) is parent
    return node, depth - same, connectives


class Expr:
    """A query expression; combine with comparison, arithmetic, ``&``, ``|``, ``~``.

    Each Expr knows its nesting depth and how many AND/OR operands it joins,
    so one past ``MAX_DEPTH`` or ``MAX_TERMS`` is refused where it is built
    (:mod:`privpub.counting.querytext`).

    Examples
    --------
    >>> from privpub import col
    >>> ((col("age") > 50) & col("sex").isin(["Male"])).sql()
    '("age" > 50) AND "sex" IN (\\'Male\\')'
    """

    __hash__ = None  # == builds an expression, so Expr is not hashable

    def __init__(self, node: exp.Expression, depth: int | None = None,
                 connectives: int | None = None):
        if depth is None or connectives is None:
            depth, terms, _ = querytext.shape(node)
            connectives = terms - 1
        if depth > querytext.MAX_DEPTH or connectives >= querytext.MAX_TERMS:
            querytext.check_limits(depth, connectives + 1, 0, "the expression")
        self.node, self.depth, self.connectives = node, depth, connectives

    def sql(self) -> str:
        return self.node.sql(dialect=DIALECT)

    def __repr__(self) -> str:
        return f"Expr({short(self.sql(), 200)})"

    def __bool__(self) -> bool:
        raise QueryError("an Expr has no truth value: combine conditions with & | ~ "
                         "(not and/or/not) and write a < x < b as (a < x) & (x < b)")

    def _binary(self, cls, other, reverse=False) -> Expr:
        first, second = (other, self) if reverse else (self, other)
        left, d_left, c_left = _operand(first, cls, right=False)
        right, d_right, c_right = _operand(second, cls, right=True)
        connective = issubclass(cls, exp.Connector)
        return Expr(cls(this=left, expression=right), 1 + max(d_left, d_right),
                    c_left + c_right + connective)

    def _wrap(self, cls) -> Expr:
        return Expr(cls(this=exp.Paren(this=self.node)), self.depth + 2, self.connectives)

    def __eq__(self, other): return self._binary(exp.EQ, other)  # noqa: E704
    def __ne__(self, other): return self._binary(exp.NEQ, other)  # noqa: E704
    def __gt__(self, other): return self._binary(exp.GT, other)  # noqa: E704
    def __ge__(self, other): return self._binary(exp.GTE, other)  # noqa: E704
    def __lt__(self, other): return self._binary(exp.LT, other)  # noqa: E704
    def __le__(self, other): return self._binary(exp.LTE, other)  # noqa: E704
    def __add__(self, other): return self._binary(exp.Add, other)  # noqa: E704
    def __radd__(self, other): return self._binary(exp.Add, other, True)  # noqa: E704
    def __sub__(self, other): return self._binary(exp.Sub, other)  # noqa: E704
    def __rsub__(self, other): return self._binary(exp.Sub, other, True)  # noqa: E704
    def __mul__(self, other): return self._binary(exp.Mul, other)  # noqa: E704
    def __rmul__(self, other): return self._binary(exp.Mul, other, True)  # noqa: E704
    def __truediv__(self, other): return self._binary(exp.Div, other)  # noqa: E704
    def __rtruediv__(self, other): return self._binary(exp.Div, other, True)  # noqa: E704
    def __and__(self, other): return self._binary(exp.And, other)  # noqa: E704
    def __rand__(self, other): return self._binary(exp.And, other, True)  # noqa: E704
    def __or__(self, other): return self._binary(exp.Or, other)  # noqa: E704
    def __ror__(self, other): return self._binary(exp.Or, other, True)  # noqa: E704

    def __neg__(self) -> Expr:
        return self._wrap(exp.Neg)

    def __invert__(self) -> Expr:
        return self._wrap(exp.Not)

    def isin(self, values: Iterable[Any] | str) -> Expr:
        """Membership in a list of values (a list, an array: any length up to
        ``MAX_VALUES``, at linear cost), or in an SQL subquery over a
        registered table (``"select country from Regions where continent = 'Africa'"``)."""
        if isinstance(values, str):
            sub = querytext.subquery_node(querytext.subquery(values))
            return Expr(exp.In(this=self.node, query=sub))
        listed = values_node(python_values(values))
        return Expr(exp.In(this=self.node, expressions=[listed]), 1 + max(self.depth, 1),
                    self.connectives)

    def between(self, low: Any, high: Any) -> Expr:
        """low ≤ self ≤ high (SQL BETWEEN, both ends included)."""
        return Expr(exp.Between(this=self.node, low=_node(low), high=_node(high)))


def col(name: str) -> Expr:
    """The attribute ``name`` in a query expression."""
    if not isinstance(name, str) or not name:
        raise QueryError(f"col() needs an attribute name, got {name!r}")
    return Expr(exp.column(name, quoted=True))
