"""SPLU's experiments (Sec. 6, Figs. 7–12) on Adult and synthetic CENSUS-like data.

Data sets, occupation sensitive in both:

- ``adult``: the embedded Adult train split (30,162 records, 14 occupations);
  a γ is eligible when every occupation's frequency is ≤ N/γ (2..7 here);
- ``census``: :func:`privpub.datasets.synthetic_census` — SYNTHETIC records
  with the paper's CENSUS cardinalities (the paper's IPUMS extract is not
  embedded), 100,000 rows by default as in the paper.

Measured, each as the mean relative error |estimate − truth| / truth:

1. small counts (Fig. 7/10): queries count(P ∧ s) with truth 1..10, P an
   equality on one or two non-sensitive attributes, against γ, for SPLU-Gen
   (the paper's estimator), Anatomy, DBR and Laplace counts (ε = ln 2, ln 3,
   sensitivity 1; no γ). A *large* error here is the privacy SPLU wants;
2. large counts by selectivity band (Fig. 8/9): truth / N in
   [0.5%, 1%), [1%, 2%) … [4%, 5%) at γ = 5, for the three SPLU estimators
   of :mod:`privpub.splu.reconstruction` and Anatomy and DBR;
3. two sensitive attributes (Fig. 12): occupation and age generalised to ten
   equal-width intervals (``ageband``, raw age left out), queries
   count(P ∧ occupation ∧ ageband) by band; γ = 3, the largest γ ≤ 5 at which
   ``ageband`` is eligible on both data sets (its largest interval holds 22%
   of Adult and 26% of the synthetic records);
4. publish time of SPLU-Gen against N (synthetic, 100K..500K rows).

Every method of a γ runs on the same records: the N mod γ that SPLU-Gen's
partition leaves out are removed first (their count is in the summary), so
truth is the same for all. The SPLU-Gen estimators run with the paper's
stopping rule (``stopping="paper"``), as the paper's figures did: privpub's
default rule runs Eq. 13/14 to its fixed point, which differs (see
:mod:`privpub.experiments.splu_uncertainty`). Run with ``privpub experiments splu --out DIR``
(``--quick``: small data, one run, for tests).
"""

from __future__ import annotations

import json
import math
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tqdm import tqdm

from privpub.core.files import check_outputs, save_figure, write_text
from privpub.core.seeding import SeedLike, resolve_seed
from privpub.datasets import load_adult, synthetic_census
from privpub.domain.attributes import IntRange
from privpub.domain.schema import Schema
from privpub.splu import (
    ReconstructionWarning,
    SPLUGen,
    anatomy,
    dbr,
    laplace_counts,
    reconstruct_many,
)
from privpub.splu.reconstruction import METHODS

SENSITIVE = "occupation"
GROUP_SIZES = tuple(range(2, 10))
QUICK_GROUP_SIZES = (2, 5, 9)
EPSILONS = {"ln 2": math.log(2), "ln 3": math.log(3)}
BANDS = ((0.005, 0.01), (0.01, 0.02), (0.02, 0.03), (0.03, 0.04), (0.04, 0.05))
LARGE_GROUP_SIZE, TWO_GROUP_SIZE = 5, 3
SMALL_MAX = 10
TIME_SIZES = (100_000, 200_000, 300_000, 400_000, 500_000)


def datasets(quick: bool) -> dict[str, tuple[pd.DataFrame, Schema]]:
    """The two data sets (quick: Adult's first 3,000 rows, 5,000 synthetic rows)."""
    adult, adult_schema = load_adult("train")
    census = synthetic_census(5_000 if quick else 100_000, seed=0)
    if quick:
        adult = adult.iloc[:3000].reset_index(drop=True)
    return {"adult": (adult, adult_schema), "census": census}


def eligible_group_sizes(df: pd.DataFrame, sensitive: str, group_sizes=GROUP_SIZES) -> list[int]:
    """The γ of ``group_sizes`` with every frequency of ``sensitive`` ≤ N/γ."""
    top = int(df[sensitive].value_counts().max())
    return [g for g in group_sizes if g * top <= len(df)]


def _literal(value) -> str:
    return "'" + value.replace("'", "''") + "'" if isinstance(value, str) else str(int(value))


def _sql(attrs: tuple[str, ...], values: tuple) -> str:
    return " and ".join(f'"{a}" = {_literal(v)}' for a, v in zip(attrs, values, strict=True))


