"""The synthetic CENSUS-like generator (privpub.datasets.census)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from privpub.core.errors import ParameterError
from privpub.datasets import CENSUS_CARDINALITIES, synthetic_census


def test_cardinalities_are_the_papers_and_the_docstring_says_synthetic():
    df, schema = synthetic_census(100_000, seed=1)
    assert len(df) == 100_000 and df.attrs["synthetic"]
    assert list(df.columns) == list(schema.names) == list(CENSUS_CARDINALITIES)
    assert {a.name: a.size for a in schema} == {
        "gender": 2, "education": 17, "marital": 6, "race": 9, "workclass": 10,
        "country": 83, "age": 78, "occupation": 50}
    assert (df.nunique() == pd.Series(CENSUS_CARDINALITIES)).all()  # every value occurs
    assert df.age.min() >= 17 and df.age.max() <= 94
    schema.encode(df)  # inside the schema's domains
    import privpub.datasets.census as census
    assert "SYNTHETIC" in census.__doc__ and "synthetic" in synthetic_census.__doc__
    # Eligible for SPLU-Gen at γ = 10 with occupation sensitive.
    assert df.occupation.value_counts().max() <= len(df) / 10


def test_same_seed_same_table_other_seed_other_table():
    a, _ = synthetic_census(20_000, seed=5)
    b, _ = synthetic_census(20_000, seed=5)
    c, _ = synthetic_census(20_000, seed=6)
    pd.testing.assert_frame_equal(a, b)
    assert not a.equals(c)


def _chi2_pvalue(x: np.ndarray, y: np.ndarray) -> float:
    table = pd.crosstab(x, y).to_numpy()
    return stats.chi2_contingency(table).pvalue


def test_the_correlations_exist_and_the_independences_hold():
    """χ² of independence at α = 1e-6: occupation depends on education and on
    gender, marital on age, country on race; gender and race are drawn
    independently, and the test does not reject that (its power is the
    first four rejections on the same sample size)."""
    df, _ = synthetic_census(100_000, seed=2)
    for x, y in (("education", "occupation"), ("gender", "occupation"), ("age", "marital"),
                 ("race", "country")):
        assert _chi2_pvalue(df[x], df[y]) < 1e-6, (x, y)
    assert _chi2_pvalue(df.gender, df.race) > 1e-6


def test_bad_sizes_and_seeds_are_named():
    with pytest.raises(ParameterError, match="n must be at least 1"):
        synthetic_census(0)
    with pytest.raises(ParameterError, match="seed must be an int"):
        synthetic_census(10, seed=1.5)
