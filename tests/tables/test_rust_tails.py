"""The tail sums of tails.rs (``privpub._core.tails``, behind
``privpub.tables.confidence.sum_tails``) against the numpy implementation they
replaced (tests/tails_reference.py): the tails agree to rounding on
drawn problems, and the intervals inverted from them are *equal*, end for end,
on drawn laws and on every cell of Adult's marginals (the README's call, under
``duplicates="records"`` and ``"set"``). That the tails are upper bounds of
the exact ones is tests/tables/test_tail_bounds.py (40-digit sums) and
tests/counting/test_intervals.py (enumerated pmfs)."""

from __future__ import annotations

import numpy as np
import pytest
from tails_reference import sum_tails as numpy_sum_tails  # (tests/tails_reference.py)

import privpub
from privpub import _core
from privpub.alphabeta import estimator
from privpub.alphabeta.estimator import RecordsLaw
from privpub.core.errors import ParameterError, ShapeError
from privpub.tables import confidence
from privpub.tables.confidence import KeepLaw, sum_tails


def drawn_summands(rng: np.random.Generator, problems: int, summands: int
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(k, trials, probs): small and census-sized binomials, some point masses,
    k anywhere from below the mean to far above it."""
    scale = 10.0 ** rng.integers(0, 5, size=(summands, 1))
    trials = np.floor(rng.random((summands, problems)) * scale * 30)
    trials[-1, ::7] = 10.0 ** rng.integers(6, 9, size=len(trials[-1, ::7]))
    probs = rng.random((summands, problems)) ** 3
    probs[:, 3::11] = rng.choice([0.0, 1.0], size=probs[:, 3::11].shape)
    mean = (trials * probs).sum(axis=0)
    sd = np.sqrt((trials * probs * (1 - probs)).sum(axis=0))
    k = np.floor(mean + sd * rng.normal(0, 3, size=problems))
    return k, trials, probs


@pytest.mark.parametrize("summands", [1, 2, 3])
def test_tails_agree_with_numpy_to_rounding(summands):
    """Problem by problem: numpy's ragged sums kept one running sum over the
    whole batch, so its rounding grew with the batch (3e-11 absolute, 1e-4
    relative on a tail of 2e-5 in a batch of 3,000; 40-digit sums side with
    the kernel); alone, a problem has no such error."""
    rng = np.random.default_rng(20 + summands)
    k, trials, probs = drawn_summands(rng, 300, summands)
    ours = sum_tails(k, trials, probs)
    for i in range(len(k)):
        one = slice(i, i + 1)
        theirs = numpy_sum_tails(k[one], trials[:, one], probs[:, one])
        for a, b in zip(ours, theirs, strict=True):
            # Absolute rounding: numpy's FFT (1e-16 of the largest pmf value,
            # times sums) and the lower tail's 1 − P(N ≥ k + 1) (1e-16 of 1, times sums).
            np.testing.assert_allclose(a[i], b[0], rtol=1e-12, atol=1e-13)


def reference_ends(law: confidence.CountLaw, level: float, monkeypatch: pytest.MonkeyPatch
                   ) -> tuple[np.ndarray, ...]:
    """(lo, hi, inconsistent) of a fresh copy of ``law`` with numpy's tail sums."""
    with monkeypatch.context() as patch:
        patch.setattr(confidence, "sum_tails", numpy_sum_tails)
        patch.setattr(estimator, "sum_tails", numpy_sum_tails)
        fresh = law._take(np.arange(law.k.size))
        return (*fresh.interval(level), fresh.inconsistent(level))


def assert_same_ends(law: confidence.CountLaw, level: float,
                     monkeypatch: pytest.MonkeyPatch) -> None:
    ours = (*law.interval(level), law.inconsistent(level))
    theirs = reference_ends(law, level, monkeypatch)
    for name, a, b in zip(("lo", "hi", "inconsistent"), ours, theirs, strict=True):
        differ = np.flatnonzero(a.reshape(-1) != b.reshape(-1))
        assert not len(differ), f"{name} differs at {len(differ)} problems, first {differ[:5]}"


@pytest.mark.parametrize("records", [False, True])
def test_intervals_equal_numpy_on_drawn_laws(records, monkeypatch):
    rng = np.random.default_rng(7 + records)
    problems = 1500
    keep = rng.uniform(0.05, 0.99, problems)
    background = keep * rng.uniform(0.0, 0.3, problems) ** 2
    total = np.floor(10.0 ** rng.uniform(0, 8, problems))
    top = np.floor(total * rng.uniform(0.01, 1.0, problems))
    c = np.floor(top * rng.random(problems))
    k = rng.binomial(c.astype(np.int64), keep) + rng.binomial((total - c).astype(np.int64),
                                                              background)
    law = (RecordsLaw(k, keep, background, total, top + 40, 40) if records
           else KeepLaw(k, keep, background, total, top))
    for level in (0.95, 0.5):
        assert_same_ends(law, level, monkeypatch)


@pytest.mark.slow
@pytest.mark.parametrize("duplicates", ["records", "set"])
def test_intervals_equal_numpy_on_every_adult_cell(duplicates, monkeypatch):
    from privpub.experiments.adult_alphabeta import equality_queries

    df, schema = privpub.datasets.load_adult()
    mech = privpub.AlphaBeta.for_privacy(schema, n=len(df), gamma=0.2, k=10,
                                         calibration="sec4.2")
    view = mech.publish(df, seed=0, duplicates=duplicates)
    law = view.estimate_marginals_arrays(equality_queries(view.schema)).law
    assert law.k.size == 304_364
    assert_same_ends(law, 0.95, monkeypatch)


def test_bad_arguments_raise_naming_them():
    one, two = np.ones((1, 1)), np.ones((1, 2))
    args = dict(first=np.zeros((1, 1)), length=np.ones((1, 1), np.int64),
                log_first=np.zeros((1, 1)), trials=one, prob=one / 2, top=np.ones(1),
                last_trials=np.ones(1), last_prob=np.full(1, 0.5),
                log_anchor=np.zeros(1), tail=np.full(1, 0.5))
    assert len(_core.tails.window_tails(*args.values())) == 2
    with pytest.raises(ParameterError, match="window length 0"):
        _core.tails.window_tails(*{**args, "length": np.zeros((1, 1), np.int64)}.values())
    with pytest.raises(ParameterError, match="window probability 2"):
        _core.tails.window_tails(*{**args, "prob": one * 2}.values())
    with pytest.raises(ParameterError, match="last summand trials NaN"):
        _core.tails.window_tails(*{**args, "last_trials": np.full(1, np.nan)}.values())
    with pytest.raises(ShapeError, match="window trials has 2 values"):
        _core.tails.window_tails(*{**args, "trials": two}.values())
