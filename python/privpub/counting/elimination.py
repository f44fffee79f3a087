"""Exact ConD counts by variable elimination on float64 BLAS.

ConD (Rastogi, Suciu, Hong, VLDB 2007, Sec. 4.1, Algorithms 5 and 6) sums,
over every assignment of the condition's attributes, the product of the
atoms' 0/1 truth tables. Eliminating one variable at a time (sum it out of
the product of the factors that mention it) is that computation on the tree
decomposition the order induces; with two factors a step is a matrix
product, so it runs as a BLAS GEMM (``numpy.einsum``), which is where the
time goes: 10 attributes × 1,000 values is eight products of 1000×1000
matrices.

Exactness. float64 holds every integer up to 2^53 exactly, and a sum of
non-negative integers whose total is below 2^53 is exact in any order (BLAS
reorders freely). Counts grow past that (2^78 in the benchmark, any size in
general), so an intermediate factor is held as *limbs*: value =
Σ_q 2^(40q) · L_q with every L_q < 2^40. Before a step, every factor gets a
bit budget: the 0/1 tables and small counts their own bit length, each
large factor b bits per piece, chosen so that the bits of one product term
plus log2(radix of the eliminated variable) stay ≤ 53; the large factors'
limbs are cut into b-bit pieces and one einsum runs per combination of
pieces, each exact. The results are added into aligned 40-bit limbs and
carried, exactly, in float64. When a step would need pieces under
``MIN_PIECE_BITS`` bits (several huge factors meeting), it runs on Python
ints instead (numpy object arrays): exact at any size, slow.
"""

from __future__ import annotations

import math
import string
from collections.abc import Sequence

import numpy as np

#: Bits per stored limb of an intermediate factor: with 0/1 partners and a
#: radix up to 2^11 a whole limb is one piece (40 + 1 + 1 + 11 ≤ 53), and up to
#: 2^13 terms can be added into one aligned limb before carrying.
LIMB_BITS = 40
#: Most piece combinations one step runs (each adds < 2^40 to a limb: < 2^53).
MAX_COMBINATIONS = 1 << 12
#: Exact float64 integers: every partial sum of a step stays below 2^53.
EXACT_BITS = 53
#: Below this many bits per piece a step is done in Python ints.
MIN_PIECE_BITS = 4
LETTERS = string.ascii_letters

# A factor: its sorted scope and its limbs (one float64 array per limb, axes in
# scope order), or one object array of Python ints.
Factor = tuple[tuple[int, ...], list[np.ndarray] | np.ndarray]


def count_by_elimination(scopes: Sequence[Sequence[int]], tables: Sequence[np.ndarray],
                         radices: Sequence[int], order: Sequence[int]) -> int:
    """Σ over every assignment of the variables of the product of the 0/1
    ``tables`` (each flat, row-major over its sorted scope), eliminating the
    variables in ``order`` (which must name every variable of a scope): exact."""
    factors: list[Factor] = [
        (tuple(s), [np.asarray(t, dtype=np.float64).reshape([radices[v] for v in s])])
        for s, t in zip(scopes, tables, strict=True)]
    for var in order:
        involved = [f for f in factors if var in f[0]]
        factors = [f for f in factors if var not in f[0]]
        factors.append(_eliminate(involved, var, radices[var]))
    return math.prod(_as_int(limbs) for _, limbs in factors)


def weighted_sum_by_elimination(scopes: Sequence[Sequence[int]],
                                tables: Sequence[np.ndarray], radices: Sequence[int],
                                order: Sequence[int]) -> float:
    """As :func:`count_by_elimination` for float tables (weights): the same
    steps in plain float64, one einsum each."""
    factors = [(tuple(s), np.asarray(t, dtype=np.float64).reshape([radices[v] for v in s]))
               for s, t in zip(scopes, tables, strict=True)]
    for var in order:
        involved = [f for f in factors if var in f[0]]
        factors = [f for f in factors if var not in f[0]]
        kept, spec = _step(involved, var)
        factors.append((kept, np.einsum(spec, *(t for _, t in involved), optimize=True)))
    return math.prod(float(t) for _, t in factors)


def _step(involved: Sequence[tuple[tuple[int, ...], object]], var: int
          ) -> tuple[tuple[int, ...], str]:
    """The scope left after summing ``var`` out of the product of ``involved``,
    and the einsum that does it (letters name a step's own variables)."""
    union = sorted({v for scope, _ in involved for v in scope})
    kept = tuple(v for v in union if v != var)
    letter = {v: LETTERS[i] for i, v in enumerate(union)}
    spec = (",".join("".join(letter[v] for v in scope) for scope, _ in involved)
            + "->" + "".join(letter[v] for v in kept))
    return kept, spec


def _eliminate(involved: list[Factor], var: int, radix: int) -> Factor:
    kept, spec = _step(involved, var)
    pieces = _pieces(involved, radix)
    if pieces is None or any(isinstance(limbs, np.ndarray) for _, limbs in involved):
        operands = [_as_objects(limbs) for _, limbs in involved]
        # (a scalar result comes back as a Python int: keep it an array)
        return kept, np.asarray(np.einsum(spec, *operands), dtype=object)
    shape = _shape(kept, involved)
    sums: dict[int, np.ndarray] = {}
    for combination in _combinations(pieces):
        shift = sum(s for s, _ in combination)
        term = np.einsum(spec, *(a for _, a in combination), optimize=True)
        _add_aligned(sums, shift, term, shape)
    return kept, _carry(sums, shape)


