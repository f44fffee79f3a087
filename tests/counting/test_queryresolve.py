"""Query text read with each atom resolved once per schema (issue 36,
:mod:`privpub.counting.queryresolve`) means what the whole-text path makes of
it: the same formula, atoms, SQL, truth table and refusal, on conditions drawn
by the zero-noise oracle (missing labels, ordered bands of ints and text, a
column of > 128 values, booleans), on the corpus's date columns and large
domains, and after the atoms were met in other texts."""

import numpy as np
import oracle  # (tests/oracle.py, not a package)
import pytest

import privpub
from privpub.core.errors import PrivpubError
from privpub.counting import evaluation, queryresolve, querytext
from privpub.counting.truthtable import grid_table


def _whole_text(monkeypatch):
    """Make every text go the whole-text path (build the sqlglot tree, then split it)."""
    def refuse(*args):
        raise queryresolve.NotTabled
    monkeypatch.setattr(queryresolve, "split_text", refuse)


def _outcome(schema, text, tables=None):
    try:
        cond = privpub.Condition(schema, text, tables)
    except PrivpubError as err:
        return type(err), str(err)
    return cond


def _facts(cond):
    table = cond.truth_table()
    return (cond.formula, [a.attributes for a in cond.atoms], [a.sql for a in cond.atoms],
            [a.text for a in cond.atoms], cond.attributes, cond.sql, cond.text,
            None if table is None else table.tobytes(), cond.aggregate)


def _compare(monkeypatch, schema, texts, tables=None):
    """Each text's outcome on both paths; returns how many counted."""
    queryresolve.forget()
    evaluation.truth_tables.cache_clear()
    fast = [_outcome(schema, t, tables) for t in texts]
    with monkeypatch.context() as patched:
        _whole_text(patched)
        evaluation.truth_tables.cache_clear()
        whole = [_outcome(schema, t, tables) for t in texts]
    counted = 0
    for text, a, b in zip(texts, fast, whole, strict=True):
        if isinstance(b, tuple):
            assert a == b, text
            continue
        assert _facts(a) == _facts(b), text
        counted += 1
    return counted


def _drawn(seed: int, queries: int):
    src = oracle.RandomSource(seed)
    table, _ = oracle.draw_table(src)
    return table, [oracle.privpub_text(table, oracle.draw_query(src, table))
                   for _ in range(queries)]


@pytest.mark.parametrize("seed", range(40))
def test_drawn_conditions_mean_the_same_on_both_paths(monkeypatch, seed):
    table, texts = _drawn(seed, 25)
    schema = table.schema()
    # every text twice and shuffled: the second time its atoms are known
    again = texts + texts[::-1]
    _compare(monkeypatch, schema, again)


def test_the_drawn_conditions_cover_what_they_are_for(monkeypatch):
    """Missing labels, ordered columns, > 128 values, refusals and counts all occur."""
    kinds, labels, big, counted, total = set(), 0, 0, 0, 0
    for seed in range(40):
        table, texts = _drawn(seed, 25)
        kinds |= {c.kind for c in table.columns}
        labels += any(c.label is not None for c in table.columns)
        big += any(len(c.domain) > 128 for c in table.columns)
        counted += _compare(monkeypatch, table.schema(), texts)
        total += len(texts)
    assert kinds == set(oracle.KINDS) and labels >= 5 and big >= 2
    assert 0.3 * total < counted < total


def test_formula_tables_are_the_whole_trees_tables(monkeypatch):
    """The table made from the formula over the atoms is grid_table of the
    whole tree, and DuckDB's on the projection, cell by cell."""
    checked = 0
    for seed in range(40):
        table, texts = _drawn(seed, 25)
        schema = table.schema()
        for text in texts:
            cond = _outcome(schema, text)
            if isinstance(cond, tuple) or not cond.attributes:
                continue
            made = cond.truth_table()
            whole = grid_table(schema, cond.attributes, cond.expression)
            if whole is not None:
                assert np.array_equal(made, whole), text
            rows = schema.projection(cond.attributes, query=True)
            assert np.array_equal(made, evaluation.evaluate(rows, cond.sql)), text
            checked += 1
    assert checked > 300


