"""The card's second section: who is protected.

Rendered from the release's ``guarantee()`` alone, claim by claim, so a card
never says "holds" where the guarantee does not, and a family that changes
its claims (the multi-view guarantee, say) changes its card with no edit
here. A mechanism that names adversaries with computable posteriors (αβ,
FRAPP: :class:`~privpub.core.capabilities.PosteriorCurves`) adds a plot of
each one's posterior over priors, from the family's own accounting, with the
release's prior bound d marked.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from privpub.core.capabilities import PosteriorCurves
from privpub.core.guarantee import Claim, Guarantee
from privpub.core.release import Release
from privpub.report import html, plots

#: Priors plotted: from this far below d (or 1e-9 without d) up to 0.99.
PRIOR_DECADES = 3
PRIOR_POINTS = 200


def verdict(claim: Claim) -> str:
    if not claim.holds:
        return '<span class="fails">does NOT hold</span>'
    if claim.weak:
        return '<span class="weak">holds only weakly</span>'
    return '<span class="holds">holds</span>'


def claims_table(guarantee: Guarantee) -> str:
    rows = [(html.text(c.name), verdict(c), html.text(c.source), html.paragraphs(c.statement))
            for c in guarantee.claims]
    return html.table(("claim", "verdict", "source", "statement (who is covered, who is not)"),
                      rows, caption=html.text(f"Guarantee of {guarantee.mechanism}"),
                      widths=(18, 11, 16, 55))


def curves(mech: Any) -> tuple[dict[str, Any], float | None, float | None] | None:
    """Each named adversary's posterior as a function of its prior, the prior
    bound d and the posterior bound γ; None for mechanisms without such
    accounting. The functions are the families' own (no formula here): the
    mechanism's ``posterior_curves`` (:class:`~privpub.core.capabilities.PosteriorCurves`)."""
    return mech.posterior_curves() if isinstance(mech, PosteriorCurves) else None


def posterior_plot(mech: Any) -> tuple[str, float | None] | None:
    """The figure's HTML and the first adversary's posterior at d (a headline)."""
    found = curves(mech)
    if found is None:
        return None
    lines, d, gamma = found
    low = d * 10.0 ** -PRIOR_DECADES if d else 1e-9
    priors = np.geomspace(low, 0.99, PRIOR_POINTS)
    at_d = None
    with plots.figure() as (fig, ax):
        ax.plot(priors, priors, color="#777777", linestyle=":", label="no change (posterior = "
                "prior)")
        for i, (label, posterior) in enumerate(lines.items()):
            ax.plot(priors, [posterior(p) for p in priors], color=plots.PALETTE[i],
                    linestyle=plots.DASHES[i], label=label)
            if d:
                y = posterior(d)
                at_d = y if at_d is None else at_d
                ax.plot([d], [y], marker=plots.MARKERS[i], color=plots.PALETTE[i],
                        linestyle="none", markersize=6)
        if gamma:
            ax.axhline(gamma, color="#000000", linewidth=0.9, label=f"γ = {gamma:g}")
        if d:
            ax.axvline(d, color="#000000", linewidth=0.9, linestyle="--",
                       label=f"this release's d = {d:.3g}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("adversary's prior Pr[t ∈ I] (probability)")
        ax.set_ylabel("posterior Pr[t ∈ I | V]")
        ax.set_title("Posterior of each named adversary against its prior")
        ax.legend(loc="lower right", frameon=True)
        uri = plots.svg_uri(fig)
    caption = ("Markers: each adversary at this release's prior bound d. Curves from "
               "privpub's accounting functions (exact posteriors); a curve above the γ line at "
               "priors ≤ d is a leak the guarantee's claims report. Right of the dashed line "
               "are adversaries who already believe more than d: outside the class the "
               "guarantee covers, and the curves show what they reach.")
    return html.figure(uri, "posterior against prior for each named adversary", caption), at_d


def section(release: Release) -> str:
    guarantee = release.guarantee()
    held = sum(c.holds for c in guarantee.claims)
    failed = [c.name for c in guarantee.claims if not c.holds]
    weak = [c.name for c in guarantee.claims if c.holds and c.weak]
    summary = (f"<p>{html.headline('claims-hold', held, str(held))} of "
               f"{html.headline('claims', len(guarantee.claims), str(len(guarantee.claims)))} "
               "claims hold for this release.</p>")
    if failed:
        summary += html.block("warning", "Not covered by this release's guarantee:",
                              "<ul>" + "".join(f"<li>{html.text(n)}</li>" for n in failed)
                              + "</ul>")
    if weak:
        summary += html.block("warning", "Holding only weakly:", "<ul>" + "".join(
            f"<li>{html.text(n)}</li>" for n in weak) + "</ul>")
    body = summary + claims_table(guarantee)
    plotted = posterior_plot(release.mechanism_object())
    if plotted is not None:
        figure, at_d = plotted
        body += figure
        if at_d is not None:
            body += (f"<p>The first adversary's posterior at d: "
                     f"{html.headline('posterior-at-d', at_d, f'{at_d:.4g}')}.</p>")
    return html.section("protected", "Who is protected", body)
