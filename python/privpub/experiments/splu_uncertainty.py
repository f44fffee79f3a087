"""SPLU estimates' uncertainty, measured: coverage, calibration and EM iterations.

:class:`ReleaseLaw` draws SPLU-Gen's randomisation directly: the data's
decoy groups (the same partition :meth:`privpub.splu.SPLUGen.publish` uses)
and, per run, each grouped record's published value drawn uniformly from its
group (what the Rust kernel ``decoy_draw`` does). It returns the published
state counts y of each query (the input of every SPLU estimator), so
thousands of releases cost seconds; ``tests/splu/test_splu_uncertainty.py`` ties
it to real releases.

:func:`coverage` measures, over seeded runs of the law, for counts
count(P ∧ s) with P an equality on one non-sensitive attribute:

- how often the 95% ``interval`` (what the release determines) covers the
  truth (it must, for every query);
- how often the ``paper`` estimate's ``model_interval`` (value ± 1.96·stderr)
  covers the truth (only where the paper's model holds for P);
- how often it covers the estimate's own mean over the runs (is the stderr
  right about the noise?), and a 20% narrower one (it should not).

:func:`iterations` compares the EM's stopping rules on the query pools of
``privpub experiments splu`` (Fig. 8/9's large counts, γ = 5).

Run ``python -m privpub.experiments.splu_uncertainty`` (a few minutes); the
tables in :mod:`privpub.splu.reconstruction` are its output.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from privpub.counting.query import Condition
from privpub.datasets import load_adult, synthetic_census
from privpub.domain.schema import Schema
from privpub.splu import SPLUGen
from privpub.splu.em import paper_em
from privpub.splu.reconstruction import from_states

#: Runs per measurement (the tests' count).
RUNS = 2000
#: The 95% normal quantile.
Z95 = 1.959963984540054


@dataclass
class ReleaseLaw:
    """SPLU-Gen's randomisation of one sensitive attribute of ``df``, drawn directly."""

    df: pd.DataFrame
    schema: Schema
    group_size: int
    sensitive: str

    def __post_init__(self) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            part = SPLUGen(self.group_size, self.sensitive, schema=self.schema).partition(self.df)
        groups = part.groups[self.sensitive]
        attr = self.schema[self.sensitive]
        self.values = self.schema.digits(self.schema.encode(self.df))[
            self.schema.names.index(self.sensitive)].astype(np.int64)
        self.n_values = attr.size
        self.members = groups.members
        self.kept = np.zeros(len(self.df), dtype=bool)
        self.kept[self.members.reshape(-1)] = True
        self.group_values = self.values[self.members]  # (G, γ)

    def published(self, runs: int, seed: int, chunk: int = 50) -> Iterator[np.ndarray]:
        """(r, N) published value indices per run, ``chunk`` runs at a time (−1: in no
        group, not published)."""
        rng = np.random.default_rng(seed)
        g = len(self.members)
        flat = self.members.reshape(-1)
        for start in range(0, runs, chunk):
            r = min(chunk, runs - start)
            pick = rng.integers(0, self.group_size, size=(r, g, self.group_size))
            drawn = np.take_along_axis(
                np.broadcast_to(self.group_values, (r, g, self.group_size)), pick, axis=2)
            out = np.full((r, len(self.values)), -1, dtype=np.int64)
            out[:, flat] = drawn.reshape(r, -1)
            yield out

    def totals(self, runs: int, seed: int) -> np.ndarray:
        """f'_s, each value's published count over all records: (runs, V)."""
        v = self.n_values
        out = []
        for pub in self.published(runs, seed):
            offsets = (np.arange(len(pub)) * v)[:, None]
            out.append(np.bincount((pub[:, self.kept] + offsets).reshape(-1),
                                   minlength=len(pub) * v).reshape(len(pub), v))
        return np.concatenate(out)

    def masks(self, predicates: Sequence[str]) -> np.ndarray:
        """Each SQL predicate's rows among the published ones: (P, N) bool."""
        return np.stack([Condition(self.schema, p).mask(self.df) & self.kept
                         for p in predicates])

    def states(self, predicates: Sequence[str], runs: int, seed: int
               ) -> tuple[np.ndarray, np.ndarray]:
        """y of count(P ∧ s) for every predicate and value s: (runs, P·V, 4) in the
        order of :func:`privpub.splu.reconstruction.reconstruct_many`, and the
        true counts (P·V,)."""
        masks = self.masks(predicates)
        v = self.n_values
        n = int(self.kept.sum())
        n_p = masks.sum(axis=1)
        out = []
        for pub in self.published(runs, seed):
            r = len(pub)
            offsets = (np.arange(r) * v)[:, None]
            total = np.bincount((pub[:, self.kept] + offsets).reshape(-1),
                                minlength=r * v).reshape(r, v)
            ys = []
            for i, m in enumerate(masks):
                y3 = np.bincount((pub[:, m] + offsets).reshape(-1),
                                 minlength=r * v).reshape(r, v)
                y1 = total - y3
                ys.append(np.stack([n - n_p[i] - y1, y1, n_p[i] - y3, y3], axis=2))
            out.append(np.concatenate(ys, axis=1))
        truth = np.concatenate([np.bincount(self.values[m], minlength=v) for m in masks])
        return np.concatenate(out).astype(np.float64), truth


