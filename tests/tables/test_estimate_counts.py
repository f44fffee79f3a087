"""Every estimate says what it counts: records, or distinct tuples when the
release published the distinct tuples (duplicates="set"). A user who checks a
set release's estimate against ``len(df.query(...))`` must see that it counts
something else, not conclude the estimator is biased."""

import json

import pandas as pd
import pytest

import privpub
from privpub import cli

SCHEMA = privpub.Schema([privpub.Categorical("sex", ["F", "M"]),
                         privpub.IntRange("age", 0, 9)])
# 8 records, 5 distinct tuples: ("F", 3) three times, ("M", 5) twice.
DF = pd.DataFrame({"sex": ["F", "F", "F", "M", "M", "F", "M", "F"],
                   "age": [3, 3, 3, 5, 5, 7, 1, 2]})
QUERY = "sex = 'F'"
RECORDS, DISTINCT = 5, 3          # records with sex F, distinct tuples among them


def exact_view(duplicates: str) -> privpub.PublishedView:
    """α = 1, β = 0: the view is the data published (distinct tuples under "set"),
    so each estimate is exactly the count of what the release counts."""
    return privpub.AlphaBeta(SCHEMA, 1.0, 0.0, n=len(DF)).publish(DF, seed=1,
                                                                 duplicates=duplicates)


def test_the_estimate_is_the_count_of_what_it_says_it_counts():
    by_set, by_records = exact_view("set").estimate(QUERY), exact_view("records").estimate(QUERY)
    assert (by_set.value, by_set.counts) == (DISTINCT, "distinct tuples")
    assert (by_records.value, by_records.counts) == (RECORDS, "records")
    assert by_records.value == len(DF.query("sex == 'F'"))
    assert by_set.value == len(DF.drop_duplicates().query("sex == 'F'"))


def test_str_repr_and_dict_say_it():
    est = exact_view("set").estimate(QUERY)
    assert str(est).startswith(f"{QUERY} ≈ 3.0 distinct tuples ± ")
    assert "counts='distinct tuples'" in repr(est)
    assert est.to_dict()["counts"] == "distinct tuples"
    assert json.loads(json.dumps(est.to_dict()))["value"] == 3.0
    assert str(exact_view("records").estimate(QUERY)).startswith(f"{QUERY} ≈ 5.0 records ± ")


def test_data_without_repeats_count_records():
    mech = privpub.AlphaBeta(SCHEMA, 1.0, 0.0, n=5)
    view = mech.publish(DF.drop_duplicates(), seed=1, duplicates="set")
    assert view.parameters["records"]["duplicates"] == "none"
    assert view.estimate(QUERY).counts == view.counts == "records"


# A small table: FRAPP's and the multi-view's views say their bounds are weak
# (UsefulnessWarning); this test checks what their estimates count.
@pytest.mark.filterwarnings("ignore::privpub.UsefulnessWarning")
def test_marginals_frapp_and_multiview_say_it():
    view = exact_view("set")
    assert view.estimate_marginals(["sex"]).attrs["counts"] == "distinct tuples"
    assert view.estimate_marginals_arrays([["sex"]]).counts == "distinct tuples"
    frapp = privpub.FRAPP(SCHEMA, 0.9, n=len(DF)).publish(DF, seed=1, duplicates="set")
    assert frapp.estimate(QUERY).counts == "distinct tuples"
    frapp = privpub.FRAPP(SCHEMA, 0.9, n=len(DF)).publish(DF, seed=1, duplicates="records")
    assert frapp.estimate(QUERY).counts == "records"
    pub = privpub.MultiViewPublisher(privpub.AlphaBeta(SCHEMA, 0.5, 0.1, n=len(DF)), 2)
    assert pub.publish(DF, seed=1, duplicates="set").estimate(QUERY).counts == "distinct tuples"
    assert pub.publish(DF, seed=2, duplicates="records").estimate(QUERY).counts == "records"


@pytest.mark.parametrize("duplicates, counts", [("set", "distinct tuples"),
                                                ("records", "records")])
def test_reopened_views_say_the_same(tmp_path, duplicates, counts):
    view = exact_view(duplicates)
    path = tmp_path / "v.parquet"
    view.to_parquet(path)
    for again in (privpub.PublishedView.read_parquet(path), privpub.PublishedView.open(path)):
        assert again.estimate(QUERY) == view.estimate(QUERY)
        assert again.estimate(QUERY).counts == counts


@pytest.mark.parametrize("duplicates, counts", [("set", "distinct tuples"),
                                                ("records", "records")])
def test_cli_estimate_says_it_in_every_format(tmp_path, capsys, duplicates, counts):
    path = tmp_path / "v.parquet"
    exact_view(duplicates).to_parquet(path)
    assert cli.main(["estimate", str(path), QUERY, "--format", "json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["counts"] == counts and row["value"] == (DISTINCT if duplicates == "set"
                                                           else RECORDS)
    assert cli.main(["estimate", str(path), QUERY, "--format", "csv"]) == 0
    header, line = capsys.readouterr().out.splitlines()
    assert dict(zip(header.split(","), line.split(","), strict=True))["counts"] == counts
    assert cli.main(["estimate", str(path), QUERY]) == 0
    table = capsys.readouterr().out
    assert "counts" in table.splitlines()[0] and counts in table


def test_demo_compares_like_with_like(capsys):
    """Adult has 9,782 female records in 6,737 distinct tuples: a set release's
    truth column says distinct tuples and holds 6,737; records are shown apart."""
    assert cli.main(["demo", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.strip().startswith("query"))
    assert "true Q(I), distinct tuples" in header and "records (not estimated)" in header
    female = next(line.split() for line in out.splitlines()
                  if line.strip().startswith("sex = 'Female'"))
    assert female[3] == "6737" and female[-1] == "9782"
    assert "estimated counts of distinct tuples" in out
    assert cli.main(["demo", "--seed", "1", "--duplicates", "records"]) == 0
    out = capsys.readouterr().out
    assert "true Q(I), records" in out and "records (not estimated)" not in out
    female = next(line.split() for line in out.splitlines()
                  if line.strip().startswith("sex = 'Female'"))
    assert female[3] == "9782"
