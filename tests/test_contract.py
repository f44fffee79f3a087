"""One estimate contract (issue 23): the same user code runs on every release kind.

The five lines (publish, ``guarantee()``, ``estimate``, ``estimate_many``, reopen
from file and estimate again) run unchanged on αβ, FRAPP and SPLU-Gen releases,
in memory and through Dask, on a real table (palmerpenguins, its repeated
tuples dropped as a user publishing a set would); the analogous three
(answer, ``guarantee()``, ``estimate``) on the graph mechanisms. Then what the
contract promises per family: SPLU-Gen counts exactly what it publishes
unchanged and reconstructs what it randomises, refusing by name what it
cannot; a graph answer's stderr is its noise's.
"""

from __future__ import annotations

import json
import math
import warnings

import dask.dataframe as dd
import numpy as np
import pytest
from corpus import penguins

import privpub
from privpub.core.estimate import Estimates, PointLaw
from privpub.graphs import Graph, LaplaceMechanism, SmoothTriangleMechanism, triangle
from privpub.graphs.estimates import noise_stderr
from privpub.graphs.intervals import DISCRETE_LAPLACE, ROUNDED_LAPLACE, NoiseLaw

FAMILIES = {
    "alphabeta": lambda schema, n: privpub.AlphaBeta.for_privacy(schema, n=n, gamma=0.2, k=10),
    "frapp": lambda schema, n: privpub.FRAPP.for_privacy(schema, n=n, gamma=0.2, k=10),
    "splu": lambda schema, n: privpub.splu.SPLUGen(2, "species", schema=schema),
}
#: species is SPLU-Gen's sensitive attribute here: the same text asks each family.
WHERE = "island = 'Dream' AND species = 'Adelie'"
WHERES = [WHERE, "island = 'Biscoe'", "sex = 'male' AND species = 'Gentoo'"]


@pytest.fixture(scope="module")
def table():
    t = penguins()
    return t.frame.drop_duplicates(ignore_index=True), t.schema


@pytest.mark.parametrize("dask", [False, True], ids=["memory", "dask"])
@pytest.mark.parametrize("family", list(FAMILIES))
def test_the_same_five_lines_run_on_every_table_release(table, family, dask, tmp_path):
    df, schema = table
    mech = FAMILIES[family](schema, len(df))
    data = dd.from_pandas(df, npartitions=3) if dask else df
    path = tmp_path / ("release" if dask else "release.parquet")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # small table: usefulness and reconstruction warn
        # -- the user's code, unchanged for every family --
        release = mech.publish(data, seed=1)
        guarantee = release.guarantee()
        one = release.estimate(WHERE)
        many = release.estimate_many(WHERES)
        release.to_parquet(path)
        again = privpub.PublishedView.open(path).estimate(WHERE)
        # -- end --
        in_memory = mech.publish(df, seed=1).estimate(WHERE)
    assert isinstance(release, privpub.Release) and guarantee.claims
    assert isinstance(one, privpub.Estimate) and isinstance(many, Estimates)
    assert len(many) == 3 and many.value.shape == (3,)
    # The file, the batch and (for Dask) the one-machine release give the same numbers.
    assert again.to_dict() == one.to_dict() == many[0].to_dict() == in_memory.to_dict()
    row = json.loads(one.to_json(0.9))
    assert (row["lo"], row["hi"]) == one.interval(0.9) and row["value"] == one.value
    assert one.interval(0.99)[0] <= one.interval(0.5)[0] <= one.interval(0.5)[1] \
        <= one.interval(0.99)[1]


def test_splu_counts_published_columns_exactly_and_reconstructs_sensitive_ones(table):
    df, schema = table
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        view = privpub.splu.SPLUGen(2, "species", schema=schema).publish(df, seed=3)
        exact = view.estimate("island = 'Biscoe' AND sex = 'male'")
        est = view.estimate(WHERE)
        expected = privpub.splu.reconstruct(view, "island = 'Dream'", {"species": "Adelie"})
        batch = view.estimate_many([WHERE, "island = 'Biscoe'"])
    # 314 records, γ = 2: none left out, so the published count is the true one.
    truth = int(((df.island == "Biscoe") & (df.sex == "male")).sum())
    assert exact.value == truth and exact.stderr == 0 and exact.interval() == (truth, truth)
    assert exact.method == "exact: published unchanged" and exact.interval_method == "point"
    assert est.value == expected.value and est.interval() == expected.interval()
    assert est.method == "paper" and est.observed == expected.observed
    assert est.values == {"species": "Adelie"} and est.interval_method == "release-determined"
    assert batch.method == ("paper", "exact: published unchanged")
    assert batch[1].value == int((df.island == "Biscoe").sum())


