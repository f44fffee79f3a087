"""The corpus of real tables (tests/corpus.py) through every mechanism and path (issue 21).

Each table, prepared as a user would, goes through αβ, FRAPP and SPLU-Gen →
to_parquet → PublishedView.open → estimates, from pandas, Arrow, polars, a
CSV path and a Parquet path (the same codes for the same seed), and through
the command line for a few of them. Each unprepared form of a table is a
named, one-line error (the class, and the column in the message).

Statistics (fixed seeds; queries of 1–3 attributes chosen by a rule seeded by
the table's name, values taken from a record so the truth is not 0; a view is
the unit, since the queries of one view are correlated and views are not):

- coverage: the stated per-query bound holds with probability ≥ 1 − ε, so for
  each query position the views that miss it are at most the 1 − 10⁻⁶/4
  quantile of Binomial(views, ε) (Bonferroni over the 4 positions); the check
  rejects a bound 10× too small (shown; the bounds are conservative, at 2.7σ
  and more, so it cannot see a bound off by less than about 5×);
- bias: z = (estimate − truth)/σ, σ the exact standard deviation derived here
  from the truth (not the library's plug-in); each view's mean z has variance
  ≤ 1, so their mean over the corpus is within 4/√views of 0; the check
  rejects the noise rate (β, FRAPP's o) off by 10% (shown);
- the truth is what the release counts: distinct tuples under
  duplicates='set', records otherwise; Q(D) is checked exactly;
- SPLU-Gen: f'_s ~ Binomial(γ f_s, 1/γ) for the records in decoy groups, so
  z = (f' − f)/√(f(1 − 1/γ)) has mean 0 (same tolerance; it rejects counts
  10% too large, shown), the guarantee's large-sum utility (|f' − f| ≤ 0.3 f
  for f ≥ T_f) holds for each value within the binomial tolerance at its 0.05,
  values without records are never published, and the non-sensitive columns
  are published exactly.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import warnings
import zlib
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import yaml
from corpus import TABLES, Table, filled
from scipy.stats import binom

import privpub
from privpub import FRAPP, AlphaBeta, IntRange, PublishedView
from privpub.core.errors import ParameterError, UsefulnessWarning
from privpub.splu import SPLUGen, reconstruct, sensitive_counts, utility_threshold_chebyshev

NAMES = list(TABLES)
SEEDS = range(6)
QUERIES = 4
KINDS = ("pandas", "arrow", "polars", "csv", "parquet")
#: Significance of the coverage checks (binomial upper quantile).
LEVEL = 1e-6

pytestmark = pytest.mark.filterwarnings("ignore::privpub.PrivacyWarning")


def load(name: str) -> Table:
    return TABLES[name]()


def one_line(exc: BaseException) -> str:
    text = str(exc)
    assert text and "\n" not in text, f"not one line: {text!r}"
    return text


# ---- inputs ----------------------------------------------------------------------------------


def as_kind(frame: pd.DataFrame, kind: str, folder: str) -> object:
    """The frame as a user would hand it over in each input kind."""
    if kind == "pandas":
        return frame
    if kind == "arrow":
        return pa.Table.from_pandas(frame, preserve_index=False)
    if kind == "polars":
        import polars as pl

        return pl.from_pandas(frame)
    path = os.path.join(folder, f"table.{kind}")
    if kind == "csv":
        frame.to_csv(path, index=False)
    else:
        frame.to_parquet(path, index=False)
    return path


# ---- choosing parameters ---------------------------------------------------------------------


@functools.cache
def point(name: str, kind: str) -> tuple[float, float]:
    """The table's (k, γ) request; when the library refuses it (a named one-line
    ParameterError), the feasible point of `plan` with the smallest error bound."""
    table = load(name)
    cls = AlphaBeta if kind == "alphabeta" else FRAPP
    k, gamma = table.request
    try:
        cls.for_privacy(table.schema, n=len(table.frame), gamma=gamma, k=k)
        return k, gamma
    except ParameterError as exc:
        assert "d = " in one_line(exc) or "d must be" in str(exc)
    found = privpub.plan(table.frame, schema=table.schema, mechanisms=[kind],
                         ks=(1, 2, 5, 10), gammas=(0.2, 0.3, 0.5, 0.8),
                         calibrations=["exclusive"]).to_frame()
    assert not found.loc[~found.feasible, "library_error"].isna().any()
    best = found[found.feasible].sort_values("error_bound").iloc[0]
    return float(best.k), float(best.gamma)


@functools.cache
def mechanism(name: str, kind: str) -> AlphaBeta | FRAPP:
    table, (k, gamma) = load(name), point(name, kind)
    cls = AlphaBeta if kind == "alphabeta" else FRAPP
    return cls.for_privacy(table.schema, n=len(table.frame), gamma=gamma, k=k)


@functools.cache
def splu_largest(name: str) -> int:
    """The largest γ SPLU-Gen accepts for the table's sensitive attribute (plan's)."""
    table = load(name)
    found = privpub.plan(table.frame, schema=table.schema, mechanisms=["splu"],
                         sensitive=table.sensitive, group_sizes=(2, 3, 4, 5)).to_frame()
    largest = found["largest_group_size"].iloc[0]
    assert largest is not None and largest >= 2, found.library_error.tolist()
    return int(largest)


def splu_group_size(name: str) -> int:
    return min(splu_largest(name), 5)


def modes(table: Table) -> tuple:
    """duplicates= settings: both when the table repeats a tuple, else the default."""
    return ("set", "records") if table.repeats else (None,)


# ---- queries and their truth -----------------------------------------------------------------


def ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def literal(value: object) -> str:
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return repr(float(value)) if isinstance(value, float) else str(int(value))


@dataclass(frozen=True)
class Query:
    sql: str
    records: int      # Q(I) counting records
    distinct: int     # Q(I) counting distinct tuples
    n_domain: int     # Q(D), derived here from the domains


@functools.cache
def queries(name: str) -> tuple[Query, ...]:
    """QUERIES queries of 1–3 attributes, seeded by the table's name: equality on
    each, except ≥ on a first attribute whose domain is ordered (an IntRange or
    an ordered Categorical), with values read off a random record."""
    table = load(name)
    schema, truth = table.schema, filled(table)
    distinct = truth.drop_duplicates()
    rng = np.random.default_rng(zlib.crc32(table.name.encode()))
    out = []
    for _ in range(QUERIES):
        width = int(rng.integers(1, min(3, len(schema)) + 1))
        names = [str(n) for n in rng.choice(list(schema.names), width, replace=False)]
        row = truth.iloc[int(rng.integers(len(truth)))]
        parts, n_domain = [], schema.size
        mask_all, mask_distinct = np.ones(len(truth), bool), np.ones(len(distinct), bool)
        for j, attribute in enumerate(names):
            attr, value = schema[attribute], row[attribute]
            value = value.item() if isinstance(value, np.generic) else value
            if j == 0 and (isinstance(attr, IntRange) or attr.ordered):
                op = ">="
                hits = attr.hi - value + 1 if isinstance(attr, IntRange) else \
                    attr.size - attr.values.index(value)
                mask_all &= (truth[attribute] >= value).to_numpy()
                mask_distinct &= (distinct[attribute] >= value).to_numpy()
                if attr.missing is not None:  # missing lies outside the order: never >= v
                    rank = (attr.missing if isinstance(attr, IntRange)
                            else attr.values.index(attr.missing))
                    hits -= rank >= (value if isinstance(attr, IntRange)
                                     else attr.values.index(value))
                    mask_all &= (truth[attribute] != attr.missing).to_numpy()
                    mask_distinct &= (distinct[attribute] != attr.missing).to_numpy()
            else:
                op, hits = "=", 1
                mask_all &= (truth[attribute] == value).to_numpy()
                mask_distinct &= (distinct[attribute] == value).to_numpy()
            n_domain = n_domain // attr.size * hits
            parts.append(f"{ident(attribute)} {op} {literal(value)}")
        out.append(Query(" and ".join(parts), int(mask_all.sum()), int(mask_distinct.sum()),
                         n_domain))
    return tuple(out)


def exact_sd(view: PublishedView, q: Query) -> float:
    """The standard deviation of the estimate for this truth (derived here, not
    the library's plug-in stderr): n_V is a sum of independent indicators."""
    p = view.parameters
    records = (p["records"] or {}).get("duplicates") == "records"
    count = q.records if records else q.distinct
    if view.mechanism == "alphabeta":
        a, b = p["alpha"], p["beta"]
        first = q.distinct  # first copies: α+β; further copies: α; other tuples: β
        var = (first * (a + b) * (1 - a - b) + (count - first) * a * (1 - a)
               + (q.n_domain - first) * b * (1 - b))
        return math.sqrt(var) / a
    g, n, m = p["gamma_frapp"], p["n"], view.schema.size
    o = (1 - g) / (m - 1)
    p_in, p_out = g + o * (q.n_domain - 1), o * q.n_domain
    var = count * p_in * (1 - p_in) + (n - count) * p_out * (1 - p_out)
    return math.sqrt(var) / (g - o)


def wrong_noise(view: PublishedView, est: privpub.Estimate) -> float:
    """The estimate a library with its noise rate off by 10% would give: β for
    αβ, the off-diagonal o for FRAPP."""
    p = view.parameters
    if view.mechanism == "alphabeta":
        return (est.n_view - 1.1 * p["beta"] * est.n_domain) / p["alpha"]
    g, m = p["gamma_frapp"], view.schema.size
    o = 1.1 * (1 - g) / (m - 1)
    return (est.n_view - p["n"] * o * est.n_domain) / (g - o)


@dataclass(frozen=True)
class Trial:
    unit: tuple       # (table, mode, seed): one view; views are independent
    query: int        # the query's position in queries(name)
    error: float      # estimate − truth
    bound: float
    sd: float         # the exact σ of the estimate (0: a query without noise)
    wrong_error: float


@functools.cache
def runs(name: str, kind: str) -> tuple[Trial, ...]:
    """Every (mode, seed, query) of one mechanism on one table: publish → to_parquet
    → open (streamed) → estimate; the first seed also read_parquet (same codes)
    and the in-memory estimates (equal). Each mode draws its own seeds."""
    table, mech = load(name), mechanism(name, kind)
    trials = []
    with tempfile.TemporaryDirectory() as folder:
        for i, mode in enumerate(modes(table)):
            for seed in (1000 * i + s for s in SEEDS):
                view = mech.publish(table.frame, seed=seed, duplicates=mode)
                path = os.path.join(folder, f"{kind}-{mode}-{seed}.parquet")
                view.to_parquet(path)
                on_file = PublishedView.open(path)
                first = seed == 1000 * i + SEEDS[0]
                if first:
                    again = PublishedView.read_parquet(path)
                    assert again.schema == table.schema
                    assert (again.codes == view.codes).all()
                if kind == "alphabeta":  # (FRAPP's guarantee does not say yet)
                    counted = "distinct tuples" if mode == "set" else "records"
                    assert f"n = {on_file.parameters['n']:,} {counted}" in str(
                        on_file.guarantee())
                for j, q in enumerate(queries(name)):
                    est = on_file.estimate(q.sql)
                    if first:
                        assert view.estimate(q.sql) == est
                    assert est.n_domain == q.n_domain, q.sql
                    truth = q.records if mode == "records" else q.distinct
                    trials.append(Trial((name, mode, seed), j, est.value - truth, est.bound,
                                        exact_sd(on_file, q), wrong_noise(on_file, est) - truth))
    return tuple(trials)


def coverage_holds(trials: list[Trial], failure_probability: float, shrink: float = 1.0) -> bool:
    """For each query position, the views that miss its bound (× ``shrink``) are
    independent Bernoulli(≤ ε): at most the binomial quantile at LEVEL/QUERIES
    each (Bonferroni over the positions; queries of one view are correlated)."""
    for j in range(QUERIES):
        at = [t for t in trials if t.query == j]
        missed = sum(abs(t.error) >= t.bound * shrink for t in at)
        if missed > binom.isf(LEVEL / QUERIES, len(at), failure_probability):
            return False
    return True


def mean_z(trials: list[Trial], wrong: bool = False) -> tuple[float, int]:
    """The mean over views of each view's mean z (its queries are correlated, so a
    view is the unit: its mean z has variance ≤ 1), and the number of views."""
    units: dict[tuple, list[float]] = {}
    for t in trials:
        if t.sd > 0:
            units.setdefault(t.unit, []).append((t.wrong_error if wrong else t.error) / t.sd)
    means = [float(np.mean(z)) for z in units.values()]
    return float(np.mean(means)), len(means)


# ---- the tests -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_prepared_table_encodes_to_its_values(name):
    """The declared schema takes the prepared frame, and its codes decode to the
    frame with the declared missing values filled in (pandas' own fillna)."""
    table = load(name)
    decoded = table.schema.decode(table.schema.encode(table.frame))
    truth = filled(table)
    for column in truth.columns:
        assert decoded[column].astype(object).tolist() == truth[column].astype(object).tolist()
    again = privpub.Schema.from_dict(json.loads(json.dumps(table.schema.to_dict())))
    assert again == table.schema


@pytest.mark.parametrize("name", NAMES)
def test_every_input_kind_gives_the_same_release(name, tmp_path):
    """pandas, Arrow, polars, a CSV path and a Parquet path: the same codes for
    the same seed, for αβ, FRAPP and SPLU-Gen."""
    pytest.importorskip("polars")
    table = load(name)
    inputs = {kind: as_kind(table.frame, kind, str(tmp_path)) for kind in KINDS}
    mode = modes(table)[0]
    splu = SPLUGen(splu_group_size(name), table.sensitive, schema=table.schema)
    releases = {
        "alphabeta": lambda data: mechanism(name, "alphabeta").publish(data, seed=5,
                                                                       duplicates=mode),
        "frapp": lambda data: mechanism(name, "frapp").publish(data, seed=5, duplicates=mode),
        "splu": lambda data: splu.publish(data, seed=5),
    }
    codes = table.schema.encode(table.frame)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # SPLU-Gen's residue note
        expected = {mech: publish(inputs["pandas"]).codes for mech, publish in releases.items()}
        for kind, data in inputs.items():
            assert (table.schema.encode(data) == codes).all(), kind
            for mech, publish in releases.items():
                if kind != "pandas":
                    assert (publish(data).codes == expected[mech]).all(), (kind, mech)


# Several corpus tables are small for their domains: their bounds are wide, which
# the releases say (UsefulnessWarning); what is checked here is that they hold.
@pytest.mark.filterwarnings("ignore::privpub.UsefulnessWarning")
@pytest.mark.parametrize("kind", ["alphabeta", "frapp"])
@pytest.mark.parametrize("name", NAMES)
def test_estimates_within_their_stated_bound(name, kind):
    """|estimate − truth| < bound fails at most as often as ε allows, for each
    query over the table's views (binomial tolerance)."""
    trials = list(runs(name, kind))
    assert coverage_holds(trials, mechanism(name, kind).failure_probability), (name, kind)
    # A query every tuple of D satisfies has no noise: the estimate is exact.
    assert all(abs(t.error) < 1e-6 for t in trials if t.sd == 0)


@pytest.mark.filterwarnings("ignore::privpub.UsefulnessWarning")  # as above: runs() is shared
@pytest.mark.parametrize("kind", ["alphabeta", "frapp"])
def test_estimates_are_unbiased_over_the_corpus(kind):
    """The mean over every view of the corpus of its mean z is within 4/√views of
    0. Power, shown: the same check rejects the noise rate (β, or FRAPP's o) off
    by 10%, and the coverage check rejects a bound 10× too small."""
    trials = [t for name in NAMES for t in runs(name, kind)]
    mean, views = mean_z(trials)
    assert abs(mean) <= 4 / math.sqrt(views), (kind, mean, views)
    wrong, _ = mean_z(trials, wrong=True)
    assert abs(wrong) > 4 / math.sqrt(views), (kind, wrong, views)
    failure_probability = mechanism(NAMES[0], kind).failure_probability
    assert coverage_holds(trials, failure_probability)
    assert not coverage_holds(trials, failure_probability, shrink=0.1)


@pytest.mark.parametrize("name", NAMES)
def test_unprepared_tables_are_named_one_line_errors(name, tmp_path):
    """Each unprepared form of the table, in each input kind, is the named error
    class with a one-line message naming the column (and value, row), whether it
    meets the schema (encode, publish) or schema inference (from_frame, plan)."""
    pytest.importorskip("polars")
    table = load(name)
    assert table.failures
    for failure in table.failures:
        frame = failure.data()
        for kind in failure.kinds:
            data = as_kind(frame, kind, str(tmp_path))
            calls = ([lambda d: privpub.Schema.from_frame(d), lambda d: privpub.plan(d)]
                     if failure.schema is None else
                     [failure.schema.encode, AlphaBeta(failure.schema, 0.5, 1e-9,
                                                       n=len(frame)).publish])
            error, names = failure.error, failure.names
            if kind == "csv" and failure.csv_error is not None:
                error, names = failure.csv_error, names[:1]
            for call in calls:
                with pytest.raises(error) as caught:
                    call(data)
                text = one_line(caught.value)
                for word in names:
                    assert word in text, (failure.what, kind, text)


@functools.cache
def splu_runs(name: str) -> tuple[tuple, ...]:
    """Each (seed, sensitive value with records in a group): (unit, f, f'); the
    release goes through to_parquet and is estimated from the opened file.
    Checks on the way: the residue is warned about with its count, values with
    no records are never published, the other columns are published exactly,
    and a reconstruction with a predicate is a count in [0, n]."""
    table = load(name)
    group_size, s = splu_group_size(name), table.sensitive
    mech = SPLUGen(group_size, s, schema=table.schema)
    residue = mech.partition(table.frame).residue
    assert len(residue) == len(table.frame) % group_size
    keep = np.ones(len(table.frame), dtype=bool)
    keep[residue] = False
    truth = filled(table)[keep]
    f = truth[s].value_counts()
    out = []
    with tempfile.TemporaryDirectory() as folder:
        for seed in SEEDS:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                view = mech.publish(table.frame, seed=seed)
            notes = [str(w.message) for w in caught if "decoy group" in str(w.message)]
            assert bool(notes) == bool(len(residue))
            assert all(f"{len(residue)} of {len(table.frame):,} records" in n for n in notes)
            path = os.path.join(folder, f"splu-{seed}.parquet")
            view.to_parquet(path)
            on_file = PublishedView.open(path)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UsefulnessWarning)  # values published 0 times
                counts = sensitive_counts(on_file, s)
            labels = on_file.schema.projection([s])[s]
            for value, published in zip(labels, counts.value, strict=True):
                count = int(f.get(value, 0))
                if count == 0:
                    assert published == 0, value
                else:
                    out.append(((name, seed), count, float(published)))
            if seed == SEEDS[0]:
                rows = table.schema.decode(view.codes).drop(columns=s)
                same = truth.drop(columns=s).astype(object)
                key = list(rows.columns)
                assert rows.astype(object).sort_values(key).to_numpy().tolist() == \
                    same.sort_values(key).to_numpy().tolist()
                other = next(a for a in table.schema.names if a != s)
                value = truth[other].iloc[0]
                value = value.item() if isinstance(value, np.generic) else value
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UsefulnessWarning)
                    got = reconstruct(on_file, f"{ident(other)} = {literal(value)}",
                                      {s: truth[s].iloc[0]})
                assert 0 <= got.value <= keep.sum()
                low, high = got.interval()
                assert 0 <= low <= high <= keep.sum()
    return tuple(out)


