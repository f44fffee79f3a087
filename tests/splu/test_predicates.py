"""How a SPLU-Gen release reads a count query (splu/predicates.py): the
predicate P on the non-sensitive attributes goes to the reconstruction as
query text, so it must parse again to the same predicate."""

import warnings

import pandas as pd
import pytest

import privpub
from privpub.splu import SPLUGen, reconstruct
from privpub.splu.estimates import ReconstructionWarning


@pytest.fixture(scope="module")
def banded():
    """An ordered categorical (compared by its declared order) beside the sensitive one."""
    schema = privpub.Schema([
        privpub.Categorical("band", ["low", "mid", "high"], ordered=True),
        privpub.Categorical("sp", ["a", "b", "c"])])
    df = pd.DataFrame({"band": ["low", "mid", "high", "mid", "high", "low"] * 50,
                       "sp": ["a", "b", "c", "a", "c", "b"] * 50})
    return SPLUGen(3, "sp", schema=schema).publish(df, seed=2), df


@pytest.mark.parametrize("where", ["band > 'low'", "band IN ('mid', 'high')",
                                   "band BETWEEN 'mid' AND 'high'", "NOT band = 'low'"])
def test_a_predicate_on_an_ordered_attribute_reaches_the_reconstruction(banded, where):
    release, df = banded
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReconstructionWarning)
        found = release.estimate(f"{where} AND sp = 'a'")
        direct = reconstruct(release, "band <> 'low'", {"sp": "a"})
    assert found.value == pytest.approx(direct.value, rel=1e-12)
    assert release.estimate(where).value == (df["band"] != "low").sum()  # published exactly
