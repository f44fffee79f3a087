"""The DP yardstick: αβ and FRAPP against a differentially private release
through OpenDP, at the same ε, on three real tables (issue 37).

Every αβ and FRAPP guarantee states its pure-DP ε under replacement of one
tuple (n is published, so add/remove is not the notion that holds), and
``for_privacy(..., epsilon=ε)`` calibrates from an ε. For Adult, Fair (1978)
and ANES 1996, at the ε of the default αβ calibration (k = 10, γ = 0.2) and at
ε ∈ {0.5, 1, 2, 5}, this publishes an αβ view and a FRAPP view calibrated
from ε, and a DP release of the same table at the same ε, and compares the
error of the same 1-, 2- and 3-attribute counting queries, drawn from real
rows with a fixed seed.

The table is the set of distinct tuples: that is what αβ's and FRAPP's ε is
proved for (repeated records are not covered), so each mechanism sees it and
every count is a count of distinct tuples.

The DP release is the one a capable OpenDP user would make for this workload:
the queries fall on q attribute subsets, and a replacement changes each
subset's marginal histogram by at most 2 in L1 (one cell −1, one +1), so each
of the q marginals is released whole (every cell of its declared domain, not
only the queried ones) by OpenDP's discrete Laplace mechanism at ε/q —
``count_by_categories >> laplace`` on integer counts, scale 2q/ε, its privacy
map checked at d_in = 2 (symmetric distance of a replacement) — and sequential
composition gives ε in total (checked with OpenDP's composition map). One
full-domain histogram is not the better choice here: m is 7.7M to 648M cells,
and a 1-attribute count would sum the noise of m/|D_j| of them. Counts are
left unclamped on both sides, so both estimators stay unbiased. OpenDP draws
its noise from its own system randomness, which cannot be seeded: its figures
vary between runs within their sampling error, αβ's and FRAPP's do not.

Adult's domains are derived from its data (Fair's and ANES's are declared):
there every release's ε — OpenDP's too, whose categories are that domain —
holds only for the declared domain a user would publish; αβ's and FRAPP's
guarantees say so (``epsilon_holds`` false) and the summary lists the derived
attributes. On Adult's 19,502 distinct tuples the default calibration's ε is
6.72 (6.29 on all 30,162 records, which the set guarantee does not cover).

Where a calibration cannot reach an ε (a prior d above γ, or below the base
rate n/m), the cell says "not reachable" with the ParameterError's message.
Where an αβ view would exceed ``max_view_rows`` (Adult at small ε: β ≈ 0.24
of m = 648M cells), the view is not materialised; each query's count in V is
drawn from its exact distribution instead — Binomial(Q(I), α+β) +
Binomial(|Q(D)| − Q(I), β), independent by construction of αβ — and the cell
says so ("method").
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from privpub.alphabeta import AlphaBeta
from privpub.core.errors import ParameterError, UsefulnessWarning
from privpub.core.files import check_outputs, save_figure, write_text
from privpub.core.optional import require
from privpub.datasets import load_adult, load_anes96, load_fair
from privpub.domain.schema import Schema
from privpub.frapp import FRAPP
from privpub.tables.published import PublishedView

if TYPE_CHECKING:
    from matplotlib.figure import Figure

TABLES = {"adult": load_adult, "fair": load_fair, "anes96": load_anes96}
EPSILONS = (0.5, 1.0, 2.0, 5.0)
K, GAMMA = 10, 0.2                      # the default αβ calibration, whose ε is also shown
EPSILON_CLAIM = "ε-indistinguishability (replace one tuple)"
QUERIES_PER_SIZE = 30                   # one workload in --quick and the full run alike
MECHANISMS = ("alphabeta", "frapp", "opendp")
OUTPUTS = ("yardstick.png", "summary.json")
#: A query: its attribute subset (in schema order) and its cell in that marginal.
Query = tuple[tuple[str, ...], int]
#: The JSON summary and its parts (values of several kinds, by key).
Summary = dict[str, Any]


def distinct_tuples(df: pd.DataFrame, schema: Schema) -> tuple[pd.DataFrame, np.ndarray]:
    """The table as the set of its distinct tuples, and their digits (rows × attributes)."""
    distinct = df.drop_duplicates().reset_index(drop=True)
    return distinct, np.asarray(schema.digits(schema.encode(distinct)), dtype=np.int64).T


def cell_index(schema: Schema, digits: np.ndarray, subset: tuple[str, ...]) -> np.ndarray:
    """Each row's cell in the subset's marginal (first attribute slowest, as
    ``estimate_marginals_arrays`` lays cells out)."""
    index = np.zeros(digits.shape[0], dtype=np.int64)
    for a in subset:
        index = index * schema[a].size + digits[:, schema.names.index(a)]
    return index


def marginal_cells(schema: Schema, subset: tuple[str, ...]) -> int:
    return math.prod(int(schema[a].size) for a in subset)


def draw_queries(schema: Schema, digits: np.ndarray, rng: np.random.Generator,
                 per_size: int = QUERIES_PER_SIZE) -> list[Query]:
    """``per_size`` equality queries over 1, 2 and 3 attributes each: the
    attributes drawn at random, the values those of a random row (so every
    query selects at least one tuple), as (subset in schema order, cell)."""
    queries = []
    for size in (1, 2, 3):
        for _ in range(per_size):
            chosen = sorted(rng.choice(len(schema.names), size, replace=False))
            subset = tuple(schema.names[i] for i in chosen)
            row = digits[rng.integers(len(digits))][None, :]
            queries.append((subset, int(cell_index(schema, row, subset)[0])))
    return queries


def workload(schema: Schema, queries: list[Query]) -> tuple[list[tuple[str, ...]], np.ndarray]:
    """The distinct subsets the queries use, and each query's position in the
    concatenation of those subsets' marginals."""
    subsets = sorted({s for s, _ in queries}, key=lambda s: (len(s), s))
    offsets = np.cumsum([0] + [marginal_cells(schema, s) for s in subsets])
    where = {s: offsets[i] for i, s in enumerate(subsets)}
    return subsets, np.array([where[s] + c for s, c in queries], dtype=np.int64)


