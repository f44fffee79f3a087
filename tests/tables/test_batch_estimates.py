"""A batch of counting conditions is estimated at once (tables.batchestimates,
issue 36), and gives exactly what each condition estimated alone gives: the
same value and stderr to the bit, the same intervals and inconsistencies at
several levels, the same records. Checked on drawn batches over missing
values, an ordered band, a column of 300 values and ordered dates, for each
count estimator's law (αβ exact and records, a source distribution, FRAPP, a
later view of several), against a reference that estimates each condition
from its own scalar counts (what estimate_many did one query at a time), and
on an SPLU-Gen release (which estimates its releases itself)."""

from __future__ import annotations

import datetime
import gc
import math
import pickle
import warnings
import weakref

import numpy as np
import pandas as pd
import pytest
from oracle import joined_texts  # (tests/oracle.py, not a package)

from privpub import FRAPP, AlphaBeta, Categorical, IntRange, Schema, SPLUGen
from privpub.alphabeta.multiview import MultiViewPublisher
from privpub.alphabeta.source import SourceDistribution
from privpub.core.capabilities import stated_bound
from privpub.core.errors import ParameterError
from privpub.counting.domaincount import count
from privpub.tables.viewcounts import Counts, context_set, count_rows, memo

pytestmark = pytest.mark.filterwarnings("ignore::privpub.PrivacyWarning",
                                        "ignore::privpub.UsefulnessWarning")

BANDS = ["<20", "20-39", "40-59", "60+"]
CITIES = [f"c{i:03d}" for i in range(300)]
DAYS = [(datetime.date(2024, 1, 1) + datetime.timedelta(d)).isoformat() for d in range(120)]
SCHEMA = Schema([Categorical("band", BANDS, ordered=True), IntRange("age", 0, 99),
                 Categorical("city", CITIES), Categorical("sex", ["F", "M", "?"], missing="?"),
                 Categorical("day", DAYS, ordered=True)])
LEVELS = (0.95, 0.5, 0.999)


def _frame(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"band": rng.choice(BANDS, n), "age": rng.integers(0, 100, n),
                         "city": rng.choice(CITIES[:40], n),
                         "sex": rng.choice(["F", "M", "?"], n, p=[0.45, 0.45, 0.1]),
                         "day": rng.choice(DAYS, n)})


def _texts(seed: int, count: int) -> list[str]:
    rng = np.random.default_rng(seed)
    atoms = [lambda: f"band >= '{rng.choice(BANDS)}'",
             lambda: f"age {rng.choice(['<', '>=', '=', '<>'])} {rng.integers(0, 100)}",
             lambda: f"city IN ('{rng.choice(CITIES[:40])}', '{rng.choice(CITIES)}')",
             lambda: f"city NOT IN ('{rng.choice(CITIES[:40])}')",
             lambda: "sex IS NULL" if rng.random() < 0.3 else f"sex = '{rng.choice(['F', 'M'])}'",
             lambda: f"day BETWEEN '{rng.choice(DAYS[:80])}' AND '{rng.choice(DAYS[60:])}'"]
    # TRUE and FALSE read no attribute (counted apart from the batch's pass).
    return joined_texts(rng, atoms, count) + ["TRUE", "FALSE"]


def _releases():
    with warnings.catch_warnings():  # (small data over a wide domain: weak bounds, warned)
        warnings.simplefilter("ignore")
        frame = _frame(1_500, 1)
        yield "alphabeta set", AlphaBeta(SCHEMA, 0.4, 1e-6).publish(frame, seed=2,
                                                                      duplicates="set")
        repeated = pd.concat([frame, frame.head(300)])
        yield "alphabeta records", AlphaBeta(SCHEMA, 0.4, 1e-6).publish(
            repeated, seed=3, duplicates="records")
        source = SourceDistribution.from_frame(SCHEMA, frame, columns=["band", "sex"])
        yield "alphabeta source", AlphaBeta(SCHEMA, 0.4, 1e-6, source=source).publish(
            frame, seed=4, duplicates="set")
        yield "frapp", FRAPP(SCHEMA, 0.6, n=len(frame)).publish(frame, seed=5,
                                                                 duplicates="set")
        publisher = MultiViewPublisher(AlphaBeta(SCHEMA, 0.4, 1e-6), max_views=2)
        publisher.publish(frame, seed=6, duplicates="set")
        yield "multiview", publisher.publish(frame, seed=7, duplicates="set")


RELEASES = list(_releases())


def _alone(view, text: str):
    """The reference: one condition's value, stderr and law from its own scalar
    counts (Q(V) counted over the rows, Q(D) exact, the context sets' counts),
    as the mechanism's estimator and law read one query."""
    cond = view.condition(text)
    n_domain = count(SCHEMA, cond).value

    @memo
    def context(name):
        within = context_set(view.context, name)
        return count_rows(view.rows, cond, within=within), cond.count_codes(within)

    counts = Counts(count_rows(view.rows, cond), np.float64(n_domain),
                    memo(lambda w: count(SCHEMA, cond, weights=w).value), context)
    mech = view.mechanism_object()
    value, variance = mech.estimate(counts)
    return float(value), math.sqrt(max(float(variance), 0.0)), mech.interval_law(counts)


