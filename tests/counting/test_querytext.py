"""The Rust reader of integer IN lists accepts exactly what the scan's
regular expression accepts (on the ASCII text the scan hands it), and reads
the same values; the scan reads ASCII digits and SQL whitespace only (issue
33), so any other text is refused by name or counted as DuckDB counts it."""

import duckdb
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from privpub import Condition, IntRange, QueryError, Schema, _core, count_domain
from privpub.counting import querytext

# Characters around and inside lists: the ones the language turns on. (\x1c–\x1f,
# which the Rust reader takes as space, never reach it: see the scan's tests below.)
PIECES = ["(", ")", ",", " ", "\t", "\x0b", "\n", "-", "+", ".", "'", '"', "_", "x", "e",
          "0", "7", "12", "999999999999999999", "1234567890123456789"]


def regex_read(text: str):
    found = querytext._INT_LIST.match(text, 0)
    if found is None:
        return None
    return found.group(1), found.end()


def rust_read(text: str):
    found = _core.scan_int_list(text, 0)
    if found is None:
        return None
    ints, inner, inner_end, end = found
    return text[inner:inner_end], end, ints


@settings(max_examples=800, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=14))
def test_rust_scan_accepts_the_regular_expressions_language(pieces):
    text = "".join(pieces)
    expected, found = regex_read(text), rust_read(text)
    assert (expected is None) == (found is None), text
    if found is not None:
        assert found[:2] == expected
        assert found[2].tolist() == np.fromstring(expected[0], dtype=np.int64, sep=",").tolist()


# Lists of numbers of 1 to 20 digits (the expression stops at 18) and what may follow.
ITEMS = st.builds(lambda sign, digits: sign + digits, st.sampled_from(["", "-", "+", "- "]),
                  st.text("0123456789", min_size=1, max_size=20))
LISTS = st.builds(lambda pad, items, sep, tail: f"{pad}({pad}{sep.join(items)}{pad}){tail}",
                  st.sampled_from(["", " ", "\x0c", "\x0b"]),
                  st.lists(ITEMS, min_size=1, max_size=4),
                  st.sampled_from([",", ", ", " ,", ",,", " "]),
                  st.sampled_from(["", " ", "x", "_", ".", "'", '"', "0", ")", " AND"]))


@settings(max_examples=600, deadline=None)
@given(LISTS)
def test_rust_scan_agrees_on_lists_near_the_languages_edges(text):
    expected, found = regex_read(text), rust_read(text)
    assert (expected is None) == (found is None), repr(text)
    if found is not None:
        assert found[:2] == expected


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(-10**18 + 1, 10**18 - 1), min_size=1, max_size=50),
       st.sampled_from([", ", ",", " ,  ", "\t,\n"]), st.sampled_from(["", " ", "\x0b"]))
def test_rust_scan_reads_every_int64_list(values, sep, pad):
    text = f"{pad}({pad}{sep.join(map(str, values))}{pad}){pad} AND b = 1"
    assert regex_read(text) is not None
    assert rust_read(text)[2].tolist() == values
    assert querytext.int_sql(np.array(values)) == str(values)[1:-1]


def test_a_list_in_non_ascii_text_takes_the_general_path_to_the_same_values():
    for text in ["id IN (1, 2, 3) AND name = 'Zoë'", "id IN (1, 2, 3) AND name = 'Zoe'"]:
        (listed,) = querytext.scan(text).lists
        assert listed.ints.tolist() == [1, 2, 3] and listed.sql == "1, 2, 3"


# ---- only ASCII digits and SQL whitespace (issue 33) ------------------------------------------

#: a in -999..999 (every value three characters can write), b in 0..2.
SCHEMA = Schema([IntRange("a", -999, 999), IntRange("b", 0, 2)])


@pytest.fixture(scope="module")
def duck():
    """DuckDB over every tuple of SCHEMA's domain: its count of a condition is n_D."""
    con = duckdb.connect()
    con.register("d", SCHEMA.decode(np.arange(SCHEMA.size, dtype=np.uint64)))
    yield con
    con.close()


def duckdb_count(con, text: str) -> int | None:
    """DuckDB's count of the domain's tuples satisfying ``text``; None if it refuses it."""
    try:
        return con.execute(f"SELECT count(*) FROM d WHERE {text}").fetchone()[0]
    except duckdb.Error:
        return None


