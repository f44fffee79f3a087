"""Edits to a release file are refused by the reads that see them (issue 22).

A release file is untrusted input. Every edit below, made the way someone
with the file and pyarrow (or a hex editor) would make it, must be refused
with an ArtifactError whose message names what is wrong: the rows (values
swapped, changed, moved, dropped, added, reordered; row groups dropped or
duplicated; dictionaries reordered; foreign rows), the file (truncated,
footer row counts overstated, extra or missing columns), the metadata
(hostile JSON: deep nesting, huge numbers and strings, wrong types for each
field, missing fields) and a Dask release's part files. An edit that leaves
the rows and metadata meaning the same (other row groups, another dictionary
order with the indices remapped) must still open.

Each hostile document is parsed in process: a 10^7-deep nesting must not
recurse, a 10^6-digit integer must not be converted, so nothing here may
blow up (no timing is asserted).

The swap tests are the ones an order-invariant check (the per-column sums of
format 2) passes: they fail if the digest is made order-invariant again.
"""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from parquet_edit import edit_footer
from parquet_edit import field as _field

from privpub import (
    FRAPP,
    AlphaBeta,
    ArtifactError,
    Categorical,
    IntRange,
    MultiViewPublisher,
    PrivpubError,
    PublishedView,
    Schema,
)
from privpub.core.artifacts import MAX_CONTAINERS, MAX_DEPTH, MAX_METADATA_BYTES
from privpub.viewfile import groupstats
from privpub.viewfile.layout import SET_COLUMN

N = 2_000
CITIES = [f"c{i:04d}" for i in range(3_000)]  # 3,000 values: 2-byte indices in the digest
SCHEMA = Schema([Categorical("sex", ["F", "M"]), IntRange("age", 0, 99),
                 Categorical("city", CITIES)])
GROUP = 10_000  # rows per row group when a test wants several


# The tiny tables' releases are weakly useful and seeded: said once by privpub, not here.
pytestmark = pytest.mark.filterwarnings("ignore::privpub.UsefulnessWarning",
                                        "ignore::privpub.PrivacyWarning")


def _records(seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"sex": rng.choice(["F", "M"], N), "age": rng.integers(0, 100, N),
                         "city": rng.choice(CITIES[:50], N)})


def _mechanism() -> AlphaBeta:
    return AlphaBeta.for_privacy(SCHEMA, n=N, gamma=0.2, k=10)


@pytest.fixture(scope="module")
def original(tmp_path_factory):
    """A view of ~60,000 rows written by privpub (one row group), and a copy
    rewritten with row groups of GROUP rows (the same rows and metadata)."""
    view = _mechanism().publish(_records(0), seed=1, duplicates="records")
    assert len(view) > 5 * GROUP
    folder = tmp_path_factory.mktemp("tampering")
    path = folder / "view.parquet"
    view.to_parquet(path)
    grouped = rewrite(path, folder / "grouped.parquet")
    assert pq.ParquetFile(grouped).metadata.num_row_groups > 5
    return view, path, grouped


@pytest.fixture(scope="module")
def multiview(tmp_path_factory):
    """The second view of a multi-view release: its file holds a context set."""
    pub = MultiViewPublisher(_mechanism(), max_views=2)
    pub.publish(_records(0), duplicates="records", seed=1)
    second = pub.publish(_records(0), duplicates="records", seed=2)
    assert second.context
    path = tmp_path_factory.mktemp("multiview") / "second.parquet"
    second.to_parquet(path)
    return second, path


# ---- editing files -----------------------------------------------------------------------------


def metadata_of(path) -> dict:
    return json.loads(pq.ParquetFile(path).metadata.metadata[b"privpub"])


def rewrite(path, out, edit_table=None, edit_meta=None, raw_meta=None, row_group_size=GROUP):
    """Copy a view file with its rows and/or metadata edited (pyarrow, as a user would)."""
    table = pq.read_table(path)
    meta = metadata_of(path)
    if edit_table is not None:
        table = edit_table(table)
    if edit_meta is not None:
        edit_meta(meta)
    document = raw_meta if raw_meta is not None else json.dumps(meta).encode()
    pq.write_table(table.replace_schema_metadata({b"privpub": document}), out,
                   row_group_size=row_group_size)
    return out


def indices(table, name) -> np.ndarray:
    """A column's values as domain indices (dictionary indices or ages)."""
    column = table.column(name).combine_chunks()
    if pa.types.is_dictionary(column.type):
        assert column.dictionary.to_pylist() == list(SCHEMA[name].values)
        return column.indices.to_numpy().astype(np.int64)
    return column.to_numpy().astype(np.int64)


def with_column(table, name, values: np.ndarray):
    """``table`` with column ``name`` replaced by domain indices ``values``."""
    old = table.column(name).combine_chunks()
    if pa.types.is_dictionary(old.type):
        new = pa.DictionaryArray.from_arrays(values.astype(old.indices.type.to_pandas_dtype()),
                                             old.dictionary)
    else:
        new = pa.array(values.astype(np.int64))
    return table.set_column(table.schema.get_field_index(name), name, new)


