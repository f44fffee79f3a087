"""Auditing an αβ release by Dinur–Nissim reconstruction (privpub.attacks.audit).

The adversary knows each target's quasi-identifier and that the target is in
the table. Per target the release shows the tuple (qi, 1) with probability
α+β if the bit is 1 and β if it is 0, so no decoder can beat the Bayes rate
of guessing each bit from that one observation: the tests hold the audit
to it from both sides (it reaches it, it does not exceed it).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from sparse_table import N

import privpub
from privpub.alphabeta import AlphaBeta
from privpub.attacks import audit, audit_presence
from privpub.core.errors import ParameterError

# The audits attack releases of small sparse tables, at parameters chosen to leak or not:
# their bounds are wide, which each release says (UsefulnessWarning, SPLU's
# ReconstructionWarning); what these tests check is what the audits find.
pytestmark = pytest.mark.filterwarnings("ignore::privpub.UsefulnessWarning")

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
    assert "is not binary" in capsys.readouterr().err


# ---- Theorem 2.6's adversary: which candidate tuples are in the table -------------------
def posterior_in_view(alpha: float, beta: float, p: float) -> float:
    """Pr[t ∈ I | t ∈ V] for a tuple of prior p: the posterior of a tuple seen in the view."""
    return p * (alpha + beta) / (p * (alpha + beta) + (1 - p) * beta)


def test_presence_audit_at_the_papers_parameters_stays_below_gamma(table):
    """(10n/m, 0.2)-privacy (d = 0.05 here): a candidate of prior d that the decoder names
    present is in the table with the posterior of a tuple seen in the view (0.142), below
    γ = 0.2 and far from Theorem 2.6's 2/3. Power: the β = 0 test below reads 1.0."""
    from scipy import stats

    from privpub.attacks import audit_presence

    schema, df = table
    mech = AlphaBeta.for_privacy(schema, n=N, gamma=0.2, k=10)
    release = mech.publish(df, seed=1)
    result = audit_presence(release, df, seed=2, rounds=24)
    assert result.prior == mech.d == 0.05 and result.gamma == 0.2
    assert result.present >= 250 and result.named >= 400
    expected = posterior_in_view(mech.alpha, mech.beta, mech.d)
    assert stats.binomtest(result.correct, result.named, expected).pvalue > 1e-3
    assert result.interval[1] < 0.25 and not result.breach
    # d = 10·n/m lies outside Theorem 2.6's range (prior ≤ n/m): not a test of its breach
    assert not result.within_theorem_range and result.verdict == "not-shown"
    assert "outside Theorem 2.6's range" in str(result)


def test_presence_audit_breaks_a_release_made_too_accurate(table):
    """Theorem 2.6's other side: as β → 0 the posterior of a named candidate climbs from
    γ towards 1, and at β = 0 every candidate named is in the table: above 2/3, at the
    prior d = 10·n/m, outside the theorem's range (so not called its breach; the breach at
    a prior ≤ n/m is tests/attacks/test_attack_inputs.py's)."""
    from privpub.attacks import audit_presence

    schema, df = table
    mech = AlphaBeta.for_privacy(schema, n=N, gamma=0.2, k=10)
    posteriors = []
    for beta in (mech.beta, mech.beta / 10, mech.beta / 100, 0.0):
        release = AlphaBeta(schema, mech.alpha, beta).publish(df, seed=1)
        result = audit_presence(release, df, prior=mech.d, seed=2, rounds=16)
        posteriors.append(result.posterior)
    assert posteriors == sorted(posteriors)
    assert posteriors[0] < 0.25 and posteriors[-1] == 1.0
    assert result.above_two_thirds and result.interval[0] > 2 / 3
    assert not result.breach and result.verdict == "above-2/3-outside-range"
    assert "Posterior above 2/3 at prior 0.05 (outside the theorem's range)" in str(result)
    assert result.recall == pytest.approx(mech.alpha, abs=0.1)  # named iff kept (α)


