"""Auditing an αβ release by Dinur–Nissim reconstruction (privpub.attacks.audit).

The adversary knows each target's quasi-identifier and that the target is in
the table. Per target the release shows the tuple (qi, 1) with probability
α+β if the bit is 1 and β if it is 0, so no decoder can beat the Bayes rate
of guessing each bit from that one observation: the tests hold the audit
to it from both sides (it reaches it, it does not exceed it).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import privpub
from privpub.alphabeta import AlphaBeta
from privpub.attacks import audit
from privpub.core.errors import ParameterError

N = 400


@pytest.fixture(scope="module")
def table():
    schema = privpub.Schema([privpub.IntRange("a", 0, 199), privpub.IntRange("b", 0, 199),
                             privpub.Categorical("s", ["no", "yes"])])
    rng = np.random.default_rng(0)
    cells = rng.choice(200 * 200, N, replace=False)
    df = pd.DataFrame({"a": cells // 200, "b": cells % 200,
                       "s": pd.Categorical(rng.choice(["no", "yes"], N),
                                           categories=["no", "yes"])})
    return schema, df


def bayes_rate(alpha: float, beta: float, p: float) -> float:
    """Best per-target accuracy from seeing whether (qi, 1) is in the view."""
    seen = max(p * (alpha + beta), (1 - p) * beta)
    unseen = max(p * (1 - alpha - beta), (1 - p) * (1 - beta))
    return seen + unseen


def run(schema, df, alpha, beta, decoder="lstsq", n_targets=N, n_queries=None):
    release = AlphaBeta(schema, alpha, beta).publish(df, seed=1)
    result = audit(release, "s", df, secret_value="yes", n_targets=n_targets,
                   n_queries=n_queries, decoder=decoder, seed=2)
    p = float((df["s"] == "yes").mean())
    return result, bayes_rate(alpha, beta, p), 4 * math.sqrt(0.25 / n_targets)


@pytest.mark.parametrize(("decoder", "n_targets", "n_queries"),
                         [("lstsq", N, None), ("lp", 128, 1024)])
def test_audit_reconstructs_a_release_without_noise(table, decoder, n_targets, n_queries):
    schema, df = table
    result, bayes, tol = run(schema, df, 0.9, 0.0, decoder, n_targets, n_queries)
    assert result.n_targets == n_targets and result.eligible == N
    assert result.recovered >= 0.9 and result.recovered >= bayes - tol
    assert result.interval[0] > result.baseline  # beats the guess from the base rate
    assert result.secret_value == "yes"


def test_audit_fails_against_a_noisy_release(table):
    schema, df = table
    result, bayes, tol = run(schema, df, 0.05, 0.6)
    assert result.recovered <= 0.70 and result.recovered <= bayes + tol


def test_audit_at_the_papers_parameters_reaches_the_bayes_rate(table):
    """(10n/m, 0.2)-privacy protects priors up to d = 0.05 here; this adversary's prior on a
    target's tuple is 1/2, outside that guarantee: the audit measures what it leaks."""
    schema, df = table
    mech = AlphaBeta.for_privacy(schema, n=N, gamma=0.2, k=10)
    result, bayes, tol = run(schema, df, mech.alpha, mech.beta)
    assert abs(result.recovered - bayes) <= tol


def test_audit_bad_input(table):
    schema, df = table
    release = AlphaBeta(schema, 0.5, 0.0).publish(df, seed=1)
    with pytest.raises(ParameterError, match="binary"):
        audit(release, "a", df)
    with pytest.raises(ParameterError, match="'maybe' is not in the domain"):
        audit(release, "s", df, secret_value="maybe")
    with pytest.raises(ParameterError, match="decoder"):
        audit(release, "s", df, decoder="magic")
    with pytest.raises(ParameterError, match="PublishedView"):
        audit(df, "s", df)
    with pytest.raises(ParameterError, match="no other record shares"):
        audit(release, "s", pd.concat([df.iloc[:3]] * 2, ignore_index=True))


def test_attack_from_the_cli(table, tmp_path, capsys):
    from privpub.cli import main

    schema, df = table
    AlphaBeta(schema, 0.9, 0.0).publish(df, seed=1).to_parquet(tmp_path / "view.parquet")
    df.to_csv(tmp_path / "data.csv", index=False)
    args = ["attack", str(tmp_path / "view.parquet"), "--data", str(tmp_path / "data.csv"),
            "--secret", "s", "--seed", "3", "--targets", "200"]
    assert main(args + ["--secret-value", "yes"]) == 0
    out = capsys.readouterr().out
    assert "lstsq recovered" in out and '"n_targets": 200' in out
    assert main(args + ["--secret-value", "perhaps"]) == 1
    assert "'perhaps' is not a value of 's'" in capsys.readouterr().err
    assert main(args[:-4] + ["--secret", "a"]) == 1
    assert "must be binary" in capsys.readouterr().err
