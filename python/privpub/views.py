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
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from privpub.artifacts import read_frame, write_parquet
from privpub.domaincount import count
from privpub.errors import ParameterError
from privpub.query import Condition, QueryLike
from privpub.schema import Schema

#: mechanism name → f(view, condition, n_view, n_domain) -> (estimate, variance)
_ESTIMATORS: dict[str, Callable[[PublishedView, Condition, int, int], tuple[float, float]]] = {}

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
        estimator = _ESTIMATORS.get(self.mechanism)
        if estimator is None:
            raise ParameterError(f"no estimator registered for mechanism {self.mechanism!r}")
        cond = self.condition(where, tables)
        n_view = cond.count_codes(self.codes)
        n_domain = count(self.schema, cond).value
        value, variance = estimator(self, cond, n_view, n_domain)
        return Estimate(value=value, n_view=n_view, n_domain=n_domain,
                        stderr=math.sqrt(max(variance, 0.0)),
                        bound=self.parameters.get("error_bound"),
                        epsilon=self.parameters.get("epsilon"))
