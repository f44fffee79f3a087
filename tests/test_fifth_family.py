"""A fifth family plugs in by writing only its own package (issue 34).

The package below, ``identity_family``, is written to a temporary directory and
imported as any third-party package would be: a mechanism that publishes the
records unchanged (no privacy: its guarantee says so; with ``duplicates="set"``
the distinct tuples) and a planner. It uses only privpub's public registries
(``register_mechanism``, ``register_planner``) and the capabilities core
declares (:mod:`privpub.core.capabilities`: it is a ``CountEstimator`` whose
law is a ``CountIntervalLaw``, states an error bound, its record facts and its
parameters' meanings). No privpub module is edited, and yet estimation,
reopening from the file, the release card (with both audits), the audits
themselves and ``privpub.plan`` all take it. Its parameters hold none of the
keys the older families store their bound, ε and record facts under
(``error_bound``, ``failure_probability``, ``records``), so estimates and the
card show what it declares only if the floors ask the capabilities, never the
keys. The registries are restored afterwards, so no other test sees the
family.
"""

from __future__ import annotations

import importlib
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

import privpub
from privpub.core import planners as planner_registry
from privpub.core import release as release_registry
from privpub.core.capabilities import CountEstimator, CountIntervalLaw
from privpub.core.estimate import PointLaw

FAMILY = '''
"""Identity: the records as they are. A toy family for privpub's contract tests."""

from dataclasses import dataclass
from typing import Any

import numpy as np

from privpub.core.capabilities import StatedBound
from privpub.core.guarantee import Claim, Guarantee
from privpub.core.planners import register_planner, view_size_text
from privpub.core.release import register_mechanism
from privpub.core.seeding import resolve_seed
from privpub.tables.published import PublishedView
from privpub.tables.records import (
    as_schema_codes,
    distinct_sorted,
    records_as_codes,
    sorted_rows,
)


@dataclass(frozen=True)
class ExactLaw:
    """A count published exactly: [n_V, n_V] at every level."""

    n_view: Any
    method = "point"

    def interval(self, level):
        return self.n_view, self.n_view


@register_mechanism
class Identity:
    name = "identity"
    #: DescribesParameters: what the card says its parameters are.
    parameter_meanings = {"n": ("|I|", "rows the identity published, each as it is"),
                          "duplicates": ("—", "what a repeated tuple became")}

    def __init__(self, schema, n=None, duplicates="records", given=None):
        self.schema, self.n, self.duplicates, self.given = schema, n, duplicates, given

    @classmethod
    def from_parameters(cls, schema, parameters):
        return cls(schema, n=parameters.get("n"), duplicates=parameters.get("duplicates"),
                   given=parameters.get("given"))

    def parameters(self):
        return {"n": self.n, "duplicates": self.duplicates, "given": self.given}

    def guarantee(self):
        return Guarantee("identity (every record as it is)", (
            Claim("privacy", False, "Every record is published as it is: no one is "
                  "protected.", "none"),
            Claim("usefulness", True, "Every count is exact.", "by construction")))

    def publish(self, data, seed=None):
        rows = sorted_rows(records_as_codes(self.schema, data))
        kept = distinct_sorted(rows) if self.duplicates == "set" else rows
        policy = resolve_seed(seed).policy
        return PublishedView(as_schema_codes(self.schema, kept), self.schema, self.name,
                             {"n": len(kept), "duplicates": self.duplicates,
                              "given": len(rows)}, policy)

    # CountEstimator: what the table machinery and the audits call.
    def estimate(self, counts):
        value = np.asarray(counts.n_view, dtype=float)
        return value, np.zeros_like(value)

    def interval_law(self, counts):
        return ExactLaw(counts.n_view)

    # StatesErrorBound: every count is exact, so any positive bound holds; it states
    # ±0.5, failing with probability at most ε = 0.01.
    def stated_bound(self):
        return StatedBound(0.5, 0.01)

    # PublishesRecords: every record, or the distinct tuples.
    def record_facts(self):
        return {"duplicates": self.duplicates, "records_given": self.given}


@register_planner
class IdentityPlanner:
    name = "identity"
    label = "identity"
    privacy_grid = False
    main_variant = None
    needs_table = None

    def check_request(self, request):
        pass

    def plan_rows(self, facts, request, search):
        rows = [{"mechanism": self.name, "calibration": None, "sensitive": None, "k": None,
                 "gamma": None, "d": None, "group_size": None, "feasible": True,
                 "error_bound": 0.0, "rows": float(facts.n), "rows_stderr": 0.0,
                 "bytes": 8 * facts.n, "claims_not_met": ["privacy"]}]
        return rows, []

    def explain(self, plan, search):
        row = next(r for r in plan.rows if r["mechanism"] == self.name)
        return (f"identity: publishes the n = {plan.n:,} records as they are "
                f"({view_size_text(row['rows'], row['bytes'])}); no privacy.")

    def expected_rows(self, mech, n, distinct):
        return float(n), 0.0

    def view_bytes(self, mech, rows):
        return int(8 * rows)
'''