def differing(values: np.ndarray, start: int) -> int:
    """The first row after ``start`` whose value differs from row ``start``'s."""
    return start + 1 + int(np.flatnonzero(values[start + 1:] != values[start])[0])


def swap_in_column(name, i, j=None):
    def edit(table):
        values = indices(table, name)
        k = differing(values, i) if j is None else j
        assert values[i] != values[k]
        values[[i, k]] = values[[k, i]]
        return with_column(table, name, values)
    return edit


def take(order_of):
    def edit(table):
        order = order_of(table.num_rows)
        return table.take(pa.array(order))
    return edit


def fix_counts(delta):
    """Metadata edit: the stored row counts moved by ``delta``, consistently
    (the view's, the part's and its last row group's statistics, resealed)."""
    def edit(meta):
        meta["rows"] += delta
        move_part_rows(meta["digest"]["parts"][0], delta, -1)
    return edit


def move_part_rows(part: dict, delta: int, group: int) -> None:
    """A part's stored rows moved by ``delta``, and those of its row group
    ``group`` in its statistics, resealed as a forger would."""
    part["rows"] += delta
    if "groups" in part:
        part["groups"][group]["rows"] += delta
        stats = tuple(groupstats.GroupStats(g["rows"], tuple(g["low"]), tuple(g["high"]),
                                            g["columns"]) for g in part["groups"])
        part["groups_sha256"] = groupstats.seal(stats, SCHEMA.names)


def set_rows(total=None, groups=None, privpub=None):
    """A footer edit: FileMetaData.num_rows, each RowGroup.num_rows moved by
    ``groups`` (a list of deltas), the privpub row counts moved by ``privpub``."""
    def edit(meta):
        if total is not None:
            _field(meta, 3)[2] += total
        for delta, group in zip(groups or [], _field(meta, 4)[2][1], strict=False):
            _field(group, 3)[2] += delta
        if privpub is not None:
            set_document(meta, lambda doc: fix_counts(privpub)(doc))
    return edit


def set_document(meta, edit=None, raw=None):
    """A footer edit: the privpub document (its key-value entry) edited or replaced."""
    for entry in _field(meta, 5)[2][1]:
        if _field(entry, 1)[2] == b"privpub":
            value = _field(entry, 2)
            if raw is not None:
                value[2] = raw
            else:
                doc = json.loads(value[2])
                edit(doc)
                value[2] = json.dumps(doc).encode()


def with_document(raw: bytes):
    return lambda meta: set_document(meta, raw=raw)


# ---- what "refused" means ----------------------------------------------------------------------


def refused(path, match, *, count_all=True):
    """Refused with an ArtifactError matching ``match`` by read_parquet, and by
    open (at once, or by a full pass over every column, or by estimate(None)
    counting all rows, whichever comes first)."""
    with pytest.raises(ArtifactError, match=match) as info:
        PublishedView.read_parquet(path)
    assert isinstance(info.value, PrivpubError)
    if count_all:
        with pytest.raises(ArtifactError, match=match):
            PublishedView.open(path).estimate(None)
    with pytest.raises(ArtifactError, match=match):
        PublishedView.open(path).codes  # noqa: B018 (reads every column)


def accepted(path, view):
    for reopen in (PublishedView.read_parquet, PublishedView.open):
        again = reopen(path)
        np.testing.assert_array_equal(again.codes, view.codes)
        assert again.estimate(None) == view.estimate(None)


DIGEST = "does not match the digest"
ANY = "'sex'|'age'|'city'"


# ---- rows: edits an order-invariant check cannot see -------------------------------------------


SWAPS = {
    # Two rows' values exchanged in one column: the per-column multiset is unchanged.
    "swap two values in one column": (swap_in_column("city", 3), "'city'"),
    "swap two values in the 1-byte column": (swap_in_column("sex", 0), "'sex'"),
    "swap across row groups": (swap_in_column("age", 5, GROUP + 7), "'age'"),
    "swap two whole rows": (take(lambda n: np.r_[n - 1, 1:n - 1, 0]), ANY),
    "reverse the rows": (take(lambda n: np.arange(n)[::-1]), ANY),
    "sort one column": (lambda t: with_column(t, "age", np.sort(indices(t, "age"))), "'age'"),
    "rotate one column by a row": (lambda t: with_column(t, "city", np.roll(indices(t, "city"),
                                                                             1)), "'city'"),
    "move a row to another row group": (take(lambda n: np.r_[1:GROUP + 5, 0, GROUP + 5:n]),
                                        ANY),
}


