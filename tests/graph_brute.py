"""Brute-force evaluation of CQ(≠) queries for the graph tests: every
assignment of the variables over [0, m), over one instance or over all 2^(m²)
instances of R at once (bit i·m + j of an instance's index is R(i, j))."""

from __future__ import annotations

import itertools

import numpy as np

from privpub.graphs.query import CQ, Const, Var


def _assignments(q: CQ, m: int):
    xs = sorted(q.variables)
    for values in itertools.product(range(m), repeat=len(xs)):
        h = dict(zip(xs, values, strict=True))

        def val(t, h=h):
            return h[t] if isinstance(t, Var) else t.value

        if all(val(a) != val(b) for a, b in q.neq_pairs()):
            yield h, val


def brute_count(q: CQ, edges: set[tuple[int, int]], m: int) -> int:
    """Distinct head assignments of q over the relation ``edges`` on [0, m)."""
    heads = set()
    for h, val in _assignments(q, m):
        if all((val(a.terms[0]), val(a.terms[1])) in edges for a in q.atoms):
            heads.add(tuple(h[x] for x in q.head))
    return len(heads)


def all_instances(q: CQ, m: int) -> np.ndarray:
    """q on every instance of R over [0, m): an int array of length 2^(m²)."""
    index = np.arange(2 ** (m * m), dtype=np.int64)
    heads: dict[tuple, np.ndarray] = {}
    for h, val in _assignments(q, m):
        ok = np.ones(index.size, dtype=bool)
        for a in q.atoms:
            bit = val(a.terms[0]) * m + val(a.terms[1])
            ok &= ((index >> bit) & 1).astype(bool)
        key = tuple(h[x] for x in q.head)
        heads[key] = heads.get(key, np.zeros(index.size, dtype=bool)) | ok
    return sum((v.astype(np.int64) for v in heads.values()), np.zeros(index.size, np.int64))


def exhaustive_global_sensitivity(q: CQ, m: int) -> int:
    """max |q(I') − q(I)| over instances differing in one tuple (I' = I − t' + t)."""
    values = all_instances(q, m)
    index = np.arange(values.size, dtype=np.int64)
    best = 0
    cells = m * m
    for out_bit in range(cells):
        has_out = ((index >> out_bit) & 1).astype(bool)
        for in_bit in range(cells):
            if in_bit == out_bit:
                continue
            ok = has_out & ~((index >> in_bit) & 1).astype(bool)
            src = index[ok]
            dst = src - (1 << out_bit) + (1 << in_bit)
            best = max(best, int(np.abs(values[dst] - values[src]).max()))
    return best


__all__ = ["Const", "all_instances", "brute_count", "exhaustive_global_sensitivity"]