def _pieces(involved: list[Factor], radix: int) -> list[list[tuple[int, np.ndarray]]] | None:
    """Each factor as (shift, array) pieces whose product terms, summed over the
    eliminated variable, stay below 2^53; None when that needs pieces under
    MIN_PIECE_BITS bits."""
    # Every product term summed over the eliminated variable is at most
    # radix · Π(small factors' maxima) · Π(large factors' pieces, each < 2^width).
    small, large, bound = [], [], radix
    for index, (_, limbs) in enumerate(involved):
        if isinstance(limbs, np.ndarray):
            return None
        top = int(max(limb.max(initial=0) for limb in limbs))
        if len(limbs) == 1 and top < 1 << 8:
            small.append(index)
            bound *= max(top, 1)
        else:
            large.append(index)
    free = EXACT_BITS - (bound - 1).bit_length()  # bits left: bound ≤ 2^(53 − free)
    if not large:
        return None if free < 0 else [[(0, limbs[0])] for _, limbs in involved]
    width = min(LIMB_BITS, free // len(large))
    if width < MIN_PIECE_BITS:
        return None
    combinations = math.prod(sum(math.ceil(LIMB_BITS / width) for _ in involved[i][1])
                             for i in large)
    if combinations > MAX_COMBINATIONS:
        return None
    result: list[list[tuple[int, np.ndarray]]] = [[] for _ in involved]
    for index in small:
        result[index] = [(0, involved[index][1][0])]
    for index in large:
        for q, limb in enumerate(involved[index][1]):
            result[index].extend(_split(limb, LIMB_BITS * q, width))
    return result


def _split(limb: np.ndarray, shift: int, width: int) -> list[tuple[int, np.ndarray]]:
    """A limb (< 2^40) as pieces of ``width`` bits (exact: powers of two)."""
    if width >= LIMB_BITS:
        return [(shift, limb)]
    pieces, rest, at = [], limb, shift
    while at < shift + LIMB_BITS:
        high = np.floor(rest / 2.0**width)
        pieces.append((at, rest - high * 2.0**width))
        rest, at = high, at + width
    return pieces


def _combinations(pieces: list[list[tuple[int, np.ndarray]]]):
    """One piece per factor, every way (pieces that are all zero are skipped)."""
    lists = [[(s, a) for s, a in p if a.any()] for p in pieces]
    if any(not p for p in lists):
        return []
    out: list[list[tuple[int, np.ndarray]]] = [[]]
    for options in lists:
        out = [chosen + [option] for chosen in out for option in options]
    return out


def _add_aligned(sums: dict[int, np.ndarray], shift: int, term: np.ndarray,
                 shape: list[int]) -> None:
    """Add 2^shift · term (term < 2^53) into limbs aligned at multiples of 40
    bits: each piece added is < 2^40, and a step adds at most 2 ·
    MAX_COMBINATIONS of them to one limb, so every sum stays < 2^53."""
    quotient, remainder = divmod(shift, LIMB_BITS)
    value = np.asarray(term, dtype=np.float64).reshape(shape)
    q = quotient
    # term · 2^remainder, cut into 40-bit pieces: each exact, each < 2^40.
    while value.any():
        high = np.floor(value / 2.0**(LIMB_BITS - remainder))
        low = (value - high * 2.0**(LIMB_BITS - remainder)) * 2.0**remainder
        sums[q] = sums[q] + low if q in sums else low
        value, remainder, q = high, 0, q + 1


def _carry(sums: dict[int, np.ndarray], shape: list[int]) -> list[np.ndarray]:
    """Aligned sums as limbs < 2^40, carrying upward (all exact in float64)."""
    limbs: list[np.ndarray] = []
    carry = np.zeros(shape)
    q = 0
    top = max(sums, default=-1)
    while q <= top or carry.any():
        total = sums.get(q, 0.0) + carry
        carry = np.floor(total / 2.0**LIMB_BITS)
        limbs.append(total - carry * 2.0**LIMB_BITS)
        q += 1
    return limbs or [np.zeros(shape)]


def _shape(kept: tuple[int, ...], involved: list[Factor]) -> list[int]:
    sizes = {}
    for scope, limbs in involved:
        array = limbs if isinstance(limbs, np.ndarray) else limbs[0]
        sizes.update(zip(scope, array.shape, strict=True))
    return [sizes[v] for v in kept]


def _as_objects(limbs: list[np.ndarray] | np.ndarray) -> np.ndarray:
    if isinstance(limbs, np.ndarray):
        return limbs
    total = np.zeros(limbs[0].shape, dtype=object)
    for q, limb in enumerate(limbs):
        total = total + limb.astype(np.int64).astype(object) * (1 << (LIMB_BITS * q))
    return total


def _as_int(limbs: list[np.ndarray] | np.ndarray) -> int:
    if isinstance(limbs, np.ndarray):
        return int(limbs)
    return sum(int(limb) << (LIMB_BITS * q) for q, limb in enumerate(limbs))
