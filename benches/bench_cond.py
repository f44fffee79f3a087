"""ConD (variable elimination in Rust) against the brute force it replaces.

A width-2 pattern over k attributes: x_i < x_{i+1} + 2 and x_i != x_{i+2}
(a path with chords, so bags of three attributes). Where brute force is
feasible (4 attributes × 60 values, m = 12,960,000: evaluate the condition on
every tuple of D with duckdb, the direct method) both run in the same run;
the large case, 10 attributes × 1,000 values (m = 10^30), is timed alone.
"""

import pytest
from conftest import full_size  # noqa: I001 (benches/conftest.py, not a package)

import privpub
from privpub import col
from privpub.tables.domaincount import count


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


@pytest.mark.benchmark(group="ConD vs brute force: 4 × 60 values (m = 12,960,000)")
def test_cond_small_brute_force(benchmark):
    schema, cond = width_two(4, 60)
    benchmark.extra_info["role"] = "baseline"
    frame = schema.projection(schema.names)  # all of D
    condition = privpub.Condition(schema, cond)
    n = benchmark(lambda: condition.count(frame))
    assert n == count(schema, cond, method="cond").value


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
