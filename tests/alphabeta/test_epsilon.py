"""The ε every αβ guarantee states is the exact likelihood-ratio bound: checked
by brute force over every pair of neighbouring instances on a small domain,
every view enumerated and its probability computed from Algorithm 1 (or 7)
directly, not from privpub's formulas."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import privpub
from privpub.alphabeta import AlphaBeta
from privpub.alphabeta.accounting import alphabeta_epsilon
from privpub.alphabeta.multiview import MultiViewStep
from privpub.alphabeta.sequence import view_probabilities
from privpub.alphabeta.source import SourceDistribution
from privpub.core.guarantee import DIFFERENTIAL_PRIVACY, INDISTINGUISHABILITY

ALPHA, BETA = 0.35, 0.12


def subsets(m: int):
    return [frozenset(c) for r in range(m + 1) for c in itertools.combinations(range(m), r)]


def worst_log_ratio(pairs, outputs, prob) -> float:
    """max over neighbouring (I, I') and outputs Y of ln Pr[Y|I]/Pr[Y|I']."""
    worst = -math.inf
    for first, second in pairs:
        for y in outputs(first, second):
            p, q = prob(first, y), prob(second, y)
            if p == 0:
                continue
            worst = max(worst, math.inf if q == 0 else math.log(p / q))
    return worst


def set_pairs(m: int, n: int):
    """Every ordered pair of n-subsets with one tuple replaced by another."""
    for inst in itertools.combinations(range(m), n):
        for s in inst:
            for u in set(range(m)) - set(inst):
                yield frozenset(inst), frozenset(inst) - {s} | {u}


def one_view(alpha: float, beta_of) -> callable:
    def prob(inst, view):
        p = 1.0
        for t, b in enumerate(beta_of):
            q = alpha + b if t in inst else b
            p *= q if t in view else 1 - q
        return p
    return prob


def stated(mech) -> float:
    return mech.guarantee()[INDISTINGUISHABILITY].epsilon


def test_set_epsilon_is_the_brute_force_bound():
    schema = privpub.Schema([privpub.IntRange("a", 0, 3)])  # m = 4, a declared domain
    mech = AlphaBeta(schema, ALPHA, BETA, n=2)
    views = subsets(4)
    brute = worst_log_ratio(set_pairs(4, 2), lambda *_: views, one_view(ALPHA, [BETA] * 4))
    assert stated(mech) == pytest.approx(brute, rel=1e-12)
    assert mech.guarantee()[INDISTINGUISHABILITY].holds
    assert mech.guarantee().epsilon == pytest.approx(brute, rel=1e-12)
    # The figure at Adult's default calibration.
    assert alphabeta_epsilon(0.49722, 0.0018523) == pytest.approx(6.286, abs=5e-4)


def test_source_epsilon_is_the_brute_force_bound():
    schema = privpub.Schema([privpub.IntRange("a", 0, 1), privpub.IntRange("b", 0, 1)])  # m = 4
    source = SourceDistribution(schema, {"a": [0.3, 0.7], "b": [0.6, 0.4]})
    mech = AlphaBeta(schema, ALPHA, BETA, n=2, source=source)
    beta_of = BETA * source.weight_of(np.arange(4, dtype=np.uint64).reshape(-1, 1))
    views = subsets(4)
    brute = worst_log_ratio(set_pairs(4, 2), lambda *_: views, one_view(ALPHA, list(beta_of)))
    assert stated(mech) == pytest.approx(brute, rel=1e-12)
    # The uniform formula at the mean β is not it (the test has power).
    assert alphabeta_epsilon(ALPHA, BETA) != pytest.approx(brute, rel=1e-3)


# ---- duplicates="records": a multiset of records ------------------------------------------


def records_count_prob(c: int, x: int) -> float:
    """Pr[a tuple with c records shows x times]: first copy α+β, each further α."""
    if c == 0:
        return BETA if x == 1 else 1 - BETA if x == 0 else 0.0
    first = ALPHA + BETA
    return sum((first if k else 1 - first) * math.comb(c - 1, x - k) * ALPHA ** (x - k)
               * (1 - ALPHA) ** (c - 1 - x + k) for k in (0, 1) if 0 <= x - k <= c - 1)


def facts(counts) -> tuple[int, int]:
    return sum(1 for c in counts if c), sum(1 for c in counts if c > 1)


def record_pairs(m: int, n: int, only_single: bool):
    """Ordered pairs of n-record multisets one record apart (as count vectors) that
    agree on the stated facts (distinct and repeated tuples); ``only_single``:
    the record moved is its tuple's only one and lands on a tuple not in the table."""
    for inst in itertools.combinations_with_replacement(range(m), n):
        counts = np.bincount(inst, minlength=m)
        for s in set(inst):
            for u in range(m):
                if u == s:
                    continue
                other = counts.copy()
                other[s] -= 1
                other[u] += 1
                if facts(counts) != facts(other):
                    continue
                if only_single and (counts[s] != 1 or counts[u] != 0):
                    continue
                yield tuple(counts), tuple(other)


def record_views(first, second):
    return itertools.product(*[range(max(a, b, 1) + 1) for a, b in zip(first, second,
                                                                        strict=True)])


