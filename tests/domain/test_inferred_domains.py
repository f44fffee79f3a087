"""Domains read off the data (Schema.from_frame) are refused where publishing
them would publish every record's own value (issue 33, nhefs): non-integer
numbers (176 body weights to 8 decimals) and identifiers (3,000 person ids in
3,000 rows). ``exact_domain=`` (--exact-domain) keeps them on purpose."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from privpub import Schema, cli
from privpub.core.errors import MissingValueError, SchemaError
from privpub.domain.inference import NEAR_UNIQUE

pytestmark = pytest.mark.filterwarnings("ignore::privpub.PrivacyWarning",
                                        "ignore::privpub.UsefulnessWarning")


def _nhefs(n: int = 600) -> pd.DataFrame:
    rng = np.random.default_rng(5)
    income = rng.integers(11, 23, n).astype(float)
    income[::40] = np.nan  # a nullable integer column, as pandas reads it: floats
    return pd.DataFrame({"person_id": np.arange(n), "wt82": rng.normal(70, 12, n).round(3),
                         "income": income, "sex": rng.choice(["F", "M"], n)})


@pytest.mark.parametrize("kind", ["pandas", "arrow"])
def test_floats_and_identifiers_are_refused_by_name(kind):
    frame = _nhefs()
    data = frame if kind == "pandas" else pa.Table.from_pandas(frame)
    with pytest.raises(SchemaError, match=r"'wt82'.*non-integer.*pd\.cut.*exact_domain=\['wt82'\]"):
        Schema.from_frame(data, columns=["wt82", "sex"])
    with pytest.raises(SchemaError, match=r"'person_id' holds 600 distinct values in 600 rows"):
        Schema.from_frame(data, columns=["person_id", "sex"])
    # Integral floats (integers with missing cells) and a small domain are domains.
    schema = Schema.from_frame(data, columns=["income", "sex"], missing={"income": -1.0})
    assert schema["income"].size == 13


def test_exact_keeps_them_and_the_edge_is_where_it_says():
    frame = _nhefs()
    schema = Schema.from_frame(frame, exact_domain=["person_id", "wt82"], missing={"income": -1.0})
    assert schema["person_id"].size == 600
    # NEAR_UNIQUE distinct values are a domain whatever the rows; one more in few rows is not.
    edge = pd.DataFrame({"c": np.arange(NEAR_UNIQUE)})
    assert Schema.from_frame(edge)["c"].size == NEAR_UNIQUE
    with pytest.raises(SchemaError, match="'c' holds 101 distinct values in 101 rows"):
        Schema.from_frame(pd.DataFrame({"c": np.arange(NEAR_UNIQUE + 1)}))
    many = pd.DataFrame({"c": np.repeat(np.arange(NEAR_UNIQUE + 1), 2)})  # half the rows
    assert Schema.from_frame(many)["c"].size == NEAR_UNIQUE + 1
    with pytest.raises(SchemaError, match="exact_domain= lists columns"):
        Schema.from_frame(frame, exact_domain=["nope"])


def test_the_command_line_refuses_and_takes_exact_domain(tmp_path, capsys):
    path = tmp_path / "nhefs.csv"
    _nhefs().drop(columns=["income"]).to_csv(path, index=False)
    out = str(tmp_path / "v.parquet")
    args = ["publish", "alphabeta", "--input", str(path), "--output", out, "--yes",
            "--duplicates", "set"]
    assert cli.main(args) != 0
    assert "--exact-domain person_id" in capsys.readouterr().err
    assert cli.main(args + ["--columns", "wt82,sex"]) != 0
    assert "--exact-domain wt82" in capsys.readouterr().err
    assert cli.main(args + ["--exact-domain", "person_id,wt82"]) == 0


def test_the_fix_fits_the_kind_and_an_integral_label_names_a_float():
    with pytest.raises(SchemaError, match=r"'name' .*coarser groups") as info:
        Schema.from_frame(pd.DataFrame({"name": [f"x{i}" for i in range(300)]}))
    assert "pd.cut" not in str(info.value)  # binning is for numbers
    frame = pd.DataFrame({"mass": [1.5, None, 2.5]})
    schema = Schema.from_frame(frame, missing={"mass": -1}, exact_domain=["mass"])
    assert schema["mass"].values == (1.5, 2.5, -1.0) and schema["mass"].missing == -1.0
    # The number it names is also a real value: refused on every input kind.
    clash = pd.DataFrame({"mass": [1.5, None, -1.0]})
    for data in (clash, pa.Table.from_pandas(clash)):
        with pytest.raises(MissingValueError, match=r"'mass': the missing label -1\.0"):
            Schema.from_frame(data, missing={"mass": -1}, exact_domain=["mass"])
