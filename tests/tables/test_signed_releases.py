"""Signed releases (issue 35): every release kind signs its document through the
API and the CLI; a reader who trusts the publisher's key refuses a release that
is unsigned, signed by another key, or edited in any byte the signature covers
(the document directly; the rows through the digests every read checks)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from parquet_edit import edit_footer, field

import privpub
from privpub import FRAPP, AlphaBeta, Categorical, IntRange, PublishedView, Schema, SPLUGen, cli
from privpub.alphabeta.multiview import MultiViewPublisher
from privpub.core.errors import ArtifactError, ParameterError, SignatureError
from privpub.core.signing import fingerprint, generate_key_pair, public_key
from privpub.graphs import CQ, Graph, LaplaceMechanism, MultipleQueryMechanism
from privpub.viewfile import groupstats, writer

pytestmark = pytest.mark.filterwarnings("ignore::privpub.PrivacyWarning",
                                        "ignore::privpub.UsefulnessWarning")

SCHEMA = Schema([Categorical("sex", ["F", "M"]), IntRange("age", 0, 99),
                 Categorical("job", ["a", "b", "c"])])
RNG = np.random.default_rng(5)
FRAME = pd.DataFrame({"sex": RNG.choice(["F", "M"], 400), "age": RNG.integers(0, 100, 400),
                      "job": RNG.choice(["a", "b", "c"], 400)})
TRIANGLE = "Q(x, y, z) :- R(x, y), R(y, z), R(z, x), x != y, y != z, z != x"


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    folder = tmp_path_factory.mktemp("keys")
    generate_key_pair(folder / "steward.key")
    generate_key_pair(folder / "other.key")
    return folder / "steward.key", folder / "steward.pub", folder / "other.pub"


def _graph():
    return Graph.from_edges(np.array([[0, 1], [1, 2], [2, 0], [2, 3]]), directed=False, m=40)


def _write(kind: str, path: Path, sign) -> Path:
    """A release of ``kind`` written to ``path`` (signed with ``sign``, or not)."""
    ab = AlphaBeta(SCHEMA, 0.6, 0.01)
    if kind == "alphabeta":
        ab.publish(FRAME, seed=1, duplicates="records").to_parquet(path, sign=sign)
    elif kind == "alphabeta-streamed":
        ab.publish_to_parquet(FRAME, path, seed=1, duplicates="records", sign=sign)
    elif kind == "frapp":
        FRAPP(SCHEMA, 0.5).publish(FRAME, seed=1, duplicates="records").to_parquet(path,
                                                                                    sign=sign)
    elif kind == "splu":
        SPLUGen(2, "job", schema=SCHEMA).publish(FRAME, seed=1).to_parquet(path, sign=sign)
    elif kind == "multiview":  # the second view holds the first as a context set
        publisher = MultiViewPublisher(ab, max_views=2)
        publisher.publish(FRAME, seed=1, duplicates="records")
        publisher.publish(FRAME, seed=2, duplicates="records").to_parquet(path, sign=sign)
    elif kind == "dask":
        path = path.with_suffix("")
        with dask.config.set(scheduler="synchronous"):
            ab.publish(dd.from_pandas(FRAME, npartitions=2), seed=1,
                       duplicates="records").to_parquet(path, sign=sign)
    elif kind == "graph-answer":
        path = path.with_suffix(".json")
        graph = _graph()
        LaplaceMechanism.for_graph(1.0, CQ.parse(TRIANGLE), graph).answer(
            graph, seed=1).to_json(path, sign=sign)
    else:
        path = path.with_suffix(".json")
        graph = _graph()
        MultipleQueryMechanism.for_graph(1.0, 0.5, [CQ.parse(TRIANGLE)] * 2, graph).answer(
            graph, seed=3).to_json(path, sign=sign)
    return path


KINDS = ["alphabeta", "alphabeta-streamed", "frapp", "splu", "multiview", "dask",
         "graph-answer", "graph-answers"]


def _answer(release):
    if release.answers_own_query:
        return [e.value for e in release.estimate_many()]
    return release.estimate("age > 40").value


@pytest.mark.parametrize("kind", KINDS)
def test_every_release_kind_is_signed_and_checked(kind, keys, tmp_path):
    private, public, other = keys
    signed = _write(kind, tmp_path / "signed.parquet", private)
    plain = _write(kind, tmp_path / "plain.parquet", None)
    trusted = privpub.open(signed, trust=public)
    assert trusted.signed.trusted and trusted.signed.fingerprint == fingerprint(
        public_key(public))
    assert _answer(trusted) == _answer(privpub.open(plain))  # the same release, signed
    seen = privpub.open(signed)  # no trust asked: the signature is checked, the key shown
    assert not seen.signed.trusted and seen.signed.fingerprint == trusted.signed.fingerprint
    assert privpub.open(plain).signed is None
    with pytest.raises(SignatureError, match="it is signed by SHA256:.*not by the trusted key"):
        privpub.open(signed, trust=other)
    with pytest.raises(SignatureError, match="it is not signed; the trusted key SHA256:"):
        privpub.open(plain, trust=public)
    if not trusted.answers_own_query:
        assert PublishedView.read_parquet(signed, trust=public).signed.trusted
        with pytest.raises(SignatureError, match="not by the trusted key"):
            PublishedView.read_parquet(signed, trust=other)


@pytest.fixture(scope="module")
def signed_view(keys, tmp_path_factory):
    """A signed αβ view of several row groups, sorted by age (so pruned counts skip groups)."""
    private, _, _ = keys
    path = tmp_path_factory.mktemp("signed") / "view.parquet"
    view = AlphaBeta(SCHEMA, 1.0, 0.0).publish(FRAME, seed=1, duplicates="records")
    with pytest.MonkeyPatch.context() as patch:  # small row groups: pruning has groups to skip
        patch.setattr(writer, "CHUNK_ROWS", 64)
        view.to_parquet(path, sign=private)
    assert pq.ParquetFile(path).metadata.num_row_groups > 2
    return path


def _flip(path: Path, out: Path, at: int) -> Path:
    data = bytearray(path.read_bytes())
    data[at] ^= 0x01
    out.write_bytes(bytes(data))
    return out


def _document_span(path: Path) -> tuple[int, int]:
    """Where the privpub document's bytes lie in the file."""
    data = path.read_bytes()
    raw = pq.ParquetFile(path).metadata.metadata[b"privpub"]
    start = data.rindex(raw)
    return start, start + len(raw)


