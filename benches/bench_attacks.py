"""Dinur–Nissim decoders against what a capable numpy/scipy user writes.

- Least squares: privpub's normal equations (Cholesky of QᵀQ, rows converted
  in blocks) against ``numpy.linalg.lstsq`` on the same t × n float matrix.
- LP (Theorem 3) at n = 256, 512, 1024 with t = n (ln n)² queries and
  E = √n/10: privpub's ``lp_fit`` (its default solver: the first-order method
  in the metric that tames the all-ones direction, every answer certified
  within E + 10⁻³ in float64, HiGHS only if that finds no feasible point)
  against ``scipy.optimize.linprog(method="highs")`` on the plain formulation
  (A_ub = [Q; −Q]) for n ≤ 512 (the issue measured it past 580 s at 1024), and
  against ``numpy.linalg.lstsq`` at every n. privpub's HiGHS path (one ranged
  row per query through ``scipy.optimize.milp``) is timed at n = 256 beside them.
- Exhaustive weeding (Theorem 2): Rust, parallel over candidates, each
  checked against the first 64 queries one at a time and, if it passes, the
  rest in branch-free chunks of 64 (POPCNT when the CPU has it), against
  numpy filtering all 2^n candidates by the first queries one at a time with
  ``np.bitwise_count`` (each halves them), then the survivors against the
  remaining queries in blocks (a per-query Python loop over all 2^n queries
  was 160× slower than Rust, mostly loop overhead).

Accuracy (fraction of bits recovered) is reported beside each time.
"""

import math

import numpy as np
import pytest
from conftest import full_size  # noqa: I001 (benches/conftest.py, not a package)
from scipy import optimize

from privpub import _core
from privpub.attacks import BoundedNoise, SubsetSumDatabase, default_queries, random_queries
from privpub.attacks.decoders import lp_fit, lstsq_fit


def problem(n: int):
    d = np.random.default_rng(0).integers(0, 2, n).astype(bool)
    E = math.sqrt(n) / 10
    db = SubsetSumDatabase(d, BoundedNoise(E), seed=1)
    q = random_queries(n, default_queries(n), 2)
    return d, E, q, db.query(q)


@pytest.fixture(scope="module")
def lstsq_problem(request):
    return problem(1024 if full_size(request.config) else 64)


def report(bench_report, label, d, c):
    bench_report.append(f"{label} (n = {len(d)}): {np.mean((c > 0.5) == d):.4f} of bits "
                        f"recovered")


@pytest.mark.benchmark(group="least squares decoder")
def test_lstsq_privpub(benchmark, lstsq_problem, bench_report):
    d, E, q, a = lstsq_problem
    benchmark.extra_info["role"] = "privpub"
    c = benchmark.pedantic(lambda: lstsq_fit(q, a), rounds=3)
    report(bench_report, "lstsq privpub", d, c)
    assert np.mean((c > 0.5) == d) >= 0.99


def numpy_lstsq(benchmark, problem, bench_report, rounds: int) -> None:
    """The baseline: numpy's SVD-based lstsq on the float t × n matrix, timed and scored."""
    d, E, q, a = problem
    benchmark.extra_info["role"] = "baseline"
    c = benchmark.pedantic(lambda: np.linalg.lstsq(q.astype(np.float64), a, rcond=None)[0],
                           rounds=rounds)
    report(bench_report, "lstsq numpy", d, c)
    assert np.mean((c > 0.5) == d) >= 0.99


@pytest.mark.benchmark(group="least squares decoder")
def test_lstsq_numpy(benchmark, lstsq_problem, bench_report):
    numpy_lstsq(benchmark, lstsq_problem, bench_report, rounds=3)


def plain_linprog(q, a, E):
    """The LP as a scipy user writes it: A_ub = [Q; −Q], the box as bounds."""
    Q = q.astype(np.float64)
    return optimize.linprog(np.zeros(Q.shape[1]), A_ub=np.vstack([Q, -Q]),
                            b_ub=np.concatenate([a + E, E - a]), bounds=(0, 1),
                            method="highs").x


LP_SIZES = (256, 512, 1024)
#: Past this n scipy's plain linprog takes minutes to hours (over 580 s at 1024).
LINPROG_MAX_N = 512


@pytest.fixture(scope="module", params=LP_SIZES)
def lp_problem(request):
    if not full_size(request.config) and request.param != LP_SIZES[0]:
        pytest.skip("the LP sizes past the first run only when timed at full size")
    return problem(request.param if full_size(request.config) else 48)


