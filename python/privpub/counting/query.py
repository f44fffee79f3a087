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
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Union

import numpy as np
import pandas as pd
from sqlglot import exp

import privpub._core as _core
from privpub.core.errors import DomainError, QueryError
from privpub.core.inputs import tabular
from privpub.counting import queryatoms, queryresolve, querytext, querytree
from privpub.counting.evaluation import (
    condition_table,
    connection,
    evaluate,
    first_line,
    projection_table,
)
from privpub.counting.expr import Expr, col
from privpub.counting.queryresolve import ConditionAtom
from privpub.counting.querytext import python_values
from privpub.counting.querytree import (
    Formula,
    ValueList,
    in_values,
    short,
    values_node,
)
from privpub.counting.truthtable import row_mask

if TYPE_CHECKING:  # (a Schema is passed in: its module is not needed at run time)
    from privpub.domain.schema import Schema

#: Functions an IN-subquery may call (string, numeric, conditional, aggregate), by
#: their SQL names (CASE, CAST and DISTINCT are not calls and are allowed).
SUBQUERY_FUNCTIONS = frozenset({
    "abs", "avg", "ceil", "ceiling", "coalesce", "concat", "count", "floor", "greatest", "if",
    "least", "len", "length", "lower", "max", "min", "nullif", "round", "substring", "substr",
    "sum", "trim", "upper", "left", "right", "starts_with", "replace",
})


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
        texts = [querytree.to_sql(m) for m in members]
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


