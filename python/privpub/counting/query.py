"""Counting queries: ``select count(*) from I where C``.

A condition C is written as SQL WHERE text (read by privpub's one parser,
:mod:`privpub.counting.querytext`, into sqlglot nodes), built with
the expression API (``col("age") > 50``, ``&``, ``|``, ``~``, ``.isin``,
arithmetic across attributes such as ``col("score") < 3 * col("age")``), or
given as a mapping ``{attribute: value}`` (a conjunction of equalities).

A :class:`Condition` splits C into *atoms* (comparisons, IN, BETWEEN, LIKE,
each over a set of attributes) combined by AND / OR / NOT; the domain count
(:mod:`privpub.counting.domaincount`) works on that structure. IN-subqueries over
auxiliary tables (the paper's Q2, ``nationality in (select country from
Regions where …)``) are run once with duckdb on the registered tables and
replaced by the list of values they return. All evaluation goes through
duckdb with the same SQL text, so Q(V) and Q(D) share one semantics (numpy
stands in where it gives the same answer: :mod:`privpub.counting.truthtable`).

A query means what it says or is refused by name (issue 22): text is a
WHERE condition or ``SELECT count(*) FROM <name> [WHERE …]`` and nothing
else (DISTINCT, GROUP BY, LIMIT, JOIN, HAVING, ORDER BY, a table function or
file, a count of anything but ``*``); depth, AND/OR terms and listed values
are bounded by ``querytext.MAX_DEPTH`` / ``MAX_TERMS`` / ``MAX_VALUES``
as the text is read; literal IN lists are one node each, at linear cost;
literals past int64 are decided exactly or refused
(:mod:`privpub.counting.querytext`, :mod:`privpub.counting.queryatoms`).
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Union

import numpy as np
import pandas as pd
from sqlglot import exp

from privpub import _core
from privpub.core.errors import DomainError, QueryError
from privpub.core.inputs import tabular
from privpub.counting import queryatoms, querytext
from privpub.counting.querytext import (
    DIALECT,
    ValueList,
    in_values,
    python_values,
    short,
    values_node,
)
from privpub.counting.truthtable import grid_table, row_mask

if TYPE_CHECKING:  # (a Schema is passed in: its module is not needed at run time)
    import duckdb

    from privpub.domain.schema import Schema

#: Conditions whose attributes span at most this many domain tuples are
#: evaluated once over that projection and looked up by code.
PROJECTION_LIMIT = 1 << 20

_local = threading.local()


def _connection() -> duckdb.DuckDBPyConnection:
    """One duckdb connection per thread (connecting costs ~15 ms), locked down:
    no file or network access and no configuration changes, so a query can
    read only the frames privpub registers in it. duckdb is imported here, on
    first use: most counts never need it, and importing it costs `import privpub`."""
    import duckdb

    con = getattr(_local, "con", None)
    if con is None:
        con = _local.con = duckdb.connect(config={"enable_external_access": False,
                                                  "lock_configuration": True})
    return con


#: Functions an IN-subquery may call (string, numeric, conditional, aggregate), by
#: their SQL names (CASE, CAST and DISTINCT are not calls and are allowed).
SUBQUERY_FUNCTIONS = frozenset({
    "abs", "avg", "ceil", "ceiling", "coalesce", "concat", "count", "floor", "greatest", "if",
    "least", "len", "length", "lower", "max", "min", "nullif", "round", "substring", "substr",
    "sum", "trim", "upper", "left", "right", "starts_with", "replace",
})


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


# ---- parsing ----------------------------------------------------------------------------------


class CellCache:
    """:func:`functools.lru_cache` for a pure function that returns numpy
    arrays, bounded in the arrays' cells (summed) rather than in calls: the
    least recently used go first. ``key`` maps the arguments to everything the
    result depends on (an argument derived from others, such as the parse of
    a text, stays out of it). Results are made read-only: callers share them.
    Safe across threads (two threads may build the same result once each)."""

    def __init__(self, function: Callable[..., np.ndarray], key: Callable[..., Hashable],
                 cells: int):
        self.function, self.key, self.limit = function, key, cells
        self._held: OrderedDict[Hashable, np.ndarray] = OrderedDict()
        self._cells = 0
        self._lock = threading.Lock()

    def __call__(self, *args: Any) -> np.ndarray:
        key = self.key(*args)
        with self._lock:
            found = self._held.get(key)
            if found is not None:
                self._held.move_to_end(key)
                return found
        made = self.function(*args)
        made.setflags(write=False)
        with self._lock:
            if key not in self._held:
                while self._held and self._cells + made.size > self.limit:
                    self._cells -= self._held.popitem(last=False)[1].size
                self._held[key] = made
                self._cells += made.size
        return made

    @property
    def cells(self) -> int:
        """The cells the cached arrays hold together (at most ``limit``, or one array)."""
        return self._cells

    def cache_clear(self) -> None:
        """Forget every cached result."""
        with self._lock:
            self._held.clear()
            self._cells = 0


def _projection_table(schema: Schema, attributes: tuple[str, ...], sql: str,
                      node: exp.Expression | None) -> np.ndarray:
    table = grid_table(schema, attributes, node)
    return _evaluate(schema.projection(attributes, query=True), sql) if table is None else table


#: Truth tables over projections of D, by what they depend on: the schema, the
#: attributes and the SQL (``node`` is the SQL's parse). Shared by every
#: Condition: estimating the same query on many views, or counting the atoms
#: of many conditions over one schema, builds each table once.
truth_tables = CellCache(_projection_table, cells=1 << 26,
                         key=lambda schema, attributes, sql, node: (schema, attributes, sql))


def projection_table(schema: Schema, attributes: tuple[str, ...], sql: str,
                     node: exp.Expression | None, limit: int = PROJECTION_LIMIT
                     ) -> np.ndarray | None:
    """``sql`` (parsed: ``node``) over the projection of D on ``attributes``,
    first attribute slowest; None past ``limit`` tuples. numpy broadcasting
    where it mirrors DuckDB exactly (:mod:`privpub.counting.truthtable`),
    DuckDB on the projection's frame otherwise. Kept in :data:`truth_tables`."""
    if math.prod(schema[a].size for a in attributes) > limit:
        return None
    return truth_tables(schema, attributes, sql, node)


