"""The β-step (Algorithm 2) against the same exact algorithm in vectorised numpy.

Baseline: what a capable numpy user writes for an exact β-step — draw
r ~ Binomial(m − |I|, β), draw uniform codes with ``Generator.integers``,
sort + adjacent-difference dedupe (not ``np.unique``, see DESIGN.md), remove
I with ``searchsorted``, top up until at least r remain, then keep a uniform
r-subset. privpub: geometric skipping over ranks in Rust on both cores.
"""

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from conftest import full_size  # noqa: I001 (benches/conftest.py, not a package)

import privpub
from privpub import _core
from privpub.tables.records import distinct_sorted, sorted_rows


def numpy_beta_step(rng: np.random.Generator, m: int, beta: float, excluded: np.ndarray):
    r = rng.binomial(m - len(excluded), beta)
    chosen = np.empty(0, dtype=np.uint64)
    while len(chosen) < r:
        draw = rng.integers(0, m, size=int((r - len(chosen)) * 1.02) + 64, dtype=np.uint64)
        pool = np.sort(np.concatenate([chosen, draw]))
        pool = pool[np.concatenate(([True], pool[1:] != pool[:-1]))]
        at = np.minimum(np.searchsorted(excluded, pool), max(len(excluded) - 1, 0))
        chosen = pool[excluded[at] != pool] if len(excluded) else pool
    if len(chosen) > r:
        chosen = np.sort(rng.choice(chosen, r, replace=False))
    return chosen


@pytest.fixture(scope="module")
def adult():
    df, schema = privpub.datasets.load_adult()
    mech = privpub.AlphaBeta.for_privacy(schema, n=len(df), gamma=0.2, k=10)
    excluded = distinct_sorted(sorted_rows(schema.encode(df)))
    return schema.size, mech.beta, excluded


@pytest.mark.benchmark(group="beta-step: Adult (≈1.5M noise tuples)")
def test_beta_step_adult_privpub(benchmark, adult):
    m, beta, excluded = adult
    benchmark.extra_info["role"] = "privpub"
    out = benchmark(lambda: _core.beta_step(bytes(32), m, beta, excluded))
    assert abs(len(out) - beta * (m - len(excluded))) < 5 * np.sqrt(beta * m)


@pytest.mark.benchmark(group="beta-step: Adult (≈1.5M noise tuples)")
def test_beta_step_adult_numpy(benchmark, adult):
    m, beta, excluded = adult
    benchmark.extra_info["role"] = "baseline"
    rng = np.random.default_rng(0)
    out = benchmark(lambda: numpy_beta_step(rng, m, beta, excluded.reshape(-1)))
    assert abs(len(out) - beta * (m - len(excluded))) < 5 * np.sqrt(beta * m)
    assert np.all(np.diff(out.astype(np.int64)) > 0)


def _scale(config):
    """(m, β) for ≈10^8 noise tuples when benchmarking, ≈10^6 as a smoke test."""
    target = 1e8 if full_size(config) else 1e6
    m = 4 * 10**9
    return m, target / m


@pytest.mark.benchmark(group="beta-step: 10^8 noise tuples")
def test_beta_step_1e8_privpub(benchmark, request):
    m, beta = _scale(request.config)
    benchmark.extra_info["role"] = "privpub"
    empty = np.zeros((0, 1), dtype=np.uint64)
    out = benchmark.pedantic(lambda: _core.beta_step(bytes(32), m, beta, empty), rounds=2)
    assert abs(len(out) - beta * m) < 5 * np.sqrt(beta * m)


@pytest.mark.benchmark(group="beta-step: 10^8 noise tuples")
def test_beta_step_1e8_numpy(benchmark, request):
    m, beta = _scale(request.config)
    benchmark.extra_info["role"] = "baseline"
    rng = np.random.default_rng(0)
    empty = np.zeros(0, dtype=np.uint64)
    out = benchmark.pedantic(lambda: numpy_beta_step(rng, m, beta, empty), rounds=2)
    assert abs(len(out) - beta * m) < 5 * np.sqrt(beta * m)


PEAK_SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    from privpub import _core

    def status(key):
        with open("/proc/self/status") as fh:
            return next(int(line.split()[1]) * 1024 for line in fh if line.startswith(key))

    m, beta = int(sys.argv[1]), float(sys.argv[2])
    empty = np.zeros((0, 1), dtype=np.uint64)
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")  # reset the peak-RSS mark (VmHWM) to the current RSS
    before = status("VmRSS:")
    out = _core.beta_step(bytes(32), m, beta, empty)
    print(status("VmHWM:") - before, out.nbytes)
""")


def test_beta_step_peak_memory_is_within_twice_the_output(request, capsys):
    """Peak RSS growth of the β-step, in a fresh process, against the output size."""
    m, beta = _scale(request.config)
    result = subprocess.run([sys.executable, "-c", PEAK_SCRIPT, str(m), str(beta)],
                            capture_output=True, text=True, check=True)
    grown, output = map(int, result.stdout.split())
    with capsys.disabled():
        print(f"\nβ-step peak memory: {grown / 2**20:.0f} MiB for {output / 2**20:.0f} MiB "
              f"of codes ({grown / output:.2f}x)")
    # Outputs up to ~32 MiB take the one-pass path (pieces, then one copy): allow
    # that much on top; the 10^8-tuple run takes the two-pass path.
    assert output <= grown <= 2 * output + 32 * 2**20