def test_a_byte_flipped_in_the_document_is_refused_with_or_without_trust(signed_view, keys,
                                                                         tmp_path):
    _, public, _ = keys
    start, end = _document_span(signed_view)
    document = signed_view.read_bytes()[start:end]
    # Inside values that parse either way: a digit of the rows, of a group's
    # statistics, a parameter, a letter of the schema.
    for i, marker in enumerate((b'"rows": ', b'"high": [', b'"alpha": ', b'"sex"')):
        at = start + document.index(marker) + len(marker)
        bad = _flip(signed_view, tmp_path / f"bad{i}.parquet", at)
        for trust in (public, None):  # refused as edited, before its content is read
            with pytest.raises(SignatureError, match="does not verify .* a byte it covers"):
                privpub.open(bad, trust=trust)


def test_edited_rows_and_footer_of_a_signed_file_are_refused(signed_view, keys, tmp_path):
    _, public, _ = keys
    column = pq.ParquetFile(signed_view).metadata.row_group(0).column(1)  # age
    end = (column.dictionary_page_offset or column.data_page_offset) \
        + column.total_compressed_size
    at = column.data_page_offset + (end - column.data_page_offset) * 3 // 4  # in its data page
    rows = _flip(signed_view, tmp_path / "rows.parquet", at)
    with pytest.raises(ArtifactError):
        PublishedView.read_parquet(rows, trust=public)
    with pytest.raises(ArtifactError):  # a count that reads the edited column chunk
        privpub.open(rows, trust=public).estimate("age > 10")

    def fewer_rows(meta):
        group = field(meta, 4)[2][1][0]
        field(group, 3)[2] -= 1
        field(meta, 3)[2] -= 1

    footer = edit_footer(signed_view, tmp_path / "footer.parquet", fewer_rows)
    with pytest.raises(ArtifactError, match="rows"):
        privpub.open(footer, trust=public)


