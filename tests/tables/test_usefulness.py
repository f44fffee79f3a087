"""Usefulness that means something: a release whose error bound cannot tell its
typical counts from zero says so (a UsefulnessWarning with the figures and what
would help, and a guarantee whose usefulness claim holds only weakly), and the
paper's own Adult setting does not.

The rule (privpub.core.guarantee.Resolution): the typical count is n/|D| for
the attribute with the fewest values (the mean count of an equality query on
it); usefulness is weak when the bound is at least that."""

import json
import math
import re
import subprocess
import sys
import warnings

import pytest
import statsmodels.api as sm

import privpub
from privpub import cli
from privpub.core.guarantee import Resolution

USEFUL = "(ρ, ε)-usefulness"


@pytest.fixture(scope="module")
def survey():
    """Fair's 1978 survey of 6,366 married women (statsmodels): 9 columns, as
    categoricals; 5,327 distinct tuples; religious has the fewest values (4)."""
    df = sm.datasets.fair.load_pandas().data.astype("category")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", privpub.PrivacyWarning)
        schema = privpub.Schema.from_frame(df)
    return df, schema


def test_the_survey_at_the_default_calibration_warns_with_its_figures(survey):
    df, schema = survey
    mech = privpub.AlphaBeta.for_privacy(schema, n=len(df), gamma=0.2, k=10)
    with pytest.warns(privpub.UsefulnessWarning) as caught:
        view = mech.publish(df, seed=1, duplicates="set")
    (message,) = [str(w.message) for w in caught]
    bound, n = view.parameters["error_bound"], view.parameters["n"]
    assert n == 5_327 and bound > n / 4
    assert f"±{bound:,.1f}" in message and "1,331.8 = n/|D| for religious (4 values" in message
    assert "n = 5,327 distinct tuples" in message
    assert "cannot tell typical counts from zero" in message
    assert message.startswith("αβ: to tell typical counts (1,331.8) from zero, ask for k = ")
    assert "privpub plan" in message
    assert "coarser domains cannot do it" in message      # n/2 = 2,663.5 < the bound too
    claim = view.guarantee()[USEFUL]
    assert claim.holds and claim.weak
    assert "holds only in a weak sense" in claim.statement
    text = str(view.guarantee())
    assert f"{USEFUL}: holds only weakly" in text and f"{USEFUL}: holds [" not in text


def test_frapp_on_the_survey_warns_too(survey):
    df, schema = survey
    mech = privpub.FRAPP.for_privacy(schema, n=len(df), gamma=0.2, k=10)
    with pytest.warns(privpub.UsefulnessWarning, match=r"FRAPP: to tell typical counts .* the "
                                                       r"error bound ±4,458\.9 .* "
                                                       r"≥ 1,591\.5 = n/\|D\| for religious"):
        view = mech.publish(df, seed=1, duplicates="records")
    assert view.guarantee()[USEFUL].weak


def said(message: str, pattern: str) -> list[float]:
    """The numbers of ``pattern`` (a regular expression with groups) in ``message``."""
    return [float(x.replace(",", "")) for x in re.search(pattern, message).groups()]


@pytest.mark.parametrize("family", [privpub.AlphaBeta, privpub.FRAPP])
def test_the_warning_leads_with_the_request_that_makes_the_release_useful(survey, family):
    """The warning leads with the largest k at the release's γ and the least γ at its
    k whose bound tells typical counts from zero, each with its cost in privacy (ε
    up, fewer adversaries protected); each, asked for, publishes without a
    warning, and 2% beyond it warns again (the library's own verdict)."""
    df, schema = survey
    with pytest.warns(privpub.UsefulnessWarning) as caught:
        family.for_privacy(schema, n=len(df), gamma=0.2, k=10).publish(df, seed=1,
                                                                        duplicates="set")
    (message,) = [str(w.message) for w in caught]
    assert re.match(r"(αβ|FRAPP): to tell typical counts \(1,331\.8\) from zero, ask for k = ",
                    message)
    k, = said(message, r"ask for k = ([\d.]+) instead of 10 at γ = 0\.2")
    d_new, d_old, eps_new, eps_old = said(
        message, r"between d = ([\d.e-]+) and ([\d.e-]+) are no longer protected, "
                 r"and ε = ([\d.]+) instead of ε = ([\d.]+)")
    assert d_new < d_old and eps_new > eps_old and 1 <= k < 10
    epsilon, = said(message, r"epsilon=([\d.]+)\)")
    gamma, = said(message, r"or γ = ([\d.]+) instead of 0\.2 at k = 10")
    assert 0.2 < gamma < 1
    useful = [family.for_privacy(schema, n=len(df), gamma=0.2, k=k),
              family.for_privacy(schema, n=len(df), gamma=0.2, epsilon=epsilon,
                                 allow_prior_below_base_rate=True),
              family.for_privacy(schema, n=len(df), gamma=gamma, k=10)]
    for mech in useful:
        with warnings.catch_warnings():
            warnings.simplefilter("error", privpub.UsefulnessWarning)
            mech.publish(df, seed=1, duplicates="set")
    assert math.isclose(useful[1].d, d_new, rel_tol=0.01)
    for mech in (family.for_privacy(schema, n=len(df), gamma=0.2, k=k * 1.02),
                 family.for_privacy(schema, n=len(df), gamma=gamma / 1.02, k=10)):
        with pytest.warns(privpub.UsefulnessWarning):
            mech.publish(df, seed=1, duplicates="set")


