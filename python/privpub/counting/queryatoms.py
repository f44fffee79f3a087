"""One atom of a condition checked against a schema.

An atom (a comparison, IN, BETWEEN, LIKE) is refused when it reads an
unknown column, mixes value kinds, or names a value outside the domain in
``=``, ``<>`` or a literal IN list (a typo would otherwise count 0); values a
subquery returned outside the domain are dropped (they match nothing; an
emptied list is FALSE). What the values then mean (an ordered attribute's
rank, the missing marker, literals past int64) is
:mod:`privpub.counting.queryorder`'s.

Nothing here recurses deeper than the atom's nesting (bounded by
``querytext.MAX_DEPTH``), and a literal list of n values costs O(n).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlglot import exp

from privpub.core.errors import DomainError, QueryError
from privpub.counting import querytree
from privpub.counting.querytree import (
    DIALECT,
    ValueList,
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


def bare(node: exp.Expression) -> exp.Expression:
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
                check_column(schema, node, atom)
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


def check_column(schema: Schema, node: exp.Column, atom: exp.Expression) -> None:
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
    node = bare(node)
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
            column = bare(column)
            if isinstance(column, exp.Column) and is_constant(value):
                check_in_domain(schema, column.name, constant(value), atom)
        return atom
    listed = in_values(atom) if isinstance(atom, exp.In) else None
    column = bare(atom.this) if listed is not None else None
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
        set_list(atom, ValueList(None, int_sql(kept), True, ints=kept))
        return atom
    test = domain_test(attr)
    if listed.from_subquery:
        kept = [v for v in listed.values if _can_match(attr, v)]
        if not kept:
            return exp.Boolean(this=False)
        if len(kept) < len(listed):
            set_list(atom, ValueList(kept, ", ".join(map(render, kept)), True))
        return atom
    if not all(map(test, listed.values)):
        bad = next(v for v in listed.values if not test(v))
        raise _outside(attr, bad, atom)
    return atom


def set_list(atom: exp.Expression, listed: ValueList) -> None:
    atom.set("expressions", [values_node(listed)])