def query_pool(df: pd.DataFrame, sensitive: list[str], attrs: list[str], low: float,
               high: float, limit: int, rng: np.random.Generator) -> pd.DataFrame:
    """Queries (where, sensitive values, truth) with low ≤ truth < high, P an
    equality on one or two of ``attrs``; at most ``limit`` of them, drawn
    uniformly (rng) from all that qualify."""
    frames = []
    combos = [(a,) for a in attrs] + [(a, b) for i, a in enumerate(attrs) for b in attrs[i + 1:]]
    for combo in combos:
        counts = df.groupby([*combo, *sensitive], observed=True).size().reset_index(name="truth")
        counts = counts[(counts.truth >= low) & (counts.truth < high)]
        if counts.empty:
            continue
        frames.append(pd.DataFrame({
            "where": [_sql(combo, tuple(r)) for r in counts[list(combo)].itertuples(index=False)],
            "values": counts[sensitive].to_dict("records"),
            "truth": counts.truth.to_numpy()}))
    pool = pd.concat(frames, ignore_index=True)
    if len(pool) > limit:
        pool = pool.iloc[np.sort(rng.choice(len(pool), limit, replace=False))]
    return pool.reset_index(drop=True)


def without_residue(df: pd.DataFrame, schema: Schema, group_size: int, sensitive: list[str]
                    ) -> tuple[pd.DataFrame, int]:
    """``df`` without the rows SPLU-Gen's partition leaves in its residue (so
    every group is full), and how many rows that drops."""
    part = SPLUGen(group_size, sensitive, schema=schema).partition(df)
    return df.drop(index=part.residue).reset_index(drop=True), len(part.residue)


