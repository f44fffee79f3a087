"""Product-form source distributions for the generalized β-step (Algorithm 8).

Rastogi, Suciu, Hong, VLDB 2007, Sec. 4.4.2: noise is inserted with
probability β(t) proportional to source(t) = Π_j p_j(t.A_j). privpub writes
β(t) = β · Π_j w_j(t_j) with w_j(a) = |D_j|·p_j(a), so w_j averages 1 over
D_j and β(t) averages β over D (a uniform source gives the plain αβ).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

import privpub._core as _core
from privpub.core.errors import ParameterError
from privpub.domain.attributes import Attribute
from privpub.domain.schema import Schema


class SourceDistribution:
    """Per-attribute value probabilities over a schema (independent attributes).

    Parameters
    ----------
    schema : Schema
    probabilities : mapping attribute → (mapping value → probability, or a
        sequence aligned with the attribute's domain order)
        Attributes left out are uniform. Each given distribution must cover
        exactly the attribute's domain, be non-negative and sum to 1.
    """

    def __init__(self, schema: Schema, probabilities: Mapping[str, Any]):
        self.schema = schema
        self.weights: list[np.ndarray] = []
        unknown = set(probabilities) - set(schema.names)
        if unknown:
            raise ParameterError(f"source names attributes not in the schema: {sorted(unknown)}")
        for attr in schema:
            given = probabilities.get(attr.name)
            p = np.full(attr.size, 1 / attr.size) if given is None else _aligned(attr, given)
            self.weights.append(p * attr.size)

    @classmethod
    def from_frame(cls, schema: Schema, df: pd.DataFrame,
                   columns: Sequence[str] | None = None) -> SourceDistribution:
        """The empirical frequencies of ``df`` for ``columns`` (default: all),
        uniform for the other attributes. Every domain value of those columns must
        occur, or its probability, hence its noise, would be 0. Skewed columns
        make max β(t) large: on Adult, all nine give max w(t) ≈ 1.1e5."""
        probs = {}
        for attr in schema:
            if columns is not None and attr.name not in columns:
                continue
            counts = df[attr.name].value_counts()
            probs[attr.name] = {v: counts.get(v, 0) / len(df) for v in attr.values}
        return cls(schema, probs)

    def to_dict(self) -> dict[str, list[float]]:
        """JSON-ready: attribute → probabilities in domain order."""
        return {a.name: (w / a.size).tolist() for a, w in zip(self.schema, self.weights,
                                                                strict=True)}

    @property
    def max_weight(self) -> float:
        """max_t Π_j w_j(t_j): β(t) ≤ β·max_weight."""
        return math.prod(float(w.max()) for w in self.weights)

    @property
    def min_weight(self) -> float:
        return math.prod(float(w.min()) for w in self.weights)

    def ratios(self) -> np.ndarray:
        """w_j / max w_j for every attribute, back to back (the thinning table)."""
        return np.concatenate([w / w.max() for w in self.weights])

    def weight_of(self, rows: np.ndarray) -> np.ndarray:
        """Π_j w_j(t_j) for each (n, limbs) code row."""
        radices = list(self.schema.radices)
        zeros = [0] * len(radices)
        if self.schema.is_wide:
            digits = _core.codes.decode_wide(np.ascontiguousarray(rows), zeros, radices)
        else:
            digits = _core.codes.decode_u64(np.ascontiguousarray(rows.reshape(-1)), zeros, radices)
        out = np.ones(len(rows))
        for w, d in zip(self.weights, digits, strict=True):
            out *= w[d]
        return out


def _aligned(attr: Attribute, given: Mapping[Any, float] | Sequence[float]) -> np.ndarray:
    if isinstance(given, Mapping):
        values = list(attr.values)
        extra = [v for v in given if v not in set(values)]
        if extra:
            raise ParameterError(f"source for {attr.name!r} names values outside its domain: "
                                 f"{extra[:5]}")
        missing = [v for v in values if v not in given]
        if missing:
            raise ParameterError(f"source for {attr.name!r} misses domain values {missing[:5]}")
        p = np.array([given[v] for v in values], dtype=float)
    else:
        p = np.asarray(given, dtype=float)
        if p.shape != (attr.size,):
            raise ParameterError(f"source for {attr.name!r} needs {attr.size} probabilities "
                                 f"(one per domain value), got shape {p.shape}")
    if not np.all(np.isfinite(p)) or np.any(p < 0):
        raise ParameterError(f"source for {attr.name!r} has negative or non-finite entries")
    if p.min() <= 0:
        zero = list(attr.values)[int(np.argmin(p))]
        raise ParameterError(f"source for {attr.name!r} gives value {zero!r} probability 0; "
                             "its tuples would never be inserted as noise, revealing them")
    if not math.isclose(p.sum(), 1.0, rel_tol=0, abs_tol=1e-9):
        raise ParameterError(f"source for {attr.name!r} sums to {p.sum():.12g}, not 1")
    return p


def largest_weight(source: SourceDistribution | None) -> float:
    """max_t w(t), the most likely tuple's weight: 1 without a source (the
    plain αβ), else :attr:`SourceDistribution.max_weight`. β(t) ≤ β·this and
    d(t) ≤ d·this (:attr:`AlphaBeta.beta_max <privpub.alphabeta.AlphaBeta.beta_max>`)."""
    return 1.0 if source is None else source.max_weight