@pytest.mark.parametrize("where, named", [
    ("island = 'Dream' OR species = 'Adelie'", "with OR or NOT"),
    ("NOT (species = 'Adelie')", "with OR or NOT"),
    ("species <> 'Adelie'", "only through equalities"),
    ("species IN ('Adelie', 'Gentoo')", "only through equalities"),
    ("species = 'Adelie' AND species = 'Gentoo'", "given twice"),
])
def test_splu_refuses_what_its_reconstruction_cannot_answer(table, where, named):
    df, schema = table
    view = privpub.splu.SPLUGen(2, "species", schema=schema).publish(df, seed=3)
    with pytest.raises(privpub.QueryError, match=named):
        view.estimate(where)


def test_a_graph_answer_is_an_estimate_of_the_true_answer():
    edges = privpub.datasets.load_graph("ca-grqc")[:2000]
    g = Graph.from_edges(edges)
    for mech in (LaplaceMechanism.for_graph(1.0, triangle(), g),
                 SmoothTriangleMechanism.for_graph(1.0, 1 / g.m**2, g)):
        # -- the user's code: answer, guarantee, estimate --
        answer = mech.answer(g, seed=2)
        guarantee = answer.guarantee()
        est = answer.estimate()
        # -- end --
        assert guarantee.claims and isinstance(est, privpub.Estimate)
        assert est.value == answer.value and est.answer == str(answer.value)
        assert est.interval(0.9) == tuple(answer.interval(0.9))
        assert est.stderr == noise_stderr(answer.noise) > 0
        assert est.interval_method == ("conservative: scale bound"
                                       if answer.noise.scale_is_bound else "exact")
        assert est.to_dict()["scale"] == answer.scale
    with pytest.raises(privpub.QueryError, match="takes no condition"):
        answer.estimate("x = 1")


@pytest.mark.parametrize("kind", [DISCRETE_LAPLACE, ROUNDED_LAPLACE])
@pytest.mark.parametrize("scale", [0.3, 2.0, 24.0])
def test_graph_stderr_is_the_noise_laws_second_moment(kind, scale):
    """√E[Z²] in closed form against Σ_k (2k − 1)·Pr[|Z| ≥ k] summed from the law's
    own tail (the sum a wrong formula, e.g. 2b² for both laws, fails)."""
    law = NoiseLaw(kind, scale)
    k = np.arange(1, int(60 * scale) + 60)
    moment = sum((2 * i - 1) * law.tail(int(i)) for i in k)
    assert noise_stderr(law) == pytest.approx(math.sqrt(moment), rel=1e-9)
    assert noise_stderr(law) != pytest.approx(math.sqrt(2) * scale, rel=1e-6)


def test_batches_of_mixed_estimates_keep_each_field():
    one = privpub.Estimate(3.0, 0.0, "records", "exact", "point", PointLaw(3), query="a")
    two = privpub.Estimate(4.5, 1.0, "records", "paper", "point", PointLaw(4), query="b",
                           details={"observed": 2})
    batch = Estimates.of([one, two])
    assert batch.method == ("exact", "paper") and batch.counts == "records"
    assert batch[0] == one and batch[1] == two and batch[-1] == two
    assert batch.to_records()[1]["observed"] == 2 and "observed" not in batch.to_records()[0]
    with pytest.raises(AttributeError, match="no field 'missing'"):
        _ = one.missing
    with pytest.raises(privpub.ParameterError, match="no estimates"):
        Estimates.of([])


