"""What the attacks take, and what the presence audit calls a breach (issue 22).

Every public function of privpub.attacks checks its inputs through the one set
of helpers in attacks/database.py and names the argument and the query, bit or
entry at fault; a database too small for a decoder is refused by n. Each test
says, under "Why", what privpub did before: every one of those failed then.

The presence audit calls a result a breach in Theorem 2.6's sense only at a
prior within the theorem's range, Pr₁[t] ≤ n/m (n: distinct tuples of the data,
m: the domain size); above 2/3 at a larger prior (the release's d = k·n/m
among them) it says so and that it is outside the range.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from sparse_table import N

from privpub.alphabeta import AlphaBeta
from privpub.attacks import (
    AnswerAuditor,
    BinomialNoise,
    PresenceAuditResult,
    SubsetSumDatabase,
    audit,
    audit_presence,
    default_queries,
    exhaustive_reconstruct,
    lp_reconstruct,
    lstsq_reconstruct,
    pair_attack,
    random_queries,
    stays_private,
)
from privpub.attacks.decoders import band_fit, lp_fit, lstsq_fit
from privpub.core.errors import ParameterError, PrivpubError, QueryError

# Three bits (1, 0, 1) and four queries with their exact answers.
Q = np.array([[1, 0, 1], [0, 1, 1], [1, 1, 0], [1, 1, 1]])
A = np.array([2.0, 1.0, 1.0, 2.0])



FITS = {
    "lstsq_fit": lambda q, a: lstsq_fit(q, a),
    "lp_fit": lambda q, a: lp_fit(q, a, 0.1),
    "lp_fit highs": lambda q, a: lp_fit(q, a, 0.1, solver="highs"),
    "band_fit": lambda q, a: band_fit(q, a, 0.1),
}


def fit_bits(fit) -> np.ndarray:
    c = fit[0] if isinstance(fit, tuple) else fit
    return np.asarray(c) > 0.5


# ---- decoders refuse a database of fewer than 2 bits ------------------------------------
@pytest.mark.parametrize("decoder", [
    lambda db: lstsq_reconstruct(db, seed=1),
    lambda db: lstsq_reconstruct(db, n_queries=8, seed=1),
    lambda db: lp_reconstruct(db, 0.0, seed=1),
    lambda db: exhaustive_reconstruct(db, 0.0),
], ids=["lstsq", "lstsq-with-queries", "lp", "exhaustive"])
@pytest.mark.parametrize("bit", [0, 1])
def test_decoders_refuse_a_one_bit_database(decoder, bit):
    """Why: lstsq_reconstruct asked t = ⌈1·(ln 1)²⌉ = 0 queries and returned bit 0 whatever
    the database held (wrong for [1], silently); lp_reconstruct raised ZeroDivisionError."""
    with pytest.raises(ParameterError, match=r"n ≥ 2 bits, got n = 1 .*db\.query\(\[1\]\)"):
        decoder(SubsetSumDatabase([bit], seed=1))


def test_two_bits_are_decoded():
    """The smallest database the decoders take is decoded (power for the refusal above)."""
    db = SubsetSumDatabase([1, 0], seed=1)
    assert lstsq_reconstruct(db, seed=1).bits.tolist() == [True, False]
    assert lp_reconstruct(db, 0.0, seed=1).bits.tolist() == [True, False]
    assert exhaustive_reconstruct(db, 0.0).bits.tolist() == [True, False]


@pytest.mark.parametrize("n", [0, 1, -3])
def test_default_queries_refuses_n_below_2(n):
    """Why: default_queries(0) raised a bare ValueError (math domain error) and
    default_queries(1) returned 0 queries."""
    with pytest.raises(ParameterError, match=rf"^n must be at least 2, got {n}$"):
        default_queries(n)
    assert default_queries(2) == math.ceil(2 * math.log(2) ** 2) == 1


@pytest.mark.parametrize(("n", "t", "name"), [(0, 5, "n"), (5, 0, "t"), (-1, 3, "n"),
                                              (3, 2.0, "t")])
def test_random_queries_names_n_or_t(n, t, name):
    """Why: random_queries(5, 0) returned an empty matrix, (0, 5) five empty queries, and
    (-1, 3) complained about "n = -3" (the product t·n) from the random stream."""
    with pytest.raises(ParameterError, match=rf"^{name} must be"):
        random_queries(n, t, seed=1)


# ---- the fits: 0/1 queries, shapes, finite answers, non-negative bounds -----------------
@pytest.mark.parametrize("fit", FITS.values(), ids=FITS.keys())
def test_fits_decode_the_example(fit):
    """The example every bad-input case below starts from is decoded (lists taken too).
    Why (lists): lstsq_fit([[...]], [...]) raised AttributeError ('list' has no shape)."""
    assert fit_bits(fit(Q, A)).tolist() == [True, False, True]
    assert fit_bits(fit(Q.tolist(), A.tolist())).tolist() == [True, False, True]
    assert fit_bits(fit(Q.astype(bool), A.astype(np.int64))).tolist() == [True, False, True]


BAD_QUERIES = [
    (Q * 2, r"^queries: bit 0 of query 0 is 2; entries must be 0 or 1$"),
    (np.where(Q == 1, -1, 0), r"^queries: bit 0 of query 0 is -1"),
    (Q * 0.5, r"^queries must be bool or 0/1 integers, got dtype float64$"),
    (Q.astype(float), r"^queries must be bool or 0/1 integers, got dtype float64$"),
    (Q[0], r"^queries must be a \(t, n\) 0/1 matrix, one row per query, got shape \(3,\)$"),
    (Q[None], r"got shape \(1, 4, 3\)"),
    (np.zeros((4, 0), bool), r"at least one query of at least one bit, got shape \(4, 0\)"),
]


@pytest.mark.parametrize("fit", FITS.values(), ids=FITS.keys())
@pytest.mark.parametrize(("queries", "message"), BAD_QUERIES)
def test_fits_name_the_query_at_fault(fit, queries, message):
    """Why: a query entry of 2 or 0.5 was fitted as if it were a query (lp_fit returned
    c = (0.5, 0, 0.5) for 2·Q, lstsq_fit the same); a vector or an empty matrix met raw
    numpy errors (ValueError: not enough values to unpack)."""
    with pytest.raises(QueryError, match=message) as caught:
        fit(queries, A)
    assert isinstance(caught.value, PrivpubError)


def test_fits_refuse_zero_queries():
    """Why: lstsq_fit with no queries returned c = 0 (a fit of nothing), lp_fit raised
    ZeroDivisionError in its step-size estimate."""
    for fit in FITS.values():
        with pytest.raises(QueryError, match=r"at least one query .* shape \(0, 3\)"):
            fit(np.zeros((0, 3), bool), np.zeros(0))


BAD_ANSWERS = [
    (A[:3], r"^answers has 3 rows but there are 4 queries \(one answer per query\)$"),
    (np.append(A, 1.0), r"^answers has 5 rows but there are 4 queries"),
    (np.array([2.0, 1.0, np.nan, 2.0]),
     r"^answers: entry 2 \(the answer to query 2\) is nan; answers must be finite$"),
    (np.array([np.inf, 1.0, 1.0, 2.0]), r"^answers: entry 0 \(the answer to query 0\) is inf"),
    (np.array([2.0, 1.0, 1.0, -np.inf]), r"^answers: entry 3 .* is -inf"),
    (np.array(["2", "1", "1", "2"]), r"^answers must be real numbers, got dtype <U1$"),
    (np.array([True, False, False, True]), r"^answers must be real numbers, got dtype bool$"),
    (np.array([2, 1, None, 2], dtype=object), r"^answers must be real numbers, got dtype object"),
    (A + 0j, r"^answers must be real numbers, got dtype complex128$"),
    (A.reshape(2, 2), r"^answers must have shape \(t,\)"),
]


@pytest.mark.parametrize("fit", [f for k, f in FITS.items() if k != "lstsq_fit"],
                         ids=[k for k in FITS if k != "lstsq_fit"])
@pytest.mark.parametrize(("answers", "message"), BAD_ANSWERS)
def test_lp_fits_name_the_answer_at_fault(fit, answers, message):
    """Why: NaN or inf answers met scipy's "array must not contain infs or NaNs", a short
    answer vector numpy's matmul core-dimension mismatch; text answers got through."""
    with pytest.raises(ParameterError, match=message):
        fit(Q, answers)


