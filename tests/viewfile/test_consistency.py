"""Row-group statistics are checked against the rows on every read (issue 35).

A release file's per-group statistics (rows, least and greatest domain index
per attribute) are sealed by a SHA-256 anyone can recompute. Here they are
forged the way anyone could: the privpub document in the footer edited and
resealed, no row or page touched. Each forgery of a group that a read reads
must be refused by that read with a StatisticsError naming the group, the
attribute and both ranges: the row count, the low and the high index, of an
attribute the query names (whether or not the count's pruning left its column
out of the count) and of one it does not name (a forged range the count does
not use changes nothing; the first read that reads the column refuses it).
What a count trusts without reading (a group it skips or counts whole) is
stated, and shown: that is what only a signature covers.

The file is a synthetic census at zero noise (α = 1, β = 0: the view is the
records), so every count is DuckDB's count of the same file; the issue's own
repro is on an αβ view of Adult.
"""

from __future__ import annotations

import json

import duckdb
import numpy as np
import pyarrow.parquet as pq
import pytest
from parquet_edit import edit_footer
from parquet_edit import field as _field

import privpub.viewfile.writer as writer
from privpub import AlphaBeta, ArtifactError, PublishedView, cli
from privpub.core.errors import StatisticsError
from privpub.datasets import load_adult, synthetic_census
from privpub.tables.distributed import open_dask
from privpub.viewfile import groupstats
from privpub.viewfile.layout import metadata_file

pytestmark = pytest.mark.filterwarnings("ignore::privpub.UsefulnessWarning",
                                        "ignore::privpub.PrivacyWarning")

GROUP = 1_000  # rows per row group of the census file: 20 groups


@pytest.fixture(scope="module")
def census(tmp_path_factory):
    """The synthetic census (20,000 records) published at zero noise, written
    in groups of GROUP rows: (view, path)."""
    df, schema = synthetic_census(20_000, seed=3)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(writer, "CHUNK_ROWS", GROUP)
        view = AlphaBeta(schema, 1.0, 0.0).publish(df, seed=0, duplicates="records")
        path = str(tmp_path_factory.mktemp("census") / "census.parquet")
        view.to_parquet(path)
    assert len(view) == len(df) and pq.ParquetFile(path).metadata.num_row_groups == 20
    return view, path


def _document(path) -> dict:
    return json.loads(pq.ParquetFile(path).metadata.metadata[b"privpub"])


def forged(path, out, edit, names, part: int = 0) -> str:
    """``path`` with the groups of its part ``part`` edited by ``edit`` and
    resealed, in the footer alone: every data page is the original's, byte for
    byte."""
    def document(doc):
        part_ = doc["digest"]["parts"][part]
        edit(part_["groups"])
        stats = tuple(groupstats.GroupStats(g["rows"], tuple(g["low"]), tuple(g["high"]),
                                            g["columns"]) for g in part_["groups"])
        part_["groups_sha256"] = groupstats.seal(stats, names)

    def footer(meta):
        for entry in _field(meta, 5)[2][1]:
            if _field(entry, 1)[2] == b"privpub":
                doc = json.loads(_field(entry, 2)[2])
                document(doc)
                _field(entry, 2)[2] = json.dumps(doc).encode()

    return str(edit_footer(path, out, footer))


def set_stat(group: int, side: str, index: int | None = None, value: int = 0):
    """An edit: group ``group``'s ``side`` (rows, or low / high of attribute
    ``index``) set to ``value``."""
    def edit(groups):
        if side == "rows":
            groups[group]["rows"] = value
        else:
            groups[group][side][index] = value
    return edit


def _duckdb(path, query: str) -> int:
    return duckdb.connect().execute(
        f"SELECT count(*) FROM read_parquet('{path}') WHERE {query}").fetchone()[0]


def _reads(view, path) -> tuple[int, str, str, str]:
    """A group that ``education = e`` must read (its education range spans e and
    more), a query on education alone, and an attribute it does not name whose
    range in that group is not a single value (workclass)."""
    groups = _document(path)["digest"]["parts"][0]["groups"]
    e = view.schema.names.index("education")
    for g, group in enumerate(groups):
        lo, hi = group["low"][e], group["high"][e]
        if 0 < lo < hi < view.schema["education"].size - 1:
            return g, f"education = {lo + 1}", "workclass", "education"
    raise AssertionError("no group with an inner education range")


