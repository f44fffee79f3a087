"""Baselines of the SPLU experiments (Sec. 6): Anatomy, DBR and Laplace counts.

- :func:`anatomy`: Xiao and Tao's Anatomy on the same deterministic groups as
  SPLU-Gen (:mod:`privpub.splu.partition`; Anatomy's own residue assignment
  is not implemented: the N mod γ records in no group are left out and
  counted). It publishes a quasi-identifier table (every non-sensitive
  column and a group id) and a sensitive table (group, value, count), and
  estimates count(P ∧ s) the Anatomy way: Σ_g |P ∩ g| · c_g(s)/|g|. The
  counts of sensitive values are published exactly, so small counts are not
  protected (the paper's point, Fig. 7).
- :func:`dbr`: the paper's distribution-based randomisation (Sec. 3, Sec. 6):
  every record's sensitive value is redrawn independently from the global
  marginal f_s/N, the non-sensitive attributes are kept. Its estimate of
  count(P ∧ s) is the published count (the paper's MLE), whose expectation is
  |P| f_s/N: the marginal survives, the correlation of P and s does not.
  A draw is the value whose cumulative-frequency interval holds ⌊U·N⌋ for a
  uniform double U from the ChaCha stream (exact up to U's 53 bits).
- :func:`laplace_counts`: ε-differentially private counts (sensitivity 1)
  with discrete Laplace noise, P(k) ∝ e^{−ε|k|}, the difference of two
  geometric variables drawn by inversion from the ChaCha stream. The output
  is an integer, so the floating-point attack on continuous Laplace noise
  (Mironov 2012) does not apply; the geometric inversion itself is computed
  in doubles, so its probabilities are exact only to double precision.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from privpub.core import validate
from privpub.core.errors import ParameterError
from privpub.core.inputs import TableLike
from privpub.core.seeding import SeedLike, resolve_seed
from privpub.counting.query import Condition
from privpub.domain.schema import Schema
from privpub.splu.histograms import value_index
from privpub.splu.partition import check_eligible, decoy_groups
from privpub.tables.records import records_as_codes


@dataclass(frozen=True)
class AnatomyRelease:
    """Anatomy's two tables: ``qit`` (domain indices of the non-sensitive
    attributes and ``group``) and ``st`` (``group``, ``value`` index, ``count``),
    plus the number of records in no group (``residue``)."""

    schema: Schema
    sensitive: str
    group_size: int
    qit: pd.DataFrame
    st: pd.DataFrame
    residue: int

    def estimate_many(self, queries: Sequence[tuple[Any, Any]]) -> np.ndarray:
        """count(P ∧ s) for each (where, sensitive value): Σ_g |P ∩ g| c_g(s)/γ."""
        groups = int(self.qit["group"].max()) + 1 if len(self.qit) else 0
        size = self.schema[self.sensitive].size
        table = np.zeros((groups, size))
        np.add.at(table, (self.st["group"].to_numpy(), self.st["value"].to_numpy()),
                  self.st["count"].to_numpy())
        group = self.qit["group"].to_numpy()

        def per_value(mask: np.ndarray) -> np.ndarray:
            return np.bincount(group[mask], minlength=groups) @ table / self.group_size

        return _per_predicate(self.schema, self.sensitive, self.qit, queries, per_value)


@dataclass(frozen=True)
class DBRRelease:
    """DBR's table: ``rows`` holds the domain index of every attribute, the
    sensitive one redrawn from the global marginal."""

    schema: Schema
    sensitive: str
    rows: pd.DataFrame

    def estimate_many(self, queries: Sequence[tuple[Any, Any]]) -> np.ndarray:
        """count(P ∧ s) for each (where, sensitive value): the published count."""
        values = self.rows[self.sensitive].to_numpy()
        size = self.schema[self.sensitive].size

        def per_value(mask: np.ndarray) -> np.ndarray:
            return np.bincount(values[mask], minlength=size).astype(float)

        return _per_predicate(self.schema, self.sensitive, self.rows, queries, per_value)


def _per_predicate(schema: Schema, sensitive: str, rows: pd.DataFrame,
                   queries: Sequence[tuple[Any, Any]], per_value) -> np.ndarray:
    """Answer (where, value) queries from ``per_value(mask of P)`` (an estimate for
    every sensitive value), evaluating each distinct predicate once."""
    per_p: dict[Any, np.ndarray] = {}
    out = np.empty(len(queries))
    for i, (where, value) in enumerate(queries):
        key = where if where is None or isinstance(where, str) else repr(where)
        if key not in per_p:
            cond = Condition(schema, where)
            if sensitive in cond.attributes:
                raise ParameterError(f"the predicate reads sensitive attribute "
                                     f"{sensitive!r}; give its value separately")
            mask = cond.mask_digits({a: rows[a].to_numpy() for a in cond.attributes},
                                    len(rows))
            per_p[key] = per_value(mask)
        out[i] = per_p[key][value_index(schema, sensitive, value)]
    return out


def _sensitive_digits(data: TableLike | np.ndarray, sensitive: str, schema: Schema
                      ) -> list[np.ndarray]:
    """Every attribute's domain indices, after checking ``sensitive`` is one of them."""
    if not isinstance(sensitive, str) or sensitive not in schema.names:
        raise ParameterError(f"sensitive attribute {sensitive!r} is not in the schema "
                             f"(attributes: {list(schema.names)})")
    digits = schema.digits(records_as_codes(schema, data))
    if len(digits[0]) == 0:
        raise ParameterError("the data hold no records; there is nothing to publish")
    return digits


