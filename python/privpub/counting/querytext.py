"""Query text: privpub's one parser (issue 33) and its stated limits.

Text is a WHERE condition (optionally after ``WHERE``) or ``SELECT count(*)
FROM <name> [WHERE …]`` (or ``sum(col)``, ``avg(col)`` in place of
``count(*)``: :func:`parse_aggregate`). Both are read in Rust by the ``sqlparser`` crate in
its DuckDB dialect (``rust/src/querytext/``: tokens, tree, limits, the
SELECT form's clauses refused by name), which hands back a small tree of
tuples; :func:`parse_where` builds from it the sqlglot nodes the counting
engine works on (sqlglot stays the tree and the SQL generator for DuckDB; it
reads no query text). Parsing a typical condition costs ~6 µs in Rust and
~14 µs with its nodes built, where the scan and sqlglot's parse cost ~180 µs.

Limits (each a named :class:`~privpub.QueryError` past it, enforced in Rust
with the values these module constants hold at the call):

- ``MAX_DEPTH`` levels of nesting. The depth of a parsed condition counts
  every node on the longest path from the root to a leaf (an attribute or a
  value): ``a > 0`` is 2 levels, and each parenthesis, NOT, unary minus,
  arithmetic operator, function call or subquery around it adds one. A chain
  of one connective (``a AND b AND c``, ``x OR y OR …``) is one level however
  long. The parser's own recursion is bounded at ``2 * MAX_DEPTH + 10``
  levels, so deeper text is refused before a tree is built; nothing on the
  way uses Python's stack beyond the tree's depth.
- ``MAX_TERMS`` operands joined by AND / OR (subqueries included; BETWEEN's
  AND joins none). Parsing costs little per term; the per-atom checks cost
  ~0.1 ms each, so 20,000 terms bound a query at a few seconds. A long OR of
  equalities is an IN list, which costs microseconds per value.
- ``MAX_VALUES`` values in IN lists and subquery results together: a
  million integers cost ~0.2 s over a truth table and ~1.2 s (380 MB) over
  an integer range too large for one, where each value becomes an interval;
  written as text they cost ~0.6 s more to read (~0.35 µs per value in
  sqlparser's tokenizer, ~320 MB of tokens at peak), where
  ``col(...).isin(array)`` reads none.

A literal IN list is one node (:mod:`privpub.counting.querytree`, which
holds the tree's nodes, literals and walks).

Outside quotes, a digit that is not 0-9, a space that is not SQL's (space,
\\t \\n \\v \\f \\r) and a control character are refused by name and position
(sqlparser would read a Unicode space as a space; DuckDB refuses all three).
A word DuckDB reserves where a column stands (``any = 1``) asks for double
quotes; pandas' ``&``, ``|`` and ``~`` are named with their SQL words.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlglot import exp

import privpub._core as _core
from privpub.core.errors import QueryError
from privpub.counting.querytree import (
    DIALECT,
    ValueList,
    int_sql,
    render,
    short,
    value_list,
    values_node,
)

#: Deepest nesting of a condition (module docstring for what counts).
MAX_DEPTH = 24
#: Most operands joined by AND / OR in one query.
MAX_TERMS = 20_000
#: Most values in the IN lists and subquery results of one query.
MAX_VALUES = 1_000_000


def python_values(values: Any) -> ValueList:
    """A ValueList from Python values or an array (``Expr.isin``, subquery results)."""
    limit = MAX_VALUES
    if hasattr(values, "to_numpy") and not isinstance(values, np.ndarray):
        values = values.to_numpy()  # a pandas Series or Index
    array = values if isinstance(values, np.ndarray) else None
    items = None if array is not None else list(values)
    size = array.size if array is not None else len(items)
    if size > limit:
        raise QueryError(f"the list holds {size:,} values; the limit is "
                         f"MAX_VALUES = {limit:,} (privpub.counting.querytext)")
    if array is not None and array.dtype.kind in "iu" and (
            array.dtype.kind == "i" or not array.size or array.max() < 2**63):
        ints = array.ravel().astype(np.int64)
        return ValueList(None, int_sql(ints), ints=ints)
    if items is None:
        items = array.ravel().tolist()  # Python scalars
    items = [v.item() if isinstance(v, np.generic) else v for v in items]
    return ValueList(items, ", ".join(map(render, items)))


def check_limits(depth: int, terms: int, values: int, shown: str, deeper: bool = False) -> None:
    """Refuse a query past one of the stated limits, by name (``deeper``:
    ``depth`` is where reading stopped, not the text's depth)."""
    if depth > MAX_DEPTH:
        nests = f"nests more than {depth:,}" if deeper else f"nests {depth:,}"
        raise QueryError(f"{short(shown)} {nests} levels deep; the limit is "
                         f"MAX_DEPTH = {MAX_DEPTH} (parentheses, NOT, unary minus, operators "
                         "and subqueries each add a level; a chain of ANDs or of ORs counts "
                         "once, so write one without nesting parentheses: a OR b OR c)")
    if terms > MAX_TERMS:
        raise QueryError(f"{short(shown)} joins {terms:,} terms with AND/OR; the limit is "
                         f"MAX_TERMS = {MAX_TERMS:,}: write a long OR of equalities as IN (…)")
    if values > MAX_VALUES:
        raise QueryError(f"{short(shown)} lists {values:,} values; the limit is "
                         f"MAX_VALUES = {MAX_VALUES:,}")


# ---- parsing: Rust reads the text, the tree becomes sqlglot nodes here ------------------------

#: SQL whitespace, the only characters DuckDB skips between tokens.
SPACES = " \t\n\r\f\v"


#: What a query asks of the rows its condition selects: ("count", None),
#: ("sum", column) or ("avg", column).
Aggregate = tuple[str, "str | None"]
#: A bare condition counts.
COUNT: Aggregate = ("count", None)


def parse_where(text: str, tables: Collection[str] = ()) -> exp.Expression | None:
    """The condition of WHERE text, or of ``SELECT count(*) FROM <name> WHERE …``
    (anything else that SELECT holds is refused by name; ``tables`` are the
    registered auxiliary tables, which FROM may not name); None: no condition.
    A sum or an average is refused here: what reads one calls
    :func:`parse_aggregate`."""
    root, aggregate = parse_aggregate(text, tables)
    if aggregate != COUNT:
        kind, column = aggregate
        raise QueryError(f"{short(text.strip(SPACES))}: {kind}({column}) is estimated from a "
                         "published view (PublishedView.estimate, privpub estimate); here a "
                         "query counts rows: select count(*) or the condition alone")
    return root


def parse_aggregate(text: str, tables: Collection[str] = ()
                    ) -> tuple[exp.Expression | None, Aggregate]:
    """The condition of query text (as :func:`parse_where`) and what the query
    asks of the rows it selects (:data:`Aggregate`): ``SELECT sum(col) FROM
    <name> WHERE …`` gives ("sum", "col")."""
    tree, names, aggregate = read(text, tables)
    if tree is None:
        return None, aggregate
    root = build(tree)
    if names:
        unqualify(root, set(names))
    return root, aggregate


def read(text: str, tables: Collection[str] = ()
         ) -> tuple[tuple | None, frozenset[str], Aggregate]:
    """The Rust reader's tree of query text's condition (None: no condition),
    the names that qualify the counted table's columns (its name and alias)
    and the :data:`Aggregate`, as :func:`parse_aggregate` reads them before
    building sqlglot nodes."""
    if not text.strip(SPACES):
        raise QueryError("the query is empty; to count every record pass None or 'TRUE'")
    try:
        tree, table, alias, aggregate = _core.query.parse_query(text, MAX_DEPTH, MAX_TERMS,
                                                                MAX_VALUES)
    except _core.query.QueryTextError as err:
        raise _refusal(err.args, text) from None
    if table is not None and table in tables:
        raise _refusal(("select", f"FROM {table} names an auxiliary table (registered for "
                                  "subqueries); the count is over the published table"), text)
    names = frozenset() if table is None else frozenset({table} | (
        {alias} if alias is not None else set()))
    return tree, names, tuple(aggregate)


@dataclass(frozen=True)
class Subquery:
    """An IN subquery as its SQL (run by DuckDB as it is), the tables it reads
    and the functions it calls ((name in lower case, the call as written)),
    its number of columns and the first source that is not a table name."""

    sql: str
    tables: tuple[str, ...]
    functions: tuple[tuple[str, str], ...]
    columns: int
    refused: str | None

    def __deepcopy__(self, memo: dict) -> Subquery:
        return self  # immutable


def subquery(text: str) -> Subquery:
    """The text of an IN subquery (``Expr.isin("select …")``), read as a query is."""
    try:
        found = _core.query.parse_subquery(text, MAX_DEPTH, MAX_TERMS, MAX_VALUES)
    except _core.query.QueryTextError as err:
        raise _refusal(err.args, text) from None
    return _subquery(found)


def _subquery(found: tuple) -> Subquery:
    sql, tables, functions, columns, refused = found
    return Subquery(sql, tuple(tables), tuple(map(tuple, functions)), columns, refused)


def subquery_node(found: Subquery) -> exp.Subquery:
    """The tree node of an IN subquery (its SQL, the parsed facts in ``meta``)."""
    node = exp.Subquery(this=exp.Var(this=found.sql))
    node.meta["subquery"] = found
    return node


def subquery_of(node: exp.Expression) -> Subquery:
    """The subquery an IN node's ``query`` stands for (a tree built elsewhere
    is read from its SQL, with the same checks)."""
    found = node.meta.get("subquery") if node.meta else None
    if found is None:
        inner = node.this if isinstance(node, exp.Subquery) else node
        found = subquery(inner.sql(dialect=DIALECT))
    return found


def _refusal(args: tuple, shown: str) -> QueryError:
    """The one-line error for a refusal the Rust reader names by kind."""
    kind, *rest = args
    if kind == "character":
        return _not_sql(shown, *rest)
    if kind == "syntax":
        return QueryError(f"cannot parse {short(shown)!r}: {rest[0]}")
    if kind == "unclosed":
        return QueryError(f"cannot parse {short(shown)!r}: a quoted string, quoted name or "
                          "comment is not closed")
    if kind == "reserved":
        word, at, length = rest
        quoted = shown[:at] + f'"{word}"' + shown[at + length:]
        return QueryError(f"cannot parse {short(shown)!r}: {word!r} is a reserved word in SQL; "
                          f"a column called {word} must be double-quoted: {short(quoted)!r}")
    if kind == "bitwise":
        token, word, positions = rest
        return QueryError(f"{token!r} in {short(shown)!r} is SQL's bitwise {word} of numbers, "
                          f"not a logical one: write {word}: "
                          f"{short(_replaced(shown, positions, word))!r}")
    if kind == "depth":
        depth, past = rest
        try:
            check_limits(max(depth, MAX_DEPTH + 1), 0, 0, shown, deeper=past)
        except QueryError as err:
            return err
    if kind == "terms" or kind == "values":
        try:
            check_limits(0, rest[0] if kind == "terms" else 0,
                         rest[0] if kind == "values" else 0, shown)
        except QueryError as err:
            return err
    if kind == "clause":
        return QueryError(f"{short(shown)!r}: {rest[0]} is not part of a condition; write the "
                          "condition alone, or SELECT count(*) FROM <table> WHERE <condition>")
    if kind == "select":
        return QueryError(f"{short(shown.strip(SPACES))}: {rest[0]}; a query is select "
                          "count(*), sum(column) or avg(column) from I where <condition> (I: "
                          "the table's name), or the condition alone (a count)")
    if kind == "file":
        return QueryError(f"FROM {short(rest[0])} reads a file; a query reads only the counted "
                          "table and registered tables, by name")
    if kind == "integer":
        digits = rest[0].lstrip("-")
        return QueryError(f"integer literal {short(rest[0])} has {len(digits):,} digits, "
                          "more than Python reads; privpub refuses it")
    return QueryError(f"cannot parse {short(shown)!r}: {args}")  # (not reached)


def _replaced(shown: str, positions: Sequence[int], word: str) -> str:
    """``shown`` with the one-character operator at each position replaced by ``word``."""
    pieces, last = [], 0
    for at in positions:
        left = "" if at == 0 or shown[at - 1] in " (" else " "
        right = "" if shown[at + 1:at + 2] in ("", " ") else " "
        pieces += [shown[last:at], left, word, right]
        last = at + 1
    return "".join(pieces) + shown[last:]


def _not_sql(shown: str, at: int, problem: str | None = None) -> QueryError:
    """The error for character ``at`` of ``shown`` (outside quotes): ``problem``,
    by default why SQL does not read the character."""
    char = shown[at]
    name = unicodedata.name(char, "")
    what = repr(char) if char.isascii() and char.isprintable() else \
        f"{char!r} (U+{ord(char):04X}{' ' + name if name else ''})"
    return QueryError(f"cannot parse {short(shown)!r}: "
                      f"character {at + 1} is {what}, {problem or _unread(char)}")


def _unread(char: str) -> str:
    """Why SQL does not read ``char``: a control character, a space that is
    not SQL whitespace, or a digit that is not 0-9."""
    if unicodedata.category(char) == "Cc":  # (Python takes \x1c–\x1f and \x85 as space)
        return "a control character, which SQL does not read: remove it"
    if char.isspace():
        return "not SQL whitespace: use an ordinary space"
    if unicodedata.category(char).startswith("N"):
        return "not an ASCII digit: write numbers with 0-9"
    return "not a character SQL reads outside quotes"


#: The tree's operators as sqlglot nodes.
_BINARY = {"=": exp.EQ, "<>": exp.NEQ, "<": exp.LT, "<=": exp.LTE, ">": exp.GT, ">=": exp.GTE,
           "+": exp.Add, "-": exp.Sub, "*": exp.Mul, "/": exp.Div, "%": exp.Mod}
#: Type names sqlparser writes that sqlglot spells otherwise.
_TYPES = {"TIMESTAMP WITH TIME ZONE": "TIMESTAMPTZ", "TIME WITH TIME ZONE": "TIMETZ",
          "DOUBLE PRECISION": "DOUBLE", "INTEGER": "INT"}


def build(node: tuple) -> exp.Expression:
    """sqlglot nodes from the Rust reader's tree (recursion follows the tree's
    depth, which the reader bounds; chains are built in a loop)."""
    return _BUILDERS[node[0]](node)


def _negated(node: exp.Expression, negated: bool) -> exp.Expression:
    return exp.Not(this=node) if negated else node


def _chain(cls: type) -> Any:
    def chained(node: tuple) -> exp.Expression:
        items = node[1]
        out = build(items[0])
        for item in items[1:]:
            out = cls(this=out, expression=build(item))
        return out
    return chained


def _column(node: tuple) -> exp.Column:
    _, name, quoted, table, db = node
    column = exp.Column(this=exp.Identifier(this=name, quoted=quoted))
    if table is not None:
        column.set("table", exp.Identifier(this=table[0], quoted=table[1]))
    if db is not None:
        column.set("db", exp.Identifier(this=db[0], quoted=db[1]))
    return column


def _list(node: tuple) -> exp.Expression:
    _, x, negated, values, sql = node
    if isinstance(values, np.ndarray):
        listed = ValueList(None, sql, ints=values)
    else:
        listed = ValueList(values, sql)
    if not len(listed):  # IN (): nothing matches
        return _negated(exp.Boolean(this=False), negated)
    return _negated(exp.In(this=build(x), expressions=[values_node(listed)]), negated)


def _datatype(text: str) -> exp.DataType:
    key = text.upper().split("(")[0].strip()
    key = _TYPES.get(key, key.replace(" ", ""))
    kind = exp.DataType.Type.__members__.get(key)
    if kind is None:
        return exp.DataType(this=exp.DataType.Type.USERDEFINED, kind=text)
    return exp.DataType(this=kind)


def _other(node: tuple) -> exp.Expression:
    _, sql, what = node
    raise QueryError(f"unsupported SQL in a condition: {short(sql, 200)!r} ({what}); use "
                     "comparisons, IN, BETWEEN, LIKE, arithmetic, AND, OR, NOT")


_BUILDERS = {
    "and": _chain(exp.And),
    "or": _chain(exp.Or),
    "not": lambda n: exp.Not(this=build(n[1])),
    "paren": lambda n: exp.Paren(this=build(n[1])),
    "neg": lambda n: exp.Neg(this=build(n[1])),
    "bin": lambda n: _BINARY[n[1]](this=build(n[2]), expression=build(n[3])),
    "col": _column,
    "num": lambda n: exp.Literal(this=n[1], is_string=False),
    "str": lambda n: exp.Literal(this=n[1], is_string=True),
    "bool": lambda n: exp.Boolean(this=n[1]),
    "null": lambda n: exp.Null(),
    "list": _list,
    "in": lambda n: _negated(exp.In(this=build(n[1]), expressions=[build(i) for i in n[3]]),
                             n[2]),
    "sub": lambda n: _negated(exp.In(this=build(n[1]), query=subquery_node(_subquery(n[3]))),
                              n[2]),
    "between": lambda n: _negated(exp.Between(this=build(n[1]), low=build(n[3]),
                                              high=build(n[4])), n[2]),
    "like": lambda n: _negated((exp.ILike if n[4] else exp.Like)(
        this=build(n[1]), expression=build(n[3])), n[2]),
    "is": lambda n: _negated(exp.Is(this=build(n[1]), expression=exp.Null() if n[3] == "null"
                                    else exp.Boolean(this=n[3] == "true")), n[2]),
    "cast": lambda n: exp.Cast(this=build(n[1]), to=_datatype(n[2])),
    "typed": lambda n: exp.Cast(this=exp.Literal.string(n[2]), to=_datatype(n[1])),
    "interval": lambda n: exp.Interval(this=exp.Literal.string(n[1]),
                                       unit=exp.Var(this=n[2]) if n[2] else None),
    "func": lambda n: exp.Anonymous(this=n[1].upper(), expressions=[build(a) for a in n[2]]),
    "tuple": lambda n: exp.Tuple(expressions=[build(i) for i in n[1]]),
    "other": _other,
}


def shape(root: exp.Expression) -> tuple[int, int, int]:
    """(depth, AND/OR operands, listed values) of a tree, without recursion."""
    depth = connectives = values = 0
    stack = [(root, 1)]
    while stack:
        node, level = stack.pop()
        depth = max(depth, level)
        if isinstance(node, exp.Connector):
            connectives += 1
        listed = value_list(node)
        if listed is not None:
            values += len(listed)
            continue
        for child in node.iter_expressions():
            if isinstance(child, exp.Identifier):
                continue
            same = isinstance(node, exp.Connector) and type(child) is type(node)
            stack.append((child, level if same else level + 1))
    return depth, connectives + 1, values


def check_tree(root: exp.Expression, shown: str | None = None) -> None:
    """Refuse a tree past the stated limits (the Expr API, a parsed query)."""
    depth, terms, values = shape(root)
    if shown is None and max(depth - MAX_DEPTH, terms - MAX_TERMS, values - MAX_VALUES) > 0:
        shown = "the condition"
    check_limits(depth, terms, values, shown or "")


def unqualify(root: exp.Expression, names: set[str]) -> None:
    """Drop qualifiers naming the counted table (``I.age`` is ``age``)."""
    for column in list(root.find_all(exp.Column)):
        if column.table and column.table in names and not column.args.get("db"):
            column.set("table", None)