def lp_privpub(benchmark, lp_problem, bench_report, against):
    d, E, q, a = lp_problem
    benchmark.group = f"LP decoder (Theorem 3), n = {len(d)}: vs {against}"
    benchmark.extra_info["role"] = "privpub"
    c, note = benchmark.pedantic(lambda: lp_fit(q, a, E), rounds=1)
    assert note == ""
    excess = np.max(np.abs(q.astype(np.float64) @ c - a)) - E
    report(bench_report, f"LP privpub (largest excess over E = {E:.3g}: {excess:.2g})", d, c)
    assert np.mean((c > 0.5) == d) >= 0.99


def test_lp_privpub_vs_linprog(benchmark, lp_problem, bench_report):
    if len(lp_problem[0]) > LINPROG_MAX_N:
        pytest.skip(f"scipy linprog is not run past n = {LINPROG_MAX_N}")
    lp_privpub(benchmark, lp_problem, bench_report, "scipy linprog")


def test_lp_scipy_plain(benchmark, lp_problem, bench_report):
    d, E, q, a = lp_problem
    if len(d) > LINPROG_MAX_N:
        pytest.skip(f"scipy linprog is not run past n = {LINPROG_MAX_N}")
    benchmark.group = f"LP decoder (Theorem 3), n = {len(d)}: vs scipy linprog"
    benchmark.extra_info["role"] = "baseline"
    c = benchmark.pedantic(lambda: plain_linprog(q, a, E), rounds=1)
    report(bench_report, "LP scipy linprog plain", d, c)
    assert np.mean((c > 0.5) == d) >= 0.99


def test_lp_privpub_vs_lstsq(benchmark, lp_problem, bench_report):
    lp_privpub(benchmark, lp_problem, bench_report, "numpy lstsq")


def test_lp_numpy_lstsq(benchmark, lp_problem, bench_report):
    benchmark.group = f"LP decoder (Theorem 3), n = {len(lp_problem[0])}: vs numpy lstsq"
    numpy_lstsq(benchmark, lp_problem, bench_report, rounds=1)


def test_lp_privpub_highs(benchmark, lp_problem, bench_report):
    """privpub's exact simplex path, reported beside (not paired): n = 256 only."""
    d, E, q, a = lp_problem
    if len(d) > LP_SIZES[0]:
        pytest.skip("the simplex path is timed at the first size only")
    c, note = benchmark.pedantic(lambda: lp_fit(q, a, E, solver="highs"), rounds=1)
    report(bench_report, "LP privpub HiGHS (ranged rows)", d, c)
    assert note == "" and np.mean((c > 0.5) == d) >= 0.99


def numpy_weed(n, masks, answers, bound, head=64, block=1 << 14):
    """Filter all 2^n candidates by the first ``head`` queries one at a time (each
    halves them), then test the few survivors against the rest in blocks."""
    alive = np.arange(1 << n, dtype=np.uint64)
    for q, a in zip(masks[:head], answers[:head], strict=True):
        alive = alive[np.abs(np.bitwise_count(alive & q).astype(np.float64) - a) <= bound]
    for i in range(head, len(masks), block):
        if alive.size == 0:
            break
        sums = np.bitwise_count(alive[:, None] & masks[None, i:i + block]).astype(np.float64)
        alive = alive[np.all(np.abs(sums - answers[i:i + block]) <= bound, axis=1)]
    return int(alive[0]) if alive.size else None


@pytest.fixture(scope="module")
def weeding(request):
    n = 20 if full_size(request.config) else 12
    d = np.random.default_rng(0).integers(0, 2, n).astype(bool)
    E = math.sqrt(n) / 10
    masks = (np.arange(1 << n, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
             ) & np.uint64((1 << n) - 1)
    q = ((masks[:, None] >> np.arange(n, dtype=np.uint64)) & np.uint64(1)).astype(bool)
    answers = SubsetSumDatabase(d, BoundedNoise(E), seed=1).query(q)
    truth = int(np.sum(d.astype(np.uint64) << np.arange(n, dtype=np.uint64)))
    return n, masks, answers, E, truth


@pytest.mark.benchmark(group="exhaustive weeding (Theorem 2)")
def test_weed_rust(benchmark, weeding):
    n, masks, answers, E, truth = weeding
    benchmark.extra_info["role"] = "privpub"
    assert benchmark(lambda: _core.attacks.weed(n, masks, answers, E)) == truth


@pytest.mark.benchmark(group="exhaustive weeding (Theorem 2)")
def test_weed_numpy(benchmark, weeding):
    n, masks, answers, E, truth = weeding
    benchmark.extra_info["role"] = "baseline"
    assert benchmark(lambda: numpy_weed(n, masks, answers, E)) == truth
