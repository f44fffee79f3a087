"""Algorithm 2.1 and the Laplace baseline: parameters, refusals, releases,
guarantees, and the output distribution tested statistically with power."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from privpub.core.errors import ArtifactError, ParameterError, QueryError
from privpub.core.guarantee import DIFFERENTIAL_PRIVACY as DP
from privpub.core.guarantee import INDISTINGUISHABILITY as IND
from privpub.core.seeding import resolve_seed
from privpub.graphs import (
    CQ,
    Graph,
    GraphAnswer,
    LaplaceMechanism,
    RelationshipMechanism,
    count,
    pattern,
    triangle,
    two_path,
)
from privpub.graphs.noise import Bits, laplace_bound, laplace_tail

ALPHA = 1e-6
EDGE = CQ.parse("edges(x, y) :- R(x, y)")  # g = 1: λ = 1, so the scale is 1/ε


def dlap_pmf(z: np.ndarray, b: float) -> np.ndarray:
    r = math.exp(-1 / b)
    return (1 - r) / (1 + r) * r ** np.abs(z)


def chi2_pvalue(samples: np.ndarray, b: float, cut: int = 12) -> float:
    """χ² of discrete Laplace samples against scale b, |z| ≥ cut pooled per side."""
    z = np.clip(samples, -cut, cut)
    support = np.arange(-cut, cut + 1)
    observed = np.array([(z == k).sum() for k in support])
    expected = dlap_pmf(support, b)
    tail = laplace_tail(b, cut) / 2
    expected[0], expected[-1] = tail, tail
    return stats.chisquare(observed, expected / expected.sum() * len(samples)).pvalue


def test_lambda_and_p_follow_step_2():
    mech = RelationshipMechanism(0.5, 0.1, triangle(), m=4039)
    want = (8 * 4 * 9 * math.log(4039)) ** 2
    assert mech.lam == pytest.approx(want) and mech.lam == pytest.approx(5.719e6, rel=1e-3)
    assert mech.p == Fraction(3, 4039)
    assert RelationshipMechanism(1.0, 0.5, EDGE, m=10).lam == 1


def test_refusals_name_the_reason():
    with pytest.raises(QueryError, match="only stable queries.*order-1 derivative"):
        RelationshipMechanism(0.5, 0.1, pattern([(0, 1), (2, 3)]), m=100)
    with pytest.raises(ParameterError, match="gamma = 0.001 is below p = g/m = 3/100"):
        RelationshipMechanism(0.5, 0.001, triangle(), m=100)
    with pytest.raises(ParameterError, match="epsilon must be positive"):
        RelationshipMechanism(0, 0.1, triangle(), m=100)
    g = Graph.from_edges([[0, 1], [1, 2], [2, 0]], directed=True)
    with pytest.raises(ParameterError, match="built for m = 100"):
        RelationshipMechanism(0.5, 0.1, triangle(), m=100).answer(g, seed=1)


def test_discrete_laplace_sampler_has_the_stated_scale_with_power():
    bits = Bits(resolve_seed(3))
    b = 2.5
    z = np.array([bits.discrete_laplace(Fraction(b)) for _ in range(20_000)])
    assert chi2_pvalue(z, b) > ALPHA
    assert chi2_pvalue(z, 1.1 * b) < ALPHA  # power: a scale 10% off is rejected


def test_algorithm_2_1_output_distribution():
    """m = 10, γ = 0.5: the uniform branch has probability p/γ = 0.2, its answers
    uniform over {0, …, m^v = 100}; the other answers are q + DLap(1/ε)."""
    m, eps, gamma, n = 10, 0.4, 0.5, 20_000
    mech = RelationshipMechanism(eps, gamma, EDGE, m=m)
    bits = Bits(resolve_seed(8))
    draws = [mech.draw(37, bits) for _ in range(n)]
    uniform = np.array([v for b, v in draws if b == "uniform"])
    laplace = np.array([v for b, v in draws if b == "laplace"]) - 37
    rate = 0.2
    se = math.sqrt(n * rate * (1 - rate))
    assert abs(len(uniform) - n * rate) < 4.5 * se
    assert abs(len(uniform) - n * rate * 1.1) > 4.5 * se  # power: p/γ 10% off
    # Both ends of {0, …, m^v} are drawn (missing one has probability ≈ e^-40).
    assert uniform.min() == 0 and uniform.max() == m**2
    counts = np.bincount(uniform, minlength=m**2 + 1)
    assert stats.chisquare(counts).pvalue > ALPHA
    assert chi2_pvalue(laplace, 1 / eps) > ALPHA
    assert chi2_pvalue(laplace, 1.1 / eps) < ALPHA


def test_answers_are_reproducible_and_reopen():
    g = Graph.from_edges(np.array([[0, 1], [1, 2], [2, 0], [2, 3]]), directed=False, m=50)
    mech = RelationshipMechanism.for_graph(1.0, 0.5, triangle(), g)
    a, b = mech.answer(g, seed=4), mech.answer(g, seed=4)
    assert a.value == b.value and a.seed_policy.startswith("seeded")
    assert mech.answer(g).seed_policy == "os-csprng"
    back = GraphAnswer.from_dict(a.to_dict())
    assert back.value == a.value and back.parameters == a.parameters
    tampered = a.to_dict()
    tampered["parameters"] = dict(tampered["parameters"], **{"lambda": 1.0})
    with pytest.raises(ArtifactError, match="'lambda'"):
        GraphAnswer.from_dict(tampered)
    unstable = a.to_dict()
    unstable["parameters"] = dict(unstable["parameters"],
                                  query="q(x, y, z, w) :- R(x, y), R(z, w)")
    with pytest.raises(QueryError, match="only stable"):
        GraphAnswer.from_dict(unstable)


def test_guarantees_say_what_holds_and_for_whom():
    g = Graph.from_edges(np.array([[0, 1], [1, 2], [2, 0]]), directed=False)
    rel = RelationshipMechanism.for_graph(1.0, 1.0, triangle(), g).guarantee()
    assert rel["(ε, γ)-adversarial privacy"].holds
    assert not rel[IND].holds
    assert not rel["privacy of an undirected edge"].holds
    assert not rel["public domain"].holds  # m came from the data
    directed = Graph.from_edges(np.array([[0, 1], [1, 2], [2, 0]]), directed=True, m=3)
    claims = RelationshipMechanism.for_graph(1.0, 1.0, triangle(), directed).guarantee()
    assert [c.name for c in claims.claims] == ["(ε, γ)-adversarial privacy", IND, DP,
                                               "(Σ, Γ)-usefulness"]
    lap = LaplaceMechanism.for_graph(1.0, triangle(), g).guarantee()
    assert lap[IND].holds and "2ε" in lap[IND].statement
    assert lap[DP].holds and "2ε" in lap[DP].statement


def test_laplace_uses_the_global_sensitivity():
    mech = LaplaceMechanism(0.5, triangle(), m=4039)
    assert mech.sensitivity == 3 * 4037 and mech.exact
    wider = LaplaceMechanism(0.5, triangle(), m=4039, sensitivity=20_000)  # ≥ GS: verified
    assert not wider.exact and wider.verified and wider.guarantee()[IND].holds
    assert "≥ privpub's GS = 12,111" in wider.guarantee()[IND].statement
    bits = Bits(resolve_seed(9))
    small = LaplaceMechanism(1.0, EDGE, m=10)  # GS = 1
    z = np.array([small.draw(0, bits) for _ in range(20_000)])
    assert chi2_pvalue(z, 1.0) > ALPHA and chi2_pvalue(z, 1.1) < ALPHA


def test_usefulness_bound_is_the_tail():
    sigma = laplace_bound(4.0, 1e-3)
    assert laplace_tail(4.0, sigma) <= 1e-3 < laplace_tail(4.0, sigma - 1)
    mech = RelationshipMechanism(0.5, 0.1, triangle(), m=4039)
    s, big_gamma = mech.error_bound()
    assert laplace_tail(mech.scale, s) <= float(mech.p) / 0.1 and big_gamma == 60


def test_answer_is_the_count_plus_noise():
    g = Graph.from_edges(np.array([[0, 1], [1, 2], [2, 0]]), directed=True, m=3)
    mech = LaplaceMechanism.for_graph(50.0, triangle(), g)  # scale 3/50: noise is rare
    values = [mech.answer(g, seed=s).value for s in range(20)]
    assert np.median(values) == count(g, triangle()) == 3


def test_min_with_gs_takes_the_smaller_noise_parameter():
    # Δ at m = 4,039: GS = 3(m − 2) = 12,111 < λ ≈ 5.7·10^6.
    tri = RelationshipMechanism(0.5, 0.1, triangle(), m=4039, min_with_gs=True)
    assert tri.branch == "global sensitivity" and tri.noise_lambda == 12_111
    assert tri.scale == 12_111 / 0.5
    claims = tri.guarantee()
    assert claims[IND].holds
    assert "12,111" in claims["noise parameter min(λ, GS)"].statement
    assert "Theorem 2.12" in claims["(ε, γ)-adversarial privacy"].source
    # ∨ at m = 1,000: λ = 128 ln m ≈ 884 < GS = 2(m − 2) = 1,996.
    wedge = RelationshipMechanism(0.5, 0.1, two_path(), m=1000, min_with_gs=True)
    assert wedge.branch == "lambda" and wedge.noise_lambda == wedge.lam < 1996
    claims = wedge.guarantee()
    assert not claims[IND].holds
    assert "as Algorithm 2.1 states" in claims["noise parameter min(λ, GS)"].statement
    # Without the option Algorithm 2.1 keeps λ even where GS is smaller.
    plain = RelationshipMechanism(0.5, 0.1, triangle(), m=4039)
    assert plain.branch == "lambda" and plain.scale == plain.lam / 0.5
    assert not plain.guarantee()[IND].holds
    with pytest.raises(ParameterError, match="min_with_gs"):
        RelationshipMechanism(0.5, 0.1, triangle(), m=4039, min_with_gs=1)


def test_undirected_friendships_under_the_global_sensitivity_branch():
    g = Graph.from_edges(np.array([[0, 1], [1, 2], [2, 0]]), directed=False, m=200)
    claims = RelationshipMechanism.for_graph(1.0, 0.5, triangle(), g,
                                             min_with_gs=True).guarantee()
    assert claims[IND].holds
    assert "2ε = 2.0" in claims[IND].statement
    assert "privacy of an undirected edge" not in [c.name for c in claims.claims]


@pytest.mark.parametrize("m, branch", [(100, "global sensitivity"), (1000, "lambda")])
def test_min_with_gs_output_distribution_in_both_branches(m, branch):
    """∨ with γ = 0.1: the uniform branch has probability p/γ = 20/m; the
    Laplace branch has scale min(λ, GS)/ε, with ε set so that scale is 2.
    The other parameter's scale (GS/ε or λ/ε, at least 1.35× off) is rejected."""
    n = 20_000
    base = RelationshipMechanism(1.0, 0.1, two_path(), m=m, min_with_gs=True)
    assert base.branch == branch
    other = base.lam if branch == "global sensitivity" else base.gs.value
    eps = base.noise_lambda / 2
    mech = RelationshipMechanism(eps, 0.1, two_path(), m=m, min_with_gs=True)
    bits = Bits(resolve_seed(17))
    draws = [mech.draw(500, bits) for _ in range(n)]
    uniform = sum(b == "uniform" for b, _ in draws)
    rate = 2 / m / 0.1
    se = math.sqrt(n * rate * (1 - rate))
    assert abs(uniform - n * rate) < 4.5 * se
    laplace = np.array([v for b, v in draws if b == "laplace"]) - 500
    assert chi2_pvalue(laplace, mech.scale) > ALPHA
    assert mech.scale == pytest.approx(2.0)
    assert chi2_pvalue(laplace, other / eps) < ALPHA  # power: the other branch's scale


def test_min_with_gs_releases_reopen_and_refuse_a_forged_branch():
    g = Graph.from_edges(np.array([[0, 1], [1, 2], [2, 0]]), directed=True, m=60)
    mech = RelationshipMechanism.for_graph(1.0, 0.5, triangle(), g, min_with_gs=True)
    a = mech.answer(g, seed=2)
    assert a.parameters["branch"] == "global sensitivity"
    back = GraphAnswer.from_dict(a.to_dict())
    assert back.parameters == a.parameters
    forged = a.to_dict()
    forged["parameters"] = dict(forged["parameters"], branch="lambda")
    with pytest.raises(ArtifactError, match="'branch'"):
        GraphAnswer.from_dict(forged)
