"""ConD (variable elimination in Rust) against the brute force it replaces.

A width-2 pattern over k attributes: x_i < x_{i+1} + 2 and x_i != x_{i+2}
(a path with chords, so bags of three attributes). Where brute force is
feasible (4 attributes × 60 values, m = 12,960,000) both run in the same run:
the baseline is what a numpy user writes, the condition broadcast over one
axis per attribute (no frame, no SQL engine) and the booleans summed. The
large case, 10 attributes × 1,000 values (m = 10^30), is timed alone. A
12-attribute chain a0 < a1 < … < a11 over 50 values each is counted against
the transfer-matrix DP a numpy user would write (exact Python ints).
"""

import math

import numpy as np
import pytest
from conftest import full_size  # noqa: I001 (benches/conftest.py, not a package)

import privpub
from privpub import col, count_domain
from privpub.counting.domaincount import count


def width_two(k: int, r: int):
    """The schema and the condition as an expression (each count parses it anew,
    so no cached result is timed)."""
    schema = privpub.Schema([privpub.IntRange(f"x{i}", 0, r - 1) for i in range(k)])
    cond = None
    for i in range(k - 1):
        term = col(f"x{i}") < col(f"x{i + 1}") + 2
        if i + 2 < k:
            term = term & (col(f"x{i}") != col(f"x{i + 2}"))
        cond = term if cond is None else cond & term
    return schema, cond


@pytest.mark.benchmark(group="ConD vs brute force: 4 × 60 values (m = 12,960,000)")
def test_cond_small_privpub(benchmark):
    schema, cond = width_two(4, 60)
    benchmark.extra_info["role"] = "privpub"
    result = benchmark(lambda: count(schema, cond, method="cond"))
    assert result.width == 2
    assert result.value == count(schema, cond, method="direct").value


def broadcast_count(k: int, r: int) -> int:
    """The width-2 condition on every tuple of D by numpy broadcasting: one
    axis per attribute, each atom a comparison of two axes, a boolean AND
    over the full grid, then a sum."""
    x = [np.arange(r).reshape([-1 if i == j else 1 for i in range(k)]) for j in range(k)]
    grid = np.ones([r] * k, dtype=bool)
    for i in range(k - 1):
        grid &= x[i] < x[i + 1] + 2
        if i + 2 < k:
            grid &= x[i] != x[i + 2]
    return int(np.count_nonzero(grid))


@pytest.mark.benchmark(group="ConD vs brute force: 4 × 60 values (m = 12,960,000)")
def test_cond_small_brute_force(benchmark):
    schema, cond = width_two(4, 60)
    benchmark.extra_info["role"] = "baseline"
    n = benchmark(lambda: broadcast_count(4, 60))
    assert n == count(schema, cond, method="cond").value


def chain(k: int, r: int):
    schema = privpub.Schema([privpub.IntRange(f"a{i}", 0, r - 1) for i in range(k)])
    return schema, " and ".join(f"a{i} < a{i + 1}" for i in range(k - 1))


def chain_transfer_matrix(k: int, r: int) -> int:
    """a0 < a1 < … < a(k−1) by a transfer-matrix DP: ways[v] = chains ending
    at value v, k − 1 steps of a strict prefix sum (exact Python ints)."""
    ways = np.ones(r, dtype=object)
    for _ in range(k - 1):
        ways = np.concatenate(([0], np.cumsum(ways)[:-1]))
    return int(ways.sum())


@pytest.mark.benchmark(group="count_domain: 12-attribute chain, 50 values")
def test_chain_privpub(benchmark):
    schema, sql = chain(12, 50)
    benchmark.extra_info["role"] = "privpub"
    # A new schema object each round would defeat nothing: truth tables are cached
    # per schema by design, so the first (cold) call is timed separately below.
    n = benchmark(lambda: count_domain(schema, sql))
    assert n == math.comb(50, 12)


@pytest.mark.benchmark(group="count_domain: 12-attribute chain, 50 values")
def test_chain_transfer_matrix(benchmark):
    benchmark.extra_info["role"] = "baseline"
    assert benchmark(lambda: chain_transfer_matrix(12, 50)) == math.comb(50, 12)


@pytest.mark.benchmark(group="count_domain: 12-attribute chain, 50 values, cold tables")
def test_chain_privpub_cold(benchmark):
    from privpub.counting import evaluation
    schema, sql = chain(12, 50)
    benchmark.extra_info["role"] = "privpub"

    def cold():
        evaluation.truth_tables.cache_clear()
        return count_domain(schema, sql)
    assert benchmark(cold) == math.comb(50, 12)


@pytest.mark.benchmark(group="ConD: 10 × 1,000 values (m = 10^30), width 2")
def test_cond_large(benchmark, request):
    r = 1000 if full_size(request.config) else 60
    schema, cond = width_two(10, r)
    result = benchmark.pedantic(lambda: count(schema, cond, method="cond"), rounds=1)
    assert result.width == 2 and result.value > 0
    if r == 60:  # cross-check against a DP over the chain with exact ints
        assert result.value == _chain_dp(10, r)


def _chain_dp(k: int, r: int) -> int:
    """Exact count by dynamic programming over pairs (x_i, x_{i+1})."""
    f = {(a, b): 1 for a in range(r) for b in range(r) if a < b + 2}
    for _ in range(k - 2):
        g = {}
        for (a, b), v in f.items():
            for c in range(r):
                if b < c + 2 and a != c:
                    g[(b, c)] = g.get((b, c), 0) + v
        f = g
    return sum(f.values())
