"""`privpub experiments dp-yardstick`: αβ and FRAPP against OpenDP at the same ε."""

import importlib
import importlib.util
import json

import numpy as np
import pytest

from privpub import AlphaBeta
from privpub.cli import main
from privpub.core.optional import MissingExtraError
from privpub.datasets import load_anes96, load_fair
from privpub.experiments import dp_yardstick as yardstick

needs_opendp = pytest.mark.skipif(importlib.util.find_spec("opendp") is None,
                                  reason="OpenDP is in privpub[yardstick], not installed here")


pytestmark = pytest.mark.filterwarnings("ignore::privpub.UsefulnessWarning")


@pytest.fixture(scope="module")
def anes96():
    df, schema = load_anes96()
    distinct, digits = yardstick.distinct_tuples(df, schema)
    queries = yardstick.draw_queries(schema, digits, np.random.default_rng(5))
    subsets, position = yardstick.workload(schema, queries)
    counts = yardstick.true_marginals(schema, digits, subsets)
    cells = np.array([schema.size // yardstick.marginal_cells(schema, s) for s, _ in queries])
    return schema, distinct, queries, subsets, position, counts, cells


def exact_sd(mech, truth, cells):
    """The sd of αβ's estimate of a count Q(I) = truth over |Q(D)| = cells tuples."""
    a, b = mech.alpha, mech.beta
    return np.sqrt((a + b) * (1 - a - b) * truth + b * (1 - b) * (cells - truth)) / a


def test_queries_are_drawn_from_real_rows(anes96):
    schema, distinct, queries, _, position, counts, _ = anes96
    assert len(queries) == 3 * yardstick.QUERIES_PER_SIZE
    assert [len(s) for s, _ in queries] == [1] * 30 + [2] * 30 + [3] * 30
    assert (counts[position] >= 1).all()  # each query's values are some tuple's
    # one query counted by pandas alone: the cell layout is estimate_marginals_arrays'
    subset, cell = queries[-1]
    sizes = [schema[a].size for a in subset]
    index = np.unravel_index(cell, sizes)
    values = [schema[a].values[i] for a, i in zip(subset, index, strict=True)]
    mask = np.logical_and.reduce([distinct[a] == v for a, v in zip(subset, values, strict=True)])
    assert counts[position[-1]] == mask.sum()


def test_alphabeta_at_alpha_one_beta_zero_gives_the_true_counts(anes96):
    schema, distinct, _, subsets, position, counts, cells = anes96
    view = AlphaBeta(schema, 1.0, 0.0, n=len(distinct)).publish(distinct, seed=1)
    np.testing.assert_array_equal(view.estimate_marginals_arrays(subsets).estimate, counts)
    exact = yardstick.alphabeta_by_distribution(AlphaBeta(schema, 1.0, 0.0), counts[position],
                                                cells,
                                                np.random.default_rng(0))
    np.testing.assert_array_equal(exact, counts[position])


def test_published_views_and_drawn_counts_have_the_exact_variance(anes96):
    """Both ways of measuring αβ (a published view; the count in V drawn from its
    distribution) give errors whose mean square over the queries is the exact
    variance (α+β)(1−α−β)Q(I) + β(1−β)(|Q(D)| − Q(I)), over α²: within 15% over
    20 × 90 standardised errors (the sampling sd of the ratio is about 3.5%)."""
    schema, distinct, _, subsets, position, counts, cells = anes96
    mech = AlphaBeta.for_privacy(schema, n=len(distinct), gamma=0.2, epsilon=5.0)
    truth = counts[position]
    sd = exact_sd(mech, truth, cells)
    rng = np.random.default_rng(11)
    drawn = np.array([yardstick.alphabeta_by_distribution(mech, truth, cells, rng)
                      for _ in range(20)])
    published = np.array([mech.publish(distinct, seed=s).estimate_marginals_arrays(subsets)
                          .estimate[position] for s in range(20)])
    for estimates in (drawn, published):
        z = (estimates - truth) / sd
        assert np.mean(z ** 2) == pytest.approx(1, abs=0.15)
        assert abs(np.mean(z)) < 4 / np.sqrt(z.size)  # unbiased


def test_drawn_counts_are_unbiased_where_beta_is_large(anes96):
    """At ε = 0.5 (β ≈ 0.24) a count drawn with the wrong probability for the
    tuples in I shifts each estimate by a multiple of Q(I): 2,000 draws of the 90
    queries see it (their mean standardised error is within 4 SE of 0)."""
    schema, distinct, _, _, position, counts, cells = anes96
    mech = AlphaBeta.for_privacy(schema, n=len(distinct), gamma=0.2, epsilon=0.5)
    truth = counts[position]
    sd = exact_sd(mech, truth, cells)
    rng = np.random.default_rng(12)
    z = np.array([(yardstick.alphabeta_by_distribution(mech, truth, cells, rng) - truth)
                  / sd for _ in range(2000)])
    assert abs(np.mean(z)) < 4 / np.sqrt(z.size)
    assert np.mean(z ** 2) == pytest.approx(1, abs=0.02)


@needs_opendp
def test_opendp_at_a_huge_epsilon_gives_the_true_counts(anes96):
    *_, subsets, _, counts, _ = anes96
    meas, facts = yardstick.opendp_marginals(len(subsets), 1e9)
    np.testing.assert_allclose(meas(counts.tolist()), counts, atol=0.5)
    assert facts["epsilon_stated_by_opendp"] <= 1e9 * (1 + 1e-9)


@needs_opendp
def test_opendp_counts_a_replacement_as_two_and_composes_to_epsilon():
    """The sensitivity the baseline assumes is OpenDP's own: its histogram maps a
    replacement (symmetric distance 2) to 2 in L1; q marginals at scale 2q/ε state ε."""
    import opendp.prelude as dp

    dp.enable_features("contrib")
    hist = dp.t.make_count_by_categories(dp.vector_domain(dp.atom_domain(T=dp.i64)),
                                         dp.symmetric_distance(), categories=[0, 1, 2],
                                         null_category=False, TOA=dp.i64)
    assert hist.map(2) == 2
    _, facts = yardstick.opendp_marginals(59, 1.0)
    assert facts["scale"] == 118 and facts["epsilon_stated_by_opendp"] == pytest.approx(1.0)


@pytest.mark.parametrize("mechanism", ["alphabeta", "frapp"])
def test_an_unreachable_epsilon_keeps_its_reason(anes96, mechanism):
    """ε = 40 asks for a prior far below ANES's base rate: no mechanism, the
    ParameterError's reason instead (the summary's "not reachable" cell)."""
    schema, distinct, *_ = anes96
    mech, reason = yardstick.calibrated(mechanism, schema, len(distinct), 40.0)
    assert mech is None and "below the base rate" in reason and "epsilon = 40.0" in reason
    mech, reason = yardstick.calibrated(mechanism, schema, len(distinct), 5.0)
    assert reason is None and mech.guarantee()[yardstick.EPSILON_CLAIM].epsilon == \
        pytest.approx(5.0, rel=1e-6)


def test_missing_opendp_names_the_extra(tmp_path, monkeypatch):
    real = importlib.import_module

    def without_opendp(name, *args):
        if name.partition(".")[0] == "opendp":
            raise ModuleNotFoundError(f"No module named {name!r}", name="opendp")
        return real(name, *args)

    monkeypatch.setattr(importlib, "import_module", without_opendp)
    with pytest.raises(MissingExtraError, match=r"pip install 'privpub\[yardstick\]'"):
        yardstick.run(tmp_path, quick=True)
    assert not (tmp_path / "summary.json").exists()


def test_fair_is_the_corpus_table():
    df, schema = load_fair()
    assert (len(df), len(df.drop_duplicates()), schema.size) == (6366, 5271, 4354560)


@pytest.mark.slow  # an end-to-end experiment run, as the other experiments' are
@needs_opendp
def test_quick_run_from_the_cli(tmp_path, capsys):
    out = tmp_path / "ys"
    assert main(["experiments", "dp-yardstick", "--output", str(out), "--seed", "3",
                 "--quick"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert set(summary["tables"]) == {"adult", "fair", "anes96"}
    for name, table in summary["tables"].items():
        requested = sorted({*yardstick.EPSILONS, table["default_epsilon"]})
        got = {(c["epsilon"], c["mechanism"]) for c in table["cells"]}
        assert got == {(e, m) for e in requested for m in yardstick.MECHANISMS}, name
        assert len(table["cells"]) == len(got)
        for c in table["cells"]:
            if c["status"] != "ok":
                assert c["status"] == "not reachable" and c["reason"], c
                continue
            if c["mechanism"] == "opendp":
                assert c["stated_epsilon"] <= c["epsilon"] * (1 + 1e-9)
            else:
                assert c["stated_epsilon"] == pytest.approx(c["epsilon"], rel=1e-6), c
                # declared domains (Fair, ANES) keep the ε; Adult's derived ones void it
                assert c["epsilon_holds"] == (not table["derived_domains"]), c
            assert np.isfinite(c["rmse"]) and c["rmse"] > 0
            assert set(c["by_attributes"]) == {"1", "2", "3"}
    adult = summary["tables"]["adult"]
    # k = 10, γ = 0.2 on Adult's 19,502 distinct tuples (6.29 on all 30,162 records)
    assert adult["n"] == 19502 and adult["default_epsilon"] == pytest.approx(6.722, abs=1e-3)
    assert (out / "yardstick.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "| adult (n=19,502) |" in capsys.readouterr().out
