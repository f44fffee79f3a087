"""``privpub report`` and ``privpub demo --card``."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import privpub
from privpub import cli


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A small table's CSV and its αβ view file."""
    folder = tmp_path_factory.mktemp("report")
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"age": rng.integers(0, 100, 300), "zone": rng.integers(0, 40, 300),
                       "sex": rng.choice(["F", "M"], 300)})
    schema = privpub.Schema([privpub.IntRange("age", 0, 99), privpub.IntRange("zone", 0, 39),
                             privpub.Categorical("sex", ["F", "M"])])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", privpub.UsefulnessWarning)
        view = privpub.AlphaBeta.for_privacy(schema, n=len(df), gamma=0.5, k=1).publish(
            df, seed=1, duplicates="set")
    df.to_csv(folder / "table.csv", index=False)
    view.to_parquet(folder / "view.parquet")
    return folder, view


def test_report_writes_the_card(files, capsys):
    folder, view = files
    out = folder / "card.html"
    assert cli.main(["report", str(folder / "view.parquet"), "--data",
                     str(folder / "table.csv"), "--queries", "4", "--output", str(out)]) == 0
    assert f"card written to {out}" in capsys.readouterr().out
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and 'data-headline="coverage"' in page
    assert cli.main(["report", str(folder / "view.parquet"), "--output", str(out)]) == 1
    assert "exists; --force replaces it" in capsys.readouterr().err


@pytest.mark.slow  # a second card: seconds
def test_report_is_the_apis_card(files, tmp_path):
    """The command's card is the API's for the file's release and the CSV's table."""
    folder, _ = files
    out = tmp_path / "card.html"
    assert cli.main(["report", str(folder / "view.parquet"), "--data",
                     str(folder / "table.csv"), "--queries", "4", "--output", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == privpub.PublishedView.open(
        folder / "view.parquet").report(pd.read_csv(folder / "table.csv"), n_queries=4).html


@pytest.mark.parametrize("args, message", [
    (["--audit"], "--audit needs --data TABLE"),
    (["--output", "card.txt"], ".html"),
    (["--queries", "0"], "n_queries"),
])
def test_report_errors_name_the_option(files, capsys, args, message):
    folder, _ = files
    argv = ["report", str(folder / "view.parquet"), "--output", str(folder / "x.html"), *args]
    assert cli.main(argv) == 1
    assert message in capsys.readouterr().err


@pytest.mark.slow  # publishes Adult and builds its card with audits: seconds
def test_demo_card(tmp_path, capsys):
    out = tmp_path / "adult.html"
    assert cli.main(["demo", "--seed", "1", "--card", str(out), "--audit"]) == 0
    assert f"card written to {out}" in capsys.readouterr().out
    page = out.read_text(encoding="utf-8")
    assert '<section id="attacker">' in page and 'data-headline="audit-recovered"' in page


def test_demo_audit_needs_a_card(capsys):
    assert cli.main(["demo", "--audit"]) == 1
    assert "--audit adds the audits to the card" in capsys.readouterr().err


# Domains derived from the data, which SPLU-Gen says (PrivacyWarning); this test
# checks which schema the report reads the CSV with.
@pytest.mark.filterwarnings("ignore::privpub.PrivacyWarning")
def test_report_data_reads_the_csv_with_the_release_schema(tmp_path, capsys):
    # A text domain of zip codes: read untyped, '02134' would be the number 2134
    # (the card's accuracy section then refuses the integer column).
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"zip": rng.choice(["02134", "10001", "00501"], 200),
                       "sex": rng.choice(["F", "M"], 200)})
    path, csv = tmp_path / "splu.parquet", tmp_path / "people.csv"
    privpub.SPLUGen(2, "zip").publish(df, seed=1).to_parquet(path)
    df.to_csv(csv, index=False)
    code = cli.main(["report", str(path), "--data", str(csv), "--queries", "4",
                     "--output", str(tmp_path / "card.html")])
    assert code == 0, capsys.readouterr().err
