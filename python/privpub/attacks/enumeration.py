"""What both of Appendix B's auditors share (:mod:`privpub.attacks.auditor`,
:mod:`privpub.attacks.selfauditor`): they decide exactly by enumerating the
2^n candidate databases as uint32 bit masks, so n ≤ :data:`MAX_AUDIT_BITS`;
a query as a 0/1 row and as a mask, and the :class:`Decision` each logs."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from privpub.attacks.database import as_bits
from privpub.core.errors import ParameterError, QueryError

#: Largest n either auditor enumerates (2^20 candidates: 4 MB of masks, 8 MB of weights).
MAX_AUDIT_BITS = 20


def popcount(x: np.ndarray) -> np.ndarray:
    """Bits set in each uint32 (numpy ≥ 2 has it built in; 1.26 gets a byte table)."""
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(x).astype(np.int64)
    table = np.array([bin(b).count("1") for b in range(256)], dtype=np.int64)
    x = x.astype(np.uint32)
    return (table[x & 0xFF] + table[(x >> 8) & 0xFF] + table[(x >> 16) & 0xFF]
            + table[x >> 24])


def check_n(who: str, n: int) -> None:
    if n > MAX_AUDIT_BITS:
        raise ParameterError(f"{who} decides by enumerating all 2^n candidate databases; "
                             f"n = {n} is past its limit of {MAX_AUDIT_BITS} bits")


def query_mask(q: np.ndarray) -> int:
    """A query's bit mask (bit i set when i ∈ q); n ≤ MAX_AUDIT_BITS, so it fits a uint32."""
    return int(np.sum(np.left_shift(1, np.flatnonzero(q)), dtype=np.int64))


def as_query(query, n: int) -> np.ndarray:
    """One query as a bool row of length n."""
    q = np.asarray(query)
    if q.ndim != 1 or q.shape[0] != n:
        raise QueryError(f"a query must be a 0/1 vector of length {n}, got shape {q.shape}")
    return as_bits(q, "query", QueryError).copy()


@dataclass(frozen=True)
class Decision:
    """One query put to an auditor: the query, its answer (None: refused) and, for a
    :class:`SelfAuditor`, the breach probability it decided on (None otherwise)."""

    query: np.ndarray
    answer: float | None
    breach_probability: float | None = None

    @property
    def answered(self) -> bool:
        return self.answer is not None
