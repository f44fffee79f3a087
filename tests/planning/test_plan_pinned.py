"""``privpub.plan`` gives the same plans before and after each family took over its
own planning (issue 23): a few plans on Adult and on corpus tables, pinned as
JSON (tests/data/plans.json, written by the code before the move), compared
field by field: every row, region and the explanation."""

from __future__ import annotations

import json
import math
from pathlib import Path

import corpus
import pytest

import privpub

PINNED = Path(__file__).resolve().parents[1] / "data" / "plans.json"


def adult() -> privpub.Plan:
    df, schema = privpub.datasets.load_adult()
    return privpub.plan(df, schema=schema, ks=(1, 10, 100), gammas=(0.05, 0.2, 0.5),
                        sensitive="occupation", group_sizes=(2, 5, 8))


def adult_records() -> privpub.Plan:
    df, schema = privpub.datasets.load_adult()
    return privpub.plan(df.iloc[:5000], schema=schema, ks=(0.5, 10), gammas=(0.2,),
                        mechanisms=["alphabeta", "frapp"], duplicates="records",
                        calibrations=["exclusive"], allow_prior_below_base_rate=True)


def adult_schema_only() -> privpub.Plan:
    _, schema = privpub.datasets.load_adult()
    return privpub.plan(schema, n=30_000, ks=(10,), gammas=(0.2, 0.5))


def fair() -> privpub.Plan:
    table = corpus.fair()
    return privpub.plan(table.frame, schema=table.schema, sensitive=table.sensitive,
                        group_sizes=(2, 3, 4, 5))


def fertility() -> privpub.Plan:
    table = corpus.fertility()
    return privpub.plan(table.frame, schema=table.schema, ks=(1, 10),
                        gammas=(0.2, 0.5), sensitive=table.sensitive, group_sizes=(2, 3))


PLANS = {"adult": adult, "adult_records": adult_records, "adult_schema_only": adult_schema_only,
         "fair": fair, "fertility": fertility}


def same(got, want, where: str) -> None:
    if isinstance(want, float) and isinstance(got, float):
        assert math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12), where
    elif isinstance(want, dict):
        assert isinstance(got, dict) and got.keys() == want.keys(), where
        for key in want:
            same(got[key], want[key], f"{where}.{key}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            same(g, w, f"{where}[{i}]")
    else:
        assert got == want, where


# The fair table's plan (seconds) is checked in CI's slow run; the quick run checks the rest.
@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n == "fair" else n
                                  for n in sorted(PLANS)])
def test_plan_is_as_pinned(name):
    got = json.loads(json.dumps(PLANS[name]().to_dict(), default=str))
    same(got, json.loads(PINNED.read_text())[name], name)