@pytest.fixture
def identity(tmp_path, monkeypatch):
    """The fifth family's package, imported from its own directory; the registries are
    copies for the test's duration."""
    package = tmp_path / "identity_family"
    package.mkdir()
    (package / "__init__.py").write_text(textwrap.dedent(FAMILY))
    monkeypatch.setattr(release_registry, "_MECHANISMS", dict(release_registry._MECHANISMS))
    monkeypatch.setattr(planner_registry, "_PLANNERS", dict(planner_registry._PLANNERS))
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("identity_family")
    yield module
    sys.modules.pop("identity_family", None)


@pytest.fixture
def table():
    schema = privpub.Schema([privpub.IntRange("a", 0, 199), privpub.IntRange("b", 0, 199),
                             privpub.Categorical("s", ["no", "yes"])])
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"a": rng.integers(0, 200, 400), "b": rng.integers(0, 200, 400),
                       "s": rng.choice(["no", "yes"], 400)})
    return schema, pd.concat([df, df.iloc[:1]], ignore_index=True)  # one tuple repeated


def test_it_estimates_through_the_declared_contract(identity, table, tmp_path):
    schema, df = table
    mech = identity.Identity(schema)
    assert isinstance(mech, CountEstimator)
    release = mech.publish(df, seed=1)
    truth = int(((df.a < 50) & (df.s == "yes")).sum())
    est = release.estimate("a < 50 AND s = 'yes'")
    assert (est.value, est.stderr, est.interval(0.95)) == (truth, 0.0, (truth, truth))
    assert est.interval_method == "point" and est.counts == "records"
    # The law the floor read its method and interval from is the declared one;
    # a law without a method (core's PointLaw) is not.
    assert isinstance(est.law, identity.ExactLaw) and isinstance(est.law, CountIntervalLaw)
    assert not isinstance(PointLaw(truth), CountIntervalLaw)
    # The bound and ε it declares (StatesErrorBound), not keys of its parameters.
    assert (est.bound, est.bound_confidence, est.details["failure_probability"]) == \
        (0.5, 0.99, 0.01)
    # Written and reopened from the file alone: the registry finds the family.
    path = tmp_path / "identity.parquet"
    release.to_parquet(path)
    again = privpub.PublishedView.open(path)
    assert again.mechanism == "identity" and again.estimate("b = 3").value == (df.b == 3).sum()
    assert not again.guarantee()["privacy"].holds


def test_what_its_estimates_count_is_what_it_declares(identity, table):
    """Publishing the distinct tuples, it says so in its record facts (PublishesRecords),
    and its estimates count distinct tuples."""
    schema, df = table
    release = identity.Identity(schema, duplicates="set").publish(df, seed=1)
    assert len(release) == len(df.drop_duplicates()) == len(df) - 1
    est = release.estimate({"a": int(df.a[0]), "b": int(df.b[0])})
    assert est.counts == release.counts == "distinct tuples"
    assert est.value == len(df[(df.a == df.a[0]) & (df.b == df.b[0])].drop_duplicates())


def test_the_audits_take_it(identity, table):
    from privpub.attacks import audit, audit_presence

    schema, df = table
    release = identity.Identity(schema).publish(df, seed=1)
    found = audit(release, "s", df, n_targets=64, seed=2)
    assert found.recovered == 1.0  # exact answers: every secret bit, as Dinur–Nissim say
    presence = audit_presence(release, df, prior=0.05, n_candidates=32, rounds=3, seed=2)
    assert presence.named == presence.correct == presence.present > 0


def test_the_card_takes_it(identity, table):
    schema, df = table
    release = identity.Identity(schema).publish(df, seed=1)
    card = release.report(df, audit=True, n_queries=6, n_targets=16, rounds=2).html
    for text in ("Release card: identity release", "Every record is published as it is",
                 "does NOT hold", "What an attacker gets", "Attribute inference",
                 "Alternatives"):
        assert text in card, text
    # What the family declares, and its parameters do not hold under the older families'
    # keys: its bound and ε (StatesErrorBound), its parameters' meanings
    # (DescribesParameters), how it published repeats (PublishesRecords: the plan of the
    # alternatives is made for them, at its ε).
    for text in ("±0.5 per query", "for each fixed query, with probability ≥ 99%",
                 "rows the identity published, each as it is",
                 "views are planned for duplicates=&#x27;records&#x27;", "w.p. ≥ 0.99"):
        assert text in card, text


def test_the_plan_takes_it(identity, table):
    schema, df = table
    found = privpub.plan(df, schema=schema, mechanisms=["identity"])
    assert [r["mechanism"] for r in found.rows] == ["identity"]
    assert "identity: publishes the n = 401 records as they are" in found.explain()
    assert privpub.expected_view_size(identity.Identity(schema, n=401)) == (401.0, 3208)
    with pytest.raises(privpub.ParameterError, match="identity"):
        privpub.plan(df, schema=schema, mechanisms=["nothing"])


def test_the_family_is_gone_after_its_test():
    assert release_registry._MECHANISMS.get("identity") is None
    assert planner_registry.planner("identity") is None
