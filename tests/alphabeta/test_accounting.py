"""Accounting formulas against the paper's numbers and their definitions."""

import math

import pytest

from privpub import accounting
from privpub.frapp import accounting as frapp_accounting


def test_section_5_ratio_of_bounds_is_one_over_sqrt_20():
    k, gamma, eps = 10, 0.2, 0.05
    ratio = accounting.rho_alphabeta(k, gamma, eps) / frapp_accounting.rho_frapp(k, gamma, eps)
    assert ratio == pytest.approx(math.sqrt(2 * gamma / (k * (1 - gamma))))
    assert ratio == pytest.approx(1 / math.sqrt(20))


def test_theorem_4_3_r_and_printed_rho():
    # β = d/γ and α = 1/2 − β ≈ 1/2: r = βm/(α²n) = (k/γ)/α² ≈ 4k/γ.
    k, gamma, eps = 10, 0.2, 0.05
    n, m = 10**6, 10**12
    beta = k * n / m / gamma
    r = accounting.theorem_4_3_r(0.5 - beta, beta, n=n, m=m)
    assert r == pytest.approx(4 * k / gamma, rel=1e-3)
    assert accounting.rho_theorem_4_3(r, eps) == pytest.approx(
        math.sqrt(2 * (4 * k / gamma + 1) * math.log(2 / eps)), rel=1e-3)


def test_bernstein_deviation_against_the_exact_binomial_tail():
    """For a Binomial sum the Bernstein λ is a valid two-sided bound (the exact
    tail probability at λ is ≤ ε), and not far from the exact quantile."""
    from scipy import stats
    for n, p, eps in [(10_000, 0.5, 0.05), (10**6, 0.002, 0.01), (500, 0.1, 0.2)]:
        lam = accounting.bernstein_deviation(n * p * (1 - p), 1.0, eps)
        dist = stats.binom(n, p)
        tail = dist.cdf(n * p - lam) + dist.sf(n * p + lam - 1e-9)
        assert tail <= eps
        assert lam < 2 * (dist.ppf(1 - eps / 2) - n * p) + 2


def test_proposition_a3_round_trip_and_a5():
    d, gamma = 0.01, 0.2
    delta = accounting.relative_delta_from_gamma(d, gamma)
    assert math.exp(delta) == pytest.approx(gamma / d * (1 - d) / (1 - gamma))
    # γ = d e^δ from the first part gives back a γ ≥ the original (the converse is looser).
    assert accounting.gamma_from_relative_delta(d, delta) >= gamma
    assert accounting.indistinguishability_from_delta(delta) == pytest.approx(
        2 * delta + 2 * math.log(2))


def test_relative_privacy_holds_for_the_alphabeta_posterior():
    # An exactly (d, γ)-private αβ satisfies e^−δ ≤ Pr[t|V]/Pr[t] ≤ e^δ with Prop. A.3's δ.
    alpha, beta, d, gamma = 0.45, 0.05, 0.02, 0.2
    assert accounting.is_alphabeta_private(alpha, beta, d, gamma)
    delta = accounting.relative_delta_from_gamma(d, gamma)
    for p in (1e-6, 1e-3, d):
        for seen in (True, False):
            ratio = accounting.alphabeta_posterior(p, alpha, beta, seen) / p
            assert math.exp(-delta) <= ratio <= math.exp(delta)


@pytest.mark.parametrize("call, message", [
    (lambda: accounting.alphabeta_posterior(1.5, 0.3, 0.1, True), "prior must be in"),
    (lambda: accounting.alphabeta_posterior(0.1, 0.7, 0.5, True), "alpha \\+ beta"),
    (lambda: accounting.relative_delta_from_gamma(0.0, 0.2), "d must be in"),
    (lambda: accounting.rho_theorem_4_3(3.0, 1.0), "failure_probability must be in"),
    (lambda: accounting.indistinguishability_from_delta(-1), "relative_delta must be non-negative"),
])
def test_bad_parameters_are_named(call, message):
    with pytest.raises(accounting.ParameterError, match=message):
        call()