class Condition:
    """A parsed WHERE condition over a schema.

    ``formula`` is a tree of tuples: ``("atom", i)``, ``("not", f)``,
    ``("and", [f, …])``, ``("or", [f, …])`` over ``atoms[i]``.

    ``aggregates``: whether query text may ask for ``sum(col)`` or
    ``avg(col)`` of the rows the condition selects (what a published view
    estimates); :attr:`aggregate` says which, ``("count", None)`` otherwise.
    Where it may not (a count), such text is refused by name.
    """

    def __init__(self, schema: Schema, where: QueryLike = None,
                 tables: Mapping[str, pd.DataFrame] | None = None, aggregates: bool = False):
        if isinstance(where, Condition):  # parsed again: for this schema, these tables
            tables = {**where.tables, **(tables or {})}
            where = where.source
        #: What the query asks of the rows it selects (:data:`querytext.Aggregate`).
        self.aggregate: querytext.Aggregate = querytext.COUNT
        self.schema = schema
        self.tables = {name: tabular(t) for name, t in (tables or {}).items()}
        #: The query as given (re-parsed when the condition is used with another schema).
        self.source = where.node.copy() if isinstance(where, Expr) else where
        self.atoms: list[ConditionAtom] = []
        self._sql: str | None = None
        #: The parser's tree and its resolved atoms, until the sqlglot tree is asked for.
        self._pending: tuple | None = None
        if isinstance(where, str) and self._read_text(where, aggregates):
            return
        if where is None:
            root: exp.Expression | None = None
        elif isinstance(where, Expr):
            root = where.node.copy()
        elif isinstance(where, exp.Expression):  # a parsed query kept as a Condition's source
            root = where.copy()
        elif isinstance(where, str) and aggregates:
            root, self.aggregate = querytext.parse_aggregate(where, self.tables)
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
        self._ranks: dict[str, dict] = {}
        if root is None:
            self._expression: exp.Expression | None = None
            self.formula: Formula = ("and", [])
        else:
            if not isinstance(where, str):  # (text is checked as it is parsed)
                querytext.check_tree(root)  # before anything walks it
            self._subqueries = 0
            if not isinstance(where, str):  # (text's literal lists are read as lists)
                root = _literal_lists(root)
            self._expression = self._resolve_subqueries(root)
            if self._subqueries:  # their values count towards MAX_VALUES
                querytext.check_tree(self._expression)
            self.formula = self._split(self._expression)
        self._attributes = self._read_attributes()

    def _read_text(self, text: str, aggregates: bool) -> bool:
        """Query text's formula and atoms with each atom resolved once per
        schema (:mod:`privpub.counting.queryresolve`), the sqlglot tree left
        until asked for; False when the whole-text path must read it (a
        subquery, a sum refused here, or any refusal, which that path names)."""
        try:
            tree, names, aggregate = querytext.read(text, self.tables)
            if aggregate != querytext.COUNT and not aggregates:
                return False
            if tree is None:
                formula, atoms, leaves = ("and", []), [], []
            else:
                formula, atoms, leaves = queryresolve.split_text(self.schema, tree, names)
        except (QueryError, DomainError, queryresolve.NotTabled):
            return False
        self.aggregate, self.formula, self.atoms = aggregate, formula, atoms
        self._expression = None
        self._pending = None if tree is None else (tree, leaves)
        self._attributes = self._read_attributes()
        return True

    def _read_attributes(self) -> tuple[str, ...]:
        used = {a for atom in self.atoms for a in atom.attributes}
        return tuple(n for n in self.schema.names if n in used)

    @property
    def expression(self) -> exp.Expression | None:
        """The condition's sqlglot tree (None: no condition), subqueries
        replaced by their values and each atom as it is evaluated."""
        if self._pending is not None:
            tree, leaves = self._pending
            self._expression = queryresolve.build_tree(tree, leaves)
            self._pending = None
        return self._expression

    @property
    def sql(self) -> str:
        """The condition as duckdb SQL (subqueries replaced by their values)."""
        if self._sql is None:
            self._sql = "TRUE" if self.expression is None else \
                querytree.to_sql(self.expression)
        return self._sql

    @property
    def text(self) -> str:
        """The condition as the query states it, values as labels (what every
        estimate, message and card shows; :attr:`sql` is what is evaluated)."""
        if isinstance(self.source, str):
            return self.source
        if isinstance(self.source, exp.Expression):  # an Expr's tree, before any rewriting
            return querytree.to_sql(self.source)
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
        for node in [n for n in querytree.nodes(root) if isinstance(n, exp.In)]:
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

        con = connection()
        try:
            for name in names:
                con.register(name, self.tables[name])
            # Distinct, non-null and sorted by DuckDB (deterministic); Python values
            # (exact integers of any width, unlike fetchnumpy's doubles for HUGEINT).
            rows = con.execute(f"SELECT DISTINCT * FROM ({found.sql}) "
                               "AS privpub_subquery(v) WHERE v IS NOT NULL ORDER BY v "
                               f"LIMIT {querytext.MAX_VALUES + 1}").fetchall()
        except duckdb.Error as err:
            raise QueryError(f"subquery {text!r} failed: {first_line(err)}") from None
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
            for child in querytree.chain(node):
                sub = self._split(child)
                parts.extend(sub[1] if sub[0] == kind else [sub])
            return (kind, parts)
        formula, atoms = queryresolve.resolve_atom(self.schema, node, self._replace, self._ranks)
        offset = len(self.atoms)
        self.atoms.extend(atoms)
        return queryresolve.shifted(formula, offset)

    def _replace(self, node: exp.Expression, by: exp.Expression) -> None:
        if node is self._expression:
            self._expression = by
        else:
            node.replace(by)

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
        return evaluate(frame.assign(**ranks) if ranks else frame, self.sql)

    def evaluate(self, frame: pd.DataFrame, sql: str | None = None) -> np.ndarray:
        """The condition (or ``sql``, one of its atoms) on a frame of query columns
        (``Schema.projection(..., query=True)``: ordered attributes as indices)."""
        return evaluate(frame, sql or self.sql)

    def count(self, frame: pd.DataFrame) -> int:
        """Q(frame): the number of rows satisfying the condition."""
        return int(self.mask(frame).sum())

    def truth_table(self) -> np.ndarray | None:
        """The condition over the projection of D on its attributes (first
        attribute slowest), evaluated once; None when that projection has more
        than ``PROJECTION_LIMIT`` tuples."""
        if not hasattr(self, "_truth_table"):
            self._truth_table = condition_table(self.schema, self.attributes, self.formula,
                                                self.atoms, lambda: self.sql)
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
        flat = _core.codes.encode_u64([np.ascontiguousarray(digits[a]) for a in self.attributes],
                                      [0] * k, [None] * k,
                                      [self.schema[a].size for a in self.attributes])
        return table[flat]

    def count_digits(self, digits: Mapping[str, np.ndarray], rows: int) -> int:
        """How many rows satisfy the condition (as :meth:`mask_digits`, counted
        in one Rust pass over the truth table when there is one)."""
        table = self.truth_table()
        if table is None or not self.attributes:
            return int(self.mask_digits(digits, rows).sum())
        return _core.counting.count_in_table(
            [np.ascontiguousarray(digits[a]) for a in self.attributes],
            [self.schema[a].size for a in self.attributes], table)

    def count_codes(self, codes: np.ndarray) -> int:
        """Q(V) for the tuples with these codes."""
        return int(self.mask_codes(codes).sum())