@pytest.mark.parametrize("text, character, problem", [
    # main: a bare ValueError from np.fromstring (\d and \s match them)
    ("a IN (٣)", r"character 7 is '٣' \(U\+0663 ARABIC-INDIC DIGIT THREE\)", "0-9"),
    ("a IN (1,\u00a02)", r"character 9 is '\\xa0' \(U\+00A0 NO-BREAK SPACE\)",
     "use an ordinary space"),
    ("a IN (1,\u20032)", r"character 9 is '\\u2003' \(U\+2003 EM SPACE\)", "ordinary space"),
    ("a IN (1, ٣) AND b = 'Zoë'", r"character 10 is '٣'", "0-9"),
    ("a IN (- 1, ٣)", r"character 12 is '٣'", "0-9"),  # main: read as -1, 3
    ("a IN (1, ²)", r"character 10 is '²' \(U\+00B2 SUPERSCRIPT TWO\)", "0-9"),
    ("a = ٣", r"character 5 is '٣'", "0-9"),
    # main: \x1c–\x1f taken as spaces (the Rust reader still does; the scan keeps them from it)
    ("a IN (1,\x1c2)", r"character 9 is '\\x1c' \(U\+001C\)", "control character"),
    ("a IN (\x1f1)", r"character 7 is '\\x1f'", "control character"),
    ("a\x1dIN (1)", r"character 2 is '\\x1d'", "control character"),
    ("a IN (1\x1e)", r"character 8 is '\\x1e'", "control character"),
    ("a IN (1, 2\x85)", r"character 11 is '\\x85'", "control character"),
    ("a IN (1\x00)", r"character 8 is '\\x00'", "control character"),
    # the position counts in the text as written
    ("  WHERE a IN (1,\u00a02)", r"character 17 is '\\xa0'", "ordinary space"),
    ("\u00a0a = 1", r"character 1 is '\\xa0'", "ordinary space"),
    ("SELECT count(*) FROM I WHERE a = \x1f1", r"character 34 is '\\x1f'", "control"),
    # sqlglot reads (,1) and (1,,2) as lists of one and two values; DuckDB refuses them
    ("a IN (,1)", r"character 7 is ',', after '\('", "an item is missing"),
    ("a IN (1, ,2)", r"character 10 is ',', after ','", "remove the comma"),
    # sqlglot reads (+) as Oracle's join marker and drops it: (1, +) was (1)
    ("a IN (+)", r"character 8 is '\)', after '\+'", "no operand"),
    ("a IN (1, + )", r"character 12 is '\)', after '\+'", "no operand"),
    ("a IN (+, 1)", r"character 8 is ',', after '\+'", "no operand"),
    ("a IN (--\r,1)", r"character 10 is ',', after '\('", "item is missing"),  # \r ends --
    # sqlglot reads 1e as a literal (main: a bare ValueError from float('1e'))
    ("a IN (0e)", r"character 8 is 'e', after '0'", r"an exponent needs its digits \(1e3"),
    ("a > 1.5E", r"character 8 is 'E', after '1.5'", "exponent needs its digits"),
])
def test_characters_sql_does_not_read_are_refused_by_name_and_position(duck, text, character,
                                                                       problem):
    assert duckdb_count(duck, text) is None or "\u00a0" in text or "\u2003" in text
    with pytest.raises(QueryError, match=f"^cannot parse .*: {character}.*{problem}"):
        Condition(SCHEMA, text)


@pytest.mark.parametrize("text", [
    "a IN (1,\x0b2)", "a IN (1,\x0c 2)", "a IN (\r\n1\t)", "a IN (-\t1, 2)",  # main: -\t1 crashed
    "a IN (-\x0b1, 2) AND b = 1", "a IN (1,\x0b2) /* é */",  # (non-ASCII: the expressions)
    "a IN (1, 2,)", "a IN (- 1, 3)", "a IN (+1)", "a IN (1 - 2)", "\x0ba = 1\x0c",
    "a = 1 -- \x1c in a comment\n", "a = 1 /* \u00a0 */", "a IN (1) /* ٣ */",
])
def test_sql_whitespace_and_ascii_digits_count_as_duckdb_counts(duck, text):
    assert count_domain(SCHEMA, text) == duckdb_count(duck, text), text


def test_the_rust_reader_never_sees_a_separator():
    """The Rust reader (intlist.rs, built to Python's \\s) still takes \\x1c–\\x1f
    as space; the scan hands it no text that holds one."""
    assert _core.scan_int_list("(\x1c7)", 0) is not None  # why the scan guards it
    assert querytext._INT_LIST.match("(\x1c7)") is None
    with pytest.raises(QueryError, match=r"character 7 is '\\x1c'"):
        querytext.scan("a IN (\x1c7)")


#: Items of an IN list: ASCII digits, signs, commas and SQL whitespace, among
#: Unicode digits (Arabic-Indic, Devanagari, fullwidth, superscript), Unicode
#: spaces and control characters.
ALPHABET = list("0123456789+-, \t\n\x0b\x0c\r") + [
    "٣", "۵", "७", "２", "²", "\u00a0", "\u2003", "\u3000", "\u2028", "\x85",
    "\x1c", "\x1d", "\x1e", "\x1f", "\x00", "\x7f"]
#: At most three characters between commas: every number fits a's domain.
INNER = st.lists(st.text(st.sampled_from(ALPHABET), max_size=3), max_size=4).map(",".join)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(INNER, st.sampled_from(["", " AND b < 2", " OR b = 0"]))
def test_in_lists_are_refused_or_counted_as_duckdb_counts(duck, inner, tail):
    """privpub refuses the text with a QueryError (never another exception), or
    counts what DuckDB counts, on both of its paths: n_D (numpy over the truth
    table) and the count of a frame (DuckDB on privpub's SQL)."""
    text = f"a IN ({inner}){tail}"
    expected = duckdb_count(duck, text)
    try:
        n_domain = count_domain(SCHEMA, text)
    except QueryError:
        return
    assert n_domain == expected, repr(text)
    frame = SCHEMA.decode(np.arange(SCHEMA.size, dtype=np.uint64))
    assert Condition(SCHEMA, text).count(frame) == expected, repr(text)
