"""The publish paths (privpub.alphabeta.publishing) as the caller sees them: a
weak release's UsefulnessWarning names the caller's line, not privpub's, on
every path (the paths live outside the class, one frame further down)."""

from __future__ import annotations

import inspect
import warnings

import pandas as pd

import privpub

SCHEMA = privpub.Schema([privpub.IntRange("a", 0, 9), privpub.IntRange("b", 0, 9)])
DATA = pd.DataFrame({"a": [1, 3], "b": [2, 4]})


def test_a_weak_release_warns_at_the_callers_line(tmp_path):
    mech = privpub.AlphaBeta(SCHEMA, 0.5, 0.1, n=2)
    lines = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lines.append(inspect.currentframe().f_lineno + 1)
        mech.publish(DATA, seed=1)
        lines.append(inspect.currentframe().f_lineno + 1)
        mech.publish_to_parquet(DATA, tmp_path / "v.parquet", seed=1)
    found = [(w.filename, w.lineno) for w in caught
             if issubclass(w.category, privpub.UsefulnessWarning)]
    assert found == [(__file__, line) for line in lines]
