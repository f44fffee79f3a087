"""Confidence intervals that cover (issue 22): every αβ and FRAPP estimate's
interval holds at its level for every true count.

- Exact checks against brute force on tiny domains: the pmf of Q(V) by
  enumerating every outcome of the mechanism's independent coins, the test
  inversion done by hand, and the exact coverage at every true count (and,
  under duplicates="records", at every split of the records into distinct
  tuples); power: the interval shrunk by 20% about its midpoint falls below
  the level somewhere.
- Statistical coverage: Q(V) drawn from its exact law (what publish does,
  cheap), 2,000 seeded runs at true counts 0, 1, 5, 50, 500 for α (FRAPP:
  γ_f) in {0.1, 0.5, 0.9}, set and records: the nominal 95% interval covers
  at least 94% (a binomial proportion of 2,000 has sd 0.49% at 95%, so 94%
  is 2 sd below; conservative and discrete intervals cover more); power: 20%
  narrower fails at the two large counts, where the law is near-normal.
"""

import itertools
import math
import warnings

import numpy as np
import pytest
from scipy import stats

import privpub
from privpub.tables import confidence
from privpub.tables.confidence import HoeffdingLaw, KeepLaw, SplitLaw, sum_tails

LEVEL = 0.95
RUNS = 2000
COUNTS = (0, 1, 5, 50, 500)


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", privpub.UsefulnessWarning)
        yield


def enumerated_pmf(probs):
    """The pmf of a sum of independent Bernoulli(probs) by enumerating every
    outcome of the coins (at most a few thousand here)."""
    probs = np.asarray(probs, dtype=float)
    n = len(probs)
    bits = ((np.arange(2 ** n)[:, None] >> np.arange(n)) & 1).astype(bool)
    weights = np.prod(np.where(bits, probs, 1 - probs), axis=1)
    return np.bincount(bits.sum(axis=1), weights=weights, minlength=n + 1)


def by_hand(pmfs, k, level):
    """Test inversion by hand: the least and largest count c whose pmf
    (pmfs[c]) leaves both tails at k above (1 − level)/2."""
    tail = (1 - level) / 2
    accepted = [c for c, pmf in enumerate(pmfs)
                if pmf[k:].sum() > tail and pmf[:k + 1].sum() > tail]
    return (min(accepted), max(accepted)) if accepted else None


def coverage(pmf, lo, hi, c):
    """Exact probability that [lo(k), hi(k)] holds c when Q(V) = k has ``pmf``."""
    return sum(pmf[k] for k in range(len(pmf)) if lo[k] <= c <= hi[k])


def narrower(lo, hi, factor=0.8):
    mid, half = (lo + hi) / 2, (hi - lo) / 2
    return mid - factor * half, mid + factor * half


# ---- the numerics ----------------------------------------------------------------------
def test_sum_tails_are_upper_bounds_tight_to_brute_force():
    rng = np.random.default_rng(0)
    problems = 200
    trials = rng.integers(0, 5, size=(3, problems)).astype(float)
    probs = rng.random((3, problems))
    probs[:, :10] = rng.choice([0.0, 1.0], size=(3, 10))  # point masses
    k = rng.integers(-1, 14, size=problems).astype(float)
    for summands in (2, 3):
        up, low = sum_tails(k, trials[:summands], probs[:summands])
        for i in range(problems):
            coins = np.concatenate([np.full(int(trials[j, i]), probs[j, i])
                                    for j in range(summands)])
            pmf = np.append(enumerated_pmf(coins), 0.0)
            ki = int(k[i])
            exact_up = pmf[max(ki, 0):].sum()
            exact_low = pmf[:ki + 1].sum() if ki >= 0 else 0.0
            assert exact_up - 1e-12 <= up[i] <= exact_up + 1e-8, (summands, i)
            assert exact_low - 1e-12 <= low[i] <= exact_low + 1e-8, (summands, i)