def test_a_bound_beyond_n_says_no_count_is_told_from_zero(survey):
    """Without affairs and occupation_husb, m = 181,440: at k = 5, d = 0.175 is
    near γ = 0.2, α falls to 0.016 and the bound passes n itself."""
    df, _ = survey
    df = df.drop(columns=["affairs", "occupation_husb"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", privpub.PrivacyWarning)
        schema = privpub.Schema.from_frame(df)
    mech = privpub.AlphaBeta.for_privacy(schema, n=len(df), gamma=0.2, k=5)
    assert mech.alpha < 0.02
    with pytest.warns(privpub.UsefulnessWarning, match="is ≥ n = 3,431 distinct tuples itself"):
        view = mech.publish(df, seed=1, duplicates="set")
    assert view.parameters["error_bound"] > view.parameters["n"]
    assert view.guarantee()[USEFUL].weak


def test_the_verdict_survives_reopening(survey, tmp_path):
    df, schema = survey
    mech = privpub.AlphaBeta.for_privacy(schema, n=len(df), gamma=0.2, k=10)
    with pytest.warns(privpub.UsefulnessWarning):
        view = mech.publish_to_parquet(df, tmp_path / "v.parquet", seed=1, duplicates="set")
    with warnings.catch_warnings():
        warnings.simplefilter("error")                     # reopening does not warn
        again = privpub.PublishedView.open(tmp_path / "v.parquet")
        assert again.guarantee()[USEFUL] == view.guarantee()[USEFUL]
    assert again.guarantee()[USEFUL].weak


@pytest.mark.parametrize("duplicates", ["records", "set"])
def test_adult_at_the_readme_calibration_does_not_warn(duplicates):
    df, schema = privpub.datasets.load_adult()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        view = privpub.AlphaBeta.for_privacy(schema, n=len(df), gamma=0.2, k=10).publish(
            df, seed=1, duplicates=duplicates)
        frapp = privpub.FRAPP.for_privacy(schema, n=len(df), gamma=0.2, k=10).publish(
            df, seed=1, duplicates=duplicates)
    for release in (view, frapp):
        claim = release.guarantee()[USEFUL]
        assert claim.holds and not claim.weak
        # What the bound does not resolve is still said, without a warning.
        assert "within the bound for age" in claim.statement
        assert "it exceeds the bound for " in claim.statement and "sex" in claim.statement


def test_the_rule_at_its_edge():
    """Typical count 1,000/4 = 250: a bound of exactly 250 is weak, just below is not."""
    domains = (("a", 10), ("b", 4), ("c", 4))
    at = Resolution("αβ", 250.0, 0.05, 1_000, "records", domains)
    below = Resolution("αβ", 249.999, 0.05, 1_000, "records", domains)
    assert at.coarsest == ("b", 4) and at.typical == 250.0
    assert at.weak and not below.weak
    assert at.most_values == 3 and below.most_values == 4     # 1,000/4 = 250 is within it
    assert "b (4 values" in at.warning() and "at most 3 values" in at.warning()
    assert "within the bound for a (100.0)" in below.statement()
    assert Resolution("αβ", 1_000.0, 0.05, 1_000, "records", domains).most_values == 0


def test_the_rule_at_its_edge_through_a_mechanism():
    """FRAPP's bound √(n ln(2/ε)/2)/(γ_f − o) falls as γ_f grows: solve for the
    γ_f whose bound is the typical count, then step each way."""
    schema = privpub.Schema([privpub.IntRange("a", 0, 9), privpub.IntRange("b", 0, 3)])
    n, m, typical = 1_000, schema.size, 250.0
    spread = math.sqrt(n * math.log(2 / 0.05) / 2)
    edge = (spread / typical + 1 / (m - 1)) / (m / (m - 1))

    def weak(gamma_frapp: float) -> bool:
        mech = privpub.FRAPP(schema, gamma_frapp, n=n)
        assert abs(mech.error_bound() - typical) < 1e-3
        return mech.guarantee()[USEFUL].weak

    assert weak(edge * (1 - 1e-9)) and not weak(edge * (1 + 1e-9))


def test_multiview_steps_follow_the_rule(survey):
    df, schema = survey
    pub = privpub.MultiViewPublisher(
        privpub.AlphaBeta.for_privacy(schema, n=len(df), gamma=0.2, k=10), max_views=2)
    with pytest.warns(privpub.UsefulnessWarning, match=r"αβ view 1/2: the error bound"):
        view = pub.publish(df, seed=1, duplicates="set")
    assert view.guarantee()[USEFUL].weak


def test_plan_marks_weak_points_and_finds_the_alternatives(survey):
    df, schema = survey
    found = privpub.plan(df, schema=schema, mechanisms=["alphabeta", "frapp"], ks=[2, 10],
                         gammas=[0.2, 0.8], calibrations=["exclusive", "independent"])
    rows = {(r["mechanism"], r["calibration"], r["k"], r["gamma"]): r for r in found.rows}
    default = rows[("alphabeta", "exclusive", 10, 0.2)]
    assert default["weak_usefulness"] and default["typical_count"] == pytest.approx(5_327 / 4)
    assert not rows[("alphabeta", "exclusive", 2, 0.2)]["weak_usefulness"]
    assert "usefulness only weak" in found.explain()
    lines = found.alternatives("alphabeta", "exclusive", 10, 0.2)
    assert lines[0].startswith("αβ calibration 'exclusive' at k = 2, γ = 0.2: ±1,245.2")
    assert lines[1].startswith("αβ calibration 'exclusive' at k = 10, γ = 0.8: ±716.3")
    assert all(float(line.rsplit("±", 1)[1].replace(",", "")) < 5_327 / 4 for line in lines)
    assert found.to_frame()["weak_usefulness"].notna().all()


@pytest.mark.slow
def test_cli_prints_the_warning_on_stderr_and_inspect_shows_the_claim(survey, tmp_path, capsys):
    df, _ = survey
    csv = tmp_path / "fair.csv"
    df.to_csv(csv, index=False)
    out = tmp_path / "fair.parquet"
    # A process of its own: what a user sees (pytest would capture a Python warning).
    run = subprocess.run([sys.executable, "-m", "privpub.cli", "publish", "alphabeta", "--input",
                          str(csv), "--output", str(out), "--duplicates", "set", "--seed", "1",
                          "--exact-domain", "age,yrs_married,children,affairs"],
                         capture_output=True, text=True, timeout=600, check=False)
    assert run.returncode == 0, run.stderr
    err = run.stderr.splitlines()
    block = [line for line in err if "typical counts" in line]
    assert len(block) == 1 and block[0].startswith("warning: αβ: to tell typical counts "
                                                   "(1,331.8) from zero, ask for k = 2.29")
    assert "the error bound ±2,760.5" in block[0]
    assert "1,331.8 = n/|D| for religious" in block[0]
    assert "UsefulnessWarning" not in run.stderr and "warnings.warn" not in run.stderr
    at = err.index(block[0])
    assert "`privpub plan` finds these requests" in err[at + 1]
    assert err[at + 2].strip().startswith("αβ calibration 'exclusive' at k = 2, γ = 0.2")
    assert f"{USEFUL}: holds only weakly" in run.stdout

    assert cli.main(["inspect", str(out)]) == 0
    assert f"{USEFUL}: holds only weakly" in capsys.readouterr().out
    assert cli.main(["inspect", str(out), "--format", "json"]) == 0
    claims = {c["name"]: c for c in json.loads(capsys.readouterr().out)["guarantee"]["claims"]}
    assert claims[USEFUL]["holds"] and claims[USEFUL]["weak"]

    frapp = tmp_path / "frapp.parquet"
    assert cli.main(["publish", "frapp", "--input", str(csv), "--output", str(frapp),
                     "--duplicates", "records", "--seed", "1",
                     "--exact-domain", "age,yrs_married,children,affairs"]) == 0
    err = capsys.readouterr().err
    assert "warning: FRAPP: to tell typical counts" in err and "±4,458.9" in err
    assert "UsefulnessWarning" not in err


def test_cli_does_not_warn_on_adult(tmp_path, capsys):
    df, _ = privpub.datasets.load_adult()
    csv = tmp_path / "adult.csv"
    df.to_csv(csv, index=False)
    assert cli.main(["publish", "frapp", "--input", str(csv), "--output",
                     str(tmp_path / "f.parquet"), "--duplicates", "records", "--seed", "1"]) == 0
    captured = capsys.readouterr()
    assert "typical counts" not in captured.err
    assert f"{USEFUL}: holds [" in captured.out
