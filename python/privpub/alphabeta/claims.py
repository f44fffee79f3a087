"""What an αβ view claims: each privacy and utility statement of
:meth:`AlphaBeta.guarantee <privpub.alphabeta.AlphaBeta.guarantee>`, with
whether it holds for the parameters and, on a release, for the data
published; and the named adversaries' posterior curves the release card
plots. The numbers come from :mod:`privpub.alphabeta.accounting` (exact
posteriors); a source distribution's statements are for its most likely
tuple, where both leakages are worst.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from privpub.alphabeta.accounting import (
    alphabeta_epsilon,
    alphabeta_epsilon_unbounded,
    alphabeta_leakage,
    alphabeta_posterior,
    exclusive_worst_posterior,
    is_alphabeta_private,
    largest_private_d,
    rho_theorem_4_3,
    theorem_4_2_holds,
    theorem_4_3_r,
)
from privpub.alphabeta.source import largest_weight
from privpub.core.guarantee import (
    INDISTINGUISHABILITY,
    Claim,
    Guarantee,
    stated_size_claim,
    usefulness_claim,
)
from privpub.tables.records import counted, replacement_neighbours

if TYPE_CHECKING:
    from privpub.alphabeta.mechanism import AlphaBeta

#: γ values at which a guarantee without a stated (d, γ) lists the d it protects.
REGION_GAMMAS = (0.05, 0.1, 0.2, 0.5)


def guarantee(mech: AlphaBeta) -> Guarantee:
    """Each privacy and utility statement of ``mech`` with whether it holds
    (:meth:`AlphaBeta.guarantee <privpub.alphabeta.AlphaBeta.guarantee>`)."""
    a, m = mech.alpha, mech.schema.size
    # With a source, every bound below is for the most likely tuple, where
    # both leakages are worst (posterior and d(t)/γ grow with w(t)).
    w, b = largest_weight(mech.source), mech.beta_max
    claims = []
    if mech.source is not None:
        claims.append(Claim(
            "source distribution", True,
            f"β(t) = β·w(t) with w(t) in [{mech.source.min_weight:.4g}, {w:.4g}]; the "
            f"adversary's prior bound is taken as d(t) = d·w(t), so the statements below "
            f"are for the most likely tuple, the worst case.",
            "Sec. 4.4.2, Algorithm 8"))
    if mech.schema.derived:
        claims.append(Claim(
            "public domain", False,
            f"the domains of {', '.join(mech.schema.derived)} were derived from the data "
            "(the values that occur), so publishing the domain reveals them; the claims "
            "below assume a public domain. Declare the domains (Schema, --schema) to "
            "avoid this.",
            "Sec. 2 (D is public)"))
    claims.extend(_epsilon_claims(mech))
    if mech.d is not None and mech.gamma is not None:
        claims.extend(_privacy_claims(mech, a, b, min(mech.d * w, 0.999999), mech.gamma))
    else:
        claims.append(_privacy_region(mech, a, b))
    if mech.n is not None:
        claims.append(_usefulness_claim(mech))
    calibrated = "" if mech.calibration is None else f", calibration {mech.calibration!r}"
    return Guarantee(f"αβ (α = {a:.6g}, β = {b:.6g}, m = {m:,}{calibrated})", tuple(claims))


def _epsilon_claims(mech: AlphaBeta) -> list[Claim]:
    """ε under replacement, exact (:func:`~privpub.alphabeta.accounting.alphabeta_epsilon`),
    and under addition or removal (none: n is stated)."""
    a = mech.alpha
    low = mech.beta * (1.0 if mech.source is None else mech.source.min_weight)
    high = mech.beta_max
    eps = alphabeta_epsilon(a, low, high)
    if mech.source is None:
        worst = (f"e^ε = (α+β)/β · (1−β)/(1−α−β) = {_exp(a + low, low)} · "
                 f"{_exp(1 - high, 1 - a - high)}")
    else:
        worst = (f"with the source, s the least likely tuple (β(s) = {low:.6g}) and u the most "
                 f"likely (β(u) = {high:.6g}): e^ε = (α+β(s))/β(s) · (1−β(u))/(1−α−β(u)) = "
                 f"{_exp(a + low, low)} · {_exp(1 - high, 1 - a - high)}")
    derivation = (
        "Each tuple enters V independently, with probability α + β if it is in I and β if "
        "not, so Pr[V | I] is a product over tuples and replacing s ∈ I by u ∉ I changes "
        "only their two factors; the ratio Pr[V | I]/Pr[V | I'] is largest for a view that "
        f"holds s and not u: {worst}. Every other view gives less.")
    unbounded = alphabeta_epsilon_unbounded(a, low, high)
    return [epsilon_claim(mech, eps, derivation, "App. A (Def. A.1); Algorithm 1"),
            stated_size_claim(
                counted(mech.records),
                "Were n not stated, one tuple added or removed would change one factor only: "
                f"ε = ln max((α+β)/β, (1−β)/(1−α−β)) = {unbounded:.6g}.")]


def _exp(num: float, den: float) -> str:
    """A likelihood-ratio factor as e^x (x its log), or ∞."""
    return "∞" if den <= 0 else f"e^{math.log(num / den):.6g}"


def epsilon_claim(mech: AlphaBeta, eps: float, derivation: str, source: str) -> Claim:
    """The replacement claim of an αβ release (one view, or a sequence's views so
    far): ε with ``derivation``, holding for the neighbours the release's
    statements leave indistinct, and not under duplicates='records' with
    repeated tuples, nor for a derived domain, nor when ε is infinite."""
    records = mech.records or {}
    repeated = records.get("repeated_tuples", 0)
    shown = "∞" if math.isinf(eps) else f"{eps:.6g}"
    who = replacement_neighbours(records, mech.n)
    text = (f"ε = {shown} for {who}: every output is at most e^ε times as likely on one as on "
            f"the other, whatever the adversary knows. {derivation}")
    holds = not math.isinf(eps)
    if math.isinf(eps):
        text += (" With β = 0 or α + β = 1 no ε is finite: a view shows or hides a tuple of I "
                 "with certainty.")
    if repeated:
        holds = False
        text = (f"No ε holds at the level of records: {repeated:,} tuples have several records "
                f"and were published with duplicates='records', and a tuple shown c times in V "
                f"has at least c records (noise tuples are distinct), so tables such as "
                f"{{a, a, b}} and {{a, b, b}}, one record apart with the same n, distinct tuples "
                f"and repeated tuples, give views one of them cannot produce. For a record that "
                f"is the only copy of its tuple, replaced by a tuple not in the table, ε = "
                f"{shown}. {derivation} Publish with duplicates='set' for ε at the level of "
                "distinct tuples.")
    if mech.schema.derived:
        holds = False
        text += (f" The domains of {', '.join(mech.schema.derived)} were derived from the "
                 "data (see 'public domain'): a neighbour with a value not in them is "
                 "published with another domain, so the ε holds only for a declared domain.")
    return Claim(INDISTINGUISHABILITY, holds, text, source,
                 epsilon=None if math.isinf(eps) or repeated else eps)


def _privacy_claims(mech: AlphaBeta, a: float, b: float, d: float, g: float) -> list[Claim]:
    worst_post, worst_ratio = alphabeta_leakage(a, b, d)
    records = mech.records or {}
    repeated = records.get("repeated_tuples", 0)
    who = "every tuple"
    if repeated:
        who = "every tuple with one record in I"
    elif records.get("duplicates") == "set":
        who = (f"every tuple (the {records['records_given']:,} records were published as "
               f"{mech.n:,} distinct tuples; estimates count distinct tuples)")
    k = None if mech.n is None else mech.d * mech.schema.size / mech.n
    bound_note = ("" if k is None or k >= 1
                  else f"\nd is below the base rate n/m (k = {k:.3g}): allowed "
                       "explicitly, it protects no adversary whose prior is at the base rate.")
    claims = [Claim(
        "(d, γ)-privacy", is_alphabeta_private(a, b, d, g),
        f"d = {d:.6g}, γ = {g}, for {who}: against every d-independent adversary, "
        f"Pr[t|V] ≤ {worst_post:.6g} (≤ γ: no positive leakage) and "
        f"Pr[t|V]/Pr[t] ≥ {worst_ratio:.6g} (≥ d/γ = {d / g:.6g}: no negative leakage). "
        f"Theorem 4.2's sufficient conditions are "
        f"{'met' if theorem_4_2_holds(a, b, d, g) else 'not met'}; the posteriors are "
        f"exact.{bound_note}",
        "Def. 2.3, Theorem 4.2 (App. C.1)")]
    if repeated:
        claims.append(Claim(
            "(d, γ)-privacy, tuples with several records", False,
            f"{repeated:,} tuples have several records in the data and were published with "
            f"duplicates='records' (first copy kept with α+β, each further copy with α): "
            f"they are NOT protected. Noise tuples are distinct, so a tuple that appears "
            f"twice in V is certainly in I; {records.get('revealed_in_view', 0):,} tuples "
            f"appear two or more times in this view. Publish with duplicates='set' for "
            f"the full guarantee.",
            'docs/design.md, "Real tables repeat records"'))
    excl = exclusive_worst_posterior(a, b, d)
    claims.append(Claim(
        "no positive leakage, d-exclusive adversaries", excl <= g * (1 + 1e-12),
        f"for {who}: an adversary who knows a person has exactly one record among a set "
        f"of tuples (a link attack) reaches Pr[t|V] ≤ {excl:.6g} at prior d, against γ = {g} "
        f"(exact worst case: V holds t and no other tuple of the set). Negative leakage "
        f"is not excluded for such adversaries (Example 6.4).",
        "Def. 6.2, Theorem 6.3 generalised (App. D.2.1)"))
    return claims


def _privacy_region(mech: AlphaBeta, a: float, b: float) -> Claim:
    lines = []
    for g in REGION_GAMMAS:
        ind, exc = largest_private_d(a, b, g)
        ks = "" if mech.n is None else (f" (k = {ind * mech.schema.size / mech.n:.4g}, "
                                        f"{exc * mech.schema.size / mech.n:.4g})")
        lines.append(f"γ = {g}: d ≤ {ind:.6g} against d-independent adversaries, "
                     f"d ≤ {exc:.6g} against d-exclusive ones{ks}")
    return Claim("(d, γ)-privacy region", True,
                 "no (d, γ) was requested; these (α, β) are (d, γ)-private (exact "
                 "posteriors) for\n" + "\n".join(lines), "Def. 2.3, Def. 6.2")


def _usefulness_claim(mech: AlphaBeta) -> Claim:
    r = theorem_4_3_r(mech.alpha, mech.beta_max, mech.n, mech.schema.size)
    bound = mech.error_bound()
    printed = rho_theorem_4_3(r, mech.failure_probability) * math.sqrt(mech.n)
    unit = counted(mech.records)
    return usefulness_claim(
        f"for each fixed counting query (not all at once), |Q̃(V) − Q(I)| < {bound:,.1f} "
        f"= ρ√n with ρ = {bound / math.sqrt(mech.n):.6g}, n = {mech.n:,} {unit}, with "
        f"probability ≥ 1 − ε = {1 - mech.failure_probability:g} (failure probability ε): "
        "Bernstein's inequality on the exact "
        f"variance bound, the argument of Theorem 4.3 with its slips mended. Theorem 4.3 "
        f"as printed gives ρ√n = √(2(r+1) ln(2/ε))·√n = {printed:,.1f} (r = βm/(α²n) = "
        f"{r:.6g}).",
        "Theorem 4.3 (App. C.1), corrected", mech.resolution())


def posterior_curves(mech: AlphaBeta) -> tuple[dict[str, Any], float | None, float | None]:
    """Each named adversary's posterior as a function of its prior, with d and γ
    (the release card's plot). As :func:`guarantee`: with a source, the most
    likely tuple's β(t), the worst case."""
    a = mech.alpha
    b = mech.beta_max
    return ({"d-independent, t in V": lambda p: alphabeta_posterior(p, a, b, True),
             "d-independent, t not in V": lambda p: alphabeta_posterior(p, a, b, False),
             "d-exclusive (link attack), worst view": lambda p: exclusive_worst_posterior(
                 a, b, p)}, mech.d, mech.gamma)
