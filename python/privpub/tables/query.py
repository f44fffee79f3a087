"""Counting queries: ``select count(*) from I where C``.

A condition C is written as SQL WHERE text (parsed with sqlglot), built with
the expression API (``col("age") > 50``, ``&``, ``|``, ``~``, ``.isin``,
arithmetic across attributes such as ``col("score") < 3 * col("age")``), or
given as a mapping ``{attribute: value}`` (a conjunction of equalities).

A :class:`Condition` splits C into *atoms* (comparisons, IN, BETWEEN, LIKE,
each over a set of attributes) combined by AND / OR / NOT; the domain count
(:mod:`privpub.tables.domaincount`) works on that structure. IN-subqueries over
auxiliary tables (the paper's Q2, ``nationality in (select country from
Regions where …)``) are run once with duckdb on the registered tables and
replaced by the list of values they return. All evaluation goes through
duckdb with the same SQL text, so Q(V) and Q(D) share one semantics.
"""

from __future__ import annotations

import difflib
import math
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Union

import duckdb
import numpy as np
import pandas as pd
import sqlglot
from sqlglot import exp

from privpub import _core
from privpub.core.errors import DomainError, QueryError
from privpub.tables.inputs import tabular
from privpub.tables.truthtable import grid_table

if TYPE_CHECKING:  # schema.py imports this module (Schema.count); no import back at run time
    from privpub.tables.schema import Schema

DIALECT = "duckdb"
#: Conditions whose attributes span at most this many domain tuples are
#: evaluated once over that projection and looked up by code.
PROJECTION_LIMIT = 1 << 20

_local = threading.local()


def _connection() -> duckdb.DuckDBPyConnection:
    """One duckdb connection per thread (connecting costs ~15 ms), locked down:
    no file or network access and no configuration changes, so a query can
    read only the frames privpub registers in it."""
    con = getattr(_local, "con", None)
    if con is None:
        con = _local.con = duckdb.connect(config={"enable_external_access": False,
                                                  "lock_configuration": True})
    return con


#: Functions an IN-subquery may call (string, numeric, conditional, aggregate).
SUBQUERY_FUNCTIONS = frozenset({
    "Abs", "Avg", "Ceil", "Coalesce", "Concat", "Count", "Floor", "Greatest", "If", "Least",
    "Length", "Lower", "Max", "Min", "Nullif", "Round", "Substring", "Sum", "Trim", "Upper",
    "Case", "Cast", "TryCast", "Distinct", "Left", "Right", "StartsWith", "Replace",
})

#: Nodes that combine atoms.
_CONNECTIVES = (exp.And, exp.Or, exp.Not, exp.Paren)
#: Nodes that are atoms (a truth value computed from attribute values).
_ATOMS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.In, exp.Between, exp.Like,
          exp.ILike, exp.Boolean)
#: Nodes allowed inside an atom.
_VALUES = (exp.Column, exp.Identifier, exp.Literal, exp.Neg, exp.Paren, exp.Add, exp.Sub,
           exp.Mul, exp.Div, exp.Mod, exp.Boolean, exp.Tuple)
_ARITHMETIC = (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod, exp.Neg)


# ---- expression API ---------------------------------------------------------------------------


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


def _grouped(node: exp.Expression) -> exp.Expression:
    """Parenthesise compound operands so the generated SQL keeps Python's grouping."""
    return exp.Paren(this=node) if isinstance(node, (exp.Binary, exp.Not)) else node


class Expr:
    """A query expression; combine with comparison, arithmetic, ``&``, ``|``, ``~``.

    Examples
    --------
    >>> from privpub import col
    >>> ((col("age") > 50) & col("sex").isin(["Male"])).sql()
    '("age" > 50) AND "sex" IN (\\'Male\\')'
    """

    __hash__ = None  # == builds an expression, so Expr is not hashable

    def __init__(self, node: exp.Expression):
        self.node = node

    def sql(self) -> str:
        return self.node.sql(dialect=DIALECT)

    def __repr__(self) -> str:
        return f"Expr({self.sql()})"

    def __bool__(self) -> bool:
        raise QueryError("an Expr has no truth value: combine conditions with & | ~ "
                         "(not and/or/not) and write a < x < b as (a < x) & (x < b)")

    def _binary(self, cls, other, reverse=False) -> Expr:
        left, right = (_node(other), self.node) if reverse else (self.node, _node(other))
        return Expr(cls(this=_grouped(left), expression=_grouped(right)))

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
        return Expr(exp.Neg(this=exp.Paren(this=self.node)))

    def __invert__(self) -> Expr:
        return Expr(exp.Not(this=exp.Paren(this=self.node)))

    def isin(self, values: Iterable[Any] | str) -> Expr:
        """Membership in a list of values, or in an SQL subquery over a registered
        table (``"select country from Regions where continent = 'Africa'"``)."""
        if isinstance(values, str):
            sub = _parse_select(values)
            return Expr(exp.In(this=self.node, query=exp.Subquery(this=sub)))
        return Expr(exp.In(this=self.node, expressions=[_node(v) for v in values]))

    def between(self, low: Any, high: Any) -> Expr:
        """low ≤ self ≤ high (SQL BETWEEN, both ends included)."""
        return Expr(exp.Between(this=self.node, low=_node(low), high=_node(high)))


