"""What a FRAPP view claims: each statement of :meth:`FRAPP.guarantee
<privpub.frapp.FRAPP.guarantee>` (the (d, γ)-privacy of views that show a
tuple at most once, what views showing it twice and |V| = |I| give away, the
d-exclusive adversary, the Hoeffding error bound) with whether it holds; and
the named adversaries' posterior curves the release card plots. The numbers
come from :mod:`privpub.frapp.accounting` (exact posteriors).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from privpub.core.guarantee import (
    INDISTINGUISHABILITY,
    Claim,
    Guarantee,
    stated_size_claim,
    usefulness_claim,
)
from privpub.frapp.accounting import (
    frapp_copies_ratio,
    frapp_epsilon,
    frapp_exclusive_ratio,
    posterior_from_ratio,
    rho_frapp,
)
from privpub.tables.records import counted, replacement_neighbours

if TYPE_CHECKING:
    from privpub.frapp.mechanism import FRAPP


def guarantee(mech: FRAPP) -> Guarantee:
    """Each privacy and utility statement of ``mech`` with whether it holds
    (:meth:`FRAPP.guarantee <privpub.frapp.FRAPP.guarantee>`)."""
    m, claims = mech.schema.size, []
    if mech.schema.derived:
        claims.append(Claim(
            "public domain", False,
            f"the domains of {', '.join(mech.schema.derived)} were derived from the data, "
            "so publishing the domain reveals them; the claims below assume a public domain.",
            "Sec. 2 (D is public)"))
    claims.extend(_epsilon_claims(mech))
    if mech.d is not None and mech.gamma is not None and mech.n is not None:
        claims.extend(_privacy_claims(mech))
    if mech.n is not None:
        claims.append(_usefulness_claim(mech))
    return Guarantee(f"FRAPP (γ_frapp = {mech.gamma_frapp:.6g}, m = {m:,})", tuple(claims))


def _epsilon_claims(mech: FRAPP) -> list[Claim]:
    """ε under replacement of one record, exact for the published multiset, and
    none under addition or removal.

    Derivation: a record x becomes y with P(y|x) = γ_f if y = x, else
    o = (1 − γ_f)/(m − 1), independently. For tables R + x and R + x' (one
    record replaced) and a published multiset Y, Pr[Y | R + x] =
    Σ_y P(y|x)·Pr[Y − y | R] over the distinct values y of Y, so the ratio
    of the two is at most max_y P(y|x)/P(y|x') = γ_f/o. It is reached at the
    view whose n rows are all x: Pr = γ_f·Π_{r ∈ R} P(x|r) against
    o·Π_{r ∈ R} P(x|r). So ε = ln(γ_f/o), the per-record randomiser's own,
    whatever n (publishing the rows sorted, as a multiset, lowers no worst case).
    """
    m, g = mech.schema.size, mech.gamma_frapp
    eps = frapp_epsilon(g, m)
    records = mech.records or {}
    text = (f"ε = ln(γ_f/o) = ln(γ_f(m−1)/(1−γ_f)) = {eps:.6g} for "
            f"{replacement_neighbours(records, mech.n)}: every output is at most e^ε times as "
            "likely on one as on the other, whatever the adversary knows. Each record is "
            "perturbed on its own (kept with γ_f, else each other tuple with o), so for tables "
            "R + x and R + x' the probability of a published multiset Y is Σ_y P(y|x)·Pr[Y − y "
            "| R] over the values y of Y, at most γ_f/o times its value for x'; a view whose "
            "rows are all x reaches it. Publishing the rows as a multiset lowers no worst case.")
    if records.get("duplicates") == "records":
        text += (" Records are perturbed independently, so repeated tuples do not weaken this "
                 "(unlike αβ).")
    holds = not mech.schema.derived
    if mech.schema.derived:
        text += (f" The domains of {', '.join(mech.schema.derived)} were derived from the "
                 "data (see 'public domain'): a neighbour with a value not in them is "
                 "published with another domain, so the ε holds only for a declared domain.")
    return [Claim(INDISTINGUISHABILITY, holds, text, "App. A (Def. A.1); Sec. 4.3",
                  epsilon=eps),
            stated_size_claim(counted(mech.records),
                              "Were n not stated, the view's one row per record would state "
                              "it: |V| = n.")]


def _privacy_claims(mech: FRAPP) -> list[Claim]:
    m, d, g, post = mech.schema.size, mech.d, mech.gamma, mech.posteriors()
    o = mech.off_diagonal
    # Expected tuples a view shows twice or more: a record that stayed
    # joined by another's replacement, or two replacements meeting.
    twice = mech.n * mech.gamma_frapp * (mech.n - 1) * o + m * (mech.n * o) ** 2 / 2
    once_ok = post["once"] <= g * (1 + 1e-12) and post["absent_ratio"] >= d / g
    repeated = (mech.records or {}).get("repeated_tuples", 0)
    who = ("every tuple" if not repeated else
           f"every tuple with one record ({repeated:,} tuples have several and are not "
           "covered: each of their records may stay, showing them several times)")
    return [
        Claim("(d, γ)-privacy at the base rate, views showing t at most once", once_ok,
              f"d = {d:.6g}, γ = {g}, for {who}: a d-independent adversary whose prior on "
              f"the other tuples is the base rate reaches Pr[t|V] ≤ {post['once']:.6g} when "
              f"V shows t once, and Pr[t|V]/Pr[t] ≥ {post['absent_ratio']:.6g} (≥ d/γ = "
              f"{d / g:.6g}) when V does not show t.",
              "Def. 2.3; derivation in frapp.accounting.frapp_gamma_for_privacy"),
        Claim("(d, γ)-privacy, all views (Def. 2.3)", False,
              f"a view showing t twice gives Pr[t|V] = {post['twice']:.6g} (and more for more "
              f"copies); a view shows ≈ {twice:.3g} tuples twice or more in expectation. "
              "FRAPP publishes one row per record, so |V| = |I|: an adversary who knows every "
              "other tuple's presence learns whether t ∈ I from the count alone "
              "(frapp.accounting.frapp_posterior computes exact posteriors).",
              "Def. 2.3"),
        Claim("no positive leakage, d-exclusive adversaries", post["exclusive"] <= g,
              f"V showing t once and no other tuple of its exclusion set: Pr[t|V] = "
              f"{post['exclusive']:.6g} at prior d, against γ = {g}.", "Def. 6.2")]


def _usefulness_claim(mech: FRAPP) -> Claim:
    m = mech.schema.size
    text = (f"for each fixed counting query, |Q̃(V) − Q(I)| < {mech.error_bound():,.4g} "
            f"with probability ≥ {1 - mech.failure_probability:g} (Hoeffding over the n = "
            f"{mech.n:,} records, divided by γ_f − o = "
            f"{mech.gamma_frapp - mech.off_diagonal:.6g}).")
    if mech.d is not None and mech.gamma is not None:
        rho = rho_frapp(mech.d * m / mech.n, mech.gamma, mech.failure_probability)
        text += (f"\nSec. 5's bound ρ = 2k(1−γ)/γ·√ln(2/ε) = {rho:.6g} (ρ√n = "
                 f"{rho * math.sqrt(mech.n):,.1f}) assumes another parametrisation; "
                 "shown for comparison only.")
    return usefulness_claim(text, "Hoeffding; αβ paper Sec. 5", mech.resolution())


def posterior_curves(mech: FRAPP) -> tuple[dict[str, Any], float | None, float | None] | None:
    """Each named adversary's posterior as a function of its prior, with d and γ
    (the release card's plot); None without n (the replacements' likelihood
    ratios need it)."""
    if mech.n is None:
        return None
    g, m, n = mech.gamma_frapp, mech.schema.size, mech.n
    ratios = {"d-independent, V shows t once": frapp_copies_ratio(g, m, n, 1),
              "d-independent, V shows t twice": frapp_copies_ratio(g, m, n, 2),
              "d-independent, V does not show t": frapp_copies_ratio(g, m, n, 0),
              "d-exclusive, V shows t once": frapp_exclusive_ratio(g, m, n)}
    return ({k: (lambda p, r=r: posterior_from_ratio(p, r)) for k, r in ratios.items()},
            mech.d, mech.gamma)