def _set_entry(path: Path, out: Path, key: bytes, value: bytes | None) -> Path:
    def edit(meta):
        entries = field(meta, 5)[2][1]
        for entry in entries:
            if field(entry, 1)[2] == key:
                if value is None:
                    entries.remove(entry)
                else:
                    field(entry, 2)[2] = value
                return
        raise AssertionError(f"no {key!r} entry")
    return edit_footer(path, out, edit)


def test_forged_signatures_are_named_errors(signed_view, keys, tmp_path):
    _, public, other = keys
    entry = json.loads(pq.ParquetFile(signed_view).metadata.metadata[b"privpub.signature"])
    raw = entry["signature"]
    ssh_rsa = ("ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAAAgQDH0hy6xB3iT2Q2nDdCqQJe5l5bT5nS9aMxZ0"
               "vW2V5d0rW3b9i3aGq0Jm0k3Nw3cJqYq2oQ8bH1kJm3d3h5pS0PkqjM3z3rQyXr4o8fR7n1u"
               "0y6a0d8f3s3r4n7wJ8m4x0z8c6V7h8s9d0f1g2h3j4k5l6m7n8o9p0q1r2s3t4u5v6w7x8y9z0"
               "A1B2C3D4E5F6G7H8I9J0==")
    cases = {
        "truncated": (dict(entry, signature=raw[:40]), "holds 30 bytes"),
        "not base64": (dict(entry, signature="%%%"), "is not base64"),
        "another key's": (dict(entry, public_key=other.read_text().split(" privpub")[0]),
                          "not by the trusted key|does not verify"),
        "wrong algorithm": (dict(entry, algorithm="rsa"), "algorithm is 'rsa'"),
        "missing field": ({k: v for k, v in entry.items() if k != "algorithm"},
                          "must be an object of"),
        "not a key": (dict(entry, public_key="ssh-ed25519 AAAA"), "not an OpenSSH public key"),
        "an RSA key": (dict(entry, public_key=ssh_rsa), "RSA key|not an OpenSSH public key"),
    }
    for i, (name, (forged, match)) in enumerate(cases.items()):
        bad = _set_entry(signed_view, tmp_path / f"sig{i}.parquet", b"privpub.signature",
                         json.dumps(forged).encode())
        with pytest.raises(SignatureError, match=match):
            privpub.open(bad, trust=public)
        if name != "another key's":  # a valid entry of another key, over the wrong bytes
            with pytest.raises(SignatureError, match=match):
                privpub.open(bad)
    junk = _set_entry(signed_view, tmp_path / "junk.parquet", b"privpub.signature", b"[[[")
    with pytest.raises(ArtifactError, match="privpub signature is not JSON"):
        privpub.open(junk, trust=public)
    stripped = _set_entry(signed_view, tmp_path / "unsigned.parquet", b"privpub.signature",
                          None)
    with pytest.raises(SignatureError, match="it is not signed"):
        privpub.open(stripped, trust=public)
    assert privpub.open(stripped).signed is None  # without trust, as an unsigned release


