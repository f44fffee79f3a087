"""The claims of a view in an Algorithm 7 sequence, from the exact worst cases of
:mod:`privpub.alphabeta.sequence`: the views so far and all planned, per
adversary; tuples whose membership changed; the region of (d, γ) protected
when none was requested."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from privpub.alphabeta.claims import REGION_GAMMAS, epsilon_claim
from privpub.alphabeta.sequence import (
    largest_private_d_views,
    sequence_epsilon,
    sequence_leakage,
    view_probabilities,
)
from privpub.core.guarantee import Claim, stated_size_claim
from privpub.tables.records import counted

if TYPE_CHECKING:
    from privpub.alphabeta.mechanism import AlphaBeta

__all__ = ["epsilon_claims", "history_claim", "region_claim", "sequence_claims"]


def _bits(mask: int, published: int) -> tuple[bool, ...]:
    """A history mask as membership bits, version 1 first."""
    return tuple(bool(mask >> i & 1) for i in range(published))


def epsilon_claims(mech: AlphaBeta, max_views: int, published: int,
                   histories: Sequence[tuple[int, int]]) -> list[Claim]:
    """The pure-DP claims of view ``published`` of at most ``max_views``: ε of the
    views so far under replacement by a tuple of the same membership history
    (the largest over the data's ``histories``, (mask, count) pairs; I unchanged
    without them), with ε of all planned views for I unchanged; and none under
    addition or removal (:func:`~privpub.alphabeta.sequence.sequence_epsilon`)."""
    a, b = mech.alpha, mech.beta
    pairs = [(_bits(mask, published), count) for mask, count in histories] or \
        [((True,) * published, mech.n or 0)]
    found = [(sequence_epsilon(a, b, max_views, bits), bits, count) for bits, count in pairs]
    (eps, unbounded), _, _ = max(found, key=lambda row: row[0][0])
    planned = sequence_epsilon(a, b, max_views, (True,) * max_views)[0]
    shown = "; ".join(f"history {''.join('1' if x else '0' for x in bits)} ({count:,} tuples): "
                      f"ε = {e:.6g}" for (e, _), bits, count in found[:6])
    more = f"; and {len(found) - 6} more histories" if len(found) > 6 else ""
    derivation = (
        f"Views 1–{published} of at most {max_views} (Algorithm 7). Each tuple's inclusions "
        "depend only on its own membership and its own earlier inclusions (α + β in I_i, "
        "p' = (α+β)e^(−1/v) in V' − I_i, p_i outside), so Pr[V_1..V_j | I] is a product over "
        "tuples and replacing s by u with the same membership history h changes only their "
        "factors: the ratio is L_h(x_s)/L_h(x_u), L_h the likelihood ratio of a tuple's "
        "inclusion pattern (privpub.alphabeta.sequence), at most L_max/L_min (for I unchanged: "
        "s shown in every view, u in none). The release states how many tuples have each "
        "history, so a tuple replaced by one of another history is told apart with "
        f"certainty; over the histories of this data: {shown}{more}. All {max_views} planned "
        f"views together, I unchanged: ε = {planned:.6g}.")
    return [epsilon_claim(mech, eps, derivation, "App. A (Def. A.1); Sec. 4.4.1 (Algorithm 7), "
                                                 "privpub.alphabeta.sequence"),
            stated_size_claim(
                counted(mech.records),
                "Were n not stated, one tuple added or removed would change one factor only: "
                f"ε = max(ln L_max, −ln L_min) = {unbounded:.6g} over the views so far.")]


def _worst_pattern(alpha: float, beta: float, max_views: int, published: int) -> str:
    """The pattern of L_max for I unchanged: first shown in view f, then in every view
    (f = 1 whenever β ≤ 1 − e^{−1/v}: privpub.alphabeta.sequence)."""
    if published == 1:
        return "t in the view"
    s, p_prev, _ = view_probabilities(alpha, beta, max_views, 1)
    best, best_first, prefix = 0.0, 1, 1.0
    for f in range(1, published + 1):
        p_f = view_probabilities(alpha, beta, max_views, f)[2]
        ratio = prefix * s / p_f * (s / p_prev) ** (published - f)
        if ratio > best:
            best, best_first = ratio, f
        prefix *= (1 - s) / (1 - p_f)
    return ("t shown in every view" if best_first == 1 else
            f"t first shown in view {best_first}, then in every view")


def sequence_claims(alpha: float, beta: float, d: float, gamma: float, max_views: int,
                    published: int) -> list[Claim]:
    """The privacy claims of view ``published`` of at most ``max_views``: for the
    views so far and for all planned, per adversary, exact (tuples present in
    every version so far, or that left: privpub.alphabeta.sequence)."""
    claims = []
    # "(d, γ)-privacy over all views together" is the name earlier versions gave the
    # (then unestablished) claim: kept, so that readers of guarantees find it.
    for label, j in (("over the views so far", published), ("over all views together", max_views)):
        leak = sequence_leakage(alpha, beta, d, max_views, published=j)
        worst = _worst_pattern(alpha, beta, max_views, j)
        scope = (f"all {max_views} planned views" if label == "over all views together" else
                 "the first view alone" if j == 1 else f"views 1–{j}, published so far")
        claims.append(Claim(
            f"(d, γ)-privacy {label}", leak.independent_private(gamma),
            f"d = {d:.6g}, γ = {gamma}, {scope} (Algorithm 7, planned v = {max_views}), for every "
            f"tuple present in every version so far or that left (the paper's case, I "
            f"unchanged): against every d-independent adversary Pr[t|V_1..V_{j}] ≤ "
            f"{leak.independent_posterior:.6g} (worst pattern: {worst}; "
            f"≤ γ: no positive leakage) and Pr[t|V]/Pr[t] ≥ {leak.independent_ratio:.6g} "
            f"(worst: t in no view; ≥ d/γ = {d / gamma:.6g}: no negative leakage). Exact "
            "posteriors over every inclusion pattern (privpub.alphabeta.sequence). Sec. 4.4.1 "
            "claims the same privacy as one view without a proof.",
            "Def. 2.3, Sec. 4.4.1 (Algorithm 7), privpub.alphabeta.sequence"))
        claims.append(Claim(
            f"no positive leakage, d-exclusive adversaries, {label}",
            leak.exclusive_private(gamma),
            f"{scope}: an adversary who knows a person has exactly one record among a set of "
            f"tuples reaches Pr[t|V] ≤ {leak.exclusive_posterior:.6g} at prior d, against "
            f"γ = {gamma} (exact worst case: {worst}, every other tuple of the set in none). "
            "Negative leakage is not excluded for such adversaries "
            "(Example 6.4).",
            "Def. 6.2, Theorem 6.3 generalised, privpub.alphabeta.sequence"))
    return claims


def _static_or_left(bits: tuple[bool, ...]) -> bool:
    """Whether a history is 1…1 0…0 with a leading 1: present from version 1 on,
    then possibly gone for good."""
    if not bits[0]:
        return False
    gone = bits.index(False) if False in bits else len(bits)
    return not any(bits[gone:])


def history_claim(alpha: float, beta: float, d: float, gamma: float, max_views: int,
                  histories: Sequence[tuple[int, int]]) -> Claim | None:
    """The claim for tuples whose membership changed other than by leaving
    (entered, or left and came back), from ``histories``: (mask, count) pairs,
    bit i−1 of a mask set when the tuple is in I_i. None when there are none."""
    published = max((mask.bit_length() for mask, _ in histories), default=0)
    rows = []
    for mask, count in histories:
        bits = _bits(mask, published)
        if _static_or_left(bits):
            continue  # covered by the sequence claims (privpub.alphabeta.sequence: leavers)
        leak = sequence_leakage(alpha, beta, d, max_views, published=published, history=bits)
        rows.append((leak, count, "".join("1" if b else "0" for b in bits)))
    if not rows:
        return None
    holds = all(leak.independent_private(gamma) for leak, _, _ in rows)
    worst = max(rows, key=lambda row: row[0].independent_posterior)
    shown = "; ".join(f"{count:,} with history {text}: Pr[t|V] ≤ "
                      f"{leak.independent_posterior:.6g}, Pr[t|V]/Pr[t] ≥ "
                      f"{leak.independent_ratio:.6g}" for leak, count, text in rows[:6])
    more = f"; and {len(rows) - 6} more histories" if len(rows) > 6 else ""
    return Claim(
        "(d, γ)-privacy, tuples that entered I after the first version", holds,
        f"{sum(c for _, c, _ in rows):,} tuples of the data entered I after version 1, or left "
        f"and came back (history: "
        f"1 where the tuple is in I_i). Algorithm 7 shows such a tuple first with α + β against "
        f"fresh noise that decays as (1 − α − β)^(i−1)β, so its ratio can exceed the static "
        f"one: against a d-independent adversary "
        f"(present with this history or absent throughout, prior ≤ d = {d:.6g}) the exact worst "
        f"cases are {shown}{more} (γ = {gamma}, d/γ = {d / gamma:.6g}). Worst: "
        f"{worst[0].independent_posterior:.6g}. Against d-exclusive adversaries no bound is "
        f"established for these tuples: the d-exclusive claims cover tuples in I from the "
        f"first version on (and those that left).",
        "Sec. 4.4.1 (updates), privpub.alphabeta.sequence")


def region_claim(alpha: float, beta: float, max_views: int) -> Claim:
    """The (d, γ) that all ``max_views`` planned views protect, at a few γ, when
    no (d, γ) was requested."""
    lines = []
    for g in REGION_GAMMAS:
        ind, exc = largest_private_d_views(alpha, beta, g, max_views)
        lines.append(f"γ = {g}: d ≤ {ind:.6g} against d-independent adversaries, "
                     f"d ≤ {exc:.6g} against d-exclusive ones")
    return Claim("(d, γ)-privacy region over all views together", True,
                 f"no (d, γ) was requested; all {max_views} planned views together are "
                 "(d, γ)-private (exact posteriors, privpub.alphabeta.sequence) for\n"
                 + "\n".join(lines), "Def. 2.3, Def. 6.2, Sec. 4.4.1")
