"""Schema, attribute domains and mixed-radix tuple codes (privpub.domain.schema)."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import privpub
from privpub import (
    Categorical,
    CodeError,
    DataTypeError,
    DomainError,
    IntRange,
    MissingValueError,
    PrivpubError,
    Schema,
    SchemaError,
)

# ---------------------------------------------------------------------------------------------
# brute force helpers
# ---------------------------------------------------------------------------------------------


def domain_values(attr) -> list:
    if isinstance(attr, IntRange):
        return list(range(attr.lo, attr.hi + 1))
    return list(attr.values)


def brute_codes(schema: Schema, df: pd.DataFrame) -> list[int]:
    """Mixed-radix codes computed with Python ints, first attribute most significant."""
    lookups = [{v: i for i, v in enumerate(domain_values(a))} for a in schema]
    codes = []
    for row in zip(*(df[a.name].tolist() for a in schema), strict=True):
        code = 0
        for value, lookup, radix in zip(row, lookups, schema.radices, strict=True):
            code = code * radix + lookup[value]
        codes.append(code)
    return codes


def mixed_frame() -> pd.DataFrame:
    """One column of every supported dtype."""
    return pd.DataFrame({
        "s": pd.Series(["b", "a", "c", "a", "b"]),  # pandas' default string dtype
        "o": pd.Series(["x", "y", "x", "x", "y"], dtype=object),
        "i64": np.array([5, 3, 5, 9, -2], dtype=np.int64),
        "i32": np.array([1, 2, 1, 2, 7], dtype=np.int32),
        "b": np.array([True, False, True, True, False]),
        "f": np.array([0.5, 1.5, 0.5, 2.25, -1.0]),
        "c": pd.Series(["u", "v", "u", "u", "w"], dtype="category"),
        "ci": pd.Series([10, 20, 10, 10, 30], dtype="category"),
    })


def assert_privpub_error(excinfo, cls, *needles):
    """The exception is `cls`, part of the privpub hierarchy, and names every needle."""
    assert type(excinfo.value) is cls, f"{type(excinfo.value).__name__} is not {cls.__name__}"
    assert isinstance(excinfo.value, PrivpubError)
    message = str(excinfo.value)
    for needle in needles:
        assert needle in message, f"{needle!r} not in {message!r}"


# ---------------------------------------------------------------------------------------------
# round trips
# ---------------------------------------------------------------------------------------------


def test_from_frame_round_trip_every_dtype():
    df = mixed_frame()
    with pytest.warns(privpub.PrivacyWarning, match="derived from the data"):
        schema = Schema.from_frame(df, exact_domain=["f"])  # (its floats kept on purpose)
    codes = schema.encode(df)
    assert codes.dtype == np.uint64 and codes.shape == (len(df),)
    assert codes.tolist() == brute_codes(schema, df)
    back = schema.decode(codes)
    pd.testing.assert_frame_equal(back, df)  # same values and dtypes, object stays object
    assert back["o"].dtype == np.dtype(object)


def test_explicit_schema_round_trip_categorical_and_intrange():
    schema = Schema([
        IntRange("a", -3, 4, dtype="int32"),
        IntRange("b", 0, 2),
        Categorical("c", [True, False]),
        Categorical("d", ["z", "y"], dtype="category"),
        Categorical("e", ["q", "p"], dtype="object"),
        Categorical("f", [2.5, -1.0]),
        Categorical("g", [30, 10, 20], dtype="int32"),
    ])
    df = pd.DataFrame({
        "a": np.array([-3, 4, 0, 1], dtype=np.int32),
        "b": [0, 2, 1, 2],
        "c": [False, True, True, False],
        "d": pd.Categorical(["y", "z", "y", "y"], categories=["z", "y"]),
        "e": pd.Series(["p", "q", "q", "p"], dtype=object),
        "f": [2.5, -1.0, -1.0, 2.5],
        "g": np.array([10, 30, 20, 20], dtype=np.int32),
    })
    codes = schema.encode(df)
    assert codes.tolist() == brute_codes(schema, df)
    pd.testing.assert_frame_equal(schema.decode(codes), df)


def test_docstring_example_codes():
    s = Schema([Categorical("sex", ["F", "M"]), IntRange("age", 0, 99)])
    assert s.size == 200
    codes = s.encode(pd.DataFrame({"sex": ["M", "F"], "age": [30, 7]}))
    assert codes.tolist() == [130, 7]


def test_codes_enumerate_the_domain_in_tuple_order():
    """Encoding every tuple of D in lexicographic order gives exactly 0, 1, ..., m-1."""
    schema = Schema([
        Categorical("x", ["c", "a", "b"]),
        IntRange("y", -1, 2),
        Categorical("z", [True, False]),
        Categorical("w", [0.5, 0.25, 8.0]),
    ])
    rows = list(itertools.product(*(domain_values(a) for a in schema)))
    df = pd.DataFrame(rows, columns=list(schema.names))
    codes = schema.encode(df)
    assert schema.size == 3 * 4 * 2 * 3 == len(rows)
    np.testing.assert_array_equal(codes, np.arange(schema.size, dtype=np.uint64))
    pd.testing.assert_frame_equal(schema.decode(codes), df)
    # And the decode of an arbitrary permutation is that permutation of rows.
    perm = np.random.default_rng(0).permutation(schema.size).astype(np.uint64)
    pd.testing.assert_frame_equal(schema.decode(perm), df.iloc[perm].reset_index(drop=True))


def test_category_column_with_unused_and_reordered_categories_encodes_by_value():
    schema = Schema([Categorical("c", ["a", "b", "c"])])
    col = pd.Categorical(["c", "a", "c"], categories=["zz", "c", "a", "b"])
    assert schema.encode(pd.DataFrame({"c": col})).tolist() == [2, 0, 2]


def test_extra_columns_ignored_and_empty_frame():
    schema = Schema([IntRange("a", 0, 3)])
    df = pd.DataFrame({"zzz": ["x", "y"], "a": [3, 1]})
    assert schema.encode(df).tolist() == [3, 1]
    empty = schema.encode(pd.DataFrame({"a": pd.Series([], dtype="int64")}))
    assert empty.shape == (0,) and empty.dtype == np.uint64
    assert len(schema.decode(np.array([], dtype=np.uint64))) == 0


def test_decode_accepts_python_ints_and_signed_arrays():
    schema = Schema([IntRange("a", 0, 3), Categorical("b", ["x", "y"])])
    expected = pd.DataFrame({"a": [3, 0], "b": pd.array(["y", "x"], dtype="str")})
    pd.testing.assert_frame_equal(schema.decode([7, 0]), expected)
    pd.testing.assert_frame_equal(schema.decode(np.array([7, 0], dtype=np.int32)), expected)


# ---------------------------------------------------------------------------------------------
# property test on random small schemas
# ---------------------------------------------------------------------------------------------

_TEXT = st.text(alphabet="abcxyzé ", min_size=0, max_size=4)


@st.composite
def attribute_and_column_dtype(draw, name: str):
    """An attribute and the pandas dtype its column (and its decode) has."""
    kind = draw(st.sampled_from(["range", "str", "int", "float", "bool"]))
    if kind == "range":
        lo = draw(st.integers(-2**62, 2**62))
        size = draw(st.integers(1, 9))
        fits_int32 = lo >= -2**31 and lo + size <= 2**31
        dtype = draw(st.sampled_from(["int64", "int32"])) if fits_int32 else "int64"
        return IntRange(name, lo, lo + size - 1, dtype=dtype), dtype
    if kind == "str":
        values = draw(st.lists(_TEXT, min_size=1, max_size=6, unique=True))
        dtype = draw(st.sampled_from(["str", "object", "category"]))
    elif kind == "int":
        values = draw(st.lists(st.integers(-2**40, 2**40), min_size=1, max_size=6, unique=True))
        dtype = draw(st.sampled_from(["int64", "category"]))
    elif kind == "float":
        floats = st.floats(allow_nan=False, allow_infinity=False, width=64)
        values = draw(st.lists(floats, min_size=1, max_size=5, unique=True))
        dtype = "float64"
    else:
        values = draw(st.permutations([False, True]).map(lambda p: p[: draw(st.integers(1, 2))]))
        dtype = "bool"
    return Categorical(name, values, dtype=dtype), dtype


@st.composite
def schema_and_frame(draw):
    k = draw(st.integers(1, 5))
    pairs = [draw(attribute_and_column_dtype(f"a{j}")) for j in range(k)]
    schema = Schema([a for a, _ in pairs])
    n = draw(st.integers(0, 25))
    data = {}
    for attr, dtype in pairs:
        values = domain_values(attr)
        idx = draw(st.lists(st.integers(0, len(values) - 1), min_size=n, max_size=n))
        picked = [values[i] for i in idx]
        if dtype == "category":
            data[attr.name] = pd.Categorical(picked, categories=values)
        else:
            data[attr.name] = pd.Series(picked, dtype=dtype)
    return schema, pd.DataFrame(data, index=pd.RangeIndex(n))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema_and_frame())
@pytest.mark.slow
def test_property_round_trip_and_brute_force_codes(case):
    schema, df = case
    assert schema.size == math.prod(len(domain_values(a)) for a in schema)
    codes = schema.encode(df)
    assert codes.dtype == np.uint64 and codes.shape == (len(df),)
    expected = brute_codes(schema, df)
    assert codes.tolist() == expected
    assert all(0 <= c < schema.size for c in expected)
    # Codes sort like tuples of domain indices.
    lookups = [{v: i for i, v in enumerate(domain_values(a))} for a in schema]
    tuples = [tuple(lk[v] for lk, v in zip(lookups, row, strict=True))
              for row in zip(*(df[a.name].tolist() for a in schema), strict=True)]
    assert sorted(range(len(df)), key=lambda i: (tuples[i], i)) == \
        sorted(range(len(df)), key=lambda i: (expected[i], i))
    pd.testing.assert_frame_equal(schema.decode(codes), df)
    assert schema.codes_to_ints(codes) == expected
    np.testing.assert_array_equal(schema.ints_to_codes(expected), codes)
    # The schema survives its JSON form.
    assert Schema.from_dict(json.loads(json.dumps(schema.to_dict()))) == schema


# ---------------------------------------------------------------------------------------------
# wide codes: m > 2^64 and m > 2^128
# ---------------------------------------------------------------------------------------------


def test_exactly_2_pow_64_stays_one_dimensional():
    schema = Schema([IntRange(f"x{i}", 0, 1) for i in range(64)])
    assert schema.size == 2**64 and schema.limbs == 1 and not schema.is_wide
    df = pd.DataFrame({f"x{i}": [1, 0, 1, i % 2] for i in range(64)})
    codes = schema.encode(df)
    assert codes.shape == (4,) and codes.dtype == np.uint64
    assert schema.codes_to_ints(codes) == brute_codes(schema, df)
    assert schema.codes_to_ints(codes)[0] == 2**64 - 1
    pd.testing.assert_frame_equal(schema.decode(codes), df)
    np.testing.assert_array_equal(schema.ints_to_codes([2**64 - 1, 0]), codes[:2])
    with pytest.raises(CodeError):
        schema.ints_to_codes([2**64])


def test_just_above_2_pow_64_is_wide():
    schema = Schema([IntRange(f"x{i}", 0, 1) for i in range(64)] + [IntRange("y", 0, 2)])
    assert schema.size == 3 * 2**64 and schema.limbs == 2 and schema.is_wide
    df = pd.DataFrame({**{f"x{i}": [1, 0] for i in range(64)}, "y": [2, 1]})
    codes = schema.encode(df)
    assert codes.shape == (2, 2)
    assert schema.codes_to_ints(codes) == [3 * 2**64 - 1, 1]
    # Most significant limb first.
    assert codes[0].tolist() == [2, 2**64 - 1] and codes[1].tolist() == [0, 1]
    pd.testing.assert_frame_equal(schema.decode(codes), df)


def test_twenty_decimal_digits():
    """20 attributes of 10 values: the code is the decimal number spelled by the digits."""
    schema = Schema([IntRange(f"d{i}", 0, 9) for i in range(20)])
    assert schema.size == 10**20 > 2**64 and schema.limbs == 2
    rng = np.random.default_rng(1)
    digits = rng.integers(0, 10, size=(200, 20))
    digits[0] = 9  # the largest code, m - 1
    digits[1] = 0
    df = pd.DataFrame(digits, columns=list(schema.names))
    codes = schema.encode(df)
    assert codes.shape == (200, schema.limbs) and codes.dtype == np.uint64
    ints = schema.codes_to_ints(codes)
    assert ints == [int("".join(map(str, row))) for row in digits] == brute_codes(schema, df)
    assert ints[0] == 10**20 - 1 and ints[1] == 0
    np.testing.assert_array_equal(schema.ints_to_codes(ints), codes)
    pd.testing.assert_frame_equal(schema.decode(codes), df)
    pd.testing.assert_frame_equal(schema.decode(ints), df)
    # Rows of the (n, limbs) array compare lexicographically like the integers.
    by_rows = sorted(range(200), key=lambda i: (tuple(codes[i].tolist()), i))
    by_ints = sorted(range(200), key=lambda i: (ints[i], i))
    assert by_rows == by_ints


def test_forty_attributes_of_a_thousand_values_past_2_pow_128():
    schema = Schema([IntRange(f"a{i}", -500, 499) for i in range(20)]
                    + [Categorical(f"c{i}", [f"v{j}" for j in range(1000)]) for i in range(20)])
    assert schema.size == 1000**40 > 2**128
    assert schema.limbs == math.ceil((1000**40 - 1).bit_length() / 64) == 7
    rng = np.random.default_rng(2)
    idx = rng.integers(0, 1000, size=(50, 40))
    idx[0] = 999
    df = pd.DataFrame({**{f"a{i}": idx[:, i] - 500 for i in range(20)},
                       **{f"c{i}": pd.Series([f"v{j}" for j in idx[:, 20 + i]])
                          for i in range(20)}})
    codes = schema.encode(df)
    assert codes.shape == (50, 7) and codes.dtype == np.uint64
    ints = schema.codes_to_ints(codes)
    assert ints == brute_codes(schema, df)
    assert ints == [sum(int(d) * 1000**(39 - j) for j, d in enumerate(row)) for row in idx]
    assert ints[0] == 1000**40 - 1
    np.testing.assert_array_equal(schema.ints_to_codes(ints), codes)
    pd.testing.assert_frame_equal(schema.decode(codes), df)
    with pytest.raises(CodeError) as ei:
        schema.ints_to_codes([1000**40])
    assert_privpub_error(ei, CodeError, str(1000**40))
    with pytest.raises(CodeError) as ei:
        schema.decode(np.vstack([codes[:1], np.full((1, 7), 2**64 - 1, dtype=np.uint64)]))
    assert_privpub_error(ei, CodeError, str(2**448 - 1), "row 1")
    empty = schema.encode(df.iloc[:0])
    assert empty.shape == (0, 7)


# ---------------------------------------------------------------------------------------------
# from_frame inference
# ---------------------------------------------------------------------------------------------


def test_from_frame_active_domains_sorted_and_dtypes_remembered():
    df = mixed_frame()
    with pytest.warns(privpub.PrivacyWarning, match="derived from the data"):
        schema = Schema.from_frame(df, exact_domain=["f"])
    assert schema.names == tuple(df.columns)
    assert schema["s"].values == ("a", "b", "c")
    assert schema["o"].values == ("x", "y")
    assert schema["i64"].values == (-2, 3, 5, 9)
    assert schema["i32"].values == (1, 2, 7)
    assert schema["b"].values == (False, True)
    assert schema["f"].values == (-1.0, 0.5, 1.5, 2.25)
    assert schema["ci"].values == (10, 20, 30)
    assert schema.radices == (3, 2, 4, 3, 2, 4, 3, 3)
    assert schema.size == math.prod(schema.radices)
    for name in df.columns:
        assert isinstance(schema[name], Categorical)
        assert schema[name].dtype == str(df[name].dtype)
    assert schema["o"].dtype == "object" and schema["c"].dtype == "category"


def test_from_frame_category_is_a_declared_domain():
    """A categorical column declares its domain: unobserved categories are kept
    (sorted when unordered), an ordered one keeps its order."""
    col = pd.Categorical(["m", "k", "m"], categories=["z", "m", "a", "k"])
    df = pd.DataFrame({"c": col})
    schema = Schema.from_frame(df)
    assert schema["c"].values == ("a", "k", "m", "z") and not schema["c"].ordered
    back = schema.decode(schema.encode(df))
    assert list(back["c"].cat.categories) == ["a", "k", "m", "z"]
    assert back["c"].tolist() == ["m", "k", "m"]
    ordered = pd.DataFrame({"c": pd.Categorical(["m", "k"], categories=["z", "m", "a", "k"],
                                                ordered=True)})
    schema = Schema.from_frame(ordered)
    assert schema["c"].values == ("z", "m", "a", "k") and schema["c"].ordered
    back = schema.decode(schema.encode(ordered))
    assert back["c"].cat.ordered and list(back["c"].cat.categories) == ["z", "m", "a", "k"]


def test_from_frame_columns_subset_in_given_order():
    df = mixed_frame()
    with pytest.warns(privpub.PrivacyWarning, match="derived from the data"):
        schema = Schema.from_frame(df, columns=["i32", "s"])
    assert schema.names == ("i32", "s")
    back = schema.decode(schema.encode(df))
    pd.testing.assert_frame_equal(back, df[["i32", "s"]])


def test_from_frame_uint64_above_int64_max():
    df = pd.DataFrame({"u": np.array([1, 2**64 - 1, 1], dtype=np.uint64)})
    with pytest.warns(privpub.PrivacyWarning, match="derived from the data"):
        schema = Schema.from_frame(df)
    assert schema["u"].values == (1, 2**64 - 1)
    pd.testing.assert_frame_equal(schema.decode(schema.encode(df)), df)


def test_from_frame_rejects_missing_mixed_and_empty():
    with pytest.raises(MissingValueError) as ei:
        Schema.from_frame(pd.DataFrame({"a": [1.0, np.nan]}))
    assert_privpub_error(ei, MissingValueError, "'a'", "NaN")
    with pytest.raises(DataTypeError) as ei:
        Schema.from_frame(pd.DataFrame({"mix": pd.Series(["a", 2], dtype=object)}))
    assert_privpub_error(ei, DataTypeError, "'mix'", "2")
    with pytest.raises(SchemaError) as ei:
        Schema.from_frame(pd.DataFrame({"e": pd.Series([], dtype=object)}))
    assert_privpub_error(ei, SchemaError, "'e'")
    with pytest.raises(SchemaError) as ei:
        Schema.from_frame(pd.DataFrame({"a": [1]}), columns=["nope"])
    assert_privpub_error(ei, SchemaError, "'nope'")


# ---------------------------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------------------------

COLOR_AGE = Schema([Categorical("color", ["red", "green"]), IntRange("age", 10, 20)])


@pytest.mark.parametrize(("frame", "column", "value", "row"), [
    ({"color": ["red", "blue"], "age": [10, 11]}, "color", "'blue'", "row 1"),
    ({"color": pd.Categorical(["red", "purple"]), "age": [10, 11]}, "color", "'purple'", "row 1"),
    ({"color": ["red", "red"], "age": [10, 21]}, "age", "21", "row 1"),
    ({"color": ["red", "red"], "age": [9, 11]}, "age", "9", "row 0"),
    ({"color": ["red", "red"], "age": np.array([11, -2**63], dtype=np.int64)}, "age",
     str(-2**63), "row 1"),
    ({"color": ["red", "red"], "age": np.array([10, 2**63 + 5], dtype=np.uint64)}, "age",
     str(2**63 + 5), "row 1"),
])
def test_out_of_domain(frame, column, value, row):
    with pytest.raises(DomainError) as ei:
        COLOR_AGE.encode(pd.DataFrame(frame))
    assert_privpub_error(ei, DomainError, f"'{column}'", value, row)


def test_out_of_domain_names_the_row_label_and_counts():
    df = pd.DataFrame({"color": ["red", "teal", "cyan"], "age": [10, 11, 12]}, index=[7, 8, 9])
    with pytest.raises(DomainError) as ei:
        COLOR_AGE.encode(df)
    assert_privpub_error(ei, DomainError, "'color'", "'teal'", "row 8", "2 row(s)")


def test_uint64_above_int64_max_for_a_huge_range_and_a_categorical():
    big = Schema([IntRange("x", 0, 2**63 - 1)])
    with pytest.raises(DomainError) as ei:
        big.encode(pd.DataFrame({"x": np.array([1, 2**64 - 1], dtype=np.uint64)}))
    assert_privpub_error(ei, DomainError, "'x'", str(2**64 - 1))
    cat = Schema([Categorical("x", [0, 1, 2])])
    with pytest.raises(DomainError) as ei:
        cat.encode(pd.DataFrame({"x": np.array([1, 2**64 - 1], dtype=np.uint64)}))
    assert_privpub_error(ei, DomainError, "'x'", str(2**64 - 1))


@pytest.mark.parametrize("column", [
    pd.Series(["red", None]),
    pd.Series(["red", None], dtype=object),
    pd.Series(["red", np.nan], dtype=object),
    pd.Categorical(["red", None]),
])
def test_missing_strings(column):
    with pytest.raises(MissingValueError) as ei:
        COLOR_AGE.encode(pd.DataFrame({"color": column, "age": [10, 11]}))
    assert_privpub_error(ei, MissingValueError, "'color'", "NaN/None", "row 1")
    assert isinstance(ei.value, DomainError)


def test_missing_number():
    with pytest.raises(MissingValueError) as ei:
        COLOR_AGE.encode(pd.DataFrame({"color": ["red", "red"], "age": [10, np.nan]}))
    assert_privpub_error(ei, MissingValueError, "'age'", "NaN/None", "row 1")


@pytest.mark.parametrize(("frame", "column", "value"), [
    ({"color": [1, 2], "age": [10, 11]}, "color", "1"),
    ({"color": ["red", "red"], "age": [10.0, 11.0]}, "age", "10.0"),
    ({"color": ["red", "red"], "age": [True, False]}, "age", "True"),
    ({"color": ["red", "red"], "age": ["10", "11"]}, "age", "'10'"),
    ({"color": pd.Series(["red", 3], dtype=object), "age": [10, 11]}, "color", "3"),
    ({"color": pd.Series(["red", b"red"], dtype=object), "age": [10, 11]}, "color", "b'red'"),
])
def test_wrong_types(frame, column, value):
    with pytest.raises(DataTypeError) as ei:
        COLOR_AGE.encode(pd.DataFrame(frame))
    assert_privpub_error(ei, DataTypeError, f"'{column}'", value)
    assert isinstance(ei.value, TypeError)


def test_not_a_frame():
    with pytest.raises(DataTypeError) as ei:
        COLOR_AGE.encode({"color": ["red"], "age": [10]})
    assert_privpub_error(ei, DataTypeError, "dict")


def test_missing_column():
    with pytest.raises(SchemaError) as ei:
        COLOR_AGE.encode(pd.DataFrame({"color": ["red"]}))
    assert_privpub_error(ei, SchemaError, "'age'", "color")


def test_duplicate_column_in_frame():
    df = pd.DataFrame([["red", 10, 11]], columns=["color", "age", "age"])
    with pytest.raises(SchemaError) as ei:
        COLOR_AGE.encode(df)
    assert_privpub_error(ei, SchemaError, "'age'")


def test_duplicate_attribute_names():
    with pytest.raises(SchemaError) as ei:
        Schema([Categorical("a", [1]), IntRange("a", 0, 1)])
    assert_privpub_error(ei, SchemaError, "'a'")


@pytest.mark.parametrize(("make", "needles"), [
    (lambda: Categorical("empty", []), ["'empty'", "empty domain"]),
    (lambda: IntRange("rng", 5, 4), ["'rng'", "lo=5", "hi=4"]),
    (lambda: Categorical("dup", ["x", "y", "x"]), ["'dup'", "'x'"]),
    (lambda: Categorical("dupi", [1, 2, 2]), ["'dupi'", "2"]),
    (lambda: Categorical("nan", ["a", None]), ["'nan'", "NaN/None"]),
    (lambda: Categorical("mix", ["a", 1]), ["'mix'", "integer", "string"]),
    (lambda: Categorical("odd", [b"a"]), ["'odd'", "b'a'"]),
    (lambda: Categorical("", ["a"]), ["''"]),
    (lambda: IntRange("r", 0, 2**63), ["'r'", str(2**63)]),
    (lambda: IntRange("r", 0.0, 2), ["'r'", "0.0"]),
    (lambda: IntRange("r", 0, 300, dtype="int8"), ["'r'", "int8", "300"]),
    (lambda: IntRange("r", 0, 3, dtype="float64"), ["'r'", "float64"]),
    (lambda: Categorical("d", ["a"], dtype="not-a-dtype"), ["'d'", "not-a-dtype"]),
    (lambda: Schema([]), ["at least one"]),
    (lambda: Schema(["a"]), ["'a'"]),
])
def test_bad_schemas(make, needles):
    with pytest.raises(SchemaError) as ei:
        make()
    assert_privpub_error(ei, SchemaError, *needles)


def test_bad_codes():
    schema = Schema([IntRange("a", 0, 3), Categorical("b", ["x", "y", "z"])])  # m = 12
    cases = [
        (np.array([0, 12], dtype=np.uint64), ["12", "row 1", "m = 12"]),
        (np.array([0, 2**64 - 1], dtype=np.uint64), [str(2**64 - 1), "row 1"]),
        ([0, 12], ["12"]),
        (np.array([3, -1]), ["-1"]),
        ([3, -1], ["-1"]),
        ([1.0], ["1.0"]),
        (np.zeros((2, 2), dtype=np.uint64), ["(2, 2)"]),
        (np.array([0.0, 1.0]), ["float64"]),
        (np.uint64(3), ["3"]),
        (np.array(3, dtype=np.uint64), ["3"]),
    ]
    for codes, needles in cases:
        with pytest.raises(CodeError) as ei:
            schema.decode(codes)
        assert_privpub_error(ei, CodeError, *needles)


def test_bad_wide_codes():
    schema = Schema([IntRange(f"d{i}", 0, 9) for i in range(20)])
    cases = [
        (np.zeros(3, dtype=np.uint64), ["(3,)", "2"]),
        (np.zeros((3, 3), dtype=np.uint64), ["(3, 3)"]),
        (np.array([[0, 0], [-1, 0]]), ["-1"]),
        (np.zeros((2, 2)), ["float64"]),
        (schema.ints_to_codes([10**20 - 1]) + np.array([[0, 1]], dtype=np.uint64), [
            str(10**20), "row 0"]),
    ]
    for codes, needles in cases:
        with pytest.raises(CodeError) as ei:
            schema.decode(codes)
        assert_privpub_error(ei, CodeError, *needles)


# ---------------------------------------------------------------------------------------------
# dict form, repr, access
# ---------------------------------------------------------------------------------------------


def test_to_dict_from_dict_round_trip():
    schema = Schema([
        IntRange("a", -3, 4, dtype="int32"),
        Categorical("b", [True, False]),
        Categorical("c", ["z", "y"], dtype="category"),
        Categorical("d", ["q", "p"], dtype="object"),
        Categorical("e", [2.5, -1.0]),
        Categorical("f", [2**64 - 1, 0], dtype="uint64"),
    ])
    d = schema.to_dict()
    again = Schema.from_dict(json.loads(json.dumps(d)))
    assert again == schema and hash(again) == hash(schema)
    assert again.to_dict() == d
    for a, b in zip(schema, again, strict=True):
        assert type(a) is type(b) and a.dtype == b.dtype
    assert d["attributes"][0] == {"type": "int_range", "name": "a", "lo": -3, "hi": 4,
                                  "dtype": "int32"}
    with pytest.warns(privpub.PrivacyWarning, match="derived from the data"):
        inferred = Schema.from_frame(mixed_frame(), exact_domain=["f"])
    assert Schema.from_dict(inferred.to_dict()) == inferred
    # Equality is by content.
    assert schema != Schema(list(schema)[:-1])
    assert Categorical("x", ["a", "b"]) != Categorical("x", ["b", "a"])


@pytest.mark.parametrize("bad", [
    [], {"attrs": []}, {"attributes": [{"type": "weird", "name": "x"}]},
])
def test_from_dict_rejects(bad):
    with pytest.raises(SchemaError):
        Schema.from_dict(bad)


def test_repr_shows_m_and_attributes():
    schema = Schema([Categorical("sex", ["F", "M"]), IntRange("age", 0, 99)])
    text = repr(schema)
    assert "m = 200" in text and "sex" in text and "integers 0..99" in text
    big = Schema([IntRange(f"d{i}", 0, 9) for i in range(20)])
    assert f"m = {10**20:,}" in repr(big)
    assert "5 values" in repr(Categorical("x", list("abcde")))


def test_access():
    assert COLOR_AGE.names == ("color", "age") and len(COLOR_AGE) == 2
    assert [a.name for a in COLOR_AGE] == ["color", "age"]
    assert COLOR_AGE["age"].size == 11
    with pytest.raises(SchemaError) as ei:
        COLOR_AGE["nope"]
    assert_privpub_error(ei, SchemaError, "'nope'")


def test_error_hierarchy():
    for cls in (SchemaError, DomainError, MissingValueError, DataTypeError, CodeError,
                privpub.ParameterError, privpub.ArtifactError):
        assert issubclass(cls, PrivpubError)
    assert issubclass(DataTypeError, TypeError) and issubclass(DomainError, ValueError)
