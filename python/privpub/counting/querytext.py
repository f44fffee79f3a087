"""Query text before and around sqlglot: stated limits, literal lists, the SELECT form.

Limits (each a named :class:`~privpub.QueryError` past it):

- ``MAX_DEPTH`` levels of nesting. The depth of a parsed condition counts
  every node on the longest path from the root to a leaf (an attribute or a
  value): ``a > 0`` is 2 levels, and each parenthesis, NOT, unary minus,
  arithmetic operator, function call or subquery around it adds one. A chain
  of one connective (``a AND b AND c``, ``x OR y OR …``) is one level however
  long. sqlglot parses by recursive descent, about 23 Python frames per
  parenthesis (10 per NOT): before text is handed over, a linear scan bounds
  its parentheses and prefix operators by the same limit (that count never
  exceeds the depth of the tree it parses to), so 24 levels need at most
  ~600 of Python's default 1,000 frames.
- ``MAX_TERMS`` operands joined by AND / OR (subqueries included). The cost
  is linear but not small: sqlglot's tokens and nodes and the per-atom checks
  take ~0.2 ms and ~5 KB per term (100,000 terms: 22 s and 460 MB here), so
  20,000 terms, twice the 10,000 that used to exhaust the stack, bound a
  query at a few seconds. A long OR of equalities is an IN list, which costs
  microseconds per value.
- ``MAX_VALUES`` values in IN lists and subquery results together: a
  million integers cost ~0.2 s over a truth table and ~1.2 s (380 MB) over
  an integer range too large for one, where each value becomes an interval.

Literal IN lists (``a IN (1, 2, 'x', …)``) never become one sqlglot node per
value: the scan cuts each one out of the text (integer lists in ASCII text by a
Rust reader of the same language as the regular expression, on text without
\\x1c–\\x1f, others by C-speed regular expressions),
sqlglot parses the rest, and the list comes back as one node holding its
values (:class:`ValueList`), which every consumer treats as a whole (numpy
``isin``, a pandas index lookup). A list whose lexing might differ from
sqlglot's is left in the text; the scan checks that each list it cut out is
found again as an IN list and otherwise parses the text as it was.

Digits are ASCII 0-9 and whitespace is SQL's (space, \\t \\n \\v \\f \\r), written
out in every pattern: Python's ``\\d`` and ``\\s`` also match Arabic-Indic digits,
Unicode spaces and the separators \\x1c–\\x1f, which read ``a IN (- 1, ٣)`` as
-1, 3 where DuckDB refuses the text. Outside quotes, a digit that is not ASCII,
a space that is not SQL's and a control character are refused by name and
position (sqlglot would read the first as a number and skip the others).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection, Sequence
from decimal import Decimal
from typing import Any

import numpy as np
from sqlglot import exp

from privpub import _core
from privpub.core.errors import QueryError

#: Deepest nesting of a condition (module docstring for what counts).
MAX_DEPTH = 24
#: Most operands joined by AND / OR in one query.
MAX_TERMS = 20_000
#: Most values in the IN lists and subquery results of one query.
MAX_VALUES = 1_000_000

DIALECT = "duckdb"

# ---- literal value lists ---------------------------------------------------------------------


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


def to_sql(node: exp.Expression) -> str:
    """A condition tree as DuckDB SQL, generated in place: sqlglot's default
    deep copy first costs more than the generation, and its DuckDB generator
    changes none of the nodes a condition holds (comparisons, arithmetic,
    IN lists, BETWEEN, LIKE, AND / OR / NOT)."""
    return node.sql(dialect=DIALECT, copy=False)


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


def int_sql(ints: np.ndarray) -> str:
    """int64 values as an SQL list body, "1, 2, 3" (Rust: a 10^5-value list is
    rendered in well under a millisecond; Python's repr of a list took 8 ms)."""
    return _core.int_list_text(np.ascontiguousarray(ints, dtype=np.int64))


def number(text: str) -> int | float:
    """A numeric literal's value: an exact int for integer syntax, else a float.
    Raises QueryError past Python's int-string limit."""
    text = _unspaced(text)
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
    return Decimal(_unspaced(text))


def _unspaced(text: str) -> str:
    """A numeric literal of a scanned list without the SQL whitespace it may
    hold after its sign (``- 1``, ``-\\t1``: Python's int and float read neither)."""
    return text.translate(_NO_SPACE)


def short(value: Any, limit: int = 200) -> str:
    """A value or query text for a message: past ``limit`` characters, its
    start and end with the length between."""
    text = value if isinstance(value, str) else repr(value)
    if len(text) > limit:
        keep = max(limit // 2, 12)
        return f"{text[:keep]} … {text[-keep // 4:]} ({len(text):,} characters)"
    return text


# ---- the scan --------------------------------------------------------------------------------

#: SQL whitespace, the only characters DuckDB skips between tokens (besides
#: Unicode spaces, which privpub refuses by name): Python's \s also takes
#: \x1c–\x1f and every Unicode space.
SPACES = " \t\n\r\f\v"
_NO_SPACE = str.maketrans("", "", SPACES)
_S = "[ \\t\\n\\r\\f\\v]"
_D = "[0-9]"  # \d also matches ٣ (Arabic-Indic three) and every other Unicode digit
_TOKEN = re.compile(rf"""
    (?P<space>{_S}+)
  | (?P<comment>--[^\n\r]*|/\*.*?(?:\*/|\Z))
  | (?P<string>'[^']*(?:''[^']*)*(?:'|\Z))
  | (?P<quoted>"[^"]*(?:""[^"]*)*(?:"|\Z))
  | (?P<number>(?:{_D}+\.?{_D}*|\.{_D}+)(?:[eE][+-]?{_D}+)?)
  | (?P<word>[^\W0-9]\w*)
  | (?P<punct>.)
""", re.X | re.S)
_NUMBER = rf"-?{_S}*(?:{_D}+\.?{_D}*|\.{_D}+)(?:[eE][+-]?{_D}+)?"
_STRING = r"'[^']*(?:''[^']*)*'"
_LITERAL = rf"(?>{_NUMBER}|{_STRING})"
#: A parenthesised list of literals, cut out whole (atomic groups: linear).
_LIST = re.compile(rf"{_S}*\({_S}*(?>{_LITERAL}(?:{_S}*,{_S}*{_LITERAL})*){_S}*\)(?![\w.'\"])")
_ITEM = re.compile(rf"{_NUMBER}|{_STRING}")
#: The common case, a list of integers below 10^18 in magnitude.
_INT_LIST = re.compile(
    rf"{_S}*\({_S}*(-?{_D}{{1,18}}(?:{_S}*,{_S}*-?{_D}{{1,18}})*+){_S}*\)(?![\w.'\"])")
#: The separators the Rust reader takes as space (intlist.rs, built to the old \s).
_SEPARATORS = re.compile("[\x1c-\x1f]")
_PLACEHOLDER = "_privpub_in_list_"
#: Words after which a following token starts an operand (so NOT / - there are prefixes).
_OPERATOR_WORDS = frozenset({
    "AND", "OR", "NOT", "IN", "BETWEEN", "LIKE", "ILIKE", "IS", "WHERE", "SELECT", "FROM",
    "CASE", "WHEN", "THEN", "ELSE", "ON", "BY", "HAVING", "AS", "DISTINCT", "ESCAPE",
    "EXISTS", "ANY", "ALL", "SOME", "QUALIFY", "GLOB", "SIMILAR", "TO", "USING"})


class Scan:
    """What one linear pass over the text found (see :func:`scan`)."""

    def __init__(self, text: str, reduced: str, lists: list[ValueList], depth: int,
                 terms: int, values: int):
        self.text, self.reduced, self.lists = text, reduced, lists
        self.depth, self.terms, self.values = depth, terms, values


def scan(text: str, shown: str | None = None, offset: int = 0) -> Scan:
    """One pass over ``text``: its nesting of parentheses and prefix operators,
    its AND/OR operands, and its literal IN lists cut out (replaced by
    placeholders) unless the text already holds a placeholder's name. A
    character SQL does not read is refused, quoting ``shown`` (the query as
    written), where character i of ``text`` is character i - ``offset``."""
    extract = _PLACEHOLDER not in text.lower()
    # On ASCII text a character's index is its byte offset (Rust's scan); the
    # Rust reader also takes \x1c–\x1f as space, so text holding one is left
    # to the expressions, which do not.
    fast = text.isascii() and _SEPARATORS.search(text) is None
    pieces: list[str] = []
    lists: list[ValueList] = []
    stack: list[int] = []  # levels each open parenthesis adds (itself + prefixes before it)
    total = run = depth = values = 0
    connectives = betweens = 0
    operand_before = False  # whether the previous token ended an operand
    after_from = False
    last = 0  # text[last:pos] not yet copied into pieces
    pos = 0
    token = ""
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        before = token  # the previous token that is not space or a comment
        kind, token, pos = m.lastgroup, m.group(), m.end()
        if kind in ("space", "comment"):
            token = before
            continue
        if after_from and kind == "string":
            raise QueryError(f"FROM {short(token)} reads a file; a query reads only the "
                             "counted table and registered tables, by name")
        after_from = kind == "word" and token.upper() == "FROM"
        if kind in ("string", "quoted", "number"):
            depth, run, operand_before = max(depth, total + run + 1), 0, True
        elif kind == "word":
            start = pos - len(token)
            if token[0].isdigit():  # not 0-9 (a number): ٣, ², a fullwidth digit
                raise _not_sql(text, start, shown, offset)
            if token[0] in "eE" and text[start - 1] in "0123456789.":  # 1e, 1.5e (in no list)
                raise _not_sql(text, start, shown, offset, f"after {before!r}: an exponent "
                               "needs its digits (1e3, 2.5E-1)")  # (sqlglot reads 1e)
            word = token.upper()
            if word == "IN":
                found = _int_list(text, pos) if fast else None
                if found is None:
                    match = _INT_LIST.match(text, pos) or _LIST.match(text, pos)
                    found = match and (_literal_list(match), match.end())
                if found:
                    listed, end = found
                    values += len(listed)
                    depth = max(depth, total + run + 2)
                    run, operand_before = 0, True
                    if extract:
                        lists.append(listed)
                        pieces.append(text[last:pos])
                        pieces.append(f" ({_PLACEHOLDER}{len(lists) - 1})")
                        last = pos = end
                    else:
                        pos = end
                    continue
            if word in ("AND", "OR"):
                if word == "AND" and betweens:
                    betweens -= 1
                else:
                    connectives += 1
            elif word == "BETWEEN":
                betweens += 1
            if word == "NOT" and not operand_before:
                run += 1
            elif word in _OPERATOR_WORDS:
                operand_before = False
            else:  # a name, TRUE, NULL, END: an operand
                depth, run, operand_before = max(depth, total + run + 1), 0, True
        elif token == "(":
            stack.append(run + 1)
            total += run + 1
            depth, run, operand_before = max(depth, total), 0, False
        elif token in ",)" and before == "+":  # sqlglot drops it: (1, +) and (+, 1) read (1)
            raise _not_sql(text, pos - 1, shown, offset, "after '+': the '+' has no operand")
        elif token == "," and before in ("(", ","):  # sqlglot reads (,1) and (1,,2) as (1), (1, 2)
            raise _not_sql(text, pos - 1, shown, offset,
                           f"after {before!r}: an item is missing; remove the comma")
        elif token == ")":
            total -= stack.pop() if stack else 0
            run, operand_before = 0, True
        elif token in "-+~" and not operand_before:
            run += 1
        elif token < " " or "\x7f" <= token <= "\x9f" or token.isspace():  # (C0, DEL, C1)
            raise _not_sql(text, pos - 1, shown, offset)
        else:
            operand_before = False
    pieces.append(text[last:])
    return Scan(text, "".join(pieces), lists, depth, connectives + 1, values)


def _not_sql(text: str, at: int, shown: str | None, offset: int,
             problem: str | None = None) -> QueryError:
    """The error for character ``at`` of ``text`` (outside quotes): ``problem``,
    by default why SQL does not read the character."""
    char = text[at]
    name = unicodedata.name(char, "")
    what = repr(char) if char.isascii() and char.isprintable() else \
        f"{char!r} (U+{ord(char):04X}{' ' + name if name else ''})"
    return QueryError(f"cannot parse {short(text if shown is None else shown)!r}: "
                      f"character {at - offset + 1} is {what}, {problem or _unread(char)}")


def _unread(char: str) -> str:
    """Why SQL does not read ``char``: a control character, a space that is
    not SQL whitespace, or a digit that is not 0-9."""
    if unicodedata.category(char) == "Cc":  # (Python takes \x1c–\x1f and \x85 as space)
        return "a control character, which SQL does not read: remove it"
    if char.isspace():
        return "not SQL whitespace: use an ordinary space"
    return "not an ASCII digit: write numbers with 0-9"


def _int_list(text: str, pos: int) -> tuple[ValueList, int] | None:
    """The integer list after ``IN`` at ``pos`` of ASCII ``text`` and where it
    ends, read in Rust: the language of ``_INT_LIST``, at a tenth of its cost."""
    found = _core.scan_int_list(text, pos)
    if found is None:
        return None
    ints, inner, inner_end, end = found
    return ValueList(None, text[inner:inner_end], ints=ints), end


def _literal_list(found: re.Match) -> ValueList:
    """The values of a literal list cut out of the text; integers below 10^18
    in magnitude are converted by numpy, in C."""
    if found.re is _INT_LIST:  # checked by the pattern: numpy's text reader is exact on it
        inner = found.group(1)
        ints = np.fromstring(inner, dtype=np.int64, sep=",")
        if len(ints) != inner.count(",") + 1:  # not reached: the pattern fixed the syntax
            raise QueryError(f"cannot read the integer list ({short(inner)})")
        return ValueList(None, inner, ints=ints)
    items = _ITEM.findall(found.group())
    parsed = [item[1:-1].replace("''", "'") if item.startswith("'") else number(item)
              for item in items]
    shown = [item if item.startswith("'") else item.translate(_NO_SPACE) for item in items]
    return ValueList(parsed, ", ".join(shown))


def check_limits(depth: int, terms: int, values: int, shown: str) -> None:
    """Refuse a query past one of the stated limits, by name."""
    if depth > MAX_DEPTH:
        raise QueryError(f"{short(shown)} nests {depth:,} levels deep; the limit is "
                         f"MAX_DEPTH = {MAX_DEPTH} (parentheses, NOT, unary minus, operators "
                         "and subqueries each add a level; a chain of ANDs or of ORs counts "
                         "once, so write one without nesting parentheses: a OR b OR c)")
    if terms > MAX_TERMS:
        raise QueryError(f"{short(shown)} joins {terms:,} terms with AND/OR; the limit is "
                         f"MAX_TERMS = {MAX_TERMS:,}: write a long OR of equalities as IN (…)")
    if values > MAX_VALUES:
        raise QueryError(f"{short(shown)} lists {values:,} values; the limit is "
                         f"MAX_VALUES = {MAX_VALUES:,}")


def parse(text: str, shown: str, parse_one, offset: int = 0) -> exp.Expression:
    """``text`` parsed by ``parse_one`` (sqlglot with privpub's error messages)
    after the scan: limits checked, literal lists cut out and put back as
    :class:`ValueList` nodes. (The caller checks the condition's tree:
    :func:`check_tree`.) Character i of ``text`` is character i - ``offset``
    of ``shown``."""
    found = scan(text, shown, offset)
    check_limits(found.depth, found.terms, found.values, shown)
    tree = None
    if found.lists:
        tree = _guarded(lambda: parse_one(found.reduced), shown)
        if not _restore(tree, found.lists):
            tree = None  # a list the scan read differently from sqlglot: parse it all
    if tree is None:
        tree = _guarded(lambda: parse_one(text), shown)
    return tree


def _guarded(call, shown: str):
    try:
        return call()
    except RecursionError:
        raise QueryError(_stack_message(shown)) from None


def _stack_message(shown: str) -> str:
    return (f"{short(shown)} needs more Python stack than is left (the call stack was "
            f"already deep); queries within MAX_DEPTH = {MAX_DEPTH} levels are parsed within "
            "~600 frames of sys.getrecursionlimit()")


def _restore(tree: exp.Expression, lists: list[ValueList]) -> bool:
    """Put each cut-out list back into its IN node; False if any is not found
    exactly once, as the only member of an IN list."""
    seen = set()
    for column in list(tree.find_all(exp.Column)):
        name = column.name
        if not name.startswith(_PLACEHOLDER):
            continue
        index = name[len(_PLACEHOLDER):]
        parent = column.parent
        if (not index.isdigit() or int(index) >= len(lists) or int(index) in seen
                or column.table or not isinstance(parent, exp.In)
                or parent.args.get("expressions") != [column]):
            return False
        seen.add(int(index))
        parent.set("expressions", [values_node(lists[int(index)])])
    return len(seen) == len(lists)


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


# ---- the SELECT count(*) form ---------------------------------------------------------------

#: sqlglot's names of SELECT clauses, as SQL.
_CLAUSES = {"with_": "WITH", "distinct": "DISTINCT", "joins": "JOIN", "group": "GROUP BY",
            "having": "HAVING", "qualify": "QUALIFY", "windows": "WINDOW", "order": "ORDER BY",
            "limit": "LIMIT", "offset": "OFFSET", "laterals": "LATERAL", "sample": "SAMPLE",
            "into": "INTO", "locks": "FOR UPDATE", "sort": "SORT BY", "cluster": "CLUSTER BY",
            "distribute": "DISTRIBUTE BY", "connect": "CONNECT BY", "prewhere": "PREWHERE",
            "pivots": "PIVOT"}


def clause(key: str) -> str:
    """A SELECT argument of sqlglot's as the SQL clause it stands for."""
    return _CLAUSES.get(key, key.rstrip("_").upper())


def count_select(select: exp.Select, tables: Collection[str], shown: str
                 ) -> tuple[exp.Expression | None, set[str]]:
    """The WHERE condition of ``SELECT count(*) FROM <name> [WHERE …]`` and the
    names a column may be qualified with (the table's name and alias). Every
    other clause is refused by name: it would change the count, and privpub
    answers only the count of the rows satisfying the condition."""
    def refuse(what: str) -> QueryError:
        return QueryError(f"{short(shown)}: {what}; a counting query is select count(*) from "
                          "I where <condition> (I: the table's name), or the condition alone")

    for key, value in select.args.items():
        if value and key not in ("expressions", "from_", "where", "kind"):
            raise refuse(f"{clause(key)} is not supported")
    if select.args.get("kind"):
        raise refuse(f"SELECT {select.args['kind']} is not supported")
    items = select.expressions
    if len(items) != 1:
        raise refuse(f"it selects {len(items)} columns")
    count = items[0].this if isinstance(items[0], exp.Alias) else items[0]
    if not isinstance(count, exp.Count):
        raise refuse(f"it selects {count.sql(dialect=DIALECT)!r}, not count(*)")
    if isinstance(count.this, exp.Distinct):
        raise refuse(f"{count.sql(dialect=DIALECT)} counts DISTINCT values")
    if not isinstance(count.this, exp.Star) or any(
            v for k, v in count.args.items() if k not in ("this", "big_int")):
        raise refuse(f"{count.sql(dialect=DIALECT)} is not count(*): privpub counts rows, "
                     "not values")
    source = select.args.get("from_")
    if source is None:
        raise refuse("it has no FROM")
    table = source.this
    if not isinstance(table, exp.Table):
        kind = "a subquery" if isinstance(table, exp.Subquery) else table.sql(dialect=DIALECT)
        raise refuse(f"FROM reads {short(kind)}, not a table name")
    if not isinstance(table.this, exp.Identifier):
        raise refuse(f"FROM {table.this.sql(dialect=DIALECT)} is a table function")
    extra = [k for k, v in table.args.items() if v and k not in ("this", "alias")]
    if extra:
        what = "is qualified" if extra[0] in ("db", "catalog") else \
            f"has {clause(extra[0])}"
        raise refuse(f"FROM {table.sql(dialect=DIALECT)} {what}")
    alias = table.args.get("alias")
    if alias is not None and alias.columns:
        raise refuse(f"FROM {table.sql(dialect=DIALECT)} renames columns")
    if table.name in tables:
        raise refuse(f"FROM {table.name} names an auxiliary table (registered for "
                     "subqueries); the count is over the published table")
    names = {table.name} | ({alias.name} if alias is not None else set())
    where = select.args.get("where")
    return (None if where is None else where.this), names


def unqualify(root: exp.Expression, names: set[str]) -> None:
    """Drop qualifiers naming the counted table (``I.age`` is ``age``)."""
    for column in list(root.find_all(exp.Column)):
        if column.table and column.table in names and not column.args.get("db"):
            column.set("table", None)

