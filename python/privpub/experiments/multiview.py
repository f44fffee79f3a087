"""Several αβ views of Adult with one guarantee: Algorithm 7, measured and calibrated.

Sec. 4.4.1 of the αβ paper says Algorithm 7 "allows us to publish multiple
views while providing the same privacy". On Adult at d = 10n/m, γ = 0.2:

- ``posterior.png``: the exact worst cases over v = 1..20 planned (and
  published) views (:mod:`privpub.alphabeta.sequence`) for each single-view
  calibration run through Algorithm 7 unchanged, and for α, β calibrated
  for v views (:func:`~privpub.alphabeta.sequence.calibrate_views`): the
  d-independent posterior (positive leakage), the least Pr[t|V]/Pr[t]
  against d/γ (negative leakage) and the d-exclusive posterior. Points:
  the worst pattern's posterior with every probability on its path measured
  on published Adult views (the fraction of I's tuples, of V' − I's and of
  fresh domain tuples each view shows), ± 1 standard error (delta method);
- ``cost.png``, ``cost.md``: the per-query error bound (ρ√n at ε = 0.05,
  Bernstein) of the first view and of the worst view in the sequence
  (with E|V'| for the union of the earlier views), for the calibrated
  sequences, against one view at the same (d, γ) and calibration;
- an audit: :func:`~privpub.attacks.audit_presence` on 5 independent views
  (the single-view default calibration, published 5 times) and on the 5
  views of a sequence calibrated for v = 5, at prior d;
- ``summary.json``: all of the above.
"""

from __future__ import annotations

import functools
import json
import math
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from privpub.alphabeta import AlphaBeta, MultiViewPublisher
from privpub.alphabeta.accounting import calibrate
from privpub.alphabeta.multiview import MultiViewStep
from privpub.alphabeta.sequence import calibrate_views, sequence_leakage, view_probabilities
from privpub.attacks import audit_presence
from privpub.core.errors import UsefulnessWarning
from privpub.core.files import check_outputs, save_figure, write_text
from privpub.core.seeding import SeedLike, resolve_seed
from privpub.datasets import load_adult
from privpub.domain.schema import Schema

#: The files :func:`run` writes in its output directory.
OUTPUTS = ("posterior.png", "cost.png", "cost.md", "summary.json")
K, GAMMA, FAILURE = 10, 0.2, 0.05
MAX_VIEWS = 20
#: v at which sequences are published and measured (``quick``: the first two).
SIMULATED = (2, 5, 10, 20)
AUDIT_VIEWS = 5
#: Okabe–Ito, a palette readable with the common colour-vision deficiencies.
PALETTE = {"exclusive": "#0072B2", "independent": "#D55E00", "half": "#009E73",
           "sec4.2": "#CC79A7"}


@functools.cache
def _calibrated(d: float, views: int, calibration: str) -> tuple[float, float]:
    return calibrate_views(d, GAMMA, views, calibration)  # a numerical search: solved once


def schemes(d: float) -> dict[str, Any]:
    """Each scheme: v ↦ (α, β). Single-view calibrations ignore v (Algorithm 7 as
    the paper runs it); "calibrated" ones solve for v views."""
    out: dict[str, Any] = {}
    for name in ("exclusive", "independent", "half", "sec4.2"):
        out[f"{name}, one-view α, β"] = (name, lambda v, c=name: calibrate(d, GAMMA, c))
    for name in ("exclusive", "independent"):
        out[f"{name}, calibrated for v"] = (name, lambda v, c=name: _calibrated(d, v, c))
    return out


def exact_rows(d: float) -> dict[str, list[dict[str, float]]]:
    """Worst cases after all v planned views, v = 1..MAX_VIEWS, per scheme."""
    rows: dict[str, list[dict[str, float]]] = {}
    for label, (_, params) in schemes(d).items():
        rows[label] = []
        for v in range(1, MAX_VIEWS + 1):
            alpha, beta = params(v)
            leak = sequence_leakage(alpha, beta, d, v)
            rows[label].append({
                "views": v, "alpha": alpha, "beta": beta,
                "independent_posterior": leak.independent_posterior,
                "independent_ratio": leak.independent_ratio,
                "exclusive_posterior": leak.exclusive_posterior,
                "independent_private": leak.independent_private(GAMMA),
                "exclusive_private": leak.exclusive_private(GAMMA)})
    return rows