def true_marginals(schema: Schema, digits: np.ndarray,
                   subsets: list[tuple[str, ...]]) -> np.ndarray:
    return np.concatenate([np.bincount(cell_index(schema, digits, s),
                                       minlength=marginal_cells(schema, s)) for s in subsets])


def opendp_marginals(q: int,
                     epsilon: float) -> tuple[Callable[[list[int]], list[int]], dict[str, float]]:
    """OpenDP's discrete Laplace on the concatenated counts of q marginals at ε
    in total: a replacement moves each marginal by at most 2 in L1, so the
    vector by 2q (d_in = 2q; one call composes the q releases of ε/q each),
    and OpenDP's own privacy map must give at most ε there."""
    dp = require("opendp.prelude", "the DP yardstick's OpenDP baseline", extra="yardstick")
    dp.enable_features("contrib")
    scale = 2 * q / epsilon
    meas = dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T=dp.i64)),
                             dp.l1_distance(T=dp.i64), scale=scale)
    stated = meas.map(2 * q)
    if stated > epsilon * (1 + 1e-9):
        raise ParameterError(f"OpenDP states ε = {stated} for {q} marginals at scale {scale}, "
                             f"above the requested {epsilon}")
    return meas, {"scale": scale, "marginals": q, "sensitivity_l1": 2 * q,
                  "epsilon_stated_by_opendp": stated}


def alphabeta_by_distribution(mech: AlphaBeta, truth: np.ndarray, query_cells: np.ndarray,
                              rng: np.random.Generator) -> np.ndarray:
    """αβ's estimate of each query with its count in V drawn from the exact
    distribution the view gives it (no view materialised)."""
    a, b = mech.alpha, mech.beta
    present = rng.binomial(truth, a + b)
    absent = rng.binomial(query_cells - truth, b)
    return np.asarray((present + absent - b * query_cells) / a, dtype=np.float64)


def calibrated(name: str, schema: Schema, n: int,
               epsilon: float | None) -> tuple[AlphaBeta | FRAPP | None, str | None]:
    """The mechanism for ε (the default (k, γ) calibration when None), or the
    ParameterError's message where it cannot be reached."""
    cls = AlphaBeta if name == "alphabeta" else FRAPP
    try:
        if epsilon is None:
            return cls.for_privacy(schema, n=n, gamma=GAMMA, k=K), None
        return cls.for_privacy(schema, n=n, gamma=GAMMA, epsilon=epsilon), None
    except ParameterError as exc:
        return None, str(exc)


def errors_summary(err: np.ndarray, sizes: np.ndarray) -> Summary:
    """RMSE and median |error| over queries × runs, overall and per query size."""
    def stats(e: np.ndarray) -> Summary:
        return {"rmse": float(np.sqrt(np.mean(e ** 2))),
                "median_abs_error": float(np.median(np.abs(e)))}
    return stats(err) | {"by_attributes": {str(k): stats(err[:, sizes == k])
                                           for k in (1, 2, 3)}}


