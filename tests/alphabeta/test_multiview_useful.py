"""A weak first view of a planned sequence leads its UsefulnessWarning with the
request of ``MultiViewPublisher.for_privacy`` that makes it useful (issue 37),
each figure checked with the library's own calls; tiny priors no longer divide
by an underflowed probability."""

from __future__ import annotations

import math
import re
import warnings

import corpus
import pytest

import privpub
from privpub.alphabeta import sequence
from privpub.alphabeta.multiview import MultiViewPublisher, MultiViewStep


def first_view_warning(table, **request):
    publisher = MultiViewPublisher.for_privacy(table.schema, n=len(table.frame), **request)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        publisher.publish(table.frame, seed=1, duplicates="records")
    (weak,) = [str(w.message) for w in said if w.category is privpub.UsefulnessWarning]
    return publisher, weak


def test_a_weak_first_view_leads_with_the_request_that_makes_it_useful():
    """fair (6,366 records), three views at k = 10, γ = 0.2: the warning asks for a
    smaller k first; that k, asked of for_privacy with the same max_views and
    calibration, gives a first view whose bound tells the typical count from zero."""
    table = corpus.fair()
    publisher, weak = first_view_warning(table, gamma=0.2, k=10, max_views=3,
                                         allow_prior_below_base_rate=True)
    found = re.match(r"αβ view 1/3: to tell typical counts \(([\d,.]+)\) from zero, ask for "
                     r"k = ([\d.e-]+) instead of 10 at γ = 0.2", weak)
    assert found, weak
    typical, k = float(found[1].replace(",", "")), float(found[2])
    assert "no finite ε instead of no finite ε" not in weak

    def first_bound(k: float) -> float:
        asked = MultiViewPublisher.for_privacy(
            table.schema, n=len(table.frame), gamma=0.2, k=k, max_views=3,
            calibration=publisher.calibration, allow_prior_below_base_rate=True)
        step = MultiViewStep(asked.mech.with_records(len(table.frame), publisher.mech.records
                                                     or publisher.views[0].parameters["records"]),
                             1, 3)
        return step.error_bound()

    assert first_bound(k) < typical <= first_bound(k * 1.01)


def test_a_publisher_built_from_alpha_and_beta_says_no_request():
    """α and β given (no for_privacy): nothing to search, the warning as before."""
    table = corpus.fair()
    mech = privpub.AlphaBeta(table.schema, 0.3, 0.01, n=len(table.frame))
    publisher = MultiViewPublisher(mech, 2)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        publisher.publish(table.frame, seed=1, duplicates="records")
    (weak,) = [str(w.message) for w in said if w.category is privpub.UsefulnessWarning]
    assert "ask for" not in weak and "A bound below" in weak


def test_a_probability_that_underflows_is_no_noise():
    """β so small that view probabilities underflow to 0 reads as β = 0 (a shown
    tuple is in I), where it divided by zero; for_privacy at a tiny k then builds."""
    high, low = sequence.likelihood_extremes(0.5, 5e-324, 3, [True, True])
    assert math.isinf(high) and low == pytest.approx(0.25)
    table = corpus.airports()
    MultiViewPublisher.for_privacy(table.schema, n=len(table.frame), gamma=0.2, k=1e-9,
                                   max_views=3, allow_prior_below_base_rate=True)
