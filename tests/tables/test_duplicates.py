"""The guarantee is for the data published: repeated tuples, the data's n,
empty data, domains derived from the data."""

import warnings

import numpy as np
import pandas as pd
import pytest

import privpub
from privpub.core.errors import ArtifactError, ParameterError

SCHEMA = privpub.Schema([privpub.IntRange("a", 0, 99)])
REPEATS = np.array([3, 3, 3, 7, 9, 9, 40], dtype=np.uint64)
# 7 records of 100 tuples: every view says its bound is wide (UsefulnessWarning); these
# tests check how repeated tuples are published and stated.
pytestmark = pytest.mark.filterwarnings("ignore::privpub.UsefulnessWarning")


def test_repeats_must_be_chosen_and_are_named():
    mech = privpub.AlphaBeta(SCHEMA, 0.4, 0.1)
    with pytest.raises(ParameterError, match="repeat 2 tuples \\(3 records beyond"):
        mech.publish(REPEATS, seed=1)
    with pytest.raises(ParameterError, match="duplicates must be 'set' or 'records'"):
        mech.publish(REPEATS, seed=1, duplicates="bag")


def test_set_semantics_publishes_distinct_tuples_with_the_full_guarantee():
    mech = privpub.AlphaBeta(SCHEMA, 0.9, 0.05, n=len(REPEATS), d=0.2, gamma=0.5)
    view = mech.publish(REPEATS, seed=1, duplicates="set")
    assert np.unique(view.codes).size == len(view)       # no tuple twice
    assert view.parameters["n"] == 4 and view.parameters["records"]["records_given"] == 7
    g = view.guarantee()
    assert "distinct tuples" in g["(d, γ)-privacy"].statement
    assert all(c.name != "(d, γ)-privacy, tuples with several records" for c in g.claims)


def test_records_semantics_says_whom_it_does_not_protect():
    mech = privpub.AlphaBeta(SCHEMA, 0.9, 0.05, n=len(REPEATS), d=0.2, gamma=0.5)
    view = mech.publish(REPEATS, seed=1, duplicates="records")
    twice = int((np.bincount(view.codes.astype(np.int64)) >= 2).sum())
    claim = view.guarantee()["(d, γ)-privacy, tuples with several records"]
    assert not claim.holds
    assert "2 tuples have several records" in claim.statement
    assert f"{twice:,} tuples appear two or more times in this view" in claim.statement
    # The d-exclusive claim holds for whom the (d, γ) claim does: tuples with one record.
    for name in ("(d, γ)-privacy", "no positive leakage, d-exclusive adversaries"):
        assert "for every tuple with one record in I:" in view.guarantee()[name].statement


def test_the_age_only_table_is_refused_then_stated(tmp_path):
    """The issue's case: a schema listing only `age` makes almost every record a
    repeat; the CLI refuses without --duplicates and, with records, says so."""
    df, _ = privpub.datasets.load_adult()
    csv = tmp_path / "age.csv"
    df[["age"]].to_csv(csv, index=False)
    from privpub.cli import main
    assert main(["publish", "alphabeta", "--input", str(csv),
                 "--output", str(tmp_path / "v.parquet"), "--k", "1.5",
                 "--gamma", "0.9", "--seed", "1"]) == 1


def test_mechanism_n_must_be_the_datas():
    df, schema = privpub.datasets.load_adult()
    mech = privpub.AlphaBeta.for_privacy(schema, n=100, gamma=0.2, k=10)
    with pytest.raises(ParameterError, match="built for n = 100 records but the data hold "
                                             "30,162"):
        mech.publish(df, seed=1, duplicates="records")
    with pytest.raises(ParameterError, match="no records"):
        privpub.AlphaBeta(SCHEMA, 0.4, 0.1).publish(np.array([], dtype=np.uint64), seed=1)
    with pytest.raises(ParameterError, match="no records"):
        privpub.FRAPP(SCHEMA, 0.5).publish(pd.DataFrame({"a": pd.Series([], dtype="int64")}))


def test_the_bound_is_for_the_records_published():
    mech = privpub.AlphaBeta(SCHEMA, 0.4, 0.1, n=len(REPEATS))
    view = mech.publish(REPEATS, seed=1, duplicates="set")
    assert view.parameters["error_bound"] == pytest.approx(
        privpub.AlphaBeta(SCHEMA, 0.4, 0.1, n=4).error_bound())


def test_tampered_record_facts_are_refused(tmp_path):
    import json

    import pyarrow.parquet as pq
    mech = privpub.AlphaBeta(SCHEMA, 0.4, 0.1, n=len(REPEATS))
    view = mech.publish(REPEATS, seed=1, duplicates="records")
    path = tmp_path / "v.parquet"
    view.to_parquet(path)
    table = pq.read_table(path)
    meta = json.loads(pq.ParquetFile(path).metadata.metadata[b"privpub"])
    meta["parameters"]["records"]["repeated_tuples"] = 0   # hide the unprotected tuples
    table = table.replace_schema_metadata({b"privpub": json.dumps(meta).encode()})
    pq.write_table(table, tmp_path / "bad.parquet")
    with pytest.raises((ParameterError, ArtifactError), match="records"):
        privpub.PublishedView.read_parquet(tmp_path / "bad.parquet")


def test_inferred_domains_warn_and_are_listed():
    df = pd.DataFrame({"x": [1, 2, 2], "c": pd.Categorical(["a", "b", "a"],
                                                           categories=["a", "b", "z"])})
    with pytest.warns(privpub.PrivacyWarning, match="domains of x were derived"):
        schema = privpub.Schema.from_frame(df)
    assert schema.derived == ("x",)
    assert privpub.Schema.from_dict(schema.to_dict()).derived == ("x",)
    claim = privpub.AlphaBeta(schema, 0.4, 0.1).guarantee()["public domain"]
    assert not claim.holds and "x" in claim.statement
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert privpub.Schema.from_frame(df[["c"]]).derived == ()   # a declared domain