def anatomy(data: TableLike | np.ndarray, group_size: int, sensitive: str,
            schema: Schema) -> AnatomyRelease:
    """Anatomy's publication of ``data`` with groups of ``group_size`` distinct values."""
    group_size = validate.integer("group_size", group_size, minimum=2)
    digits = _sensitive_digits(data, sensitive, schema)
    j = schema.names.index(sensitive)
    attr = schema[sensitive]
    check_eligible(sensitive, digits[j], attr.values, group_size)
    part = decoy_groups(digits[j], attr.size, group_size)
    rows = part.members.ravel()
    group = np.repeat(np.arange(len(part.members)), group_size)
    qit = pd.DataFrame({n: digits[k][rows] for k, n in enumerate(schema.names) if k != j})
    qit["group"] = group
    qit = qit.sort_values([*qit.columns[::-1]], kind="stable").reset_index(drop=True)
    st = pd.DataFrame({"group": group, "value": digits[j][rows].astype(np.int64),
                       "count": np.ones(len(rows), dtype=np.int64)})
    return AnatomyRelease(schema, sensitive, group_size, qit, st, len(part.residue))


def dbr(data: TableLike | np.ndarray, sensitive: str, schema: Schema,
        seed: SeedLike = None) -> DBRRelease:
    """DBR's publication of ``data``: each record's ``sensitive`` value drawn
    independently from the data's own distribution of that attribute."""
    digits = _sensitive_digits(data, sensitive, schema)
    j = schema.names.index(sensitive)
    freq = np.bincount(digits[j], minlength=schema[sensitive].size)
    drawn = draw_from_counts(freq, resolve_seed(seed).derive("dbr").uniform(len(digits[j])))
    rows = pd.DataFrame({name: d for name, d in zip(schema.names, digits, strict=True)})
    rows[sensitive] = drawn.astype(digits[j].dtype)
    return DBRRelease(schema, sensitive, rows)


def draw_from_counts(freq: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Value v for each uniform u: the one whose interval of the cumulative
    counts [F_{v−1}, F_v) holds the ticket ⌊u·N⌋ (N = Σ freq), so that each
    of the N tickets names one record's value."""
    cumulative = np.cumsum(freq)
    ticket = np.floor(u * cumulative[-1]).astype(np.int64)
    return np.searchsorted(cumulative, ticket, side="right")


def laplace_counts(true_counts: np.ndarray, epsilon: float, seed: SeedLike = None) -> np.ndarray:
    """``true_counts`` plus independent discrete Laplace noise of parameter ε (each
    count ε-DP under adding or removing one record; module docstring)."""
    epsilon = validate.real("epsilon", epsilon)
    if epsilon <= 0:
        raise ParameterError(f"epsilon must be positive, got {epsilon}")
    true_counts = np.asarray(true_counts)
    if true_counts.dtype.kind not in "iu":
        raise ParameterError(f"true_counts must be integers, got dtype {true_counts.dtype}")
    source = resolve_seed(seed).derive("laplace")
    u = source.uniform(2 * true_counts.size).reshape(2, -1)
    # Geometric failures with success 1 − e^{−ε}: ⌊ln(1 − U)/(−ε)⌋ (1 − U ∈ (0, 1]).
    g = np.floor(np.log1p(-u) / -epsilon).astype(np.int64)
    return true_counts.astype(np.int64) + (g[0] - g[1]).reshape(true_counts.shape)
