"""FRAPP's stated ε is the exact likelihood-ratio bound of the published multiset:
brute force over every pair of record tables one record apart on a small
domain (agreeing on the record facts a release states), every output
multiset enumerated with its exact probability."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest

import privpub
from privpub.core.guarantee import DIFFERENTIAL_PRIVACY, INDISTINGUISHABILITY
from privpub.frapp import FRAPP

M, GAMMA_F = 3, 0.6


def output_law(records: tuple[int, ...]) -> Counter:
    """Pr[published multiset] for FRAPP on ``records``: each record kept with γ_f,
    else each other tuple with (1 − γ_f)/(m − 1)."""
    o = (1 - GAMMA_F) / (M - 1)
    law: Counter = Counter()
    for out in itertools.product(range(M), repeat=len(records)):
        law[tuple(sorted(out))] += math.prod(GAMMA_F if y == x else o
                                             for x, y in zip(records, out, strict=True))
    return law


def stated_facts(records) -> tuple[int, int]:
    counts = Counter(records)
    return len(counts), sum(1 for c in counts.values() if c > 1)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_frapp_epsilon_is_the_brute_force_bound(n):
    worst = -math.inf
    for inst in itertools.combinations_with_replacement(range(M), n):
        for i, u in itertools.product(range(n), range(M)):
            other = tuple(sorted(inst[:i] + (u,) + inst[i + 1:]))
            if other == inst or stated_facts(inst) != stated_facts(other):
                continue
            first, second = output_law(inst), output_law(other)
            worst = max(worst, max(math.log(p / second[y]) for y, p in first.items()))
    schema = privpub.Schema([privpub.IntRange("a", 0, M - 1)])
    g = FRAPP(schema, GAMMA_F, n=n).guarantee()
    assert g[INDISTINGUISHABILITY].holds
    assert g.epsilon == pytest.approx(worst, rel=1e-12)
    assert not g[DIFFERENTIAL_PRIVACY].holds


@pytest.mark.filterwarnings("ignore::privpub.UsefulnessWarning")
def test_repeated_records_keep_the_epsilon():
    """Records are perturbed one by one: duplicates='records' keeps ε (unlike αβ)."""
    schema = privpub.Schema([privpub.IntRange("a", 0, M - 1)])
    view = FRAPP(schema, GAMMA_F, n=3).publish(np.array([0, 0, 1], dtype=np.uint64), seed=1,
                                               duplicates="records")
    claim = view.guarantee()[INDISTINGUISHABILITY]
    assert claim.holds and "2 distinct tuples, 1 with several records" in claim.statement
    assert claim.epsilon == pytest.approx(math.log(GAMMA_F / ((1 - GAMMA_F) / (M - 1))))
