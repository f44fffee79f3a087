"""A SYNTHETIC stand-in for the SPLU paper's CENSUS data (not real records).

The SPLU paper (Sec. 6) samples 100K–500K records of an IPUMS census extract
with 8 categorical attributes: gender (2), education (17), marital (6),
race (9), work-class (10), country (83), age (78) and occupation (50, the
sensitive one). That extract is not embedded here, so
:func:`synthetic_census` draws records with the same cardinalities from a
small Bayesian network whose conditional tables are fixed (drawn once from
``MODEL_SEED``) and whose records are drawn from ``seed``:

    age → education, age → marital, race → country, education → work-class,
    (education, gender) → occupation

so queries that combine a non-sensitive attribute with occupation meet the
correlation the paper's estimators must keep (and that DBR loses). Nothing in
it is real data; its frequencies are chosen, not measured. Occupation's
largest share is about 4.7%, so SPLU-Gen's eligibility (every frequency
≤ N/γ) holds for every γ up to about 21.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from privpub.core import validate
from privpub.core.errors import ParameterError
from privpub.domain.attributes import IntRange
from privpub.domain.schema import Schema

CENSUS_CARDINALITIES = {"gender": 2, "education": 17, "marital": 6, "race": 9,
                        "workclass": 10, "country": 83, "age": 78, "occupation": 50}
"""Attribute → number of values (the paper's CENSUS cardinalities), in its order."""
#: Seed of the conditional tables: one fixed synthetic population for every ``seed``.
MODEL_SEED = 20_130_101
#: Ages 17..94 (78 values), as the attribute's domain.
AGE_MIN = 17
#: Age groups the age-dependent tables condition on (e.g. education by age group).
_AGE_GROUPS = 6


def census_schema() -> Schema:
    """The explicit (public) domains of :func:`synthetic_census`."""
    return Schema([IntRange(name, AGE_MIN if name == "age" else 0,
                            (AGE_MIN if name == "age" else 0) + size - 1)
                   for name, size in CENSUS_CARDINALITIES.items()])


def _conditional(rng: np.random.Generator, parents: int, values: int, concentration: float,
                 base: np.ndarray | None = None, weight: float = 0.5) -> np.ndarray:
    """A (parents, values) table of conditional distributions: Dirichlet draws,
    mixed with a shared ``base`` distribution (which keeps the marginal flat
    enough for SPLU's eligibility) at ``weight``."""
    table = rng.dirichlet(np.full(values, concentration), size=parents)
    if base is not None:
        table = weight * base + (1 - weight) * table
    return table


def _zipf(values: int, exponent: float) -> np.ndarray:
    p = 1.0 / np.arange(1, values + 1) ** exponent
    return p / p.sum()


def _draw(table: np.ndarray, parent: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Row ``parent[i]`` of ``table`` sampled by inversion with uniform ``u[i]``
    (records grouped by parent, one searchsorted per parent: columnar)."""
    out = np.empty(len(u), dtype=np.int64)
    cdf = np.cumsum(table, axis=1)
    cdf[:, -1] = 1.0  # rounding: every u < 1 lands in a value
    for k in range(len(table)):
        rows = np.flatnonzero(parent == k)
        out[rows] = np.searchsorted(cdf[k], u[rows], side="right")
    return out


def synthetic_census(n: int = 100_000, seed: int = 0) -> tuple[pd.DataFrame, Schema]:
    """``n`` synthetic CENSUS-like records (module docstring) and their schema.

    Parameters
    ----------
    n : int
        Records, at least 1 (the paper uses 100,000 to 500,000).
    seed : int
        Draws the records; the same ``(n, seed)`` gives the same table.

    Returns
    -------
    (df, schema)
        ``df`` has the columns of ``CENSUS_CARDINALITIES`` as int64 value
        indices (age in years, 17..94); ``df.attrs["synthetic"]`` is True.
    """
    n = validate.integer("n", n, minimum=1)
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
        raise ParameterError(f"seed must be an int, got {seed!r}")
    model = np.random.default_rng(MODEL_SEED)
    c = CENSUS_CARDINALITIES
    ages = np.arange(c["age"])
    age_p = np.exp(-(((ages + AGE_MIN) - 38) / 17.0) ** 2) + 0.03
    age_p /= age_p.sum()
    race_p = _zipf(c["race"], 2.0)
    country = _conditional(model, c["race"], c["country"], 0.05, _zipf(c["country"], 1.5), 0.3)
    education = _conditional(model, _AGE_GROUPS, c["education"], 0.5)
    marital = _conditional(model, _AGE_GROUPS, c["marital"], 0.5)
    workclass = _conditional(model, c["education"], c["workclass"], 0.3)
    occupation = _conditional(model, c["education"] * c["gender"], c["occupation"], 0.2,
                              _zipf(c["occupation"], 0.5), 0.5)

    rng = np.random.default_rng(seed)
    u = rng.random((8, n))
    cols: dict[str, np.ndarray] = {}
    cols["gender"] = (u[0] < 0.52).astype(np.int64)
    cols["age"] = _draw(age_p[None, :], np.zeros(n, dtype=np.int64), u[1])
    group = cols["age"] * _AGE_GROUPS // c["age"]
    cols["education"] = _draw(education, group, u[2])
    cols["marital"] = _draw(marital, group, u[3])
    cols["race"] = _draw(race_p[None, :], np.zeros(n, dtype=np.int64), u[4])
    cols["workclass"] = _draw(workclass, cols["education"], u[5])
    cols["country"] = _draw(country, cols["race"], u[6])
    cols["occupation"] = _draw(occupation, cols["education"] * c["gender"] + cols["gender"],
                               u[7])
    cols["age"] = cols["age"] + AGE_MIN
    df = pd.DataFrame({name: cols[name] for name in c})
    df.attrs["synthetic"] = True
    return df, census_schema()