@pytest.mark.parametrize(("answers", "message"), [
    *[case for case in BAD_ANSWERS if "shape" not in case[1]],
    (np.ones((4, 2, 1)), r"^answers must have shape \(t,\) or \(t, R\)"),
    (np.ones((4, 0)), r"^answers must have shape \(t,\) or \(t, R\), .* got shape \(4, 0\)$"),
    (np.array([[2.0, 2.0], [1.0, np.nan], [1.0, 1.0], [2.0, 2.0]]),
     r"^answers: entry 1, column 1 \(the answer to query 1\) is nan"),
])
def test_lstsq_fit_names_the_answer_at_fault(answers, message):
    """Why: as for the LP; lstsq_fit also takes a (t, R) matrix of answers (R fits), whose
    bad entry is named with its column."""
    with pytest.raises(ParameterError, match=message):
        lstsq_fit(Q, answers)
    two = lstsq_fit(Q, np.stack([A, 3 - A], axis=1))   # the matrix form works
    assert (two > 0.5).T.tolist() == [[True, False, True], [False, True, False]]


@pytest.mark.parametrize("fit", [lambda b: lp_fit(Q, A, b),
                                 lambda b: lp_fit(Q, A, b, solver="highs"),
                                 lambda b: band_fit(Q, A, b)],
                         ids=["lp_fit", "lp_fit highs", "band_fit"])
