"""Conditions on one huge integer attribute as sets of value intervals.

An IntRange with more values than a truth table may hold (a timestamp, an
id) can still be counted over exactly when the condition's atoms on it
compare it with constants: each such atom is a union of intervals, a
conjunction intersects them and a negation complements them, so Q(D) needs
the interval lengths only. Intervals are inclusive (lo, hi) pairs of ints.
Constants are read exactly (``t < 2.5``, ``t >= 9007199254740993.5``: as
fractions, not floats), and an IN list of n values costs O(n log n).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from sqlglot import exp

from privpub.counting.querytext import parse_where
from privpub.counting.querytree import in_values

Intervals = list[tuple[int, int]]

#: Comparison of column OP constant, and the same with the sides swapped.
_FLIPPED = {exp.GT: exp.LT, exp.GTE: exp.LTE, exp.LT: exp.GT, exp.LTE: exp.GTE,
            exp.EQ: exp.EQ, exp.NEQ: exp.NEQ}


def _number(node: exp.Expression) -> Fraction | None:
    """The exact value of a numeric constant (or its negation)."""
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.Neg):
        inner = _number(node.this)
        return None if inner is None else -inner
    if isinstance(node, exp.Literal) and not node.is_string:
        try:
            return Fraction(node.this)
        except ValueError:
            return None
    return None


def _is_column(node: exp.Expression, name: str) -> bool:
    while isinstance(node, exp.Paren):
        node = node.this
    return isinstance(node, exp.Column) and node.name == name


def of_atom(atom: exp.Expression | str, name: str, lo: int, hi: int) -> Intervals | None:
    """The values in [lo, hi] of attribute ``name`` satisfying the atom (a
    parsed node, or its SQL), or None when the atom is not a comparison of
    ``name`` with constants."""
    node = parse_where(atom) if isinstance(atom, str) else atom
    kind = type(node)
    if kind in _FLIPPED:
        left, right = node.this, node.expression
        if _is_column(right, name) and _number(left) is not None:
            left, right, kind = right, left, _FLIPPED[kind]
        c = _number(right)
        if not _is_column(left, name) or c is None:
            return None
        exact = c.denominator == 1
        spans = {exp.GT: [(math.floor(c) + 1, hi)], exp.GTE: [(math.ceil(c), hi)],
                 exp.LT: [(lo, math.ceil(c) - 1)], exp.LTE: [(lo, math.floor(c))],
                 exp.EQ: [(int(c), int(c))] if exact else [],
                 exp.NEQ: complement([(int(c), int(c))], lo, hi) if exact else [(lo, hi)]}
        return clip(spans[kind], lo, hi)
    if isinstance(node, exp.Between) and _is_column(node.this, name):
        low, high = _number(node.args["low"]), _number(node.args["high"])
        if low is None or high is None:
            return None
        return clip([(math.ceil(low), math.floor(high))], lo, hi)
    if isinstance(node, exp.In) and _is_column(node.this, name) and node.args.get("expressions"):
        listed = in_values(node)
        if listed is not None and listed.ints is not None:
            points = np.sort(listed.ints)  # distinct by the adjacent difference (np.unique
            points = points[np.concatenate(([True], np.diff(points) != 0))]  # hashes: slower)
            return _points(points, lo, hi)
        if listed is not None:
            values = listed.values
            if any(isinstance(v, (str, bool)) for v in values):
                return None
        else:
            values = [_number(v) for v in node.args["expressions"]]
            if any(v is None for v in values):
                return None
        points = sorted({i for i in map(_integral, values) if i is not None})
        return _points(points, lo, hi)
    return None


def _integral(value: object) -> int | None:
    """An integral number as an int (a fraction or float that is not: None)."""
    if isinstance(value, int):
        return value
    if isinstance(value, Fraction):
        return int(value) if value.denominator == 1 else None
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return None


def _points(points: list[int] | np.ndarray, lo: int, hi: int) -> Intervals:
    """Sorted distinct integers as merged unit intervals inside [lo, hi]."""
    if isinstance(points, np.ndarray):  # int64: runs of consecutive values, in numpy
        points = points[(points >= lo) & (points <= hi)]
        if not points.size:
            return []
        breaks = np.flatnonzero(np.diff(points) != 1)
        starts = np.concatenate(([points[0]], points[breaks + 1])).tolist()
        ends = np.concatenate((points[breaks], [points[-1]])).tolist()
        return list(zip(starts, ends, strict=True))
    out: Intervals = []
    for v in points:
        if not lo <= v <= hi:
            continue
        if out and v == out[-1][1] + 1:
            out[-1] = (out[-1][0], v)
        else:
            out.append((v, v))
    return out


def clip(intervals: Intervals, lo: int, hi: int) -> Intervals:
    """Sorted, merged, non-empty intervals inside [lo, hi]."""
    out: Intervals = []
    for a, b in sorted((max(a, lo), min(b, hi)) for a, b in intervals):
        if a > b:
            continue
        if out and a <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def complement(intervals: Intervals, lo: int, hi: int) -> Intervals:
    out, start = [], lo
    for a, b in clip(intervals, lo, hi):
        if a > start:
            out.append((start, a - 1))
        start = b + 1
    if start <= hi:
        out.append((start, hi))
    return out


def intersect(first: Intervals, second: Intervals) -> Intervals:
    out, i, j = [], 0, 0
    while i < len(first) and j < len(second):
        a, b = max(first[i][0], second[j][0]), min(first[i][1], second[j][1])
        if a <= b:
            out.append((a, b))
        if first[i][1] < second[j][1]:
            i += 1
        else:
            j += 1
    return out


def size(intervals: Intervals) -> int:
    return sum(b - a + 1 for a, b in intervals)
