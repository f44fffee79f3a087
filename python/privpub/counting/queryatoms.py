"""One atom of a condition checked and normalised against a schema.

An atom (a comparison, IN, BETWEEN, LIKE) is refused when it reads an
unknown column, mixes value kinds, or names a value outside the domain in
``=``, ``<>`` or a literal IN list (a typo would otherwise count 0). Then:

- values a subquery returned outside the domain are dropped (they match
  nothing; an emptied list is FALSE);
- an ordered attribute's values become their domain indices;
- a numeric literal outside the 64-bit integer range (``a < 10^400``,
  ``a > -1e30``) is decided exactly where it is compared with an attribute
  itself: the atom becomes TRUE or FALSE (an integer range lies inside int64),
  a BETWEEN loses its vacuous bound, and on a numeric categorical the atom
  becomes the exact list of values that satisfy it. Anywhere else (arithmetic,
  another expression) such a literal is refused by name: DuckDB compares
  literals past 38 digits wrongly (as BIGNUM) and numpy would round them.

Nothing here recurses deeper than the atom's nesting (bounded by
``querytext.MAX_DEPTH``), and a literal list of n values costs O(n).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlglot import exp

from privpub.core.errors import DomainError, QueryError
from privpub.counting import querytree
from privpub.counting.querytext import python_values
from privpub.counting.querytree import (
    DIALECT,
    ValueList,
    exact,
    in_values,
    int_sql,
    number,
    render,
    short,
    value_list,
    values_node,
)
from privpub.domain.attributes import Categorical, IntRange

if TYPE_CHECKING:
    from privpub.domain.attributes import Attribute
    from privpub.domain.schema import Schema

#: Nodes that are atoms (a truth value computed from attribute values).
ATOMS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.In, exp.Between, exp.Like,
         exp.ILike, exp.Boolean, exp.Is)
#: Nodes allowed inside an atom.
VALUES = (exp.Column, exp.Identifier, exp.Literal, exp.Neg, exp.Paren, exp.Add, exp.Sub,
          exp.Mul, exp.Div, exp.Mod, exp.Boolean, exp.Tuple)
ARITHMETIC = (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod, exp.Neg)
#: The range DuckDB's BIGINT and numpy's int64 hold.
INT64 = (-(1 << 63), (1 << 63) - 1)
_COMPARE = {exp.GT: lambda a, b: a > b, exp.GTE: lambda a, b: a >= b,
            exp.LT: lambda a, b: a < b, exp.LTE: lambda a, b: a <= b,
            exp.EQ: lambda a, b: a == b, exp.NEQ: lambda a, b: a != b}
_FLIPPED = {exp.GT: exp.LT, exp.GTE: exp.LTE, exp.LT: exp.GT, exp.LTE: exp.GTE,
            exp.EQ: exp.EQ, exp.NEQ: exp.NEQ}


def column_names(atom: exp.Expression, parts: list[exp.Expression] | None = None) -> list[str]:
    """The names of the columns an atom reads, in the order of
    :func:`~privpub.counting.querytree.nodes` (as often as they are written;
    ``parts``: the atom's nodes, when known)."""
    return [n.name for n in (querytree.nodes(atom) if parts is None else parts)
            if isinstance(n, exp.Column)]


def text(node: exp.Expression) -> str:
    """The node's SQL for a message (a long IN list shortened)."""
    return short(querytree.to_sql(node), 200)


# ---- constants ---------------------------------------------------------------------------------


def is_constant(node: exp.Expression) -> bool:
    return isinstance(node, (exp.Literal, exp.Boolean)) or (
        isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal))


def constant(node: exp.Expression) -> Any:
    """The Python value of a literal node (integers exact at any size)."""
    if isinstance(node, exp.Boolean):
        return bool(node.this)
    if isinstance(node, exp.Neg):
        return -constant(node.this)
    return node.this if node.is_string else number(node.this)


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


def _bare(node: exp.Expression) -> exp.Expression:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


# ---- domain membership -------------------------------------------------------------------------


def domain_test(attr: Attribute) -> Callable[[Any], bool]:
    """Whether a Python value is in the attribute's domain (True == 1 in Python:
    a boolean matches only a boolean domain, and back)."""
    boolean = attr.kind == "boolean"
    if isinstance(attr, Categorical):
        members = attr.value_set
        return lambda v: isinstance(v, (bool, np.bool_)) == boolean and v in members
    lo, hi = attr.lo, attr.hi
    return lambda v: (isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))
                      and lo <= v <= hi)


def _can_match(attr: Attribute, value: Any) -> bool:
    """Whether a subquery's value can equal a domain value (as DuckDB compares:
    3.0 matches the integer 3)."""
    if isinstance(attr, IntRange) and isinstance(value, float) and value.is_integer():
        value = int(value)
    return domain_test(attr)(value)


def check_in_domain(schema: Schema, name: str, value: Any,
                    atom: exp.Expression | None = None) -> None:
    """Equalities name domain values; a value outside is almost surely a typo."""
    attr = schema[name]
    if not domain_test(attr)(value):
        raise _outside(attr, value, atom)


