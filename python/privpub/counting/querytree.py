"""The tree a condition is held in: sqlglot nodes (sqlglot is the tree and
the SQL generator, it reads no query text: :mod:`privpub.counting.querytext`
does), literal IN lists held whole by one node (:class:`ValueList`), literals
rendered as DuckDB reads them back, and walks over a tree that follow no
Python recursion (a chain of AND/OR may hold ``querytext.MAX_TERMS`` operands).

A literal IN list (``a IN (1, 2, 'x', …)``) never becomes one node per value:
it is read off the parser's tokens into one list (integers into one int64
array) and held by one node, which every consumer treats as a whole (numpy
``isin``, a pandas index lookup).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

import numpy as np
from sqlglot import exp
from sqlglot.dialects.duckdb import DuckDB

import privpub._core as _core
from privpub.core.errors import QueryError

DIALECT = "duckdb"

#: A condition as a formula over its atoms (``Condition.formula``): ("atom", i),
#: ("not", f), ("and", [f, …]) or ("or", [f, …]).
Formula = tuple[str, "int | Formula | list[Formula]"]

class ValueList:
    """The literal values of one IN list, each with the SQL text DuckDB reads.

    Held on a single ``exp.Var`` node (``meta["values"]``) whose text is the
    rendered list, so ``node.sql()`` gives ``a IN (1, 2, 3)`` and copying a
    tree copies a reference. ``kinds`` is the set of value kinds ("number",
    "string", "boolean"); ``from_subquery`` marks values a subquery returned
    (they may lie outside the domain and then match nothing). A list of
    integers that fit int64 is also held as an array (``ints``), so checking
    and evaluating it runs in numpy."""

    __slots__ = ("_values", "ints", "sql", "kinds", "from_subquery")

    def __init__(self, values: Sequence[Any] | None, sql: str, from_subquery: bool = False,
                 ints: np.ndarray | None = None):
        self._values = None if values is None else list(values)
        self.ints = ints
        self.sql = sql
        self.kinds = {"number"} if ints is not None else {_kind(v) for v in self._values}
        self.from_subquery = from_subquery

    @property
    def values(self) -> list[Any]:
        """The values as Python scalars (ints exact)."""
        if self._values is None:
            self._values = self.ints.tolist()
        return self._values

    def __deepcopy__(self, memo: dict) -> ValueList:
        return self  # immutable once built

    def __len__(self) -> int:
        return len(self.ints) if self.ints is not None else len(self._values)


def _kind(value: Any) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "boolean"
    return "string" if isinstance(value, str) else "number"


#: One sqlglot DuckDB generator per thread (a generator holds state while it
#: runs); making one per call cost as much as generating a short atom.
_generators = threading.local()


def to_sql(node: exp.Expression) -> str:
    """A condition tree as DuckDB SQL, generated in place: sqlglot's default
    deep copy first costs more than the generation, and its DuckDB generator
    changes none of the nodes a condition holds (comparisons, arithmetic,
    IN lists, BETWEEN, LIKE, AND / OR / NOT)."""
    generator = getattr(_generators, "duckdb", None)
    if generator is None:
        generator = _generators.duckdb = DuckDB().generator()
    return generator.generate(node, copy=False)


def values_node(values: ValueList) -> exp.Var:
    """The tree node standing for a literal list (its text is the rendered values)."""
    node = exp.Var(this=values.sql)
    node.meta["values"] = values
    return node


def value_list(node: exp.Expression | None) -> ValueList | None:
    """The values a node stands for, or None when it is not a literal list."""
    if isinstance(node, exp.Var):
        return node.meta.get("values")
    return None


def in_values(node: exp.Expression) -> ValueList | None:
    """The literal list of an IN node (None: a subquery or non-literal members)."""
    members = node.args.get("expressions") or []
    return value_list(members[0]) if len(members) == 1 else None


def render(value: Any) -> str:
    """A Python value as the SQL literal DuckDB reads back as that value."""
    if isinstance(value, (bool, np.bool_)):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return repr(value) if np.isfinite(value) else f"CAST('{value!r}' AS DOUBLE)"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    raise QueryError(f"cannot use {value!r} ({type(value).__name__}) in a query; "
                     "use attributes, numbers, strings or booleans")


def int_sql(ints: np.ndarray) -> str:
    """int64 values as an SQL list body, "1, 2, 3" (Rust: a 10^5-value list is
    rendered in well under a millisecond; Python's repr of a list took 8 ms)."""
    return _core.query.int_list_text(np.ascontiguousarray(ints, dtype=np.int64))


def number(text: str) -> int | float:
    """A numeric literal's value: an exact int for integer syntax, else a float.
    Raises QueryError past Python's int-string limit."""
    digits = text.lstrip("+-")
    if digits.isdigit():
        try:
            return int(text)
        except ValueError:  # sys.get_int_max_str_digits()
            raise QueryError(f"integer literal {short(text)} has {len(digits):,} digits, "
                             "more than Python reads; privpub refuses it") from None
    return float(text)


def exact(text: str) -> Decimal:
    """A numeric literal's exact value (any size: 1e400, 10^400)."""
    return Decimal(text)


def short(value: Any, limit: int = 200) -> str:
    """A value or query text for a message: past ``limit`` characters, its
    start and end with the length between."""
    text = value if isinstance(value, str) else repr(value)
    if len(text) > limit:
        keep = max(limit // 2, 12)
        return f"{text[:keep]} … {text[-keep // 4:]} ({len(text):,} characters)"
    return text


def nodes(root: exp.Expression) -> list[exp.Expression]:
    """Every node of a tree, breadth first as sqlglot's ``walk`` gives them (a
    message names the first offender in that order), as one list. An atom is
    checked by several passes over its few nodes; sqlglot's walk, a chain of
    generators, cost most of an atom's check (issue 33's ~116 µs Condition)."""
    out = [root]
    for node in out:  # (the loop reads what it appends)
        for value in node.args.values():
            if type(value) is list:
                out += [v for v in value if isinstance(v, exp.Expr)]
            elif isinstance(value, exp.Expr):
                out.append(value)
    return out


def chain(node: exp.Expression) -> list[exp.Expression]:
    """The operands of a chain of one connective (a AND b AND c), left to right,
    without recursion (a chain may hold ``MAX_TERMS`` operands)."""
    cls, out, stack = type(node), [], [node]
    while stack:
        item = stack.pop()
        if type(item) is cls:
            stack += [item.expression, item.this]
        else:
            out.append(item)
    return out
