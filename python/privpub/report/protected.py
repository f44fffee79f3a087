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
from privpub.core.guarantee import DIFFERENTIAL_PRIVACY, INDISTINGUISHABILITY, Claim, Guarantee
from privpub.core.release import Release
from privpub.report import html, plots

#: Priors plotted: from this far below d (or 1e-9 without d) up to 0.99.
PRIOR_DECADES = 3
PRIOR_POINTS = 200


#: Each kind of claim in plain words, by a piece of its name (first match wins): a
#: short title and one line a steward reads; the claim's own name, source and
#: statement (the papers' wording, which says for whom it does not hold) sit one
#: click deeper. A claim of a kind not listed shows its name and statement only.
PLAIN = (
    ("public domain", "Lists of values are public",
     "Each attribute's possible values are declared, not read from the data; the "
     "protections below assume this."),
    (INDISTINGUISHABILITY, "One record replaced",
     "Replacing one record by another changes how likely any release is by at most a "
     "factor e^ε, whatever else an attacker knows (differential privacy's yardstick)."),
    (DIFFERENTIAL_PRIVACY, "One record added or removed",
     "Adding or removing one record changes how likely any release is by at most a "
     "factor e^ε."),
    ("d-exclusive", "Link attacks",
     "An attacker who knows a person has exactly one record among some candidates, and "
     "believed any one of them at most d likely, ends up at most γ sure of it."),
    ("(d, γ)-privacy", "Attackers who start unsure",
     "An attacker who believed a given record at most d likely to be in the table ends "
     "up at most γ sure that it is."),
    ("(ρ, ε)-usefulness", "Accuracy of counts",
     "Each count's estimate is within the stated error bound of the true count, with "
     "the stated probability, one query at a time."),
    ("(Σ, Γ)-usefulness", "Accuracy of the answers",
     "Each released answer is within its stated error of the true answer, with the "
     "stated probability."),
    ("small-sum privacy", "Rare sensitive values hidden",
     "A sensitive value held by only a few records cannot be counted from the release "
     "with much accuracy; this is about counts, not about individuals."),
    ("large-sum utility", "Accuracy for common sensitive values",
     "How often a common sensitive value occurs over all records is estimated "
     "accurately."),
    ("utility of conditional counts", "Accuracy of sensitive counts within a condition",
     "Whether counts of a sensitive value among the records meeting a condition are "
     "estimated with a stated accuracy."),
    ("every record published", "Every record published",
     "Whether every record of the table is in the release."),
)
#: Words of a claim's name that narrow it (which views, which adversaries), kept in
#: its plain title so two claims of one kind stay apart.
SCOPES = ("over all views together", "over the views so far", "all views",
          "views showing t at most once", "at the base rate")


def plain(claim: Claim) -> tuple[str, str]:
    """The claim's plain title (its scope kept) and plain line ("" for a kind not in
    :data:`PLAIN`, whose title is then its name)."""
    for piece, title, line in PLAIN:
        if piece in claim.name:
            scope = [s for s in SCOPES if s in claim.name and not any(
                s in other and s != other for other in SCOPES if other in claim.name)]
            return (title + (f" ({', '.join(scope)})" if scope else ""), line)
    return claim.name, ""


def verdict(claim: Claim) -> str:
    if not claim.holds:
        return '<span class="fails">does NOT hold</span>'
    if claim.weak:
        return '<span class="weak">holds only weakly</span>'
    return '<span class="holds">holds</span>'


def meaning(claim: Claim) -> str:
    """The plain line, then the papers' wording (name, source, statement) in a
    details element a reader opens."""
    line = plain(claim)[1]
    if line and claim.epsilon is not None:
        line += f" Here ε = {html.number(claim.epsilon)}."
    return ((f"<p>{html.text(line)}</p>" if line else "")
            + "<details><summary>The papers' wording</summary>"
            + f"<p><strong>{html.text(claim.name)}</strong> ({html.text(claim.source)})</p>"
            + html.paragraphs(claim.statement)
            + "</details>")


def claims_table(guarantee: Guarantee) -> str:
    rows = [(html.text(plain(c)[0]), verdict(c), meaning(c)) for c in guarantee.claims]
    return html.table(("protection", "verdict", "what it means (who is covered, who is not)"),
                      rows, caption=html.text(f"Guarantee of {guarantee.mechanism}"),
                      widths=(22, 14, 64))


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
            ax.axhline(gamma, color="#000000", linewidth=0.9, label=f"γ = {html.number(gamma)}")
        if d:
            ax.axvline(d, color="#000000", linewidth=0.9, linestyle="--",
                       label=f"this release's d = {html.number(d)}")
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
    failed = [plain(c)[0] for c in guarantee.claims if not c.holds]
    weak = [plain(c)[0] for c in guarantee.claims if c.holds and c.weak]
    count = len(guarantee.claims)
    summary = (f"<p>{html.headline('claims-hold', held, html.number(held))} of "
               f"{html.headline('claims', count, html.number(count))} "
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
                     f"{html.headline('posterior-at-d', at_d, html.number(at_d))}.</p>")
    return html.section("protected", "Who is protected", body)