# ---- zero noise: the pruned count is DuckDB's ---------------------------------------------------


def test_the_untouched_census_counts_as_duckdb(census):
    view, path = census
    opened = PublishedView.open(path)
    queries = ["gender = 0", "gender = 1 AND education < 5", "age BETWEEN 30 AND 40",
               "education = 9 AND workclass = 2", "country <> 0 AND race = 1",
               "NOT (marital = 2 OR occupation > 20)"]
    assert [e.n_view for e in opened.estimate_many(queries)] == \
        [_duckdb(path, q) for q in queries] == [view.count(q) for q in queries]
    # α = 1, β = 0: the estimate is the count.
    assert opened.estimate(queries[1]).value == _duckdb(path, queries[1])
    PublishedView.read_parquet(path)


# ---- a forged statistic of a group that is read ------------------------------------------------


def _refused_by_every_read(path, query: str, match: str, capsys) -> None:
    """open + estimate, estimate_many, read_parquet, open_dask and
    ``privpub estimate`` all refuse the file with a StatisticsError (the CLI
    with one line naming it)."""
    with pytest.raises(StatisticsError, match=match):
        PublishedView.open(path).estimate(query)
    with pytest.raises(StatisticsError, match=match):
        PublishedView.open(path).estimate_many(["gender = 0", query])
    with pytest.raises(StatisticsError, match=match):
        PublishedView.read_parquet(path)
    with pytest.raises(StatisticsError, match=match):
        open_dask(path).estimate(query)
    capsys.readouterr()
    assert cli.main(["estimate", str(path), query]) == 1
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("privpub: error: ") and "statistics say" in err


@pytest.mark.parametrize("side", ["low", "high"])
def test_a_forged_range_of_an_attribute_the_query_reads_is_refused(census, tmp_path, side,
                                                                   capsys):
    view, path = census
    g, query, _, name = _reads(view, path)
    j = view.schema.names.index(name)
    stats = _document(path)["digest"]["parts"][0]["groups"][g]
    lo, hi = stats["low"][j], stats["high"][j]
    # Widened by one: the group is still read, so the read that counts it sees it.
    value = lo - 1 if side == "low" else hi + 1
    bad = forged(path, tmp_path / "bad.parquet", set_stat(g, side, j, value), view.schema.names)
    stated = f"{value}..{hi}" if side == "low" else f"{lo}..{value}"
    match = f"row group {g}: column '{name}' holds indices {lo}..{hi} but its statistics say " \
            f"{stated}"
    _refused_by_every_read(bad, query, match, capsys)
    error = pytest.raises(StatisticsError, PublishedView.read_parquet, bad).value
    assert (error.group, error.attribute, error.stated, error.observed) == \
        (g, name, tuple(int(v) for v in stated.split("..")), (lo, hi))
    assert PublishedView.open(path).estimate(query).n_view == _duckdb(path, query)


@pytest.mark.parametrize("side", ["low", "high"])
def test_a_forged_range_of_an_attribute_the_query_does_not_name(census, tmp_path, side,
                                                                capsys):
    """A count of the group that does not name the attribute does not use its
    range (the count is the untouched file's); the first read that reads the
    column refuses it."""
    view, path = census
    g, query, other, _ = _reads(view, path)
    j = view.schema.names.index(other)
    stats = _document(path)["digest"]["parts"][0]["groups"][g]
    lo, hi = stats["low"][j], stats["high"][j]
    assert lo < hi
    value = lo + 1 if side == "low" else hi - 1  # narrowed: as a pruning forgery would be
    bad = forged(path, tmp_path / "bad.parquet", set_stat(g, side, j, value), view.schema.names)
    assert PublishedView.open(bad).estimate(query).n_view == _duckdb(path, query)
    naming = f"{query} AND {other} <> {lo}"  # reads the group, and now the column
    _refused_by_every_read(bad, naming, f"row group {g}: column '{other}' holds indices "
                                        f"{lo}..{hi}", capsys)