def measured_worst(views: list[np.ndarray], members: np.ndarray, m: int, d: float
                   ) -> tuple[float, float]:
    """The posterior of "shown in every view" with each probability on its path
    measured on the published ``views`` (sorted codes), and its standard error.

    L̂ = (ŝ_1/p̂_1)·Π_{i≥2} ŝ_i/p̂'_i with ŝ_i the share of I's tuples in V_i,
    p̂_1 the share of the other domain tuples in V_1 and p̂'_i that of V' − I in
    V_i; var log L̂ ≈ Σ (1 − p̂)/(n p̂) over the shares (delta method)."""
    log_l, var = 0.0, 0.0
    union = np.zeros(0, dtype=members.dtype)
    for i, view in enumerate(views):
        real = np.isin(view, members, assume_unique=True)
        shares = [(int(real.sum()), len(members))]
        if i == 0:
            shares.append((int((~real).sum()), m - len(members)))
        else:
            previous = np.setdiff1d(union, members, assume_unique=True)
            shares.append((int(np.isin(view, previous, assume_unique=True).sum()), len(previous)))
        for sign, (k, n) in zip((1, -1), shares, strict=True):
            p = k / n
            log_l += sign * math.log(p)
            var += (1 - p) / (n * p)
        union = np.union1d(union, view)
    odds = d / (1 - d) * math.exp(log_l)
    post = odds / (1 + odds)
    return post, post * (1 - post) * math.sqrt(var)


def simulate(df: Any, schema: Schema, d: float, source: Any, quick: bool) -> dict[str, list]:
    """Publish a sequence per scheme and v in SIMULATED; the measured worst posterior."""
    members = np.unique(schema.encode(df)).astype(np.uint64)
    out: dict[str, list] = {}
    labels = ("exclusive, one-view α, β", "half, one-view α, β", "exclusive, calibrated for v",
              "independent, calibrated for v")
    for label in labels:
        _, params = schemes(d)[label]
        out[label] = []
        for v in SIMULATED[:2] if quick else SIMULATED:
            alpha, beta = params(v)
            # The worst pattern is "every view" when β ≤ 1 − e^{−1/v} (sequence module).
            assert beta <= 1 - math.exp(-1 / v), (label, v, beta)
            pub = MultiViewPublisher(AlphaBeta(schema, alpha, beta, n=len(members), d=d,
                                               gamma=GAMMA), v)
            seed = source.derive(f"{label} v={v}")
            views = [np.sort(pub.publish(members, seed=seed.derive(str(i)),
                                         duplicates="set").codes.astype(np.uint64))
                     for i in range(v)]
            post, se = measured_worst(views, members, schema.size, d)
            out[label].append({"views": v, "posterior": post, "stderr": se,
                               "exact": sequence_leakage(alpha, beta, d, v)
                               .independent_posterior})
    return out


def cost_rows(d: float, n: int, m: int, schema: Schema) -> list[dict[str, Any]]:
    """Per v and calibration: the first view's and the worst view's error bound,
    and their ratios to one view at the same calibration."""
    rows = []
    for name in ("exclusive", "independent"):
        # One view's bound by the same (Bernstein, split-estimator) formula as the views'.
        single = MultiViewStep(AlphaBeta(schema, *calibrate(d, GAMMA, name), n=n,
                                         failure_probability=FAILURE), 1, 1).error_bound()
        for v in range(1, MAX_VIEWS + 1):
            alpha, beta = _calibrated(d, v, name)
            mech = AlphaBeta(schema, alpha, beta, n=n, failure_probability=FAILURE)
            bounds = [MultiViewStep(mech, i, v, round(expected_union(alpha, beta, v, i, n, m)))
                      .error_bound() for i in range(1, v + 1)]
            rows.append({"calibration": name, "views": v, "alpha": alpha, "beta": beta,
                         "single_view_bound": single, "first_view_bound": bounds[0],
                         "worst_view_bound": max(bounds),
                         "first_view_ratio": bounds[0] / single,
                         "worst_view_ratio": max(bounds) / single})
    return rows