def test_presence_audit_lp_decoder_and_seeds(table):
    from privpub.attacks import audit_presence

    schema, df = table
    release = AlphaBeta(schema, 0.5, 0.0).publish(df, seed=1)
    kwargs = dict(prior=0.05, n_candidates=64, rounds=3, n_queries=512)
    lp = audit_presence(release, df, decoder="lp", seed=4, **kwargs)
    again = audit_presence(release, df, decoder="lstsq", seed=4, **kwargs)
    assert lp.posterior == 1.0 and (lp.present, lp.named) == (again.present, again.named)
    assert audit_presence(release, df, seed=4, **kwargs) == again
    assert audit_presence(release, df, seed=5, **kwargs) != again


def test_presence_audit_candidates_are_drawn_as_stated(table):
    """Candidates in the table are unrepeated records, the others distinct domain tuples
    outside the data, each candidate in the table with probability `prior`."""
    from privpub.attacks.presence import _absent_tuples
    from privpub.core.seeding import resolve_seed
    from privpub.tables.records import KeyCounts, rows_as_keys

    schema, df = table
    digits = schema.digits(schema.encode(df))
    data = KeyCounts(rows_as_keys(digits))
    cols = _absent_tuples(5000, [200, 200, 2], data, resolve_seed(3))
    keys = rows_as_keys(cols)
    assert len(np.unique(keys)) == 5000 and not data.of(keys).any()
    # uniform over the outside: each attribute's digits are spread evenly
    assert abs(np.mean(cols[2]) - 0.5) < 0.03 and abs(np.mean(cols[0]) - 99.5) < 3


def test_presence_audit_bad_input(table):
    from privpub.attacks import audit_presence

    schema, df = table
    release = AlphaBeta(schema, 0.5, 0.1).publish(df, seed=1)
    with pytest.raises(ParameterError, match="states no prior bound d; pass prior="):
        audit_presence(release, df)
    with pytest.raises(ParameterError, match="prior"):
        audit_presence(release, df, prior=1.5)
    with pytest.raises(ParameterError, match="n_candidates"):
        audit_presence(release, df, prior=0.05, n_candidates=1)
    with pytest.raises(ParameterError, match="every record's tuple is repeated"):
        audit_presence(release, pd.concat([df.iloc[:3]] * 2, ignore_index=True), prior=0.05)
    with pytest.raises(ParameterError, match="decoder"):
        audit_presence(release, df, prior=0.05, decoder="magic")


