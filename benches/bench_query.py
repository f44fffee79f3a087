"""A 100,000-value IN list estimated on a 1,000,000-row αβ view (issue 22).

privpub: ``view.estimate("id IN (…)")`` — the SQL text read by the one
grammar (sqlparser's tokenizer, with a long run of integers read off the text
where that reads the same: rust/src/querytext/runs.rs), the list an int64
array, Q(D) from a truth table, Q(V) a Rust pass over the view's codes — and
the same through the expression API, ``col("id").isin(array)``.
Before issue 22 the list cost quadratic time: 1,000 values took 6 s and
10,000 did not finish in 120 s.

Baseline: what a numpy user writes with the view's id column in hand (read
once, outside the timing): the list parsed by ``numpy.fromstring`` (text) or
taken as it is (array), ``np.isin`` over the rows for n_V, the distinct
listed values inside the domain times the other attributes' sizes for n_D,
and the estimator (n_V − β n_D) / α. DuckDB over the same frame
(``id IN (SELECT v FROM values)``) was slower than numpy here, so numpy is
the baseline.
"""

import numpy as np
import pandas as pd
import pytest
from conftest import full_size  # noqa: I001 (benches/conftest.py, not a package)

import privpub
from privpub import col
from privpub.counting import evaluation

IDS, OTHER, VALUES = 1_000_000, 10, 100_000


@pytest.fixture(scope="module")
def setup(request):
    rows = 1_000_000 if full_size(request.config) else 100_000
    schema = privpub.Schema([privpub.IntRange("id", 0, IDS - 1),
                             privpub.IntRange("b", 0, OTHER - 1)])
    rng = np.random.default_rng(0)
    data = pd.DataFrame({"id": rng.choice(IDS, rows, replace=False),
                         "b": rng.integers(0, OTHER, rows)})
    view = privpub.AlphaBeta(schema, alpha=0.5, beta=0.05 * rows / schema.size).publish(
        data, seed=1)
    values = rng.choice(IDS, VALUES, replace=False)
    text = "id IN (" + ", ".join(map(str, values)) + ")"
    ids = schema.digits(view.codes)[0] + schema["id"].lo  # the column a numpy user reads
    return view, values, text, ids


def fresh(call):
    """Time a call without privpub's cache of truth tables (each user query is new)."""
    evaluation.truth_tables.cache_clear()
    return call()


def numpy_estimate(view, values, ids) -> tuple[int, int, float]:
    a, b = view.parameters["alpha"], view.parameters["beta"]
    n_view = int(np.isin(ids, values).sum())
    inside = values[(values >= 0) & (values < IDS)]
    seen = np.zeros(IDS, dtype=bool)  # distinct values by a mask (np.unique hashes: 10x slower)
    seen[inside] = True
    n_domain = int(seen.sum()) * OTHER
    return n_view, n_domain, (n_view - b * n_domain) / a


def check(est, view, values, ids):
    n_view, n_domain, _ = numpy_estimate(view, values, ids)
    assert (est.n_view, est.n_domain) == (n_view, n_domain)


@pytest.mark.benchmark(group="IN list of 100,000 values as SQL text: view.estimate")
def test_in_list_text_privpub(benchmark, setup):
    view, values, text, ids = setup
    benchmark.extra_info["role"] = "privpub"
    est = benchmark(lambda: fresh(lambda: view.estimate(text)))
    check(est, view, values, ids)


@pytest.mark.benchmark(group="IN list of 100,000 values as SQL text: view.estimate")
def test_in_list_text_numpy(benchmark, setup):
    view, values, text, ids = setup
    benchmark.extra_info["role"] = "baseline"

    def run():
        listed = np.fromstring(text[text.index("(") + 1:-1], dtype=np.int64, sep=",")
        return numpy_estimate(view, listed, ids)

    n_view, n_domain, _ = benchmark(run)
    assert (n_view, n_domain) == numpy_estimate(view, values, ids)[:2]


@pytest.mark.benchmark(group="IN list of 100,000 values as an array: view.estimate")
def test_in_list_array_privpub(benchmark, setup):
    view, values, text, ids = setup
    benchmark.extra_info["role"] = "privpub"
    est = benchmark(lambda: fresh(lambda: view.estimate(col("id").isin(values))))
    check(est, view, values, ids)


@pytest.mark.benchmark(group="IN list of 100,000 values as an array: view.estimate")
def test_in_list_array_numpy(benchmark, setup):
    view, values, text, ids = setup
    benchmark.extra_info["role"] = "baseline"
    n_view, n_domain, _ = benchmark(lambda: numpy_estimate(view, values, ids))
    assert n_view > 0 and n_domain == VALUES * OTHER