@pytest.mark.parametrize("case", sorted(SWAPS))
def test_reordered_values_are_refused(original, tmp_path, case):
    view, path, grouped = original
    edit, column = SWAPS[case]
    bad = rewrite(grouped, tmp_path / "bad.parquet", edit_table=edit)
    assert not pq.read_table(bad).equals(pq.read_table(grouped))
    refused(bad, f"column ({column}) {DIGEST}", count_all=False)


def test_the_swap_that_moved_a_joint_estimate_is_refused(original, tmp_path):
    """The issue's edit: one column's values swapped between rows; the joint count
    changes while every column's multiset (and so format 2's sums) stays."""
    view, path, _ = original
    values = indices(pq.read_table(path), "sex")
    ages = indices(pq.read_table(path), "age")
    i = int(np.flatnonzero((values == 0) & (ages > 50))[0])
    j = int(np.flatnonzero((values == 1) & (ages <= 50))[0])
    bad = rewrite(path, tmp_path / "bad.parquet", edit_table=swap_in_column("sex", i, j))
    edited = pq.read_table(bad).to_pandas()
    query = "age > 50 and sex = 'F'"
    assert int(((edited.age > 50) & (edited.sex == "F")).sum()) == view.estimate(query).n_view - 1
    refused(bad, f"column 'sex' {DIGEST}", count_all=False)
    opened = PublishedView.open(bad)
    assert opened.estimate("age > 50").value == view.estimate("age > 50").value  # sex unread
    with pytest.raises(ArtifactError, match=f"'sex' {DIGEST}"):
        opened.estimate(query)


# ---- rows: changed, dropped, added, foreign ----------------------------------------------------


# (edit of the rows, edit of the metadata, what the error says, whether a count
# of all rows (estimate(None), which reads the narrowest column) must see it)
ROWS = {
    "one value changed": (lambda t: with_column(t, "sex", np.r_[1 - indices(t, "sex")[:1],
                                                                 indices(t, "sex")[1:]]),
                          None, f"'sex' {DIGEST}", True),
    "a row dropped, counts fixed": (take(lambda n: np.r_[0:100, 101:n]), fix_counts(-1),
                                    f"({ANY}) {DIGEST}", True),
    "a row duplicated, counts fixed": (take(lambda n: np.r_[0:101, 100:n]), fix_counts(1),
                                       f"({ANY}) {DIGEST}", True),
    "a row group dropped, counts fixed": (take(lambda n: np.r_[0:GROUP, 2 * GROUP:n]),
                                          fix_counts(-GROUP), f"({ANY}) {DIGEST}", True),
    "a row group duplicated, counts fixed": (take(lambda n: np.r_[0:2 * GROUP, GROUP:n]),
                                             fix_counts(GROUP), f"({ANY}) {DIGEST}", True),
    "a row group dropped": (take(lambda n: np.r_[0:GROUP, 2 * GROUP:n]), None,
                            "in its row groups but its metadata says", True),
    "a row added": (take(lambda n: np.r_[0:n, 0]), None,
                    "in its row groups but its metadata says", True),
    "the dictionary reordered": (
        lambda t: t.set_column(2, "city", pa.DictionaryArray.from_arrays(
            t.column("city").combine_chunks().indices,
            pa.array(CITIES[::-1]))), None, f"'city' {DIGEST}", False),
    "a dictionary value outside the domain": (
        lambda t: t.set_column(0, "sex", pa.DictionaryArray.from_arrays(
            t.column("sex").combine_chunks().indices, pa.array(["F", "X"]))), None,
        "value 'X' at row .* is not in the schema's domain", True),
    "an age outside the domain": (lambda t: with_column(t, "age", indices(t, "age") + 1), None,
                                  "value 100 at row .* not in the schema's domain", False),
    "ages stored as floats": (lambda t: t.set_column(1, "age", pa.array(
        indices(t, "age").astype(float) + 0.5)), None, "'age' holds float values", False),
    "a missing value": (lambda t: t.set_column(1, "age", pa.array(
        [None, *indices(t, "age")[1:].tolist()], pa.int64())), None, "missing value", False),
}


@pytest.mark.parametrize("case", sorted(ROWS))
def test_edited_rows_are_refused(original, tmp_path, case):
    _, _, grouped = original
    edit_table, edit_meta, match, count_all = ROWS[case]
    bad = rewrite(grouped, tmp_path / "bad.parquet", edit_table=edit_table, edit_meta=edit_meta)
    refused(bad, match, count_all=count_all)


def test_foreign_rows_are_refused(original, tmp_path):
    """Another seed's view (same schema, same parameters), cut to this view's
    length, under this view's metadata."""
    view, path, _ = original
    other = _mechanism().publish(_records(0), seed=2, duplicates="records")
    other_path = tmp_path / "other.parquet"
    other.to_parquet(other_path)
    rows = pq.read_table(other_path)
    rows = rows.slice(0, len(view)) if len(rows) >= len(view) else pa.concat_tables(
        [rows, rows.slice(0, len(view) - len(rows))])
    foreign = tmp_path / "foreign.parquet"
    pq.write_table(rows.replace_schema_metadata(
        {b"privpub": pq.ParquetFile(path).metadata.metadata[b"privpub"]}), foreign)
    refused(foreign, DIGEST)


