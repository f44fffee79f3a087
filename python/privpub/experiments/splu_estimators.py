"""SPLU reconstruction: the paper's estimator against privpub's alternatives.

Measures the mean relative error of count(P ∧ s) over the counts with
selectivity ≥ 1% for each method of :func:`privpub.splu.reconstruct_many`
(``paper``, ``exact-rate``, ``partition``; see
:mod:`privpub.splu.reconstruction`) on:

- Adult (train and test splits), γ = 5, occupation sensitive, P = sex;
- a synthetic table (seeded, 100,000 rows, *not* real data): a sensitive
  value s in 0..19 (truncated exponential frequencies, eligible at γ = 3), a
  non-sensitive ``a`` equal to [s < 4] for half the records and random
  otherwise (P = a correlates with the largest values), and a non-sensitive
  ``b`` independent of s (P = b).

Each method runs with both EM stopping rules (``stopping``: the paper's 1%
rule, and privpub's default that runs to the fixed point; the partition
method has no EM and gives the same numbers under both).

The published count of (P, s) itself (``published``) is measured beside them.

Run ``python -m privpub.experiments.splu_estimators`` (a few minutes); the
table in :mod:`privpub.splu.reconstruction` is its output for seeds 0–2.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from privpub.datasets import load_adult
from privpub.domain.attributes import Categorical, IntRange
from privpub.domain.schema import Schema
from privpub.splu import ReconstructionWarning, SPLUGen, reconstruct_many
from privpub.splu.reconstruction import METHODS


def synthetic(n: int = 100_000, seed: int = 0) -> tuple[pd.DataFrame, Schema]:
    """The synthetic table of the module docstring (not real data)."""
    rng = np.random.default_rng(seed)
    s = np.minimum(rng.exponential(4, n).astype(np.int64), 19)
    a = np.where(rng.random(n) < 0.5, (s < 4).astype(np.int64), rng.integers(0, 2, n))
    df = pd.DataFrame({"a": a, "b": rng.integers(0, 3, n), "s": s})
    return df, Schema([IntRange("a", 0, 1), IntRange("b", 0, 2), IntRange("s", 0, 19)])


def errors(df: pd.DataFrame, schema: Schema, sensitive: str, predicates: list[str],
           group_size: int, seed: int, stopping: str = "paper") -> dict[str, float]:
    """Mean relative error of each method over the (P, s) counts ≥ 1% of N."""
    mech = SPLUGen(group_size, sensitive, schema=schema)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the residue (N mod γ) is counted below
        view = mech.publish(df, seed=seed)
    kept = np.ones(len(df), dtype=bool)
    kept[mech.partition(df).residue] = False
    values = schema[sensitive].values if isinstance(schema[sensitive], Categorical) else \
        range(schema[sensitive].offset, schema[sensitive].offset + schema[sensitive].size)
    queries, truth = [], []
    for where in predicates:
        mask = view.condition(where).mask(df[list(view.condition(where).attributes)])
        for v in values:
            queries.append((where, {sensitive: v}))
            truth.append(int((mask & (df[sensitive] == v).to_numpy())[kept].sum()))
    truth = np.array(truth)
    large = truth >= 0.01 * len(df)
    out = {"queries": int(large.sum())}
    for method in METHODS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ReconstructionWarning)  # not what this measures
            batch = reconstruct_many(view, queries, method=method, stopping=stopping)
        out[method] = float(np.mean(np.abs(batch.value - truth)[large] / truth[large]))
    # The published count of (P, s) itself, for comparison.
    out["published"] = float(np.mean(np.abs(batch.observed - truth)[large] / truth[large]))
    return out


def run(seeds: range = range(3)) -> pd.DataFrame:
    """One row per (data set, stopping rule, seed) with each method's mean relative error."""
    rows = []
    sets = [(f"adult-{split}", *load_adult(split), "occupation",
             ["sex = 'Male'", "sex = 'Female'"], 5) for split in ("train", "test")]
    df, schema = synthetic()
    sets += [(name, df, schema, "s", predicates, 3)
             for name, predicates in (("synthetic-correlated", ["a = 1", "a = 0"]),
                                      ("synthetic-independent", ["b = 1", "b = 0"]))]
    for name, data, schema, sensitive, predicates, group_size in sets:
        for stopping in ("paper", "count"):
            for seed in seeds:
                rows.append({"data": name, "stopping": stopping, "seed": seed,
                             **errors(data, schema, sensitive, predicates, group_size, seed,
                                      stopping)})
    return pd.DataFrame(rows)


if __name__ == "__main__":
    print(run().to_string(index=False, float_format="{:.3f}".format))
