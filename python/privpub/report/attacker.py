"""The card's fourth section: what an attacker gets (with ``audit``).

Two bounded audits (:mod:`privpub.attacks.audit`, :mod:`privpub.attacks.presence`), run against the
release with the data it was made from: attribute inference (Dinur–Nissim
reconstruction of a secret bit of records with a unique quasi-identifier)
and, where the family makes presence claims, Theorem 2.6's presence
adversary at the release's prior bound d. Their sizes are the card's
``n_targets`` (targets, and candidates per round) and ``rounds``; each
result is printed with its interval and the prior it assumed.
"""

from __future__ import annotations

import math
from typing import Any

from privpub.attacks.audit import attribute_value, audit
from privpub.attacks.presence import PresenceAuditResult, audit_presence
from privpub.core.capabilities import hidden_attributes
from privpub.core.errors import ParameterError
from privpub.report import html
from privpub.tables.published import PublishedView


def secret_of(release: PublishedView) -> tuple[str, Any]:
    """The attribute the attribute audit targets and the value that is bit 1:
    the first attribute the mechanism hides (SPLU-Gen's first sensitive one), else
    the first two-valued attribute, else the last attribute; the value at domain
    index 1."""
    schema = release.schema
    sensitive = hidden_attributes(release.mechanism_object())
    if sensitive:
        column = sensitive[0]
    else:
        binary = [a.name for a in schema.attributes if a.size == 2]
        column = binary[0] if binary else schema.names[-1]
    return column, attribute_value(schema, column, 1)


def attribute_part(release: PublishedView, data: Any, n_targets: int, seed: Any) -> str:
    column, value = secret_of(release)
    result = audit(release, column, data, secret_value=value, n_targets=n_targets,
                   seed=seed.derive("card-audit"))
    lo, hi = result.interval
    threshold = math.sqrt(result.n_targets)
    rows = [
        ("secret", f"<code>{html.text(html.condition(column, value))}</code> (bit 1), of "
         f"{html.number(result.n_targets)} records with a unique quasi-identifier (of "
         f"{html.number(result.eligible)} eligible)"),
        ("attack", f"{html.text(result.decoder)} decoder over "
                   f"{html.number(result.n_queries)} random subset-count queries, answered by the "
                   "release's estimator"),
        ("bits recovered", html.headline("audit-recovered", result.recovered,
                                         html.percent(result.recovered))
         + f" ({html.percent(result.confidence)} interval [{html.percent(lo)}, "
           f"{html.percent(hi)}])"),
        ("prior assumed",
         "the majority guess without the release: " + html.percent(result.baseline)),
        ("advantage over the prior", html.percent(result.advantage, signed=True)),
        ("verdict", html.text(attribute_verdict(lo, hi, result.baseline))),
        ("reconstruction threshold",
         f"√n = {html.number(threshold)} for these n = {html.number(result.n_targets)} "
         "targets: answers whose error stays well below √n let a decoder recover almost "
         "every bit (Dinur–Nissim, Theorem 3); errors well above it do not"),
    ]
    return "<h3>Attribute inference</h3>" + html.pairs(rows)


def attribute_verdict(low: float, high: float, prior: float) -> str:
    """The attribute audit in plain terms: whether the share of bits recovered, by
    its interval, is above the guess without the release (the prior)."""
    if low > prior:
        return (f"the release leaks the secret: the attack recovers more than the guess "
                f"without it ({html.percent(low)} at least, against {html.percent(prior)})")
    if high < prior:
        return (f"no leak found: the attack does worse than the guess without the release "
                f"({html.percent(high)} at most, against {html.percent(prior)})")
    return (f"no leak found at this audit's size: the attack cannot be told from the guess "
            f"without the release ({html.percent(prior)} lies in its interval)")


def presence_part(release: PublishedView, data: Any, n_targets: int, rounds: int, seed: Any) -> str:
    try:
        result = audit_presence(release, data, n_candidates=n_targets, rounds=rounds,
                                seed=seed.derive("card-presence"))
    except ParameterError as exc:  # a family without presence claims, or no stated d
        return ("<h3>Presence</h3>" + html.block("note", "Not run:", html.paragraphs(str(exc))))
    lo, hi = result.interval
    posterior = (html.headline("audit-posterior", result.posterior, html.percent(result.posterior))
                 + f" ({html.percent(result.confidence)} interval [{html.percent(lo)}, "
                   f"{html.percent(hi)}])"
                 if result.named else "none: the decoder named no candidate present")
    rows = [
        ("prior assumed", f"{html.number(result.prior)} per candidate (the release's d)"),
        ("candidates", f"{html.number(result.rounds)} rounds × {html.number(result.n_candidates)} "
                       f"candidates; {html.number(result.present)} were in the data"),
        ("named present",
         f"{html.number(result.named)}, of which {html.number(result.correct)} were"),
        ("posterior measured", posterior),
        ("verdict", html.text(presence_verdict(result))
         + "<details><summary>The audit's own account (Theorem 2.6)</summary>"
         + html.paragraphs(str(result)) + "</details>"),
    ]
    expected = result.rounds * result.n_candidates * result.prior
    body = html.pairs(rows)
    if expected < 10:
        body += html.block("note", "A small audit:", html.paragraphs(
            f"about {html.number(expected)} candidates were expected in the data; the posterior is "
            "measured only roughly or not at all. A larger audit: privpub attack RELEASE "
            "--data TABLE --presence --rounds R (about 200 present candidates by default)."))
    return "<h3>Presence (Theorem 2.6's adversary)</h3>" + body


def presence_verdict(result: PresenceAuditResult) -> str:
    """The presence audit in plain terms: whether the attacker's measured posterior,
    by its interval, is above the γ the release promises at its prior."""
    if not result.named:
        return "nothing to judge: the attack named no candidate present"
    lo, hi = result.interval
    if result.gamma is None or result.d is None or result.prior > result.d:
        return (f"the release promises nothing at this prior; the attack is right about "
                f"{html.percent(result.posterior)} of the candidates it names")
    if result.breaks_promise:
        return (f"the release breaks its promise: the attack is surer than γ = "
                f"{html.number(result.gamma)} ({html.percent(lo)} at least)")
    if hi <= result.gamma:
        return (f"no leak found: the attack stays within the promised γ = "
                f"{html.number(result.gamma)} ({html.percent(hi)} at most)")
    return (f"no breach found at this audit's size: the attack cannot be told from the "
            f"promised γ = {html.number(result.gamma)} (it lies in the interval)")


def section(release: PublishedView, data: Any, n_targets: int, rounds: int, seed: Any) -> str:
    body = (attribute_part(release, data, n_targets, seed)
            + presence_part(release, data, n_targets, rounds, seed))
    return html.section("attacker", "What an attacker gets", body)


def not_run(reason: str) -> str:
    return html.section("attacker", "What an attacker gets",
                        html.block("note", "No audit on this card:", html.paragraphs(reason)))
