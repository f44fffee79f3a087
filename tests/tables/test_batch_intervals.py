"""A batch's intervals are solved as one batch (issue 36): ``estimate_many``
builds its mechanism's law once over the batch's counts
(:class:`~privpub.tables.batchestimates.BatchCountLaw`), and every interval
and inconsistency equals the one each estimate's own law gives alone, for each
family's law (αβ exact and records, FRAPP, multi-view's split law). Estimates
made one by one elsewhere stack their laws (``ListLaw`` over ``CountLaw.stacked``)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from privpub import FRAPP, AlphaBeta, Categorical, IntRange, Schema, UsefulnessWarning
from privpub.alphabeta.estimator import SplitLaw
from privpub.alphabeta.multiview import MultiViewPublisher
from privpub.core.estimate import LEVEL, ListLaw
from privpub.tables import confidence
from privpub.tables.batchestimates import BatchCountLaw

pytestmark = pytest.mark.filterwarnings("ignore::privpub.PrivacyWarning",
                                        "ignore::privpub.UsefulnessWarning")

SCHEMA = Schema([Categorical("band", ["<20", "20-39", "40-59", "60+"], ordered=True),
                 IntRange("age", 0, 99), Categorical("sex", ["F", "M"])])


def _frame(n: int, seed: int, repeats: bool = False) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"band": rng.choice(SCHEMA["band"].values, n),
                          "age": rng.integers(0, 100, n), "sex": rng.choice(["F", "M"], n)})
    return pd.concat([frame, frame.head(n // 5)]) if repeats else frame


def _texts(count: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        low = int(rng.integers(0, 100))
        out.append(f"age BETWEEN {low} AND {low + int(rng.integers(0, 30))}"
                   + (f" AND sex = '{rng.choice(['F', 'M'])}'" if rng.random() < 0.5 else ""))
    return out


def _releases():
    # Built at collection, outside any test's filters: 800 rows of a wide domain, whose
    # views say their bounds are weak (UsefulnessWarning); what is checked is the intervals.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UsefulnessWarning)
        return list(_published())


def _published():
    yield "alphabeta", AlphaBeta(SCHEMA, 0.3, 0.02).publish(_frame(800, 1), seed=2,
                                                            duplicates="set")
    yield "alphabeta records", AlphaBeta(SCHEMA, 0.3, 0.02).publish(
        _frame(800, 1, repeats=True), seed=3, duplicates="records")
    yield "frapp", FRAPP(SCHEMA, 0.4).publish(_frame(800, 2), seed=4, duplicates="set")
    publisher = MultiViewPublisher(AlphaBeta(SCHEMA, 0.3, 0.02), max_views=2)
    publisher.publish(_frame(800, 3), seed=5, duplicates="set")
    yield "multiview", publisher.publish(_frame(800, 3), seed=6, duplicates="set")


@pytest.mark.parametrize("name, release", list(_releases()), ids=lambda x: str(x)[:20])
def test_batch_intervals_equal_each_estimates_own(name, release):
    batch = release.estimate_many(_texts(300, 7))
    assert isinstance(batch.law, BatchCountLaw)  # one law over the batch's counts
    assert isinstance(batch.law.law, SplitLaw if name == "multiview" else confidence.KeepLaw)
    for level in (LEVEL, 0.5, 0.999):
        lo, hi = batch.interval(level)
        empty = batch.law.inconsistent(level)
        alone = [batch[i].law for i in range(len(batch))]  # each estimate's own law
        assert [(int(a), int(b)) for a, b in zip(lo, hi, strict=True)] == [
            tuple(int(x) for x in law.interval(level)) for law in alone]
        assert list(empty) == [bool(np.asarray(law.inconsistent(level)).reshape(-1)[0])
                               for law in alone]
    records = batch.to_records(LEVEL)
    assert [(r["lo"], r["hi"], r["inconsistent"]) for r in records] == [
        (*(int(x) for x in batch[i].interval(LEVEL)), batch[i].inconsistent(LEVEL))
        for i in range(len(batch))]


def test_an_inconsistent_problem_is_inconsistent_in_the_stack_too():
    """A count in the far tail for every true count (what was shown as [0, 0])
    stays inconsistent, with its whole-range interval, when stacked."""
    laws = (confidence.KeepLaw(5, 0.5, 0.01, 100.0, 50),
            confidence.KeepLaw(90, 0.5, 0.01, 100.0, 0),  # c = 0 only: n_V ≈ 1, 90 seen
            confidence.KeepLaw(40, 0.5, 0.01, 100.0, 80))
    batch = ListLaw(laws)
    assert batch._stacked is not None
    assert list(batch.inconsistent(LEVEL)) == [False, True, False] == [
        bool(np.asarray(law.inconsistent(LEVEL)).reshape(-1)[0]) for law in laws]
    lo, hi = batch.interval(LEVEL)
    assert [(int(a), int(b)) for a, b in zip(lo, hi, strict=True)] == [
        tuple(int(x) for x in law.interval(LEVEL)) for law in laws]


def test_laws_of_other_fixed_state_do_not_stack():
    one = confidence.KeepLaw(5, 0.5, 0.01, 100.0, 50)
    other = type(one).__new__(type(one))
    other.__dict__.update(one.__dict__, extra=3)
    assert confidence.KeepLaw.stacked([one, one]) is not None
    assert confidence.KeepLaw.stacked([one, other]) is None
    assert confidence.KeepLaw.stacked([confidence.KeepLaw([5, 6], 0.5, 0.01, 100.0, 50)]) is None
