"""Truth tables by numpy broadcasting agree with DuckDB, the semantics of record."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import privpub
from privpub import count_domain
from privpub.counting.evaluation import evaluate
from privpub.counting.query import Condition
from privpub.counting.truthtable import grid_table
from privpub.domain.attributes import Categorical, IntRange
from privpub.domain.schema import Schema

SCHEMA = privpub.Schema([
    privpub.IntRange("x", -4, 6),
    privpub.IntRange("y", 0, 8),
    privpub.Categorical("s", ["a", "b", "é", "ab", "B"]),
    privpub.Categorical("lvl", ["low", "mid", "high"], ordered=True),
    privpub.Categorical("f", [0.5, 1.0, 2.25]),
])

numbers = st.sampled_from(["x", "y", "(x + y)", "(x - 2)", "(y * x)", "(-x)", "3", "-2",
                           "1.5", "(x * 3 - y)"])
comparisons = st.sampled_from(["=", "<>", "<", "<=", ">", ">="])


@st.composite
def atoms(draw) -> str:
    kind = draw(st.integers(0, 5))
    if kind == 0:
        return f"{draw(numbers)} {draw(comparisons)} {draw(numbers)}"
    if kind == 1:
        values = draw(st.lists(st.sampled_from(["a", "b", "é", "ab", "B"]), min_size=1))
        op = draw(st.sampled_from(["=", "<>", "<", ">=", "IN"]))
        if op == "IN":
            return "s IN (" + ", ".join(f"'{v}'" for v in values) + ")"
        return f"s {op} '{values[0]}'"
    if kind == 2:
        return f"lvl {draw(comparisons)} '{draw(st.sampled_from(['low', 'mid', 'high']))}'"
    if kind == 3:
        low, high = sorted(draw(st.lists(st.integers(-5, 9), min_size=2, max_size=2)))
        return f"{draw(numbers)} BETWEEN {low} AND {high}"
    if kind == 4:
        return f"f {draw(comparisons)} {draw(st.sampled_from(['1', '0.5', '2.25', 'x']))}"
    return f"x IN ({', '.join(str(v) for v in draw(st.lists(st.integers(-5, 7), min_size=1)))})"


@st.composite
def conditions(draw) -> str:
    parts = draw(st.lists(atoms(), min_size=1, max_size=3))
    glue = draw(st.lists(st.sampled_from([" AND ", " OR ", " AND NOT "]), min_size=len(parts),
                         max_size=len(parts)))
    text = parts[0]
    for g, p in zip(glue, parts[1:], strict=False):
        text = f"({text}){g}({p})"
    return text


@settings(max_examples=300, deadline=None)
@given(conditions())
@pytest.mark.slow
def test_numpy_tables_match_duckdb(where):
    try:
        cond = Condition(SCHEMA, where)
    except privpub.PrivpubError:  # constants compared, a value outside a domain: refused
        assume(False)
    checked = 0
    for sql, attrs, node in [(a.sql, a.attributes, a.node) for a in cond.atoms] + \
            [(cond.sql, cond.attributes, cond.expression)]:
        table = grid_table(SCHEMA, attrs, node)
        assert table is not None, f"{sql!r} should be evaluated by numpy"
        expected = evaluate(SCHEMA.projection(attrs, query=True), sql)
        assert (table == expected).all(), sql
        checked += 1
    assert checked == len(cond.atoms) + 1


def test_what_numpy_does_not_mirror_is_left_to_duckdb():
    big = privpub.Schema([privpub.IntRange("b", 0, 3), privpub.IntRange("c", 2**40, 2**40 + 3),
                          privpub.Categorical("s", ["ab", "cd"])])
    for where, count in [("s LIKE 'a%'", 16), ("b / 2 > 0", 24), ("b % 2 = 1", 16)]:
        atom = Condition(big, where).atoms[0]
        assert grid_table(big, atom.attributes, atom.node) is None, where
        assert count_domain(big, where) == count, where  # still exact, through DuckDB
    for where in ["c * c > 5", "b * 4611686018427387904 > 1"]:
        atom = Condition(big, where).atoms[0]
        assert grid_table(big, atom.attributes, atom.node) is None, where
        # DuckDB refuses the int64 overflow by name, where numpy would have wrapped.
        with pytest.raises(privpub.QueryError, match="Overflow"):
            count_domain(big, where)
    assert grid_table(big, ("c",), Condition(big, "c * 2 > 5").atoms[0].node) is not None


def test_ordered_and_float_attributes_compare_as_duckdb_does():
    schema = privpub.Schema.from_frame(pd.DataFrame({
        "band": pd.Categorical(["low", "high"], categories=["low", "mid", "high"],
                               ordered=True)}))
    cond = Condition(schema, "band > 'low'")
    table = grid_table(schema, cond.attributes, cond.expression)
    assert table.tolist() == [False, True, True]
    assert np.array_equal(table, evaluate(schema.projection(["band"], query=True), cond.sql))


# ---- the cache of truth tables: bounded in cells, keyed by all a table depends on -------------
def test_cell_cache_is_bounded_in_cells_least_recently_used_out():
    from privpub.counting.evaluation import CellCache

    made = []

    def build(n, note):
        made.append(n)
        return np.zeros(n, dtype=bool)

    cache = CellCache(build, key=lambda n, note: n, cells=10)
    first = cache(4, "a")
    assert cache(4, "ignored: not in the key") is first and made == [4]
    assert not first.flags.writeable  # shared: read-only
    cache(5, "b")
    assert cache.cells == 9
    cache(4, "a")          # 4 is now the most recently used
    cache(3, "c")          # 9 + 3 > 10: 5 goes, not 4
    assert cache.cells == 7 and made == [4, 5, 3]
    cache(4, "a")
    assert made == [4, 5, 3]
    cache(5, "b")
    assert made == [4, 5, 3, 5]
    cache(20, "big")       # larger than the bound: held alone
    assert cache.cells == 20
    cache.cache_clear()
    assert cache.cells == 0
    cache(4, "a")
    assert made[-1] == 4 and len(made) == 6


def test_truth_tables_are_keyed_by_schema_attributes_and_sql():
    from privpub.counting import evaluation

    a = Schema([IntRange("x", 0, 9), Categorical("s", ["u", "v"])])
    b = Schema([IntRange("x", 0, 9), Categorical("s", ["u", "v", "w"])])
    evaluation.truth_tables.cache_clear()
    ta = Condition(a, "x > 4 AND s = 'u'").truth_table()
    tb = Condition(b, "x > 4 AND s = 'u'").truth_table()
    assert ta.size == 20 and tb.size == 30 and ta.sum() == tb.sum() == 5
    assert Condition(a, "x > 4 AND s = 'u'").truth_table() is ta  # shared across conditions
    assert Condition(a, "x > 5 AND s = 'u'").truth_table().sum() == 4
    # the conditions' tables, and their atoms' (x > 4, s = 'u' over a and b; x > 5)
    assert evaluation.truth_tables.cells == 20 + 30 + 20 + (10 + 2) + (10 + 3) + 10
    # an equal schema (another object) shares them; one that differs does not
    same = Schema([IntRange("x", 0, 9), Categorical("s", ["u", "v"])])
    assert Condition(same, "x > 4 AND s = 'u'").truth_table() is ta
    evaluation.truth_tables.cache_clear()
    assert Condition(a, "x > 4 AND s = 'u'").truth_table() is not ta