def record_prob(counts, view) -> float:
    return math.prod(records_count_prob(c, x) for c, x in zip(counts, view, strict=True))


@pytest.mark.filterwarnings("ignore::privpub.UsefulnessWarning")
def test_records_have_no_epsilon_but_single_copies_have_the_set_one():
    brute = worst_log_ratio(record_pairs(3, 3, False), record_views, record_prob)
    assert math.isinf(brute)  # e.g. {a, a, b} against {a, b, b}
    single = worst_log_ratio(record_pairs(3, 3, True), record_views, record_prob)
    assert single == pytest.approx(alphabeta_epsilon(ALPHA, BETA), rel=1e-12)
    # A release with repeated tuples states the same: no ε at the level of records.
    schema = privpub.Schema([privpub.IntRange("a", 0, 2)])
    data = np.array([0, 0, 1], dtype=np.uint64)
    view = AlphaBeta(schema, ALPHA, BETA, n=3).publish(data, seed=1, duplicates="records")
    claim = view.guarantee()[INDISTINGUISHABILITY]
    assert not claim.holds and claim.epsilon is None
    assert f"{single:.6g}" in claim.statement
    assert view.guarantee().epsilon == math.inf
    as_set = AlphaBeta(schema, ALPHA, BETA, n=2).publish(data, seed=1, duplicates="set")
    assert as_set.guarantee().epsilon == pytest.approx(single, rel=1e-12)


def test_add_remove_never_holds_and_a_derived_domain_is_said():
    schema = privpub.Schema([privpub.IntRange("a", 0, 3)])
    g = AlphaBeta(schema, ALPHA, BETA, n=2).guarantee()
    assert not g[DIFFERENTIAL_PRIVACY].holds and "states n" in g[DIFFERENTIAL_PRIVACY].statement
    derived = privpub.Schema([privpub.IntRange("a", 0, 3)], derived=["a"])
    claim = AlphaBeta(derived, ALPHA, BETA, n=2).guarantee()[INDISTINGUISHABILITY]
    assert not claim.holds and "derived from the data" in claim.statement
    assert math.isinf(AlphaBeta(schema, ALPHA, 0.0, n=2).guarantee().epsilon)


# ---- Algorithm 7: a sequence of views -----------------------------------------------------


M = 4


def sequence_prob(alpha, beta, max_views, versions, views) -> float:
    """Pr[V_1..V_j | I_1..I_j] straight from Algorithm 7's three probabilities."""
    p, union = 1.0, frozenset()
    for i, (inst, view) in enumerate(zip(versions, views, strict=True), start=1):
        s, p_prev, p_fresh = view_probabilities(alpha, beta, max_views, i)
        for t in range(M):
            q = s if t in inst else p_prev if t in union else p_fresh
            p *= q if t in view else 1 - q
        union |= view
    return p


def sequence_worst(alpha, beta, max_views, pairs, j) -> float:
    """max ln ratio over every pair of version sequences and every j views."""
    all_views = list(itertools.product(subsets(M), repeat=j))
    return worst_log_ratio(pairs, lambda *_: all_views,
                           lambda versions, views: sequence_prob(alpha, beta, max_views,
                                                                 versions, views))


def history_pairs(versions):
    """Replace one tuple by a tuple in no version, with the same membership history."""
    ever = frozenset().union(*versions)
    for s in ever:
        for u in set(range(M)) - ever:
            yield versions, tuple(v - {s} | {u} if s in v else v for v in versions)


@pytest.mark.parametrize("index", [2, 3])
def test_multiview_epsilon_is_the_brute_force_bound(index):
    schema = privpub.Schema([privpub.IntRange("a", 0, M - 1)])
    mech = AlphaBeta(schema, ALPHA, BETA, n=2)
    step = MultiViewStep(mech, index, 3)
    pairs = [((a,) * index, (b,) * index) for a, b in set_pairs(M, 2)]
    brute = sequence_worst(ALPHA, BETA, 3, pairs, index)
    assert stated(step) == pytest.approx(brute, rel=1e-12)
    # More views cost more than one (the test tells the two apart).
    assert brute > alphabeta_epsilon(ALPHA, BETA) * 1.01


@pytest.mark.parametrize(("versions", "histories"), [
    ((frozenset({0}), frozenset({0, 1})), [(3, 1), (2, 1)]),  # tuple 1 enters late
    ((frozenset({0}), frozenset({1})), [(1, 1), (2, 1)]),  # 0 leaves, 1 enters: none stays
])
def test_multiview_epsilon_follows_the_membership_histories(versions, histories):
    """Neighbours replace a tuple by one of the same history (the release states how
    many tuples have each); ε is the largest over the data's histories."""
    schema = privpub.Schema([privpub.IntRange("a", 0, M - 1)])
    mech = AlphaBeta(schema, ALPHA, BETA, n=2)
    brute = sequence_worst(ALPHA, BETA, 3, list(history_pairs(versions)), 2)
    assert stated(MultiViewStep(mech, 2, 3, histories=histories)) == pytest.approx(brute,
                                                                                   rel=1e-12)
    if not any(mask == 3 for mask, _ in histories):  # the static figure is not this one
        unchanged = MultiViewStep(mech, 2, 3, histories=[(3, 2)])
        assert stated(unchanged) != pytest.approx(brute, rel=1e-3)
