"""The release contract: a view reopens from its file alone, re-validated (the
document, privpub.viewfile.document; the rows against their digest).

Every tampered file below (edited the way a user would, by rewriting the
metadata JSON or the rows) must be refused with a PrivpubError naming the
field at fault; an untouched file must reopen and estimate as the original.
"""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import privpub
from privpub import FRAPP, AlphaBeta, ArtifactError, PrivpubError, PublishedView
from privpub.core.release import Mechanism

QUERY = "age > 40 and sex = 'Female'"


@pytest.fixture(scope="module")
def adult():
    df, schema = privpub.datasets.load_adult()
    return df, schema


@pytest.fixture(scope="module")
def saved(adult, tmp_path_factory):
    df, schema = adult
    view = AlphaBeta.for_privacy(schema, n=len(df), gamma=0.2, k=10).publish(df,
            duplicates="records", seed=3)
    path = tmp_path_factory.mktemp("release") / "view.parquet"
    view.to_parquet(path)
    return view, path


def rewrite(path, out, edit_meta=None, edit_table=None):
    """Copy a view file with its metadata and/or rows edited."""
    table = pq.read_table(path)
    meta = json.loads(pq.ParquetFile(path).metadata.metadata[b"privpub"])
    if edit_meta:
        edit_meta(meta)
    if edit_table:
        table = edit_table(table)
    # json.dumps writes NaN as the token NaN, as a careless editor would.
    table = table.replace_schema_metadata({b"privpub": json.dumps(meta).encode()})
    pq.write_table(table, out)
    return out


# 500 Adult records: the views say their bounds are weak (UsefulnessWarning); this
# test checks the release contract.
@pytest.mark.filterwarnings("ignore::privpub.UsefulnessWarning")
def test_mechanisms_implement_the_contract(adult):
    df, schema = adult
    for mech in (AlphaBeta.for_privacy(schema, n=500, gamma=0.2, k=10),
                 FRAPP.for_privacy(schema, n=500, gamma=0.2, k=10)):
        assert isinstance(mech, Mechanism)
        release = mech.publish(df.head(500), duplicates="records", seed=1)
        assert release.mechanism == mech.name
        assert release.seed_policy.startswith("seeded")
        assert release.library_version == privpub.__version__
        assert str(release.guarantee()).startswith("Guarantee of")


@pytest.mark.parametrize("reopen", [PublishedView.read_parquet, PublishedView.open])
def test_untouched_file_reopens_and_estimates_the_same(saved, reopen):
    view, path = saved
    again = reopen(path)
    assert again.parameters == view.parameters and again.seed_policy == view.seed_policy
    assert again.estimate(QUERY) == view.estimate(QUERY)
    np.testing.assert_array_equal(again.codes, view.codes)


def set_param(name, value):
    return lambda meta: meta["parameters"].__setitem__(name, value)


def drop(*keys):
    def edit(meta):
        target = meta
        for k in keys[:-1]:
            target = target[k]
        del target[keys[-1]]
    return edit


def widen(meta):
    meta["schema"]["attributes"][1]["values"].append("Space-force")


def widen_consistently(meta):
    widen(meta)
    m = int(meta["domain_size"]) // 7 * 8
    meta["domain_size"] = str(m)


