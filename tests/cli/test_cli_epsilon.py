"""`privpub publish alphabeta|frapp --epsilon ε`: a privacy loss to calibrate for,
instead of --k. The release states that ε (its indistinguishability claim) and
the d it gives; with --k the two must agree; `plan` still reads --epsilon as the
renamed failure probability (tests/core/test_renamed_names.py)."""

from __future__ import annotations

import math

import pytest

import privpub
from privpub import cli

INDISTINGUISHABILITY = "ε-indistinguishability (replace one tuple)"


@pytest.fixture(scope="module")
def adult_csv(tmp_path_factory):
    df, _ = privpub.datasets.load_adult()
    path = tmp_path_factory.mktemp("adult") / "adult.csv"
    df.to_csv(path, index=False)
    return path


@pytest.mark.parametrize("family, epsilon", [("alphabeta", 6.5), ("frapp", 3.0)])
def test_the_release_states_the_epsilon_asked_for(adult_csv, tmp_path, capsys, family,
                                                  epsilon):
    out = tmp_path / "v.parquet"
    assert cli.main(["publish", family, "--input", str(adult_csv), "--output", str(out),
                     "--duplicates", "set", "--epsilon", str(epsilon), "--seed", "1"]) == 0
    err = capsys.readouterr().err
    view = privpub.PublishedView.open(out)
    claim = view.guarantee()[INDISTINGUISHABILITY]
    assert math.isclose(claim.epsilon, epsilon, rel_tol=1e-6), claim.statement
    mech = view.mechanism_object()
    d = mech.d
    assert f"ε = {epsilon:g} at γ = 0.2 gives d = {d:.6g} (k = " in err
    # The same request through the library: the same calibration.
    lib = getattr(privpub, {"alphabeta": "AlphaBeta", "frapp": "FRAPP"}[family]).for_privacy(
        view.schema, n=30_162, gamma=0.2, epsilon=epsilon)  # n: the records given
    assert math.isclose(lib.d, d, rel_tol=1e-9)


def test_epsilon_and_a_disagreeing_k_are_refused_by_name(adult_csv, tmp_path, capsys):
    out = tmp_path / "v.parquet"
    assert cli.main(["publish", "alphabeta", "--input", str(adult_csv), "--output", str(out),
                     "--duplicates", "set", "--epsilon", "6.5", "--k", "10"]) == 1
    err = capsys.readouterr().err
    assert "privpub: error:" in err and "--k 10, --epsilon 6.5" in err
    assert not out.exists()


def test_without_epsilon_k_defaults_to_ten(adult_csv, tmp_path):
    out = tmp_path / "v.parquet"
    assert cli.main(["publish", "alphabeta", "--input", str(adult_csv), "--output", str(out),
                     "--duplicates", "set", "--seed", "1"]) == 0
    mech = privpub.PublishedView.open(out).mechanism_object()
    assert math.isclose(mech.d * mech.schema.size / 30_162, 10.0, rel_tol=1e-9)  # records given
