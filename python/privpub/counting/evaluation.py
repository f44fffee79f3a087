"""Evaluating conditions with DuckDB: one locked-down connection per thread, a
condition's SQL over a frame of rows, and truth tables over projections of
the domain D (numpy where it mirrors DuckDB exactly,
:mod:`privpub.counting.truthtable`), kept in a cache bounded in cells."""

from __future__ import annotations

import itertools
import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from sqlglot import exp

from privpub.core.errors import QueryError
from privpub.counting.querytree import Formula
from privpub.counting.truthtable import combined_table, grid_table

if TYPE_CHECKING:  # (a Schema is passed in: its module is not needed at run time)
    import duckdb

    from privpub.counting.queryresolve import ConditionAtom
    from privpub.domain.schema import Schema

#: Conditions whose attributes span at most this many domain tuples are
#: evaluated once over that projection and looked up by code.
PROJECTION_LIMIT = 1 << 20

_local = threading.local()


def connection() -> duckdb.DuckDBPyConnection:
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
    return evaluate(schema.projection(attributes, query=True), sql) if table is None else table


#: Truth tables over projections of D, by what they depend on: the schema, the
#: attributes and what is evaluated (an SQL text, or a condition's formula
#: over its atoms' SQL: :func:`condition_table`); ``make`` makes the table.
#: Shared by every Condition: estimating the same query on many views, or
#: counting the atoms of many conditions over one schema, builds each table once.
truth_tables = CellCache(lambda schema, attributes, key, make: make(), cells=1 << 26,
                         key=lambda schema, attributes, key, make: (schema_key(schema),
                                                                   attributes, key))

#: Schemas by identity, each with the number that stands for it in cache keys
#: (hashing a schema hashes every value of its domains, and a batch asks for
#: thousands of tables over one schema object); equal schemas share a number.
_schema_ids: OrderedDict[int, tuple[Schema, int]] = OrderedDict()
_schema_numbers: dict[Schema, int] = {}
_numbers = itertools.count()
_schemas_lock = threading.Lock()


def schema_key(schema: Schema) -> int:
    """The number standing for ``schema`` (by value) in cache keys. Numbers
    are never reused: a schema forgotten here gets a new one when it comes
    back, which costs its tables again, never another schema's tables."""
    with _schemas_lock:
        found = _schema_ids.get(id(schema))
        if found is not None and found[0] is schema:
            _schema_ids.move_to_end(id(schema))
            return found[1]
        if len(_schema_numbers) >= 256:
            _schema_numbers.clear()
        number = _schema_numbers.setdefault(schema, next(_numbers))
        _schema_ids[id(schema)] = (schema, number)  # (held: its id is not reused meanwhile)
        while len(_schema_ids) > 64:
            _schema_ids.popitem(last=False)
        return number


def projection_table(schema: Schema, attributes: tuple[str, ...], sql: str,
                     node: exp.Expression | None, limit: int = PROJECTION_LIMIT
                     ) -> np.ndarray | None:
    """``sql`` (parsed: ``node``) over the projection of D on ``attributes``,
    first attribute slowest; None past ``limit`` tuples. numpy broadcasting
    where it mirrors DuckDB exactly (:mod:`privpub.counting.truthtable`),
    DuckDB on the projection's frame otherwise. Kept in :data:`truth_tables`."""
    if math.prod(schema[a].size for a in attributes) > limit:
        return None
    return truth_tables(schema, attributes, sql,
                        lambda: _projection_table(schema, attributes, sql, node))


class _NotNumpy(Exception):
    """An atom's SQL that numpy does not mirror (:func:`atom_grid` gives None)."""


def condition_table(schema: Schema, attributes: tuple[str, ...], formula: Formula,
                    atoms: Sequence[ConditionAtom], sql: Callable[[], str],
                    limit: int = PROJECTION_LIMIT) -> np.ndarray | None:
    """A condition over the projection of D on ``attributes`` (those it
    reads), as :func:`projection_table` of its SQL, from its ``formula`` over
    its ``atoms`` (``Condition.formula``, ``.atoms``): their numpy tables
    combined (:func:`~privpub.counting.truthtable.combined_table`) when numpy
    mirrors DuckDB on every atom, else DuckDB on the whole condition's SQL
    (``sql()``, made only then). Kept by the formula over the atoms' SQL,
    which determines the table as the whole SQL does (a one-atom condition
    shares its atom's table); each atom's table is kept too, so an atom that
    many conditions hold is evaluated once."""
    if math.prod(schema[a].size for a in attributes) > limit:
        return None

    def make() -> np.ndarray:
        tables = [atom_grid(schema, a.attributes, a.node, a.sql) for a in atoms]
        if any(t is None for t in tables):
            return evaluate(schema.projection(attributes, query=True), sql())
        return combined_table(schema, attributes, formula,
                              [(a.attributes, t) for a, t in zip(atoms, tables, strict=True)
                               if t is not None])

    return truth_tables(schema, attributes, _formula_key(formula, [a.sql for a in atoms]), make)


def atom_grid(schema: Schema, attributes: tuple[str, ...], node: exp.Expression,
              sql: str) -> np.ndarray | None:
    """An atom's table by numpy (:func:`~privpub.counting.truthtable.grid_table`),
    kept in :data:`truth_tables`; None where numpy does not mirror DuckDB."""
    def make() -> np.ndarray:
        table = grid_table(schema, attributes, node)
        if table is None:
            raise _NotNumpy
        return table

    try:
        return truth_tables(schema, attributes, ("numpy", sql), make)
    except _NotNumpy:
        return None


def _formula_key(formula: Formula, keys: Sequence[str]) -> Hashable:
    kind, inner = formula
    if isinstance(inner, int):
        return keys[inner]
    if isinstance(inner, tuple):
        return (kind, _formula_key(inner, keys))
    return (kind, tuple(_formula_key(f, keys) for f in inner))


def evaluate(frame: pd.DataFrame, sql: str) -> np.ndarray:
    """The boolean value of ``sql`` on every row of ``frame`` (duckdb)."""
    if len(frame) == 0:
        return np.zeros(0, dtype=bool)
    import duckdb

    con = connection()
    try:
        con.register("rows", frame)
        out = con.execute(f"SELECT ({sql}) AS v FROM rows").fetchnumpy()["v"]
    except duckdb.Error as err:
        raise QueryError(f"evaluating {sql!r} failed: {first_line(err)}") from None
    finally:
        con.unregister("rows")
    return np.asarray(out, dtype=bool)


def first_line(err: Exception) -> str:
    """DuckDB's message without its multi-line caret picture."""
    return str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