def test_presence_attack_from_the_cli(table, tmp_path, capsys):
    from privpub.cli import main

    schema, df = table
    mech = AlphaBeta.for_privacy(schema, n=N, gamma=0.2, k=10)
    mech.publish(df, seed=1).to_parquet(tmp_path / "view.parquet")
    df.to_csv(tmp_path / "data.csv", index=False)
    args = ["attack", str(tmp_path / "view.parquet"), "--data", str(tmp_path / "data.csv"),
            "--seed", "3"]
    assert main(args + ["--presence", "--rounds", "4", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["prior"] == 0.05 and out["rounds"] == 4 and out["breach"] is False
    assert main(args + ["--secret", "s", "--rounds", "4"]) == 1
    assert "--rounds is for --presence audits" in capsys.readouterr().err
    with pytest.raises(SystemExit) as usage:  # neither --secret nor --presence
        main(args)
    assert usage.value.code == 2


# ---- SPLU-Gen releases -------------------------------------------------------------------
@pytest.fixture(scope="module")
def splu_table():
    """600 records: a unique (a, b), a published binary t, and a sensitive s of 6 values."""
    schema = privpub.Schema([privpub.IntRange("a", 0, 199), privpub.IntRange("b", 0, 199),
                             privpub.Categorical("t", ["no", "yes"]),
                             privpub.Categorical("s", [f"v{i}" for i in range(6)])])
    rng = np.random.default_rng(1)
    cells = rng.choice(200 * 200, 600, replace=False)
    df = pd.DataFrame({"a": cells // 200, "b": cells % 200,
                       "t": pd.Categorical(rng.choice(["no", "yes"], 600),
                                           categories=["no", "yes"]),
                       "s": pd.Categorical(rng.choice([f"v{i}" for i in range(6)], 600,
                                                      p=[0.1, 0.3, 0.3, 0.1, 0.1, 0.1]),
                                           categories=[f"v{i}" for i in range(6)])})
    release = privpub.splu.SPLUGen(3, "s", schema=schema).publish(df, seed=1)
    return schema, df, release


def test_splu_subset_sums_are_the_releases_own_reconstruction(splu_table):
    """The audit's counts for a subset of targets equal reconstruct_many's for the same
    predicate written in SQL (the mechanism answers them: its SubsetSumAuditor capability)."""
    from privpub.core.capabilities import SubsetSumAuditor
    from privpub.splu import reconstruct_many

    schema, df, release = splu_table
    digits = [d.astype(np.int64) for d in schema.digits(schema.encode(df))]
    Q = np.random.default_rng(2).random((6, 40)) < 0.5
    tuple_digits = [d[:40] for d in digits]
    tuple_digits[3] = np.zeros(40, dtype=np.int64)  # the secret set to v0, as audit() does
    mech = release.mechanism_object()
    assert isinstance(mech, SubsetSumAuditor)
    answers, variance = mech.audit_subset_sums(release, [0, 1], 3, 0, tuple_digits, Q)
    sql = [" or ".join(f"(a = {df.a[i]} and b = {df.b[i]})" for i in np.flatnonzero(q))
           for q in Q]
    expected = reconstruct_many(release, [(w, {"s": "v0"}) for w in sql]).value
    assert np.allclose(answers, expected) and np.all(variance > 0)


def test_audit_of_a_splu_release_reads_what_each_target_published(splu_table):
    """Each target's published s is all a SPLU-Gen release says of it: the decoded bit is
    [published s = v0], so the audit recovers exactly as often as that rule does."""
    schema, df, release = splu_table
    result = audit(release, "s", df, secret_value="v0", n_targets=600, seed=3)
    assert result.n_targets == 600 and result.secret_value == "v0"
    published = release.frame.merge(df[["a", "b", "s"]], on=["a", "b"],
                                         suffixes=("_pub", ""))
    rule = float(np.mean((published["s_pub"] == "v0") == (published["s"] == "v0")))
    assert abs(result.recovered - rule) <= 0.01, (result.recovered, rule)
    assert result.interval[0] > 0.5


def test_audit_of_a_splu_release_reads_a_published_column_exactly(splu_table):
    schema, df, release = splu_table
    result = audit(release, "t", df, secret_value="yes", n_targets=300, seed=3)
    assert result.recovered == 1.0  # t is not sensitive: published as it is
    from privpub.attacks import audit_presence
    with pytest.raises(ParameterError, match="makes no claim about presence"):
        audit_presence(release, df, prior=0.05)


def test_a_secret_in_a_huge_integer_range_is_named_without_listing_the_domain():
    """secret_value in an integer range of 2^40 values: found by its offset (listing the
    domain to find it would need 8 TB), and a value outside the range is a named error."""
    schema = privpub.Schema([privpub.IntRange("a", 0, 199), privpub.IntRange("b", 0, 199),
                             privpub.IntRange("x", 0, 2**40)])
    rng = np.random.default_rng(4)
    cells = rng.choice(200 * 200, N, replace=False)
    df = pd.DataFrame({"a": cells // 200, "b": cells % 200,
                       "x": rng.choice([7, 2**39], N)})
    release = AlphaBeta(schema, 0.9, 0.0).publish(df, seed=1)
    result = audit(release, "x", df, secret_value=2**39, n_targets=N, seed=2)
    assert result.secret_value == 2**39 and result.recovered >= 0.9
    with pytest.raises(ParameterError, match=r"secret_value 1099511627777 is not in the domain"):
        audit(release, "x", df, secret_value=2**40 + 1)


def test_presence_audit_takes_a_sequence_of_views_and_refuses_anything_else():
    with pytest.raises(privpub.ParameterError, match="non-empty sequence"):
        audit_presence([], None)
    with pytest.raises(privpub.ParameterError, match="non-empty sequence"):
        audit_presence(["view.parquet"], None)