@pytest.mark.parametrize(("bound", "message"), [
    (-1.0, r"^bound must be non-negative, got -1.0$"),
    (math.nan, r"^bound must be finite, got nan$"),
    (math.inf, r"^bound must be finite, got inf$"),
    ("1", r"^bound must be a number, got '1' \(str\)$"),
])
def test_lp_fits_refuse_a_bad_bound(fit, bound, message):
    """Why: a negative bound made lp_fit call the LP infeasible and return the least-excess
    fit with a note; NaN met scipy's bounds check."""
    with pytest.raises(ParameterError, match=message):
        fit(bound)


def test_band_fit_takes_at_least_one_step():
    """Why: max_steps = 0 returned the clipped least-squares start as if it had run."""
    with pytest.raises(ParameterError, match=r"^max_steps must be at least 1, got 0$"):
        band_fit(Q, A, 0.5, max_steps=0)


# ---- the rest of privpub.attacks' public functions --------------------------------------
def test_agreement_takes_0_1_candidates_only():
    """Why: agreement() cast the candidate to bool, so [2, 0, 1] scored as [1, 0, 1]."""
    db = SubsetSumDatabase([1, 0, 1])
    assert db.agreement([1, 0, 1]) == 1.0 and db.agreement([0, 0, 1]) == pytest.approx(2 / 3)
    with pytest.raises(ParameterError, match=r"^candidate: bit 0 is 2; entries must be 0 or 1$"):
        db.agreement([2, 0, 1])
    with pytest.raises(ParameterError, match="candidate must be bool or 0/1 integers"):
        db.agreement([0.9, 0.0, 1.0])
    with pytest.raises(ParameterError, match="candidate: bit 1 is 3"):
        AnswerAuditor([1, 0, 1]).agreement([1, 3, 1])


def test_binomial_noise_refuses_zero_coins():
    """Why: at n = 1 the paper's R = ⌈T (ln n)^μ⌉ is 0 coins, and the database answered
    every query exactly while its mechanism said binomial noise."""
    with pytest.raises(ParameterError, match=r"R = ⌈T \(ln n\)\^μ⌉ = 0 coins at n = 1"):
        BinomialNoise(4.0).coins(1)
    with pytest.raises(ParameterError, match="0 coins at n = 1"):
        SubsetSumDatabase([1], BinomialNoise(4.0), seed=1).query([1])
    with pytest.raises(ParameterError, match=r"^n must be at least 1, got 0$"):
        BinomialNoise(4.0).coins(0)
    assert BinomialNoise(4.0, mu=0.0).coins(1) == 4   # (ln 1)^0 = 1: four coins
    assert BinomialNoise(4.0).coins(2) == 1