def expected_union(alpha: float, beta: float, v: int, i: int, n: int, m: int) -> float:
    """E|V_1 ∪ … ∪ V_{i−1}| for I unchanged with n tuples: each tuple of I is in it
    with 1 − (1 − s)^{i−1}, each other tuple with 1 − Π_{j<i}(1 − p_j)."""
    s = alpha + beta
    never = math.prod(1 - view_probabilities(alpha, beta, v, j)[2] for j in range(1, i))
    return n * (1 - (1 - s) ** (i - 1)) + (m - n) * (1 - never)


def audit_rows(df: Any, schema: Schema, source: Any, quick: bool) -> dict[str, Any]:
    """audit_presence at prior d on 5 independent views and on 5 calibrated views."""
    n = len(df)
    single = AlphaBeta.for_privacy(schema, n=n, gamma=GAMMA, k=K)
    independent = [single.publish(df, seed=source.derive(f"independent {i}"), duplicates="set")
                   for i in range(AUDIT_VIEWS)]
    pub = MultiViewPublisher.for_privacy(schema, n=n, gamma=GAMMA, k=K, max_views=AUDIT_VIEWS)
    calibrated = [pub.publish(df, seed=source.derive(f"calibrated {i}"), duplicates="set")
                  for i in range(AUDIT_VIEWS)]
    out = {}
    for label, views in (("independent views, one-view calibration", independent),
                         ("Algorithm 7, calibrated for 5 views", calibrated)):
        result = audit_presence(views, df, n_candidates=64, rounds=400 if quick else 1500,
                                seed=source.derive("audit"))
        out[label] = {"views": len(views), "prior": result.prior, "named": result.named,
                      "correct": result.correct, "posterior": result.posterior,
                      "interval": result.interval, "gamma": result.gamma,
                      "breaks_promise": result.breaks_promise, "text": str(result)}
    return out