def test_forged_group_statistics_are_refused_under_trust_whatever_group(signed_view, keys,
                                                                        tmp_path):
    """Statistics rewritten and resealed (the seal is a plain SHA-256 anyone can
    recompute): the signature covers them, so no query's answer can change."""
    _, public, _ = keys
    meta = json.loads(pq.ParquetFile(signed_view).metadata.metadata[b"privpub"])
    part = meta["digest"]["parts"][0]
    age = SCHEMA.names.index("age")
    part["groups"][-1]["low"][age] = 60
    part["groups"][-1]["high"][age] = 63
    stats = tuple(groupstats.GroupStats(g["rows"], tuple(g["low"]), tuple(g["high"]),
                                        g["columns"]) for g in part["groups"])
    part["groups_sha256"] = groupstats.seal(stats, SCHEMA.names)
    forged = _set_entry(signed_view, tmp_path / "forged.parquet", b"privpub",
                        json.dumps(meta).encode())
    with pytest.raises(SignatureError, match="does not verify"):
        privpub.open(forged, trust=public)
    with pytest.raises(SignatureError, match="does not verify"):
        privpub.open(forged)  # the key it names does not sign the forged document either


def test_ssh_keygen_and_pem_keys_sign_and_trust(tmp_path):
    if shutil.which("ssh-keygen") is None:
        pytest.skip("ssh-keygen is not installed")
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "ops",
                    "-f", str(tmp_path / "id_ed25519")], check=True)
    view = AlphaBeta(SCHEMA, 1.0, 0.0).publish(FRAME, seed=1, duplicates="records")
    view.to_parquet(tmp_path / "v.parquet", sign=tmp_path / "id_ed25519")
    opened = privpub.open(tmp_path / "v.parquet", trust=tmp_path / "id_ed25519.pub")
    listed = subprocess.run(["ssh-keygen", "-l", "-f", str(tmp_path / "id_ed25519.pub")],
                            check=True, capture_output=True, text=True).stdout
    assert opened.signed.trusted and opened.signed.fingerprint in listed
    assert opened.estimate("sex = 'F'").value == (FRAME.sex == "F").sum()


def test_a_wrong_signing_key_fails_before_anything_is_written(keys, tmp_path):
    _, public, _ = keys
    view = AlphaBeta(SCHEMA, 1.0, 0.0).publish(FRAME, seed=1, duplicates="records")
    with pytest.raises(ParameterError, match="is not a private key"):
        view.to_parquet(tmp_path / "v.parquet", sign=public)
    with pytest.raises(ParameterError, match="cannot read the key"):
        AlphaBeta(SCHEMA, 1.0, 0.0).publish_to_parquet(FRAME, tmp_path / "w.parquet",
                                                       duplicates="records",
                                                       sign=tmp_path / "absent.key")
    assert list(tmp_path.iterdir()) == []


def test_the_cli_signs_and_trusts(keys, tmp_path, capsys):
    private, public, other = keys
    data = tmp_path / "people.csv"
    privpub.datasets.load_adult()[0].head(3000).to_csv(data, index=False)
    out = tmp_path / "view.parquet"
    assert cli.main(["publish", "frapp", "--input", str(data), "--output", str(out),
                     "--duplicates", "records", "--sign", str(private), "--seed", "1"]) == 0
    said = capsys.readouterr()
    assert f"signed by {fingerprint(public_key(public))}" in said.out
    assert f"--trust {public}" in said.err
    assert cli.main(["inspect", str(out), "--trust", str(public)]) == 0
    assert "the trusted key" in capsys.readouterr().out
    assert cli.main(["inspect", str(out), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["signed"] == {
        "fingerprint": fingerprint(public_key(public)), "trusted": False}
    assert cli.main(["estimate", str(out), "age > 40", "--trust", str(public)]) == 0
    capsys.readouterr()
    for command in (["estimate", str(out), "age > 40"], ["inspect", str(out)],
                    ["report", str(out), "--output", str(tmp_path / "card.html")],
                    ["attack", str(out), "--data", str(data), "--presence"]):
        assert cli.main([*command, "--trust", str(other)]) == 1
        assert "not by the trusted key" in capsys.readouterr().err
    assert cli.main(["report", str(out), "--output", str(tmp_path / "card.html"),
                     "--trust", str(public)]) == 0
    card = (tmp_path / "card.html").read_text()
    assert f"signed by {fingerprint(public_key(public))}, the trusted key" in card