def test_stays_private_checks_the_walks():
    """Why: a 1-d conf raised numpy's AxisError; a walk holding NaN was counted as leaving
    the band (its max is NaN, and NaN < δ′ is False), silently."""
    conf = np.array([[0.1, 0.2], [0.1, 5.0]])
    assert stays_private(conf, 0.2) == 0.5
    with pytest.raises(ParameterError, match=r"\(walks, steps\) array .* got shape \(2,\)"):
        stays_private(conf[0], 0.2)
    with pytest.raises(ParameterError, match=r"^conf: walk 1, step 0 is nan$"):
        stays_private(np.array([[0.1, 0.2], [np.nan, 0.1]]), 0.2)
    with pytest.raises(ParameterError, match="got shape \\(0, 2\\)"):
        stays_private(np.zeros((0, 2)), 0.2)
    with pytest.raises(ParameterError, match="conf must be real log-odds, got dtype <U"):
        stays_private(np.array([["0.1"]]), 0.2)


def test_pair_attack_names_a_wrong_auditor():
    """Why: pair_attack(object()) raised AttributeError ('object' has no attribute 'n')."""
    with pytest.raises(ParameterError, match="AnswerAuditor or a SelfAuditor, got list"):
        pair_attack([1, 0, 1])


def test_audit_bound_is_the_lps(table):
    """Why: audit(..., decoder="lstsq", bound=3) ignored the bound silently, and a negative
    bound reached the LP, which called the answers infeasible."""
    schema, df = table
    release = AlphaBeta(schema, 0.9, 0.0).publish(df, seed=1)
    with pytest.raises(ParameterError, match="bound is the LP decoder's .* got bound = 3"):
        audit(release, "s", df, secret_value="yes", bound=3)
    with pytest.raises(ParameterError, match=r"^bound must be non-negative, got -1.0$"):
        audit(release, "s", df, secret_value="yes", decoder="lp", bound=-1.0)
    with pytest.raises(ParameterError, match="bound is the LP decoder's"):
        audit_presence(release, df, prior=0.005, rounds=1, bound=1.0)
    with pytest.raises(ParameterError, match=r"^bound must be finite, got nan$"):
        audit_presence(release, df, prior=0.005, rounds=1, decoder="lp", bound=math.nan)


# ---- Theorem 2.6's range in the presence audit ------------------------------------------
def result(prior: float, interval=(0.9, 1.0), named: int = 30, d=None, gamma=None,
           tuples: int = N, domain: int = 80_000) -> PresenceAuditResult:
    return PresenceAuditResult("lstsq", prior, 256, 10, 7872, named, named, named, interval,
                               0.95, gamma, d, tuples=tuples, domain=domain)


@pytest.mark.parametrize(("prior", "interval", "verdict"), [
    (1 / 200, (0.9, 1.0), "breach"),                         # at n/m: the theorem's range
    (0.001, (2 / 3, 1.0), "breach"),                          # the interval reaches 2/3
    (math.nextafter(1 / 200, 1), (0.9, 1.0), "above-2/3-outside-range"),  # just past n/m
    (0.05, (0.9, 1.0), "above-2/3-outside-range"),           # d = 10·n/m
    (0.5, (0.9, 1.0), "above-2/3-outside-range"),            # 100·n/m
    (1 / 200, (0.6, 1.0), "not-shown"),
    (0.05, (0.6, 1.0), "not-shown"),
])
def test_breach_only_at_a_prior_within_n_over_m(prior, interval, verdict):
    """Why: breach was interval[0] ≥ 2/3 whatever the prior, printed as "a breach in
    Theorem 2.6's sense (above 2/3 at a prior within d)" at a prior 107× d."""
    r = result(prior, interval)
    assert r.theorem_prior == 1 / 200 and r.verdict == verdict
    assert r.breach == (verdict == "breach")
    assert r.above_two_thirds == (verdict != "not-shown")
    assert r.within_theorem_range == (prior <= 1 / 200)
    text = str(r)
    assert ("A breach in Theorem 2.6's sense" in text) == (verdict == "breach")
    if verdict == "above-2/3-outside-range":
        assert f"Posterior above 2/3 at prior {prior:.3g} (outside the theorem's range)" in text
        assert "so this is not one" in text
    assert "n/m = 400/80,000 ≈ 5e-3" in text