def _publish(df: pd.DataFrame, schema: Schema, group_size: int, sensitive: list[str], seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the residue was removed beforehand
        return SPLUGen(group_size, sensitive, schema=schema).publish(df, seed=seed)


def _rel(est: np.ndarray, truth: np.ndarray) -> float:
    return float(np.mean(np.abs(est - truth) / truth))


def _estimates(view, pool: pd.DataFrame, method: str, max_iter: int) -> np.ndarray:
    """The estimates as the paper computed them: Eq. 13/14 from x⁰ = y with its
    stopping rule (every state's change ≤ 1%). It matters: on Adult (γ = 5) that
    rule stops after one step on most queries, a median 131 records from the
    fixed point privpub's default rule reaches (privpub.experiments.splu_uncertainty)."""
    with warnings.catch_warnings():  # each estimate's notes: not what this measures
        warnings.simplefilter("ignore", ReconstructionWarning)
        return reconstruct_many(view, list(zip(pool["where"], pool["values"], strict=True)),
                                method=method, max_iter=max_iter, stopping="paper").value


def _baseline_queries(pool: pd.DataFrame) -> list[tuple[str, object]]:
    return [(w, v[SENSITIVE]) for w, v in zip(pool["where"], pool["values"], strict=True)]


def small_counts(df: pd.DataFrame, schema: Schema, attrs: list[str], group_sizes: list[int],
                 runs: int, limit: int, source, max_iter: int = 10_000) -> dict:
    """Fig. 7/10: mean relative error of counts 1..10 against γ, per method."""
    out = {}
    for group_size in group_sizes:
        data, residue = without_residue(df, schema, group_size, [SENSITIVE])
        pool = query_pool(data, [SENSITIVE], attrs, 1, SMALL_MAX + 1, limit,
                          np.random.default_rng(0))
        truth = pool["truth"].to_numpy()
        errors: dict[str, list[float]] = {}
        anat = anatomy(data, group_size, SENSITIVE, schema).estimate_many(_baseline_queries(pool))
        errors["Anatomy"] = [_rel(anat, truth)]
        for run in range(runs):
            seed = source.derive(f"small γ={group_size} run={run}")
            view = _publish(data, schema, group_size, [SENSITIVE], seed.derive("splu"))
            est = _estimates(view, pool, "paper", max_iter)
            errors.setdefault("SPLU-Gen", []).append(_rel(est, truth))
            est = dbr(data, SENSITIVE, schema, seed.derive("dbr")).estimate_many(
                _baseline_queries(pool))
            errors.setdefault("DBR", []).append(_rel(est, truth))
            for label, eps in EPSILONS.items():
                noisy = laplace_counts(truth.astype(np.int64), eps, seed.derive(label))
                errors.setdefault(f"Laplace ε={label}", []).append(_rel(noisy, truth))
        out[str(group_size)] = {"queries": len(pool), "residue": residue,
                           **{k: float(np.mean(v)) for k, v in errors.items()}}
    return out


def _by_band(errors: dict[str, np.ndarray], truth: np.ndarray, n: int) -> dict:
    """Mean relative error of each method within each selectivity band."""
    out = {}
    for lo, hi in BANDS:
        inside = (truth >= lo * n) & (truth < hi * n)
        out[f"[{lo:.1%}, {hi:.1%})"] = {"queries": int(inside.sum()), **{
            k: (float(np.mean(np.abs(e[:, inside] - truth[inside]) / truth[inside]))
                if inside.any() else None) for k, e in errors.items()}}
    return out


def large_counts(df: pd.DataFrame, schema: Schema, attrs: list[str], runs: int, limit: int,
                 source, max_iter: int = 10_000) -> dict:
    """Fig. 8/9: mean relative error by selectivity band at γ = LARGE_GROUP_SIZE."""
    data, residue = without_residue(df, schema, LARGE_GROUP_SIZE, [SENSITIVE])
    n = len(data)
    pool = query_pool(data, [SENSITIVE], attrs, BANDS[0][0] * n, BANDS[-1][1] * n, limit,
                      np.random.default_rng(1))
    truth = pool["truth"].to_numpy()
    errors: dict[str, list[np.ndarray]] = {}
    anat = anatomy(data, LARGE_GROUP_SIZE, SENSITIVE, schema).estimate_many(_baseline_queries(pool))
    for run in range(runs):
        seed = source.derive(f"large run={run}")
        view = _publish(data, schema, LARGE_GROUP_SIZE, [SENSITIVE], seed.derive("splu"))
        for method in METHODS:
            est = _estimates(view, pool, method, max_iter)
            errors.setdefault(f"SPLU-Gen {method}", []).append(est)
        errors.setdefault("Anatomy", []).append(anat)
        errors.setdefault("DBR", []).append(dbr(data, SENSITIVE, schema, seed.derive(
            "dbr")).estimate_many(_baseline_queries(pool)))
    stacked = {k: np.stack(v) for k, v in errors.items()}
    return {"group_size": LARGE_GROUP_SIZE, "residue": residue, "queries": len(pool),
            "bands": _by_band(stacked, truth, n),
            "all": {k: float(np.mean(np.abs(e - truth) / truth)) for k, e in stacked.items()}}


def with_age_bands(df: pd.DataFrame, schema: Schema) -> tuple[pd.DataFrame, Schema]:
    """``df`` with age replaced by ten equal-width intervals of its domain (``ageband``)."""
    ages = np.array([int(v) for v in schema["age"].values])
    lo, width = ages.min(), ages.max() - ages.min() + 1
    out = df.drop(columns="age")
    out["ageband"] = (df["age"].to_numpy().astype(np.int64) - lo) * 10 // width
    attrs = [schema[a] for a in schema.names if a != "age"]
    return out, Schema([*attrs, IntRange("ageband", 0, 9)])


def two_sensitive(df: pd.DataFrame, schema: Schema, attrs: list[str], runs: int, limit: int,
                  source, max_iter: int = 10_000) -> dict:
    """Fig. 12: count(P ∧ occupation ∧ ageband) by selectivity band, γ = TWO_GROUP_SIZE."""
    banded, bschema = with_age_bands(df, schema)
    sensitive = [SENSITIVE, "ageband"]
    data, residue = without_residue(banded, bschema, TWO_GROUP_SIZE, sensitive)
    n = len(data)
    pool = query_pool(data, sensitive, [a for a in attrs if a != "age"], BANDS[0][0] * n,
                      BANDS[-1][1] * n, limit, np.random.default_rng(2))
    truth = pool["truth"].to_numpy()
    errors: dict[str, list[np.ndarray]] = {}
    for run in range(runs):
        view = _publish(data, bschema, TWO_GROUP_SIZE, sensitive, source.derive(f"two run={run}"))
        for method in ("paper", "exact-rate"):
            est = _estimates(view, pool, method, max_iter)
            errors.setdefault(f"SPLU-Gen {method}", []).append(est)
    stacked = {k: np.stack(v) for k, v in errors.items()}
    return {"group_size": TWO_GROUP_SIZE, "residue": residue, "queries": len(pool),
            "bands": _by_band(stacked, truth, n),
            "all": {k: float(np.mean(np.abs(e - truth) / truth)) for k, e in stacked.items()}}


def publish_times(sizes, source) -> dict[str, float]:
    """Seconds SPLU-Gen takes to publish the synthetic data at each N (occupation, γ = 5)."""
    out = {}
    for n in sizes:
        df, schema = synthetic_census(n, seed=0)
        start = time.perf_counter()
        _publish(df, schema, LARGE_GROUP_SIZE, [SENSITIVE], source.derive(f"time n={n}"))
        out[str(n)] = time.perf_counter() - start
    return out


#: The files :func:`run` writes in its output directory.
OUTPUTS = ("fig7_small_counts.png", "fig8_large_counts.png", "fig12_two_sensitive.png",
           "publish_time.png", "summary.json", "summary.md")


def run(out: str | Path, seed: SeedLike = None, quick: bool = False,
        overwrite: bool = False) -> dict:
    """Run every part, write the PNGs, ``summary.json`` and ``summary.md`` to ``out``
    (existing files are refused unless ``overwrite``)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    check_outputs(out, OUTPUTS, overwrite=overwrite)  # refused now, not after the run
    source = resolve_seed(seed)
    # The paper's stopping rule leaves some queries moving for the whole cap (a state
    # whose estimate creeps towards 0); --quick caps them sooner to stay fast.
    runs, small_limit, large_limit, max_iter = (1, 60, 150, 300) if quick else \
        (3, 1000, 5000, 10_000)
    group_sizes = QUICK_GROUP_SIZES if quick else GROUP_SIZES
    summary: dict = {"seed_policy": source.policy, "runs": runs, "quick": quick,
                     "sensitive": SENSITIVE, "census_is_synthetic": True, "max_iter": max_iter,
                     "stopping": "paper",
                     "data": {}}
    sets = datasets(quick)
    with tqdm(total=3 * len(sets) + 1, desc="splu", unit="part", disable=None) as bar:
        for name, (df, schema) in sets.items():
            attrs = [a for a in schema.names if a not in (SENSITIVE, "age", "native-country",
                                                          "country")]
            src = source.derive(name)
            eligible = eligible_group_sizes(df, SENSITIVE, group_sizes)
            part = {"records": len(df), "eligible_group_sizes": eligible,
                    "ineligible_group_sizes": [g for g in group_sizes if g not in eligible],
                    "predicate_attributes": attrs}
            part["small_counts"] = small_counts(df, schema, attrs, eligible, runs, small_limit,
                                                src.derive("small"), max_iter)
            bar.update()
            part["large_counts"] = large_counts(df, schema, attrs, runs, large_limit,
                                                src.derive("large"), max_iter)
            bar.update()
            part["two_sensitive"] = two_sensitive(df, schema, attrs, runs, large_limit,
                                                  src.derive("two"), max_iter)
            bar.update()
            summary["data"][name] = part
        summary["publish_seconds"] = publish_times((5_000, 10_000) if quick else TIME_SIZES,
                                                   source.derive("time"))
        bar.update()
    write_text(out / "summary.json", json.dumps(summary, indent=2), overwrite=overwrite)
    write_text(out / "summary.md", markdown(summary), overwrite=overwrite)
    save_figure(_plot_small(summary), out / "fig7_small_counts.png", overwrite=overwrite,
                dpi=100)
    save_figure(_plot_bands(summary, "large_counts", "large counts by selectivity"),
                out / "fig8_large_counts.png", overwrite=overwrite, dpi=100)
    save_figure(_plot_bands(summary, "two_sensitive",
                            "two sensitive attributes (occupation, ageband)"),
                out / "fig12_two_sensitive.png", overwrite=overwrite, dpi=100)
    save_figure(_plot_time(summary["publish_seconds"]), out / "publish_time.png",
                overwrite=overwrite, dpi=100)
    return summary


def markdown(summary: dict) -> str:
    """The summary as markdown tables."""
    lines = ["# SPLU experiments", "",
             f"Runs per point: {summary['runs']}; randomness: {summary['seed_policy']}. "
             "`census` is SYNTHETIC data (privpub.datasets.synthetic_census) with the "
             "paper's CENSUS cardinalities; `adult` is the UCI Adult train split. SPLU-Gen's "
             "estimates use the paper's stopping rule (every state's change ≤ 1%), as the "
             "paper's figures did.", ""]
    for name, part in summary["data"].items():
        lines += [f"## {name} ({part['records']:,} records, occupation sensitive)", "",
                  f"Eligible γ: {part['eligible_group_sizes']}; not eligible: "
                  f"{part['ineligible_group_sizes']}.", "",
                  "### Small counts (1..10): mean relative error against γ (Fig. 7/10)", ""]
        small = part["small_counts"]
        methods = [k for k in next(iter(small.values())) if k not in ("queries", "residue")]
        lines += ["| γ | queries | " + " | ".join(methods) + " |",
                  "|---" * (len(methods) + 2) + "|"]
        for g, row in small.items():
            lines.append(f"| {g} | {row['queries']} | "
                         + " | ".join(f"{row[m]:.3f}" for m in methods) + " |")
        for key, title in (("large_counts", "Large counts by selectivity (Fig. 8/9)"),
                           ("two_sensitive", "Two sensitive attributes (Fig. 12)")):
            block = part[key]
            lines += ["", f"### {title}, γ = {block['group_size']}", ""]
            methods = list(block["all"])
            lines += ["| selectivity | queries | " + " | ".join(methods) + " |",
                      "|---" * (len(methods) + 2) + "|"]
            for band, row in block["bands"].items():
                lines.append(f"| {band} | {row['queries']} | " + " | ".join(
                    "–" if row[m] is None else f"{row[m]:.3f}" for m in methods) + " |")
            lines.append(f"| all | {block['queries']} | "
                         + " | ".join(f"{block['all'][m]:.3f}" for m in methods) + " |")
        lines.append("")
    lines += ["## SPLU-Gen publish time (synthetic, γ = 5)", "", "| N | seconds |", "|---|---|"]
    lines += [f"| {int(n):,} | {t:.3f} |" for n, t in summary["publish_seconds"].items()]
    return "\n".join(lines) + "\n"


def _figure(width: float, height: float):
    from matplotlib.figure import Figure  # imported on use: matplotlib is slow to import

    return Figure(figsize=(width, height))


def _plot_small(summary: dict) -> Any:
    parts = summary["data"]
    fig = _figure(5 * len(parts), 3.8)
    axes = fig.subplots(1, len(parts), squeeze=False)[0]
    for ax, (name, part) in zip(axes, parts.items(), strict=True):
        small = part["small_counts"]
        group_sizes = [int(g) for g in small]
        for method in [k for k in next(iter(small.values())) if k not in ("queries",
                                                                            "residue")]:
            ax.plot(group_sizes, [small[str(g)][method] for g in group_sizes], "-o", ms=3,
                    label=method)
        ax.set_xlabel("γ")
        ax.set_ylabel("mean relative error, counts 1..10")
        ax.set_title(f"{name}{' (synthetic)' if name == 'census' else ''}")
    axes[-1].legend(fontsize=7)
    fig.suptitle("Small-count privacy (Fig. 7/10): larger is more private")
    fig.tight_layout()
    return fig


def _plot_bands(summary: dict, key: str, title: str) -> Any:
    parts = summary["data"]
    fig = _figure(5 * len(parts), 3.8)
    axes = fig.subplots(1, len(parts), squeeze=False)[0]
    for ax, (name, part) in zip(axes, parts.items(), strict=True):
        bands = part[key]["bands"]
        labels = list(bands)
        for method in part[key]["all"]:
            ys = [np.nan if bands[b][method] is None else bands[b][method] for b in labels]
            ax.plot(range(len(labels)), ys, "-o", ms=3, label=method)
        ax.set_xticks(range(len(labels)), labels, rotation=20, fontsize=7)
        ax.set_ylabel("mean relative error")
        ax.set_title(f"{name}{' (synthetic)' if name == 'census' else ''}, "
                     f"γ = {part[key]['group_size']}")
    axes[-1].legend(fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def _plot_time(seconds: dict[str, float]) -> Any:
    fig = _figure(5, 3.6)
    ax = fig.subplots()
    ax.plot([int(n) for n in seconds], list(seconds.values()), "-o")
    ax.set_xlabel("N (synthetic records)")
    ax.set_ylabel("SPLU-Gen publish, seconds")
    ax.set_title("Publish time against N (γ = 5)")
    fig.tight_layout()
    return fig