def test_sum_tails_at_scale_and_with_huge_trial_counts():
    # Windows long enough for the FFT convolution, checked against scipy's
    # convolution of full pmfs; and a noise term of 10^20 trials (n_D of a
    # domain near 2^67) against its Poisson limit.
    n = np.array([[400.0], [900.0], [2000.0]])
    p = np.array([[0.5], [0.3], [0.2]])
    pmf = np.array([1.0])
    for ni, pi in zip(n[:, 0], p[:, 0], strict=True):
        pmf = np.convolve(pmf, stats.binom.pmf(np.arange(ni + 1), ni, pi))
    for k in (560.0, 870.0, 1000.0):
        up, low = sum_tails(np.array([k]), n, p)
        assert up[0] == pytest.approx(pmf[int(k):].sum(), abs=1e-9)
        assert low[0] == pytest.approx(pmf[:int(k) + 1].sum(), abs=1e-9)
    up, _ = sum_tails(np.array([1050.0]), np.array([[30.0], [1e20]]),
                      np.array([[0.5], [1e-17]]))
    signal = stats.binom.pmf(np.arange(31), 30, 0.5)
    assert up[0] == pytest.approx(sum(signal[j] * stats.poisson.sf(1049 - j, 1000)
                                      for j in range(31)), rel=1e-6)


# ---- exact checks against brute force -----------------------------------------------------
#: (keep, background, total, top): αβ set (α+β, β, n_D, min(n, n_D)) and FRAPP
#: (p_in, p_out, n, n) on tiny domains, α from 0.05 to 0.95.
EXACT_LAWS = [(0.05 + 0.02, 0.02, 6, 6), (0.5 + 0.1, 0.1, 7, 5), (0.95 + 0.04, 0.04, 6, 6),
              (0.3 + 0.2, 0.2, 5, 5), (0.7 + 0.0, 0.0, 6, 6)]
m_frapp, n_d = 20, 4
for g in (0.05, 0.5, 0.95):
    o = (1 - g) / (m_frapp - 1)
    EXACT_LAWS.append((g + o * (n_d - 1), o * n_d, 8, 8))


@pytest.mark.parametrize("keep, background, total, top", EXACT_LAWS)
def test_exact_interval_is_the_test_inversion_and_covers_every_count(keep, background, total,
                                                                     top):
    pmfs = [enumerated_pmf([keep] * c + [background] * (total - c)) for c in range(top + 1)]
    ks = np.arange(total + 1)
    shortfall = []
    for level in (0.8, 0.95):
        law = KeepLaw(ks, keep, background, total, top)
        assert law.method == confidence.EXACT
        lo, hi = law.interval(level)
        for k in ks:
            hand = by_hand(pmfs, k, level)
            # Nothing accepted (an n_V no count explains): the end of [0, top].
            assert (lo[k], hi[k]) == (hand if hand else (lo[k], hi[k])), (level, k)
        for c in range(top + 1):
            assert coverage(pmfs[c], lo, hi, c) >= level - 1e-12, (level, c)
        slo, shi = narrower(lo, hi)
        shortfall.append(min(coverage(pmfs[c], slo, shi, c) - level for c in range(top + 1)))
    assert min(shortfall) < 0  # power: 20% narrower falls below the level somewhere


