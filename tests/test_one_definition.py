"""One definition per concept (issue 33): the interval level's check and
default, αβ's largest insertion probability β_max, and the caches kept with
the object that owns them."""

from __future__ import annotations

import ast
import pickle
import re
from pathlib import Path

import numpy as np
import pytest

import privpub
from privpub.alphabeta import AlphaBeta
from privpub.core import estimate as core_estimate
from privpub.core.errors import ParameterError
from privpub.graphs import Graph, LaplaceMechanism, MultipleQueryMechanism
from privpub.graphs.query import triangle, two_path
from privpub.report.protected import curves

PACKAGE = Path(privpub.__file__).parent
SCHEMA = privpub.Schema([privpub.IntRange("a", 0, 3), privpub.Categorical("b", ["x", "y", "z"])])
RECORDS = {"a": [0, 1, 1, 2, 3, 3, 3, 0] * 5, "b": ["x", "y", "z", "x", "y", "y", "z", "x"] * 5}


@pytest.fixture(scope="module")
def view():
    import pandas as pd

    with pytest.warns(privpub.UsefulnessWarning):  # (a small table: the bound is wide)
        return AlphaBeta(SCHEMA, alpha=0.6, beta=0.15).publish(pd.DataFrame(RECORDS), seed=1,
                                                          duplicates="records")


@pytest.fixture(scope="module")
def answers():
    g = Graph.from_edges(np.array([[0, 1], [1, 2], [2, 0]]), m=10)
    one = LaplaceMechanism.for_graph(1.0, triangle(), g).answer(g, seed=6)
    many = MultipleQueryMechanism.for_graph(1.0, 0.5, [triangle(), two_path()], g).answer(
        g, seed=3)
    return one, many


def entry_points(view, answers):
    """Each public call that takes a level, as level → its result."""
    one, many = answers
    return {
        "Estimate.interval": lambda lv: view.estimate("a >= 2").interval(lv),
        "Estimate.to_dict": lambda lv: view.estimate("a >= 2").to_dict(lv),
        "Estimates.interval": lambda lv: view.estimate_many(["a >= 2", "b = 'y'"]).interval(lv),
        "Estimates.to_records": lambda lv: view.estimate_many(["a >= 2"]).to_records(lv),
        "estimate_marginals": lambda lv: view.estimate_marginals(["a"], level=lv),
        "estimate_marginals_many": lambda lv: view.estimate_marginals_many([["a"], ["b"]],
                                                                           level=lv),
        "GraphAnswer.interval": lambda lv: one.interval(lv),
        "GraphAnswer estimate interval": lambda lv: one.estimate().interval(lv),
        "GraphAnswers.intervals": lambda lv: many.intervals(lv),
        "GraphAnswers to_records": lambda lv: many.estimate_many().to_records(lv),
    }


@pytest.mark.parametrize("bad", ["0.9", True, False, 1.0, 0.0, float("nan"), "", [0.9]])
def test_every_entry_point_refuses_a_level_that_is_not_a_float_in_0_1(view, answers, bad):
    for name, call in entry_points(view, answers).items():
        with pytest.raises(ParameterError) as err:
            call(bad)
        message = str(err.value)
        assert "\n" not in message and "level" in message and repr(bad) in message, (name,
                                                                                      message)


def test_every_entry_point_accepts_a_float_level(view, answers):
    for name, call in entry_points(view, answers).items():
        assert call(0.9) is not None, name
        assert call(np.float64(0.9)) is not None, name


