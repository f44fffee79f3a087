"""The Rust reader of integer IN lists accepts exactly what the scan's
regular expression accepts (on ASCII text), and reads the same values."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from privpub import _core
from privpub.counting import querytext

# Characters around and inside lists: the ones the language turns on.
PIECES = ["(", ")", ",", " ", "\t", "\x1c", "\n", "-", "+", ".", "'", '"', "_", "x", "e",
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
                  st.sampled_from(["", " ", "\x1c", "\x0b"]),
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
       st.sampled_from([", ", ",", " ,  ", "\t,\n"]), st.sampled_from(["", " ", "\x1f"]))
def test_rust_scan_reads_every_int64_list(values, sep, pad):
    text = f"{pad}({pad}{sep.join(map(str, values))}{pad}){pad} AND b = 1"
    assert regex_read(text) is not None
    assert rust_read(text)[2].tolist() == values
    assert querytext.int_sql(np.array(values)) == str(values)[1:-1]


def test_a_list_in_non_ascii_text_takes_the_general_path_to_the_same_values():
    for text in ["id IN (1, 2, 3) AND name = 'Zoë'", "id IN (1, 2, 3) AND name = 'Zoe'"]:
        (listed,) = querytext.scan(text).lists
        assert listed.ints.tolist() == [1, 2, 3] and listed.sql == "1, 2, 3"
