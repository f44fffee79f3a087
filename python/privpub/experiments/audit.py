"""Both sides of the αβ paper's Theorem 2.6, measured on Adult by auditing releases.

Theorem 2.6: if a release answers every counting query within ρ√n with
ρ = o(1) (with probability > 1/2), some tuple with prior ≤ n/m gets a
posterior ≥ 2/3. αβ at (10n/m, 0.2)-privacy answers within ρ√n for a
constant ρ and promises a posterior ≤ γ = 0.2 to every adversary with prior
≤ d = 10n/m. Here the release is made more and more accurate by shrinking β
(β_paper · {1, 10⁻¹, 10⁻², 10⁻³, 0}, α fixed), and each release is audited by
Dinur–Nissim reconstruction (:mod:`privpub.attacks.audit`, :mod:`privpub.attacks.presence`):

- ``presence``: Theorem 2.6's adversary, candidates each in the table with
  prior d; the posterior of the candidates the decoder names present, with
  its 95% interval, against γ and 2/3. The prior d = 10n/m lies outside the
  theorem's range (prior ≤ n/m, n the distinct tuples: ``theorem_prior``), so
  a posterior above 2/3 here is reported as ``"above-2/3-outside-range"``,
  never as the theorem's breach (at n/m a round holds ~0.008 candidates in
  the table, and an interval above 2/3 would take thousands of rounds per
  release);
- ``salary``: attribute inference of ``salary = '>50K'`` for targets whose
  quasi-identifier is unique, against the majority guess; this adversary's
  prior (the base rate) is outside what (d, γ)-privacy covers, at every β.

Releases keep the distinct tuples (``duplicates="set"``), so the guarantee
covers every tuple published. Each row also gives the release's per-query
error bound ρ√n (at ε = 0.05), which falls with β.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from privpub.alphabeta import AlphaBeta
from privpub.attacks import audit, audit_presence
from privpub.core.files import check_outputs, save_figure, write_text
from privpub.core.seeding import SeedLike, resolve_seed
from privpub.datasets import load_adult

#: β as a fraction of the paper's calibration, most private first.
BETA_FACTORS = (1.0, 1e-1, 1e-2, 1e-3, 0.0)


#: The files :func:`run` writes in its output directory.
OUTPUTS = ("audit.png", "summary.json")


def run(out: str | Path, seed: SeedLike = None, quick: bool = False,
        overwrite: bool = False) -> dict:
    """Audit Adult releases at shrinking β; write ``audit.png`` and ``summary.json`` to ``out``
    (existing files are refused unless ``overwrite``).

    ``quick`` audits 400 candidate rounds per release instead of enough for
    about 200 candidates in the table (for tests).
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    check_outputs(out, OUTPUTS, overwrite=overwrite)  # refused now, not after the run
    source = resolve_seed(seed)
    df, schema = load_adult()
    n = len(df)
    paper = AlphaBeta.for_privacy(schema, n=n, gamma=0.2, k=10)
    rows = []
    for factor in tqdm(BETA_FACTORS, desc="audits", unit="release", disable=None):
        mech = (paper if factor == 1.0
                else AlphaBeta(schema, paper.alpha, paper.beta * factor, n=n))
        release = mech.publish(df, seed=source.derive(f"release {factor}"), duplicates="set")
        # The same candidates, targets and queries for every release: only β changes.
        presence = audit_presence(release, df, prior=paper.d, rounds=400 if quick else None,
                                  seed=source.derive("presence"))
        salary = audit(release, "salary", df, secret_value=">50K",
                       seed=source.derive("salary"))
        rows.append({
            "beta_factor": factor, "alpha": mech.alpha, "beta": mech.beta,
            "error_bound": mech.error_bound(),
            "presence": {"prior": presence.prior, "candidates":
                         presence.rounds * presence.n_candidates, "present": presence.present,
                         "named": presence.named, "correct": presence.correct,
                         "posterior": presence.posterior, "interval": presence.interval,
                         "recall": presence.recall,
                         "within_theorem_range": presence.within_theorem_range,
                         "above_two_thirds": presence.above_two_thirds,
                         "breach": presence.breach, "verdict": presence.verdict},
            "salary": {"targets": salary.n_targets, "recovered": salary.recovered,
                       "interval": salary.interval, "majority_guess": salary.baseline},
        })
    summary = {"n": n, "m": schema.size, "d": paper.d, "gamma": 0.2,
               "tuples": presence.tuples, "theorem_prior": presence.theorem_prior,
               "breach_posterior": 2 / 3, "seed_policy": source.policy, "releases": rows}
    write_text(out / "summary.json", json.dumps(summary, indent=2), overwrite=overwrite)
    save_figure(_plot(summary), out / "audit.png", overwrite=overwrite, dpi=100)
    return summary