@pytest.mark.parametrize("name, view", RELEASES, ids=[n for n, _ in RELEASES])
def test_a_batch_gives_what_each_condition_alone_gives(name, view):
    texts = _texts(11, 150)
    batch = view.estimate_many(texts)
    alone = [view.estimate(t) for t in texts]
    assert [batch[i] for i in range(len(texts))] == alone  # every field, interval and note
    assert batch.to_records() == [e.to_dict() for e in alone]
    reference = [_alone(view, t) for t in texts]
    # Bit for bit: the estimator's arithmetic over arrays is its arithmetic per query.
    assert batch.value.tolist() == [r[0] for r in reference] == [e.value for e in alone]
    assert batch.stderr.tolist() == [r[1] for r in reference]
    assert batch.n_view.tolist() == [view.count(t) for t in texts]
    for level in LEVELS:
        lo, hi = batch.interval(level)
        ends = [tuple(int(np.asarray(x).reshape(-1)[0]) for x in r[2].interval(level))
                for r in reference]
        assert list(zip(lo.tolist(), hi.tolist(), strict=True)) == ends == [
            e.interval(level) for e in alone]
        empty = [bool(np.asarray(r[2].inconsistent(level)).reshape(-1)[0]) for r in reference]
        assert batch.inconsistent(level).tolist() == empty
    assert batch.bound == alone[0].bound and batch.counts == alone[0].counts
    assert batch.interval_method == alone[0].interval_method == reference[0][2].method


def test_a_stated_bound_reaches_every_estimate():
    view = RELEASES[0][1]
    stated = stated_bound(view.mechanism_object())
    batch = view.estimate_many(_texts(3, 20))
    assert batch.bound == stated.bound
    assert set(batch.failure_probability.tolist()) == {stated.failure_probability}


def test_an_splu_gen_batch_gives_what_each_query_alone_gives():
    rng = np.random.default_rng(5)
    n = 2_000
    schema = Schema([Categorical("band", BANDS, ordered=True), IntRange("age", 0, 99),
                     Categorical("sex", ["F", "M", "?"], missing="?"),
                     Categorical("day", DAYS, ordered=True), IntRange("illness", 0, 5)])
    frame = pd.DataFrame({"band": rng.choice(BANDS, n), "age": rng.integers(0, 100, n),
                          "sex": rng.choice(["F", "M", "?"], n, p=[0.45, 0.45, 0.1]),
                          "day": rng.choice(DAYS, n), "illness": rng.integers(0, 6, n)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        view = SPLUGen(3, "illness", schema=schema).publish(frame, seed=8)
        predicates = [lambda: f"band >= '{rng.choice(BANDS)}'",
                      lambda: f"age < {rng.integers(0, 100)}",
                      lambda: "sex IS NULL" if rng.random() < 0.3 else "sex = 'F'",
                      lambda: f"day <= '{rng.choice(DAYS)}'"]
        texts = [f"({t}) AND illness = {rng.integers(0, 6)}"
                 for t in joined_texts(rng, predicates, 80)]
        texts += ["illness = 2", "band = '<20' AND age > 30"]
        batch = view.estimate_many(texts)
        alone = [view.estimate(t) for t in texts]
    assert [batch[i] for i in range(len(texts))] == alone
    assert batch.value.tolist() == [e.value for e in alone]
    for level in LEVELS:
        lo, hi = batch.interval(level)
        assert list(zip(lo.tolist(), hi.tolist(), strict=True)) == [
            e.interval(level) for e in alone]


@pytest.mark.parametrize("name, view", [r for r in RELEASES if r[0] in ("alphabeta source",
                                                                          "multiview")],
                         ids=["alphabeta source", "multiview"])
def test_a_batch_keeps_its_answers_not_its_conditions(name, view):
    """The batch's estimates hold the counts their laws read, not the conditions
    (their truth tables) nor the view; each query's own law is made from them,
    after a pickle too (the weights then found by value)."""
    conditions = [view.condition(t) for t in _texts(4, 30)]
    held = [weakref.ref(c) for c in conditions]
    batch = view.estimate_many(conditions)
    alone = [view.estimate(c) for c in conditions]
    del conditions
    gc.collect()
    assert all(ref() is None for ref in held)
    assert [batch[i] for i in range(len(alone))] == alone
    back = pickle.loads(pickle.dumps(batch))
    assert [back[i] for i in range(len(alone))] == alone


@pytest.mark.parametrize("name, view", RELEASES[:1] + [("splu", None)], ids=["alphabeta", "splu"])
def test_a_batch_of_no_queries_is_refused(name, view):
    if view is None:
        frame = pd.DataFrame({"band": ["<20"] * 12, "illness": list(range(6)) * 2})
        schema = Schema([Categorical("band", BANDS, ordered=True), IntRange("illness", 0, 5)])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            view = SPLUGen(2, "illness", schema=schema).publish(frame, seed=1)
    with pytest.raises(ParameterError, match="no estimates to batch"):
        view.estimate_many([])
