"""The √n threshold of Dinur–Nissim (PODS 2003), measured.

For each database size n and each perturbation scaled by E, a random n-bit
database answers random subset queries and each decoder reconstructs it; the
fraction of bits recovered is plotted against E/√n. Perturbations at
magnitude E:

- ``bounded``: uniform noise on [−E, E];
- ``bounded-adversarial``: noise ±E towards |q|/2 (the whole band, Sec. 2.1);
- ``rounding``: Sec. 3.3's answer |q|/2 within E of it;
- ``laplace``: discrete Laplace of scale E/√2 (standard deviation ≈ E; no bound).

Decoders: least squares over t = n (ln n)² random queries for every n;
Theorem 3's LP (same queries, bound E) solved two ways: by HiGHS (``lp``;
for ``laplace`` the LP is told E and falls back to the least-excess LP when
that bound fails) for n ≤ ``lp_max_n`` because HiGHS takes minutes per LP
beyond n = 256, and by the first-order method (``first-order``: a point of
the LP's feasible set, or the closest it gets, :func:`~privpub.attacks.decoders.band_fit`)
for n ≤ ``first_order_max_n``.

The summary also holds each decoder against the paper's private settings:
Rounding at E = √n (ln n)^1.1, Theorem 5's binomial noise with T = n, μ = 9,
and the CD model at δ = 0.1 (which leaks the private copy, so ≈ 1/2 + δ).

Theorem 5's T-bounded adversary: the confidence walk conf_ℓ
(:mod:`privpub.attacks.walk`) simulated for T steps at R = ratio · T coins,
the fraction of walks that stay below δ′ (δ = 0.1) in ``walk.png``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from privpub.attacks import (
    BinomialNoise,
    BoundedNoise,
    CDModel,
    LaplaceNoise,
    Rounding,
    SubsetSumDatabase,
    default_queries,
    lp_reconstruct,
    lstsq_reconstruct,
)
from privpub.attacks.walk import confidence_walk, delta_prime, stays_private
from privpub.core.files import check_outputs, save_figure, write_text
from privpub.core.seeding import SeedLike, resolve_seed

SIZES = (128, 256, 512, 1024)
RATIOS = (0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
MECHANISMS = ("bounded", "bounded-adversarial", "rounding", "laplace")
#: Theorem 5's walk: coins per allowed query R/T, privacy level δ, walks per point.
WALK_RATIOS = (0.1, 1.0, 10.0, 100.0, 1000.0)
WALK_DELTA = 0.1


def perturbation(name: str, E: float):
    """The sweep's perturbation ``name`` at magnitude E."""
    return {"bounded": lambda: BoundedNoise(E),
            "bounded-adversarial": lambda: BoundedNoise(E, adversarial=True),
            "rounding": lambda: Rounding(E),
            "laplace": lambda: LaplaceNoise(E / math.sqrt(2))}[name]()


def paper_settings(n: int) -> dict[str, tuple]:
    """The paper's private settings for n bits: (perturbation, bound handed to the LP)."""
    binomial = BinomialNoise(T=n)
    return {"rounding-paper": (Rounding.paper(n), Rounding.paper(n).E),
            "binomial-paper": (binomial, binomial.small_size(n)),
            "cd-model-0.1": (CDModel(0.1), 0.0)}


#: The files :func:`run` writes in its output directory.
OUTPUTS = ("reconstruction.png", "walk.png", "summary.json")