def _evaluate(frame: pd.DataFrame, sql: str) -> np.ndarray:
    """The boolean value of ``sql`` on every row of ``frame`` (duckdb)."""
    if len(frame) == 0:
        return np.zeros(0, dtype=bool)
    import duckdb

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


def _literal_lists(root: exp.Expression) -> exp.Expression:
    """Every IN list of constants as one :class:`ValueList` node (an empty one: FALSE)."""
    for node in list(root.find_all(exp.In)):
        members = node.args.get("expressions")
        listed = in_values(node)
        if node.args.get("query") is not None or members is None or (listed and len(listed)):
            continue
        if members and listed is None and not all(queryatoms.is_constant(m) for m in members):
            continue
        if not members or listed is not None:  # IN (): nothing matches
            if node is root:
                return exp.Boolean(this=False)
            node.replace(exp.Boolean(this=False))
            continue
        values = [queryatoms.constant(m) for m in members]
        texts = [querytext.to_sql(m) for m in members]
        node.set("expressions", [values_node(ValueList(values, ", ".join(texts)))])
    return root


def _check_mapped(schema: Schema, name: Any, value: Any) -> None:
    """A mapping names one value per attribute; what it cannot say is refused
    with the form that says it."""
    if isinstance(value, (list, tuple, set, frozenset, np.ndarray, pd.Series)):
        raise QueryError(f"{{{name!r}: {short(repr(value))}}}: a mapping gives each attribute "
                         f"one value; for several write col({name!r}).isin([...]) or "
                         f"\"{name}\" IN (...)")
    if value is None or (isinstance(value, float) and math.isnan(value)):
        label = schema[name].missing if name in schema.names else None
        hint = (f"its missing cells are {label!r} (or write \"{name}\" IS NULL)"
                if label is not None else "it declares no missing label, so it holds none")
        raise QueryError(f"{{{name!r}: {value!r}}}: a missing cell is no value of {name!r}; "
                         f"{hint}")


