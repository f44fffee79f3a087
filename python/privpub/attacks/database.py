"""The statistical database of Dinur–Nissim 2003 (Sec. 2.1, Definition 1).

An n-bit database d answers subset-sum queries q ⊆ [n] through a
perturbation A(q). Queries are rows of a boolean matrix (one column per
bit), so a batch of t queries is one (t, n) array; the database counts and
logs every query it answers.
"""

from __future__ import annotations

import numpy as np

from privpub.attacks.perturbations import UNIFORMS_PER_QUERY, Exact, Perturbation
from privpub.core import validate
from privpub.core.errors import ParameterError, QueryError
from privpub.core.seeding import SeedLike, resolve_seed

#: Queries converted to floating point at a time (bounds the memory of a large batch).
ROWS = 4096


def as_bits(values: np.ndarray, what: str, error: type[Exception]) -> np.ndarray:
    """``values`` as bool, refusing anything but bool or 0/1 integers; the error names
    ``what`` and the first entry that is neither (its bit, and its query for a matrix)."""
    if values.dtype == np.bool_:
        return values
    if not np.issubdtype(values.dtype, np.integer):
        raise error(f"{what} must be bool or 0/1 integers, got dtype {values.dtype}")
    bad = np.argwhere((values != 0) & (values != 1))
    if bad.size:
        at = tuple(int(i) for i in bad[0])
        where = f"bit {at[-1]}" + (f" of query {at[0]}" if len(at) == 2 else "")
        raise error(f"{what}: {where} is {values[at]}; entries must be 0 or 1")
    return values.astype(np.bool_)


# ---- what the decoders take: one check each, shared by every public function -----------
def as_queries(queries, what: str = "queries", *, n: int | None = None) -> np.ndarray:
    """``queries`` as a (t, n) bool matrix with t ≥ 1 rows (queries) and n ≥ 1 columns
    (bits), or a QueryError naming ``what`` and its shape, or the first entry that is not
    0/1 (its bit and its query, through :func:`as_bits`). ``n``: the columns required."""
    q = np.asarray(queries)
    if q.ndim != 2:
        raise QueryError(f"{what} must be a (t, n) 0/1 matrix, one row per query, got "
                         f"shape {q.shape}")
    t, cols = q.shape
    if n is not None and cols != n:
        raise QueryError(f"{what} must have one column per bit, n = {n}, got {cols} "
                         f"(shape {q.shape})")
    if t < 1 or cols < 1:
        raise QueryError(f"{what} must hold at least one query of at least one bit, got "
                         f"shape {q.shape}")
    return as_bits(q, what, QueryError)


def as_answers(answers, t: int, what: str = "answers", *, columns: bool = False) -> np.ndarray:
    """``answers`` as float64, one per query (t of them; ``columns``: a (t, R) matrix,
    R ≥ 1, is also taken), every entry a finite real number; otherwise a
    ParameterError naming ``what`` and its shape, dtype or first non-finite entry."""
    a = np.asarray(answers)
    if a.dtype.kind not in "iuf":  # bool, complex, text and objects are not answers
        raise ParameterError(f"{what} must be real numbers, got dtype {a.dtype}")
    shape = "(t,) or (t, R)" if columns else "(t,)"
    if a.ndim not in ((1, 2) if columns else (1,)) or (a.ndim == 2 and a.shape[1] < 1):
        raise ParameterError(f"{what} must have shape {shape}, one answer per query, got "
                             f"shape {a.shape}")
    if a.shape[0] != t:
        raise ParameterError(f"{what} has {a.shape[0]} rows but there are {t} queries "
                             f"(one answer per query)")
    a = a.astype(np.float64, copy=False)
    bad = np.argwhere(~np.isfinite(a))
    if bad.size:
        at = tuple(int(i) for i in bad[0])
        where = f"entry {at[0]}" + (f", column {at[1]}" if len(at) == 2 else "")
        raise ParameterError(f"{what}: {where} (the answer to query {at[0]}) is {a[at]}; "
                             f"answers must be finite")
    return a


