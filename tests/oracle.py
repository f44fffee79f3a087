"""The zero-noise oracle (issue 33): what every estimate must be when nothing is noisy.

At zero noise privpub's mechanisms publish the data exactly: αβ with α = 1,
β = 0 publishes the distinct tuples (``duplicates="set"``) or every record
(``"records"``), and its estimate (n_V − β·n_D)/α is n_V; SPLU-Gen publishes
its non-sensitive attributes unchanged. So every estimate must equal DuckDB's
exact count over the same rows, written here independently of privpub:

- the reference table holds each cell as itself, a missing cell as NULL and an
  ordered categorical as its rank in the declared order (so ``<`` compares
  ranks), in columns c0, c1, … (privpub's names are not read back);
- each atom is ``coalesce(atom, false)`` (missing sits outside every order:
  ``<``, ``<=``, ``>``, ``>=`` and BETWEEN never match it), except that
  ``c = L`` is ``c IS NULL`` and ``c <> L`` is ``c IS NOT NULL`` for the
  declared missing label L, an IN list holding L matches the missing rows, and
  ``c <> v`` for a real value v is the two-valued negation of ``c = v``
  (missing is not equal to v, so ``c <> v`` matches it);
- NOT is two-valued negation of its operand (atoms are never NULL here);
- ``<``, ``<=``, ``>``, ``>=`` and BETWEEN on an unordered categorical of text
  are refused (:class:`privpub.QueryError`); numbers and booleans compare by
  value (FALSE < TRUE, as in DuckDB), and ``=``, ``<>`` or IN
  with a value outside the domain is refused (a typo would count 0).

Tables and queries are drawn through a :class:`Source`, either hypothesis's
``draw`` (so failures shrink to a minimal table and query) or a seeded
``random.Random`` (:func:`find_disagreements`, used to show the oracle's power
against a deliberately broken translation).
"""

from __future__ import annotations

import math
import os
import random
import tempfile
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa

import privpub
from privpub import Categorical, IntRange, PublishedView, Schema
from privpub.core.errors import DomainError, PrivpubError, QueryError
from privpub.core.inputs import NA_VALUES
from privpub.splu import SPLUGen
from privpub.tables.distributed import DaskRelease, open_dask

#: Column kinds: unordered categoricals of text, booleans and ints, ordered
#: categoricals of ints and text, integer ranges.
KINDS = ("text", "bool", "int", "ordered_int", "ordered_text", "intrange")
#: Input kinds; a Dask frame (3 partitions) is published by Dask, one task per code range.
INPUTS = ("pandas", "arrow", "polars", "parquet", "csv", "dask")
FAMILIES = ("alphabeta-set", "alphabeta-records", "frapp", "splu")
#: Column names that need quoting in SQL: a space, Unicode, a reserved word, a quote.
NAMES = ("a", "b c", "Größe", "order", "x'y", "数")
#: Text values that are awkward in SQL, CSV or both.
TRICKY = ("it's", 'say "hi"', " lead", "trail ", "a, b", "1", "-3", "Ünï cödé", "中文",
          "😀", "''", "O'Brien", "x\u00a0y", "0.5")
#: Missing labels of text columns ("NA" and "n/a" are also CSV missing markers).
TEXT_LABELS = ("NA", "?", "(none)", "n/a")
INT_LABELS = (-1, 0, 99, -999)
#: FRAPP refuses γ_frapp = 1 (no replacement: its constructor wants γ_frapp in
#: (0, 1)), so the oracle uses the nearest value it takes: a record is replaced
#: with probability 2^-40, and the check first asserts that none was.
FRAPP_KEEP = 1.0 - 2.0**-40
ORDER_OPS = ("<", "<=", ">", ">=")


# ---- drawing ---------------------------------------------------------------------------------


class Source:
    """Where the random choices come from."""

    def integer(self, lo: int, hi: int) -> int:
        raise NotImplementedError

    def text(self) -> str:
        raise NotImplementedError

    def pick(self, options: Sequence[Any]) -> Any:
        return options[self.integer(0, len(options) - 1)]

    def shuffled(self, items: Sequence[Any]) -> list:
        out = list(items)
        for i in range(len(out) - 1, 0, -1):  # Fisher–Yates from the source's integers
            j = self.integer(0, i)
            out[i], out[j] = out[j], out[i]
        return out