def run(out: str | Path, seed: SeedLike = None, quick: bool = False,
        overwrite: bool = False) -> dict:
    """Write :data:`OUTPUTS` to ``out`` (existing files refused unless ``overwrite``);
    ``quick`` publishes sequences for v = 2, 5 only and audits 400 rounds."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    check_outputs(out, OUTPUTS, overwrite=overwrite)
    source = resolve_seed(seed)
    df, schema = load_adult()
    n, m = len(df), schema.size
    d = K * n / m
    with warnings.catch_warnings():  # later views' bounds are wide: cost.md says how wide
        warnings.simplefilter("ignore", UsefulnessWarning)
        simulated = simulate(df, schema, d, source, quick)
        audits = audit_rows(df, schema, source, quick)
    summary = {"n": n, "m": m, "d": d, "gamma": GAMMA, "k": K, "seed_policy": source.policy,
               "exact": exact_rows(d), "simulated": simulated,
               "cost": cost_rows(d, n, m, schema), "audit": audits}
    write_text(out / "summary.json", json.dumps(summary, indent=2), overwrite=overwrite)
    write_text(out / "cost.md", markdown(summary), overwrite=overwrite)
    save_figure(_plot_posterior(summary), out / "posterior.png", overwrite=overwrite, dpi=100)
    save_figure(_plot_cost(summary), out / "cost.png", overwrite=overwrite, dpi=100)
    return summary


#: A marker per calibration, so that curves that coincide (one-view "half" and
#: "independent" share s/β, hence every positive-leakage value) stay visible.
MARKERS = {"exclusive": "o", "independent": "^", "half": "s", "sec4.2": "D"}


def _style(label: str) -> dict[str, Any]:
    name = label.split(",")[0]
    calibrated = "calibrated" in label
    return {"color": PALETTE[name], "ls": "-" if calibrated else "--", "marker": MARKERS[name],
            "ms": 3 if calibrated else 5, "mfc": PALETTE[name] if calibrated else "none"}


def _plot_posterior(summary: dict) -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    d, gamma = summary["d"], summary["gamma"]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.4))
    for label, rows in summary["exact"].items():
        v = [r["views"] for r in rows]
        axes[0].plot(v, [r["independent_posterior"] for r in rows], label=label, **_style(label))
        axes[1].plot(v, [max(r["independent_ratio"], 1e-300) for r in rows], label=label,
                     **_style(label))
        axes[2].plot(v, [r["exclusive_posterior"] for r in rows], label=label, **_style(label))
    for label, rows in summary["simulated"].items():
        axes[0].errorbar([r["views"] for r in rows], [r["posterior"] for r in rows],
                         yerr=[r["stderr"] for r in rows], fmt="x", color=_style(label)["color"],
                         capsize=3, label=f"measured on Adult views ({label})")
    for ax in (axes[0], axes[2]):
        ax.axhline(gamma, color="black", lw=0.8, ls=":", label=f"γ = {gamma}")
        ax.set_ylim(0, 1.02)
        ax.set_ylabel("worst-case posterior Pr[t | V_1..V_v] (probability)")
    axes[1].axhline(d / gamma, color="black", lw=0.8, ls=":", label=f"d/γ = {d / gamma:.2g}")
    axes[1].set_yscale("log")
    axes[1].set_ylim(1e-8, 2)
    axes[1].set_ylabel("least Pr[t | V] / Pr[t] (ratio, log scale)")
    axes[0].set_title("d-independent, positive leakage")
    axes[1].set_title("d-independent, negative leakage (t in no view)")
    axes[2].set_title("d-exclusive, positive leakage")
    for ax in axes:
        ax.set_xlabel("views v planned and published (count)")
        ax.set_xticks(range(0, MAX_VIEWS + 1, 2))
    axes[0].legend(fontsize=6)
    fig.suptitle(f"Algorithm 7 on Adult, d = 10n/m = {d:.3g}: exact worst cases over every "
                 "inclusion pattern")
    fig.tight_layout()
    return fig


def _plot_cost(summary: dict) -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.4))
    for name in ("exclusive", "independent"):
        rows = [r for r in summary["cost"] if r["calibration"] == name]
        v = [r["views"] for r in rows]
        ax.plot(v, [r["first_view_ratio"] for r in rows], "-o", ms=3, color=PALETTE[name],
                label=f"{name}: first view")
        ax.plot(v, [r["worst_view_ratio"] for r in rows], "--s", ms=3, color=PALETTE[name],
                label=f"{name}: worst view of the sequence")
    ax.axhline(1, color="black", lw=0.8, ls=":")
    ax.set_yscale("log")
    ax.set_xlabel("views v the sequence is calibrated for (count)")
    ax.set_xticks(range(0, MAX_VIEWS + 1, 2))
    ax.set_ylabel("error bound / one view's (ratio, log scale)")
    ax.set_title("Cost of v private views on Adult: per-query error bound (ε = 0.05)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def markdown(summary: dict) -> str:
    """The error cost per v as a markdown table, then the audit."""
    lines = [f"Adult, d = 10n/m = {summary['d']:.4g}, γ = {summary['gamma']}; per-query error "
             "bound at ε = 0.05 (Bernstein), first view and worst view of the sequence "
             "(E|V'| for the earlier views' union), against one view at the same calibration.",
             "", "| calibration | v | α + β | β | first view bound | × one view | "
             "worst view bound | × one view |", "|---|---|---|---|---|---|---|---|"]
    for r in summary["cost"]:
        lines.append(f"| {r['calibration']} | {r['views']} | {r['alpha'] + r['beta']:.4f} | "
                     f"{r['beta']:.3g} | {r['first_view_bound']:,.0f} | "
                     f"{r['first_view_ratio']:.2f} | {r['worst_view_bound']:,.0f} | "
                     f"{r['worst_view_ratio']:.2f} |")
    lines += ["", "| audit (audit_presence, prior d) | named | in the table | posterior (95%) "
              "| interval above γ? |", "|---|---|---|---|---|"]
    for label, a in summary["audit"].items():
        lines.append(f"| {label} | {a['named']:,} | {a['correct']:,} | {a['posterior']:.3f} "
                     f"[{a['interval'][0]:.3f}, {a['interval'][1]:.3f}] | "
                     f"{'yes' if a['breaks_promise'] else 'no'} |")
    return "\n".join(lines)