@pytest.mark.parametrize("name", NAMES)
def test_splu_gen_counts_and_refusal(name):
    """The guarantee's large-sum utility (|f' − f| ≤ 0.3 f for f ≥ T_f, w.p. ≥
    0.95) holds for each value over the seeds within the binomial tolerance
    (Bonferroni over values), and one γ past the eligible ones is a named error."""
    table, group_size = load(name), splu_group_size(name)
    threshold = utility_threshold_chebyshev(group_size, 0.3, 0.05)
    trials = splu_runs(name)
    large = {}
    for (_, _), f, published in trials:
        if f >= threshold:
            large.setdefault(f, []).append(abs(published - f) > 0.3 * f)
    for misses in large.values():
        assert sum(misses) <= binom.isf(LEVEL / max(len(large), 1), len(misses), 0.05)
    with pytest.raises(ParameterError) as caught:
        SPLUGen(splu_largest(name) + 1, table.sensitive, schema=table.schema).publish(
            table.frame, seed=0)
    assert repr(table.sensitive) in one_line(caught.value)


def test_splu_gen_is_unbiased_over_the_corpus():
    """z = (f' − f)/√(f(1 − 1/γ)) (f'_s ~ Binomial(γ f_s, 1/γ)): the mean over the
    corpus's views of each view's mean z is within 4/√views of 0; power, shown:
    the check rejects estimates 10% too large."""
    units: dict[tuple, list[tuple[float, float]]] = {}
    for name in NAMES:
        group_size = splu_group_size(name)
        for unit, f, published in splu_runs(name):
            sd = math.sqrt(f * (1 - 1 / group_size))
            units.setdefault(unit, []).append(((published - f) / sd,
                                               (1.1 * published - f) / sd))
    right = np.mean([np.mean([z for z, _ in zs]) for zs in units.values()])
    wrong = np.mean([np.mean([w for _, w in zs]) for zs in units.values()])
    limit = 4 / math.sqrt(len(units))
    assert abs(right) <= limit, (right, limit)
    assert abs(wrong) > limit, (wrong, limit)


