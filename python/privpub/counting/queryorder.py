"""What an atom's values mean (docs/design.md, "Inputs"), once
:mod:`privpub.counting.queryatoms` has checked it:

- an ordered attribute is compared by its declared order: its values in the
  atom become their domain indices (:func:`rank_ordered`);
- a declared missing label is a marker outside every order: order
  comparisons, BETWEEN, LIKE, arithmetic never match it, ``IS NULL`` does
  (:func:`place_missing`), and ``<``/``>`` on unordered text is refused with
  how to declare an order (:func:`check_order`);
- a numeric literal outside the 64-bit integer range (``a < 10^400``,
  ``a > -1e30``) is decided exactly where it is compared with an attribute
  itself: the atom becomes TRUE or FALSE (an integer range lies inside int64),
  a BETWEEN loses its vacuous bound, and on a numeric categorical the atom
  becomes the exact list of values that satisfy it. Anywhere else (arithmetic,
  another expression) such a literal is refused by name: DuckDB compares
  literals past 38 digits wrongly (as BIGNUM) and numpy would round them
  (:func:`fold_wide`).
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlglot import exp

from privpub.core.errors import DomainError, QueryError
from privpub.counting import querytree
from privpub.counting.queryatoms import (
    bare,
    check_column,
    column_names,
    constant,
    domain_test,
    is_constant,
    set_list,
    text,
)
from privpub.counting.querytext import python_values
from privpub.counting.querytree import DIALECT, ValueList, exact, in_values, short, values_node
from privpub.domain.attributes import Categorical, IntRange

if TYPE_CHECKING:
    from privpub.domain.attributes import Attribute
    from privpub.domain.schema import Schema

#: The range DuckDB's BIGINT and numpy's int64 hold.
INT64 = (-(1 << 63), (1 << 63) - 1)
_COMPARE = {exp.GT: lambda a, b: a > b, exp.GTE: lambda a, b: a >= b,
            exp.LT: lambda a, b: a < b, exp.LTE: lambda a, b: a <= b,
            exp.EQ: lambda a, b: a == b, exp.NEQ: lambda a, b: a != b}
_FLIPPED = {exp.GT: exp.LT, exp.GTE: exp.LTE, exp.LT: exp.GT, exp.LTE: exp.GTE,
            exp.EQ: exp.EQ, exp.NEQ: exp.NEQ}


def _exact(node: exp.Expression) -> Decimal | None:
    """The exact value of a numeric literal (or its negation), else None."""
    sign = 1
    if isinstance(node, exp.Neg):
        node, sign = node.this, -1
    if not isinstance(node, exp.Literal) or node.is_string:
        return None
    try:
        return sign * exact(node.this)
    except InvalidOperation:
        return None


def _wide(node: exp.Expression) -> bool:
    value = _exact(node)
    return value is not None and not INT64[0] <= value <= INT64[1]


def rank_ordered(schema: Schema, atom: exp.Expression,
                 ranks: dict[str, dict[Any, int]]) -> exp.Expression:
    """An ordered attribute is compared by its declared order: its values in
    the atom become their domain indices (queries see the attribute as its
    indices, see ``Attribute.query_values``). ``ranks`` caches each
    attribute's value → index map."""
    names = set(column_names(atom))
    ordered = sorted(n for n in names if schema[n].ordered)
    if not ordered:
        return atom
    if len(names) > 1:
        raise QueryError(f"{text(atom)!r} compares ordered attribute {ordered[0]!r} with "
                         "another column; compare it with values of its domain")
    if isinstance(atom, (exp.Like, exp.ILike)):
        raise QueryError(f"{text(atom)!r}: LIKE is not defined on ordered attribute "
                         f"{ordered[0]!r}; list the values with IN")
    attr = schema[ordered[0]]
    if attr.name not in ranks:
        ranks[attr.name] = {v: i for i, v in enumerate(attr.values)}
    rank, test = ranks[attr.name], domain_test(attr)
    shown = text(atom)  # before its values become indices

    def index(value: Any) -> int:
        if not test(value):
            raise DomainError(f"value {short(repr(value))} in {shown!r} is not in the domain "
                              f"of ordered attribute {attr.name!r} ({attr.describe()})")
        return rank[value]

    listed = in_values(atom) if isinstance(atom, exp.In) else None
    if listed is not None:
        indices = [index(v) for v in listed.values]
        set_list(atom, ValueList(indices, ", ".join(map(str, indices)), listed.from_subquery))
        return atom
    for literal in [n for n in querytree.nodes(atom) if isinstance(n, exp.Literal)]:
        node = literal.parent if isinstance(literal.parent, exp.Neg) else literal
        node.replace(exp.Literal.number(index(constant(node))))
    return atom