def run(out: str | Path, seed: SeedLike = None, sizes=SIZES, ratios=RATIOS,
        lp_max_n: int = 256, first_order_max_n: int = 1024, quick: bool = False,
        overwrite: bool = False) -> dict:
    """Run the sweep, write ``reconstruction.png``, ``walk.png`` and ``summary.json`` to
    ``out`` (existing files are refused unless ``overwrite``).

    ``quick`` shrinks it to n ∈ {32, 64}, four ratios and 8n queries (for tests).
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    check_outputs(out, OUTPUTS, overwrite=overwrite)  # refused now, not after the run
    source = resolve_seed(seed)
    if quick:
        sizes, ratios, lp_max_n, first_order_max_n = (32, 64), (0.125, 0.5, 2.0, 8.0), 64, 64
    results: list[dict] = []
    paper: list[dict] = []
    steps = len(sizes) * (len(ratios) * len(MECHANISMS) + 3)
    with tqdm(total=steps, desc="reconstruction", unit="db", disable=None) as bar:
        for n in sizes:
            t = 8 * n if quick else default_queries(n)
            d = source.derive(f"bits n={n}").uniform(n) < 0.5

            for name in MECHANISMS:
                for ratio in ratios:
                    E = ratio * math.sqrt(n)
                    row = _attack(d, t, perturbation(name, E), E,
                                  source.derive(f"{name} E={E} n={n}"), lp=n <= lp_max_n,
                                  first_order=n <= first_order_max_n)
                    bar.update()
                    results.append({"n": n, "queries": t, "mechanism": name,
                                    "E_over_sqrt_n": ratio, "E": E, **row})
            for label, (mech, bound) in paper_settings(n).items():
                paper.append({"n": n, "queries": t, "setting": label, "bound": bound,
                              "parameters": mech.parameters(),
                              **_attack(d, t, mech, bound, source.derive(f"{label} n={n}"),
                                        lp=n <= lp_max_n, first_order=n <= first_order_max_n)})
                bar.update()
    T, walks = (100, 50) if quick else (1000, 200)
    walk = {str(r): stays_private(confidence_walk(int(r * T), T, walks,
                                                  seed=source.derive(f"walk {r}")), WALK_DELTA)
            for r in WALK_RATIOS}
    summary = {"sizes": list(sizes), "ratios": list(ratios), "lp_max_n": lp_max_n,
               "first_order_max_n": first_order_max_n,
               "queries": "8n" if quick else "n (ln n)^2", "seed_policy": source.policy,
               "sweep": results, "paper_settings": paper,
               "threshold": threshold(results),
               "theorem5_walk": {"T": T, "walks": walks, "delta": WALK_DELTA,
                                 "delta_prime": delta_prime(WALK_DELTA),
                                 "fraction_private_by_R_over_T": walk}}
    write_text(out / "summary.json", json.dumps(summary, indent=2), overwrite=overwrite)
    save_figure(_plot(results, sizes), out / "reconstruction.png", overwrite=overwrite, dpi=100)
    save_figure(_plot_walk(summary["theorem5_walk"]), out / "walk.png", overwrite=overwrite,
                dpi=100)
    return summary


def _attack(d: np.ndarray, t: int, mech, bound: float, source, lp: bool,
            first_order: bool) -> dict[str, float]:
    """Fraction of ``d`` each decoder recovers from t random queries answered through ``mech``."""
    decoders = {"lstsq": lambda db, q: lstsq_reconstruct(db, t, seed=q)}
    if lp:
        decoders["lp"] = lambda db, q: lp_reconstruct(db, bound, t, seed=q, solver="highs")
    if first_order:
        decoders["first-order"] = lambda db, q: lp_reconstruct(db, bound, t, seed=q,
                                                               solver="first-order")
    row = {}
    for name, decode in decoders.items():
        # A fresh database with the same randomness: every decoder sees the same answers.
        db = SubsetSumDatabase(d, mech, seed=source.derive("database"))
        row[name] = db.agreement(decode(db, source.derive("queries")).bits)
    return row


def threshold(results: list[dict], level: float = 0.9) -> dict[str, dict[str, float | None]]:
    """Per mechanism and n, the largest E/√n at which least squares still recovers ≥ level."""
    found: dict[str, dict[str, float | None]] = {}
    for r in results:
        per = found.setdefault(r["mechanism"], {}).setdefault(str(r["n"]), None)
        if r["lstsq"] >= level and (per is None or r["E_over_sqrt_n"] > per):
            found[r["mechanism"]][str(r["n"])] = r["E_over_sqrt_n"]
    return found


def _plot(results: list[dict], sizes) -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(MECHANISMS), figsize=(4 * len(MECHANISMS), 3.6),
                             sharey=True)
    colours = plt.cm.viridis(np.linspace(0, 0.85, len(sizes)))
    for ax, name in zip(axes, MECHANISMS, strict=True):
        for colour, n in zip(colours, sizes, strict=True):
            rows = [r for r in results if r["mechanism"] == name and r["n"] == n]
            x = [r["E_over_sqrt_n"] for r in rows]
            ax.plot(x, [r["lstsq"] for r in rows], "-o", color=colour, ms=3,
                    label=f"n={n} lstsq")
            if "lp" in rows[0]:
                ax.plot(x, [r["lp"] for r in rows], "--s", color=colour, ms=3,
                        label=f"n={n} LP")
            if "first-order" in rows[0]:
                ax.plot(x, [r["first-order"] for r in rows], ":^", color=colour, ms=3,
                        label=f"n={n} first-order")
        ax.set_xscale("log", base=2)
        ax.axhline(0.5, color="grey", lw=0.5)
        ax.set_title(name)
        ax.set_xlabel("E / √n")
    axes[0].set_ylabel("fraction of bits recovered")
    axes[-1].legend(fontsize=7)
    fig.suptitle("Dinur–Nissim reconstruction against perturbation magnitude")
    fig.tight_layout()
    return fig
    plt.close(fig)


def _plot_walk(walk: dict) -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ratios = [float(r) for r in walk["fraction_private_by_R_over_T"]]
    fig, ax = plt.subplots(figsize=(5, 3.6))
    ax.plot(ratios, list(walk["fraction_private_by_R_over_T"].values()), "-o")
    ax.set_xscale("log")
    ax.set_xlabel("coins per allowed query, R / T")
    ax.set_ylabel("walks with |conf| < δ′ for all ℓ ≤ T")
    ax.set_title(f"Theorem 5: T = {walk['T']}, δ = {walk['delta']}")
    fig.tight_layout()
    return fig
    plt.close(fig)
