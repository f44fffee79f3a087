"""Exact integers ↔ rows of u64 limbs, most significant limb first.

A tuple code past 2^64 is stored as ``limbs`` uint64 words per row (shape
(n, limbs)); the kernels, the files and Dask's range partitioning all use
that layout, and only Python ints hold such a code whole. These two
functions are the one place the layout is written down, for any number of
limbs. (The counting engine's 40-bit float64 limbs, inside
``privpub.counting.elimination``, are another representation for exact
sums, not codes.)
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from privpub.core.errors import CodeError, ParameterError

#: One limb's bits.
LIMB_BITS = 64
_MASK = (1 << LIMB_BITS) - 1


def ints_from_limbs(rows: np.ndarray) -> list[int]:
    """The exact Python ints of ``rows``: (n, limbs) unsigned words, most
    significant first, or (n,) single-limb codes."""
    rows = np.asarray(rows)
    if rows.dtype.kind not in "iu" or rows.ndim not in (1, 2):
        raise CodeError(f"limb rows must be a 1-D or 2-D integer array, got dtype {rows.dtype} "
                        f"and shape {rows.shape}")
    if rows.dtype.kind == "i" and rows.size and rows.min() < 0:
        raise CodeError(f"limbs must be non-negative, got {rows.min()}")
    if rows.ndim == 1:
        return [int(v) for v in rows]
    # Object arrays hold Python ints, so the shifts and sums below are exact at any width.
    total = np.zeros(len(rows), dtype=object)
    for j in range(rows.shape[1]):
        total = (total << LIMB_BITS) + rows[:, j].astype(object)
    return [int(v) for v in total]


def limbs_from_ints(values: Iterable[int], limbs: int) -> np.ndarray:
    """``values`` (ints in [0, 2^(64·limbs))) as a C-contiguous (n, limbs) uint64
    array, most significant limb first; a CodeError names the first value
    that is not such an int (a bool, a float or a string is not one)."""
    if type(limbs) is not int or limbs < 1:
        raise ParameterError(f"limbs must be an int >= 1, got {limbs!r}")
    values = list(values)
    top = 1 << (LIMB_BITS * limbs)
    for i, v in enumerate(values):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) \
                or not 0 <= v < top:
            raise CodeError(f"value #{i} = {v!r} is not an int in [0, 2^{LIMB_BITS * limbs}) "
                            f"({limbs} limb{'s' if limbs > 1 else ''} of 64 bits)")
    whole = np.array([int(v) for v in values], dtype=object)
    out = np.empty((len(values), limbs), dtype=np.uint64)
    for j in range(limbs):
        out[:, j] = ((whole >> (LIMB_BITS * (limbs - 1 - j))) & _MASK).astype(np.uint64)
    return out