def test_a_range_the_pruning_trusts_inside_a_group_that_is_read_is_checked(census, tmp_path):
    """The issue's second case: a column the condition no longer depends on
    inside the group's (stated) box is not counted, but it is read and its
    range checked; a forged single value there does not move the count."""
    view, path = census
    names = view.schema.names
    groups = _document(path)["digest"]["parts"][0]["groups"]
    e, w = names.index("education"), names.index("workclass")
    g = next(g for g, s in enumerate(groups)
             if s["low"][e] < s["high"][e] and s["low"][w] < s["high"][w])
    low = groups[g]["low"][w]
    query = f"education = {groups[g]['low'][e]} AND workclass = {low}"
    # Stated: every row of the group has workclass = low (so the condition,
    # reduced, would count education alone).
    bad = forged(path, tmp_path / "bad.parquet", set_stat(g, "high", w, low), names)
    with pytest.raises(StatisticsError, match=f"row group {g}: column 'workclass'"):
        PublishedView.open(bad).estimate(query)
    assert PublishedView.open(path).estimate(query).n_view == _duckdb(path, query)


def test_a_forged_row_count_is_refused_on_open(census, tmp_path, capsys):
    view, path = census
    g, query, _, _ = _reads(view, path)
    bad = forged(path, tmp_path / "bad.parquet", set_stat(g, "rows", value=GROUP - 1),
                 view.schema.names)
    match = f"row group {g} holds {GROUP:,} rows but its statistics say {GROUP - 1:,}"
    _refused_by_every_read(bad, query, match, capsys)
    assert cli.main(["inspect", str(bad)]) == 1


def test_row_counts_moved_between_groups_are_never_used(census, tmp_path, capsys):
    """Counts that still add up to the part's but are not its groups' (as
    statistics of a file rewritten with other row groups are): none is used,
    every count reads the rows, and inspect says so."""
    view, path = census

    def move(groups):
        groups[3]["rows"] += 1
        groups[4]["rows"] -= 1

    bad = forged(path, tmp_path / "bad.parquet", move, view.schema.names)
    queries = ["education = 3", "gender = 1 AND age < 30"]
    assert [e.n_view for e in PublishedView.open(bad).estimate_many(queries)] == \
        [_duckdb(path, q) for q in queries]
    assert cli.main(["inspect", str(bad)]) == 0
    assert "row-group statistics: none in use" in capsys.readouterr().out


def test_a_forged_range_in_a_dask_directorys_part_is_refused(tmp_path):
    """A Dask release's directory: the statistics of a group of a part after
    the first forged in its metadata file; the full read and a count that reads the group
    (Dask counting, part by part) refuse it, naming the part file and group."""
    dd = pytest.importorskip("dask.dataframe")
    import dask

    df, schema = synthetic_census(3_000, seed=4)
    with dask.config.set(scheduler="synchronous"):
        release = AlphaBeta(schema, 1.0, 0.0).publish(dd.from_pandas(df, npartitions=3),
                                                      seed=0, duplicates="records")
        folder = tmp_path / "release"
        release.to_parquet(folder)
    meta = metadata_file(folder)
    parts = _document(meta)["digest"]["parts"]
    # A part and attribute whose stated low can be widened (not already index 0).
    k, j = next((k, j) for k in range(1, len(parts)) for j in range(len(schema))
                if parts[k]["groups"][0]["low"][j] > 0)
    stats = parts[k]["groups"][0]
    name, lo, hi = schema.names[j], stats["low"][j], stats["high"][j]
    query = f"{name} = {schema[name].lo + lo}"
    assert PublishedView.open(folder).estimate(query).n_view == \
        int((df[name] == schema[name].lo + lo).sum())
    forged(meta, meta, set_stat(0, "low", j, lo - 1), schema.names, part=k)
    match = f"part.{k}.parquet', row group 0: column '{name}' holds indices {lo}..{hi} but " \
            f"its statistics say {lo - 1}..{hi}"
    with pytest.raises(StatisticsError, match=match):
        PublishedView.read_parquet(folder)
    with dask.config.set(scheduler="synchronous"), pytest.raises(StatisticsError, match=match):
        open_dask(folder).estimate(query)


# ---- what a count trusts unread ----------------------------------------------------------------