def test_byte_flipped_in_the_data_pages_is_refused(original, tmp_path):
    _, path, _ = original
    data = bytearray(Path(path).read_bytes())
    column = pq.ParquetFile(path).metadata.row_group(0).column(2)  # city's chunk
    at = column.data_page_offset + column.total_compressed_size // 2
    data[at] ^= 0xFF
    bad = tmp_path / "flipped.parquet"
    bad.write_bytes(bytes(data))
    refused(bad, f"cannot be read|'city' {DIGEST}|not in the schema's domain", count_all=False)


# ---- rows: edits that change nothing must still open -------------------------------------------


def test_same_rows_in_other_row_groups_open(original, tmp_path):
    view, path, grouped = original
    accepted(grouped, view)
    small = rewrite(path, tmp_path / "small.parquet", row_group_size=777)
    accepted(small, view)


def test_same_values_under_another_dictionary_order_open(original, tmp_path):
    """The digest is over domain indices, not over the file's dictionary indices."""
    view, path, _ = original

    def reorder(table):
        city = table.column("city").combine_chunks()
        order = np.arange(len(CITIES))[::-1]  # dictionary position p holds CITIES[order[p]]
        position = np.argsort(order)
        remapped = position[city.indices.to_numpy()].astype(np.int16)
        return table.set_column(2, "city", pa.DictionaryArray.from_arrays(
            remapped, pa.array([CITIES[k] for k in order])))

    accepted(rewrite(path, tmp_path / "reordered.parquet", edit_table=reorder), view)
    plain = rewrite(path, tmp_path / "plain.parquet",
                    edit_table=lambda t: t.set_column(2, "city", t.column("city").cast(
                        pa.string())))
    accepted(plain, view)


# ---- the file: row counts in the footer, truncation, columns -----------------------------------


def test_footer_and_metadata_overstating_the_rows_are_refused(original, tmp_path):
    """The issue's file: footer and privpub metadata both say one row more than
    the row groups hold; open refuses it (it counts the row groups itself)."""
    view, path, _ = original
    bad = edit_footer(path, tmp_path / "bad.parquet", set_rows(total=1, privpub=1))
    assert pq.ParquetFile(bad).metadata.num_rows == len(view) + 1
    with pytest.raises(ArtifactError, match=f"footer says {len(view) + 1:,} rows but its row "
                                            f"groups hold {len(view):,}"):
        PublishedView.open(bad)
    refused(bad, "footer says")


def test_row_group_counts_overstated_too_are_refused_when_read(original, tmp_path):
    """Footer, row group and privpub counts all one too many: every count in the
    footer agrees, so open succeeds, but the rows actually read do not (and
    estimate(None) reads one column to count them instead of trusting the footer)."""
    view, path, _ = original
    bad = edit_footer(path, tmp_path / "bad.parquet", set_rows(total=1, groups=[1], privpub=1))
    opened = PublishedView.open(bad)
    assert len(opened) == len(view) + 1
    message = f"row group 0 holds {len(view):,} rows but its footer says {len(view) + 1:,}"
    with pytest.raises(ArtifactError, match=message):
        opened.estimate(None)
    refused(bad, message)


def test_a_row_group_count_edited_alone_is_refused(original, tmp_path):
    _, _, grouped = original
    bad = edit_footer(grouped, tmp_path / "bad.parquet", set_rows(groups=[1, -1]))
    bad2 = edit_footer(grouped, tmp_path / "bad2.parquet", set_rows(groups=[0, 0, 5]))
    refused(bad, "row group 0 holds 10,000 rows but its footer says 10,001")
    refused(bad2, "footer says .* rows but its row groups hold")


@pytest.mark.parametrize("where", ["empty", "magic", "first page", "middle", "footer",
                                   "footer length", "last byte", "junk appended"])
def test_truncated_files_are_refused(original, tmp_path, where):
    _, path, _ = original
    data = Path(path).read_bytes()
    footer = struct.unpack("<I", data[-8:-4])[0]
    cut = {"empty": 0, "magic": 2, "first page": 100, "middle": len(data) // 2,
           "footer": len(data) - 8 - footer // 2, "footer length": len(data) - 6,
           "last byte": len(data) - 1}
    bad = tmp_path / "cut.parquet"
    bad.write_bytes(data + b"junk" if where == "junk appended" else data[:cut[where]])
    for reopen in (PublishedView.open, PublishedView.read_parquet):
        with pytest.raises(ArtifactError, match="not a readable Parquet file"):
            reopen(bad)


