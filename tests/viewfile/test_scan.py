"""Counting over a view file by row group (privpub.viewfile.scan, .decide).

Pruned counts (groups skipped, counted whole or read by privpub's own
statistics) must equal the counts of a full pass exactly, on seeded random
queries over small schemas with: a leading ordered Categorical of dates, an
integer range, a categorical of 200 values (2-byte indices), a declared
missing value, and an integer range too large for a truth table; and over a
wide schema (m > 2^64). Decisions are checked against brute force over
every tuple of a box. A group that is read is checked against its digest and
ranges; the stats are sealed; files without stats (older privpub) are
counted by the full pass; a Dask directory is counted part by part.
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

import privpub.viewfile.writer as writer
from privpub import AlphaBeta, ArtifactError, Categorical, IntRange, PublishedView, Schema
from privpub.counting.query import Condition
from privpub.viewfile import decide, groupstats, scan
from privpub.viewfile.pages import FooterCache, PageReader, identity

pytestmark = pytest.mark.filterwarnings("ignore::privpub.UsefulnessWarning",
                                        "ignore::privpub.PrivacyWarning")

GROUP = 250  # rows per row group in these files (many groups from a few thousand rows)
DAYS = [f"2020-{m:02d}-{d:02d}" for m in range(1, 4) for d in range(1, 29)]  # 84, in order
CITIES = [f"city{i:03d}" for i in range(200)]  # > 128 values: 2-byte indices
NARROW = Schema([Categorical("day", DAYS, ordered=True), IntRange("age", 0, 99),
                 Categorical("city", CITIES), Categorical("job", ["a", "b", "c", "?"],
                                                          missing="?"),
                 Categorical("sex", ["F", "M"])])
HUGE = Schema([IntRange("t", 0, 2**24), Categorical("sex", ["F", "M"]),
               IntRange("age", 0, 99)])
WIDE = Schema([Categorical("c", [f"v{i}" for i in range(300)]), IntRange("a", 0, 2**40),
               IntRange("b", 0, 2**40)])


def _frame(schema: Schema, n: int, seed: int) -> pd.DataFrame:
    """Records with skewed leading values (so some groups hold one value) and
    missing cells where the schema declares a missing value."""
    rng = np.random.default_rng(seed)
    columns = {}
    for attr in schema:
        if isinstance(attr, IntRange):
            columns[attr.name] = (rng.integers(attr.lo, min(attr.hi, attr.lo + 10**6), n)
                                  if attr.size > 10**6 else rng.integers(attr.lo, attr.hi + 1, n))
        else:
            values = [v for v in attr.values if v != attr.missing]  # the label marks None only
            p = np.geomspace(1, 0.01, len(values))
            columns[attr.name] = rng.choice(values, n, p=p / p.sum())
    frame = pd.DataFrame(columns)
    if "job" in frame:
        frame.loc[rng.random(n) < 0.1, "job"] = None  # published as the declared '?'
    return frame


def _write(schema: Schema, tmp_path, monkeypatch, name: str, beta: float = 1e-30,
           n: int = 4_000, seed: int = 0) -> tuple[PublishedView, str]:
    monkeypatch.setattr(writer, "CHUNK_ROWS", GROUP)
    view = AlphaBeta(schema, 0.9, beta, n=n).publish(_frame(schema, n, seed), seed=seed,
                                                     duplicates="records")
    path = str(tmp_path / f"{name}.parquet")
    view.to_parquet(path)
    assert pq.ParquetFile(path).metadata.num_row_groups >= len(view) // GROUP
    return view, path


def _random_query(schema: Schema, rng: np.random.Generator, depth: int = 0) -> str:
    """A random condition: comparisons, IN lists, BETWEEN, equalities on missing
    values, joined by AND / OR / NOT (values drawn from the domain)."""
    if depth < 2 and rng.random() < 0.45:
        parts = [_random_query(schema, rng, depth + 1) for _ in range(int(rng.integers(2, 4)))]
        text = f" {rng.choice(['AND', 'OR'])} ".join(f"({p})" for p in parts)
        return f"NOT ({text})" if rng.random() < 0.2 else text
    attr = schema.attributes[int(rng.integers(len(schema)))]
    name = f'"{attr.name}"'
    if isinstance(attr, IntRange):
        span = min(attr.size, 10**6)
        x, y = sorted(int(v) for v in attr.lo + rng.integers(0, span, 2))
        return str(rng.choice([f"{name} > {x}", f"{name} <= {x}", f"{name} = {x}",
                               f"{name} BETWEEN {x} AND {y}", f"{name} IN ({x}, {y})",
                               f"{name} <> {x}"]))
    values = list(attr.values)
    picked = [values[int(i)] for i in rng.integers(0, len(values), 3)]
    quoted = [f"'{v}'" for v in picked]
    options = [f"{name} = {quoted[0]}", f"{name} <> {quoted[0]}",
               f"{name} IN ({', '.join(quoted)})"]
    if attr.ordered:
        options += [f"{name} >= {quoted[0]}", f"{name} < {quoted[1]}"]
    return str(rng.choice(options))


def _full_pass(view: PublishedView, conditions) -> list[int]:
    """The counts of one pass over every row (the stats unused)."""
    return [sum(c.count_digits(b, len(b[c.attributes[0]]))
                for b in view.rows.batches(c.attributes)) for c in conditions]


class _Decisions:
    """Counts the decisions a pruned count makes (the tests must prune)."""

    def __init__(self, monkeypatch):
        self.seen = {decide.SKIP: 0, decide.WHOLE: 0, decide.READ: 0}
        original = decide.Decider.__call__

        def call(decider, group):
            verdict = original(decider, group)
            self.seen[verdict] += 1
            return verdict

        monkeypatch.setattr(decide.Decider, "__call__", call)


@pytest.mark.parametrize("schema", [NARROW, HUGE, WIDE], ids=["narrow", "huge", "wide"])
def test_pruned_counts_equal_the_full_pass(schema, tmp_path, monkeypatch):
    view, path = _write(schema, tmp_path, monkeypatch, "v")
    opened = PublishedView.open(path)
    assert opened.rows.scan_parts() is not None
    rng = np.random.default_rng(7)
    conditions = [Condition(schema, q) for q in (_random_query(schema, rng)
                                                 for _ in range(60))]
    conditions = [c for c in conditions if c.attributes]
    decisions = _Decisions(monkeypatch)
    one_by_one = [opened.rows.count(c) for c in conditions]
    assert one_by_one == _full_pass(opened, conditions)
    assert one_by_one == [view.count(c) for c in conditions]  # the in-memory view
    assert opened.rows.count_many(conditions) == one_by_one  # one pass for the batch
    # The test has power: groups were skipped, counted whole and read.
    assert min(decisions.seen.values()) > 0, decisions.seen


def test_estimates_and_marginals_over_a_file_equal_those_in_memory(tmp_path, monkeypatch):
    view, path = _write(NARROW, tmp_path, monkeypatch, "v")
    opened = PublishedView.open(path)
    queries = ["age > 50", "city = 'city001' AND sex = 'F' AND age < 30", "job = '?'",
               "day >= '2020-02-01' AND day < '2020-02-15'", "sex = 'M' AND job IN ('a', 'c')",
               None, "FALSE"]
    reads = []
    original = scan.read_group
    monkeypatch.setattr(scan, "read_group",
                        lambda *a: reads.append(a[2]) or original(*a))
    batch = opened.estimate_many(queries)
    groups = pq.ParquetFile(path).metadata.num_row_groups
    assert len(reads) <= groups  # each group read at most once for the whole batch
    for query, found in zip(queries, batch, strict=True):
        assert found.n_view == view.estimate(query).n_view
        assert found.value == opened.estimate(query).value
    subsets = [["day"], ["city", "sex"], ["age", "job", "sex"]]
    on_file = opened.estimate_marginals_arrays(subsets)
    np.testing.assert_array_equal(on_file.n_view, view.estimate_marginals_arrays(subsets).n_view)


def _box_truth(cond: Condition, box: dict[str, tuple[int, int]]) -> np.ndarray:
    """The condition on every tuple of the box (brute force over domain indices)."""
    names = list(cond.attributes)
    grid = itertools.product(*(range(box[n][0], box[n][1] + 1) for n in names))
    digits = {n: np.array(c) for n, c in zip(names, zip(*grid, strict=True), strict=True)}
    return cond.mask_digits(digits, len(digits[names[0]]))


@pytest.mark.parametrize("kleene", [False, True], ids=["truth-table", "kleene"])
def test_decisions_agree_with_brute_force_over_the_box(kleene):
    """SKIP only when no tuple of the box satisfies the condition, WHOLE only
    when all do; the truth-table path decides exactly (READ: some do, some not)."""
    schema = Schema([Categorical("day", DAYS[:20], ordered=True), IntRange("age", 0, 29),
                     Categorical("sex", ["F", "M"])])
    rng = np.random.default_rng(3)
    made = {decide.SKIP: 0, decide.WHOLE: 0, decide.READ: 0}
    for _ in range(300):
        cond = Condition(schema, _random_query(schema, rng))
        if not cond.attributes:
            continue
        box = {}
        for attr in schema:
            lo = int(rng.integers(attr.size))
            box[attr.name] = (lo, min(attr.size - 1, lo + int(rng.integers(0, 4))))
        if kleene:
            verdict = decide._kleene(cond, cond.formula, box)
        else:
            stats = groupstats.GroupStats(1, tuple(box[n][0] for n in schema.names),
                                        tuple(box[n][1] for n in schema.names), {})
            verdict = decide.Decider(cond)(stats)
        truth = _box_truth(cond, box)
        made[verdict] += 1
        if verdict == decide.SKIP:
            assert not truth.any(), cond
        elif verdict == decide.WHOLE:
            assert truth.all(), cond
        elif not kleene:
            assert truth.any() and not truth.all(), cond
    assert min(made.values()) > 10, made


def test_interval_decisions_are_exact():
    """An atom on one integer range, decided by its intervals over the box (the
    path of a range too large for a table), against brute force: boxes of 1 to
    4 values, so 'all but one value' and 'one value' boxes are common."""
    schema = Schema([IntRange("age", 10, 39), Categorical("sex", ["F", "M"])])
    rng = np.random.default_rng(5)
    made = {decide.SKIP: 0, decide.WHOLE: 0, decide.READ: 0}
    for _ in range(400):
        cond = Condition(schema, _random_query(Schema([schema["age"]]), rng, depth=2))
        lo = int(rng.integers(30))
        box = {"age": (lo, min(29, lo + int(rng.integers(0, 4))))}
        verdict = decide._interval_verdict(schema, cond.atoms[0], box)
        truth = _box_truth(cond, box)
        made[verdict] += 1
        assert verdict == (decide.SKIP if not truth.any() else
                           decide.WHOLE if truth.all() else decide.READ), (cond, box)
    assert min(made.values()) > 20, made


def test_an_integer_range_too_large_for_a_table_is_decided_by_intervals(tmp_path, monkeypatch):
    view, path = _write(HUGE, tmp_path, monkeypatch, "v")
    opened = PublishedView.open(path)
    decisions = _Decisions(monkeypatch)
    t = int(np.median(PublishedView.read_parquet(path).frame["t"]))
    for query in (f"t < {t}", f"t >= {t} AND sex = 'F'", f"NOT (t BETWEEN {t} AND {t + 10**5})"):
        assert opened.count(query) == view.count(query)
    assert decisions.seen[decide.SKIP] > 0 and decisions.seen[decide.WHOLE] > 0


# ---- what is checked ----------------------------------------------------------------------------


def _metadata(path) -> dict:
    return json.loads(pq.ParquetFile(path).metadata.metadata[b"privpub"])


def _rewrite(path, out, edit_table=None, edit_meta=None, row_group_size=GROUP) -> str:
    """A copy of a view file (the same row groups unless told), its rows or metadata edited."""
    table, meta = pq.read_table(path), _metadata(path)
    if edit_table is not None:
        table = edit_table(table)
    if edit_meta is not None:
        edit_meta(meta)
    pq.write_table(table.replace_schema_metadata({b"privpub": json.dumps(meta).encode()}),
                   out, row_group_size=row_group_size)
    return str(out)


def _flip_sex(row: int):
    def edit(table):
        sex = table.column("sex").combine_chunks()
        indices = sex.indices.to_numpy().copy()
        indices[row] = 1 - indices[row]
        import pyarrow as pa

        flipped = pa.DictionaryArray.from_arrays(pa.array(indices), sex.dictionary)
        return table.set_column(table.schema.get_field_index("sex"), "sex", flipped)
    return edit


def _group_reading(view: PublishedView, path: str) -> tuple[int, str, str]:
    """A group, a query that must read it (sex and its own ages) and one that
    skips it (ages outside the group's range)."""
    groups = _metadata(path)["digest"]["parts"][0]["groups"]
    age = view.schema.names.index("age")
    for g, group in enumerate(groups):
        lo, hi = group["low"][age], group["high"][age]
        if lo > 0 and group["low"][view.schema.names.index("sex")] == 0 \
                and group["high"][view.schema.names.index("sex")] == 1:
            return g, f"sex = 'F' AND age BETWEEN {lo} AND {hi}", f"sex = 'F' AND age < {lo}"
    raise AssertionError("no group spans both sexes")


@pytest.fixture
def sorted_by_age(tmp_path, monkeypatch):
    schema = Schema([IntRange("age", 0, 99), Categorical("sex", ["F", "M"]),
                     Categorical("city", CITIES)])
    return _write(schema, tmp_path, monkeypatch, "v")


def test_a_value_edited_in_a_group_that_is_read_is_refused(sorted_by_age, tmp_path):
    view, path = sorted_by_age
    g, reads, skips = _group_reading(view, path)
    bad = _rewrite(path, tmp_path / "bad.parquet", _flip_sex(g * GROUP + 3))
    opened = PublishedView.open(bad)
    with pytest.raises(ArtifactError, match=f"row group {g}: column 'sex' does not match"):
        opened.estimate(reads)
    # A count that does not read the group does not see the edit (module docstring
    # of the scan); a full pass does.
    assert opened.count(skips) == view.count(skips)
    with pytest.raises(ArtifactError, match="column 'sex' does not match"):
        PublishedView.read_parquet(bad)


def test_stats_edited_without_the_seal_are_refused_on_open(sorted_by_age, tmp_path):
    view, path = sorted_by_age

    def lower_high(meta):
        meta["digest"]["parts"][0]["groups"][1]["high"][0] -= 1

    bad = _rewrite(path, tmp_path / "bad.parquet", edit_meta=lower_high)
    with pytest.raises(ArtifactError, match="groups_sha256' .* does not match its row groups"):
        PublishedView.open(bad)


def _resealed(edit, names=("age", "sex", "city")):
    def both(meta):
        part = meta["digest"]["parts"][0]
        edit(part["groups"])
        stats = tuple(groupstats.GroupStats(g["rows"], tuple(g["low"]), tuple(g["high"]),
                                          g["columns"]) for g in part["groups"])
        part["groups_sha256"] = groupstats.seal(stats, names)
    return both


def test_forged_stats_are_found_in_a_group_that_is_read(sorted_by_age, tmp_path):
    """Stats rewritten and resealed: a group that is read is checked against them."""
    view, path = sorted_by_age
    g, reads, _ = _group_reading(view, path)
    age = view.schema.names.index("age")

    def widen(groups):
        groups[g]["high"][age] += 1

    bad = _rewrite(path, tmp_path / "bad.parquet", edit_meta=_resealed(widen))
    with pytest.raises(ArtifactError, match=f"row group {g}: column 'age' holds indices"):
        PublishedView.open(bad).estimate(reads.replace("BETWEEN", "NOT BETWEEN"))

    def forge_digest(groups):
        groups[g]["columns"]["sex"] = "0" * 64

    bad = _rewrite(path, tmp_path / "bad2.parquet", edit_meta=_resealed(forge_digest))
    with pytest.raises(ArtifactError, match=f"row group {g}: column 'sex' does not match"):
        PublishedView.open(bad).estimate(reads)


def test_malformed_stats_are_refused_by_name(sorted_by_age, tmp_path):
    view, path = sorted_by_age
    for edit, match in (
            (lambda m: m["digest"]["parts"][0]["groups"][0].update(low=[0, 0]),
             r"groups\[0\].low' must list one domain index per attribute"),
            (lambda m: m["digest"]["parts"][0]["groups"][0].update(high=[100, 1, 0]),
             r"groups\[0\].high' must list one domain index"),
            (lambda m: m["digest"]["parts"][0].update(groups="x"), "groups' must be a list")):
        bad = _rewrite(path, tmp_path / "bad.parquet", edit_meta=edit)
        with pytest.raises(ArtifactError, match=match):
            PublishedView.open(bad)


def test_files_without_stats_are_counted_by_the_full_pass(sorted_by_age, tmp_path,
                                                         monkeypatch):
    """A file as privpub wrote it before row-group statistics (the keys stripped),
    and one rewritten with other row groups: both counted by full passes."""
    view, path = sorted_by_age

    def strip(meta):
        for part in meta["digest"]["parts"]:
            del part["groups"], part["groups_sha256"]

    old = _rewrite(path, tmp_path / "old.parquet", edit_meta=strip)
    regrouped = _rewrite(path, tmp_path / "regrouped.parquet", row_group_size=GROUP + 1)
    queries = ["age > 50", "sex = 'F' AND age < 20", "city IN ('city000', 'city007')"]
    for file in (old, regrouped):
        opened = PublishedView.open(file)
        assert opened.rows.scan_parts() is None
        monkeypatch.setattr(scan, "count_parts", None)  # never reached
        assert [e.n_view for e in opened.estimate_many(queries)] == \
            [view.count(q) for q in queries]
        monkeypatch.undo()


def test_a_dask_directory_is_counted_part_by_part(tmp_path, monkeypatch):
    dd = pytest.importorskip("dask.dataframe")
    import dask

    import privpub.tables.distributed as distributed
    from privpub import FRAPP

    monkeypatch.setattr(writer, "CHUNK_ROWS", GROUP)
    frame = _frame(NARROW, 3_000, 1)
    with dask.config.set(scheduler="synchronous"):
        mech = FRAPP.for_privacy(NARROW, n=len(frame), gamma=0.2, k=10)
        release = mech.publish(dd.from_pandas(frame, npartitions=3), seed=1,
                               duplicates="records")
        release.to_parquet(tmp_path / "release")
        memory = PublishedView.read_parquet(tmp_path / "release")
        on_dask = distributed.open_dask(tmp_path / "release")
        assert on_dask.rows.scan_parts() is not None and len(on_dask.rows.files) == 3
        rng = np.random.default_rng(11)
        queries = [_random_query(NARROW, rng) for _ in range(40)]
        decisions = _Decisions(monkeypatch)
        # One at a time: the pruned scan (a batch of many is counted by
        # histograms over one full pass: tables.batchcount).
        found = [on_dask.estimate(q).n_view for q in queries]
        assert found == [memory.count(q) for q in queries]
        assert found == [e.n_view for e in PublishedView.open(tmp_path / "release")
                         .estimate_many(queries)]
        assert decisions.seen[decide.SKIP] > 0 and decisions.seen[decide.READ] > 0


def test_every_written_group_has_stats(tmp_path, monkeypatch):
    """publish_to_parquet, to_parquet and Dask parts: the stats describe the
    file's row groups exactly (else they would be unused)."""
    view, path = _write(NARROW, tmp_path, monkeypatch, "v")
    streamed = tmp_path / "streamed.parquet"
    mech = AlphaBeta(NARROW, 0.9, 1e-6, n=4_000)
    mech.publish_to_parquet(_frame(NARROW, 4_000, 0), streamed, seed=0, duplicates="records")
    for file in (path, streamed):
        meta = pq.ParquetFile(file).metadata
        groups = _metadata(file)["digest"]["parts"][0]["groups"]
        assert [g["rows"] for g in groups] == [meta.row_group(i).num_rows
                                              for i in range(meta.num_row_groups)]
        assert PublishedView.open(file).rows.scan_parts() is not None


# ---- the page reader ----------------------------------------------------------------------------


def test_the_page_reader_gives_pyarrows_digits(tmp_path, monkeypatch):
    """Every column of every group, decoded from its pages, equals pyarrow's read,
    and the range found with it is its least and greatest index (strings,
    integers, 200 values, a declared missing value; a huge integer range whose
    dictionary may have been given up: then None, never wrong)."""
    import os

    for name, schema in (("narrow", NARROW), ("huge", HUGE)):
        view, path = _write(schema, tmp_path, monkeypatch, name)
        opened = PublishedView.open(path)
        part, meta = opened.rows.scan_parts()[0], pq.read_metadata(path)
        fd = os.open(path, os.O_RDONLY)
        decoded = 0
        try:
            for g in range(meta.num_row_groups):
                expected = scan._arrow_group(schema, part, g, schema.names, "x")
                for j, column in enumerate(schema.names):
                    got = opened.rows.pages.column(fd, g, j, column, "x")
                    if got is not None:
                        decoded += 1
                        found, span = got
                        assert found.dtype == expected[column].dtype
                        np.testing.assert_array_equal(found, expected[column])
                        assert span == (expected[column].min(), expected[column].max())
        finally:
            os.close(fd)
        assert decoded >= meta.num_row_groups * (len(schema) - 1), name


def test_a_wrong_page_reader_is_never_trusted(sorted_by_age, monkeypatch):
    """Digits from the page reader that do not match the digest are read again
    by pyarrow: the counts stay right (and no false alarm is raised)."""
    from privpub import _core

    view, path = sorted_by_age
    original = _core.parquet.decode_data_pages

    def off_by_one(data, snappy, nullable, remap, width, rows):
        return original(data, snappy, nullable, np.roll(remap, 1), width, rows)

    monkeypatch.setattr(_core.parquet, "decode_data_pages", off_by_one)
    queries = ["sex = 'F' AND age < 40", "city IN ('city001', 'city150')"]
    assert [e.n_view for e in PublishedView.open(path).estimate_many(queries)] == \
        [view.count(q) for q in queries]


@pytest.mark.parametrize("schema", [NARROW, WIDE], ids=["narrow", "wide"])
def test_the_group_scan_counts_as_numpy_does(schema, tmp_path, monkeypatch):
    """``_core.parquet.scan_groups`` (decode, digest, range and count in one Rust call)
    against a brute-force numpy count over pyarrow's digits of every group, on
    random conditions; and the pruned counts take that path (no group falls
    back to :func:`scan.read_group` when every condition has a truth table)."""
    view, path = _write(schema, tmp_path, monkeypatch, "v")
    opened = PublishedView.open(path)
    parts = opened.rows.scan_parts()
    rng = np.random.default_rng(11)
    conditions = [c for c in (Condition(schema, _random_query(schema, rng)) for _ in range(40))
                  if c.attributes and c.truth_table() is not None]
    part = parts[0]
    tasks = [(part, g, list(range(len(conditions)))) for g in range(len(part.groups))]
    footers = scan._footers(opened.rows.pages, {path})
    reduced = decide.Reductions(schema, conditions)
    requests = scan._requests(opened.rows.pages, tasks, reduced, footers, {})
    scanned = scan._results(schema, tasks, requests, scan._scan(requests, reduced.tables))
    for (_, g, _), counts in zip(tasks, scanned, strict=True):
        assert counts is not None, g
        digits = scan._arrow_group(schema, part, g, schema.names, "x")
        rows = part.groups[g].rows
        want = [int(c.mask_digits(digits, rows).sum()) for c in conditions]
        assert [n for _, n in counts] == want, g
    reads = []
    original = scan.read_group
    monkeypatch.setattr(scan, "read_group", lambda *a: reads.append(a[2]) or original(*a))
    assert opened.rows.count_many(conditions) == [view.count(c) for c in conditions]
    assert reads == []


def test_a_wrong_group_scan_is_never_trusted(sorted_by_age, monkeypatch):
    """A group scan whose digits are wrong (the remap rolled: its digests differ)
    is not trusted: those groups are read again and the counts stay right."""
    from privpub import _core

    view, path = sorted_by_age
    original = _core.parquet.scan_groups
    groups_seen = []

    def rolled(groups, tables):
        groups_seen.append(len(groups))
        wrong = [(rows, [(d, s, n, np.roll(remap, 1), w) for d, s, n, remap, w in chunks], counts)
                 for rows, chunks, counts in groups]
        return original(wrong, tables)

    monkeypatch.setattr(_core.parquet, "scan_groups", rolled)
    queries = ["sex = 'F' AND age < 40", "city IN ('city001', 'city150')"]
    assert [e.n_view for e in PublishedView.open(path).estimate_many(queries)] == \
        [view.count(q) for q in queries]
    assert sum(groups_seen) > 0


def test_a_stale_footer_never_changes_a_count(tmp_path, monkeypatch):
    """A view keeps its files' footers by file identity; ones that no longer
    describe the file (here: another file's, of the same shape, both pyarrow's
    and the page reader's, planted under the file's identity) only misplace
    chunks: those that decode to other digits have another digest
    (test_a_wrong_group_scan_is_never_trusted), and those groups are read from
    the file by pyarrow."""
    import os

    view, path = _write(NARROW, tmp_path, monkeypatch, "a", seed=1)
    _, other = _write(NARROW, tmp_path, monkeypatch, "b", seed=2)
    opened = PublishedView.open(path)
    # The open kept the file's own footer (check_part's read): start from none.
    opened.rows.pages.footers = footers = FooterCache()
    here = identity(os.stat(path))
    fd = os.open(other, os.O_RDONLY)
    try:
        stale = PageReader(NARROW).layout(fd)
    finally:
        os.close(fd)
    assert stale is not None
    footers.get(("arrow", *here), lambda: pq.read_metadata(other))
    footers.get(("pages", *here), lambda: stale)
    queries = ["sex = 'F' AND age < 40", "city IN ('city001', 'city150') AND job = 'a'",
               "day >= '2020-02-01' AND sex = 'M'"]
    assert [e.n_view for e in opened.estimate_many(queries)] == [view.count(q) for q in queries]
    assert opened.rows.pages.metadata(path).num_rows == pq.read_metadata(other).num_rows


def test_a_group_counts_only_the_columns_its_box_leaves_open(sorted_by_age, monkeypatch):
    """Over a group whose ages all satisfy ``age < k``, ``sex = 'F' AND age < k``
    is ``sex = 'F'``: that group is counted on ``sex`` alone, but its ``age``
    column is still read, to check the stated range the reduction rests on;
    groups across k count both; the counts stay the in-memory view's."""
    from privpub import _core

    view, path = sorted_by_age
    groups = _metadata(path)["digest"]["parts"][0]["groups"]
    age = view.schema.names.index("age")
    k = groups[len(groups) // 2]["high"][age]  # some groups below k, one across it
    across = [g for g, s in enumerate(groups) if s["low"][age] < k <= s["high"][age]]
    below = [g for g, s in enumerate(groups) if s["high"][age] < k]
    assert across and below
    read, counted = [], []
    original, scan_groups = PageReader.chunk, _core.parquet.scan_groups
    monkeypatch.setattr(PageReader, "chunk",
                        lambda self, fd, g, c, name, *rest:
                        read.append((g, name)) or original(self, fd, g, c, name, *rest))

    def scanned(sent, tables):
        counted.extend(len(tables[slot][0]) for _, _, counts in sent for slot, _ in counts)
        return scan_groups(sent, tables)

    monkeypatch.setattr(_core.parquet, "scan_groups", scanned)
    query = f"sex = 'F' AND age < {k}"
    assert PublishedView.open(path).count(query) == view.count(query)
    assert {(g, n) for g in below + across for n in ("age", "sex")} <= set(read)
    assert sorted(counted) == [1] * len(below) + [2] * len(across)