def _outside(attr: Attribute, value: Any, atom: exp.Expression | None) -> DomainError:
    where = "" if atom is None else f" (in {text(atom)!r})"
    return DomainError(f"value {short(repr(value))} is not in the domain of {attr.name!r}"
                       f"{where} ({attr.describe()}){suggest(value, attr)}")


def suggest(value: Any, attr: Any) -> str:
    """Near values of a categorical domain: same after trimming or case folding,
    or a small edit distance."""
    if not isinstance(value, str) or not isinstance(attr, Categorical):
        return ""
    names = [v for v in attr.values if isinstance(v, str)]
    folded = value.strip().casefold()
    near = [v for v in names if v.strip().casefold() == folded]
    near += [v for v in difflib.get_close_matches(value.strip(), names, n=3, cutoff=0.75)
             if v not in near]
    return f"; did you mean {' or '.join(repr(v) for v in near[:3])}?" if near else ""


# ---- checks ------------------------------------------------------------------------------------


def check_atom(schema: Schema, atom: exp.Expression,
               parts: list[exp.Expression] | None = None) -> None:
    """Columns known and unqualified, only supported SQL, one value kind
    (``parts``: the atom's :func:`~privpub.counting.querytree.nodes`, when known)."""
    if isinstance(atom, exp.Boolean):
        return  # TRUE / FALSE
    parts = querytree.nodes(atom) if parts is None else parts
    if not any(isinstance(n, exp.Column) for n in parts):
        raise QueryError(f"{text(atom)!r} compares constants, it reads no attribute; quote "
                         "attribute names with double quotes (\"marital-status\" = "
                         "'Divorced'), values with single quotes")
    for node in parts:
        if isinstance(node, VALUES):  # (most nodes; none of them is refused below)
            if isinstance(node, exp.Column):
                _check_column(schema, node, atom)
            continue
        if node is atom or value_list(node) is not None:
            continue
        if _is_temporal(node):
            raise QueryError(f"{text(node)!r} in {text(atom)!r} is a date or time; privpub's "
                             "attributes hold no dates (a CSV's dates are text, and a date "
                             "column is converted before publishing): compare with the text "
                             "as stored (ISO dates, '1980-01-01', order as text) or with the "
                             "number or label you converted the dates to")
        if isinstance(node, exp.Null):
            raise QueryError(f"{text(atom)!r} compares with NULL, which SQL never finds equal "
                             "(or unequal) to anything; ask for missing cells with "
                             "<column> IS NULL or IS NOT NULL")
        raise QueryError(f"unsupported SQL {text(node)!r} ({type(node).__name__}) in "
                         f"{text(atom)!r}")
    if isinstance(atom, (exp.Like, exp.ILike)):
        if kind(schema, atom.this) != "string":
            raise QueryError(f"LIKE needs a string attribute: {text(atom)!r}")
        return
    operands = [atom.this] + [atom.args[k] for k in ("expression", "low", "high")
                              if atom.args.get(k) is not None]
    listed = in_values(atom)
    if listed is None:
        operands += atom.args.get("expressions") or []
    kinds = [(kind(schema, o), o) for o in operands]
    if len({k for k, _ in kinds} | (listed.kinds if listed is not None else set())) > 1:
        shown = {(k, text(o)) for k, o in kinds}
        for k in listed.kinds if listed is not None else ():
            first = next(v for v in listed.values if _value_kind(v) == k)
            shown.add((k, short(repr(first))))
        detail = ", ".join(f"{s!r} is {k}" for k, s in sorted(shown))
        raise QueryError(f"type mismatch in {text(atom)!r}: {detail}")


def _is_temporal(node: exp.Expression) -> bool:
    """A date/time literal or cast (DATE '…' parses as CAST('…' AS DATE)), or an interval."""
    if isinstance(node, exp.Interval):
        return True
    to = node.args.get("to") if isinstance(node, exp.Cast) else None
    return to is not None and to.is_type(*exp.DataType.TEMPORAL_TYPES)


def _value_kind(value: Any) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "boolean"
    return "string" if isinstance(value, str) else "number"


def _check_column(schema: Schema, node: exp.Column, atom: exp.Expression) -> None:
    if node.table:
        raise QueryError(f"column {node.sql(dialect=DIALECT)!r} in {text(atom)!r} names table "
                         f"{node.table!r}; a condition reads the counted table's attributes, "
                         "by name alone")
    if node.name not in schema.names:
        # "x" compared with a known column is a text value written in double quotes.
        if node.this.args.get("quoted") and any(
                c.name in schema.names for c in atom.find_all(exp.Column)):
            value = exp.Literal.string(node.name).sql(dialect=DIALECT)
            raise QueryError(f"{text(atom)!r}: double quotes name columns, and there is no "
                             f"column {node.name!r}; write text values in single quotes: "
                             f"{text(atom).replace(node.sql(dialect=DIALECT), value, 1)!r}")
        hyphenated = [n for n in schema.names if n.startswith(node.name + "-")]
        hint = (f"; a name with a hyphen needs double quotes: \"{hyphenated[0]}\""
                if hyphenated else "")
        raise QueryError(f"unknown column {node.name!r} in {text(atom)!r}{hint}; attributes: "
                         f"{', '.join(schema.names)}")