def test_privpub_estimate_gives_the_apis_numbers_on_every_release_kind(table, tmp_path, capsys):
    """`privpub estimate RELEASE "WHERE…" --format json` on an αβ file, a SPLU-Gen file
    with a sensitive predicate, a Dask release's directory and a graph answer's JSON:
    the same records as ``release.estimate_many(...).to_records()``."""
    from privpub.cli import main

    df, schema = table
    releases = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for family, dask in (("alphabeta", False), ("splu", False), ("frapp", True),
                             ("splu", True)):
            mech = FAMILIES[family](schema, len(df))
            data = dd.from_pandas(df, npartitions=3) if dask else df
            path = tmp_path / (f"{family}-dask" if dask else f"{family}.parquet")
            mech.publish(data, seed=4).to_parquet(path)
            releases[str(path)] = privpub.PublishedView.open(path).estimate_many(WHERES)
    g = Graph.from_edges(privpub.datasets.load_graph("ca-grqc")[:500])
    answer = LaplaceMechanism.for_graph(1.0, triangle(), g).answer(g, seed=5)
    (tmp_path / "triangles.json").write_text(json.dumps(answer.to_dict()))
    for path, expected in releases.items():
        assert main(["estimate", path, *WHERES, "--format", "json", "--level", "0.9"]) == 0
        assert json.loads(capsys.readouterr().out) == expected.to_records(0.9)
    assert main(["estimate", str(tmp_path / "triangles.json"), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == answer.estimate_many().to_records()
    # --output writes the same text to a new file, refused when it exists unless --force.
    out = tmp_path / "estimates.csv"
    splu_file = str(tmp_path / "splu.parquet")
    assert main(["estimate", splu_file, WHERE, "--format", "csv", "--output", str(out)]) == 0
    assert out.read_text().startswith("value,stderr,counts,method")
    assert main(["estimate", splu_file, WHERE, "--format", "csv", "--output", str(out)]) == 1
    assert "exists" in capsys.readouterr().err
    assert main(["estimate", splu_file, WHERE, "--output", str(out), "--force"]) == 0
    assert main(["estimate", splu_file, "species <> 'Adelie'"]) == 1
    assert "only through equalities" in capsys.readouterr().err
    assert main(["estimate", str(tmp_path / "triangles.json"), "x = 1"]) == 1
    assert "answers its own query" in capsys.readouterr().err


def test_splu_one_sensitive_value_alone_is_its_mle(table):
    """species = 'Gentoo' over all records: the published count (Theorem 2's MLE) with
    its exact binomial interval, as sensitive_counts gives it; not the EM's estimate."""
    df, schema = table
    view = privpub.splu.SPLUGen(2, "species", schema=schema).publish(df, seed=3)
    est = view.estimate("species = 'Gentoo'")
    expected = privpub.splu.sensitive_counts(view, "species")[2]
    # The same estimate; the release shows the query as written.
    assert est.query == "species = 'Gentoo'" and expected.query == "count(species = 'Gentoo')"
    assert est.method == "mle" and est.to_dict() == expected.to_dict() | {"query": est.query}
    assert est.value == int((view.frame["species"] == "Gentoo").sum())


def test_every_mechanism_publishes_or_answers_as_the_protocol_declares():
    """Each family's mechanisms publish (Publisher) or answer (Answerer), never both,
    taking the data then ``seed`` as core/release.py documents; a mechanism
    instance satisfies its protocol."""
    import inspect

    from privpub.core.release import Answerer, Publisher
    from privpub.graphs import MultipleQueryMechanism, RelationshipMechanism

    kinds = {"publish": [privpub.AlphaBeta, privpub.FRAPP, privpub.splu.SPLUGen,
                         privpub.MultiViewPublisher],
             "answer": [LaplaceMechanism, SmoothTriangleMechanism, RelationshipMechanism,
                        MultipleQueryMechanism]}
    for method, classes in kinds.items():
        other = "answer" if method == "publish" else "publish"
        for cls in classes:
            assert hasattr(cls, method) and not hasattr(cls, other), cls
            assert list(inspect.signature(getattr(cls, method)).parameters)[2] == "seed", cls
    assert isinstance(privpub.splu.SPLUGen(2, "species", schema=penguins().schema), Publisher)
    g = Graph.from_edges(np.array([[0, 1], [1, 2], [2, 0]]), m=10)
    laplace = LaplaceMechanism.for_graph(1.0, triangle(), g)
    assert isinstance(laplace, Answerer) and not isinstance(laplace, Publisher)
