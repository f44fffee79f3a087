"""``for_privacy(epsilon=ε)`` for αβ and FRAPP: the guarantee states ε back, the
(d, γ) it states calibrates to the same parameters, and bad or inconsistent
requests are refused naming the parameter and value."""

from __future__ import annotations

import math

import pytest

import privpub
from privpub.alphabeta.accounting import CALIBRATIONS
from privpub.core.errors import ParameterError

N = 30_162
EPSILONS = (0.5, 1.0, 2.0, 5.0, 6.286)


@pytest.fixture(scope="module")
def schema():
    _, derived = privpub.datasets.load_adult()
    return privpub.Schema(list(derived))  # the same domains, declared


@pytest.mark.parametrize("calibration", CALIBRATIONS)
@pytest.mark.parametrize("epsilon", EPSILONS)
def test_alphabeta_round_trip(schema, epsilon, calibration):
    mech = privpub.AlphaBeta.for_privacy(schema, n=N, gamma=0.2, epsilon=epsilon,
                                         calibration=calibration,
                                         allow_prior_below_base_rate=True)
    assert mech.guarantee().epsilon == pytest.approx(epsilon, rel=1e-9)
    back = privpub.AlphaBeta.for_privacy(schema, n=N, gamma=mech.gamma, d=mech.d,
                                         calibration=calibration,
                                         allow_prior_below_base_rate=True)
    assert (back.alpha, back.beta) == (mech.alpha, mech.beta)
    # (d, γ) and ε together, when they agree, give the same mechanism.
    both = privpub.AlphaBeta.for_privacy(schema, n=N, gamma=0.2, d=mech.d, epsilon=epsilon,
                                         calibration=calibration,
                                         allow_prior_below_base_rate=True)
    assert (both.alpha, both.beta) == (mech.alpha, mech.beta)


def test_the_default_calibration_meets_the_issue_figure(schema):
    """k = 10, γ = 0.2 on Adult is ε = 6.286, and ε = 6.286 is k = 10 back."""
    mech = privpub.AlphaBeta.for_privacy(schema, n=N, gamma=0.2, k=10)
    assert mech.guarantee().epsilon == pytest.approx(6.2857, abs=1e-4)
    again = privpub.AlphaBeta.for_privacy(schema, n=N, gamma=0.2,
                                          epsilon=mech.guarantee().epsilon)
    assert again.d * schema.size / N == pytest.approx(10, rel=1e-9)


def test_alphabeta_with_a_source_round_trips(schema):
    source = {"sex": [0.3, 0.7], "salary": [0.75, 0.25]}
    mech = privpub.AlphaBeta.for_privacy(schema, n=N, gamma=0.2, epsilon=3.0, source=source)
    assert mech.guarantee().epsilon == pytest.approx(3.0, rel=1e-9)
    back = privpub.AlphaBeta.for_privacy(schema, n=N, gamma=0.2, d=mech.d, source=source)
    assert (back.alpha, back.beta) == (mech.alpha, mech.beta)


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_frapp_round_trip(schema, epsilon):
    mech = privpub.FRAPP.for_privacy(schema, n=N, gamma=0.2, epsilon=epsilon)
    assert mech.guarantee().epsilon == pytest.approx(epsilon, rel=1e-12)
    back = privpub.FRAPP.for_privacy(schema, n=N, gamma=mech.gamma, d=mech.d)
    assert back.gamma_frapp == pytest.approx(mech.gamma_frapp, rel=1e-9)
    assert back.guarantee().epsilon == pytest.approx(epsilon, rel=1e-9)


@pytest.mark.parametrize("family", [privpub.AlphaBeta, privpub.FRAPP])
@pytest.mark.parametrize(("epsilon", "match"), [
    (0.0, "epsilon .*must be positive, got 0.0"),
    (-1, "epsilon .*must be positive, got -1"),
    (math.inf, "epsilon must be finite, got inf"),
    ("1", "epsilon must be a number, got '1'"),
])
def test_bad_epsilon_is_named(schema, family, epsilon, match):
    with pytest.raises(ParameterError, match=match):
        family.for_privacy(schema, n=N, gamma=0.2, epsilon=epsilon)


@pytest.mark.parametrize("family", [privpub.AlphaBeta, privpub.FRAPP])
def test_inconsistent_epsilon_and_prior_are_refused(schema, family):
    """An old caller's epsilon=0.1 (now failure_probability) beside k is refused."""
    with pytest.raises(ParameterError, match=r"epsilon = 0.1 disagrees with d = .*k = 10.*"
                                             r"failure_probability"):
        family.for_privacy(schema, n=N, gamma=0.2, k=10, epsilon=0.1)


def test_epsilon_below_the_base_rate_is_refused_unless_allowed(schema):
    with pytest.raises(ParameterError, match=r"epsilon = 9.0 at γ = 0.2 gives d = .*base rate"):
        privpub.AlphaBeta.for_privacy(schema, n=N, gamma=0.2, epsilon=9)
    mech = privpub.AlphaBeta.for_privacy(schema, n=N, gamma=0.2, epsilon=9,
                                         allow_prior_below_base_rate=True)
    assert mech.guarantee().epsilon == pytest.approx(9, rel=1e-9)