def col(name: str) -> Expr:
    """The attribute ``name`` in a query expression."""
    if not isinstance(name, str) or not name:
        raise QueryError(f"col() needs an attribute name, got {name!r}")
    return Expr(exp.column(name, quoted=True))


# ---- parsing ----------------------------------------------------------------------------------


#: Truth tables over projections of D, shared by every Condition: estimating
#: the same query on many views, or counting the atoms of many conditions
#: over one schema, builds each table once. Bounded in cells, oldest first out.
_TABLES: dict[tuple, np.ndarray] = {}
_TABLE_CACHE_CELLS = 1 << 26
_cached_cells = 0


def projection_table(schema: Schema, attributes: tuple[str, ...], sql: str,
                     node: exp.Expression | None, limit: int = PROJECTION_LIMIT
                     ) -> np.ndarray | None:
    """``sql`` (parsed: ``node``) over the projection of D on ``attributes``,
    first attribute slowest; None past ``limit`` tuples. numpy broadcasting
    where it mirrors DuckDB exactly (:mod:`privpub.tables.truthtable`),
    DuckDB on the projection's frame otherwise."""
    if math.prod(schema[a].size for a in attributes) > limit:
        return None
    global _cached_cells
    key = (schema, attributes, sql)
    table = _TABLES.get(key)
    if table is None:
        table = grid_table(schema, attributes, node)
        if table is None:
            table = _evaluate(schema.projection(attributes, query=True), sql)
        table.setflags(write=False)
        while _TABLES and _cached_cells + table.size > _TABLE_CACHE_CELLS:
            _cached_cells -= _TABLES.pop(next(iter(_TABLES))).size
        _TABLES[key] = table
        _cached_cells += table.size
    return table


def _evaluate(frame: pd.DataFrame, sql: str) -> np.ndarray:
    """The boolean value of ``sql`` on every row of ``frame`` (duckdb)."""
    if len(frame) == 0:
        return np.zeros(0, dtype=bool)
    con = _connection()
    try:
        con.register("rows", frame)
        out = con.execute(f"SELECT ({sql}) AS v FROM rows").fetchnumpy()["v"]
    except duckdb.Error as err:
        raise QueryError(f"evaluating {sql!r} failed: {_first_line(err)}") from None
    finally:
        con.unregister("rows")
    return np.asarray(out, dtype=bool)


def _first_line(err: Exception) -> str:
    """DuckDB's message without its multi-line caret picture."""
    return str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__


def _check_in_domain(schema: Schema, name: str, value: Any, where: str = "") -> None:
    """Equalities name domain values; a value outside is almost surely a typo."""
    attr = schema[name]
    # True == 1 in Python: a boolean matches only a boolean domain, and back.
    same_kind = isinstance(value, (bool, np.bool_)) == (attr.kind == "boolean")
    if hasattr(attr, "values"):
        inside = same_kind and value in set(attr.values)
    else:
        inside = same_kind and isinstance(value, (int, np.integer)) \
            and attr.lo <= value <= attr.hi
    if not inside:
        raise DomainError(f"value {value!r} is not in the domain of {name!r}{where} "
                          f"({attr.describe()}){_suggest(value, attr)}")


def _suggest(value: Any, attr: Any) -> str:
    """Near values of a categorical domain: same after trimming or case folding,
    or a small edit distance."""
    if not isinstance(value, str) or not hasattr(attr, "values"):
        return ""
    names = [v for v in attr.values if isinstance(v, str)]
    folded = value.strip().casefold()
    near = [v for v in names if v.strip().casefold() == folded]
    near += [v for v in difflib.get_close_matches(value.strip(), names, n=3, cutoff=0.75)
             if v not in near]
    return f"; did you mean {' or '.join(repr(v) for v in near[:3])}?" if near else ""


