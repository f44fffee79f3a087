"""Tuple codes: privpub's Schema.encode/decode against the best numpy/pandas a user would write.

Data: the 30,162 Adult records tiled to N rows (default 10M when benchmarks are
enabled, 200k otherwise; override with PRIVPUB_BENCH_ROWS), string columns held
as pandas 'category' (how one would hold 10M rows), age as int64; the schema is
Adult's active domains (m = 648,023,040).

Baseline (``NumpyCodec``), the fastest numpy form we found for each step:

- encode, per column: category codes remapped to domain indices through a small
  lookup table in the narrowest dtype (``remap[codes]``; ~1.4x faster than an int64
  table), age through a lookup table indexed by ``value - lo`` after a min/max range
  check; a negative index (value outside the domain) raises; the mixed radix is
  folded in place, ``np.multiply(c, r, out=c); np.add(c, digit, out=c)`` in int64
  (faster than ``np.ravel_multi_index`` (0.14 s) and than uint64 (0.21 s) at 10M rows).
- decode: a check that every code is < m, then repeated ``np.divmod`` from the least
  significant digit (faster than ``np.unravel_index``: 0.33 s against 0.46 s at 10M
  rows; numpy divides by a scalar with libdivide), then ``pd.Categorical.from_codes``
  for the category columns and a ``take`` from the domain for age.

Both must give identical codes and frames (asserted). The ratio baseline / privpub
of mean times is printed at the end of the session; nothing asserts on timing.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest

from privpub import Categorical, Schema
from privpub.datasets import load_adult

FULL_ROWS = 10_000_000
SMALL_ROWS = 200_000


class NumpyCodec:
    """The same mapping as ``Schema.encode/decode`` for an all-Categorical schema."""

    def __init__(self, schema: Schema):
        assert all(isinstance(a, Categorical) for a in schema)
        self.schema = schema
        self.names = schema.names
        self.radices = schema.radices
        self.m = schema.size
        assert self.m < 2**63
        self.domains = [pd.Index(a.values) for a in schema]
        self.dtypes = [a.dtype for a in schema]

    def _digits(self, j: int, col: pd.Series) -> np.ndarray:
        domain = self.domains[j]
        narrow = np.min_scalar_type(-len(domain))
        if isinstance(col.dtype, pd.CategoricalDtype):
            remap = domain.get_indexer(col.cat.categories).astype(narrow)
            digits = remap[col.cat.codes.to_numpy()]
        else:
            values = col.to_numpy()
            lo, hi = int(domain.min()), int(domain.max())
            if len(values) and (values.min() < lo or values.max() > hi):
                raise ValueError(f"column {self.names[j]!r} has a value outside its domain")
            lut = np.full(hi - lo + 1, -1, dtype=narrow)
            lut[domain.to_numpy() - lo] = np.arange(len(domain))
            digits = lut[values - lo]
        if (digits < 0).any():
            raise ValueError(f"column {self.names[j]!r} has a value outside its domain")
        return digits

    def encode(self, df: pd.DataFrame) -> np.ndarray:
        codes = self._digits(0, df[self.names[0]]).astype(np.int64)
        for j in range(1, len(self.names)):
            np.multiply(codes, self.radices[j], out=codes)
            np.add(codes, self._digits(j, df[self.names[j]]), out=codes)
        return codes.view(np.uint64)

    def decode(self, codes: np.ndarray) -> pd.DataFrame:
        rest = codes.view(np.int64)
        if len(rest) and (rest.min() < 0 or rest.max() >= self.m):
            raise ValueError("a code is not below m")
        digits = [None] * len(self.names)
        for j in range(len(self.names) - 1, 0, -1):
            rest, digits[j] = np.divmod(rest, self.radices[j])
        digits[0] = rest
        columns = {}
        parts = zip(self.names, self.domains, self.dtypes, digits, strict=True)
        for name, domain, dtype, d in parts:
            if dtype == "category":
                columns[name] = pd.Categorical.from_codes(d, categories=domain)
            else:
                columns[name] = pd.Series(domain.to_numpy().take(d), dtype=dtype, copy=False)
        return pd.DataFrame(columns, copy=False)


@pytest.fixture(scope="module")
def adult_tiled(bench_rows):
    n = bench_rows(FULL_ROWS, SMALL_ROWS)
    base, _ = load_adult()
    cat = base.astype({c: "category" for c in base.columns if c != "age"})
    big = cat.iloc[np.arange(n) % len(cat)].reset_index(drop=True)
    schema = Schema.from_frame(big)
    assert schema.size == 648_023_040
    return big, schema, NumpyCodec(schema)


def privpub_round_trip(schema, df):
    return schema.decode(schema.encode(df))


def numpy_round_trip(codec, df):
    return codec.decode(codec.encode(df))


def assert_frames_identical(left: pd.DataFrame, right: pd.DataFrame) -> None:
    """Same columns, dtypes (categories included) and values. pd.testing.assert_frame_equal
    compares categoricals value by value (~7 µs a row under pandas 3), too slow at 10M rows,
    so compare category codes instead, and run it on a head sample as well."""
    assert list(left.columns) == list(right.columns)
    assert len(left) == len(right)
    for name in left.columns:
        a, b = left[name], right[name]
        assert a.dtype == b.dtype, name
        if isinstance(a.dtype, pd.CategoricalDtype):
            assert a.cat.categories.equals(b.cat.categories), name
            np.testing.assert_array_equal(a.cat.codes.to_numpy(), b.cat.codes.to_numpy())
        else:
            np.testing.assert_array_equal(a.to_numpy(), b.to_numpy())
    pd.testing.assert_frame_equal(left.head(2000), right.head(2000))


def test_same_codes_and_frames(adult_tiled):
    df, schema, codec = adult_tiled
    ours, theirs = schema.encode(df), codec.encode(df)
    assert ours.dtype == theirs.dtype == np.uint64
    np.testing.assert_array_equal(ours, theirs)
    back_ours, back_theirs = schema.decode(ours), codec.decode(theirs)
    assert_frames_identical(back_ours, back_theirs)
    assert_frames_identical(back_ours, df)
    # The baseline is not lax: it rejects what privpub rejects.
    bad = df.head(3).copy()
    bad["age"] = np.array([17, 91, 30])
    with pytest.raises(ValueError):
        codec.encode(bad)
    with pytest.raises(ValueError):
        codec.decode(np.array([schema.size], dtype=np.uint64))


@pytest.mark.benchmark(group="encode+decode of tiled Adult rows")
def test_encode_decode_privpub(benchmark, adult_tiled):
    df, schema, _ = adult_tiled
    benchmark.extra_info["role"] = "privpub"
    back = benchmark.pedantic(privpub_round_trip, args=(schema, df), rounds=5,
                              warmup_rounds=1)
    assert len(back) == len(df)


@pytest.mark.benchmark(group="encode+decode of tiled Adult rows")
def test_encode_decode_numpy(benchmark, adult_tiled):
    df, _, codec = adult_tiled
    benchmark.extra_info["role"] = "baseline"
    back = benchmark.pedantic(numpy_round_trip, args=(codec, df), rounds=5, warmup_rounds=1)
    assert len(back) == len(df)


def test_timing_ratio_perf_counter(adult_tiled, bench_report):
    """Encode and decode timed separately, interleaved, best of 3; printed, not asserted."""
    df, schema, codec = adult_tiled
    best = {key: float("inf") for key in ("privpub encode", "privpub decode",
                                          "numpy encode", "numpy decode")}
    for _ in range(3):
        for label, enc, dec in (("privpub", schema.encode, schema.decode),
                                ("numpy", codec.encode, codec.decode)):
            t0 = time.perf_counter()
            codes = enc(df)
            t1 = time.perf_counter()
            dec(codes)
            t2 = time.perf_counter()
            best[f"{label} encode"] = min(best[f"{label} encode"], t1 - t0)
            best[f"{label} decode"] = min(best[f"{label} decode"], t2 - t1)
    parts = ", ".join(f"{k} {v:.3f} s" for k, v in best.items())
    ratio_enc = best["numpy encode"] / best["privpub encode"]
    ratio_dec = best["numpy decode"] / best["privpub decode"]
    total = ((best["numpy encode"] + best["numpy decode"])
             / (best["privpub encode"] + best["privpub decode"]))
    bench_report.append(f"perf_counter best of 3, {len(df):,} rows: {parts}; baseline / privpub: "
                        f"encode {ratio_enc:.1f}x, decode {ratio_dec:.1f}x, both {total:.1f}x")