def _plot(summary: dict) -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = summary["releases"]
    labels = ["β" if r["beta_factor"] == 1 else "0" if r["beta_factor"] == 0
              else f"β·{r['beta_factor']:g}" for r in rows]
    x = np.arange(len(rows))
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    post = np.array([r["presence"]["posterior"] for r in rows])
    lo = np.array([r["presence"]["interval"][0] for r in rows])
    hi = np.array([r["presence"]["interval"][1] for r in rows])
    left.errorbar(x, post, yerr=[post - lo, hi - post], fmt="o-", capsize=3,
                  label="posterior of named candidates (95%)")
    left.axhline(summary["breach_posterior"], color="C3", ls="--",
                 label="2/3 (Theorem 2.6's, at priors ≤ n/m)")
    left.axhline(summary["gamma"], color="C2", ls=":", label="γ promised = 0.2")
    left.axhline(summary["d"], color="grey", lw=0.8, label=f"prior d = {summary['d']:.2g}")
    left.set_xticks(x, labels)
    left.set_ylim(0, 1.05)
    left.set_xlabel("β of the release (α fixed)")
    left.set_title("presence at prior d = 10·n/m (outside Theorem 2.6's ≤ n/m)")
    left.legend(fontsize=7)
    rec = np.array([r["salary"]["recovered"] for r in rows])
    rlo = np.array([r["salary"]["interval"][0] for r in rows])
    rhi = np.array([r["salary"]["interval"][1] for r in rows])
    right.errorbar(x, rec, yerr=[rec - rlo, rhi - rec], fmt="s-", capsize=3,
                   label="salary bits recovered (95%)")
    right.plot(x, [r["salary"]["majority_guess"] for r in rows], "k:",
               label="majority guess")
    right.set_xticks(x, labels)
    right.set_ylim(0.4, 1.02)
    right.set_xlabel("β of the release (α fixed)")
    right.set_title("attribute inference (prior: base rate, not covered)")
    right.legend(fontsize=7)
    fig.suptitle("Auditing αβ releases of Adult by Dinur–Nissim reconstruction")
    fig.tight_layout()
    return fig
    plt.close(fig)


def markdown(summary: dict) -> str:
    """The summary as a markdown table."""
    verdicts = {"breach": "breach (Theorem 2.6)",
                "above-2/3-outside-range": "above 2/3, prior outside n/m", "not-shown": "no"}
    lines = [f"d = {summary['d']:.3g} (prior per candidate), γ = {summary['gamma']}, "
             f"n = {summary['n']:,} records; Theorem 2.6's range: prior ≤ n/m = "
             f"{summary['tuples']:,}/{summary['m']:,} distinct tuples (≈ "
             f"{summary['theorem_prior']:.3g})",
             "", "| β | error bound ρ√n | candidates named | in the table | posterior (95%) | "
             "above 2/3? | salary recovered (95%) | majority guess |",
             "|---|---|---|---|---|---|---|---|"]
    for r in summary["releases"]:
        p, s = r["presence"], r["salary"]
        lines.append(f"| {r['beta']:.3g} | {r['error_bound']:,.0f} | {p['named']:,} | "
                     f"{p['correct']:,} | "
                     f"{p['posterior']:.3f} [{p['interval'][0]:.3f}, {p['interval'][1]:.3f}] | "
                     f"{verdicts[p['verdict']]} | {s['recovered']:.3f} "
                     f"[{s['interval'][0]:.3f}, {s['interval'][1]:.3f}] | "
                     f"{s['majority_guess']:.3f} |")
    return "\n".join(lines)