TAMPERED = {
    "alpha=0": (set_param("alpha", 0.0), ArtifactError, "alpha"),
    "alpha<0": (set_param("alpha", -0.3), ArtifactError, "alpha"),
    "beta>1": (set_param("beta", 5.0), ArtifactError, "beta"),
    "beta=NaN": (set_param("beta", float("nan")), ArtifactError, "NaN, which is not a JSON"),
    "alpha as text": (set_param("alpha", "0.5"), ArtifactError, "alpha"),
    "n as float": (set_param("n", 30162.5), ArtifactError, "n"),
    "error bound edited": (set_param("error_bound", 1.0), ArtifactError, "error_bound"),
    "missing alpha": (drop("parameters", "alpha"), ArtifactError, "alpha"),
    "missing rows": (drop("rows"), ArtifactError, "rows"),
    "missing schema": (drop("schema"), ArtifactError, "schema"),
    "rows as text": (lambda m: m.__setitem__("rows", "1519417"), ArtifactError, "rows"),
    "widened domain": (widen, ArtifactError, "domain_size"),
    "widened domain and m": (widen_consistently, ArtifactError, "error_bound"),
    "unknown mechanism": (lambda m: m.__setitem__("mechanism", "magic"), ArtifactError,
                          "mechanism"),
    "seed policy": (lambda m: m.__setitem__("seed_policy", "trust me"), ArtifactError,
                    "seed_policy"),
    "row count": (lambda m: m.__setitem__("rows", m["rows"] - 1), ArtifactError, "rows"),
    "not a view": (lambda m: m.__setitem__("kind", "artifact"), ArtifactError, "kind"),
    "old format": (lambda m: m.__setitem__("format_version", 1), ArtifactError,
                   "'format_version' = 1"),
    "schema attribute broken": (drop("schema", "attributes", 0, "values"), ArtifactError,
                                "values"),
}


@pytest.mark.parametrize("case", sorted(TAMPERED))
@pytest.mark.parametrize("reopen", [PublishedView.read_parquet, PublishedView.open])
def test_tampered_metadata_is_refused(saved, tmp_path, case, reopen):
    _, path = saved
    edit, error, field = TAMPERED[case]
    bad = rewrite(path, tmp_path / "bad.parquet", edit_meta=edit)
    with pytest.raises(error, match=field) as info:
        reopen(bad)
    assert isinstance(info.value, PrivpubError)


def test_foreign_rows_are_refused(adult, saved, tmp_path):
    """Rows of one view under the metadata of another: same schema, same
    parameters, a different seed — the counts or the digest differ."""
    df, schema = adult
    view, path = saved
    other = AlphaBeta.for_privacy(schema, n=len(df), gamma=0.2, k=10).publish(df,
            duplicates="records", seed=4)
    other_path = tmp_path / "other.parquet"
    other.to_parquet(other_path)
    rows = pq.read_table(other_path)
    # Same number of rows as the first view, so only the digest can tell.
    rows = rows.slice(0, len(view)) if len(rows) >= len(view) else pa.concat_tables(
        [rows, rows.slice(0, len(view) - len(rows))])
    meta = {b"privpub": pq.ParquetFile(path).metadata.metadata[b"privpub"]}
    foreign = tmp_path / "foreign.parquet"
    pq.write_table(rows.replace_schema_metadata(meta), foreign)
    with pytest.raises(ArtifactError, match="digest"):
        PublishedView.read_parquet(foreign)
    opened = PublishedView.open(foreign)  # metadata alone is consistent …
    with pytest.raises(ArtifactError, match="digest"):
        opened.estimate(QUERY)  # … the first full pass over a column is not


def test_one_edited_value_is_refused(saved, tmp_path):
    view, path = saved

    def swap_one(table):
        sex = table.column("sex").combine_chunks()
        indices = sex.indices.to_numpy(zero_copy_only=False).copy()
        indices[0] = 1 - indices[0]
        edited = pa.DictionaryArray.from_arrays(indices, sex.dictionary)
        return table.set_column(table.schema.get_field_index("sex"), "sex", edited)

    bad = rewrite(path, tmp_path / "edited.parquet", edit_table=swap_one)
    with pytest.raises(ArtifactError, match="'sex'"):
        PublishedView.read_parquet(bad)
    with pytest.raises(ArtifactError, match="'sex'"):
        PublishedView.open(bad).estimate("sex = 'Male'")
    # A query that does not read the edited column still works: it is checked when read.
    assert PublishedView.open(bad).estimate("age > 40").value == view.estimate("age > 40").value