def as_bound(bound, what: str = "bound") -> float:
    """A finite, non-negative bound E on the answers' perturbation."""
    E = validate.real(what, bound)
    if E < 0:
        raise ParameterError(f"{what} must be non-negative, got {E}")
    return E


class SubsetSumDatabase:
    """n private bits answering subset-sum queries through ``mechanism``.

    Parameters
    ----------
    bits : array of 0/1 (bool or integer)
        The database d_1, …, d_n.
    mechanism : Perturbation, optional
        How answers are perturbed (default :class:`Exact`).
    seed : int, numpy Generator or None
        The database's randomness (None: OS CSPRNG).

    Examples
    --------
    >>> from privpub.attacks import SubsetSumDatabase, BoundedNoise
    >>> db = SubsetSumDatabase([1, 0, 1, 1], BoundedNoise(0.5), seed=1)
    >>> a = db.query([[1, 1, 0, 0], [0, 0, 1, 1]])
    >>> bool(abs(a[1] - 2) <= 0.5), db.queries_answered
    (True, 2)
    """

    def __init__(self, bits, mechanism: Perturbation | None = None, seed: SeedLike = None):
        arr = np.asarray(bits)
        if arr.ndim != 1 or arr.size == 0:
            raise ParameterError(f"bits must be a non-empty 1-d array, got shape {arr.shape}")
        arr = as_bits(arr, "bits", ParameterError)
        mechanism = Exact() if mechanism is None else mechanism
        if not isinstance(mechanism, Perturbation):
            raise ParameterError("mechanism must be a privpub.attacks perturbation, got "
                                 f"{type(mechanism).__name__}")
        self._bits = arr.copy()  # the caller keeps its array; the database its own bits
        self.mechanism = mechanism
        source = resolve_seed(seed)
        self._answers_source = source.derive("answers")
        self._state = mechanism.private_copy(self._bits, source).astype(np.float64)
        self._log_q: list[np.ndarray] = []
        self._log_a: list[np.ndarray] = []
        self.queries_answered = 0

    @property
    def n(self) -> int:
        return int(self._bits.size)

    def bound(self) -> float | None:
        """The E the mechanism is within for this database (None: no finite E)."""
        return self.mechanism.bound(self.n)

    def query(self, queries) -> np.ndarray:
        """Answers A(q) for a (t, n) 0/1 matrix of queries (or one query of length n)."""
        q = np.asarray(queries)
        if q.ndim == 1:
            q = q[None, :]
        if q.ndim != 2 or q.shape[1] != self.n:
            raise QueryError(f"queries must be a (t, {self.n}) 0/1 matrix, got shape "
                             f"{np.asarray(queries).shape}")
        q = as_bits(q, "queries", QueryError)
        t = q.shape[0]
        u = self._answers_source.uniform(UNIFORMS_PER_QUERY * t,
                                         UNIFORMS_PER_QUERY * self.queries_answered)
        exact = np.concatenate([q[i:i + ROWS].astype(np.float64) @ self._state
                                for i in range(0, t, ROWS)]) if t else np.zeros(0)
        sizes = q.sum(axis=1, dtype=np.int64)
        answers = self.mechanism.perturb(exact, sizes, self.n, u.reshape(t, UNIFORMS_PER_QUERY))
        self.queries_answered += t
        self._log_q.append(q.copy())
        self._log_a.append(answers)
        return answers

    def log(self) -> tuple[np.ndarray, np.ndarray]:
        """Every query answered so far, in order, and its answer."""
        if not self._log_q:
            return np.zeros((0, self.n), np.bool_), np.zeros(0)
        return np.concatenate(self._log_q), np.concatenate(self._log_a)

    def agreement(self, candidate) -> float:
        """Fraction of bits on which ``candidate`` agrees with the database (for evaluation)."""
        c = np.asarray(candidate)
        if c.shape != self._bits.shape:
            raise ParameterError(f"candidate must have {self.n} bits, got shape {c.shape}")
        return float(np.mean(as_bits(c, "candidate", ParameterError) == self._bits))

    def __repr__(self) -> str:
        return (f"SubsetSumDatabase(n={self.n}, mechanism={self.mechanism!r}, "
                f"queries_answered={self.queries_answered})")