def adult_law(group_size: int = 5) -> ReleaseLaw:
    """Adult (train, 30,162 records), occupation sensitive."""
    df, schema = load_adult()
    return ReleaseLaw(df, schema, group_size, "occupation")


def census_law(n: int = 100_000, group_size: int = 5) -> ReleaseLaw:
    """The synthetic census (:func:`privpub.datasets.synthetic_census`), occupation
    sensitive."""
    df, schema = synthetic_census(n, seed=0)
    return ReleaseLaw(df, schema, group_size, "occupation")


#: Predicates of the coverage measurement: equalities on one non-sensitive attribute.
ADULT_PREDICATES = ("sex = 'Male'", "sex = 'Female'", "race = 'Black'", "salary = '>50K'",
                    "\"marital-status\" = 'Never-married'", "education = 'Bachelors'")
CENSUS_PREDICATES = ("gender = 1", "gender = 0", "education = 3", "race = 1", "marital = 2")


def coverage(law: ReleaseLaw, predicates: Sequence[str], runs: int = RUNS, seed: int = 0,
             method: str = "paper", min_count: int = 1) -> pd.DataFrame:
    """One row per query count(P ∧ s) with truth ≥ ``min_count``: the truth, the
    coverage of ``interval`` and ``model_interval`` at 95% over ``runs`` runs,
    the estimate's mean, sd and mean stderr, and how often value ± 1.96·stderr
    (and ± 0.8·1.96·stderr) covers the estimate's mean."""
    y, truth = law.states(predicates, runs, seed)
    r, q, k = y.shape
    batch = from_states(y.reshape(-1, k), law.group_size, method)
    value = batch.value.reshape(r, q)
    stderr = batch.stderr.reshape(r, q)
    lower, upper = (a.reshape(r, q) for a in batch.interval(0.95))
    mean = value.mean(axis=0)
    attr = law.schema[law.sensitive]
    labels = attr.values
    names = [f"{p} and {law.sensitive} = {labels[s]!r}" for p in predicates
             for s in range(law.n_values)]
    frame = pd.DataFrame({
        "query": names, "truth": truth,
        "interval": ((lower <= truth) & (truth <= upper)).mean(axis=0),
        "mean_width": (upper - lower).mean(axis=0),
        "model": (np.abs(value - truth) <= Z95 * stderr).mean(axis=0),
        "mean": mean, "sd": value.std(axis=0), "stderr": stderr.mean(axis=0),
        "calibration": (np.abs(value - mean) <= Z95 * stderr).mean(axis=0),
        "narrow": (np.abs(value - mean) <= 0.8 * Z95 * stderr).mean(axis=0),
        "interior": (batch.misfit.reshape(r, q) < 1e-6).mean(axis=0)})
    return frame[frame.truth >= min_count].reset_index(drop=True)