def test_the_range_is_n_over_m_of_distinct_tuples_not_d():
    """n counts distinct tuples (the theorem's I is a set): with 19,502 of them in Adult's
    m = 648,023,040 the range is ≈ 3.009e-5, shown rounded down (a prior typed from the
    text stays within), and the release's d = 10·n/m lies outside it."""
    m = 648_023_040
    r = result(19_502 / m, d=10 * 30_162 / m, gamma=0.2, tuples=19_502, domain=m)
    assert r.breach and "n/m = 19,502/648,023,040 ≈ 3.009e-5" in str(r)
    assert result(3.009e-5, tuples=19_502, domain=m).breach
    assert not result(3.01e-5, tuples=19_502, domain=m).within_theorem_range
    outside = result(r.d, d=r.d, gamma=0.2, tuples=19_502, domain=m)
    assert outside.verdict == "above-2/3-outside-range" and not outside.breach
    assert "the release promises ≤ 20.0% at priors ≤ d = 0.000465" in str(outside)
    far = result(0.05, d=r.d, gamma=0.2, tuples=19_502, domain=m)   # the 107× d
    assert "only at priors ≤ d = 0.000465, not at this one" in str(far)
    assert "A breach" not in str(far) and far.verdict == "above-2/3-outside-range"
    assert result(0.01, interval=(math.nan, math.nan), named=0).verdict == "not-shown"


def test_presence_audit_breach_within_range_and_outside_it(table):
    """End to end on a release with β = 0 (every tuple in the view is in the table): at a
    prior of n/m it is a breach in Theorem 2.6's sense; the same release audited at
    10·n/m (the d of (10n/m, γ)-privacy) is above 2/3 outside the theorem's range.
    Why: both were labelled breaches, the second falsely."""
    schema, df = table
    release = AlphaBeta(schema, 0.9, 0.0).publish(df, seed=1)
    within = audit_presence(release, df, prior=N / schema.size, rounds=24, seed=2)
    assert (within.tuples, within.domain) == (N, 80_000) and within.within_theorem_range
    assert within.named >= 12 and within.posterior == 1.0 and within.interval[0] > 2 / 3
    assert within.breach and within.verdict == "breach"
    assert "A breach in Theorem 2.6's sense: posterior above 2/3 at prior 0.005" in str(within)
    outside = audit_presence(release, df, prior=10 * N / schema.size, rounds=4, seed=2)
    assert outside.posterior == 1.0 and outside.above_two_thirds and not outside.breach
    assert outside.verdict == "above-2/3-outside-range"
    assert "(outside the theorem's range)" in str(outside) and "A breach" not in str(outside)


def test_presence_range_counts_distinct_tuples(table):
    """A table that repeats a record has fewer tuples than records; n/m counts tuples."""
    schema, df = table
    doubled = pd.concat([df, df.iloc[:50]], ignore_index=True)
    release = AlphaBeta(schema, 0.9, 0.0).publish(doubled, seed=1, duplicates="set")
    r = audit_presence(release, doubled, prior=0.005, rounds=2, seed=2)
    assert r.tuples == N and r.theorem_prior == N / 80_000


def test_presence_verdict_in_the_cli_json(table, tmp_path, capsys):
    """Why: the CLI's JSON carried breach: true for a posterior above 2/3 at any prior."""
    from privpub.cli import main

    schema, df = table
    AlphaBeta(schema, 0.9, 0.0).publish(df, seed=1).to_parquet(tmp_path / "view.parquet")
    df.to_csv(tmp_path / "data.csv", index=False)
    base = ["attack", str(tmp_path / "view.parquet"), "--data", str(tmp_path / "data.csv"),
            "--presence", "--seed", "2", "--format", "json"]
    for prior, rounds, verdict in (("0.005", "24", "breach"),
                                   ("0.05", "4", "above-2/3-outside-range")):
        assert main(base + ["--prior", prior, "--rounds", rounds]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["verdict"] == verdict and out["breach"] == (verdict == "breach")
        assert out["within_theorem_range"] == (verdict == "breach")
        assert out["above_two_thirds"] and out["theorem_prior"] == 0.005
        assert (out["tuples"], out["domain"]) == (N, 80_000)
