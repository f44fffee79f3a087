"""Two real survey tables that ship inside statsmodels, prepared with declared
schemas: Fair's 1978 affairs survey and the 1996 American National Election
Study. They need statsmodels (``pip install 'privpub[datasets]'``); the tests'
corpus (tests/corpus.py) and the DP yardstick experiment both load them here.

The preparation is what a user does before privpub takes such a table: survey
codes stored as floats are checked to be whole and cast, floats with few exact
values (Fair's age brackets 17.5, 22, …) stay floats in a declared Categorical,
and continuous floats are binned into an ordered Categorical whose labels are
the declared domain. No domain is inferred from the data.
"""

from __future__ import annotations

import math

import pandas as pd

from privpub.core.errors import DataTypeError, DomainError
from privpub.core.optional import require
from privpub.domain.attributes import Categorical, IntRange
from privpub.domain.schema import Schema


def whole(series: pd.Series) -> pd.Series:
    """Integer codes stored as floats, cast after checking each is whole (a
    plain astype would truncate 2.5 to 2 without a word)."""
    present = series.dropna()
    if not (present % 1 == 0).all():
        raise DataTypeError(f"{series.name}: {present[present % 1 != 0].iloc[0]} is not a "
                            "whole number; integer codes were expected")
    return series.astype("Int64" if series.hasnans else "int64")


def bands(series: pd.Series, edges: list[float], labels: list[str], *,
          missing: str | None = None, right: bool = False) -> pd.Series:
    """A float column binned with pd.cut into an ordered Categorical whose
    categories are ``labels`` (+ ``missing`` last, for the missing cells)."""
    cut = pd.cut(series, edges, labels=labels, right=right, ordered=True)
    outside = cut.isna() & series.notna()
    if outside.any():
        raise DomainError(f"{series.name}: {series[outside].iloc[0]} is outside the bins "
                          f"{edges[0]}..{edges[-1]}")
    if missing is None:
        return cut
    return cut.cat.add_categories([missing])  # the cells stay missing: the schema fills them


def declared(frame: pd.DataFrame, name: str, *, missing: str | None = None) -> Categorical:
    """An ordered Categorical attribute from a binned column's categories."""
    dtype = frame[name].dtype
    return Categorical(name, list(dtype.categories), dtype="category", ordered=dtype.ordered,
                       missing=missing)


def _statsmodels_data(name: str) -> pd.DataFrame:
    datasets = require("statsmodels.datasets", f"the {name} table", extra="datasets")
    return getattr(datasets, name).load_pandas().data


def load_fair() -> tuple[pd.DataFrame, Schema]:
    """Fair (1978), statsmodels ``fair``: 6,366 answers over 9 attributes (5,327
    distinct tuples), the number of affairs binned into four bands."""
    raw = _statsmodels_data("fair")
    edges = [-math.inf, 1e-9, 1, 5, math.inf]
    frame = pd.DataFrame({
        "rate_marriage": whole(raw["rate_marriage"]),
        "age": raw["age"],                    # the survey's age brackets: 17.5, 22, …, 42
        "yrs_married": raw["yrs_married"],    # 0.5, 2.5, 6, 9, 13, 16.5, 23
        "children": raw["children"],          # 0 … 4, 5.5
        "religious": whole(raw["religious"]),
        "educ": whole(raw["educ"]),
        "occupation": whole(raw["occupation"]),
        "occupation_husb": whole(raw["occupation_husb"]),
        "affairs": bands(raw["affairs"], edges, ["none", "(0, 1)", "[1, 5)", "5 or more"]),
    })
    schema = Schema([
        IntRange("rate_marriage", 1, 5),
        Categorical("age", [17.5, 22.0, 27.0, 32.0, 37.0, 42.0]),
        Categorical("yrs_married", [0.5, 2.5, 6.0, 9.0, 13.0, 16.5, 23.0]),
        Categorical("children", [0.0, 1.0, 2.0, 3.0, 4.0, 5.5]),
        IntRange("religious", 1, 4),
        Categorical("educ", [9, 12, 14, 16, 17, 20]),
        IntRange("occupation", 1, 6),
        IntRange("occupation_husb", 1, 6),
        declared(frame, "affairs"),
    ])
    return frame, schema


def load_anes96() -> tuple[pd.DataFrame, Schema]:
    """The 1996 American National Election Study, statsmodels ``anes96``: 944
    answers over 7 attributes, the vote as a name and the population of the
    respondent's place binned (thousands of people; the labels use an en dash and ≥)."""
    raw = _statsmodels_data("anes96")
    popul = ["0", "1–9", "10–99", "100–999", "≥ 1000"]
    frame = pd.DataFrame({
        "TVnews": whole(raw["TVnews"]),
        "PID": whole(raw["PID"]),
        "age": whole(raw["age"]),
        "educ": whole(raw["educ"]),
        "income": whole(raw["income"]),
        "vote": raw["vote"].map({0.0: "Clinton", 1.0: "Dole"}),
        "popul": bands(raw["popul"], [0, 1, 10, 100, 1000, math.inf], popul),
    })
    schema = Schema([IntRange("TVnews", 0, 7), IntRange("PID", 0, 6), IntRange("age", 18, 99),
                     IntRange("educ", 1, 7), IntRange("income", 1, 24),
                     Categorical("vote", ["Clinton", "Dole"]), declared(frame, "popul")])
    return frame, schema