ADULT_TEXTS = [
    "age > 50 AND sex = 'Female'",
    "\"marital-status\" IN ('Divorced', 'Separated') AND age BETWEEN 30 AND 39",
    "age < 30 AND workclass = 'Private' AND NOT sex = 'Male'",
    "(age < 30 OR age >= 60) AND NOT (sex = 'Male' OR race <> 'White')",
    "NOT NOT (education = 'Bachelors') OR ((age = 39))",
    "SELECT count(*) FROM I WHERE I.age = 39 AND sex = 'Male'",
    "SELECT count(*) FROM adult AS t WHERE t.age = 39",
    "SELECT count(*) FROM I",
    "TRUE", "FALSE AND age > 3", "age IN ()", "age NOT IN (17, 18, 19)",
    "age + 1 > 40", "age * 2 > 80",
    "workclass LIKE 'Pri%'", "workclass NOT LIKE '%gov'", "workclass IS NULL",
    "workclass IS NOT NULL AND age > 17",
    # refused, by the same message on both paths
    "age = 'x'", "agee = 3", "sex = 'Femalee'", "sex < 'Male'", "age > 10 AND foo(age) > 1",
    "sex = 'Male' AND age = 1000", "age IN (1, 2, 'x')", "age = NULL", "sex = \"Male\"",
    "age > 10^400 AND sex = 'Femalee'", "SELECT sum(age) FROM I WHERE sex = 'Male'",
    "age > 30 AND age IN (SELECT a FROM aux)", "",
]


def test_adult_texts_mean_the_same_on_both_paths(monkeypatch):
    schema = privpub.datasets.load_adult()[1]
    import pandas as pd

    tables = {"aux": pd.DataFrame({"a": [30, 40, 500]})}
    counted = _compare(monkeypatch, schema, ADULT_TEXTS + ADULT_TEXTS, tables)
    assert counted == 2 * 19  # the first 18 and the subquery (the whole-text path)


def test_accepted_texts_never_take_the_whole_text_path(monkeypatch):
    """NOT IN, NOT BETWEEN, IS NOT NULL, NOT LIKE, qualified columns: resolved by atoms."""
    schema = privpub.datasets.load_adult()[1]
    whole = []
    original = querytext.parse_aggregate
    monkeypatch.setattr(querytext, "parse_aggregate",
                        lambda *a: whole.append(a) or original(*a))
    for text in ADULT_TEXTS[:18] + ["age NOT BETWEEN 20 AND 30", "NOT (age NOT IN (17))",
                                    "workclass NOT LIKE 'P%' AND race IS NOT NULL"]:
        privpub.Condition(schema, text).truth_table()
    assert whole == []
    with pytest.raises(privpub.QueryError, match="unknown column 'agee'"):
        privpub.Condition(schema, "age NOT IN (30) AND agee = 1")
    assert len(whole) == 1  # a refusal is the whole-text path's


def test_a_sum_is_read_where_sums_are_estimated():
    schema = privpub.datasets.load_adult()[1]
    cond = privpub.Condition(schema, "SELECT avg(age) FROM I WHERE sex = 'Male'",
                             aggregates=True)
    assert cond.aggregate == ("avg", "age") and cond.sql == "sex = 'Male'"


@pytest.mark.parametrize("name", ["co2", "seattle_weather", "flights"])
def test_corpus_dates_and_large_domains_mean_the_same(monkeypatch, name):
    import corpus

    table = getattr(corpus, name)()
    schema = table.schema
    frame = corpus.filled(table)
    texts = []
    for attr in schema:
        first = frame[attr.name].iloc[0]
        first = first.item() if isinstance(first, np.generic) else first
        shown = oracle.sql_literal(first)
        quoted = oracle.quoted(attr.name)
        texts += [f"{quoted} = {shown}", f"{quoted} <> {shown}", f"{quoted} >= {shown}",
                  f"{quoted} IN ({shown}) AND NOT {quoted} IS NULL",
                  f"{quoted} BETWEEN {shown} AND {shown} OR {quoted} IS NULL"]
    pairs = [f"{a} AND ({b})" for a, b in zip(texts, texts[3:], strict=False)]
    assert _compare(monkeypatch, schema, texts + pairs) > len(texts) // 3