def _is_constant(node: exp.Expression) -> bool:
    return isinstance(node, (exp.Literal, exp.Boolean)) or (
        isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal))


def _constant(node: exp.Expression) -> Any:
    """The Python value of a literal node."""
    if isinstance(node, exp.Boolean):
        return bool(node.this)
    if isinstance(node, exp.Neg):
        return -_constant(node.this)
    if node.is_string:
        return node.this
    text = node.this
    return int(text) if text.lstrip("-").isdigit() else float(text)


#: sqlglot's node names, as the operator a user wrote.
_OPERATORS = {"GT": ">", "GTE": ">=", "LT": "<", "LTE": "<=", "EQ": "=", "NEQ": "<>",
              "And": "AND", "Or": "OR", "Not": "NOT", "Add": "+", "Sub": "-", "Mul": "*",
              "Div": "/", "Mod": "%", "In": "IN", "Between": "BETWEEN", "Like": "LIKE"}


def _parse_select(text: str, shown: str | None = None) -> exp.Select:
    """``text`` parsed as a SELECT; errors quote ``shown`` (what the user wrote)."""
    shown = text if shown is None else shown
    try:
        tree = sqlglot.parse_one(text, dialect=DIALECT)
    except sqlglot.errors.ParseError as err:
        raise QueryError(f"cannot parse {shown!r}: {_parse_problem(err)}") from None
    except sqlglot.errors.TokenError:
        raise QueryError(f"cannot parse {shown!r}: a quoted string or name is not closed, "
                         "or a character is not SQL") from None
    if not isinstance(tree, exp.Select):
        raise QueryError(f"expected a SELECT, got {tree.sql()!r}")
    return tree


def _parse_problem(err: sqlglot.errors.ParseError) -> str:
    """The parser's complaint in the user's terms (no sqlglot class names)."""
    first = err.errors[0]
    description = first.get("description") or "malformed SQL"
    missing = re.search(r"Required keyword: '(\w+)' missing for <class '[\w.]*\.(\w+)'>",
                        description)
    if missing:
        operator = _OPERATORS.get(missing.group(2), missing.group(2))
        return f"{operator!r} is missing an operand"
    near = first.get("highlight")
    return f"{description}" + (f" near {near!r}" if near else "")


def _parse_where(text: str) -> exp.Expression | None:
    stripped = text.strip()
    if stripped.lower().startswith("select"):
        select = _parse_select(stripped)
        count = select.expressions
        if len(count) != 1 or not isinstance(count[0], exp.Count):
            raise QueryError(f"a counting query is select count(*) from I where …, got "
                             f"{stripped!r}")
        where = select.args.get("where")
        return None if where is None else where.this
    if not stripped:
        raise QueryError("the query is empty; to count every record pass None or 'TRUE'")
    if stripped.lower().startswith("where "):
        stripped = stripped[6:]  # "WHERE age > 50" means the condition after it
    return _parse_select(f"SELECT 1 FROM I WHERE {stripped}", shown=text).args["where"].this


QueryLike = Union[str, Expr, Mapping[str, Any], None, "Condition"]


@dataclass(frozen=True)
class Atom:
    """One atomic predicate: its SQL text and the attributes it reads (schema order)."""

    sql: str
    attributes: tuple[str, ...]
    node: exp.Expression = field(compare=False, repr=False)