def run_table(name: str, seed: int | None, runs: int, max_view_rows: int) -> Summary:
    df, schema = TABLES[name]()
    distinct, digits = distinct_tuples(df, schema)
    n, m = len(distinct), schema.size
    rng = np.random.default_rng(seed)
    queries = draw_queries(schema, digits, rng)
    subsets, position = workload(schema, queries)
    counts = true_marginals(schema, digits, subsets)
    truth = counts[position]
    counts = counts.tolist()  # OpenDP's input, converted once
    sizes = np.array([len(s) for s, _ in queries])
    query_cells = np.array([m // marginal_cells(schema, s) for s, _ in queries], dtype=np.int64)
    default = AlphaBeta.for_privacy(schema, n=n, gamma=GAMMA, k=K)
    default_eps = default.guarantee()[EPSILON_CLAIM].epsilon
    if default_eps is None:
        raise ParameterError(f"{name}: the default αβ calibration states no ε")
    cells = []
    for epsilon in sorted({*EPSILONS, default_eps}):
        is_default = epsilon == default_eps
        for mechanism in MECHANISMS:
            cell: Summary = {"epsilon": epsilon, "mechanism": mechanism,
                             "default_calibration": is_default}
            estimates: list[np.ndarray] = []
            if mechanism == "opendp":
                meas, facts = opendp_marginals(len(subsets), epsilon)
                for _ in range(runs):
                    estimates.append(np.asarray(meas(counts), dtype=np.float64)[position])
                cell |= {"status": "ok", "method": "OpenDP discrete Laplace on the marginals",
                         "stated_epsilon": facts["epsilon_stated_by_opendp"], "parameters": facts}
            else:
                mech, reason = calibrated(mechanism, schema, n,
                                          None if is_default and mechanism == "alphabeta"
                                          else epsilon)
                if mech is None:
                    cells.append(cell | {"status": "not reachable", "reason": reason})
                    continue
                facts, estimates = _measure(mech, distinct, subsets, position, truth,
                                            query_cells, runs, max_view_rows, rng)
                cell |= facts
            cell |= errors_summary(np.array(estimates) - truth, sizes)
            cells.append(cell)
    # A domain derived from the data voids every release's ε here, OpenDP's too (its
    # categories are the same domain); the guarantees say so, and so does the summary.
    return {"n_records": len(df), "n": n, "m": m, "default_epsilon": default_eps,
            "derived_domains": list(schema.derived),
            "queries": len(queries), "marginals": len(subsets),
            "query_truth": {"min": int(truth.min()), "median": float(np.median(truth)),
                            "max": int(truth.max())},
            "cells": cells}


def _measure(mech: AlphaBeta | FRAPP, distinct: pd.DataFrame, subsets: list[tuple[str, ...]],
             position: np.ndarray, truth: np.ndarray, query_cells: np.ndarray, runs: int,
             max_view_rows: int, rng: np.random.Generator) -> tuple[Summary, list[np.ndarray]]:
    """A calibrated αβ or FRAPP mechanism's facts and its estimates of the
    queries over ``runs`` views (an αβ view above ``max_view_rows``: each
    query's count in V drawn from its exact distribution)."""
    n, m = len(distinct), mech.schema.size
    claim = mech.guarantee()[EPSILON_CLAIM]
    if isinstance(mech, AlphaBeta):
        params = {"alpha": mech.alpha, "beta": mech.beta, "d": mech.d}
        view_rows = (mech.alpha + mech.beta) * n + mech.beta * (m - n)
    else:
        params = {"gamma_frapp": mech.gamma_frapp, "d": mech.d}
        view_rows = float(n)
    drawn = isinstance(mech, AlphaBeta) and view_rows > max_view_rows
    facts: Summary = {
        "status": "ok", "parameters": params, "stated_epsilon": claim.epsilon,
        "epsilon_holds": claim.holds, "expected_view_rows": float(view_rows),
        "method": (f"count in V drawn from its exact distribution (view of {view_rows:,.0f} "
                   f"rows above {max_view_rows:,})" if drawn else "published view")}
    estimates = []
    for r in range(runs):
        if drawn and isinstance(mech, AlphaBeta):
            estimates.append(alphabeta_by_distribution(mech, truth, query_cells, rng))
            continue
        with warnings.catch_warnings():
            # the usefulness warning says what the errors below measure
            warnings.simplefilter("ignore", UsefulnessWarning)
            view = mech.publish(distinct, seed=int(rng.integers(2 ** 63)))
        if not isinstance(view, PublishedView):  # pandas in, one view out (not Dask)
            raise TypeError(f"expected a PublishedView, got {type(view).__name__}")
        if r == 0:
            facts["stated_epsilon"] = view.guarantee()[EPSILON_CLAIM].epsilon
        estimates.append(view.estimate_marginals_arrays(subsets).estimate[position])
    return facts, estimates


def run(out: str | Path, seed: int | None = 0, quick: bool = False,
        overwrite: bool = False) -> Summary:
    """Run the yardstick, write yardstick.png and summary.json to ``out`` and
    return the summary. ``quick``: 2 runs per cell and αβ views above 2M rows
    drawn by distribution (the full run: 10 runs, views up to 20M rows)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    check_outputs(out, OUTPUTS, overwrite=overwrite)
    require("opendp", "the DP yardstick's OpenDP baseline", extra="yardstick")
    runs, max_view_rows = (2, 2_000_000) if quick else (10, 20_000_000)
    summary = {
        "seed": seed, "quick": quick, "runs": runs, "max_view_rows": max_view_rows,
        "k": K, "gamma": GAMMA, "queries_per_size": QUERIES_PER_SIZE,
        "neighbours": "replacement of one tuple (n is published by every release); the "
                      "table is the set of distinct tuples",
        "opendp": "each of the workload's q marginals whole, discrete Laplace (OpenDP 0.16 "
                  "count_by_categories >> laplace) at ε/q, scale 2q/ε (a replacement moves "
                  "a marginal by 2 in L1); sequential composition gives ε; noise from "
                  "OpenDP's unseeded system randomness; counts unclamped",
        "tables": {name: run_table(name, seed, runs, max_view_rows) for name in TABLES},
    }
    save_figure(_plot(summary), out / "yardstick.png", overwrite=overwrite, dpi=110)
    write_text(out / "summary.json", json.dumps(summary, indent=2) + "\n", overwrite=overwrite)
    return summary


LABELS = {"alphabeta": "αβ", "frapp": "FRAPP", "opendp": "OpenDP discrete Laplace"}


def markdown(summary: Summary) -> str:
    """RMSE (median |error|) per table, ε and mechanism, as a Markdown table."""
    lines = ["| table | ε | αβ | FRAPP | OpenDP |", "|---|---|---|---|---|"]
    for name, table in summary["tables"].items():
        by_eps: dict[float, dict[str, str]] = {}
        for c in table["cells"]:
            text = (f"{c['rmse']:,.1f} ({c['median_abs_error']:,.1f})" if c["status"] == "ok"
                    else "not reachable")
            by_eps.setdefault(c["epsilon"], {})[c["mechanism"]] = text
        for eps, row in by_eps.items():
            shown = f"{eps:.3g}" + (" (k=10, γ=0.2)" if eps == table["default_epsilon"] else "")
            lines.append(f"| {name} (n={table['n']:,}) | {shown} | "
                         + " | ".join(row[m] for m in MECHANISMS) + " |")
    return "\n".join(lines)


def _plot(summary: Summary) -> Figure:
    from matplotlib.figure import Figure  # no pyplot: no GUI backend to set up

    tables = summary["tables"]
    fig = Figure(figsize=(5 * len(tables), 4.6))
    axes = fig.subplots(1, len(tables), squeeze=False)[0]
    fig.subplots_adjust(left=0.06, right=0.99, bottom=0.13, top=0.82, wspace=0.22)
    for ax, (name, table) in zip(axes, tables.items(), strict=True):
        for mechanism, colour in zip(MECHANISMS, ("C0", "C1", "C2"), strict=True):
            ok = [c for c in table["cells"] if c["mechanism"] == mechanism
                  and c["status"] == "ok"]
            eps = [c["epsilon"] for c in ok]
            ax.plot(eps, [c["rmse"] for c in ok], "-", color=colour)
            # hollow: αβ measured by its count's exact distribution, the view being too large
            drawn = [c["method"] != "published view" and mechanism == "alphabeta" for c in ok]
            ax.scatter(eps, [c["rmse"] for c in ok], color=colour, zorder=3,
                       facecolors=["none" if d else colour for d in drawn],
                       label=f"{LABELS[mechanism]} RMSE")
            ax.plot(eps, [max(c["median_abs_error"], 1e-2) for c in ok], "x--", color=colour,
                    alpha=0.7, label=f"{LABELS[mechanism]} median |error|")
            for c in table["cells"]:
                if c["mechanism"] == mechanism and c["status"] != "ok":
                    ax.annotate("not reachable", (c["epsilon"], 1), color=colour,
                                fontsize=7, rotation=90)
        ax.axvline(table["default_epsilon"], color="grey", lw=0.8, ls=":")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(EPSILONS, [f"{e:g}" for e in EPSILONS])
        ax.minorticks_off()
        ax.set_xlabel(f"ε (replace one tuple); dotted: αβ's default (k = 10, γ = 0.2), "
                      f"ε = {table['default_epsilon']:.3g}", fontsize=8)
        ax.set_title(f"{name}: n = {table['n']:,} distinct tuples, "
                     f"{table['queries']} queries on {table['marginals']} marginals", fontsize=9)
    axes[0].set_ylabel("error of a count (queries × runs)")
    axes[0].legend(fontsize=7)
    fig.suptitle("The DP yardstick: 1-, 2- and 3-attribute counts at the same ε, αβ and FRAPP "
                 f"views against OpenDP's discrete Laplace marginals ({summary['runs']} runs)\n"
                 "hollow: αβ's count in V drawn from its exact distribution, the view too large",
                 fontsize=10)
    return fig
