"""On office-size tables (the corpus tables of 1,000–8,600 rows) the default request
(k = 10, γ = 0.2) cannot tell typical counts from zero; the plan leads each (k, γ)
family's paragraph with the requests that can, and their cost in privacy
(issue 37). Each figure it states is checked with the library's own calls: the
largest useful k at γ is useful and 1% above it is not, and its ε given to
``for_privacy(gamma=, epsilon=)`` asks for the same request."""

from __future__ import annotations

import math

import corpus
import pytest

import privpub
from privpub.core.figures import figures

OFFICE = ["fair", "co2", "airports"]   # 6,366, 2,284 and 3,376 rows
FAMILIES = {"alphabeta": ("αβ (calibration 'exclusive')", privpub.AlphaBeta),
            "frapp": ("FRAPP", privpub.FRAPP)}


@pytest.fixture(scope="module", params=OFFICE)
def office(request):
    table = corpus.TABLES[request.param]()
    return table, privpub.plan(table.frame, schema=table.schema,
                               mechanisms=["alphabeta", "frapp"], calibrations=["exclusive"])


def paragraph(found: privpub.Plan, label: str) -> str:
    return next(p for p in found.explain().split("\n\n") if p.startswith(label))


def point(table, mechanism: str, k: float, gamma: float) -> dict:
    """The plan's row for one request (the library's verdict on it)."""
    (row,) = privpub.plan(table.frame, schema=table.schema, mechanisms=[mechanism], ks=[k],
                          gammas=[gamma], calibrations=["exclusive"]).rows
    return row


@pytest.mark.parametrize("mechanism", sorted(FAMILIES))
def test_the_plan_leads_with_the_request_that_makes_it_useful(office, mechanism):
    table, found = office
    label, _ = FAMILIES[mechanism]
    text = paragraph(found, label)
    default = next(r for r in found.rows if r["mechanism"] == mechanism and r["k"] == 10
                   and r["gamma"] == 0.2)
    assert default["feasible"] and default["weak_usefulness"]
    typical = default["typical_count"]
    assert text.startswith(f"{label}: to tell the typical count {typical:,.1f} (n/|D|")
    # ...before the feasible region, which now follows it.
    assert text.index("to tell the typical count") < text.index("the largest feasible k")
    regions = [r for r in found.regions if r["mechanism"] == mechanism]
    useful = [r for r in regions if r["largest_useful_k"] is not None]
    assert useful, regions
    for r in regions:
        g = r["gamma"]
        if r["largest_useful_k"] is None:
            assert f"γ = {g:g}: none" in text
            continue
        k = r["largest_useful_k"]
        assert figures(f"γ = {g:g}: k ≤ {k:.3g} (d = {k * found.density:.3g}") in text
        assert not point(table, mechanism, k, g)["weak_usefulness"]
        if k * 1.01 < r["largest_k"]:
            assert point(table, mechanism, k * 1.01, g)["weak_usefulness"]


@pytest.mark.parametrize("mechanism", sorted(FAMILIES))
def test_its_epsilon_asks_for_the_same_request_and_costs_privacy(office, mechanism):
    """αβ's exclusive calibration and FRAPP make the useful edge one ε at every γ: the
    plan says it once, ``for_privacy(gamma=γ, epsilon=ε)`` gives that edge's k at each γ,
    and it is above the ε of the default request (the cost in privacy)."""
    table, found = office
    label, family = FAMILIES[mechanism]
    text = paragraph(found, label)
    useful = [r for r in found.regions if r["mechanism"] == mechanism
              and r["largest_useful_k"] is not None]
    epsilon = useful[0]["useful_epsilon"]
    assert all(math.isclose(r["useful_epsilon"], epsilon, rel_tol=1e-3) for r in useful)
    assert f"ε ≥ {epsilon:.3g} (for_privacy(gamma=γ, epsilon={epsilon:.4g}))" in text
    default = next(r for r in found.rows if r["mechanism"] == mechanism and r["k"] == 10
                   and r["gamma"] == 0.2)
    assert epsilon > default["epsilon"]
    assert (f"The cost in privacy: adversaries whose prior exceeds that d are no longer "
            f"protected, and ε = {epsilon:.3g} against the ε = {default['epsilon']:.3g} of "
            "k = 10, γ = 0.2, which cannot.") in text
    n = len(table.frame)
    for r in useful:
        options = {"calibration": "exclusive"} if mechanism == "alphabeta" else {}
        asked = family.for_privacy(table.schema, n=n, gamma=r["gamma"], epsilon=epsilon,
                                   allow_prior_below_base_rate=True, **options)
        k = asked.d * table.schema.size / n
        assert math.isclose(k, r["largest_useful_k"], rel_tol=0.01), (r, k)


def test_adult_at_the_default_request_is_useful_and_says_so_after():
    """Adult's default request tells its typical count from zero: the plan leads with
    the feasible region as before and says the useful region after it."""
    df, schema = privpub.datasets.load_adult()
    found = privpub.plan(df, schema=schema, mechanisms=["alphabeta"],
                         calibrations=["exclusive"])
    text = paragraph(found, "αβ")
    assert text.startswith("αβ (calibration 'exclusive'): the largest feasible k ≥ 1 by γ")
    assert "To tell the typical count 9,751.0" in text
    assert "(k = 10, γ = 0.2 does, at ε = 6.29.)" in text
