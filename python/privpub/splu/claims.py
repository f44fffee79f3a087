"""The claims of a SPLU-Gen release (Wong et al.): small-sum privacy and large-sum
utility at the stated (ε, α, error probability), what no theorem covers
(conditional counts), and what the release leaves out (a derived domain, the
records in no decoy group). :meth:`SPLUGen.guarantee
<privpub.splu.mechanism.SPLUGen.guarantee>` assembles them."""

from __future__ import annotations

from collections.abc import Sequence

from privpub.core.guarantee import DIFFERENTIAL_PRIVACY, INDISTINGUISHABILITY, Claim
from privpub.splu.calculators import privacy_guarantee, utility_threshold_chebyshev

__all__ = ["GUARANTEE_ALPHA", "GUARANTEE_EPS", "GUARANTEE_T_E", "domain_claims",
           "epsilon_claims", "residue_claims", "splu_claims"]

#: Relative error and small-count bound the guarantee states T_P for.
GUARANTEE_EPS, GUARANTEE_ALPHA = 0.3, 3
#: Error probability the guarantee states the utility threshold for.
GUARANTEE_T_E = 0.05


def domain_claims(derived: Sequence[str]) -> list[Claim]:
    """That the domains of ``derived`` attributes, read off the data, are published."""
    if not derived:
        return []
    return [Claim(
        "public domain", False,
        f"the domains of {', '.join(derived)} were derived from the data; "
        "publishing them reveals which values occur.", "Sec. 3 (domains are public)")]


def splu_claims(group_size: int, sensitive: Sequence[str]) -> list[Claim]:
    """Small-sum privacy (Lemma 2, Theorem 4) and large-sum utility (Theorem 3 /
    Lemma 1, corrected) at decoy groups of ``group_size`` records, and the
    conditional counts neither covers."""
    g, eps, alpha = group_size, GUARANTEE_EPS, GUARANTEE_ALPHA
    t_p = privacy_guarantee(g, eps, alpha)
    t_f = utility_threshold_chebyshev(g, eps, GUARANTEE_T_E)
    return [
        Claim(
            "small-sum privacy (ε, T_P, α)", True,
            f"with decoy groups of group_size γ = {g} records, for each sensitive value with "
            f"1..{alpha} records, the count an analyst reads off "
            f"the release misses it by more than ε = {eps} of itself with probability ≥ T_P = "
            f"{t_p:.4f} (exact binomial; privpub.splu.privacy_guarantee for other ε, α). "
            "This is about counts, not individuals: it is not differential privacy, and it "
            "does not bound what an adversary who knows the other records of a decoy group "
            "learns. Records are randomised independently per sensitive attribute "
            f"({', '.join(sensitive)}).", "Lemma 2, Theorem 4"),
        Claim(
            "large-sum utility", True,
            f"for counts over ALL published records of one sensitive value s (f_s, read off "
            f"the release as its published count f'_s ~ Binomial(γ f_s, 1/γ)): f_s ≥ "
            f"{t_f:,.0f} is estimated within ε = {eps} of itself with probability ≥ "
            f"{1 - GUARANTEE_T_E:g} (Chebyshev with Var f' = f(1 − 1/γ); "
            "privpub.splu.sensitive_counts gives each f_s with its exact interval). That is "
            "all Theorem 3 and Lemma 1 prove. Lemma 1's printed threshold "
            "(privpub.splu.utility_threshold) is smaller: its proof divides the variance by n "
            "twice.", "Theorem 3 / Lemma 1, corrected"),
        Claim(
            "utility of conditional counts", False,
            "no utility guarantee covers count(P ∧ s) for a predicate P on other attributes, "
            "nor joint counts of several sensitive values: the paper proves none (Sec. 5 gives "
            "an estimator; Lemma 3 and Theorem 4 are privacy statements), and the release does "
            "not determine them. A record of P whose decoy group holds s publishes s at the "
            "same rate 1/γ as a record with s, so the release fixes how many records of P "
            "share groups with s, not how many hold s. privpub.splu.reconstruct returns such a "
            "count with the interval the release supports for any data (it usually starts at "
            "0) and the estimate of Sec. 5's model, which is biased wherever P is associated "
            "with the values decoyed with s; its stderr measures noise, not that bias "
            "(coverage measured in privpub.splu.reconstruction).",
            "Theorem 3 covers f_s only; Sec. 5"),
    ]


def epsilon_claims() -> list[Claim]:
    """Why no pure-DP ε exists for SPLU-Gen, under replacement or add/remove."""
    why = ("the non-sensitive attributes are published unchanged and the decoy-group "
           "partition is a deterministic function of the data, so two tables that differ in "
           "one record give releases one of them cannot produce: the changed record's "
           "non-sensitive values appear in one release only, and a sensitive value only one "
           "table holds is published only from it (a record publishes a value of its own "
           "group). Some output has probability 0 on one table and not on the other: no ε is "
           "finite.")
    return [Claim(INDISTINGUISHABILITY, False, f"No ε: {why}", "Sec. 3 (Steps 2–4)"),
            Claim(DIFFERENTIAL_PRIVACY, False,
                  f"No ε: {why} The release also states n, which addition or removal changes.",
                  "Sec. 3 (Steps 2–4)")]


def residue_claims(residue: int | None, records_given: int | None) -> list[Claim]:
    """That the records in no decoy group are left out (none when there are none)."""
    if not residue:
        return []
    return [Claim(
        "every record published", False,
        f"{residue} of the {records_given:,} records were in no decoy group "
        "and are not in the release (the paper deletes them).", "Sec. 3")]
