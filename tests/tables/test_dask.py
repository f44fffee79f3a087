"""Publishing dask DataFrames, on a distributed.LocalCluster with 2 worker processes.

αβ, FRAPP and SPLU-Gen releases of a dask frame equal the single-machine
releases byte for byte for a fixed seed, for 1, 3 and 7 partitions; a
statistical test over many seeds checks the distributed αβ release's
inclusion probabilities and the independence of its ranges (with power
against three wrong variants); estimates over a view read back with Dask
equal the in-memory ones; bad input is refused with named errors.
"""

import logging
import math
import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import privpub
from privpub import _core
from privpub.alphabeta import AlphaBeta
from privpub.core.errors import DomainError, ParameterError
from privpub.core.seeding import resolve_seed
from privpub.frapp import FRAPP
from privpub.splu import SPLUGen
from privpub.tables.distributed import (
    SHUFFLE_LOGGER,
    DaskRelease,
    by_range,
    is_dask,
    open_dask,
)
from privpub.tables.records import sorted_rows

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

PARTITIONS = (1, 3, 7)
# Small and wide-domain tables: the views say their bounds are wide (UsefulnessWarning);
# these tests check that a cluster publishes what one machine does.
pytestmark = pytest.mark.filterwarnings("ignore::privpub.UsefulnessWarning")


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       memory_limit="1GiB", dashboard_address=None)
    with cluster, distributed.Client(cluster) as c:
        yield c


@pytest.fixture(scope="module")
def adult():
    return privpub.datasets.load_adult()


@pytest.fixture(scope="module")
def wide():
    """A domain of 10^20 tuples (2 limbs per code) and 6,000 records, 1,000 repeated."""
    schema = privpub.Schema([privpub.IntRange(f"x{i}", 0, 9_999) for i in range(5)])
    assert schema.is_wide and schema.size > 2**64
    rng = np.random.default_rng(7)
    values = rng.integers(0, 10_000, size=(5_000, 5))
    values = np.concatenate([values, values[:1_000]])
    return schema, pd.DataFrame(values, columns=list(schema.names))


def _same(release, view):
    assert isinstance(release, DaskRelease)
    got = release.compute()
    assert np.array_equal(got.codes, view.codes)
    assert got.parameters == view.parameters and got.seed_policy == view.seed_policy


# The quick run keeps one variant of each; CI's slow run runs the rest.
# Both variants in CI's slow run: the quick run's Dask equalities are the reopened
# release's and SPLU's below.
@pytest.mark.slow
@pytest.mark.parametrize("duplicates", ["set", "records"])
def test_alphabeta_on_adult_equals_one_machine_byte_for_byte(client, adult, duplicates):
    df, schema = adult
    mech = AlphaBeta.for_privacy(schema, n=len(df), gamma=0.2, k=10)
    view = mech.publish(df, seed=11, duplicates=duplicates)
    for parts in PARTITIONS:
        _same(mech.publish(dd.from_pandas(df, npartitions=parts), seed=11,
                           duplicates=duplicates), view)


@pytest.mark.parametrize("duplicates", [pytest.param("set", marks=pytest.mark.slow), "records"])
def test_alphabeta_on_a_two_limb_domain_equals_one_machine(client, wide, duplicates):
    schema, df = wide
    mech = AlphaBeta(schema, 0.4, 1e6 / schema.size, n=len(df))
    assert _core.sampling.beta_step_layout(schema.size, mech.beta)[1] >= 7  # ranges can split
    view = mech.publish(df, seed=3, duplicates=duplicates)
    for parts in PARTITIONS:
        release = mech.publish(dd.from_pandas(df, npartitions=parts), seed=3,
                               duplicates=duplicates, npartitions=parts)
        _same(release, view)


def test_parquet_input_with_dictionary_columns(client, adult, tmp_path):
    """dd.read_parquet gives categoricals whose categories are unknown up front."""
    df, schema = adult
    strings = [c for c in df.columns if df[c].dtype != "int64"]
    dd.from_pandas(df.astype(dict.fromkeys(strings, "category")),
                   npartitions=3).to_parquet(tmp_path / "in")
    frame = dd.read_parquet(tmp_path / "in")
    assert frame["sex"].dtype == "category"
    mech = AlphaBeta.for_privacy(schema, n=len(df), gamma=0.2, k=10)
    _same(mech.publish(frame, seed=4, duplicates="set"),
          mech.publish(df, seed=4, duplicates="set"))


