"""Audit a published table with Dinur–Nissim reconstruction.

Two adversaries, each asking random subset queries that the release answers
through its own estimator (the mechanism's ``estimate(Counts)``, as
:meth:`PublishedView.estimate` does, for all queries at once,
:mod:`privpub.attacks.subsets`), decoding them, and scored against the data:

- :func:`audit` — attribute inference. It knows, for n target people, that
  they are in the table and their quasi-identifier (every published
  attribute except the secret one), and wants their secret bit
  d_i = [secret = secret_value]. Targets are records whose quasi-identifier
  no other record shares, so the counting query

      select count(*) from I where (quasi-identifier, secret) ∈ {(qi_i, secret_value) : i ∈ S}

  is exactly the subset sum Σ_{i∈S} d_i. The fraction recovered comes with a
  Clopper–Pearson interval next to the best guess without the release (every
  target gets the majority value). This adversary's prior on a target's
  tuple is the secret's base rate, not the d = k·n/m a (d, γ)-private release
  is calibrated against, so a release can meet its stated guarantee and still
  fail this audit: the audit measures what the guarantee does not cover.
- :func:`~privpub.attacks.presence.audit_presence` — Theorem 2.6 of the αβ
  paper, the adversary the guarantee is about (:mod:`privpub.attacks.presence`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from privpub.attacks.decoders import random_queries
from privpub.attacks.subsets import (
    ViewIndex,
    check_bound,
    check_decoder,
    clopper_pearson,
    decode,
    query_count,
)
from privpub.core import validate
from privpub.core.capabilities import SubsetSumAuditor, hidden_attributes
from privpub.core.errors import ParameterError
from privpub.core.seeding import SeedLike, resolve_seed
from privpub.tables.published import PublishedView
from privpub.tables.records import KeyCounts, rows_as_keys


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


def audit(release: PublishedView, secret_column: str, records, *, secret_value: Any = None,
          n_targets: int = 256, n_queries: int | None = None, decoder: str = "lstsq",
          bound: float | None = None, confidence: float = 0.95,
          seed: SeedLike = None) -> AuditResult:
    """Reconstruct targets' secret bits from ``release`` by random subset queries.

    Parameters
    ----------
    release : PublishedView
        The published table: αβ, FRAPP (through the mechanism's estimator) or
        SPLU-Gen.
    secret_column : str
        An attribute of the release's schema: binary, or any with ``secret_value``
        (bit 1 is then secret = secret_value). For a SPLU-Gen release the
        quasi-identifier is the non-sensitive attributes (the sensitive ones are
        randomised), and a sensitive secret's counts come from the release's own
        reconstruction (Eq. 13/14).
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
    bound : float, optional
        The LP's bound: finite, ≥ 0, for ``decoder="lp"`` only (least squares takes none).
    confidence : float
        Level of the Clopper–Pearson interval.
    seed : optional
        Draws the targets and the queries.
    """
    if not isinstance(release, PublishedView):
        raise ParameterError(f"release must be a PublishedView, got {type(release).__name__}")
    schema = release.schema
    attr = schema[secret_column]  # names an unknown column
    if attr.size != 2 and secret_value is None:
        raise ParameterError(f"secret column {secret_column!r} is not binary (its domain has "
                             f"{attr.size} values, {attr.describe()}); name the value that "
                             f"counts as bit 1 with secret_value=")
    check_decoder(decoder)
    confidence = validate.probability("confidence", confidence, open_low=True, open_high=True)
    n_targets = validate.integer("n_targets", n_targets, minimum=2)
    bound = check_bound(decoder, bound)
    j = schema.names.index(secret_column)
    one = _secret_index(schema, secret_column, secret_value)
    # Attributes the mechanism randomises (SPLU-Gen's sensitive ones) identify no record.
    mechanism = release.mechanism_object()
    hidden = set(hidden_attributes(mechanism))
    qi_columns = [i for i, a in enumerate(schema.names) if i != j and a not in hidden]
    if not qi_columns:
        raise ParameterError(f"no attribute besides {secret_column!r} identifies a record, so "
                             f"no quasi-identifier selects the targets")

    digits = schema.digits(schema.encode(records))
    qi_keys = rows_as_keys([digits[i] for i in qi_columns])
    unique = np.flatnonzero(KeyCounts(qi_keys).of(qi_keys) == 1)
    if unique.size < 2:
        raise ParameterError(f"only {unique.size} record(s) have a quasi-identifier "
                             f"({', '.join(schema.names[i] for i in qi_columns)}) no other "
                             f"record shares; the audit needs at least 2 targets")
    source = resolve_seed(seed)
    order = np.argsort(source.derive("targets").uniform(unique.size), kind="stable")
    targets = np.sort(unique[order[:n_targets]])
    n = targets.size
    bits = digits[j][targets] == one
    # Each target's tuple with the secret set to bit 1: its subset sums are the secret's.
    tuple_digits = [d[targets].astype(np.int64) for d in digits]
    tuple_digits[j] = np.full(n, one, dtype=np.int64)
    t = query_count(n, n_queries)
    Q = random_queries(n, t, source.derive("queries"))
    if isinstance(mechanism, SubsetSumAuditor):  # the family's own estimator answers
        answers, variance = mechanism.audit_subset_sums(release, qi_columns, j, one,
                                                        tuple_digits, Q)
    else:
        answers, variance = ViewIndex(release).subset_sums(tuple_digits, Q)
    fit = decode(decoder, Q, answers[:, None], variance, bound)[:, 0]
    right = int(np.sum((fit > 0.5) == bits))
    return AuditResult(secret_column, attribute_value(schema, secret_column, one), decoder, n, t,
                       int(unique.size), right / n, clopper_pearson(right, n, confidence),
                       confidence, float(max(bits.mean(), 1 - bits.mean())))


def attribute_value(schema, column: str, index: int) -> Any:
    """The value at domain ``index`` of an attribute."""
    attr = schema[column]
    return schema.frame_of([attr], [np.array([index], dtype=np.int64)], rows=1)[column][0]


def _secret_index(schema, column: str, value: Any) -> int:
    """The domain index of ``value`` in ``column`` (default: index 1)."""
    if value is None:
        return 1
    index = schema.index_of(column, value)
    if index is None:
        raise ParameterError(f"secret_value {value!r} is not in the domain of {column!r} "
                             f"({schema[column].describe()})")
    return index