# ---- missing: a marker outside the value order ------------------------------------------------

#: Atoms that compare by order: they never match a missing cell.
ORDER = (exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Between)


def literal(value: Any) -> exp.Expression:
    """The SQL node of a Python value (a negative number as unary minus)."""
    value = value.item() if isinstance(value, np.generic) else value
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, str):
        return exp.Literal.string(value)
    if value < 0:
        return exp.Neg(this=exp.Literal.number(-value))
    return exp.Literal.number(value)


def _by_value(atom: exp.Expression) -> bool:
    """Whether the atom tests one bare column against constants for equality
    (=, <>, a literal IN list): the only atoms that see the missing label as
    the marker it is."""
    if isinstance(atom, exp.In):
        return isinstance(bare(atom.this), exp.Column) and in_values(atom) is not None
    if isinstance(atom, (exp.EQ, exp.NEQ)):
        left, right = bare(atom.this), bare(atom.expression)
        return (isinstance(left, exp.Column) and is_constant(right)) or \
            (isinstance(right, exp.Column) and is_constant(left))
    return False


def place_missing(schema: Schema, atom: exp.Expression,
                  parts: list[exp.Expression] | None = None) -> exp.Expression:
    """The atom with missing cells given their one meaning (docs/design.md,
    "Missing is a marker outside the value order"): a declared missing label is a
    marker, not a value.
    ``c IS NULL`` is ``c = <label>`` (FALSE where no label is declared: such a
    column holds no missing cell); ``c = <label>``, ``c <> v`` and IN lists test
    the marker like any value; every other atom (order comparisons, BETWEEN,
    LIKE, arithmetic, two columns) never matches a missing cell, so it becomes
    ``(atom AND c <> <label>)`` for each attribute with a label that it reads."""
    if isinstance(atom, exp.Is):
        column = bare(atom.this)
        if not isinstance(atom.expression, exp.Null) or not isinstance(column, exp.Column):
            raise QueryError(f"{text(atom)!r}: IS compares one attribute with NULL "
                             "(c IS NULL, c IS NOT NULL)")
        check_column(schema, column, atom)  # a typo is named as in any other atom
        label = schema[column.name].missing
        if label is None:
            return exp.Boolean(this=False)
        return exp.EQ(this=column.copy(), expression=literal(label))
    if _by_value(atom) or isinstance(atom, exp.Boolean):
        return atom
    names = set(column_names(atom, parts))
    guards = [exp.NEQ(this=exp.column(a.name, quoted=True), expression=literal(a.missing))
              for a in schema if a.name in names and a.missing is not None]
    if not guards:
        return atom
    if isinstance(atom, (exp.Like, exp.ILike)) and atom.args.get("negate"):
        # NOT LIKE is NOT (… LIKE …), as NOT BETWEEN and NOT IN are: NOT is two-valued.
        positive = atom.copy()
        positive.set("negate", None)
        return exp.Not(this=exp.Paren(this=exp.and_(positive, *guards)))
    return exp.Paren(this=exp.and_(atom, *guards))


def check_order(schema: Schema, atom: exp.Expression,
                parts: list[exp.Expression] | None = None) -> None:
    """``<``, ``>`` and BETWEEN need an order: an unordered text attribute has
    none (comparing its labels as text puts '500+' before '<50'), so such an
    atom is refused with how to declare the order; and an ordered attribute's
    missing label is no bound (its place in the list is where it was written)."""
    if not isinstance(atom, ORDER):
        return
    for name in column_names(atom, parts):
        attr = schema[name]
        if attr.ordered and attr.missing is not None and any(
                constant(n) == attr.missing for n in atom.find_all(exp.Literal, exp.Neg)
                if is_constant(n) and not isinstance(n.parent, exp.Neg)):
            raise QueryError(
                f"{text(atom)!r} compares {attr.name!r} by order with {attr.missing!r}, its "
                "missing marker, which has no place in the order; ask for the missing cells "
                f"with {attr.name} IS NULL (or IS NOT NULL)")
        if attr.kind == "string" and not attr.ordered:
            raise QueryError(
                f"{text(atom)!r} compares {attr.name!r} by order, but its values are text "
                f"with no declared order (as text, {short(repr(sorted(attr.values)[:3]))} "
                "sort alphabetically); declare the order (Categorical(..., ordered=True), a "
                "pandas Categorical with ordered=True, or \"ordered\": true in a schema "
                "file, --schema for a CSV), or list the values with IN")


