"""Every mechanism's estimator is unbiased for conjunctive, disjunctive and
cross-attribute queries (mean over seeds within 4 standard errors)."""

import math

import numpy as np
import pytest

import privpub
from privpub import Condition

SCHEMA = privpub.Schema([privpub.IntRange("a", 0, 3), privpub.IntRange("b", 0, 7)])  # m = 32
RECORDS = np.array([0, 5, 5, 9, 17, 17, 17, 30, 31], dtype=np.uint64)
QUERIES = ["a >= 2 and b < 3", "a = 0 or b = 7", "a + b > 6", "not (a = 1) and b * 2 < a + 5"]
SEEDS = 1200


def _publishers():
    ab = privpub.AlphaBeta(SCHEMA, 0.3, 0.15)
    src = privpub.AlphaBeta(SCHEMA, 0.3, 0.1, source={"a": [0.1, 0.2, 0.3, 0.4]})
    frapp = privpub.FRAPP(SCHEMA, 0.5)

    def multiview(seed):
        pub = privpub.MultiViewPublisher(privpub.AlphaBeta(SCHEMA, 0.3, 0.15), max_views=3)
        pub.publish(RECORDS, duplicates="records", seed=seed)
        pub.publish(RECORDS, duplicates="records", seed=seed + 10**6)
        return pub.publish(RECORDS, duplicates="records", seed=seed + 2 * 10**6)

    return {"alphabeta": lambda s: ab.publish(RECORDS, duplicates="records", seed=s),
            "source": lambda s: src.publish(RECORDS, duplicates="records", seed=s),
            "frapp": lambda s: frapp.publish(RECORDS, duplicates="records", seed=s),
            "multiview (3rd view)": multiview}


@pytest.mark.parametrize("name", list(_publishers()))
@pytest.mark.slow
def test_unbiased(name):
    publish = _publishers()[name]
    conds = [Condition(SCHEMA, q) for q in QUERIES]
    truths = [c.count_codes(RECORDS) for c in conds]
    est = np.array([[publish(s).estimate(c).value for c in conds] for s in range(SEEDS)])
    for j, q in enumerate(QUERIES):
        se = est[:, j].std(ddof=1) / math.sqrt(SEEDS)
        assert abs(est[:, j].mean() - truths[j]) < 4 * se, (name, q, est[:, j].mean(), truths[j])
    # Power: a truth one record off is rejected for the first query.
    se = est[:, 0].std(ddof=1) / math.sqrt(SEEDS)
    assert abs(est[:, 0].mean() - (truths[0] + 1)) > 4 * se


# 9 records: every bound is wide, which the releases say (UsefulnessWarning); this
# test checks that marginals equal single queries.
@pytest.mark.filterwarnings("ignore::privpub.UsefulnessWarning")
@pytest.mark.parametrize("name", list(_publishers()))
def test_marginals_agree_with_one_query_at_a_time(name):
    view = _publishers()[name](7)
    table = view.estimate_marginals(["b", "a"])
    assert len(table) == 32 and list(table.columns[:2]) == ["b", "a"]
    for row in table.sample(8, random_state=0).itertuples(index=False):
        single = view.estimate({"a": row.a, "b": row.b})
        assert row.n_view == single.n_view and row.n_domain == single.n_domain
        assert row.estimate == pytest.approx(single.value)
        assert row.stderr == pytest.approx(single.stderr)
    one = view.estimate_marginals(["a"])
    assert one["estimate"].tolist() == pytest.approx(
        [view.estimate({"a": a}).value for a in range(4)])


# A few records: the view says its bound is weak (UsefulnessWarning); this test
# checks the error for a bad attribute.
@pytest.mark.filterwarnings("ignore::privpub.UsefulnessWarning")
def test_marginals_refuse_bad_attributes():
    view = privpub.AlphaBeta(SCHEMA, 0.3, 0.15).publish(RECORDS, duplicates="records", seed=1)
    with pytest.raises(privpub.SchemaError, match="no attribute 'c'"):
        view.estimate_marginals(["c"])
    with pytest.raises(privpub.ParameterError, match="repeat"):
        view.estimate_marginals(["a", "a"])
