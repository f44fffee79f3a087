"""What both release audits share (:mod:`privpub.attacks.audit`,
:mod:`privpub.attacks.presence`): a release answering many random subset
queries through its own estimator, the decoders they may use, and the
Clopper–Pearson interval of what an audit scores."""

from __future__ import annotations

import math

import numpy as np

from privpub.attacks.database import as_bound
from privpub.attacks.decoders import default_queries, lp_fit, lstsq_fit
from privpub.core import validate
from privpub.core.capabilities import CountEstimator
from privpub.core.errors import ParameterError
from privpub.tables.published import PublishedView
from privpub.tables.records import KeyCounts, rows_as_keys
from privpub.tables.viewcounts import Counts

#: The decoders an audit may use.
DECODERS = ("lstsq", "lp")


class ViewIndex:
    """A release's rows (and context sets) as sorted keys, to answer many subset queries."""

    def __init__(self, release: PublishedView):
        self.release = release
        self.schema = release.schema
        self.view = KeyCounts(rows_as_keys(self.schema.digits(release.codes)))
        self._contexts: dict[str, KeyCounts] = {}
        self._mechanism = release.mechanism_object()
        if not isinstance(self._mechanism, CountEstimator):
            raise ParameterError(f"a {release.mechanism} release is not estimated from counts "
                                 "(its mechanism declares no CountEstimator), so the audit's "
                                 "subset queries have no estimator to ask")

    def context(self, name: str) -> KeyCounts:
        if name not in self._contexts:
            codes = self.release.context[name]
            self._contexts[name] = KeyCounts(rows_as_keys(self.schema.digits(codes)))
        return self._contexts[name]

    def subset_sums(self, tuple_digits: list[np.ndarray],
                    Q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The release's estimates (and their variances) of "tuple ∈ {t_i : i ∈ q_j}" for
        each row q_j of Q, the tuples t_i given by their digits (distinct tuples)."""
        keys = rows_as_keys(tuple_digits)
        in_view = self.view.of(keys).astype(np.float64)
        Qf = Q.astype(np.float64)

        def domain_sum(weights):
            per = np.ones(len(keys))
            for w, d in zip(weights, tuple_digits, strict=True):
                per *= np.asarray(w, dtype=np.float64)[d]
            return Qf @ per

        def context(name: str):
            inside = (self.context(name).of(keys) > 0).astype(np.float64)
            return Qf @ (in_view * inside), Qf @ inside

        counts = Counts(Qf @ in_view, Qf.sum(axis=1), domain_sum, context)
        answers, variance = self._mechanism.estimate(counts)
        return (np.asarray(answers, dtype=np.float64),
                np.broadcast_to(np.asarray(variance, dtype=np.float64), (len(Q),)))


def check_decoder(decoder: str) -> None:
    if decoder not in DECODERS:
        raise ParameterError(f"decoder must be one of {DECODERS}, got {decoder!r}")


def check_bound(decoder: str, bound) -> float | None:
    """The LP's bound (finite, ≥ 0), or None; least squares takes none."""
    if bound is None:
        return None
    if decoder != "lp":
        raise ParameterError(f"bound is the LP decoder's (Theorem 3's E); decoder = "
                             f"{decoder!r} takes none, got bound = {bound!r}")
    return as_bound(bound)


def query_count(n: int, n_queries: int | None) -> int:
    return default_queries(n) if n_queries is None else validate.integer("n_queries", n_queries,
                                                                       minimum=1)


def decode(decoder: str, Q: np.ndarray, answers: np.ndarray, variance: np.ndarray,
            bound: float | None) -> np.ndarray:
    """Fractional fits (n × R) of R columns of answers to the same queries Q.

    Least squares solves all columns with one factorisation. The LP's bound is
    ``bound``, else the root-mean-square standard error the estimator reports
    for that column's queries (answers off by more make the LP infeasible and
    :func:`~privpub.attacks.decoders.lp_fit` then minimises the total excess,
    an ℓ1 fit robust to the few large errors).
    """
    if decoder == "lstsq":
        return lstsq_fit(Q, answers).reshape(Q.shape[1], -1)
    variance = variance.reshape(len(Q), -1)
    fits = []
    for r in range(answers.shape[1]):
        E = float(np.sqrt(np.mean(variance[:, r]))) if bound is None else bound
        fits.append(lp_fit(Q, answers[:, r], E)[0])
    return np.stack(fits, axis=1)


def clopper_pearson(k: int, n: int, confidence: float) -> tuple[float, float]:
    """Clopper–Pearson interval of k successes in n trials (nan, nan when n = 0)."""
    if n == 0:
        return (math.nan, math.nan)
    from scipy import stats  # imported on use: scipy costs ~0.4 s at `import privpub`
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=confidence)
    return (float(ci.low), float(ci.high))