def test_value_outside_the_domain_in_the_rows_is_refused(saved, tmp_path):
    _, path = saved

    def rename(table):
        sex = table.column("sex").combine_chunks()
        edited = pa.DictionaryArray.from_arrays(sex.indices, pa.array(["Female", "Alien"]))
        return table.set_column(table.schema.get_field_index("sex"), "sex", edited)

    bad = rewrite(path, tmp_path / "alien.parquet", edit_table=rename)
    with pytest.raises(ArtifactError, match="Alien"):
        PublishedView.read_parquet(bad)


def test_not_a_privpub_file(tmp_path):
    plain = tmp_path / "plain.parquet"
    pq.write_table(pa.table({"a": [1, 2]}), plain)
    with pytest.raises(ArtifactError, match="no privpub metadata"):
        PublishedView.open(plain)
    with pytest.raises(ArtifactError, match="not a readable Parquet"):
        PublishedView.open(tmp_path / "missing.parquet")


# 2,000 Adult records: FRAPP's and the second view's bounds are weak, which they say
# (UsefulnessWarning); this test checks that the files reopen.
@pytest.mark.filterwarnings("ignore::privpub.UsefulnessWarning")
def test_frapp_and_multiview_releases_reopen(adult, tmp_path):
    df, schema = adult
    small = df.head(2000)
    frapp = FRAPP.for_privacy(schema, n=len(small), gamma=0.2, k=10).publish(small,
            duplicates="records", seed=2)
    frapp.to_parquet(tmp_path / "f.parquet")
    assert PublishedView.open(tmp_path / "f.parquet").estimate(QUERY) == frapp.estimate(QUERY)
    bad = rewrite(tmp_path / "f.parquet", tmp_path / "g.parquet",
                  edit_meta=set_param("gamma_frapp", 1.5))
    with pytest.raises(ArtifactError, match="field 'parameters': .*gamma_frapp"):
        PublishedView.open(bad)
    pub = privpub.MultiViewPublisher(AlphaBeta.for_privacy(schema, n=len(small), gamma=0.2,
                                                           k=10), max_views=2)
    pub.publish(small, duplicates="records", seed=1)
    second = pub.publish(small, duplicates="records", seed=2)
    second.to_parquet(tmp_path / "m.parquet")
    for reopen in (PublishedView.read_parquet, PublishedView.open):
        again = reopen(tmp_path / "m.parquet")
        assert again.estimate(QUERY) == second.estimate(QUERY)
        np.testing.assert_array_equal(again.context["previous_union"],
                                      second.context["previous_union"])
    bad = rewrite(tmp_path / "m.parquet", tmp_path / "n.parquet",
                  edit_meta=set_param("view_index", 3))
    with pytest.raises(ArtifactError, match="field 'parameters': .*view_index"):
        PublishedView.open(bad)
    bound = rewrite(tmp_path / "m.parquet", tmp_path / "o.parquet",
                    edit_meta=set_param("error_bound", 12.0))
    with pytest.raises(ArtifactError, match="error_bound"):
        PublishedView.open(bound)


def test_a_view_read_back_is_written_chunk_by_chunk(saved, tmp_path, monkeypatch):
    """Held digits are handed to the writer in chunks (slices), not as one batch
    whose Arrow columns would hold the whole view (integer columns as int64:
    2.96 GB to rewrite a 4×10^7-row census view read back, 0.67 GB in chunks);
    the file written again has the same rows' digest."""
    _, path = saved
    back = PublishedView.read_parquet(path)
    sizes = [len(next(iter(b.values()))) for b in back.rows.batches()]
    assert max(sizes) <= back.rows.chunk_rows and sum(sizes) == len(back)
    monkeypatch.setattr(back.rows, "chunk_rows", 100_000)
    sizes = [len(next(iter(b.values()))) for b in back.rows.batches(["age"])]
    assert len(sizes) == -(-len(back) // 100_000) and max(sizes) == 100_000
    again = tmp_path / "again.parquet"
    back.to_parquet(again)
    assert PublishedView.open(again).metadata()["digest"] == \
        PublishedView.open(path).metadata()["digest"]
