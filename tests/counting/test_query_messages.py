"""Query text errors that say the fix (issue 33): a reserved word as a column
name, text in double quotes, pandas' & | ~; each one line naming the token."""

import subprocess
import sys

import duckdb
import numpy as np
import pandas as pd
import pytest

import privpub
from privpub import Categorical, Condition, IntRange, QueryError, Schema, count_domain


def refused(schema: Schema, text: str) -> str:
    with pytest.raises(QueryError) as info:
        Condition(schema, text)
    message = str(info.value)
    assert "\n" not in message
    return message


# ---- reserved words -----------------------------------------------------------------------------


@pytest.mark.parametrize("word", ["any", "select", "from", "where", "case", "as", "distinct",
                                  "union", "with", "ANY"])
def test_a_reserved_word_as_a_column_says_to_double_quote_it(word):
    """main: "'Any' is missing an operand", "'Where' is missing an operand", …"""
    schema = Schema([IntRange(word, 0, 3), IntRange("b", 0, 3)])
    for text, fixed in [(f"{word} = 1", f'"{word}" = 1'),
                        (f"b = 1 AND {word} IN (1, 2)", f'b = 1 AND "{word}" IN (1, 2)'),
                        (f"b = 1 AND {word} BETWEEN 1 AND 2",
                         f'b = 1 AND "{word}" BETWEEN 1 AND 2'),
                        (f"({word} > 1)", f'("{word}" > 1)'),
                        (f"b = {word}", f'b = "{word}"')]:
        message = refused(schema, text)
        assert f"{word!r} is a reserved word in SQL; a column called {word} must be " \
               f"double-quoted: {fixed!r}" in message, message
        Condition(schema, fixed)  # the fix parses


def test_the_fix_a_reserved_word_message_gives_counts():
    schema = Schema([IntRange("any", 0, 3), IntRange("b", 0, 3)])
    assert count_domain(schema, '"any" = 1') == 4
    message = refused(schema, "select count(*) from I where any = 2")
    assert "'select count(*) from I where \"any\" = 2'" in message
    text = Schema([IntRange("any", 0, 3), Categorical("s", ["Zoë"])])  # (positions: characters)
    assert "'s = \\'Zoë\\' AND \"any\" = 1'" in refused(text, "s = 'Zoë' AND any = 1")


def test_keywords_that_are_not_a_misnamed_column_keep_their_message():
    """A dangling AND / NOT is a missing operand, not a column to quote."""
    schema = Schema([IntRange("a", 0, 3)])
    assert "'=' is missing an operand" in refused(schema, "and = 1")
    assert "reserved" not in refused(schema, "a = 1 AND NOT IN (1, 2)")
    # After an operand a keyword is an operator missing its operand, not a column.
    for text in ["a BETWEEN = 1", "a IS = 1", "a LIKE = 'x'"]:
        assert "reserved" not in refused(schema, text), text
    # A name sqlglot reads as a column (DuckDB reserves it) stays a column.
    order = Schema([IntRange("order", 0, 3), IntRange("all", 0, 1)])
    assert count_domain(order, "order = 1 AND all = 0") == 1


# ---- text in double quotes ----------------------------------------------------------------------


def test_text_in_double_quotes_says_to_use_single_quotes():
    """main: "unknown column '1. Industrial'"."""
    schema = Schema([Categorical("industry", ["1. Industrial", "it's"]), IntRange("a", 0, 3)])
    message = refused(schema, 'industry = "1. Industrial"')
    assert message == ("'industry = \"1. Industrial\"': double quotes name columns, and there "
                       "is no column '1. Industrial'; write text values in single quotes: "
                       "\"industry = '1. Industrial'\"")
    assert count_domain(schema, "industry = '1. Industrial'") == 4
    # The fix as written, quote inside included, parses and counts.
    assert "\"industry = 'it''s'\"" in refused(schema, 'a > 0 AND industry = "it\'s"')
    assert count_domain(schema, "industry = 'it''s'") == 4
    # A misspelt column in double quotes is still an unknown column.
    assert "unknown column 'industri'" in refused(schema, "\"industri\" = 'it''s'")


# ---- pandas' & | ~ ------------------------------------------------------------------------------


SMALL = Schema([IntRange("a", 0, 3), IntRange("b", 0, 3)])


@pytest.mark.parametrize("text, token, word, fixed", [
    ("a = 1 & b = 2", "&", "AND", "a = 1 AND b = 2"),  # main: "unsupported SQL 'a = 1 & b' (EQ)"
    ("(a == 1) & (b == 2)", "&", "AND", "(a == 1) AND (b == 2)"),
    ("(a=1)&(b=2)", "&", "AND", "(a=1) AND (b=2)"),
    ("(a = 1) | (b = 2)", "|", "OR", "(a = 1) OR (b = 2)"),
    ("a = 1 | b = 2 | b = 3", "|", "OR", "a = 1 OR b = 2 OR b = 3"),
    ("~(a = 1)", "~", "NOT", "NOT (a = 1)"),  # main: "unsupported SQL ... (BitwiseNot)"
    ("select count(*) from I where (a = 1) & (b = 2)", "&", "AND",
     "select count(*) from I where (a = 1) AND (b = 2)"),
])
def test_pandas_connectives_say_the_sql_word(text, token, word, fixed):
    message = refused(SMALL, text)
    assert message == (f"{token!r} in {text!r} is SQL's bitwise {word} of numbers, not a "
                       f"logical one: write {word}: {fixed!r}")
    Condition(SMALL, fixed)  # the fix parses


def test_a_dangling_pandas_operator_is_named():
    assert "'|' is missing an operand" in refused(SMALL, "a = 1 | | b = 2")
    assert "'&' is missing an operand" in refused(SMALL, "a = 1 &")


def test_bitwise_arithmetic_inside_a_subquery_is_duckdbs():
    """Only the condition is checked: a subquery runs in DuckDB as written."""
    tables = {"T": pd.DataFrame({"x": [1, 2, 3]})}
    assert count_domain(SMALL, "a IN (SELECT x FROM T WHERE x & 1 = 1)", tables) == 8


@pytest.mark.parametrize("text", ["a == 1", "a != 1", "a == 1 AND b != 2", "NOT a == 1"])
def test_double_equals_and_bang_equals_count_as_in_duckdb(text):
    """== and != are DuckDB's = and <>: accepted, with DuckDB's count."""
    con = duckdb.connect()
    con.register("d", SMALL.decode(np.arange(SMALL.size, dtype=np.uint64)))
    expected = con.execute(f"SELECT count(*) FROM d WHERE {text}").fetchone()[0]
    assert count_domain(SMALL, text) == expected


# ---- the command line ---------------------------------------------------------------------------


# A view of a small domain says its bound is weak (UsefulnessWarning); this test
# checks the command line's message.
@pytest.mark.filterwarnings("ignore::privpub.UsefulnessWarning")
def test_the_command_line_prints_one_line_for_a_unicode_digit(tmp_path):
    """main: a 41-line ValueError traceback from np.fromstring."""
    path = tmp_path / "v.parquet"
    df = SMALL.decode(np.arange(SMALL.size, dtype=np.uint64))
    privpub.AlphaBeta(SMALL, alpha=0.5, beta=0.1).publish(df, seed=1).to_parquet(path)
    run = subprocess.run([sys.executable, "-m", "privpub.cli", "estimate", str(path),
                          "a IN (1, ٣)"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 1, run.stderr
    assert "Traceback" not in run.stderr
    assert "character 10 is '٣' (U+0663 ARABIC-INDIC DIGIT THREE)" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1, run.stderr