class HypothesisSource(Source):
    """Choices drawn by hypothesis (``st.data()``'s draw): failures shrink."""

    def __init__(self, draw: Callable[[Any], Any]):
        self.draw = draw

    def integer(self, lo: int, hi: int) -> int:
        from hypothesis import strategies as st

        return self.draw(st.integers(lo, hi))

    def text(self) -> str:
        from hypothesis import strategies as st

        # No lone surrogates (not UTF-8) and no control characters (not CSV cells).
        return self.draw(st.text(st.characters(blacklist_categories=("Cs", "Cc")),
                                 max_size=6))


#: Characters a seeded source builds text from: ASCII, quotes, spaces, Unicode.
_CHARS = "abcXYZ019 '\",;-_.äöüßéñ中文字٣\u00a0😀"


class RandomSource(Source):
    """Choices from a seeded ``random.Random``: the same cases on every run."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)

    def integer(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def text(self) -> str:
        return "".join(self.rng.choice(_CHARS) for _ in range(self.rng.randint(0, 6)))


# ---- tables ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Column:
    name: str
    kind: str
    domain: tuple           # every domain value in declared order (IntRange: lo..hi)
    label: Any              # the declared missing label (one of domain) or None
    cells: tuple            # one per row: a domain value other than label, or None (missing)
    as_pandas_categorical: bool = False

    @property
    def ordered(self) -> bool:
        return self.kind.startswith("ordered")

    @property
    def refuses_order(self) -> bool:
        """An unordered categorical of text has no order to compare by (booleans
        and numbers have their values' own)."""
        return self.kind == "text"

    @property
    def real(self) -> tuple:
        """The domain values a present cell may hold (all but the label)."""
        return tuple(v for v in self.domain if v != self.label or self.label is None)

    def attribute(self) -> privpub.Attribute:
        if self.kind == "intrange":
            return IntRange(self.name, self.domain[0], self.domain[-1], missing=self.label)
        return Categorical(self.name, list(self.domain), ordered=self.ordered,
                           missing=self.label)

    def in_domain(self, value: Any) -> bool:
        return any(type(value) is type(v) and value == v for v in self.domain)


@dataclass(frozen=True)
class Table:
    columns: tuple[Column, ...]

    @property
    def n(self) -> int:
        return len(self.columns[0].cells)

    def schema(self) -> Schema:
        return Schema([c.attribute() for c in self.columns])

    def describe(self) -> str:
        """The table as code that rebuilds it (for a report's repro)."""
        lines = []
        for c in self.columns:
            lines.append(f"  {c.attribute()!r} missing={c.label!r} kind={c.kind}"
                         f"{' (pandas ordered categorical)' if c.as_pandas_categorical else ''}"
                         f"\n    cells={list(c.cells)!r}")
        return "\n".join(lines)


def _distinct_texts(src: Source, size: int) -> list[str]:
    """``size`` distinct texts, none a CSV missing marker, some of them tricky."""
    stem = src.pick(("v", "ü", "'", " ", "\"q", "数", "a b"))
    values = [f"{stem}{i}" for i in range(size)]
    extra = [src.pick(TRICKY) if src.integer(0, 1) else src.text()
             for _ in range(min(size, src.integer(0, 4)))]
    taken = set(values)
    for j, text in enumerate(extra):
        if text not in taken and text not in NA_VALUES:  # a CSV reads a marker as missing
            taken.discard(values[j])
            values[j] = text
            taken.add(text)
    return values


def _not_sorted(src: Source, values: list) -> list:
    """The values in a declared order that differs from their sorted order."""
    order = src.shuffled(values)
    if len(order) >= 2 and order == sorted(order):
        order[0], order[-1] = order[-1], order[0]
    return order


def draw_column(src: Source, name: str, kind: str, big: bool, n_pool: int) -> tuple:
    """(column without cells, each pool tuple's cell for it)."""
    size = src.integer(129, 260) if big else src.integer(1, 6)
    if kind in ("text", "ordered_text"):
        values = _distinct_texts(src, size)
        domain = _not_sorted(src, values) if kind == "ordered_text" else src.shuffled(values)
    elif kind == "bool":
        domain = list(src.pick(((False, True), (True, False))))
    elif kind in ("int", "ordered_int"):
        start, step = src.integer(-50, 50), src.pick((1, 3, 7))
        values = [start + step * i for i in range(size)]
        domain = _not_sorted(src, values) if kind == "ordered_int" else src.shuffled(values)
    else:  # intrange
        lo = src.integer(-5, 5)
        domain = list(range(lo, lo + size))
    label = None
    if src.integer(0, 2) == 0:
        if kind == "intrange":
            # The label lies in [lo, hi] (IntRange requires it); no present cell holds it.
            label = src.pick((domain[0], domain[-1], domain[len(domain) // 2]))
        else:
            choices = TEXT_LABELS if "text" in kind else \
                (False, True) if kind == "bool" else INT_LABELS
            label = src.pick(choices)
            if kind == "bool":
                pass  # a boolean label is one of the two values: the other is the only real one
            elif label in domain:
                label = None
            else:
                domain.insert(src.integer(0, len(domain)), label)  # anywhere in the order
    column = Column(name, kind, tuple(domain), label, ())
    real = column.real
    cells = []
    for _ in range(n_pool):
        if label is not None and (not real or src.integer(0, 3) == 0):
            cells.append(None)
        else:
            # Mostly the edges and a few values, so that queries hit rows.
            cells.append(real[src.pick((0, -1, src.integer(0, len(real) - 1)))])
    return column, cells


def draw_table(src: Source, family: str | None = None) -> tuple[Table, str]:
    """A table of 1–3 columns and the family it is published with."""
    family = family or src.pick(FAMILIES)
    width = src.integer(1, 3)
    names = src.shuffled(NAMES)[:width]
    kinds = [src.pick(KINDS) for _ in range(width)]
    big = src.integer(0, 7) == 0
    big_at = src.integer(0, width - 1)
    n = src.integer(1, 24)
    n_pool = src.integer(1, n)
    drawn = [draw_column(src, name, kind, big and i == big_at and kind != "bool", n_pool)
             for i, (name, kind) in enumerate(zip(names, kinds, strict=True))]
    rows = [src.integer(0, n_pool - 1) for _ in range(n)]  # pool < rows: repeated tuples
    columns = [Column(c.name, c.kind, c.domain, c.label, tuple(cells[r] for r in rows),
                      c.ordered and src.integer(0, 1) == 1) for c, cells in drawn]
    if family == "splu":
        columns, ok = _splu_eligible(src, columns)
        if not ok:
            family = "alphabeta-set"
    if family == "frapp" and math.prod(len(c.domain) for c in columns) < 2:
        family = "alphabeta-records"  # FRAPP needs m ≥ 2 tuples to replace one by another
    return Table(tuple(columns)), family


def _splu_eligible(src: Source, columns: list[Column]) -> tuple[list[Column], bool]:
    """The first column (SPLU-Gen's sensitive attribute, γ = 2) cycled through
    k ≥ 2 cell values over an even number of rows: no value fills more than
    half the rows, and no row is left out of a decoy group."""
    first = columns[0]
    options = list(first.real) + ([None] if first.label is not None else [])
    if len(options) < 2 or len(first.domain) < 2:
        return columns, False
    n = len(first.cells) + len(first.cells) % 2
    k = src.integer(2, min(len(options), 4))
    chosen = src.shuffled(options)[:k]
    out = []
    for i, c in enumerate(columns):
        cells = list(c.cells) + list(c.cells[:1]) * (n - len(c.cells))
        if i == 0:
            cells = [chosen[r % k] for r in range(n)]
        out.append(Column(c.name, c.kind, c.domain, c.label, tuple(cells),
                          c.as_pandas_categorical))
    return out, True


# ---- queries ---------------------------------------------------------------------------------
# A query is a tuple: ("cmp", column, op, value), ("in", column, values, negated),
# ("between", column, low, high, negated), ("like", column, pattern, negated),
# ("null", column, negated), ("not", q), ("and", (q, …)), ("or", (q, …)).
# NOT IN / NOT BETWEEN / NOT LIKE are NOT of their atom (docs/design.md).


def _present(col: Column, src: Source) -> Any:
    present = [v for v in col.cells if v is not None]
    return src.pick(present) if present else col.domain[0]


def _equality_literal(src: Source, col: Column) -> Any:
    options = [col.domain[0], col.domain[-1], _present(col, src), src.pick(col.domain)]
    if col.label is not None:
        options += [col.label, col.label]
    if src.integer(0, 11) == 0:  # outside the domain: refused, never a count of 0
        if col.kind == "intrange":
            options = [col.domain[0] - 1, col.domain[-1] + 1]
        elif col.kind in ("int", "ordered_int"):
            options = [max(col.domain) + 1000]
        elif "text" in col.kind:
            options = ["not-a-value"]
    return src.pick(options)


def _order_literal(src: Source, col: Column) -> Any:
    if col.kind == "intrange":
        lo, hi = col.domain[0], col.domain[-1]
        return src.pick((lo - 1, lo, hi, hi + 1, src.integer(lo, hi), _present(col, src)))
    if col.kind == "int":
        real = [v for v in col.domain if v != col.label]
        return src.pick((min(real) - 1, max(real) + 1, src.pick(col.domain),
                         _present(col, src)))
    # Ordered categoricals: the label has no place in the order, so it is no bound.
    real = col.real or col.domain
    return src.pick((real[0], real[-1], src.pick(real), _present(col, src)))


def draw_atom(src: Source, table: Table, columns: Sequence[int] | None = None) -> tuple:
    i = src.pick(columns if columns is not None else range(len(table.columns)))
    col = table.columns[i]
    form = src.pick(("=", "<>", "<", "<=", ">", ">=", "in", "between", "=", "in", "null",
                     "like"))
    negated = src.integer(0, 3) == 0
    if form in ("=", "<>"):
        return ("cmp", i, form, _equality_literal(src, col))
    if form in ORDER_OPS:
        return ("cmp", i, form, _order_literal(src, col))
    if form == "in":
        return ("in", i, tuple(_equality_literal(src, col) for _ in range(src.integer(1, 4))),
                negated)
    if form == "between":
        return ("between", i, _order_literal(src, col), _order_literal(src, col), negated)
    if form == "like":  # a present value's first character, then anything (or the value)
        value = str(_present(col, src))
        return ("like", i, src.pick((value[:1] + "%", "%" + value[-1:], value, "_%")), negated)
    return ("null", i, src.integer(0, 1) == 1)


def draw_query(src: Source, table: Table, depth: int = 0,
               columns: Sequence[int] | None = None) -> tuple:
    shape = src.integer(0, 9) if depth < 3 else 0
    if shape <= 4:
        return draw_atom(src, table, columns)
    if shape == 5:
        return ("not", draw_query(src, table, depth + 1, columns))
    parts = tuple(draw_query(src, table, depth + 1, columns) for _ in range(src.integer(2, 3)))
    return ("and" if shape <= 7 else "or", parts)


# ---- rendering -------------------------------------------------------------------------------


def joined_texts(rng: np.random.Generator, atoms: Sequence[Callable[[], str]],
                 count: int) -> list[str]:
    """``count`` WHERE texts of 1-3 distinct atoms drawn from ``atoms`` (each a
    callable that draws one atom's text), joined by AND (70%) or OR, 15% of them
    negated as a whole."""
    texts = []
    for _ in range(count):
        chosen = rng.choice(len(atoms), rng.integers(1, 4), replace=False)
        joiner = " AND " if rng.random() < 0.7 else " OR "
        text = joiner.join(atoms[i]() for i in chosen)
        texts.append(f"NOT ({text})" if rng.random() < 0.15 else text)
    return texts


def sql_literal(value: Any) -> str:
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return str(value)


def quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def privpub_text(table: Table, q: tuple) -> str:
    """The query as a user writes it: names quoted, values as labels."""
    tag = q[0]
    if tag in ("and", "or"):
        return "(" + f" {tag.upper()} ".join(privpub_text(table, p) for p in q[1]) + ")"
    if tag == "not":
        return f"NOT ({privpub_text(table, q[1])})"
    name = quoted(table.columns[q[1]].name)
    if tag == "cmp":
        return f"{name} {q[2]} {sql_literal(q[3])}"
    if tag == "in":
        return f"{name} {'NOT ' if q[3] else ''}IN ({', '.join(sql_literal(v) for v in q[2])})"
    if tag == "between":
        return (f"{name} {'NOT ' if q[4] else ''}BETWEEN {sql_literal(q[2])} AND "
                f"{sql_literal(q[3])}")
    if tag == "like":
        return f"{name} {'NOT ' if q[3] else ''}LIKE {sql_literal(q[2])}"
    return f"{name} IS {'NOT ' if q[2] else ''}NULL"


def refusal(table: Table, q: tuple) -> tuple[type[PrivpubError], ...]:
    """The error classes privpub may raise for the query (any atom's, since which
    atom is checked first is not specified), or () when it must count."""
    tag = q[0]
    if tag in ("and", "or"):
        return tuple(dict.fromkeys(k for part in q[1] for k in refusal(table, part)))
    if tag == "not":
        return refusal(table, q[1])
    col = table.columns[q[1]]
    if tag == "null":
        return ()
    if tag == "like":  # text with no declared order only (ordered: list the values)
        return () if col.kind == "text" else (QueryError,)
    if tag == "between" or (tag == "cmp" and q[2] in ORDER_OPS):
        return (QueryError,) if col.refuses_order else ()
    values = q[2] if tag == "in" else (q[3],)
    return () if all(col.in_domain(v) for v in values) else (DomainError,)


def _ref_value(col: Column, value: Any) -> str:
    """A literal in the reference table's terms: an ordered value is its rank."""
    if col.ordered:
        return str(col.domain.index(value))
    return sql_literal(value)


def duckdb_text(table: Table, q: tuple) -> str:
    """The reference condition over columns c0, c1, … (NULL: missing)."""
    tag = q[0]
    if tag in ("and", "or"):
        return "(" + f" {tag.upper()} ".join(duckdb_text(table, p) for p in q[1]) + ")"
    if tag == "not":
        return f"(NOT {duckdb_text(table, q[1])})"
    c, col = f"c{q[1]}", table.columns[q[1]]
    label = col.label
    if tag == "null":
        return f"({c} IS {'NOT ' if q[2] else ''}NULL)"
    if tag == "cmp":
        op, value = q[2], q[3]
        if label is not None and op in ("=", "<>") and value == label and \
                type(value) is type(label):
            return f"({c} IS {'NOT ' if op == '<>' else ''}NULL)"
        if op == "<>":  # missing is not equal to a real value: two-valued negation of =
            return f"(NOT coalesce({c} = {_ref_value(col, value)}, false))"
        return f"coalesce({c} {op} {_ref_value(col, value)}, false)"
    if tag == "between":
        inside = (f"coalesce({c} BETWEEN {_ref_value(col, q[2])} AND "
                  f"{_ref_value(col, q[3])}, false)")
        return f"(NOT {inside})" if q[4] else inside
    if tag == "like":
        inside = f"coalesce({c} LIKE {sql_literal(q[2])}, false)"
        return f"(NOT {inside})" if q[3] else inside
    if q[3]:  # NOT IN: NOT of the IN
        return f"(NOT {duckdb_text(table, (*q[:3], False))})"
    values = q[2]
    parts = []
    if label is not None and any(type(v) is type(label) and v == label for v in values):
        parts.append(f"({c} IS NULL)")
    rest = [v for v in values if not (label is not None and type(v) is type(label)
                                      and v == label)]
    if rest:
        parts.append(f"coalesce({c} IN ({', '.join(_ref_value(col, v) for v in rest)}), false)")
    return "(" + " OR ".join(parts) + ")"


# ---- the reference ---------------------------------------------------------------------------


def reference_arrow(table: Table, cells: Sequence[Sequence[Any]] | None = None) -> pa.Table:
    """The rows as DuckDB reads them: NULL for missing, ranks for ordered columns."""
    out = {}
    for i, col in enumerate(table.columns):
        column_cells = col.cells if cells is None else cells[i]
        if col.ordered:
            out[f"c{i}"] = pa.array([None if v is None else col.domain.index(v)
                                     for v in column_cells], type=pa.int64())
        elif col.kind == "bool":
            out[f"c{i}"] = pa.array(list(column_cells), type=pa.bool_())
        elif "text" in col.kind:
            out[f"c{i}"] = pa.array(list(column_cells), type=pa.string())
        else:
            out[f"c{i}"] = pa.array(list(column_cells), type=pa.int64())
    return pa.table(out)


#: Column kinds that hold numbers: a sum or an average reads them (the others are refused).
NUMERIC = ("int", "intrange", "ordered_int")


class Reference:
    """DuckDB counts over a table's rows (all records, or the distinct tuples),
    and sums and averages of its numeric columns (their values, not ranks:
    columns v0, v1, … beside c0, c1, …)."""

    def __init__(self, table: Table, cells: Sequence[Sequence[Any]] | None = None):
        self.table = table
        self.con = duckdb.connect()
        ranks = reference_arrow(table, cells)
        for i, col in enumerate(table.columns):
            if col.kind in NUMERIC:
                values = col.cells if cells is None else cells[i]
                ranks = ranks.append_column(f"v{i}", pa.array(list(values), type=pa.int64()))
        self.con.register("records", ranks)

    def count(self, q: tuple, distinct: bool) -> int:
        return self.aggregate(q, distinct, "count(*)")

    def sum_and_avg(self, q: tuple, distinct: bool, column: int) -> tuple[float, float]:
        """sum(col) (0 over no rows, as privpub's sum of nothing) and avg(col)
        (NaN over no present value) over the rows that satisfy ``q``."""
        total, mean = self.aggregate(q, distinct, f"sum(v{column}), avg(v{column})", both=True)
        return (0.0 if total is None else float(total), math.nan if mean is None else mean)

    def aggregate(self, q: tuple, distinct: bool, what: str, both: bool = False) -> Any:
        rows = "(SELECT DISTINCT * FROM records)" if distinct else "records"
        found = self.con.execute(
            f"SELECT {what} FROM {rows} WHERE {duckdb_text(self.table, q)}").fetchone()
        return found if both else found[0]

    def close(self) -> None:
        self.con.close()


# ---- inputs ----------------------------------------------------------------------------------


def frame_of(table: Table) -> pd.DataFrame:
    out = {}
    for col in table.columns:
        cells = list(col.cells)
        if col.as_pandas_categorical:
            out[col.name] = pd.Categorical(cells, categories=list(col.domain), ordered=True)
        elif "text" in col.kind:
            out[col.name] = pd.array(cells, dtype="str")
        elif col.kind == "bool":
            out[col.name] = pd.array(cells, dtype="boolean")
        else:
            out[col.name] = pd.array(cells, dtype="Int64")
    return pd.DataFrame(out)


def as_input(table: Table, kind: str, folder: str) -> tuple[Any, Schema]:
    """The table in an input kind, and the schema to publish it with (a CSV's
    schema goes through the schema document, as a schema file does)."""
    frame = frame_of(table)
    schema = table.schema()
    if kind == "pandas":
        return frame, schema
    arrow = pa.Table.from_pandas(frame, preserve_index=False)
    if kind == "arrow":
        return arrow, schema
    if kind == "polars":
        import polars as pl

        return pl.from_arrow(arrow), schema
    if kind == "dask":
        import dask.dataframe as dd

        return dd.from_pandas(frame, npartitions=min(3, max(len(frame), 1))), schema
    path = os.path.join(folder, f"input.{kind}")
    if kind == "parquet":
        frame.to_parquet(path, index=False)
        return path, schema
    frame.to_csv(path, index=False)
    return path, Schema.from_dict(schema.to_dict())


# ---- checking --------------------------------------------------------------------------------


@dataclass
class Disagreement:
    case: Case
    path: str
    q: Any                  # the query tuple, or a text naming a step ("(publish)")
    expected: Any
    got: Any

    @property
    def query(self) -> str:
        return self.q if isinstance(self.q, str) else privpub_text(self.case.table, self.q)

    @property
    def reference(self) -> str:
        return self.q if isinstance(self.q, str) else duckdb_text(self.case.table, self.q)

    def __str__(self) -> str:
        return (f"{self.case.family} via {self.case.input}, {self.path}: {self.query!r}\n"
                f"  expected {self.expected!r}, privpub gave {self.got!r}\n"
                f"  DuckDB: {self.reference}\n{self.case.table.describe()}")


@dataclass
class Case:
    table: Table
    family: str
    input: str
    queries: list = field(default_factory=list)


def draw_case(src: Source, n_queries: int, family: str | None = None,
              input_kind: str | None = None) -> Case:
    table, family = draw_table(src, family)
    case = Case(table, family, input_kind or src.pick(INPUTS))
    if family == "splu":
        others = list(range(1, len(table.columns)))
        if others:
            case.queries = [draw_query(src, table, columns=others) for _ in range(n_queries)]
        first = table.columns[0]
        case.queries += [("cmp", 0, "=", v) for v in first.domain[:3]]
        if first.label is not None:
            case.queries.append(("cmp", 0, "=", first.label))
    else:
        case.queries = [draw_query(src, table) for _ in range(n_queries)]
    return case


def _outcome(call: Callable[[], Any]) -> Any:
    try:
        with warnings.catch_warnings():
            # Zero-noise releases warn that they protect nothing, SPLU-Gen that its
            # small counts are uncertain: true, and not what is tested here.
            warnings.simplefilter("ignore")
            return call()
    except Exception as exc:  # noqa: BLE001 - a refusal is judged by its class, a crash is a finding
        return exc


def _same(expected: Any, got: Any, tolerance: float, relative: float = 0.0) -> bool:
    if isinstance(expected, tuple):  # a refusal of one of these classes, in one line
        return isinstance(got, expected) and "\n" not in str(got)
    if isinstance(got, BaseException):
        return False
    if math.isnan(expected):  # an average of no rows
        return math.isnan(float(got))
    return math.isclose(float(got), expected, rel_tol=relative, abs_tol=tolerance)


def _shown(got: Any) -> Any:
    if isinstance(got, BaseException):
        return f"{type(got).__name__}: {got}"
    return float(got)


def publish(case: Case, data: Any, schema: Schema) -> PublishedView:
    """The zero-noise release of the case's family."""
    if case.family.startswith("alphabeta"):
        mech = privpub.AlphaBeta(schema, alpha=1.0, beta=0.0)
        return mech.publish(data, seed=1, duplicates=case.family.split("-")[1])
    if case.family == "frapp":
        return privpub.FRAPP(schema, FRAPP_KEEP).publish(data, seed=1, duplicates="records")
    return SPLUGen(2, case.table.columns[0].name, schema=schema).publish(data, seed=1)


#: The ways an estimate is asked for: in memory, from the file (PublishedView.open, which
#: counts over the file), from the file read whole (read_parquet), batched in memory.
PATHS = ("memory", "file", "read", "estimate_many")


def check_case(case: Case, paths: Sequence[str] = PATHS) -> list[Disagreement]:
    """Every query of the case through every path, against DuckDB."""
    out: list[Disagreement] = []
    table = case.table

    def disagree(path: str, q: Any, expected: Any, got: Any) -> None:
        if isinstance(expected, tuple):
            expected = f"refusal ({' or '.join(k.__name__ for k in expected)})"
        out.append(Disagreement(case, path, q, expected, _shown(got)))

    with tempfile.TemporaryDirectory() as folder:
        data, schema = as_input(table, case.input, folder)
        view = _outcome(lambda: publish(case, data, schema))
        if isinstance(view, BaseException):
            disagree("publish", "(publish)", "a release", view)
            return out
        # A Dask release estimates by Dask; its rows, gathered, are a PublishedView.
        rows = view.view() if isinstance(view, DaskRelease) else view
        # FRAPP's estimator divides by γ_f − o ≈ 1 − 2^-40: a relative error ~1e-12.
        tolerance = 1e-6 if case.family == "frapp" else 0.0
        if case.family == "frapp":
            # No record was replaced (γ_frapp = 1 − 2^-40): the view is the records.
            records = sorted(schema.codes_to_ints(schema.encode(frame_of(table))))
            if records != sorted(schema.codes_to_ints(rows.codes)):
                disagree("publish", "(view rows)", "the records unchanged", "a replaced record")
                return out
        releases = {"memory": view}
        path = os.path.join(folder, "view.parquet")
        if "file" in paths or "read" in paths:
            view.to_parquet(path)
        for name, reading in (("file", PublishedView.open), ("read", PublishedView.read_parquet)):
            if name in paths:
                reopened = _outcome(lambda r=reading: r(path))
                if isinstance(reopened, BaseException):
                    disagree(name, "(open)", "the release", reopened)
                else:
                    releases[name] = reopened
        if case.input == "dask" and "file" in paths:  # the release reopened with Dask counting
            reopened = _outcome(lambda: open_dask(path))
            if isinstance(reopened, BaseException):
                disagree("open_dask", "(open)", "the release", reopened)
            else:
                releases["open_dask"] = reopened
        reference = Reference(table)
        published_ref = Reference(table, _published_cells(table, rows)) \
            if case.family == "splu" else None
        try:
            counted = []
            for q in case.queries:
                expected = refusal(table, q)
                if not expected:
                    if case.family == "splu" and 0 in _columns(q):
                        # s = v alone: the value's published count, over the view's rows.
                        expected = published_ref.count(q, distinct=False)
                    else:
                        expected = reference.count(q, distinct=case.family == "alphabeta-set")
                    counted.append((q, expected))
                text = privpub_text(table, q)
                for name, release in releases.items():
                    if name in paths or name == "open_dask":
                        got = _outcome(lambda r=release, t=text: r.estimate(t).value)
                        if not _same(expected, got, tolerance):
                            disagree(name, q, expected, got)
            _check_sums(case, releases, reference, counted[:3], disagree)
            if counted and "estimate_many" in paths:  # the batch, on the queries with a count
                texts = [privpub_text(table, q) for q, _ in counted]
                got = _outcome(lambda: view.estimate_many(texts).value)
                if isinstance(got, BaseException):
                    disagree("estimate_many", f"({len(texts)} queries)", "counts", got)
                else:
                    for (q, expected), value in zip(counted, got, strict=True):
                        if not _same(expected, value, tolerance):
                            disagree("estimate_many", q, expected, value)
        finally:
            reference.close()
            if published_ref is not None:
                published_ref.close()
    return out


def _check_sums(case: Case, releases: dict, reference: Reference, counted: list,
                disagree: Callable[..., None]) -> None:
    """sum(col) and avg(col) over a few counted queries' rows, for every column:
    DuckDB's over the same rows for a numeric column (αβ; FRAPP to its
    tolerance; SPLU-Gen where neither the column nor the condition reads its
    sensitive attribute), refused by name for text and booleans and for
    SPLU-Gen's sensitive attribute."""
    table = case.table
    for q, _ in counted:
        for i, col in enumerate(table.columns):
            hidden = case.family == "splu" and (i == 0 or 0 in _columns(q))
            expected_sum = expected_avg = (QueryError,)
            if col.kind in NUMERIC and not hidden:
                expected_sum, expected_avg = reference.sum_and_avg(
                    q, case.family == "alphabeta-set", i)
            where = privpub_text(table, q)
            for kind, expected in (("sum", expected_sum), ("avg", expected_avg)):
                text = f"SELECT {kind}({quoted(col.name)}) FROM t WHERE {where}"
                for name, release in releases.items():
                    got = _outcome(lambda r=release, t=text: r.estimate(t).value)
                    if not _same(expected, got, 1e-6, 1e-9):
                        disagree(f"{name}, {kind}({col.name})", q, expected, got)


# ---- minimal repros --------------------------------------------------------------------------


def _subqueries(q: tuple) -> list[tuple]:
    """q and every part of it, smallest first."""
    parts = [q]
    if q[0] in ("and", "or"):
        parts += [s for p in q[1] for s in _subqueries(p)]
    elif q[0] == "not":
        parts += _subqueries(q[1])
    return sorted(parts, key=lambda p: len(repr(p)))


def _still(case: Case, path: str) -> Disagreement | None:
    found = [d for d in check_case(case, (path,)) if d.path == path and not isinstance(d.q, str)]
    return found[0] if found else None


def _only_columns(case: Case, q: tuple) -> tuple[Case, tuple]:
    """The case with the columns the query does not read dropped (SPLU-Gen keeps
    its sensitive first column)."""
    keep = sorted(_columns(q) | ({0} if case.family == "splu" else set()))
    where = {old: new for new, old in enumerate(keep)}

    def renumber(p: tuple) -> tuple:
        if p[0] in ("and", "or"):
            return (p[0], tuple(renumber(x) for x in p[1]))
        if p[0] == "not":
            return ("not", renumber(p[1]))
        return (p[0], where[p[1]], *p[2:])

    table = Table(tuple(case.table.columns[i] for i in keep))
    q = renumber(q)
    return Case(table, case.family, case.input, [q]), q


def _without_row(table: Table, row: int) -> Table:
    return Table(tuple(Column(c.name, c.kind, c.domain, c.label,
                              c.cells[:row] + c.cells[row + 1:], c.as_pandas_categorical)
                       for c in table.columns))


def minimize(d: Disagreement) -> Disagreement:
    """A smaller case that still disagrees on the same path: the smallest failing
    part of the query, the columns it reads, then rows removed one by one (not for
    SPLU-Gen, whose rows must stay eligible)."""
    if isinstance(d.q, str):
        return d
    for part in _subqueries(d.q):
        found = _still(Case(d.case.table, d.case.family, d.case.input, [part]), d.path)
        if found is not None:
            d = found
            break
    case, q = _only_columns(d.case, d.q)
    d = _still(case, d.path) or d
    if d.case.family != "splu":
        row = 0
        while row < d.case.table.n and d.case.table.n > 1:
            smaller = Case(_without_row(d.case.table, row), d.case.family, d.case.input, [d.q])
            found = _still(smaller, d.path)
            if found is None:
                row += 1
            else:
                d = found
    return d


def _columns(q: tuple) -> set[int]:
    if q[0] in ("and", "or"):
        return set().union(*(_columns(p) for p in q[1]))
    if q[0] == "not":
        return _columns(q[1])
    return {q[1]}


def _published_cells(table: Table, view: PublishedView) -> list[list[Any]]:
    """The view's rows as cells (None: missing, whether decoded as NA or as the label)."""
    frame = view.frame
    out = []
    for col in table.columns:
        cells = []
        for v in frame[col.name].tolist():
            v = v.item() if isinstance(v, np.generic) else v
            if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)) or \
                    (col.label is not None and type(v) is type(col.label) and v == col.label):
                cells.append(None)
            else:
                cells.append(v)
        out.append(cells)
    return out


def find_disagreements(cases: int, seed: int, queries: int = 20,
                       paths: Sequence[str] = PATHS) -> list[Disagreement]:
    """``cases`` seeded random cases through :func:`check_case`: every disagreement."""
    out = []
    for i in range(cases):
        out += check_case(draw_case(RandomSource(seed * 100_003 + i), queries), paths)
    return out