def iterations(data: str = "adult", seed: int = 0, max_iter: int = 10_000) -> dict:
    """The EM's iterations and answers under each stopping rule on the large-count
    pool of ``privpub experiments splu`` (γ = 5), against the fixed point (the EM
    run to 10⁻¹² relative)."""
    from privpub.experiments.splu import (
        BANDS,
        LARGE_GROUP_SIZE,
        SENSITIVE,
        datasets,
        query_pool,
        without_residue,
    )
    from privpub.splu.estimates import ReconstructionWarning
    from privpub.splu.reconstruction import reconstruct_many

    df, schema = datasets(False)[data]
    attrs = [a for a in schema.names if a not in (SENSITIVE, "age", "native-country",
                                                  "country")]
    kept, _ = without_residue(df, schema, LARGE_GROUP_SIZE, [SENSITIVE])
    n = len(kept)
    pool = query_pool(kept, [SENSITIVE], attrs, BANDS[0][0] * n, BANDS[-1][1] * n, 5000,
                      np.random.default_rng(1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        view = SPLUGen(LARGE_GROUP_SIZE, SENSITIVE, schema=schema).publish(kept, seed=seed)
    queries = list(zip(pool["where"], pool["values"], strict=True))
    with warnings.catch_warnings():  # only the EM's states are read here, not the estimates
        warnings.simplefilter("ignore", ReconstructionWarning)
        states = np.stack(reconstruct_many(view, queries, "paper", None, 1, 1, "count").states)
    fixed, *_ = paper_em(states, LARGE_GROUP_SIZE, tol=1e-12, max_iter=200_000, stopping="paper")
    out = {"queries": len(queries)}
    for rule in ("paper", "count"):
        start = time.perf_counter()
        x, its, conv = paper_em(states, LARGE_GROUP_SIZE, max_iter=max_iter, stopping=rule)
        seconds = time.perf_counter() - start
        gap = np.abs(x[:, -1] - fixed[:, -1])
        out[rule] = {"median": float(np.median(its)), "mean": float(its.mean()),
                     "max": int(its.max()), "at_cap": int((~conv).sum()),
                     "seconds": seconds, "gap_median": float(np.median(gap)),
                     "gap_max": float(gap.max())}
    return out


def run(runs: int = RUNS) -> dict:
    """Every measurement of the module docstring, printed and returned."""
    out: dict = {}
    for name, law, predicates in (("adult γ=5", adult_law(5), ADULT_PREDICATES),
                                  ("adult γ=3", adult_law(3), ADULT_PREDICATES),
                                  ("census γ=5", census_law(), CENSUS_PREDICATES)):
        frame = coverage(law, predicates, runs)
        big = frame[frame.truth >= 0.005 * law.kept.sum()]
        interior = big[big.interior > 0.99]
        out[name] = {
            "queries": len(frame), "large": len(big),
            "interval_min": float(frame.interval.min()),
            "interval_width_over_truth": float((big.mean_width / big.truth).median()),
            "model_median": float(big.model.median()),
            "model_share_ge_94": float((big.model >= 0.94).mean()),
            "interior": len(interior),
            "calibration_min": float(interior.calibration.min()),
            "calibration_pooled": float(interior.calibration.mean()),
            "narrow_pooled": float(interior.narrow.mean())}
        print(name, out[name])
    for data in ("adult", "census"):
        out[f"iterations {data}"] = iterations(data)
        print(data, out[f"iterations {data}"])
    return out


if __name__ == "__main__":
    run()
