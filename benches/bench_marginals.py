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
    return view.estimate_marginals_arrays(equality_queries(view.schema)).estimate


def four_attribute_cover(schema, subsets):
    """A greedy cover of the asked subsets by four-attribute sets (25 for Adult):
    grow each uncovered subset by the attribute that covers the most others."""
    keys = [frozenset(s) for s in subsets]
    uncovered = sorted({k for k in keys if not any(k < o for o in keys)}, key=sorted)
    covers = []
    while uncovered:
        grow = max((uncovered[0] | {a} for a in schema.names if a not in uncovered[0]),
                   key=lambda c: sum(k <= c for k in uncovered))
        covers.append(grow)
        uncovered = [k for k in uncovered if not k <= grow]
    return [[a for a in schema.names if a in c] for c in covers]


def numpy_all(view):
    """The best numpy version we know: digits by 32-bit div/mod (m < 2^31), one
    bincount per set of a greedy four-attribute cover (25 passes instead of
    129), and every asked subset summed down from its cover's histogram by
    reshape + sum (exact), the estimator vectorised."""
    schema, codes = view.schema, view.codes
    a, b = view.parameters["alpha"], view.parameters["beta"]
    rest = codes.astype(np.uint32)
    digits = {}
    for attr in reversed(schema.attributes):
        digits[attr.name] = (rest % np.uint32(attr.size)).astype(np.int32)
        rest //= np.uint32(attr.size)
    subsets = equality_queries(schema)
    covers = four_attribute_cover(schema, subsets)
    hists = []
    for cover in covers:
        index = np.zeros(len(codes), dtype=np.int32)
        for name in cover:
            index = index * np.int32(schema[name].size) + digits[name]
        hists.append(np.bincount(index, minlength=math.prod(schema[n].size for n in cover))
                     .reshape([schema[n].size for n in cover]))
    out = []
    for subset in subsets:
        c = next(i for i, cover in enumerate(covers) if set(subset) <= set(cover))
        drop = tuple(i for i, n in enumerate(covers[c]) if n not in subset)
        n_view = hists[c].sum(axis=drop).reshape(-1)  # subsets keep the schema's order
        cells = math.prod(schema[n].size for n in subset)
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
