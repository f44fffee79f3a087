"""Published views: the released rows, their metadata, and estimation.

A :class:`PublishedView` is what a mechanism hands out: the view's tuples
(as codes and, decoded, as a DataFrame) plus everything needed to estimate
counting queries from it later — mechanism, parameters, schema, seed policy.
It round-trips through Parquet (:meth:`PublishedView.to_parquet`).

Estimators are registered per mechanism by the mechanism modules
(:func:`register_estimator`), so a view reopened from a file estimates with
the estimator of the mechanism that made it.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from privpub import _core
from privpub.artifacts import read_frame, write_parquet
from privpub.domaincount import count, domain_frame
from privpub.errors import ParameterError
from privpub.query import Condition, QueryLike
from privpub.records import isin_sorted
from privpub.schema import Schema

#: mechanism name → f(view, QueryCounts) -> (estimate, variance), vectorised over queries
_ESTIMATORS: dict[str, Callable[[PublishedView, QueryCounts], tuple[Any, Any]]] = {}
#: Most value combinations estimate_marginals handles in one call.
MARGINAL_CELLS = 1 << 24

#: Rows per decoded chunk when streaming a view (to Parquet or iter_frames).
CHUNK_ROWS = 1 << 20
#: In a Parquet file of a view with context sets: which set a row belongs to
#: ("" for the view's own rows). Absent when the view has no context.
CONTEXT_COLUMN = "__privpub_set"


def register_estimator(mechanism: str):
    """Decorator: the unbiased count estimator of views made by ``mechanism``."""
    def deco(fn):
        _ESTIMATORS[mechanism] = fn
        return fn
    return deco


@dataclass(frozen=True)
class Estimate:
    """An estimate of Q(I) = select count(*) from I where C.

    ``value`` is the unbiased estimate, ``n_view`` = Q(V), ``n_domain`` = Q(D)
    (exact), ``stderr`` the standard error from the binomial variances (with
    the estimate plugged in for the unknown Q(I)), and ``bound`` the
    mechanism's (ρ, ε) error bound ρ√n, which holds with probability ≥ 1−ε.
    """

    value: float
    n_view: int
    n_domain: int
    stderr: float
    bound: float | None
    epsilon: float | None

    def __str__(self) -> str:
        text = f"{self.value:,.1f} ± {self.stderr:,.1f} (stderr)"
        if self.bound is not None:
            text += f"; |error| ≤ {self.bound:,.1f} w.p. ≥ {1 - self.epsilon:g}"
        return text


class PublishedView:
    """The rows a mechanism published, with what is needed to use them alone.

    Parameters
    ----------
    codes : numpy.ndarray
        The view's tuple codes, sorted (uint64 (k,) or (k, limbs), see Schema).
    schema : Schema
    mechanism : str
        Name of the mechanism, e.g. ``"alphabeta"``.
    parameters : dict
        JSON-ready parameters the estimator needs (α, β, n, ε, …).
    seed_policy : str
        ``"os-csprng"`` for real releases, or a note that the run was seeded.
    context : dict of str → codes, optional
        Public code sets the estimator needs besides the view itself (for the
        i-th of several views: ``"previous_union"``, the union of the views
        published before it). Saved in the same Parquet file, as rows flagged
        in the column ``CONTEXT_COLUMN``.
    """

    def __init__(self, codes: np.ndarray, schema: Schema, mechanism: str,
                 parameters: Mapping[str, Any], seed_policy: str,
                 context: Mapping[str, np.ndarray] | None = None):
        self.codes = codes
        self.schema = schema
        self.mechanism = mechanism
        self.parameters = dict(parameters)
        self.seed_policy = seed_policy
        self.context = dict(context or {})
        self._frame: pd.DataFrame | None = None
        self._digits: list[np.ndarray] | None = None
        self._small_digits: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.codes)

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v:.6g}" if isinstance(v, float) else f"{k}={v}"
                           for k, v in self.parameters.items())
        return (f"PublishedView({self.mechanism}: {len(self):,} rows over m = "
                f"{self.schema.size:,}; {params}; randomness: {self.seed_policy})")

    @property
    def frame(self) -> pd.DataFrame:
        """The published rows, decoded (computed once, then cached)."""
        if self._frame is None:
            self._frame = self.schema.decode(self.codes)
        return self._frame

    def iter_frames(self, chunk_rows: int = CHUNK_ROWS) -> Iterator[pd.DataFrame]:
        """The published rows decoded chunk by chunk (bounded memory)."""
        if chunk_rows < 1:
            raise ParameterError(f"chunk_rows must be positive, got {chunk_rows}")
        return self._decode_chunks(self.codes, chunk_rows)

    def _decode_chunks(self, codes: np.ndarray, chunk_rows: int) -> Iterator[pd.DataFrame]:
        """Decoded chunks of ``codes``; one empty frame when there are none."""
        for start in range(0, max(len(codes), 1), chunk_rows):
            yield self.schema.decode(codes[start:start + chunk_rows])

    # ---- persistence ---------------------------------------------------------------
    def metadata(self) -> dict[str, Any]:
        from privpub import __version__
        from privpub.artifacts import FORMAT_VERSION

        return {"format_version": FORMAT_VERSION, "library_version": __version__,
                "mechanism": self.mechanism, "parameters": self.parameters,
                "schema": self.schema.to_dict(),
                "extra": {"kind": "published_view", "seed_policy": self.seed_policy,
                          "rows": len(self),
                          "context": {k: len(v) for k, v in self.context.items()}}}

    def _all_frames(self) -> Iterator[pd.DataFrame]:
        """The view's rows, then each context set's, flagged when there is context."""
        for label, codes in [("", self.codes), *self.context.items()]:
            for frame in self._decode_chunks(codes, CHUNK_ROWS):
                if self.context:
                    frame[CONTEXT_COLUMN] = label
                yield frame

    def to_parquet(self, path: str | os.PathLike) -> None:
        """Write the decoded rows (streamed in chunks) and the metadata to Parquet."""
        write_parquet(path, self._all_frames(), self.metadata())

    @classmethod
    def read_parquet(cls, path: str | os.PathLike) -> PublishedView:
        """Reopen a view written by :meth:`to_parquet`; it estimates as the original."""
        frame, meta = read_frame(path)
        extra = meta.get("extra", {})
        if extra.get("kind") != "published_view":
            raise ParameterError(f"{os.fspath(path)!r} holds a privpub artifact, not a view")
        schema = Schema.from_dict(meta["schema"])
        context = {}
        if extra.get("context"):
            labels = frame.pop(CONTEXT_COLUMN).to_numpy()
            for name in extra["context"]:
                context[name] = schema.encode(frame[labels == name].reset_index(drop=True))
            frame = frame[labels == ""].reset_index(drop=True)
        view = cls(schema.encode(frame), schema, meta["mechanism"], meta["parameters"],
                   extra["seed_policy"], context)
        if len(view) != extra["rows"]:
            raise ParameterError(f"{os.fspath(path)!r}: {len(view)} rows, metadata says "
                                 f"{extra['rows']}")
        return view

    # ---- estimation ------------------------------------------------------------------
    def condition(self, where: QueryLike, tables: Mapping[str, pd.DataFrame] | None = None
                  ) -> Condition:
        """``where`` parsed against this view's schema (a Condition is reused)."""
        if isinstance(where, Condition) and where.schema == self.schema and not tables:
            return where
        return Condition(self.schema, where, tables)

    def estimate(self, where: QueryLike = None,
                 tables: Mapping[str, pd.DataFrame] | None = None) -> Estimate:
        """Estimate Q(I) = select count(*) from I where C.

        ``where`` is SQL WHERE text (``"age > 50 and sex = 'Male'"``; quote
        names with hyphens: ``"marital-status"``), a ``privpub.col``
        expression, or {attribute: value}; ``None`` counts all records.
        ``tables`` registers auxiliary tables for IN-subqueries.
        """
        cond = self.condition(where, tables)
        n_domain = count(self.schema, cond).value
        counts = self._counts_for(cond, n_domain)
        value, variance = self._estimator()(self, counts)
        return Estimate(value=float(value), n_view=int(counts.n_view), n_domain=n_domain,
                        stderr=math.sqrt(max(float(variance), 0.0)),
                        bound=self.parameters.get("error_bound"),
                        epsilon=self.parameters.get("epsilon"))

    def estimate_many(self, queries: Sequence[QueryLike],
                      tables: Mapping[str, pd.DataFrame] | None = None) -> list[Estimate]:
        """:meth:`estimate` for each query (the view's digits are decoded once)."""
        return [self.estimate(q, tables) for q in queries]

    def estimate_marginals(self, attributes: Sequence[str]) -> pd.DataFrame:
        """Every equality query over ``attributes`` at once: one row per value
        combination (first attribute slowest) with ``n_view``, ``n_domain``,
        ``estimate`` and ``stderr`` — one histogram pass over the view."""
        return self.estimate_marginals_many([attributes])[0]

    def estimate_marginals_many(self, subsets: Sequence[Sequence[str]]) -> list[pd.DataFrame]:
        """:meth:`estimate_marginals` for several attribute subsets; the
        histograms are computed in Rust in one call, in parallel over subsets."""
        subsets = [list(s) for s in subsets]
        for attributes in subsets:
            for name in attributes:
                self.schema[name]  # names unknown attributes
            if len(set(attributes)) != len(attributes):
                raise ParameterError(f"attributes repeat: {attributes}")
            cells = math.prod(self.schema[a].size for a in attributes)
            if cells > MARGINAL_CELLS:
                raise ParameterError(f"{cells:,} value combinations over {attributes}; the "
                                     f"limit is {MARGINAL_CELLS:,}")
        n_view = self._histograms(self.codes, subsets, own=True)
        in_previous = previous = None
        if "previous_union" in self.context:
            in_previous = self._histograms(self.codes[self._in_previous()], subsets)
            previous = self._histograms(self.context["previous_union"], subsets)
        tables = []
        for s, attributes in enumerate(subsets):
            counts = self._marginal_counts(
                attributes, n_view[s], None if in_previous is None else in_previous[s],
                None if previous is None else previous[s])
            value, variance = self._estimator()(self, counts)
            frame = domain_frame(self.schema, attributes)
            n_domain = self.schema.size // len(frame)
            frame["n_view"] = n_view[s]
            frame["n_domain"] = n_domain if n_domain < 2**63 else str(n_domain)
            frame["estimate"] = value
            frame["stderr"] = np.sqrt(np.maximum(variance, 0.0))
            tables.append(frame)
        return tables

    def _histograms(self, codes: np.ndarray, subsets: list[list[str]],
                    own: bool = False) -> list[np.ndarray]:
        """Counts of ``codes`` over each subset's value combinations (Rust)."""
        index = [[self.schema.names.index(a) for a in attrs] for attrs in subsets]
        radices = list(self.schema.radices)
        if max(radices) <= 1 << 16:  # the Rust kernel reads u16 digits
            if own and self._small_digits is not None:
                small = self._small_digits
            else:
                digits = self.digits if own else self.schema.digits(codes)
                small = np.stack([d.astype(np.uint16) for d in digits])
                if own:
                    self._small_digits = small
            return [c.astype(np.int64) for c in _core.count_subsets(small, radices, index)]
        digits = self.digits if own else self.schema.digits(codes)
        out = []
        for attrs in index:
            flat = np.zeros(len(codes), dtype=np.int64)
            for j in attrs:
                flat = flat * radices[j] + digits[j]
            out.append(np.bincount(flat, minlength=math.prod(radices[j] for j in attrs)))
        return out

    # ---- the counts estimators read -------------------------------------------------------
    def _estimator(self) -> Callable[[PublishedView, QueryCounts], tuple[Any, Any]]:
        estimator = _ESTIMATORS.get(self.mechanism)
        if estimator is None:
            raise ParameterError(f"no estimator registered for mechanism {self.mechanism!r}")
        return estimator

    @property
    def digits(self) -> list[np.ndarray]:
        """The view's domain indices (k arrays of n), decoded once."""
        if self._digits is None:
            self._digits = self.schema.digits(self.codes)
        return self._digits

    def _in_previous(self) -> np.ndarray:
        union = self.context["previous_union"]
        limbs = self.schema.limbs
        return isin_sorted(self.codes.reshape(-1, limbs), union.reshape(-1, limbs))

    def _weights(self) -> list[np.ndarray] | None:
        from privpub.source import SourceDistribution

        source = self.parameters.get("source")
        return None if source is None else SourceDistribution(self.schema, source).weights

    def _counts_for(self, cond: Condition, n_domain: int) -> QueryCounts:
        mask = cond.mask_codes(self.codes, self.digits)
        weights = self._weights()
        w_sum = w2_sum = float(n_domain)
        if weights is not None:
            w_sum = count(self.schema, cond, weights=weights).value
            w2_sum = count(self.schema, cond, weights=[w * w for w in weights]).value
        view_previous = previous = None
        if "previous_union" in self.context:
            view_previous = int(mask[self._in_previous()].sum())
            previous = cond.count_codes(self.context["previous_union"])
        return QueryCounts(np.int64(mask.sum()), np.float64(n_domain), np.float64(w_sum),
                           np.float64(w2_sum), view_previous, previous)

    def _marginal_counts(self, attributes: list[str], n_view: np.ndarray,
                         view_previous: np.ndarray | None,
                         previous: np.ndarray | None) -> QueryCounts:
        cells = len(n_view)
        n_domain = float(self.schema.size // cells)
        weights = self._weights()
        if weights is None:
            w_sum = w2_sum = np.full(cells, n_domain)
        else:
            chosen = [self.schema.names.index(a) for a in attributes]
            w_sum, w2_sum = np.ones(1), np.ones(1)
            for j in chosen:
                w_sum = np.multiply.outer(w_sum, weights[j]).reshape(-1)
                w2_sum = np.multiply.outer(w2_sum, weights[j] ** 2).reshape(-1)
            others = [j for j in range(len(self.schema)) if j not in chosen]
            w_sum = w_sum * math.prod(float(weights[j].sum()) for j in others)
            w2_sum = w2_sum * math.prod(float((weights[j] ** 2).sum()) for j in others)
        return QueryCounts(n_view, np.full(cells, n_domain), w_sum, w2_sum, view_previous,
                           previous)


@dataclass(frozen=True)
class QueryCounts:
    """What the estimators read, for one query (0-d) or many (arrays).

    ``w_sum`` and ``w2_sum`` are Σ_{t ∈ Q(D)} w(t) and Σ w(t)² for the
    source-distribution weights (both n_D without a source);
    ``view_previous`` = Q(V ∩ V') and ``previous`` = Q(V') for the i-th of
    several views.
    """

    n_view: Any
    n_domain: Any
    w_sum: Any
    w2_sum: Any
    view_previous: Any = None
    previous: Any = None
