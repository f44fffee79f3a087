"""Reading columns back from Arrow: the digest taken batch by batch, and
dictionary indices that point outside their dictionary."""

from __future__ import annotations

import hashlib
import re

import numpy as np
import pyarrow as pa
import pytest

from privpub import ArtifactError, Categorical, IntRange, Schema
from privpub.viewfile.columns import file_digits
from privpub.viewfile.digest import Digest

SCHEMA = Schema([Categorical("c", ["x", "y", "z"]), IntRange("n", 0, 999)])


def test_a_digest_taken_batch_by_batch_is_the_whole_columns_sha256():
    """Batches are hashed on threads while the caller goes on: each column's hash
    must still take them in order, in the digest's width (int8, int16 here)."""
    rng = np.random.default_rng(0)
    batches = [{"c": rng.integers(0, 3, size, dtype=np.int64),
                "n": rng.integers(0, 1000, size, dtype=np.int64)}
               for size in (5_000, 1, 0, 70_000, 3_333)]
    found = Digest(SCHEMA, ["c", "n"])
    for batch in batches:
        found.add(batch)
    result = found.result()
    assert result.rows == 78_334
    for name, width in (("c", np.int8), ("n", np.int16)):
        whole = np.concatenate([b[name] for b in batches]).astype(np.dtype(width).newbyteorder("<"))
        assert result.columns[name] == hashlib.sha256(whole.tobytes()).hexdigest()


@pytest.mark.parametrize(("indices", "dictionary", "shown"), [
    ([0, 2, 3, 1], ["x", "y", "z"], "dictionary index 3 (its dictionary has 3 entries) at row 2"),
    ([0, -1], ["x", "y", "z"], "dictionary index -1 (its dictionary has 3 entries) at row 1"),
    ([1, 4], ["y", "x", "z", "w"], "dictionary index 4 (its dictionary has 4 entries) at row 1"),
    ([1, 3], ["y", "x", "z", "w"], "value 'w' at row 1"),
])
def test_indices_outside_their_dictionary_are_named_not_read(indices, dictionary, shown):
    """A damaged file's index past its dictionary (Arrow builds such arrays when
    not asked to check them) is named as an index: there is no value to show."""
    column = pa.DictionaryArray.from_arrays(np.array(indices, dtype=np.int8),
                                            pa.array(dictionary), safe=False)
    table = pa.table({"c": column, "n": np.zeros(len(indices), dtype=np.int64)})
    with pytest.raises(ArtifactError, match=re.escape(f"'f.parquet': column 'c': {shown}")):
        file_digits(SCHEMA, table, ["c", "n"], "'f.parquet'")


def test_indices_over_the_domain_itself_are_taken_as_they_are():
    """Written by privpub (the dictionary is the domain): no copy, read-only."""
    indices = np.array([2, 0, 1, 1], dtype=np.int8)
    column = pa.DictionaryArray.from_arrays(indices, pa.array(["x", "y", "z"]))
    table = pa.table({"c": column, "n": np.arange(4, dtype=np.int64)})
    digits = file_digits(SCHEMA, table, ["c", "n"], "f")
    np.testing.assert_array_equal(digits["c"], indices)
    assert not digits["c"].flags.writeable
    np.testing.assert_array_equal(digits["n"], np.arange(4))


def test_a_filled_dictionary_column_names_its_value_not_an_index():
    """A column with missing cells is decoded to be filled: what is outside the
    domain then is a value, shown as one."""
    schema = Schema([Categorical("c", ["x", "y", "z"], missing="x")])
    column = pa.DictionaryArray.from_arrays(pa.array([0, None, 1], type=pa.int8()),
                                            pa.array(["y", "w"]))
    with pytest.raises(ArtifactError, match=re.escape("column 'c': value 'w' at row 2")):
        file_digits(schema, pa.table({"c": column}), ["c"], "f")