class Condition:
    """A parsed WHERE condition over a schema.

    ``formula`` is a tree of tuples: ``("atom", i)``, ``("not", f)``,
    ``("and", [f, …])``, ``("or", [f, …])`` over ``atoms[i]``.
    """

    def __init__(self, schema: Schema, where: QueryLike = None,
                 tables: Mapping[str, pd.DataFrame] | None = None):
        if isinstance(where, Condition):  # parsed again: for this schema, these tables
            tables = {**where.tables, **(tables or {})}
            where = where.source
        self.schema = schema
        self.tables = {name: tabular(t) for name, t in (tables or {}).items()}
        #: The query as given (re-parsed when the condition is used with another schema).
        self.source = where.node.copy() if isinstance(where, Expr) else where
        if where is None:
            root: exp.Expression | None = None
        elif isinstance(where, Expr):
            root = where.node.copy()
        elif isinstance(where, exp.Expression):  # a parsed query kept as a Condition's source
            root = where.copy()
        elif isinstance(where, str):
            root = _parse_where(where)
        elif isinstance(where, Mapping):
            root = None
            for name, value in where.items():
                _check_in_domain(schema, name, value)
                term = (col(name) == value).node
                root = term if root is None else exp.And(this=root, expression=term)
        else:
            raise QueryError(f"a query is SQL text, an Expr, a mapping or None, "
                             f"got {type(where).__name__}")
        self.expression: exp.Expression | None = (
            None if root is None else self._resolve_subqueries(root))
        self.atoms: list[Atom] = []
        self.formula = ("and", []) if self.expression is None else self._split(self.expression)

    @property
    def sql(self) -> str:
        """The condition as duckdb SQL (subqueries replaced by their values)."""
        return "TRUE" if self.expression is None else self.expression.sql(dialect=DIALECT)

    @property
    def attributes(self) -> tuple[str, ...]:
        used = {a for atom in self.atoms for a in atom.attributes}
        return tuple(n for n in self.schema.names if n in used)

    def __repr__(self) -> str:
        return f"Condition({self.sql})"

    # ---- construction ---------------------------------------------------------------------
    def _resolve_subqueries(self, root: exp.Expression) -> exp.Expression:
        for node in list(root.find_all(exp.In)):
            query = node.args.get("query")
            if query is None:
                continue
            select = query.this if isinstance(query, exp.Subquery) else query
            values = self._run_subquery(select)
            node.set("query", None)
            if values:
                node.set("expressions", [_node(v) for v in values])
                # A subquery's values may lie outside the domain (they match nothing).
                node.meta["from_subquery"] = True
            else:
                node.replace(exp.Boolean(this=False))
        return root

    def _run_subquery(self, select: exp.Select) -> list[Any]:
        if len(select.expressions) != 1:
            raise QueryError(f"an IN subquery selects one column: {select.sql()!r}")
        text = select.sql(dialect=DIALECT)
        for table in select.find_all(exp.Table):
            if not table.name or not isinstance(table.this, exp.Identifier):
                raise QueryError(f"subquery {text!r} reads {table.sql(dialect=DIALECT)!r}; a "
                                 "subquery reads only registered tables, by name")
        for func in select.find_all(exp.Func):
            if isinstance(func, (exp.Binary, exp.Unary, exp.Predicate)):
                continue  # operators (AND, =, NOT, …), not function calls
            if type(func).__name__ not in SUBQUERY_FUNCTIONS:
                raise QueryError(f"subquery {text!r} calls {func.sql(dialect=DIALECT)!r}, "
                                 f"which is not allowed (allowed: "
                                 f"{', '.join(sorted(SUBQUERY_FUNCTIONS)).lower()})")
        names = {t.name for t in select.find_all(exp.Table)}
        missing = sorted(n for n in names if n not in self.tables)
        if missing:
            raise QueryError(f"subquery {text!r} reads table(s) {missing}, which are not "
                             f"registered (registered: {sorted(self.tables) or 'none'}); "
                             "Python: tables={name: table}; command line: --table NAME=PATH")
        con = _connection()
        try:
            for name in names:
                con.register(name, self.tables[name])
            rows = con.execute(select.sql(dialect=DIALECT)).fetchall()
        except duckdb.Error as err:
            raise QueryError(f"subquery {text!r} failed: {_first_line(err)}") from None
        finally:
            for name in names:
                con.unregister(name)
        return sorted({r[0] for r in rows if r[0] is not None}, key=repr)

    def _split(self, node: exp.Expression):
        if isinstance(node, exp.Paren):
            return self._split(node.this)
        if isinstance(node, exp.Not):
            return ("not", self._split(node.this))
        if isinstance(node, (exp.And, exp.Or)):
            kind = "and" if isinstance(node, exp.And) else "or"
            parts = []
            for child in (node.this, node.expression):
                sub = self._split(child)
                parts.extend(sub[1] if sub[0] == kind else [sub])
            return (kind, parts)
        if not isinstance(node, _ATOMS):
            raise QueryError(f"unsupported SQL in a condition: {node.sql(dialect=DIALECT)!r} "
                             f"({type(node).__name__}); use comparisons, IN, BETWEEN, LIKE, "
                             "arithmetic, AND, OR, NOT")
        self._check_atom(node)
        self._check_values(node)
        self._rank_ordered(node)
        columns = {c.name for c in node.find_all(exp.Column)}
        attrs = tuple(n for n in self.schema.names if n in columns)
        self.atoms.append(Atom(node.sql(dialect=DIALECT), attrs, node))
        return ("atom", len(self.atoms) - 1)

    def _check_atom(self, atom: exp.Expression) -> None:
        if isinstance(atom, exp.Boolean):
            return  # TRUE / FALSE
        if not any(isinstance(n, exp.Column) for n in atom.walk()):
            text = atom.sql(dialect=DIALECT)
            raise QueryError(f"{text!r} compares constants, it reads no attribute; quote "
                             "attribute names with double quotes (\"marital-status\" = "
                             "'Divorced'), values with single quotes")
        for node in atom.walk():
            if node is atom:
                continue
            if not isinstance(node, _VALUES):
                raise QueryError(f"unsupported SQL {node.sql(dialect=DIALECT)!r} "
                                 f"({type(node).__name__}) in {atom.sql(dialect=DIALECT)!r}")
            if isinstance(node, exp.Column) and node.name not in self.schema.names:
                hyphenated = [n for n in self.schema.names if n.startswith(node.name + "-")]
                hint = (f"; a name with a hyphen needs double quotes: \"{hyphenated[0]}\""
                        if hyphenated else "")
                raise QueryError(f"unknown column {node.name!r} in "
                                 f"{atom.sql(dialect=DIALECT)!r}{hint}; attributes: "
                                 f"{', '.join(self.schema.names)}")
        if isinstance(atom, (exp.Like, exp.ILike)):
            if self._kind(atom.this) != "string":
                raise QueryError(f"LIKE needs a string attribute: {atom.sql(dialect=DIALECT)!r}")
            return
        operands = [atom.this] + [atom.args[k] for k in ("expression", "low", "high")
                                  if atom.args.get(k) is not None]
        operands += list(atom.args.get("expressions") or [])
        kinds = {(self._kind(o), o.sql(dialect=DIALECT)) for o in operands}
        if len({k for k, _ in kinds}) > 1:
            detail = ", ".join(f"{s!r} is {k}" for k, s in sorted(kinds))
            raise QueryError(f"type mismatch in {atom.sql(dialect=DIALECT)!r}: {detail}")

    def _check_values(self, atom: exp.Expression) -> None:
        """An attribute compared for (in)equality or membership with a value
        outside its domain is almost surely a typo (``sex = 'Femalee'``, or a
        raw file's ``' Female'``): refuse it, as the mapping form does, and
        suggest the near values."""
        if isinstance(atom, (exp.EQ, exp.NEQ)):
            pairs = [(atom.this, atom.expression), (atom.expression, atom.this)]
        elif isinstance(atom, exp.In) and atom.args.get("expressions") \
                and not atom.meta.get("from_subquery"):
            pairs = [(atom.this, e) for e in atom.args["expressions"]]
        else:
            return
        for column, value in pairs:
            while isinstance(column, exp.Paren):
                column = column.this
            if not isinstance(column, exp.Column) or not _is_constant(value):
                continue
            _check_in_domain(self.schema, column.name, _constant(value),
                             f" (in {atom.sql(dialect=DIALECT)!r})")

    def _rank_ordered(self, atom: exp.Expression) -> None:
        """An ordered attribute is compared by its declared order: its values in
        the atom become their domain indices (queries see the attribute as its
        indices, see ``Attribute._query_values``)."""
        names = {c.name for c in atom.find_all(exp.Column)}
        ordered = sorted(n for n in names if self.schema[n].ordered)
        if not ordered:
            return
        text = atom.sql(dialect=DIALECT)
        if len(names) > 1:
            raise QueryError(f"{text!r} compares ordered attribute {ordered[0]!r} with another "
                             "column; compare it with values of its domain")
        if isinstance(atom, (exp.Like, exp.ILike)):
            raise QueryError(f"{text!r}: LIKE is not defined on ordered attribute "
                             f"{ordered[0]!r}; list the values with IN")
        attr = self.schema[ordered[0]]
        for literal in list(atom.find_all(exp.Literal)):
            if literal.this not in attr.values:
                raise DomainError(f"value {literal.this!r} in {text!r} is not in the domain of "
                                  f"ordered attribute {attr.name!r} ({attr.describe()})")
            literal.replace(exp.Literal.number(attr.values.index(literal.this)))

    def _kind(self, node: exp.Expression) -> str:
        if isinstance(node, exp.Paren):
            return self._kind(node.this)
        if isinstance(node, exp.Column):
            kind = self.schema[node.name].kind
            return "number" if kind in ("integer", "float") else kind
        if isinstance(node, exp.Literal):
            return "string" if node.is_string else "number"
        if isinstance(node, exp.Boolean):
            return "boolean"
        if isinstance(node, _ARITHMETIC):
            for child in (node.this, node.args.get("expression")):
                if child is not None and self._kind(child) != "number":
                    raise QueryError(f"arithmetic on a non-number: {child.sql(dialect=DIALECT)!r} "
                                     f"in {node.sql(dialect=DIALECT)!r}")
            return "number"
        raise QueryError(f"unsupported SQL {node.sql(dialect=DIALECT)!r}")

    # ---- evaluation -------------------------------------------------------------------------
    def mask(self, frame: pd.DataFrame) -> np.ndarray:
        """Which rows of a frame of values satisfy the condition (ordered
        attributes compare by their declared order, as everywhere)."""
        ranks = {}
        for name in self.attributes:
            attr = self.schema[name]
            if attr.ordered:
                ranks[name] = attr._index.get_indexer(frame[name])
                if (ranks[name] < 0).any():
                    bad = frame[name].iloc[int(np.argmax(ranks[name] < 0))]
                    raise DomainError(f"column {name!r}: value {bad!r} is not in the domain "
                                      f"of ordered attribute {name!r} ({attr.describe()})")
        return _evaluate(frame.assign(**ranks) if ranks else frame, self.sql)

    def evaluate(self, frame: pd.DataFrame, sql: str | None = None) -> np.ndarray:
        """The condition (or ``sql``, one of its atoms) on a frame of query columns
        (``Schema.projection(..., query=True)``: ordered attributes as indices)."""
        return _evaluate(frame, sql or self.sql)

    def count(self, frame: pd.DataFrame) -> int:
        """Q(frame): the number of rows satisfying the condition."""
        return int(self.mask(frame).sum())

    def truth_table(self) -> np.ndarray | None:
        """The condition over the projection of D on its attributes (first
        attribute slowest), evaluated once; None when that projection has more
        than ``PROJECTION_LIMIT`` tuples."""
        if not hasattr(self, "_truth_table"):
            self._truth_table = projection_table(self.schema, self.attributes, self.sql,
                                                 self.expression)
        return self._truth_table

    def atom_table(self, atom: int, limit: int) -> np.ndarray | None:
        """Atom ``atom`` over the projection of D on its attributes (first
        slowest); None past ``limit`` tuples."""
        a = self.atoms[atom]
        return projection_table(self.schema, a.attributes, a.sql, a.node, limit)

    def mask_codes(self, codes: np.ndarray, digits: list[np.ndarray] | None = None
                   ) -> np.ndarray:
        """Which tuple codes satisfy the condition: a lookup in :meth:`truth_table`
        by the codes' digits (the same duckdb semantics), or duckdb on the
        decoded rows when the projection is too large."""
        if digits is None:
            digits = self.schema.digits(codes)
        index = {name: digits[j] for j, name in enumerate(self.schema.names)}
        return self.mask_digits(index, len(codes))

    def mask_digits(self, digits: Mapping[str, np.ndarray], rows: int) -> np.ndarray:
        """Which rows satisfy the condition, from the domain indices of (at
        least) the attributes it reads: a lookup in :meth:`truth_table`, or
        duckdb on those columns when the projection is too large."""
        table = self.truth_table()
        if table is None:
            attrs = [self.schema[a] for a in self.attributes]
            return self.evaluate(self.schema.frame_of(attrs, [digits[a.name] for a in attrs],
                                                      query=True, rows=rows))
        if not self.attributes:
            return np.full(rows, bool(table[0]))
        # The digits of the condition's attributes as one mixed-radix index into
        # the table: the tuple-code encoder over just those attributes (Rust).
        k = len(self.attributes)
        flat = _core.encode_u64([np.ascontiguousarray(digits[a]) for a in self.attributes],
                                [0] * k, [None] * k,
                                [self.schema[a].size for a in self.attributes])
        return table[flat]

    def count_digits(self, digits: Mapping[str, np.ndarray], rows: int) -> int:
        """How many rows satisfy the condition (as :meth:`mask_digits`, counted
        in one Rust pass over the truth table when there is one)."""
        table = self.truth_table()
        if table is None or not self.attributes:
            return int(self.mask_digits(digits, rows).sum())
        return _core.count_in_table([np.ascontiguousarray(digits[a]) for a in self.attributes],
                                    [self.schema[a].size for a in self.attributes], table)

    def count_codes(self, codes: np.ndarray) -> int:
        """Q(V) for the tuples with these codes."""
        return int(self.mask_codes(codes).sum())
