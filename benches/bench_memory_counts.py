"""Counting a view held in memory: ``view.estimate(q)`` against a numpy digit scan (issue 36).

The view: an αβ view of Adult (9 attributes, m = 648,023,040) with β = rows / m,
so that it holds ~10^8 tuple codes at full size (10^6 when benchmarks are
disabled; ``PRIVPUB_BENCH_ROWS`` overrides), published in memory. Education is
declared an ordered band (its school years) so that a range reads a middle
attribute; the queries read middle and trailing attributes (a leading-attribute
condition on sorted codes is a binary search, not a scan): an equality, a
range, a 2-attribute AND and an IN list.

- privpub: ``view.estimate(q)``, the call a user makes (Q(V) over the codes,
  Q(D) exact; the truth table over the query's attributes is cached, as it is
  for a user who asks twice).
- numpy: what a capable user writes with the uint64 codes in hand and the
  strides known: per attribute the codes modulo stride·radix, then a range
  test on that (an equality or range of one digit is a range of residues:
  one modulo, no division) or, for an IN list, the digit (one division) looked
  up in a boolean table; in an AND each later test runs only on the rows the
  earlier ones kept; in chunks that stay in cache (``CHUNK`` rows: faster than
  whole-array temporaries here).

Interleaved best of 7 (1 when not timing), the same run; the ratio is numpy /
privpub time (above 1: privpub is faster; the issue's goal is >= 5). Counts
asserted equal.

Run: ``pytest -m "" benches/bench_memory_counts.py --benchmark-enable -s``.
"""

from __future__ import annotations

import statistics
import time
import warnings

import numpy as np
import pytest
from conftest import against_baseline  # noqa: I001 (benches/conftest.py, not a package)

from privpub import AlphaBeta, Categorical, PrivacyWarning, Schema, UsefulnessWarning
from privpub.datasets import load_adult

FULL_ROWS = 100_000_000
SMALL_ROWS = 1_000_000
ALPHA = 0.5
#: Rows per numpy chunk (2^16 uint64 codes: 512 KiB, in L2 with its temporaries).
CHUNK = 1 << 16
EDUCATION = ["Preschool", "1st-4th", "5th-6th", "7th-8th", "9th", "10th", "11th", "12th",
             "HS-grad", "Some-college", "Assoc-voc", "Assoc-acdm", "Bachelors", "Masters",
             "Prof-school", "Doctorate"]
#: (query text, {attribute: allowed values}) — the same condition for numpy.
QUERIES = [
    ("occupation = 'Sales'", {"occupation": ["Sales"]}),
    ("education BETWEEN 'HS-grad' AND 'Masters'",
     {"education": EDUCATION[EDUCATION.index("HS-grad"):EDUCATION.index("Masters") + 1]}),
    ("\"native-country\" = 'Mexico'", {"native-country": ["Mexico"]}),
    ("occupation = 'Sales' AND sex = 'Female'", {"occupation": ["Sales"], "sex": ["Female"]}),
    ("\"native-country\" IN ('Mexico', 'Canada', 'India', 'Cuba')",
     {"native-country": ["Mexico", "Canada", "India", "Cuba"]}),
    ("\"marital-status\" = 'Divorced' AND salary = '>50K'",
     {"marital-status": ["Divorced"], "salary": [">50K"]}),
]


@pytest.fixture(scope="module")
def adult_view(bench_rows, bench_report):
    df, adult = load_adult()
    attributes = [Categorical("education", EDUCATION, ordered=True) if a.name == "education"
                  else a for a in adult]
    schema = Schema(attributes, derived=adult.derived)
    rows = bench_rows(FULL_ROWS, SMALL_ROWS)
    t0 = time.perf_counter()
    with warnings.catch_warnings():  # a view this noisy is weakly useful (privpub says so)
        warnings.simplefilter("ignore", UsefulnessWarning)
        warnings.simplefilter("ignore", PrivacyWarning)
        view = AlphaBeta(schema, ALPHA, rows / schema.size).publish(df, seed=1,
                                                                      duplicates="records")
    bench_report.append(f"Adult αβ view in memory: {len(view):,} codes, published in "
                        f"{time.perf_counter() - t0:.1f} s")
    return view


def digit_tests(schema: Schema, allowed: dict[str, list]) -> list[tuple]:
    """Per attribute: (stride, radix, lo, hi) when its allowed digits are one
    run lo..hi, else (stride, radix, boolean table over its digits)."""
    tests = []
    for name, values in allowed.items():
        j = schema.names.index(name)
        stride = int(np.prod([a.size for a in schema.attributes[j + 1:]], dtype=np.int64))
        attr = schema[name]
        digits = sorted(list(attr.values).index(v) for v in values)
        if digits == list(range(digits[0], digits[-1] + 1)):
            tests.append((stride, attr.size, digits[0], digits[-1]))
        else:
            table = np.zeros(attr.size, dtype=bool)
            table[digits] = True
            tests.append((stride, attr.size, table))
    return tests


def numpy_count(codes: np.ndarray, tests: list[tuple]) -> int:
    """Rows whose digits pass every test, chunk by chunk with preallocated
    temporaries; each test after the first runs on the rows the earlier ones
    kept (compressed out of the chunk), as the uint64 modulo is the cost."""
    total = 0
    residue = np.empty(CHUNK, dtype=np.uint64)
    ok = np.empty(CHUNK, dtype=bool)
    for start in range(0, len(codes), CHUNK):
        part = codes[start:start + CHUNK]
        for i, test in enumerate(tests):
            n = len(part)
            r, k = residue[:n], ok[:n]
            stride, radix = np.uint64(test[0]), np.uint64(test[1])
            np.remainder(part, stride * radix, out=r)
            if len(test) == 4:  # digit in lo..hi  <=>  residue − lo·stride < (hi−lo+1)·stride
                np.subtract(r, np.uint64(test[2]) * stride, out=r)
                np.less(r, np.uint64(test[3] - test[2] + 1) * stride, out=k)
            else:
                if test[0] != 1:
                    np.floor_divide(r, stride, out=r)
                np.take(test[2], r, out=k)
            if i + 1 < len(tests):
                part = part[k]
        total += int(np.count_nonzero(k))
    return total


@pytest.mark.parametrize("query", [q for q, _ in QUERIES])
def test_estimate_against_numpy(adult_view, query, bench_report, request):
    allowed = dict(QUERIES)[query]
    codes = adult_view.codes
    tests = digit_tests(adult_view.schema, allowed)
    expected = numpy_count(codes, tests)
    assert adult_view.estimate(query).n_view == expected
    rounds, base, parts = against_baseline(
        {"numpy": lambda: numpy_count(codes, tests),
         "view.estimate": lambda: adult_view.estimate(query)}, "numpy", request.config)
    bench_report.append(f"{query} on {len(codes):,} codes in memory, best of {rounds}: "
                        f"numpy {base * 1e3:.0f} ms; {parts}")
    _RATIOS.append(float(parts.rsplit("(", 1)[1].rstrip("x)")))


_RATIOS: list[float] = []


def test_summary(bench_report):
    """The median and worst ratio over the queries above (run after them)."""
    if _RATIOS:
        bench_report.append(f"in-memory estimates, numpy / privpub time over {len(_RATIOS)} "
                            f"queries (goal >= 5): median {statistics.median(_RATIOS):.2f}, "
                            f"worst {min(_RATIOS):.2f}")
