"""All 304,364 equality queries over ≤ 3 attributes on the Adult αβ view.

privpub: ``view.estimate_marginals_many(subsets)`` for the 129 subsets
(digits decoded once in Rust, histograms in Rust in parallel over subsets,
vectorised estimator, a labelled DataFrame per subset).
Baseline: what a numpy user writes — digits by repeated ``//`` and ``%`` on
the uint64 codes, ``np.bincount`` per subset, (n_V − β n_D)/α.
"""

import math

import numpy as np
import pytest

import privpub
from privpub.experiments.adult_alphabeta import equality_queries


@pytest.fixture(scope="module")
def adult_view():
    df, schema = privpub.datasets.load_adult()
    # Sec. 4.2's parameters and record counts: the 1.5M-row view the issue measured.
    mech = privpub.AlphaBeta.for_privacy(schema, n=len(df), gamma=0.2, k=10,
                                         calibration="sec4.2")
    return mech.publish(df, seed=0, duplicates="records")


def privpub_all(view):
    view._digits = view._small_digits = None  # time the decode too
    tables = view.estimate_marginals_many(equality_queries(view.schema))
    return np.concatenate([t["estimate"].to_numpy() for t in tables])


def numpy_all(view):
    schema, codes = view.schema, view.codes
    a, b = view.parameters["alpha"], view.parameters["beta"]
    digits, rest = {}, codes.copy()
    for attr in reversed(schema.attributes):
        digits[attr.name] = (rest % np.uint64(attr.size)).astype(np.int64)
        rest //= np.uint64(attr.size)
    out = []
    for subset in equality_queries(schema):
        index = np.zeros(len(codes), dtype=np.int64)
        for name in subset:
            index = index * schema[name].size + digits[name]
        cells = math.prod(schema[n].size for n in subset)
        n_view = np.bincount(index, minlength=cells)
        out.append((n_view - b * (schema.size // cells)) / a)
    return np.concatenate(out)


@pytest.mark.benchmark(group="304,364 equality estimates on the Adult view")
def test_marginals_privpub(benchmark, adult_view):
    benchmark.extra_info["role"] = "privpub"
    est = benchmark(lambda: privpub_all(adult_view))
    assert len(est) == 304_364
    np.testing.assert_allclose(est, numpy_all(adult_view))


@pytest.mark.benchmark(group="304,364 equality estimates on the Adult view")
def test_marginals_numpy(benchmark, adult_view):
    benchmark.extra_info["role"] = "baseline"
    est = benchmark(lambda: numpy_all(adult_view))
    assert len(est) == 304_364