@pytest.mark.parametrize("alpha, beta", [(0.05, 0.02), (0.6, 0.15), (0.9, 0.05), (0.3, 0.3)])
def test_records_interval_covers_every_count_and_every_split(alpha, beta):
    """duplicates="records": Q(V) ~ Bin(q, α+β) + Bin(c − q, α) + Bin(n_D − q, β)
    for every q the release allows (q ≥ max(min(c, 1), c − E), q ≤ min(c, n_D)):
    coverage at least the level for each (c, q), by enumeration."""
    total, extra, n = 4, 3, 7
    top = min(n, total + extra)
    ks = np.arange(total + extra + 1)
    shortfall = []
    for level in (0.8, 0.95):
        law = KeepLaw(ks, alpha + beta, beta, total, top, extra=extra)
        assert law.method == confidence.CONSERVATIVE_RECORDS
        lo, hi = law.interval(level)
        slo, shi = narrower(lo, hi)
        worst = 1.0
        for c in range(top + 1):
            for q in range(max(min(c, 1), c - extra), min(c, total) + 1):
                pmf = enumerated_pmf([alpha + beta] * q + [alpha] * (c - q)
                                     + [beta] * (total - q))
                pmf = np.pad(pmf, (0, len(ks) - len(pmf)))
                assert coverage(pmf, lo, hi, c) >= level - 1e-12, (level, c, q)
                worst = min(worst, coverage(pmf, slo, shi, c) - level)
        shortfall.append(worst)
    assert min(shortfall) < 0


def test_the_records_tail_is_largest_at_the_least_split_where_it_rejects():
    """The lemma behind the records interval: for k ≥ ⌈μ − keep⌉ + 2 the upper
    tail P(N_q ≥ k) is largest at the least q, and for k ≤ ⌊μ − keep⌋ so is the
    lower tail P(N_q ≤ k) (μ = α·c + β·n_D, the mean for every q)."""
    rng = np.random.default_rng(3)
    checked = 0
    for _ in range(60):
        alpha, beta = rng.uniform(0.02, 0.6), rng.uniform(0.0, 0.35)
        total, c = int(rng.integers(1, 6)), int(rng.integers(2, 8))
        qs = range(1, min(c, total) + 1)
        pmfs = {q: enumerated_pmf([alpha + beta] * q + [alpha] * (c - q)
                                  + [beta] * (total - q)) for q in qs}
        size = c + total + 1
        pmfs = {q: np.pad(p, (0, size - len(p))) for q, p in pmfs.items()}
        mean_x = alpha * c + beta * total - alpha - beta
        for k in range(size):
            if k >= math.ceil(mean_x) + 2:
                tails = [pmfs[q][k:].sum() for q in qs]
                assert max(tails) <= tails[0] + 1e-12
                checked += 1
            if k <= math.floor(mean_x):
                tails = [pmfs[q][:k + 1].sum() for q in qs]
                assert max(tails) <= tails[0] + 1e-12
                checked += 1
    assert checked > 200


def test_hoeffding_comparison_bounds_poisson_binomial_tails():
    """Hoeffding (1956): beyond mean ± 1 a Poisson binomial's tails are at most
    those of the binomial with its trials and mean (the source interval's basis)."""
    rng = np.random.default_rng(4)
    for _ in range(200):
        probs = rng.uniform(0, 1, size=int(rng.integers(1, 11))) ** rng.uniform(0.3, 3)
        pmf = enumerated_pmf(probs)
        n, mean = len(probs), probs.sum()
        for k in range(n + 1):
            if k >= mean + 1:
                assert pmf[k:].sum() <= stats.binom.sf(k - 1, n, mean / n) + 1e-12
            if k <= mean - 1:
                assert pmf[:k + 1].sum() <= stats.binom.cdf(k, n, mean / n) + 1e-12


def test_source_interval_covers_every_set_of_tuples():
    """αβ with a source: β(t) differs by tuple, so Q(V) depends on which c of the
    n_D tuples are in I: coverage at least the level for every such set."""
    alpha, betas = 0.5, np.array([0.02, 0.05, 0.1, 0.2, 0.3])
    total = len(betas)
    ks = np.arange(total + 1)
    law = HoeffdingLaw(ks, alpha, betas.sum(), float(total), total)
    assert law.method == confidence.CONSERVATIVE_SOURCE
    lo, hi = law.interval(LEVEL)
    for c in range(total + 1):
        for chosen in itertools.combinations(range(total), c):
            inside = np.isin(np.arange(total), chosen)
            pmf = enumerated_pmf(np.where(inside, alpha + betas, betas))
            assert coverage(pmf, lo, hi, c) >= LEVEL - 1e-12, (c, chosen)


