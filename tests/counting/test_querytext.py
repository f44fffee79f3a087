"""Query text is read by one parser (sqlparser's tokens and tree, in Rust;
issue 33): a literal IN list read off the tokens is the list the parser reads;
only ASCII digits and SQL whitespace are read, so any other text is refused by
name or counted as DuckDB counts it."""

import duckdb
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from privpub import Condition, IntRange, QueryError, Schema, _core, count_domain
from privpub.counting import querytext, querytree


def read(text: str):
    """The Rust reader's tree of ``text`` (limits as shipped)."""
    tree, _, _, _ = _core.query.parse_query(text, querytext.MAX_DEPTH, querytext.MAX_TERMS,
                                         querytext.MAX_VALUES)
    return tree


def plain(tree):
    """A tree with arrays as lists (comparable with ==)."""
    if isinstance(tree, np.ndarray):
        return ("ints", tree.tolist())
    if isinstance(tree, (tuple, list)):
        return type(tree)(plain(t) for t in tree)
    return tree


#: List items: numbers (signed, spaced, past int64, decimal, exponent), strings
#: with quotes, booleans.
ITEMS = st.one_of(
    st.integers(-2**70, 2**70).map(str),
    st.builds(lambda sign, n: f"{sign}{n}", st.sampled_from(["-", "- ", "+", "-\t"]),
              st.integers(0, 10**20)),
    st.sampled_from(["1.5", "-0.25", "1e3", "2.5E-1", ".5", "1.", "007", "1_000", "1e400"]),
    st.text(st.sampled_from("ab' %_"), max_size=4).map(lambda t: "'" + t.replace("'", "''") + "'"),
    st.sampled_from(["TRUE", "FALSE", "true"]),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(ITEMS, min_size=1, max_size=6), st.sampled_from([", ", ",", " ,\n"]))
def test_a_list_read_off_the_tokens_is_the_list_the_parser_reads(items, sep):
    """``IN (…)`` is folded into one value list before the parser runs; with a
    trailing comma (which the fold leaves alone) the parser reads the same
    list: the same values, the same SQL."""
    body = sep.join(items)
    folded, parsed = read(f"a IN ({body})"), read(f"a IN ({body},)")
    assert plain(folded) == plain(parsed), body
    assert folded[0] == "list"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-2**63, 2**63 - 1), min_size=1, max_size=50),
       st.sampled_from([", ", ",", " ,  ", "\t,\n"]), st.sampled_from(["", " ", "\x0b"]))
def test_every_int64_list_is_one_array(values, sep, pad):
    text = f"{pad}a IN ({pad}{sep.join(map(str, values))}{pad}){pad} AND b = 1"
    tree = read(text)
    assert tree[0] == "and" and tree[1][0][0] == "list"
    ints = tree[1][0][3]
    assert isinstance(ints, np.ndarray) and ints.dtype == np.int64 and ints.tolist() == values
    assert tree[1][0][4] == querytree.int_sql(np.array(values)) == str(values)[1:-1]


def test_a_list_in_non_ascii_text_is_read_the_same():
    for text in ["id IN (1, 2, 3) AND name = 'Zoë'", "id IN (1, 2, 3) AND name = 'Zoe'"]:
        listed = read(text)[1][0]
        assert listed[3].tolist() == [1, 2, 3] and listed[4] == "1, 2, 3"


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
    # main: \x1c–\x1f taken as spaces by \s (sqlparser keeps them as characters)
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