@pytest.mark.slow
def test_ranges_do_not_depend_on_the_input_partitioning(client, adult):
    """Seven output ranges from one, three or seven input partitions: the same view."""
    df, schema = adult
    mech = AlphaBeta.for_privacy(schema, n=len(df), gamma=0.2, k=10)
    views = [mech.publish(dd.from_pandas(df.sample(frac=1, random_state=p), npartitions=p),
                          seed=5, duplicates="set", npartitions=7).compute().codes
             for p in PARTITIONS]
    assert all(np.array_equal(v, views[0]) for v in views)


def test_records_on_range_edges(client, tiny):
    """Codes at and beside the range boundaries (multiples of L) land in the
    range whose β-step must leave them out."""
    schema, _, _ = tiny
    seg_len = _core.sampling.beta_step_layout(schema.size, BETA)[0]
    codes = np.unique([c + d for c in range(0, schema.size, seg_len) for d in (-1, 0, 1)
                       if 0 <= c + d < schema.size] + [schema.size - 1]).astype(np.uint64)
    mech = AlphaBeta(schema, ALPHA, BETA, n=len(codes))
    frame = dd.from_pandas(schema.decode(codes), npartitions=2)
    for seed in range(3):
        _same(mech.publish(frame, seed=seed, npartitions=3), mech.publish(codes, seed=seed))


@pytest.mark.slow  # FRAPP's blocks across parts: test_frapp_ranges_cross_rng_blocks (quick)
def test_frapp_equals_one_machine_byte_for_byte(client, adult, wide):
    df, schema = adult
    mech = FRAPP.for_privacy(schema, n=len(df), gamma=0.2, k=10)
    view = mech.publish(df, seed=2, duplicates="records")
    for parts in PARTITIONS:
        _same(mech.publish(dd.from_pandas(df, npartitions=parts), seed=2,
                           duplicates="records"), view)
    schema, df = wide
    mech = FRAPP(schema, 0.5, n=len(df))
    view = mech.publish(df, seed=2, duplicates="set")
    _same(mech.publish(dd.from_pandas(df, npartitions=3), seed=2, duplicates="set"), view)


def test_frapp_ranges_cross_rng_blocks(client):
    """More records than one stream block: ranges start inside blocks and replay."""
    schema = privpub.Schema([privpub.IntRange("a", 0, 999), privpub.IntRange("b", 0, 999)])
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"a": rng.integers(0, 1000, 150_000), "b": rng.integers(0, 1000, 150_000)})
    mech = FRAPP(schema, 0.3, n=len(df))
    view = mech.publish(df, seed=4, duplicates="records")
    _same(mech.publish(dd.from_pandas(df, npartitions=5), seed=4, duplicates="records"), view)


@pytest.mark.parametrize("sensitive, group_size", [
    (["occupation"], 5), pytest.param(["occupation", "education"], 3, marks=pytest.mark.slow)])
def test_splu_equals_one_machine_byte_for_byte(client, adult, sensitive, group_size):
    df, schema = adult
    mech = SPLUGen(group_size, sensitive, schema=schema)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the residue's row ids (γ = 5)
        view = mech.publish(df, seed=8)
    for parts in PARTITIONS:
        _same(mech.publish(dd.from_pandas(df, npartitions=parts), seed=8), view)
    assert view.parameters["residue"] == len(df) % group_size  # counted in both releases


def test_written_release_reopens_and_estimates_as_in_memory(client, adult, tmp_path):
    df, schema = adult
    mech = AlphaBeta.for_privacy(schema, n=len(df), gamma=0.2, k=10)
    view = mech.publish(df, seed=1, duplicates="records")
    release = mech.publish(dd.from_pandas(df, npartitions=3), seed=1, duplicates="records",
                           npartitions=12)  # part.10 sorts before part.2 by name
    written = release.to_parquet(tmp_path / "view")
    assert len(release.rows) >= 11
    assert {p.name for p in (tmp_path / "view").iterdir()} == {
        "_common_metadata", *(f"part.{i}.parquet" for i in range(len(release.rows)))}
    back = privpub.PublishedView.read_parquet(tmp_path / "view")
    on_dask = open_dask(tmp_path / "view")
    assert np.array_equal(back.codes, view.codes) and np.array_equal(written.codes, view.codes)
    queries = [None, {"sex": "Female", "salary": ">50K"}, "age > 50 and race = 'White'",
               privpub.col("education").isin(["Bachelors", "Masters"]), "age < 0"]
    for q in queries:
        expected = view.estimate(q)
        assert on_dask.estimate(q) == expected == back.estimate(q) == written.estimate(q)
    assert str(release.guarantee()) == str(view.guarantee())
    with pytest.raises(ParameterError, match="not an empty directory"):
        release.to_parquet(tmp_path / "view")