COLUMNS = {
    "an extra column": (lambda t: t.append_column("extra", pa.array(np.zeros(t.num_rows))),
                        r"not in the schema \['extra'\]"),
    "a missing column": (lambda t: t.drop_columns(["age"]), r"missing \['age'\]"),
    "a renamed column": (lambda t: t.rename_columns(["sex", "AGE", "city"]),
                         r"missing \['age'\], not in the schema \['AGE'\]"),
    "a repeated column": (lambda t: t.append_column("age", t.column("age")),
                          r"repeated \['age'\]"),
    "a set column without context sets": (
        lambda t: t.append_column(SET_COLUMN, pa.array([""] * t.num_rows)),
        f"has a column '{SET_COLUMN}' but its metadata lists no context sets"),
}


@pytest.mark.parametrize("case", sorted(COLUMNS))
def test_other_columns_are_refused(original, tmp_path, case):
    _, path, _ = original
    edit, match = COLUMNS[case]
    bad = rewrite(path, tmp_path / "bad.parquet", edit_table=edit)
    for reopen in (PublishedView.open, PublishedView.read_parquet):
        with pytest.raises(ArtifactError, match=match):
            reopen(bad)


# ---- context sets (a multi-view file) ----------------------------------------------------------


def _context_rows(table) -> np.ndarray:
    return np.flatnonzero(table.column(SET_COLUMN).to_numpy(zero_copy_only=False) != "")


def test_a_context_entry_without_its_column_is_refused(original, tmp_path):
    _, path, _ = original

    def add_context(meta):
        meta["context"] = {"previous_union": 0}
        meta["digest"]["context"] = {"previous_union": {
            "rows": 0, "columns": dict(meta["digest"]["parts"][0]["columns"])}}

    bad = rewrite(path, tmp_path / "bad.parquet", edit_meta=add_context)
    for reopen in (PublishedView.open, PublishedView.read_parquet):
        with pytest.raises(ArtifactError, match=f"has no column '{SET_COLUMN}'"):
            reopen(bad)


def test_an_edited_context_set_is_refused_at_open(multiview, tmp_path):
    second, path = multiview

    def edit(table):
        sex = indices(table, "sex")
        row = int(_context_rows(table)[3])
        sex[row] = 1 - sex[row]
        return with_column(table, "sex", sex)

    bad = rewrite(path, tmp_path / "bad.parquet", edit_table=edit)
    for reopen in (PublishedView.open, PublishedView.read_parquet):
        with pytest.raises(ArtifactError, match=DIGEST):
            reopen(bad)


def test_a_view_row_relabelled_as_context_is_refused(multiview, tmp_path):
    second, path = multiview

    def relabel(table):
        labels = table.column(SET_COLUMN).combine_chunks()
        flags = labels.indices.to_numpy().copy()
        flags[0] = 1  # the first view row now claims to be in the context set
        return table.set_column(table.schema.get_field_index(SET_COLUMN), SET_COLUMN,
                                pa.DictionaryArray.from_arrays(flags, labels.dictionary))

    bad = rewrite(path, tmp_path / "bad.parquet", edit_table=relabel)
    for reopen in (PublishedView.open, PublishedView.read_parquet):
        with pytest.raises(ArtifactError, match="rows read|rows were dropped"):
            reopen(bad)


def test_context_sizes_that_disagree_with_the_digest_are_refused(multiview, tmp_path):
    _, path = multiview
    (name,) = metadata_of(path)["context"]
    bad = rewrite(path, tmp_path / "bad.parquet",
                  edit_meta=lambda m: m["context"].__setitem__(name, m["context"][name] + 1))
    with pytest.raises(ArtifactError, match="field 'context' .* does not match the digest"):
        PublishedView.open(bad)
    named = rewrite(path, tmp_path / "named.parquet",
                    edit_meta=lambda m: m["context"].__setitem__("", 0))
    with pytest.raises(ArtifactError, match="names a set '' "):
        PublishedView.open(named)


def test_untouched_multiview_file_opens(multiview):
    second, path = multiview
    for reopen in (PublishedView.read_parquet, PublishedView.open):
        again = reopen(path)
        np.testing.assert_array_equal(again.codes, second.codes)
        for name, codes in second.context.items():
            np.testing.assert_array_equal(again.context[name], codes)


# ---- hostile metadata ----------------------------------------------------------------------------


def _deep(depth: int) -> bytes:
    return b'{"format_version": 3, "kind": ' + b"[" * depth + b"]" * depth + b"}"


