"""Audit a published table with Dinur–Nissim reconstruction.

The adversary: knows, for n target people, that they are in the table and
their quasi-identifier (every published attribute except the secret one),
and wants their secret bit d_i = [secret = secret_value]. Targets are
records whose quasi-identifier no other record shares, so the counting query

    select count(*) from I where (quasi-identifier, secret) ∈ {(qi_i, secret_value) : i ∈ S}

is exactly the subset sum Σ_{i∈S} d_i. The audit asks random subsets S,
answers each with the release's own estimator (the mechanism's
``estimate(Counts)``, as :meth:`PublishedView.estimate` does, for all
queries at once), decodes the bits and reports the fraction recovered with a
Clopper–Pearson interval next to the best guess without the release
(every target gets the majority value).

This adversary's prior on a target's tuple is the secret's base rate, not
the d = k·n/m a (d, γ)-private release is calibrated against, so a release
can meet its stated guarantee and still fail this audit: the audit measures
what the guarantee does not cover.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from privpub.attacks.decoders import (
    default_queries,
    lp_fit,
    lstsq_fit,
    random_queries,
)
from privpub.core import validate
from privpub.core.errors import ParameterError
from privpub.core.seeding import SeedLike, resolve_seed
from privpub.tables.published import Counts, PublishedView

DECODERS = ("lstsq", "lp")


@dataclass(frozen=True)
class AuditResult:
    """What a reconstruction audit found.

    ``recovered`` is the fraction of the targets' secret bits the decoder got
    right, ``interval`` its Clopper–Pearson interval at ``confidence``;
    ``baseline`` is the fraction a guess of the majority value gets without
    the release. ``eligible`` counts records with a unique quasi-identifier.
    """

    secret_column: str
    secret_value: Any
    decoder: str
    n_targets: int
    n_queries: int
    eligible: int
    recovered: float
    interval: tuple[float, float]
    confidence: float
    baseline: float

    @property
    def advantage(self) -> float:
        """recovered − baseline: what the release adds to a guess from the base rate."""
        return self.recovered - self.baseline

    def __str__(self) -> str:
        lo, hi = self.interval
        return (f"{self.decoder} recovered {self.recovered:.1%} of {self.n_targets} secret bits "
                f"({self.secret_column} = {self.secret_value!r}) from {self.n_queries} queries; "
                f"{self.confidence:.0%} interval [{lo:.1%}, {hi:.1%}]; majority guess "
                f"{self.baseline:.1%}")


def _rows_as_keys(digits: list[np.ndarray]) -> np.ndarray:
    """One comparable key per row from its digits (a void view of the int64 row)."""
    stacked = np.ascontiguousarray(np.stack([d.astype(np.int64) for d in digits], axis=1))
    return stacked.view(np.dtype((np.void, stacked.dtype.itemsize * stacked.shape[1]))).ravel()


def _counts_of(keys: np.ndarray, table: np.ndarray) -> np.ndarray:
    """How often each of ``keys`` occurs in ``table``."""
    values, counts = np.unique(table, return_counts=True)
    pos = np.clip(np.searchsorted(values, keys), 0, max(len(values) - 1, 0))
    if len(values) == 0:
        return np.zeros(len(keys), dtype=np.int64)
    return np.where(values[pos] == keys, counts[pos], 0)


def audit(release: PublishedView, secret_column: str, records, *, secret_value: Any = None,
          n_targets: int = 256, n_queries: int | None = None, decoder: str = "lstsq",
          bound: float | None = None, confidence: float = 0.95,
          seed: SeedLike = None) -> AuditResult:
    """Reconstruct targets' secret bits from ``release`` by random subset queries.

    Parameters
    ----------
    release : PublishedView
        The published table (any table mechanism with an estimator).
    secret_column : str
        A binary attribute of the release's schema.
    records : table
        The data the release was made from (to pick targets and score the attack).
    secret_value : optional
        The value that counts as bit 1 (default: the attribute's second value).
    n_targets : int
        How many records with a unique quasi-identifier to attack (all of them if fewer).
    n_queries : int, optional
        Random subset queries (default ⌈n (ln n)²⌉ for n targets).
    decoder : {"lstsq", "lp"}
        Least squares, or Theorem 3's LP with ``bound`` (default: the root-mean-square
        standard error the estimator reports over the queries; answers off by more
        make the LP infeasible and :func:`~privpub.attacks.decoders.lp_fit` then
        minimises the total excess, an ℓ1 fit robust to the few large errors).
    confidence : float
        Level of the Clopper–Pearson interval.
    seed : optional
        Draws the targets and the queries.
    """
    if not isinstance(release, PublishedView):
        raise ParameterError(f"release must be a PublishedView, got {type(release).__name__}")
    schema = release.schema
    attr = schema[secret_column]  # names an unknown column
    if attr.size != 2:
        raise ParameterError(f"secret column {secret_column!r} must be binary; its domain has "
                             f"{attr.size} values ({attr.describe()})")
    if decoder not in DECODERS:
        raise ParameterError(f"decoder must be one of {DECODERS}, got {decoder!r}")
    confidence = validate.probability("confidence", confidence, open_low=True, open_high=True)
    n_targets = validate.count("n_targets", n_targets, minimum=2)
    bound = validate.optional(validate.real, "bound", bound)
    j = schema.names.index(secret_column)
    one = _secret_index(schema, secret_column, secret_value)

    digits = schema.digits(schema.encode(records))
    qi = [d for i, d in enumerate(digits) if i != j]
    qi_keys = _rows_as_keys(qi)
    unique = np.flatnonzero(_counts_of(qi_keys, qi_keys) == 1)
    if unique.size < 2:
        raise ParameterError(f"only {unique.size} record(s) have a quasi-identifier (every "
                             f"attribute but {secret_column!r}) no other record shares; the "
                             f"audit needs at least 2 targets")
    source = resolve_seed(seed)
    order = np.argsort(source.derive("targets").uniform(unique.size), kind="stable")
    targets = np.sort(unique[order[:n_targets]])
    n = targets.size
    bits = digits[j][targets] == one
    # Each target's tuple with the secret set to bit 1, and how often the view holds it.
    tuple_digits = [d[targets].astype(np.int64) for d in digits]
    tuple_digits[j] = np.full(n, one, dtype=np.int64)
    keys = _rows_as_keys(tuple_digits)
    in_view = _counts_of(keys, _rows_as_keys(schema.digits(release.codes))).astype(np.float64)

    t = default_queries(n) if n_queries is None else validate.count("n_queries", n_queries,
                                                                     minimum=1)
    Q = random_queries(n, t, source.derive("queries")).astype(np.float64)

    def domain_sum(weights):
        per = np.ones(n)
        for w, d in zip(weights, tuple_digits, strict=True):
            per *= np.asarray(w, dtype=np.float64)[d]
        return Q @ per

    def context(name: str):
        inside = _counts_of(keys, _rows_as_keys(schema.digits(release.context[name]))) > 0
        return Q @ (in_view * inside), Q @ inside.astype(np.float64)

    counts = Counts(Q @ in_view, Q.sum(axis=1), domain_sum, context)
    answers, variance = release.mechanism_object().estimate(counts)
    answers = np.asarray(answers, dtype=np.float64)
    if decoder == "lstsq":
        fit = lstsq_fit(Q.astype(bool), answers)
    else:
        E = float(np.sqrt(np.mean(variance))) if bound is None else bound
        fit, _ = lp_fit(Q.astype(bool), answers, E)
    right = int(np.sum((fit > 0.5) == bits))
    from scipy import stats  # imported on use: scipy costs ~0.4 s at `import privpub`
    ci = stats.binomtest(right, n).proportion_ci(confidence_level=confidence)
    return AuditResult(secret_column, binary_values(schema, secret_column)[one], decoder, n, t,
                       int(unique.size), right / n, (float(ci.low), float(ci.high)),
                       confidence, float(max(bits.mean(), 1 - bits.mean())))


def binary_values(schema, column: str) -> list:
    """The two values of a binary attribute, in domain order."""
    attr = schema[column]
    return schema.frame_of([attr], [np.arange(2, dtype=np.int64)], rows=2)[column].tolist()


def _secret_index(schema, column: str, value: Any) -> int:
    """The domain index of ``value`` in ``column`` (default: index 1)."""
    if value is None:
        return 1
    values = binary_values(schema, column)
    if value not in values:
        raise ParameterError(f"secret_value {value!r} is not in the domain of {column!r} "
                             f"({schema[column].describe()})")
    return values.index(value)
