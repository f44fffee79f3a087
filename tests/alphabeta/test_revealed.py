"""``records.revealed_in_view``: the tuples a records-semantics release shows
two or more times (the guarantee names them). publish counts them on the kept
records alone (the β-step's noise is distinct and avoids the records' codes);
checked here against counting the published view itself, in memory and on file."""

import warnings

import numpy as np
import pandas as pd
import pytest

import privpub
from privpub.core.errors import UsefulnessWarning


def shown_twice(codes: np.ndarray) -> int:
    _, counts = np.unique(codes, return_counts=True)
    return int((counts >= 2).sum())


@pytest.mark.parametrize("alpha, beta", [(0.5, 0.3), (0.9, 0.05), (0.2, 0.6)])
def test_revealed_equals_the_view_count(tmp_path, alpha, beta):
    schema = privpub.Schema([privpub.IntRange("a", 0, 9), privpub.IntRange("b", 0, 9)])
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"a": rng.integers(0, 3, 60), "b": rng.integers(0, 4, 60)})
    mech = privpub.AlphaBeta(schema, alpha=alpha, beta=beta, n=60)
    seen = set()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UsefulnessWarning)
        for seed in range(20):
            view = mech.publish(df, seed=seed, duplicates="records")
            revealed = view.parameters["records"]["revealed_in_view"]
            assert revealed == shown_twice(view.codes)
            seen.add(revealed)
            path = tmp_path / f"v{seed}.parquet"
            on_file = mech.publish_to_parquet(df, path, seed=seed, duplicates="records")
            assert on_file.parameters["records"]["revealed_in_view"] == revealed
    assert len(seen) > 1  # the count varies with the draw: the check is not vacuous
