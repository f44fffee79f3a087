"""A condition decided over a row group's box of domain-index ranges (what
:mod:`privpub.viewfile.scan` prunes by): SKIP (false on every tuple of the box),
WHOLE (true on every tuple: its stored row count is added unread) or READ.

A condition's truth table over its attributes
(:meth:`~privpub.counting.query.Condition.truth_table`) decides it; when that
is too large, Kleene's three-valued logic over its atoms' tables, and an atom
on one huge integer range by its intervals of values, as the domain count
does. A group that is read is counted only on the columns the condition still
depends on inside its box (:class:`Reductions`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from privpub.counting import intervals
from privpub.counting.evaluation import PROJECTION_LIMIT
from privpub.domain.attributes import IntRange
from privpub.domain.schema import Schema
from privpub.viewfile.groupstats import GroupStats

#: Decisions of a condition over a row group.
SKIP, WHOLE, READ = 0, 1, 2


class Decider:
    """A condition's decision (SKIP, WHOLE or READ) over boxes of domain-index
    ranges, memoised by box (groups of trailing attributes share theirs)."""

    def __init__(self, condition: Any):
        self.condition, self.schema = condition, condition.schema
        self.index = [self.schema.names.index(a) for a in condition.attributes]
        self.table = condition.truth_table()
        self.seen: dict[tuple, int] = {}

    def __call__(self, group: GroupStats) -> int:
        if group.rows == 0:
            return SKIP
        box = tuple((group.low[j], group.high[j]) for j in self.index)
        decision = self.seen.get(box)
        if decision is None:
            decision = self.seen[box] = self._decide(box)
        return decision

    def _decide(self, box: tuple) -> int:
        if self.table is not None:
            return _verdict(_within(self.table, self.condition.attributes, self.schema, box))
        ranges = dict(zip(self.condition.attributes, box, strict=True))
        return _kleene(self.condition, self.condition.formula, ranges)


def _within(table: np.ndarray, attributes: Sequence[str], schema: Schema,
            box: Sequence[tuple[int, int]]) -> np.ndarray:
    """The part of a truth table (first attribute slowest) inside ``box``."""
    shape = [schema[a].size for a in attributes]
    return table.reshape(shape)[tuple(slice(lo, hi + 1) for lo, hi in box)]


def _verdict(values: np.ndarray) -> int:
    if not values.any():
        return SKIP
    return WHOLE if values.all() else READ


def _kleene(condition: Any, formula: tuple, ranges: Mapping[str, tuple[int, int]]) -> int:
    """Three-valued: each atom from its own table over its box (READ when it has
    none within the projection limit), combined by AND / OR / NOT."""
    kind = formula[0]
    if kind == "atom":
        atom = condition.atoms[formula[1]]
        table = condition.atom_table(formula[1], PROJECTION_LIMIT)
        if table is None:
            return _interval_verdict(condition.schema, atom, ranges)
        return _verdict(_within(table, atom.attributes, condition.schema,
                                [ranges[a] for a in atom.attributes]))
    if kind == "not":
        inner = _kleene(condition, formula[1], ranges)
        return {SKIP: WHOLE, WHOLE: SKIP, READ: READ}[inner]
    parts = [_kleene(condition, f, ranges) for f in formula[1]]
    absorbing, neutral = (SKIP, WHOLE) if kind == "and" else (WHOLE, SKIP)
    if absorbing in parts:
        return absorbing
    return neutral if all(p == neutral for p in parts) else READ


def _interval_verdict(schema: Schema, atom: Any, ranges: Mapping[str, tuple[int, int]]) -> int:
    """An atom on one integer range too large for a table (a timestamp, an id):
    the values of its box satisfying it, as intervals (:mod:`privpub.counting.intervals`,
    as the domain count does); READ when the atom is not a comparison with constants."""
    if len(atom.attributes) != 1 or not isinstance(schema[atom.attributes[0]], IntRange):
        return READ
    attr, (lo, hi) = schema[atom.attributes[0]], ranges[atom.attributes[0]]
    found = intervals.of_atom(atom.node, attr.name, attr.lo + lo, attr.lo + hi)
    if found is None:
        return READ
    held = intervals.size(found)
    return SKIP if held == 0 else WHOLE if held == hi - lo + 1 else READ



class Reductions:
    """Each undecided condition restricted to a group's box: an attribute on
    which its truth table does not change inside the box is fixed at the box's
    low end and dropped (every row of the group holds a value in the box), so
    its column is not counted: ``race = 'White' AND age > 60`` over a group
    whose ages all exceed 60 counts ``race`` alone. (Its column is still read,
    to check the stated range the reduction rests on:
    :mod:`privpub.viewfile.scan`.) (One is kept
    when the condition is constant over the box: a decided group is never
    sent, but could be.) The reduced tables are the ``tables`` argument of
    ``_core.parquet.scan_groups``, each made once."""

    def __init__(self, schema: Schema, conditions: Sequence[Any]):
        self.schema, self.conditions = schema, conditions
        self.full = [c.truth_table() for c in conditions]
        self.tables: list[tuple[list[int], np.ndarray]] = []
        self.made: dict[tuple, int] = {}  # (radices, table bytes) -> its slot
        self.slots: dict[tuple, tuple[int, list[str]]] = {}

    def __call__(self, i: int, group: GroupStats) -> tuple[int, list[str]]:
        """Condition i over the group: (its slot in ``tables``, the attributes read)."""
        attributes = self.conditions[i].attributes
        box = tuple((group.low[j], group.high[j])
                    for j in (self.schema.names.index(a) for a in attributes))
        key = (i, box)
        if key not in self.slots:
            shape = [self.schema[a].size for a in attributes]
            table = self.full[i].reshape(shape)
            inside = _within(self.full[i], attributes, self.schema, box)
            # An axis matters if some slice along it differs from the first.
            keep = [k for k in range(len(attributes))
                    if not (inside == inside.take([0], axis=k)).all()] or [0]
            fixed = tuple(slice(None) if k in keep else box[k][0] for k in range(len(shape)))
            radices = [shape[k] for k in keep]
            reduced = np.ascontiguousarray(table[fixed].reshape(-1))
            same = (tuple(radices), reduced.tobytes())
            if same not in self.made:
                self.made[same] = len(self.tables)
                self.tables.append((radices, reduced))
            self.slots[key] = (self.made[same], [attributes[k] for k in keep])
        return self.slots[key]


