"""What a release's frame shows for a missing cell (issue 33, decided in
docs/design.md, "Missing is a marker outside the value order"): the declared
label, the value the release stores and a schema round-trips, not a null.
privpub's queries read it as a marker; a pandas or DuckDB user gets the same
counts by turning the label into a null first (``frame.replace``), and other
counts when they compare the label as a value. Checked at zero noise."""

import duckdb
import numpy as np
import pandas as pd
import pytest

import privpub

QUERIES = ["income <= 15", "income > 15", "income BETWEEN 10 AND 20", "income IS NULL",
           "income IS NOT NULL", "income = 12"]


@pytest.fixture(scope="module")
def release():
    rng = np.random.default_rng(4)
    income = pd.array(rng.integers(1, 23, 400), dtype="Int64")
    income[rng.random(400) < 0.2] = pd.NA  # non-reporters (nhefs-style)
    df = pd.DataFrame({"income": income, "sex": rng.choice(["F", "M"], 400)})
    schema = privpub.Schema([privpub.IntRange("income", 1, 99, missing=99),
                             privpub.Categorical("sex", ["F", "M"])])
    view = privpub.AlphaBeta(schema, alpha=1.0, beta=0.0).publish(df, seed=1,
                                                                   duplicates="records")
    return df, view


def test_the_frame_shows_the_label_the_release_stores(release):
    df, view = release
    frame = view.frame
    assert (frame["income"] == 99).sum() == df["income"].isna().sum() > 0
    assert not frame["income"].isna().any()


@pytest.mark.parametrize("where", QUERIES)
def test_the_label_as_a_null_gives_privpubs_counts(release, where):
    df, view = release
    nulls = view.frame.replace({"income": {99: None}})  # noqa: F841 (read by DuckDB)
    expected = duckdb.sql(f"SELECT count(*) FROM nulls WHERE {where}").fetchall()[0][0]
    assert view.estimate(where).value == pytest.approx(expected)
    raw = df  # noqa: F841 (the input's own NaN cells: the same meaning)
    assert duckdb.sql(f"SELECT count(*) FROM raw WHERE {where}").fetchall()[0][0] == expected


def test_the_label_compared_as_a_value_counts_the_marker(release):
    # What the docs warn about: pandas on the frame as shown counts the label.
    _, view = release
    frame = view.frame
    assert (frame["income"] > 15).sum() == view.estimate("income > 15").value + (
        frame["income"] == 99).sum()
