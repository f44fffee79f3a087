"""Embedded datasets: Adult and the SNAP graphs (privpub.datasets)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from privpub import Categorical, ParameterError, PrivpubError
from privpub.datasets import ADULT_ATTRIBUTES, load_adult, load_graph

ADULT_COLUMNS = ["age", "workclass", "education", "marital-status", "occupation", "race",
                 "sex", "native-country", "salary"]


@pytest.fixture(scope="module")
def adult():
    return load_adult()


def test_adult_train_matches_the_paper(adult):
    df, schema = adult
    assert len(df) == 30_162
    assert list(df.columns) == ADULT_COLUMNS == list(ADULT_ATTRIBUTES)
    assert schema.names == tuple(ADULT_COLUMNS)
    assert schema.radices == (72, 7, 16, 7, 14, 5, 2, 41, 2)
    assert schema.size == 648_023_040 == 72 * 7 * 16 * 7 * 14 * 5 * 2 * 41 * 2
    assert schema.limbs == 1
    assert df.attrs["dropped_missing"] == 2_399 == 32_561 - 30_162
    assert isinstance(df.index, pd.RangeIndex) and df.index[-1] == 30_161
    assert not df.isna().any().any()


def test_adult_values(adult):
    df, schema = adult
    assert df["age"].dtype == np.int64
    assert (df["age"].min(), df["age"].max()) == (17, 90)
    for name in ADULT_COLUMNS[1:]:
        assert pd.api.types.is_string_dtype(df[name].dtype), name
        # Leading spaces are stripped and no '?' survives.
        assert not df[name].str.startswith(" ").any() and not (df[name] == "?").any()
    assert set(df["sex"]) == {"Female", "Male"}
    assert set(df["salary"]) == {"<=50K", ">50K"}
    assert set(df["race"]) == {"White", "Black", "Asian-Pac-Islander", "Amer-Indian-Eskimo",
                               "Other"}
    assert "United-States" in set(df["native-country"])
    # The schema holds the active domains, sorted.
    for attr in schema:
        assert isinstance(attr, Categorical)
        assert list(attr.values) == sorted(set(df[attr.name]))


def test_adult_distinct_tuples(adult):
    df, schema = adult
    codes = schema.encode(df)
    distinct = np.sort(codes)
    distinct = distinct[np.concatenate(([True], distinct[1:] != distinct[:-1]))]
    assert len(distinct) == 19_502 == len(df.drop_duplicates())
    pd.testing.assert_frame_equal(schema.decode(codes), df)


def test_adult_test_split():
    df, schema = load_adult("test")
    assert len(df) == 15_060
    assert df.attrs["dropped_missing"] == 16_281 - 15_060
    assert list(df.columns) == ADULT_COLUMNS
    assert set(df["salary"]) == {"<=50K", ">50K"}  # the trailing '.' is stripped
    assert schema["salary"].values == ("<=50K", ">50K")
    pd.testing.assert_frame_equal(schema.decode(schema.encode(df)), df)


@pytest.mark.parametrize("split", ["validation", "Train", "", None, 1])
def test_adult_bad_split(split):
    with pytest.raises(ParameterError) as ei:
        load_adult(split)
    assert isinstance(ei.value, PrivpubError) and repr(split) in str(ei.value)


@pytest.mark.parametrize(("name", "edges", "nodes"), [
    ("facebook", 88_234, 4_039),
    ("ca-grqc", 14_484, 5_241),
    ("CA-GrQc", 14_484, 5_241),
])
def test_graphs(name, edges, nodes):
    e = load_graph(name)
    assert e.shape == (edges, 2) and e.dtype == np.int64
    assert len(np.unique(e)) == nodes
    assert e.min() >= 0
    # Undirected, no self-loops, no duplicate edges (in either orientation).
    assert not (e[:, 0] == e[:, 1]).any()
    canon = np.sort(e, axis=1)
    assert len(np.unique(canon, axis=0)) == edges


def test_facebook_node_ids_are_dense():
    e = load_graph("facebook")
    np.testing.assert_array_equal(np.unique(e), np.arange(4_039))


@pytest.mark.parametrize("name", ["twitter", "", "ca_grqc", None, 3])
def test_bad_graph_name(name):
    with pytest.raises(ParameterError) as ei:
        load_graph(name)
    assert repr(name) in str(ei.value)