# ---- literals past 64 bits ---------------------------------------------------------------------


def fold_wide(schema: Schema, atom: exp.Expression,
              parts: list[exp.Expression] | None = None) -> exp.Expression:
    """The atom with every numeric literal outside int64 decided exactly
    (module docstring), or a QueryError naming a literal that cannot be."""
    if not any(_wide(n) for n in (querytree.nodes(atom) if parts is None else parts)
               if isinstance(n, exp.Literal)):
        return atom
    folded = _fold_comparison(schema, atom)
    if folded is None and isinstance(atom, exp.Between):
        folded = _fold_between(schema, atom)
    if folded is not None:
        atom = folded
    for literal in atom.find_all(exp.Literal):
        node = literal.parent if isinstance(literal.parent, exp.Neg) else literal
        if _wide(node):
            raise QueryError(f"the literal {short(node.sql(dialect=DIALECT))} in "
                             f"{text(atom)!r} lies outside the 64-bit integer range; privpub "
                             "decides such a literal exactly only where it is compared with "
                             "an attribute itself (a = …, a < …, a BETWEEN … AND …), and "
                             "refuses it in arithmetic")
    return atom


def _numeric_column(schema: Schema, node: exp.Expression) -> Attribute | None:
    node = bare(node)
    if not isinstance(node, exp.Column) or node.name not in schema.names:
        return None
    attr = schema[node.name]
    return attr if attr.kind in ("integer", "float") and not attr.ordered else None


def _fold_comparison(schema: Schema, atom: exp.Expression) -> exp.Expression | None:
    op = type(atom)
    if op not in _COMPARE:
        return None
    column, value = atom.this, atom.expression
    if _numeric_column(schema, column) is None:
        column, value, op = value, column, _FLIPPED[op]
    attr = _numeric_column(schema, column)
    bound = _exact(bare(value))
    if attr is None or bound is None or not _wide(bare(value)):
        return None
    return _decide(attr, column, lambda v: _COMPARE[op](v, bound))


def _fold_between(schema: Schema, atom: exp.Between) -> exp.Expression | None:
    attr = _numeric_column(schema, atom.this)
    low, high = _exact(bare(atom.args["low"])), _exact(bare(atom.args["high"]))
    if attr is None or low is None or high is None:
        return None
    if isinstance(attr, Categorical):
        return _decide(attr, atom.this, lambda v: low <= v <= high)
    # An integer range lies inside int64: a wide bound is below lo or above hi.
    keep_low, keep_high = not _wide(bare(atom.args["low"])), not _wide(bare(atom.args["high"]))
    if (not keep_low and low > attr.hi) or (not keep_high and high < attr.lo):
        return exp.Boolean(this=False)
    if keep_low and keep_high:
        return None
    if keep_low:
        return exp.GTE(this=atom.this, expression=atom.args["low"])
    if keep_high:
        return exp.LTE(this=atom.this, expression=atom.args["high"])
    return exp.Boolean(this=True)


def _decide(attr: Attribute, column: exp.Expression,
            holds: Callable[[Decimal], bool]) -> exp.Expression:
    """TRUE, FALSE or the exact list of the attribute's values satisfying ``holds``."""
    if isinstance(attr, IntRange):  # an integer range: its ends decide (wide literals only)
        ends = {holds(Decimal(attr.lo)), holds(Decimal(attr.hi))}
        if len(ends) != 1:  # not reached: a wide literal lies beyond both ends
            raise QueryError(f"cannot decide a comparison of {attr.name!r} exactly")
        return exp.Boolean(this=ends.pop())
    kept = [v for v in attr.values if holds(Decimal(v))]
    if len(kept) in (0, len(attr.values)):
        return exp.Boolean(this=bool(kept))
    return exp.In(this=column, expressions=[values_node(python_values(kept))])
