"""Q(V) from a view's codes in memory (MemoryView.table_counts over
rust/src/codecount.rs, issue 36): equal to a numpy digit scan of the same
codes looked up in the condition's truth table, on drawn conditions over
missing values, an ordered band, a column of 300 values, ordered dates, and
domains whose codes come near 2^64; the codes are never decoded."""

from __future__ import annotations

import datetime

import numpy as np
import pytest
from oracle import joined_texts  # (tests/oracle.py, not a package)

from privpub import Categorical, IntRange, Schema
from privpub.core.errors import CodeError
from privpub.counting.query import Condition
from privpub.viewfile.rows import MemoryView

BANDS = ["<20", "20-39", "40-59", "60+"]
CITIES = [f"c{i:03d}" for i in range(300)]
DAYS = [(datetime.date(2024, 1, 1) + datetime.timedelta(d)).isoformat() for d in range(366)]


def _schema(wide: bool) -> Schema:
    """m = 4·100·300·3·366·70 ≈ 9.2×10^9 (past 2^32: the 64-bit path); ``wide``
    multiplies it by 2^30 (m ≈ 9.9×10^18, above 2^63)."""
    attributes = [Categorical("band", BANDS, ordered=True), IntRange("age", 0, 99),
                  Categorical("city", CITIES), Categorical("sex", ["F", "M", "?"], missing="?"),
                  Categorical("day", DAYS, ordered=True), IntRange("score", 0, 69)]
    if wide:
        attributes.insert(2, IntRange("id", 0, (1 << 30) - 1))
    return Schema(attributes)


def _conditions(rng: np.random.Generator, count: int) -> list[str]:
    atoms = [lambda: f"band >= '{rng.choice(BANDS)}'",
             lambda: f"age {rng.choice(['<', '>=', '=', '<>'])} {rng.integers(0, 100)}",
             lambda: f"city IN ('{rng.choice(CITIES)}', '{rng.choice(CITIES)}')",
             lambda: f"city NOT IN ('{rng.choice(CITIES)}')",
             lambda: "sex IS NULL" if rng.random() < 0.3 else f"sex = '{rng.choice(['F', 'M'])}'",
             lambda: f"day BETWEEN '{rng.choice(DAYS[:200])}' AND '{rng.choice(DAYS[150:])}'",
             lambda: f"score < {rng.integers(0, 70)}"]
    return joined_texts(rng, atoms, count)


def _codes(schema: Schema, n: int, seed: int) -> np.ndarray:
    """n codes drawn below m (unsorted: no binary search applies), with 0 and m − 1."""
    drawn = np.random.default_rng(seed).integers(0, schema.size, n, dtype=np.uint64)
    return np.concatenate([drawn, np.array([0, schema.size - 1], dtype=np.uint64)])


def _numpy_count(schema: Schema, codes: np.ndarray, condition: Condition) -> int:
    """The reference: each read attribute's digit by (code // stride) % radix in
    numpy, the digits as a mixed-radix index into the truth table."""
    index = np.zeros(len(codes), dtype=np.int64)
    for name in condition.attributes:
        j = schema.names.index(name)
        stride = np.uint64(int(np.prod([a.size for a in schema.attributes[j + 1:]],
                                       dtype=object)))
        digit = (codes // stride) % np.uint64(schema[name].size)
        index = index * schema[name].size + digit.astype(np.int64)
    return int(condition.truth_table()[index].sum())


@pytest.mark.parametrize("wide", [False, True])
def test_counts_from_codes_equal_a_numpy_digit_scan(wide, monkeypatch):
    schema = _schema(wide)
    assert (schema.size > 1 << 63) == wide and schema.size > 1 << 32
    # Past a chunk of the kernel (2^15 codes) and a block (2^10): edges inside the pass.
    codes = _codes(schema, 40_000 + 1_000 + 7, seed=int(wide))
    view = MemoryView(schema, codes)

    def decoded(*args):
        raise AssertionError("the codes were decoded")

    monkeypatch.setattr(MemoryView, "batches", decoded)
    conditions = [Condition(schema, t) for t in _conditions(np.random.default_rng(5), 150)]
    tabled = [c for c in conditions if c.truth_table() is not None]
    assert len(tabled) > 100
    found = view.table_counts(tabled)
    assert found == {i: _numpy_count(schema, codes, c) for i, c in enumerate(tabled)}
    assert view.count_many(tabled) == [found[i] for i in range(len(tabled))]
    assert len(set(found.values())) > 50  # the conditions tell the codes apart


def test_adult_shaped_codes_take_the_32_bit_path():
    """m below 2^32 (the narrow divisions), on the conditions Adult's users ask."""
    schema = Schema([IntRange("age", 17, 90), Categorical("work", list("abcdefg")),
                     Categorical("edu", [f"e{i}" for i in range(16)], ordered=True),
                     Categorical("sex", ["F", "M"]), Categorical("country", CITIES[:41])])
    assert schema.size < 1 << 32
    codes = _codes(schema, 70_000, seed=3)
    view = MemoryView(schema, codes)
    texts = ["edu BETWEEN 'e3' AND 'e9'", "country = 'c007'", "work = 'c' AND sex = 'F'",
             "country IN ('c001', 'c020', 'c040')", "edu >= 'e5' AND country <> 'c003'",
             "age > 60 AND country = 'c002'"]
    conditions = [Condition(schema, t) for t in texts]
    assert view.table_counts(conditions) == {
        i: _numpy_count(schema, codes, c) for i, c in enumerate(conditions)}


def test_a_code_past_the_domain_is_named_by_its_row():
    schema = _schema(False)
    codes = _codes(schema, 50_000, seed=4)
    codes[45_001] = np.uint64(schema.size)
    with pytest.raises(CodeError, match="row 45001"):
        MemoryView(schema, codes).table_counts([Condition(schema, "score < 3")])