def test_a_group_that_is_not_read_is_trusted_and_inspect_says_so(census, tmp_path, capsys):
    """A forged range that makes a count skip a group changes that count (only
    a signature covers it); a count that reads the group, and read_parquet,
    refuse it."""
    view, path = census
    names = view.schema.names
    groups = _document(path)["digest"]["parts"][0]["groups"]
    e = names.index("education")
    w = names.index("workclass")
    g = next(g for g, s in enumerate(groups)
             if s["low"][e] < s["high"][e] and s["low"][w] < s["high"][w])
    lo, hi = groups[g]["low"][e], groups[g]["high"][e]
    query = f"education = {lo}"

    def away(groups):
        groups[g]["low"][e] = groups[g]["high"][e] = hi  # skipped by `education = lo`

    bad = forged(path, tmp_path / "bad.parquet", away, names)
    assert PublishedView.open(bad).estimate(query).n_view < _duckdb(path, query)
    # Read (workclass spans more than one value there), education with it.
    reads = f"education = {hi} AND workclass = {groups[g]['low'][w]}"
    assert groups[g]["low"][w] < groups[g]["high"][w]
    with pytest.raises(StatisticsError, match=f"row group {g}: column 'education' holds "
                                              f"indices {lo}..{hi} but its statistics say "
                                              f"{hi}..{hi}"):
        PublishedView.open(bad).estimate(reads)
    with pytest.raises(StatisticsError):
        PublishedView.read_parquet(bad)
    assert cli.main(["inspect", str(bad)]) == 0
    out = capsys.readouterr().out
    assert "row-group statistics: 20 row groups" in out
    assert "skips or counts whole is not read" in out and "trusted unread" in out
    assert "(--trust) they are the publisher's, signed" in out


# ---- the issue's repro: an αβ view of Adult ----------------------------------------------------


@pytest.fixture(scope="module")
def adult(tmp_path_factory):
    df, schema = load_adult()
    view = AlphaBeta.for_privacy(schema, n=len(df), gamma=0.2, k=10).publish(
        df, seed=1, duplicates="records")
    path = str(tmp_path_factory.mktemp("adult") / "adult.parquet")
    view.to_parquet(path)
    return view, path


def test_the_issues_forgeries_on_adult(adult, tmp_path):
    view, path = adult
    names = view.schema.names
    age, sex = names.index("age"), names.index("sex")
    groups = _document(path)["digest"]["parts"][0]["groups"]
    assert len(groups) == 2 and groups[0]["low"][age] == 0 and groups[0]["high"][sex] == 1
    untouched = PublishedView.open(path)

    # Group 0's ages stated as [60, 63]: `age < 30` skips it unread (trusted:
    # only a signature covers that); a count that reads it, and read_parquet, refuse.
    def ages(groups):
        groups[0]["low"][age], groups[0]["high"][age] = 60, 63

    bad = forged(path, tmp_path / "ages.parquet", ages, names)
    assert PublishedView.open(bad).estimate("age < 30").n_view < \
        untouched.estimate("age < 30").n_view
    inside = view.schema["age"].values[61]  # index 61: within the stated [60, 63]
    for read in (lambda: PublishedView.open(bad).estimate(f"age = {inside}"),
                 lambda: PublishedView.read_parquet(bad)):
        with pytest.raises(StatisticsError, match=r"row group 0: column 'age' holds indices "
                                                  r"0\.\.61 but its statistics say 60\.\.63"):
            read()

    # Group 0's sexes stated as one: the count read the group but took the
    # stated range on trust (reduced `age < 30 AND sex = ...` to age alone).
    for side, value, query in (("low", 1, "age < 30 AND sex = 'Male'"),
                               ("high", 0, "age < 30 AND sex = 'Female'")):
        bad = forged(path, tmp_path / f"sex-{side}.parquet", set_stat(0, side, sex, value), names)
        with pytest.raises(StatisticsError, match="row group 0: column 'sex' holds indices"):
            PublishedView.open(bad).estimate(query)
        assert isinstance(pytest.raises(ArtifactError, PublishedView.read_parquet, bad).value,
                          StatisticsError)
    q = "age < 30 AND sex = 'Male'"
    assert untouched.estimate(q).n_view == view.count(q)
    np.testing.assert_array_equal(PublishedView.read_parquet(path).codes, view.codes)