class Kept(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def test_the_shuffles_routine_logs_stay_off_the_console(client, tiny):
    """distributed logs each shuffle's start and end at WARNING from the scheduler,
    which a LocalCluster runs in this process: privpub's shuffles keep them off the
    console; the same shuffle outside privpub logs them (the check has power); a
    level the user set is left alone."""
    schema, codes, mech = tiny
    frame = dd.from_pandas(schema.decode(codes), npartitions=3)
    logger = logging.getLogger(SHUFFLE_LOGGER)
    kept = Kept()
    logger.addHandler(kept)
    try:
        release = mech.publish(frame, seed=3, duplicates="records")
        release.estimate("a < 100")
        release.compute()
        assert kept.messages == []
        assert logger.level == logging.NOTSET
        import dask

        bare = dd.from_pandas(pd.DataFrame({"code0": codes}), npartitions=3)
        dask.compute(by_range(bare, [int(codes[5_000]), int(codes[15_000])], 1))
        assert any(m.startswith("Shuffle") for m in kept.messages), kept.messages
        kept.messages.clear()
        logger.setLevel(logging.WARNING)  # asked for: shown
        mech.publish(frame, seed=4, duplicates="records").compute()
        assert any(m.startswith("Shuffle") for m in kept.messages), kept.messages
    finally:
        logger.removeHandler(kept)
        logger.setLevel(logging.NOTSET)


def test_rows_as_lazy_dask_frames(client, wide, tmp_path):
    schema, df = wide
    mech = FRAPP(schema, 0.5, n=len(df))
    view = mech.publish(df, seed=6, duplicates="records")
    release = mech.publish(dd.from_pandas(df, npartitions=3), seed=6, duplicates="records")
    on_dask = open_dask(release.to_parquet(tmp_path / "v").rows.path)
    for frame in (on_dask.rows.to_dask(), release.to_dask()):
        assert frame.npartitions == 3
        assert np.array_equal(schema.encode(frame.compute()), view.codes)


def test_a_dask_count_checks_the_digest(client, adult, tmp_path):
    """A part file whose 'sex' column was flipped (same row count): counting
    'sex' fails, counting other columns does not."""
    df, schema = adult
    mech = AlphaBeta.for_privacy(schema, n=len(df), gamma=0.2, k=10)
    mech.publish(dd.from_pandas(df, npartitions=2), seed=1,
                 duplicates="set").to_parquet(tmp_path / "v")
    part = tmp_path / "v" / "part.1.parquet"
    table = pq.read_table(part)
    sex = table["sex"].combine_chunks()
    flipped = pa.DictionaryArray.from_arrays(pc.subtract(1, sex.indices).cast(sex.indices.type),
                                             sex.dictionary)
    pq.write_table(table.set_column(table.schema.get_field_index("sex"), "sex", flipped), part)
    view = open_dask(tmp_path / "v")
    view.estimate("age > 30")
    with pytest.raises(privpub.ArtifactError,
                       match=r"part.1.parquet', row group 0: column 'sex' does not match "
                             "the digest"):
        view.estimate("sex = 'Male'")


def test_bad_input_is_refused_with_names(client, adult):
    df, schema = adult
    mech = AlphaBeta.for_privacy(schema, n=len(df), gamma=0.2, k=10)
    extra = dd.from_pandas(df.assign(id=1), npartitions=3)
    with pytest.raises(ParameterError, match=r"columns not in the schema: \['id'\]"):
        mech.publish(extra, seed=1, duplicates="set")
    bad = df.copy()
    bad.loc[20_000, "age"] = 200
    with pytest.raises(DomainError, match=r"column 'age': value 200 at row 20000"):
        mech.publish(dd.from_pandas(bad, npartitions=3), seed=1, duplicates="set")
    weighted = AlphaBeta(schema, 0.3, 1e-4, source={"sex": [0.3, 0.7]})
    with pytest.raises(ParameterError, match="source distribution.*not supported on Dask"):
        weighted.publish(dd.from_pandas(df, npartitions=3), seed=1, duplicates="set")
    with pytest.raises(ParameterError, match="repeat 3,990 tuples"):
        mech.publish(dd.from_pandas(df, npartitions=3), seed=1).compute()
    with pytest.raises(ParameterError, match="built for n = 30,162 records but the data hold"):
        mech.publish(dd.from_pandas(df.head(100), npartitions=2), seed=1,
                     duplicates="set").compute()
    with pytest.raises(ParameterError, match="declared schema"):
        SPLUGen(3, "occupation").publish(dd.from_pandas(df, npartitions=2), seed=1)
    assert not is_dask(df) and is_dask(dd.from_pandas(df, npartitions=1))


# ---- the distribution of a distributed release ---------------------------------------------------

ALPHA, BETA = 0.3, 0.45
SEEDS = 24


@pytest.fixture(scope="module")
def tiny():
    """m = 2^19 codes in four β-segments, 20,000 records; a mechanism for them."""
    schema = privpub.Schema([privpub.IntRange("a", 0, 2**9 - 1),
                             privpub.IntRange("b", 0, 2**10 - 1)])
    codes = np.sort(np.random.default_rng(0).choice(schema.size, 20_000, replace=False))
    mech = AlphaBeta(schema, ALPHA, BETA, n=len(codes))
    assert _core.sampling.beta_step_layout(schema.size, BETA)[1] == 4
    return schema, codes.astype(np.uint64), mech


@pytest.fixture(scope="module")
def distributed_views(client, tiny):
    """SEEDS releases of the tiny instance, each in 3 ranges on the cluster."""
    import dask

    schema, codes, mech = tiny
    frame = dd.from_pandas(schema.decode(codes), npartitions=3)
    releases = [mech.publish(frame, seed=s, npartitions=3) for s in range(SEEDS)]
    ranges = dask.compute(*[r.rows for r in releases])
    views = [[np.asarray(r).reshape(-1) for r in release] for release in ranges]
    edges = _edges(schema)
    for pieces in views:  # the ranges split_points chose: [0, 2L), [2L, 3L), [3L, 4L)
        assert all(((p >= a) & (p < b)).all()
                   for p, a, b in zip(pieces, edges, edges[1:], strict=False))
    return views


def _edges(schema):
    seg_len = _core.sampling.beta_step_layout(schema.size, BETA)[0]
    return [0, 2 * seg_len, 3 * seg_len, 4 * seg_len]


def _pieces(tiny, variant):
    """The per-range pieces computed on one machine, rightly or wrongly: each
    range restarting the α-step stream, drawing from segment 0's stream on,
    or β 10% high."""
    schema, codes, mech = tiny
    seg_len = _core.sampling.beta_step_layout(schema.size, BETA)[0]
    edges = _edges(schema)
    beta = BETA * (1.1 if variant == "beta" else 1)
    wrong_mech = AlphaBeta(schema, ALPHA, beta, n=len(codes))
    out = []
    for s in range(SEEDS):
        rand, pieces = resolve_seed(s), []
        for i in range(3):
            rows = sorted_rows(codes[(codes >= edges[i]) & (codes < edges[i + 1])])
            start = int((codes < edges[i]).sum()) if variant != "alpha" else 0
            first, stop = edges[i] // seg_len, edges[i + 1] // seg_len
            if variant == "streams":  # range i draws segments (0, stop − first), shifted
                noise = _core.sampling.beta_step(rand.derive("beta-step").key, schema.size, beta,
                                                 np.zeros((0, 1), np.uint64),
                                                 segments=(0, stop - first))
                noise = noise + np.uint64(edges[i])
                noise = noise[~np.isin(noise, rows) & (noise < np.uint64(schema.size))]
                keep = _core.sampling.keep_records(rand.derive("alpha-step").key, rows,
                                                   np.array([ALPHA + beta]), ALPHA, start=start)
                piece = np.sort(np.concatenate([rows[keep].reshape(-1), noise.reshape(-1)]))
            else:
                piece = wrong_mech.draw(rand, rows, start=start,
                                        segments=(first, stop)).reshape(-1)
            pieces.append(piece)
        out.append(pieces)
    return out


def _inclusion(tiny, views):
    """Per-seed 0/1 inclusion of every code (seeds × m)."""
    schema = tiny[0]
    hits = np.zeros((len(views), schema.size), dtype=np.int8)
    for s, pieces in enumerate(views):
        hits[s, np.concatenate(pieces).astype(np.int64)] = 1
    return hits


def _z(hits, p):
    return (hits.mean() - p) / math.sqrt(p * (1 - p) / hits.size)


def _checks(tiny, views):
    """|z| of each statistic: records kept with α+β, other codes with β (all,
    and within 2,000 codes of each segment edge), and the agreement of
    positions at equal offsets in different ranges (independent ranges:
    p² + (1 − p)²) for records (α-step) and for other codes (β-step)."""
    schema, codes, _ = tiny
    seg_len = _core.sampling.beta_step_layout(schema.size, BETA)[0]
    edges = _edges(schema)
    hits = _inclusion(tiny, views)
    in_i = np.zeros(schema.size, dtype=bool)
    in_i[codes.astype(np.int64)] = True
    near = np.zeros(schema.size, dtype=bool)
    for edge in range(seg_len, schema.size, seg_len):
        near[edge - 2_000:edge + 2_000] = True
    z = {"records": _z(hits[:, in_i], ALPHA + BETA), "others": _z(hits[:, ~in_i], BETA),
         "edges": _z(hits[:, ~in_i & near], BETA)}
    # α-step: the j-th record of ranges 0 and 1.
    first = codes[codes < edges[1]].astype(np.int64)
    second = codes[(codes >= edges[1]) & (codes < edges[2])].astype(np.int64)
    k = min(len(first), len(second))
    p = ALPHA + BETA
    agree = hits[:, first[:k]] == hits[:, second[:k]]
    z["alpha-independence"] = _z(agree, p * p + (1 - p) ** 2)
    # β-step: code c of range 0's first segment and c + 2L, range 1's, both outside I.
    c = np.arange(seg_len)
    free = ~in_i[c] & ~in_i[c + edges[1]]
    agree = hits[:, c[free]] == hits[:, c[free] + edges[1]]
    z["beta-independence"] = _z(agree, BETA * BETA + (1 - BETA) ** 2)
    return z


@pytest.mark.slow
def test_distributed_release_has_the_alphabeta_distribution(tiny, distributed_views):
    """Every statistic within 4 standard errors (α = 6e-5 two-sided each)."""
    z = _checks(tiny, distributed_views)
    assert all(abs(v) < 4 for v in z.values()), z


@pytest.mark.parametrize("variant, statistic", [("beta", "others"),
                                                ("alpha", "alpha-independence"),
                                                ("streams", "beta-independence")])
def test_distribution_test_has_power(tiny, variant, statistic):
    z = _checks(tiny, _pieces(tiny, variant))
    assert abs(z[statistic]) > 4, z


@pytest.mark.slow  # shares the slow law test's distributed views (2.7 s to build)
def test_the_right_one_machine_pieces_are_the_clusters(tiny, distributed_views):
    """The power variants differ from the cluster's computation only by their bug."""
    right = _pieces(tiny, "right")
    assert all(np.array_equal(a, b) for r, d in zip(right, distributed_views, strict=True)
               for a, b in zip(r, d, strict=True))
    schema, codes, mech = tiny
    view = mech.publish(codes, seed=0)
    assert np.array_equal(np.concatenate(distributed_views[0]), view.codes)


@pytest.mark.parametrize("npartitions", [1, 2, 3])
@pytest.mark.parametrize("alpha", [1.0, 0.7])
def test_beta_zero_keeps_every_range_of_records(client, npartitions, alpha):
    """β = 0 draws no β-step segment: each range is its own records. The range edges,
    in codes then, cut every range but the first (the zero-noise oracle's α = 1,
    β = 0 published 2 of 4 records from two partitions)."""
    schema = privpub.Schema([privpub.Categorical("sex", ["F", "M"]),
                             privpub.IntRange("age", 0, 99)])
    frame = pd.DataFrame({"sex": ["F", "M", "F", "F"] * 25, "age": [30, 41, 52, 30] * 25})
    mech = AlphaBeta(schema, alpha, 0.0)
    _same(mech.publish(dd.from_pandas(frame, npartitions=npartitions), seed=2,
                       duplicates="records"),
          mech.publish(frame, seed=2, duplicates="records"))