def test_several_views_interval_covers_every_pair_of_counts():
    """A later αβ view: two independent parts (inside and outside V'), each a
    single-view law with (α, β) → (s − p, p): the Bonferroni sum covers every
    (c_inside, c_outside)."""
    s, p_prev, p_fresh = 0.6, 0.45, 0.08
    inside_total, outside_total = 3, 4
    ka, kb = np.meshgrid(np.arange(inside_total + 1), np.arange(outside_total + 1),
                         indexing="ij")
    law = SplitLaw(KeepLaw(ka, s, p_prev, inside_total, inside_total),
                   KeepLaw(kb, s, p_fresh, outside_total, outside_total),
                   inside_total + outside_total)
    assert law.method == confidence.CONSERVATIVE_VIEWS
    lo, hi = law.interval(LEVEL)
    for ca in range(inside_total + 1):
        pa = enumerated_pmf([s] * ca + [p_prev] * (inside_total - ca))
        for cb in range(outside_total + 1):
            pb = enumerated_pmf([s] * cb + [p_fresh] * (outside_total - cb))
            joint = np.outer(pa, pb)
            covered = joint[(lo <= ca + cb) & (ca + cb <= hi)].sum()
            assert covered >= LEVEL - 1e-12, (ca, cb)


# ---- statistical coverage, Q(V) drawn from its exact law ----------------------------------
def _draws(mech, duplicates, a, c, rng):
    """RUNS draws of Q(V) at true count c, and the law the estimate inverts.

    αβ (β = 0.05, n_D = 1,000): set, n = 1,000 distinct tuples; records,
    n = 2,000 records of 600 distinct tuples (E = 1,400), the query's c records
    on ⌈c/3⌉ tuples. FRAPP (γ_f = a, m = 5,000, n_D = 1,000, n = 1,000)."""
    if mech == "alphabeta":
        b, n_d = 0.05, 1000
        if duplicates == "set":
            k = rng.binomial(c, a + b, RUNS) + rng.binomial(n_d - c, b, RUNS)
            return k, KeepLaw(k, a + b, b, n_d, min(1000, n_d))
        extra = 2000 - 600
        q = -(-c // 3)
        k = (rng.binomial(q, a + b, RUNS) + rng.binomial(c - q, a, RUNS)
             + rng.binomial(n_d - q, b, RUNS))
        return k, KeepLaw(k, a + b, b, n_d, min(2000, n_d + extra), extra=extra)
    m, n_d, n = 5000, 1000, 1000
    o = (1 - a) / (m - 1)
    p_in, p_out = a + o * (n_d - 1), o * n_d
    k = rng.binomial(c, p_in, RUNS) + rng.binomial(n - c, p_out, RUNS)
    return k, KeepLaw(k, p_in, p_out, n, n if duplicates == "records" else min(n, n_d))


@pytest.mark.parametrize("a", [0.1, 0.5, 0.9])
@pytest.mark.parametrize("duplicates", ["set", "records"])
@pytest.mark.parametrize("mech", ["alphabeta", "frapp"])
def test_coverage_at_every_count_from_the_exact_law(mech, duplicates, a):
    covered, narrow = {}, {}
    for c in COUNTS:
        rng = np.random.default_rng([int(a * 10), c, duplicates == "set", mech == "frapp"])
        k, law = _draws(mech, duplicates, a, c, rng)
        lo, hi = law.interval(LEVEL)
        covered[c] = np.mean((lo <= c) & (c <= hi))
        slo, shi = narrower(lo, hi)
        narrow[c] = np.mean((slo <= c) & (c <= shi))
    assert all(v >= 0.94 for v in covered.values()), covered
    # Power: the same check rejects an interval 20% too narrow.
    assert narrow[50] < 0.94 and narrow[500] < 0.94, narrow