# ---- the command line ------------------------------------------------------------------------


def cli(*calls: list[str], cwd: str) -> list[subprocess.CompletedProcess]:
    """``privpub`` subprocesses, run side by side (each pays the import once)."""
    running = [subprocess.Popen([sys.executable, "-m", "privpub.cli", *args], cwd=cwd,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for args in calls]
    done = []
    for args, proc in zip(calls, running, strict=True):
        out, err = proc.communicate(timeout=600)
        done.append(subprocess.CompletedProcess(args, proc.returncode, out, err))
    return done


def ok(done: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert done.returncode == 0, (done.args, done.stderr)
    return done


def cli_error(done: subprocess.CompletedProcess, *words: str) -> None:
    """Exit 1 with one line on stderr (no traceback) naming each of ``words``."""
    assert done.returncode == 1, (done.args, done.stderr)
    lines = done.stderr.strip().splitlines()
    error = [line for line in lines if line.startswith("privpub: error: ")]
    assert len(error) == 1 and "Traceback" not in done.stderr, done.stderr
    for word in words:
        assert word in error[0], (word, error[0])


def write_table(table: Table, folder, schema_file: str) -> None:
    """The prepared table as CSV and its schema as YAML or JSON, as a user writes them."""
    table.frame.to_csv(folder / "table.csv", index=False)
    document = table.schema.to_dict()
    (folder / schema_file).write_text(
        yaml.safe_dump(document, allow_unicode=True) if schema_file.endswith(".yaml")
        else json.dumps(document, ensure_ascii=False), encoding="utf-8")


def check_estimates(done: subprocess.CompletedProcess, view: PublishedView,
                    sqls: list[str]) -> None:
    """`privpub estimate --format json` gives the API's estimates."""
    rows = json.loads(ok(done).stdout)
    assert rows == view.estimate_many(sqls).to_records()


@pytest.mark.slow
def test_command_line_matches_the_api_penguins(tmp_path):
    """plan → publish alphabeta|frapp|splu → estimate / splu estimate on the
    penguins' CSV with a YAML schema declaring missing values: exit 0, the API's
    codes for the same seed and its estimates; palmerpenguins' own CSV (missing
    cells, no schema) is a one-line error naming the column and --missing."""
    import palmerpenguins

    name = "penguins"
    table = load(name)
    write_table(table, tmp_path, "schema.yaml")
    palmerpenguins.load_penguins().to_csv(tmp_path / "raw.csv", index=False)
    common = ["--input", "table.csv", "--schema", "schema.yaml", "--seed", "7"]
    mode = modes(table)[0]
    dup = [] if mode is None else ["--duplicates", mode]
    (ka, ga), (kf, gf) = point(name, "alphabeta"), point(name, "frapp")
    group_size, s = splu_group_size(name), table.sensitive
    planned, refused, *published = cli(
        ["plan", "--input", "table.csv", "--schema", "schema.yaml", "--format", "json"],
        ["publish", "alphabeta", "--input", "raw.csv", "--output", "raw.parquet",
         "--duplicates", "set"],
        ["publish", "alphabeta", *common, "--output", "ab.parquet", "--k", repr(ka),
         "--gamma", repr(ga), *dup],
        ["publish", "frapp", *common, "--output", "fr.parquet", "--k", repr(kf), "--gamma",
         repr(gf), *dup],
        ["publish", "splu", *common, "--output", "sp.parquet", "--group-size", str(group_size),
         "--sensitive", s], cwd=str(tmp_path))
    facts = json.loads(ok(planned).stdout)
    assert (facts["n"], facts["m"]) == (len(table.frame), table.schema.size)
    cli_error(refused, "'bill_length_mm'", "missing", "--missing")
    assert not (tmp_path / "raw.parquet").exists()
    for done in published:
        ok(done)
    api = {"ab": mechanism(name, "alphabeta").publish(table.frame, seed=7, duplicates=mode),
           "fr": mechanism(name, "frapp").publish(table.frame, seed=7, duplicates=mode)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        api["sp"] = SPLUGen(group_size, s, schema=table.schema).publish(table.frame, seed=7)
    for key, view in api.items():
        assert (PublishedView.read_parquet(tmp_path / f"{key}.parquet").codes == view.codes).all()
    sqls = [q.sql for q in queries(name)]
    value = filled(table)[s].iloc[0]
    ab, fr, sp = cli(["estimate", "ab.parquet", *sqls, "--format", "json"],
                     ["estimate", "fr.parquet", *sqls, "--format", "json"],
                     ["splu", "estimate", "sp.parquet", "--value", f"{s}={value}"],
                     cwd=str(tmp_path))
    check_estimates(ab, api["ab"], sqls)
    check_estimates(fr, api["fr"], sqls)
    counts = sensitive_counts(api["sp"], s)
    labels = api["sp"].schema.projection([s])[s].tolist()
    expected = counts.value[labels.index(value)]
    shown = re.search(r"≈ ([\d,.]+) ±", ok(sp).stdout).group(1)
    assert float(shown.replace(",", "")) == round(expected, 1)


@pytest.mark.slow
def test_command_line_takes_csv_dates_as_text(tmp_path):
    """seattle-weather: dates as the CSV's text in a declared Categorical of days
    (JSON schema), published and estimated as the API does; vega's own table
    written by pandas (ISO dates) is refused without a schema (each date nearly a row
    of its own, the measurements exact floats), then planned with them kept on purpose
    (--exact-domain), dates as text."""
    from vega_datasets import local_data

    name = "seattle_weather"
    table = load(name)
    write_table(table, tmp_path, "schema.json")
    local_data.seattle_weather().to_csv(tmp_path / "raw.csv", index=False)
    (k, gamma), sqls = point(name, "alphabeta"), [q.sql for q in queries(name)]
    kept = ["--exact-domain", "date,precipitation,temp_max,temp_min,wind"]
    published, refused, planned = cli(
        ["publish", "alphabeta", "--input", "table.csv", "--schema", "schema.json", "--seed",
         "7", "--output", "ab.parquet", "--k", repr(k), "--gamma", repr(gamma)],
        ["plan", "--input", "raw.csv", "--mechanism", "alphabeta", "--format", "json"],
        ["plan", "--input", "raw.csv", "--mechanism", "alphabeta", "--format", "json", *kept],
        cwd=str(tmp_path))
    ok(published)
    # A date a row of its own and exact floats are no domain until kept on purpose.
    cli_error(refused, "'date'", "--exact-domain date")
    assert json.loads(ok(planned).stdout)["n"] == len(table.frame)
    view = mechanism(name, "alphabeta").publish(table.frame, seed=7)
    assert (PublishedView.read_parquet(tmp_path / "ab.parquet").codes == view.codes).all()
    (estimated,) = cli(["estimate", "ab.parquet", *sqls, "--format", "json"],
                       cwd=str(tmp_path))
    check_estimates(estimated, view, sqls)


@pytest.mark.slow
def test_command_line_refuses_a_dense_table_by_name(tmp_path):
    """fertility (n/m = 0.14): the default request (k = 10) is a one-line error that
    names k's limit and `privpub plan`, nothing is written, and plan's point publishes
    as the API does; the World Bank's wide table is a one-line error naming '1960'."""
    import statsmodels.api as sm

    name = "fertility"
    table = load(name)
    write_table(table, tmp_path, "schema.json")
    sm.datasets.fertility.load_pandas().data.to_csv(tmp_path / "raw.csv", index=False)
    (k, gamma), sqls = point(name, "alphabeta"), [q.sql for q in queries(name)]
    default, wide, published = cli(
        ["publish", "alphabeta", "--input", "table.csv", "--schema", "schema.json",
         "--output", "refused.parquet"],
        ["plan", "--input", "raw.csv"],
        ["publish", "alphabeta", "--input", "table.csv", "--schema", "schema.json", "--seed",
         "7", "--output", "ab.parquet", "--k", repr(k), "--gamma", repr(gamma)],
        cwd=str(tmp_path))
    cli_error(default, "k must be below m/n = 7", "privpub plan")
    assert not (tmp_path / "refused.parquet").exists()
    cli_error(wide, "'1960'", "missing")
    ok(published)
    view = mechanism(name, "alphabeta").publish(table.frame, seed=7)
    assert (PublishedView.read_parquet(tmp_path / "ab.parquet").codes == view.codes).all()
    (estimated,) = cli(["estimate", "ab.parquet", *sqls, "--format", "json"],
                       cwd=str(tmp_path))
    check_estimates(estimated, view, sqls)


@pytest.mark.parametrize("name", NAMES)
def test_plan_answers_for_every_table(name):
    """plan for αβ and FRAPP: each point is feasible or refused with the library's
    own error text, never a crash (its bisections for the region's edges approach
    d = γ, where the calibration divided by zero: co2)."""
    table = load(name)
    found = privpub.plan(table.frame, schema=table.schema, mechanisms=["alphabeta", "frapp"],
                         ks=(1, 10), gammas=(0.2, 0.5), calibrations=["exclusive"]).to_frame()
    assert found.feasible.any()
    assert not found.loc[~found.feasible, "library_error"].isna().any()