QueryLike = Union[str, Expr, Mapping[str, Any], None, "Condition"]


@dataclass(frozen=True, eq=False)
class Atom:
    """One atomic predicate: the attributes it reads (schema order), its tree
    and its SQL text as evaluated. :attr:`written` is the atom as a query
    states it, where ``node`` differs (an ordered attribute's values become
    domain indices, which do not parse as a query again): :attr:`text` parses
    back to this atom, and whatever reads the atom's values (SPLU-Gen's
    equalities, a message) reads them from :attr:`written`. The tree is not
    changed once the Condition is built, so its SQL is generated when first
    asked for (most estimates ask only for the whole condition's)."""

    attributes: tuple[str, ...]
    node: exp.Expression = field(repr=False)
    #: The atom as written, with its values as labels (None: the same as ``node``).
    written_node: exp.Expression | None = field(default=None, repr=False)

    @cached_property
    def sql(self) -> str:
        """The atom as the SQL that is evaluated (an ordered attribute's values as indices)."""
        return querytext.to_sql(self.node)

    @property
    def written(self) -> exp.Expression:
        """The atom with the values the query states (an ordered attribute's
        labels, not the domain indices ``node`` compares)."""
        return self.node if self.written_node is None else self.written_node

    @property
    def text(self) -> str:
        """The atom as query text (what a Condition over the schema reads)."""
        return self.sql if self.written_node is None else querytext.to_sql(self.written_node)


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
            root = querytext.parse_where(where, self.tables)
        elif isinstance(where, Mapping):
            root = None
            for name, value in where.items():
                _check_mapped(schema, name, value)
                queryatoms.check_in_domain(schema, name, value)
                term = (col(name) == value).node
                root = term if root is None else exp.And(this=root, expression=term)
        else:
            raise QueryError(f"a query is SQL text, an Expr, a mapping or None, "
                             f"got {type(where).__name__}")
        self.atoms: list[Atom] = []
        self._ranks: dict[str, dict] = {}
        self._sql: str | None = None
        if root is None:
            self.expression: exp.Expression | None = None
            self.formula: tuple = ("and", [])
        else:
            if not isinstance(where, str):  # (text is checked as it is parsed)
                querytext.check_tree(root)  # before anything walks it
            self._subqueries = 0
            if not isinstance(where, str):  # (text's literal lists are read as lists)
                root = _literal_lists(root)
            self.expression = self._resolve_subqueries(root)
            if self._subqueries:  # their values count towards MAX_VALUES
                querytext.check_tree(self.expression)
            self.formula = self._split(self.expression)
        used = {a for atom in self.atoms for a in atom.attributes}
        self._attributes = tuple(n for n in self.schema.names if n in used)

    @property
    def sql(self) -> str:
        """The condition as duckdb SQL (subqueries replaced by their values)."""
        if self._sql is None:
            self._sql = "TRUE" if self.expression is None else \
                querytext.to_sql(self.expression)
        return self._sql

    @property
    def text(self) -> str:
        """The condition as the query states it, values as labels (what every
        estimate, message and card shows; :attr:`sql` is what is evaluated)."""
        if isinstance(self.source, str):
            return self.source
        if isinstance(self.source, exp.Expression):  # an Expr's tree, before any rewriting
            return querytext.to_sql(self.source)
        if self.expression is None:
            return "TRUE"
        return self.written(self.formula) if self.formula[0] == "atom" else \
            self._connected(self.formula)

    def written(self, formula: tuple) -> str:
        """A formula over this condition's atoms as query text, each atom as
        written (it parses back to the same condition), in parentheses unless
        it is one atom, so that it can stand beside AND, OR and NOT."""
        if formula[0] == "atom":  # (an atom binds tighter than NOT, AND and OR)
            return self.atoms[formula[1]].text
        return f"({self._connected(formula)})"

    def _connected(self, formula: tuple) -> str:
        if formula[0] == "not":
            return f"NOT {self.written(formula[1])}"
        return f" {formula[0].upper()} ".join(self.written(f) for f in formula[1])

    @property
    def attributes(self) -> tuple[str, ...]:
        return self._attributes

    def __repr__(self) -> str:
        return f"Condition({short(self.sql, 200)})"

    # ---- construction ---------------------------------------------------------------------
    def _resolve_subqueries(self, root: exp.Expression) -> exp.Expression:
        for node in [n for n in querytext.nodes(root) if isinstance(n, exp.In)]:
            query = node.args.get("query")
            if query is None:
                continue
            values = self._run_subquery(querytext.subquery_of(query))
            self._subqueries += 1
            node.set("query", None)
            if len(values):
                # A subquery's values may lie outside the domain (they match nothing).
                listed = python_values(values)
                listed.from_subquery = True
                node.set("expressions", [values_node(listed)])
            elif node is root:
                root = exp.Boolean(this=False)
            else:
                node.replace(exp.Boolean(this=False))
        return root

    def _run_subquery(self, found: querytext.Subquery) -> list[Any]:
        text = short(found.sql, 200)
        if found.columns != 1:
            raise QueryError(f"an IN subquery selects one column: {text!r}")
        if found.refused is not None:
            raise QueryError(f"subquery {text!r} reads {short(found.refused)!r}; a subquery "
                             "reads only registered tables, by name")
        for name, call in found.functions:
            if name not in SUBQUERY_FUNCTIONS:
                raise QueryError(f"subquery {text!r} calls {short(call)!r}, which is not "
                                 f"allowed (allowed: {', '.join(sorted(SUBQUERY_FUNCTIONS))})")
        names = set(found.tables)
        missing = sorted(n for n in names if n not in self.tables)
        if missing:
            raise QueryError(f"subquery {text!r} reads table(s) {missing}, which are not "
                             f"registered (registered: {sorted(self.tables) or 'none'}); "
                             "Python: tables={name: table}; command line: --table NAME=PATH")
        import duckdb

        con = _connection()
        try:
            for name in names:
                con.register(name, self.tables[name])
            # Distinct, non-null and sorted by DuckDB (deterministic); Python values
            # (exact integers of any width, unlike fetchnumpy's doubles for HUGEINT).
            rows = con.execute(f"SELECT DISTINCT * FROM ({found.sql}) "
                               "AS privpub_subquery(v) WHERE v IS NOT NULL ORDER BY v "
                               f"LIMIT {querytext.MAX_VALUES + 1}").fetchall()
        except duckdb.Error as err:
            raise QueryError(f"subquery {text!r} failed: {_first_line(err)}") from None
        finally:
            for name in names:
                con.unregister(name)
        if len(rows) > querytext.MAX_VALUES:
            raise QueryError(f"subquery {text!r} returns more than MAX_VALUES = "
                             f"{querytext.MAX_VALUES:,} values")
        return [row[0] for row in rows]

    def _split(self, node: exp.Expression):
        """The formula of ``node``; AND/OR chains are walked without recursion,
        so recursion follows only the nesting depth (at most MAX_DEPTH)."""
        while isinstance(node, exp.Paren):
            node = node.this
        if isinstance(node, exp.Not):
            return ("not", self._split(node.this))
        if isinstance(node, (exp.And, exp.Or)):
            kind = "and" if isinstance(node, exp.And) else "or"
            parts = []
            for child in querytext.chain(node):
                sub = self._split(child)
                parts.extend(sub[1] if sub[0] == kind else [sub])
            return (kind, parts)
        if not isinstance(node, queryatoms.ATOMS):
            raise QueryError(f"unsupported SQL in a condition: {queryatoms.text(node)!r} "
                             f"({type(node).__name__}); use comparisons, IN, BETWEEN, LIKE, "
                             "arithmetic, AND, OR, NOT")
        parts = querytext.nodes(node)  # (one walk serves every check)
        if not isinstance(node, exp.Is):  # (IS NULL is checked as it is placed)
            queryatoms.check_atom(self.schema, node, parts)
            queryatoms.check_order(self.schema, node, parts)
        placed = queryatoms.place_missing(self.schema, node, parts)
        if placed is node:
            return self._atom(node, parts)
        self._replace(node, placed)
        if isinstance(placed, exp.Not):  # NOT LIKE as NOT of the guarded LIKE
            return ("not", ("and", [self._atom(p) for p in querytext.chain(placed.this.this)]))
        if not isinstance(placed, exp.Paren):  # IS NULL as an equality or FALSE
            return self._atom(placed)
        return ("and", [self._atom(part) for part in querytext.chain(placed.this)])

    def _replace(self, node: exp.Expression, by: exp.Expression) -> None:
        if node is self.expression:
            self.expression = by
        else:
            node.replace(by)

    def _atom(self, node: exp.Expression, parts: list[exp.Expression] | None = None) -> tuple:
        """The formula of one checked atom (its nodes: ``parts``, when known),
        appended to :attr:`atoms`."""
        atom = queryatoms.check_values(self.schema, node)
        if atom is not node or parts is None:
            parts = querytext.nodes(atom)
        # (check_values may give an IN atom a new list node: its columns and literals stay.)
        columns = set(queryatoms.column_names(atom, parts))
        written = None
        if any(self.schema[c].ordered for c in columns):
            written = atom.copy()  # ranking rewrites the atom in place: keep it as written
            atom = queryatoms.rank_ordered(self.schema, atom, self._ranks)
            parts = querytext.nodes(atom)
        atom = queryatoms.fold_wide(self.schema, atom, parts)
        if atom is not node:
            self._replace(node, atom)
        attrs = tuple(n for n in self.schema.names if n in columns)
        self.atoms.append(Atom(attrs, atom, written))
        return ("atom", len(self.atoms) - 1)

    # ---- evaluation -------------------------------------------------------------------------
    def mask(self, frame: pd.DataFrame) -> np.ndarray:
        """Which rows of a frame of values satisfy the condition (ordered
        attributes compare by their declared order, as everywhere)."""
        ranks = {}
        for name in self.attributes:
            attr = self.schema[name]
            if attr.ordered:
                ranks[name] = attr.values_index.get_indexer(frame[name])
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
        by the codes' digits (the same duckdb semantics), or, when the
        projection is too large, numpy or duckdb on the decoded rows."""
        if digits is None:
            digits = self.schema.digits(codes)
        index = {name: digits[j] for j, name in enumerate(self.schema.names)}
        return self.mask_digits(index, len(codes))

    def mask_digits(self, digits: Mapping[str, np.ndarray], rows: int) -> np.ndarray:
        """Which rows satisfy the condition, from the domain indices of (at
        least) the attributes it reads: a lookup in :meth:`truth_table`, or
        when the projection is too large numpy on those columns
        (:func:`~privpub.counting.truthtable.row_mask`, where it mirrors
        duckdb), else duckdb."""
        table = self.truth_table()
        if table is None:  # numpy on the rows where it mirrors DuckDB, else DuckDB
            mask = row_mask(self.schema, self.attributes, self.expression, digits, rows)
            if mask is not None:
                return mask
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