def test_the_level_check_and_default_are_core_s():
    from privpub.graphs import intervals
    from privpub.tables import confidence, marginals

    for module in (confidence, marginals, intervals):
        assert module.check_level is core_estimate.check_level, module.__name__
    # LEVEL is assigned once in the package; everything else imports it.
    assigned = [str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
                if re.search(r"^LEVEL\s*[:=]", p.read_text(encoding="utf-8"), re.M)]
    assert assigned == ["core/estimate.py"]
    # No default level written as a number: in a signature or a --level option
    # (the reconstruction experiment's ``level`` is a share of bits recovered).
    written = []
    for path in PACKAGE.rglob("*.py"):
        if path.relative_to(PACKAGE) == Path("experiments/reconstruction.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.arguments):
                positional = [*node.posonlyargs, *node.args]
                pairs = [*zip(positional[len(positional) - len(node.defaults):], node.defaults,
                              strict=True), *zip(node.kwonlyargs, node.kw_defaults, strict=True)]
                written += [f"{path.name}:{d.lineno}" for a, d in pairs
                            if a.arg == "level" and isinstance(d, ast.Constant)
                            and isinstance(d.value, float)]
            if isinstance(node, ast.Call) and node.args and isinstance(
                    node.args[0], ast.Constant) and node.args[0].value == "--level":
                written += [f"{path.name}:{k.value.lineno}" for k in node.keywords
                            if k.arg == "default" and isinstance(k.value, ast.Constant)]
    assert written == []


def test_beta_max_is_defined_once():
    """β_max = β·max w(t), the most likely tuple's: the guarantee and the report
    read the mechanism's, and nothing else multiplies β by the largest weight."""
    source = {"a": [0.1, 0.2, 0.3, 0.4], "b": [0.5, 0.25, 0.25]}
    mech = AlphaBeta(SCHEMA, 0.3, 0.1, source=source)
    assert mech.beta_max == pytest.approx(0.1 * 4 * 0.4 * 3 * 0.5)
    assert f"β = {mech.beta_max:.6g}" in mech.guarantee().mechanism
    plain = AlphaBeta(SCHEMA, 0.3, 0.1)
    assert plain.beta_max == plain.beta
    # The report's posteriors are the mechanism's at β_max: with β_max the plain αβ's β.
    same = AlphaBeta(SCHEMA, 0.3, mech.beta_max)
    for (name, f), (_, g) in zip(curves(mech)[0].items(), curves(same)[0].items(), strict=True):
        assert f(0.01) == pytest.approx(g(0.01)), name
    copies = [str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
              if re.search(r"beta \* \(?1\.0 if .*max_weight", p.read_text(encoding="utf-8"))]
    assert copies == []


# ---- caches kept with their owner ------------------------------------------------------------
def test_no_hand_rolled_dict_caches():
    written = [f"{p.relative_to(PACKAGE)}:{i}" for p in PACKAGE.rglob("*.py")
               for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
               if re.search(r"__dict__\[|__dict__\.(get|setdefault)\(\"_", line)
               and "domaincount" not in str(p)]
    assert written == []


def test_categorical_caches_pickle_and_stay_out_of_equality():
    attr = privpub.Categorical("s", ["lo", "mid", "hi"], ordered=True)
    fresh = privpub.Categorical("s", ["lo", "mid", "hi"], ordered=True)
    assert list(attr.values_index) == ["lo", "mid", "hi"]
    assert attr.categorical_dtype.ordered and list(attr.categorical_dtype.categories) == [
        "lo", "mid", "hi"]
    assert attr.arrow_values.to_pylist() == ["lo", "mid", "hi"]
    assert attr.values_index is attr.values_index  # made once
    assert attr.arrow_values is attr.arrow_values
    assert attr == fresh and hash(attr) == hash(fresh)  # the caches are not compared
    back = pickle.loads(pickle.dumps(attr))
    assert back == attr and hash(back) == hash(attr)
    assert back.arrow_values.equals(attr.arrow_values)
    assert back.categorical_dtype == attr.categorical_dtype
    unused = pickle.loads(pickle.dumps(fresh))  # before any cache is made
    assert unused == attr and unused.arrow_values.to_pylist() == ["lo", "mid", "hi"]
    wide = privpub.Categorical("w", [1, 2**63 + 5])
    assert str(wide.arrow_values.type) == "uint64"


def test_published_frame_is_made_once(view):
    assert view.frame is view.frame
    assert len(view.frame) == len(view.codes)


def test_batch_records_use_the_vectorised_intervals(view):
    batch = view.estimate_many(["a >= 2", "b = 'y'", "a = 0 AND b = 'x'"])
    calls = []
    law = batch.law

    class Counting:
        def interval(self, level):
            calls.append(level)
            return law.interval(level)

        def row(self, i):
            raise AssertionError("a row's law asked for the batch's level")

    class RowOnly(Counting):
        def row(self, i):
            return _Refusing(law.row(i))

    from dataclasses import replace

    records = replace(batch, law=RowOnly()).to_records(0.9)
    assert calls == [0.9]
    assert records == batch.to_records(0.9)
    assert [(r["lo"], r["hi"]) for r in records] == [batch[i].interval(0.9)
                                                     for i in range(len(batch))]
    # Another level is still the row's own law's.
    est = batch[0]
    assert est.interval(0.5) == batch[0].interval(0.5)


class _Refusing:
    """A row law that answers any level but the batch's."""

    def __init__(self, law):
        self.law = law

    def interval(self, level):
        assert level != 0.9, "the batch's level was asked again, row by row"
        return self.law.interval(level)