HOSTILE = {
    "10^7-deep nesting": (b"[" * 10**7 + b"]" * 10**7, f"nested more than {MAX_DEPTH} deep"),
    "10^6 nested objects": (b'{"a":' * 10**6 + b"1" + b"}" * 10**6, "nested more than"),
    "nesting one past the bound": (_deep(MAX_DEPTH), "nested more than"),
    "unclosed nesting": (b"[" * 10**6, "nested more than"),
    "brackets in a string are not nesting": (
        b'{"format_version": 3, "kind": "' + b"[" * 10**5 + b'"}', "field 'kind' = '\\[\\[\\["),
    "escaped quote hiding brackets": (b'{"kind": "\\"' + b"[" * 100 + b'"}',
                                      "field 'format_version' = None"),
    "a 5,000-digit integer": (b'{"format_version": ' + b"9" * 5_000 + b"}",
                              "an integer of 5,000 characters"),
    "a 10^6-digit integer": (b'{"rows": -' + b"7" * 10**6 + b"}",
                             "an integer of 1,000,000 characters"),
    "a 10^5-digit float": (b'{"rows": 1.' + b"5" * 10**5 + b"}", "a number of 100,002"),
    "more containers than the bound": (b"[" + b"[]," * MAX_CONTAINERS + b"[]]",
                                       "more than 1,048,576 objects and arrays"),
    "a document past the size bound": (b'"' + b"x" * MAX_METADATA_BYTES + b'"',
                                       f"bytes \\(at most {MAX_METADATA_BYTES:,}\\)"),
    "NaN": (b'{"format_version": NaN}', "NaN, which is not a JSON number"),
    "Infinity": (b'{"rows": -Infinity}', "-Infinity, which is not a JSON number"),
    "a key given twice": (b'{"format_version": 3, "format_version": 3}',
                          "the key 'format_version' twice"),
    "not UTF-8": (b'{"kind": "\xff\xfe"}', "not UTF-8"),
    "not JSON": (b'{"format_version": 3,', "not JSON"),
    "a JSON array": (b"[3]", "not a JSON object"),
    "an unterminated string of escapes": (b'{"kind": "' + b'\\"' * 10**6, "not JSON"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_metadata_is_refused(original, tmp_path, case):
    _, path, _ = original
    raw, match = HOSTILE[case]
    bad = edit_footer(path, tmp_path / "bad.parquet", with_document(raw))
    with pytest.raises(ArtifactError, match=match) as info:
        PublishedView.open(bad)
    assert len(str(info.value)) < 1_000  # a hostile value is not echoed whole


def test_a_huge_string_in_a_field_is_named_and_not_echoed(original, tmp_path):
    _, path, _ = original
    big = "m" * 10_000_000
    bad = edit_footer(path, tmp_path / "bad.parquet",
                      lambda meta: set_document(meta, lambda d: d.__setitem__("mechanism", big)))
    with pytest.raises(ArtifactError, match="field 'mechanism'") as info:
        PublishedView.open(bad)
    assert len(str(info.value)) < 1_000


def test_a_retired_format_says_to_republish(original, tmp_path):
    """Format 2 files (per-column sums that cannot see a swap) are not read."""
    _, path, _ = original

    def old(meta):
        meta["format_version"] = 2
        meta["fingerprint"] = {n: [1, 0, 0] for n in SCHEMA.names}
        del meta["digest"]

    bad = rewrite(path, tmp_path / "old.parquet", edit_meta=old)
    with pytest.raises(ArtifactError, match="'format_version' = 2: .*re-publish"):
        PublishedView.open(bad)


WRONG_TYPES = {
    "format_version": [None, "3", 3.0, True, [3], 4, -1],
    "kind": [None, 1, ["published_view"], {"a": 1}, "artifact"],
    "mechanism": [None, 1, ["alphabeta"], {"a": 1}, "magic"],
    "parameters": [None, 1, "alpha", [0.5], True],
    "seed_policy": [None, 1, ["os-csprng"], {"a": 1}, "trust me"],
    "library_version": [None, 1, ["0.1.0"], {"a": 1}],
    "schema": [None, 1, "x", [], {}, {"attributes": "x"}, {"attributes": []},
               {"attributes": [1]}, {"attributes": [{"type": "categorical", "name": "sex"}]},
               {"attributes": [{"type": "categorical", "name": "sex", "values": "FM"}]},
               {"attributes": [{"type": "bitmap", "name": "sex"}]},
               {"attributes": [{"type": "categorical", "name": "sex", "values": ["F", "M"],
                                "dtype": "int8"}]},
               {"attributes": [{"type": "categorical", "name": "sex", "values": ["F", "M"],
                                "dtype": []}]}],
    "domain_size": [None, 600_000, "600000.0", "x", ["600000"]],
    "rows": [None, "61744", 1.0, True, -1, [1], {"a": 1}],
    "context": [None, [], "x", 1, {"a": "1"}, {"a": -1}, {"a": None}],
    "digest": [None, [], "x", {}, {"algorithm": "sha256/domain-index-le"},
               {"algorithm": "md5", "parts": [], "context": {}}],
}
# The field named in the error: every field by its own name; a mechanism-level
# check names what it checked (the schema's m, the mechanism's parameters).
NAMED = {"schema": "schema|domain_size|error_bound"}


@pytest.mark.parametrize("field,value", [(f, v) for f, vs in WRONG_TYPES.items() for v in vs],
                         ids=[f"{f}={v!r}"[:40] for f, vs in WRONG_TYPES.items() for v in vs])
def test_a_field_of_the_wrong_type_is_named(original, tmp_path, field, value):
    _, path, _ = original
    bad = edit_footer(path, tmp_path / "bad.parquet",
                      lambda meta: set_document(meta, lambda d: d.__setitem__(field, value)))
    with pytest.raises(ArtifactError, match=NAMED.get(field, field)):
        PublishedView.open(bad)


@pytest.mark.parametrize("field", sorted(WRONG_TYPES))
def test_a_missing_field_is_named(original, tmp_path, field):
    _, path, _ = original
    bad = edit_footer(path, tmp_path / "bad.parquet",
                      lambda meta: set_document(meta, lambda d: d.pop(field)))
    with pytest.raises(ArtifactError, match=f"'{field}'"):
        PublishedView.open(bad)


def _parts(edit):
    return lambda d: edit(d["digest"]["parts"][0])


DIGEST_FIELDS = {
    "parts empty": (lambda d: d["digest"].__setitem__("parts", []), "'digest.parts'"),
    "two parts for one file": (lambda d: d["digest"]["parts"].append(d["digest"]["parts"][0]),
                               "field 'rows' = .* but the digest's parts hold"),
    "a part not an object": (lambda d: d["digest"]["parts"].__setitem__(0, [1]),
                             r"'digest.parts\[0\]' must be a JSON object"),
    "part rows as text": (_parts(lambda p: p.__setitem__("rows", "61744")),
                          r"'digest.parts\[0\].rows' must be a count"),
    "part columns missing one": (_parts(lambda p: p["columns"].pop("age")),
                                 r"missing \['age'\]"),
    "part columns with an extra": (_parts(lambda p: p["columns"].__setitem__("x", "0" * 64)),
                                   r"not in the schema \['x'\]"),
    "a digest not hex": (_parts(lambda p: p["columns"].__setitem__("sex", "z" * 64)),
                         "is not a SHA-256 digest"),
    "a digest in capitals": (_parts(lambda p: p["columns"].__setitem__(
        "sex", p["columns"]["sex"].upper())), "is not a SHA-256 digest"),
    "a digest cut short": (_parts(lambda p: p["columns"].__setitem__(
        "sex", p["columns"]["sex"][:63])), "is not a SHA-256 digest"),
    "a digest as a number": (_parts(lambda p: p["columns"].__setitem__("sex", 7)),
                             "is not a SHA-256 digest"),
    "another column's digest": (_parts(lambda p: p["columns"].__setitem__(
        "sex", p["columns"]["city"])), f"'sex' {DIGEST}"),
    "context digests not an object": (lambda d: d["digest"].__setitem__("context", []),
                                      "'digest.context' must be a JSON object"),
}


@pytest.mark.parametrize("case", sorted(DIGEST_FIELDS))
def test_a_malformed_digest_is_named(original, tmp_path, case):
    _, path, _ = original
    edit, match = DIGEST_FIELDS[case]
    bad = edit_footer(path, tmp_path / "bad.parquet", lambda meta: set_document(meta, edit))
    with pytest.raises(ArtifactError, match=match):
        PublishedView.read_parquet(bad)


PARAMETER_VALUES = [None, "0.5", [], {}, True, -1, 1e308, 10**30]


def test_each_parameter_of_the_wrong_type_is_an_artifact_error(original, tmp_path):
    """Every stored parameter, replaced by each wrong kind of value: an
    ArtifactError naming it (never a TypeError or KeyError from deep inside),
    unless the constructor accepts the value: None where a field is optional
    (d, gamma, calibration, records: a mechanism given by α and β alone, whose
    guarantee then claims less; source is None here already) and the opt-in
    flag set. Those are parameters a constructor takes, not a malformed file."""
    _, path, _ = original
    parameters = metadata_of(path)["parameters"]
    accepted_values = []
    for name in parameters:
        for value in PARAMETER_VALUES:
            bad = edit_footer(path, tmp_path / "bad.parquet", lambda meta, n=name, v=value:
                              set_document(meta, lambda d: d["parameters"].__setitem__(n, v)))
            try:
                PublishedView.open(bad)
            except ArtifactError as exc:
                assert "parameters" in str(exc) or name in str(exc), (name, value, exc)
                continue
            accepted_values.append((name, value))
    assert accepted_values == [("d", None), ("gamma", None), ("source", None),
                               ("calibration", None), ("allow_prior_below_base_rate", True),
                               ("records", None)]


# ---- a Dask release: one part file per range ---------------------------------------------------


@pytest.fixture(scope="module")
def directory(tmp_path_factory):
    dd = pytest.importorskip("dask.dataframe")
    import dask

    # FRAPP: its view is the n perturbed records, ranged by a sample of their
    # codes (αβ's ranges are whole β-step segments: one range for this small m).
    with dask.config.set(scheduler="synchronous"):
        release = FRAPP.for_privacy(SCHEMA, n=N, gamma=0.2, k=10).publish(
            dd.from_pandas(_records(0), npartitions=3), seed=1, duplicates="records")
        folder = tmp_path_factory.mktemp("dask") / "release"
        view = release.to_parquet(folder)
    assert len(view.rows.files) == 3
    return view, folder


def _copy(folder, tmp_path):
    out = tmp_path / "release"
    shutil.copytree(folder, out)
    return out


def _rewrite_part(folder, index, edit_table):
    part = folder / f"part.{index}.parquet"
    pq.write_table(edit_table(pq.read_table(part)), part)


def test_a_swap_inside_a_part_is_refused_naming_the_part(directory, tmp_path):
    import dask

    from privpub.tables.distributed import open_dask

    view, folder = directory
    bad = _copy(folder, tmp_path)
    _rewrite_part(bad, 1, swap_in_column("city", 2))
    refused(bad, f"part.1.parquet': column 'city' {DIGEST}", count_all=False)
    with dask.config.set(scheduler="synchronous"):
        on_dask = open_dask(bad)
        on_dask.estimate("age > 30")  # city unread: fine
        # Counted by row group: a city the part holds (its group is read, not
        # skipped by its statistics); the error names the part and the group.
        city = pq.read_table(bad / "part.1.parquet")["city"][2].as_py()
        with pytest.raises(ArtifactError,
                           match=f"part.1.parquet', row group 0: column 'city' {DIGEST}"):
            on_dask.estimate(f"city = '{city}'")


def test_swapped_part_files_are_refused(directory, tmp_path):
    _, folder = directory
    bad = _copy(folder, tmp_path)
    (bad / "part.0.parquet").rename(bad / "swap")
    (bad / "part.2.parquet").rename(bad / "part.0.parquet")
    (bad / "swap").rename(bad / "part.2.parquet")
    refused(bad, "part.0.parquet' holds .* rows in its row groups|part.0.parquet': column")


def test_a_removed_or_added_part_file_is_refused(directory, tmp_path):
    _, folder = directory
    fewer = _copy(folder, tmp_path / "fewer")
    (fewer / "part.2.parquet").unlink()
    more = _copy(folder, tmp_path / "more")
    shutil.copy(more / "part.1.parquet", more / "part.3.parquet")
    for bad, files in ((fewer, 2), (more, 4)):
        with pytest.raises(ArtifactError, match=f"has {files} part files but its metadata has "
                                                "a digest for 3"):
            PublishedView.open(bad)


def test_a_row_moved_between_parts_is_refused(directory, tmp_path):
    """The last row of part 0 moved to the front of part 1: the same rows in the
    same order overall, but not in the parts the digest says."""
    _, folder = directory
    bad = _copy(folder, tmp_path)
    first, second = (pq.read_table(bad / f"part.{i}.parquet") for i in (0, 1))
    pq.write_table(first.slice(0, first.num_rows - 1), bad / "part.0.parquet")
    pq.write_table(pa.concat_tables([first.slice(first.num_rows - 1), second]),
                   bad / "part.1.parquet")
    with pytest.raises(ArtifactError, match="part.0.parquet' holds .* rows in its row groups "
                                            "but its metadata says"):
        PublishedView.open(bad)
    fixed = bad / "_common_metadata"

    def move_count(meta):
        set_document(meta, lambda d: (move_part_rows(d["digest"]["parts"][0], -1, -1),
                                      move_part_rows(d["digest"]["parts"][1], 1, 0)))

    edit_footer(fixed, fixed, move_count)
    refused(bad, f"part.0.parquet': column '(sex|age|city)' {DIGEST}", count_all=False)


def test_the_untouched_directory_opens(directory):
    view, folder = directory
    accepted(folder, view)


def test_a_file_rewritten_in_place_is_read_anew_and_opens_share_nothing(original, tmp_path):
    """open() parses a document once per exact bytes: the same path with other
    bytes (metadata edited in place, the old one opened before) is checked
    anew and refused, and one opened view's parameters edited by its user do
    not reach another open of the same file."""
    _, path, _ = original
    here = tmp_path / "view.parquet"
    shutil.copy(path, here)
    first = PublishedView.open(here)
    stored = metadata_of(path)["parameters"]
    first.parameters["alpha"] = -1.0
    first.parameters["records"].clear()  # a nested value too
    again = PublishedView.open(here).parameters
    assert (again["alpha"], again["records"]) == (stored["alpha"], stored["records"]) != ({}, {})
    rewrite(path, here, edit_meta=lambda meta: meta.update(rows=meta["rows"] + 1))
    with pytest.raises(ArtifactError, match="field 'rows'"):
        PublishedView.open(here)
    shutil.copy(path, here)
    assert len(PublishedView.open(here)) == len(first)