def kind(schema: Schema, node: exp.Expression) -> str:
    node = _bare(node)
    if isinstance(node, exp.Column):
        k = schema[node.name].kind
        return "number" if k in ("integer", "float") else k
    if isinstance(node, exp.Literal):
        return "string" if node.is_string else "number"
    if isinstance(node, exp.Boolean):
        return "boolean"
    if isinstance(node, ARITHMETIC):
        for child in (node.this, node.args.get("expression")):
            if child is not None and kind(schema, child) != "number":
                raise QueryError(f"arithmetic on a non-number: {text(child)!r} in "
                                 f"{text(node)!r}")
        return "number"
    raise QueryError(f"unsupported SQL {text(node)!r}")


def check_values(schema: Schema, atom: exp.Expression) -> exp.Expression:
    """An attribute compared for (in)equality or membership with a value
    outside its domain is almost surely a typo (``sex = 'Femalee'``, or a raw
    file's ``' Female'``): refuse it, as the mapping form does, and suggest
    the near values. A subquery's values outside the domain are dropped."""
    if isinstance(atom, (exp.EQ, exp.NEQ)):
        for column, value in [(atom.this, atom.expression), (atom.expression, atom.this)]:
            column = _bare(column)
            if isinstance(column, exp.Column) and is_constant(value):
                check_in_domain(schema, column.name, constant(value), atom)
        return atom
    listed = in_values(atom) if isinstance(atom, exp.In) else None
    column = _bare(atom.this) if listed is not None else None
    if not isinstance(column, exp.Column):
        return atom
    attr = schema[column.name]
    if listed.ints is not None and isinstance(attr, IntRange):  # integers, a range: numpy
        inside = (listed.ints >= attr.lo) & (listed.ints <= attr.hi)
        if inside.all():
            return atom
        if not listed.from_subquery:
            raise _outside(attr, int(listed.ints[~inside][0]), atom)
        kept = listed.ints[inside]
        if not kept.size:
            return exp.Boolean(this=False)
        _set_list(atom, ValueList(None, int_sql(kept), True, ints=kept))
        return atom
    test = domain_test(attr)
    if listed.from_subquery:
        kept = [v for v in listed.values if _can_match(attr, v)]
        if not kept:
            return exp.Boolean(this=False)
        if len(kept) < len(listed):
            _set_list(atom, ValueList(kept, ", ".join(map(render, kept)), True))
        return atom
    if not all(map(test, listed.values)):
        bad = next(v for v in listed.values if not test(v))
        raise _outside(attr, bad, atom)
    return atom


def _set_list(atom: exp.Expression, listed: ValueList) -> None:
    atom.set("expressions", [values_node(listed)])


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
        _set_list(atom, ValueList(indices, ", ".join(map(str, indices)), listed.from_subquery))
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
        return isinstance(_bare(atom.this), exp.Column) and in_values(atom) is not None
    if isinstance(atom, (exp.EQ, exp.NEQ)):
        left, right = _bare(atom.this), _bare(atom.expression)
        return (isinstance(left, exp.Column) and is_constant(right)) or \
            (isinstance(right, exp.Column) and is_constant(left))
    return False


def place_missing(schema: Schema, atom: exp.Expression,
                  parts: list[exp.Expression] | None = None) -> exp.Expression:
    """The atom with missing cells given their one meaning (docs/design.md,
    "What a value means"): a declared missing label is a marker, not a value.
    ``c IS NULL`` is ``c = <label>`` (FALSE where no label is declared: such a
    column holds no missing cell); ``c = <label>``, ``c <> v`` and IN lists test
    the marker like any value; every other atom (order comparisons, BETWEEN,
    LIKE, arithmetic, two columns) never matches a missing cell, so it becomes
    ``(atom AND c <> <label>)`` for each attribute with a label that it reads."""
    if isinstance(atom, exp.Is):
        column = _bare(atom.this)
        if not isinstance(atom.expression, exp.Null) or not isinstance(column, exp.Column):
            raise QueryError(f"{text(atom)!r}: IS compares one attribute with NULL "
                             "(c IS NULL, c IS NOT NULL)")
        _check_column(schema, column, atom)  # a typo is named as in any other atom
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
    node = _bare(node)
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
    bound = _exact(_bare(value))
    if attr is None or bound is None or not _wide(_bare(value)):
        return None
    return _decide(attr, column, lambda v: _COMPARE[op](v, bound))


def _fold_between(schema: Schema, atom: exp.Between) -> exp.Expression | None:
    attr = _numeric_column(schema, atom.this)
    low, high = _exact(_bare(atom.args["low"])), _exact(_bare(atom.args["high"]))
    if attr is None or low is None or high is None:
        return None
    if isinstance(attr, Categorical):
        return _decide(attr, atom.this, lambda v: low <= v <= high)
    # An integer range lies inside int64: a wide bound is below lo or above hi.
    keep_low, keep_high = not _wide(_bare(atom.args["low"])), not _wide(_bare(atom.args["high"]))
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
