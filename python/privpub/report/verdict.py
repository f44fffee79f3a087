"""The card's first sentence: what a data steward decides on, in plain terms.

Three figures, each the release's own (its stated error bound, the ε its
guarantee computes, the (d, γ) request its parameters meet), each said with
whether it is in force for this release as made; the sections below give the
derivations. A figure the release does not state is said to be missing, never
filled in.
"""

from __future__ import annotations

from typing import Any

from privpub.core.capabilities import StatesPrivacyRequest, stated_bound
from privpub.core.guarantee import INDISTINGUISHABILITY, Guarantee
from privpub.core.release import Release
from privpub.report import html

#: Where the card says for whom a statement does not hold.
SEE_PROTECTED = '(see <a href="#protected">who is protected</a>)'


def verdict(release: Release) -> str:
    """One paragraph: how large a count the release tells from zero, its ε, and
    what an adversary with the requested prior learns at most."""
    guarantee = release.guarantee()
    mech = release.mechanism_object()
    accuracy = ("Its answer's noise law and interval are below" if release.answers_own_query
                else _accuracy(mech))
    parts = [accuracy, _epsilon(guarantee), _posterior(mech, guarantee)]
    return '<p class="verdict">' + "; ".join(p for p in parts if p) + ".</p>"


def _accuracy(mech: Any) -> str:
    declared = stated_bound(mech)
    if declared is None or declared.bound is None:
        return "This release states no error bound for its counts"
    confidence = 1 - declared.failure_probability
    shown = html.headline("verdict-bound", declared.bound, html.number(declared.bound))
    return (f"Counts above about {shown} are told from zero with {html.percent(confidence)} "
            f"confidence (each count's estimate is within ±{html.number(declared.bound)} of it)")


def _epsilon(guarantee: Guarantee) -> str:
    claim = next((c for c in guarantee.claims if c.name == INDISTINGUISHABILITY), None)
    if claim is None or claim.epsilon is None:
        return f"no finite ε is stated (differential privacy, one tuple replaced) {SEE_PROTECTED}"
    shown = html.headline("verdict-epsilon", claim.epsilon, html.number(claim.epsilon))
    said = f"ε = {shown} (differential privacy, one tuple replaced)"
    return said if claim.holds else f"{said}, not in force for this release as made {SEE_PROTECTED}"


def _posterior(mech: Any, guarantee: Guarantee) -> str:
    if not isinstance(mech, StatesPrivacyRequest):
        return ""
    request = mech.privacy_request()
    if request.d is None or request.gamma is None:
        return ""
    d = html.headline("verdict-d", request.d, html.number(request.d))
    gamma = html.headline("verdict-gamma", request.gamma, html.number(request.gamma))
    # Every family names its (d, γ) claims so (a variant's scope follows); the region
    # (what other requests the parameters meet) is no claim about this request.
    privacy = [c for c in guarantee.claims
               if c.name.startswith("(d, γ)-privacy") and "region" not in c.name]
    held = [c.holds for c in privacy]
    if held and all(held):
        return (f"an adversary whose prior on a person's tuple is at most d = {d} ends with a "
                f"posterior of at most γ = {gamma}")
    if any(held):
        return (f"an adversary whose prior on a person's tuple is at most d = {d} ends with a "
                f"posterior of at most γ = {gamma} for the tuples the guarantee covers, not "
                f"for all {SEE_PROTECTED}")
    return (f"the request (d = {d}, γ = {gamma}) is not met for every tuple "
            f"{SEE_PROTECTED}")
