"""Sec. 4.3's variants of Algorithm 2.1: several queries at once, and the
negative-leakage form. Parameters against the paper's formulas, refusals,
releases, guarantees, and the output distributions tested with power."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats
from test_graph_mechanisms import ALPHA, EDGE, chi2_pvalue

from privpub.core.errors import ArtifactError, ParameterError, QueryError
from privpub.core.guarantee import DIFFERENTIAL_PRIVACY as DP
from privpub.core.guarantee import INDISTINGUISHABILITY as IND
from privpub.core.seeding import resolve_seed
from privpub.graphs import (
    Graph,
    GraphAnswers,
    MultipleQueryMechanism,
    NegativeLeakageMechanism,
    RelationshipMechanism,
    count,
    cycle,
    pattern,
    triangle,
    two_path,
)
from privpub.graphs.noise import Bits


def test_multiple_queries_follow_sec_4_3():
    mech = MultipleQueryMechanism(1.0, 0.1, [triangle(), two_path(), EDGE], m=4039)
    assert mech.v == 3 + 3 + 2 and mech.g == 3 + 2 + 1
    assert mech.p == Fraction(6, 4039)
    ln = math.log(4039)
    assert mech.lams == pytest.approx([(8 * 9 * 9 * ln) ** 2, 8 * 4 * 9 * ln, 1.0])
    # v is the total over all queries, so λ_i exceeds the single-query λ.
    assert mech.lams[0] > RelationshipMechanism(1.0, 0.1, triangle(), m=4039).lam
    sigmas, big_gamma = mech.error_bounds()
    assert big_gamma == pytest.approx(2 * 6 / 0.1) and sigmas[2] < sigmas[1] < sigmas[0]
    claims = mech.guarantee()
    assert claims["(ε, γ)-adversarial privacy"].holds
    assert not claims[IND].holds and not claims[DP].holds


def test_multiple_queries_refusals_name_the_query():
    with pytest.raises(QueryError, match="query 1 .* is refused"):
        MultipleQueryMechanism(1.0, 0.5, [triangle(), pattern([(0, 1), (2, 3)])], m=100)
    with pytest.raises(ParameterError, match=r"p = Σ g_i/m = 5/100"):
        MultipleQueryMechanism(1.0, 0.04, [triangle(), two_path()], m=100)
    with pytest.raises(ParameterError, match="at least one"):
        MultipleQueryMechanism(1.0, 0.5, [], m=100)
    with pytest.raises(ParameterError, match="sequence"):
        MultipleQueryMechanism(1.0, 0.5, triangle(), m=100)


def test_multiple_queries_output_distribution():
    """EDGE and ∨ at m = 20, γ = 0.5: one coin, uniform with probability
    p/γ = (3/20)/0.5 = 0.3 for both answers; otherwise DLap(λ_i/ε) each."""
    m, eps, n = 20, 0.5, 20_000
    mech = MultipleQueryMechanism(eps, 0.5, [EDGE, two_path()], m=m)
    bits = Bits(resolve_seed(31))
    draws = [mech.draw([40, 900], bits) for _ in range(n)]
    uniform = [v for b, v in draws if b == "uniform"]
    rate = 0.3
    se = math.sqrt(n * rate * (1 - rate))
    assert abs(len(uniform) - n * rate) < 4.5 * se
    assert abs(len(uniform) - n * rate * 1.1) > 4.5 * se  # power: p/γ 10% off
    first = np.array([u[0] for u in uniform])
    assert stats.chisquare(np.bincount(first, minlength=m**2 + 1)).pvalue > ALPHA
    second = np.array([u[1] for u in uniform])
    assert second.max() <= m**3 and second.max() > 0.99 * m**3
    lap = np.array([v for b, v in draws if b == "laplace"]) - [40, 900]
    assert chi2_pvalue(lap[:, 0], 1 / eps) > ALPHA
    assert chi2_pvalue(lap[:, 0], 1.1 / eps) < ALPHA
    b = mech.scales[1]  # λ_2/ε ≈ 2,300: compare with the continuous Laplace
    assert stats.kstest(lap[:, 1], stats.laplace(scale=b).cdf).pvalue > ALPHA
    assert stats.kstest(lap[:, 1], stats.laplace(scale=1.3 * b).cdf).pvalue < ALPHA
    # With v = 5 (both queries) λ_2 = 8·4·6·ln m, not the single query's 8·4·4·ln m.
    single = RelationshipMechanism(eps, 0.5, two_path(), m=m).scale
    assert stats.kstest(lap[:, 1], stats.laplace(scale=single).cdf).pvalue < ALPHA


def test_multiple_answers_release_and_reopen():
    g = Graph.from_edges(np.array([[0, 1], [1, 2], [2, 0], [2, 3]]), directed=False, m=40)
    mech = MultipleQueryMechanism.for_graph(1.0, 0.5, [triangle(), cycle(4)], g)
    a = mech.answer(g, seed=3)
    assert a.values == mech.answer(g, seed=3).values and len(a.values) == 2
    back = GraphAnswers.from_dict(a.to_dict())
    assert back.values == a.values and back.parameters == a.parameters
    assert not back.guarantee()["privacy of an undirected edge"].holds
    forged = a.to_dict()
    forged["parameters"] = dict(forged["parameters"], lambdas=[1.0, 1.0])
    with pytest.raises(ArtifactError, match="lambdas"):
        GraphAnswers.from_dict(forged)
    with pytest.raises(ParameterError, match="2 values for 1 queries"):
        MultipleQueryMechanism(1.0, 0.5, [EDGE], m=10).draw([1, 2], Bits(resolve_seed(1)))


def test_negative_leakage_needs_a_dense_query_and_a_larger_lambda():
    with pytest.raises(QueryError, match="stable and dense.*not dense"):
        NegativeLeakageMechanism(1.0, 0.5, two_path(), m=100)
    mech = NegativeLeakageMechanism(1.0, 0.1, triangle(), m=4039)
    base = 8 * 4 * 9 * math.log(4039)
    assert mech.lam == pytest.approx(base**3)
    assert mech.lam == pytest.approx(RelationshipMechanism(1.0, 0.1, triangle(), m=4039).lam
                                     * base)
    claims = mech.guarantee()
    assert claims["(ε, γ)-adversarial privacy"].holds
    assert not claims["no negative leakage"].holds
    assert "not established for this constant" in claims["no negative leakage"].statement
    assert not claims[IND].holds and not claims[DP].holds


def test_negative_leakage_output_distribution():
    """Δ at m = 30, γ = 0.5: uniform with probability (3/30)/0.5 = 0.2,
    otherwise DLap(λ/ε) with λ = (8·4·9·ln 30)^3, ε set so the scale is 3."""
    m, n = 30, 20_000
    lam = (8 * 4 * 9 * math.log(m)) ** 3
    mech = NegativeLeakageMechanism(lam / 3, 0.5, triangle(), m=m)
    bits = Bits(resolve_seed(41))
    draws = [mech.draw(12, bits) for _ in range(n)]
    uniform = sum(b == "uniform" for b, _ in draws)
    se = math.sqrt(n * 0.2 * 0.8)
    assert abs(uniform - n * 0.2) < 4.5 * se
    lap = np.array([v for b, v in draws if b == "laplace"]) - 12
    assert chi2_pvalue(lap, 3.0) > ALPHA
    assert chi2_pvalue(lap, 3.3) < ALPHA  # power: a scale 10% off is rejected
    # Algorithm 2.1's λ at the same ε would give noise of scale 3/base < 0.002.
    assert mech.scale / RelationshipMechanism(lam / 3, 0.5, triangle(), m=m).scale == (
        pytest.approx(8 * 4 * 9 * math.log(m)))


def test_negative_leakage_release_reopens():
    g = Graph.from_edges(np.array([[0, 1], [1, 2], [2, 0]]), directed=True, m=40)
    mech = NegativeLeakageMechanism.for_graph(1.0, 0.5, triangle(), g)
    # Algorithm 2.1's min_with_gs is refused by name (not a TypeError): not proved here.
    with pytest.raises(ParameterError, match="min_with_gs applies to Algorithm 2.1"):
        NegativeLeakageMechanism.for_graph(1.0, 0.5, triangle(), g, min_with_gs=True)
    assert NegativeLeakageMechanism.for_graph(1.0, 0.5, triangle(), g,
                                              min_with_gs=False).lam == mech.lam
    a = mech.answer(g, seed=5)
    assert a.mechanism == "relationship-negative-leakage"
    back = type(a).from_dict(a.to_dict())
    assert back.value == a.value and back.parameters == a.parameters
    assert isinstance(back.mechanism_object(), NegativeLeakageMechanism)
    assert "min_with_gs" not in a.parameters
    forged = a.to_dict()
    forged["parameters"] = dict(forged["parameters"], **{"lambda": RelationshipMechanism(
        1.0, 0.5, triangle(), m=40).lam})
    with pytest.raises(ArtifactError, match="'lambda'"):
        type(a).from_dict(forged)
    sharp = NegativeLeakageMechanism.for_graph(1e12, 0.5, triangle(), g)  # scale ≈ 5e-4
    values = [sharp.answer(g, seed=s).value for s in range(15)]
    assert np.median(values) == count(g, triangle()) == 3
