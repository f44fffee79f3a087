"""The standing hostile-input suite for signed releases (issue 35), in the slow
run: a signed view file's footer entries mutated at random (its document and
its signature: bytes flipped, truncated, extended, re-serialised, replaced by
other keys of every kind and by other documents' signatures), and forged
statistics of every group and attribute resealed. Each mutant opened with the
publisher's key trusted is refused with a named error (an ArtifactError, for
an edit of the signed document a SignatureError) within a bounded CPU time,
and never answers; without a trusted key, an edit of a signed document is
still refused."""

from __future__ import annotations

import json
import random
import time

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from parquet_edit import edit_footer, field

import privpub
from privpub import AlphaBeta, Categorical, IntRange, Schema
from privpub.core.errors import ArtifactError, SignatureError
from privpub.core.signing import canonical_json, generate_key_pair, signature_entry
from privpub.viewfile import groupstats, writer

pytestmark = [pytest.mark.slow,
              pytest.mark.filterwarnings("ignore::privpub.PrivacyWarning",
                                         "ignore::privpub.UsefulnessWarning")]

SCHEMA = Schema([Categorical("sex", ["F", "M"]), IntRange("age", 0, 99),
                 Categorical("job", ["a", "b", "c"])])
#: A refusal takes milliseconds; this bounds a hang or a blow-up (CPU time, not wall).
CPU_SECONDS = 5.0
MUTANTS = 1_000


@pytest.fixture(scope="module")
def signed(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile-signatures")
    generate_key_pair(folder / "steward.key")
    rng = np.random.default_rng(9)
    frame = pd.DataFrame({"sex": rng.choice(["F", "M"], 600),
                          "age": rng.integers(0, 100, 600),
                          "job": rng.choice(["a", "b", "c"], 600)})
    view = AlphaBeta(SCHEMA, 1.0, 0.0).publish(frame, seed=1, duplicates="records")
    path = folder / "view.parquet"
    with pytest.MonkeyPatch.context() as patch:  # several row groups
        patch.setattr(writer, "CHUNK_ROWS", 100)
        view.to_parquet(path, sign=folder / "steward.key")
    footer = pq.ParquetFile(path).metadata.metadata
    return path, folder / "steward.pub", folder / "steward.key", footer


def _with_entries(path, out, entries: dict[bytes, bytes | None]):
    """The file with its footer's key-value entries set (None: removed)."""
    def edit(meta):
        kept = field(meta, 5)[2][1]
        for key, value in entries.items():
            found = [e for e in kept if field(e, 1)[2] == key]
            if value is None:
                for e in found:
                    kept.remove(e)
            else:
                field(found[0], 2)[2] = value
    return edit_footer(path, out, edit)


def _ssh_line(key) -> str:
    return key.public_key().public_bytes(serialization.Encoding.OpenSSH,
                                         serialization.PublicFormat.OpenSSH).decode()


def _other_lines() -> list[str]:
    """Public key lines of every other kind: RSA, ECDSA, another Ed25519 key."""
    return [_ssh_line(rsa.generate_private_key(public_exponent=65537, key_size=1024)),
            _ssh_line(ec.generate_private_key(ec.SECP256R1())),
            _ssh_line(ed25519.Ed25519PrivateKey.generate())]


def _mutate_bytes(raw: bytes, rng: random.Random) -> bytes:
    data = bytearray(raw)
    how = rng.choice(["flip", "flip", "flip", "truncate", "extend", "swap"])
    if how == "flip":
        for _ in range(rng.randint(1, 3)):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    elif how == "truncate":
        del data[rng.randrange(len(data)):]
    elif how == "extend":
        data += bytes(rng.randrange(32, 127) for _ in range(rng.randint(1, 16)))
    else:
        i, j = rng.randrange(len(data)), rng.randrange(len(data))
        data[i], data[j] = data[j], data[i]
    return bytes(data)


def _mutant(footer: dict, key_file, rng: random.Random, lines: list[str]
            ) -> tuple[str, dict[bytes, bytes | None]]:
    """One mutation of the signed footer: what it is, and the entries it sets."""
    document, entry = footer[b"privpub"], footer[b"privpub.signature"]
    stored = json.loads(entry)
    kind = rng.choice(["document", "document", "entry bytes", "entry field", "resigned",
                       "reserialised", "dropped"])
    if kind == "document":
        return "document bytes", {b"privpub": _mutate_bytes(document, rng)}
    if kind == "entry bytes":
        return "signature entry bytes", {b"privpub.signature": _mutate_bytes(entry, rng)}
    if kind == "entry field":
        name = rng.choice(["algorithm", "public_key", "signature"])
        value = rng.choice([
            None, 0, "", "x" * 5000, rng.choice(lines), stored[name][:rng.randrange(1, 60)],
            stored["signature"][::-1], ["nested"], {"a": 1}])
        return f"signature field {name}", {
            b"privpub.signature": json.dumps(dict(stored, **{name: value})).encode()}
    if kind == "resigned":  # a valid signature by the same key, of other bytes
        other = json.loads(document)
        other["rows"] = other["rows"] + 1
        return "another document's signature", {b"privpub.signature": json.dumps(
            signature_entry(key_file, canonical_json(other))).encode()}
    if kind == "reserialised":  # the same content, other bytes
        return "document re-serialised", {b"privpub": json.dumps(
            json.loads(document), indent=1).encode()}
    return "signature removed", {b"privpub.signature": None}


def test_mutated_signed_footers_are_refused_by_name(signed, tmp_path):
    path, public, key_file, footer = signed
    rng, lines = random.Random(35_000), _other_lines()
    outcomes: dict[str, int] = {}
    for i in range(MUTANTS):
        what, entries = _mutant(footer, key_file, rng, lines)
        bad = _with_entries(path, tmp_path / f"m{i}.parquet", entries)
        if entries == {k: footer[k] for k in entries}:
            continue  # a mutation that changed nothing (two equal bytes swapped)
        start = time.process_time()
        with pytest.raises(ArtifactError) as refused:
            privpub.open(bad, trust=public).estimate("age > 30")
            pytest.fail(f"#{i} {what}: opened and answered")
        spent = time.process_time() - start
        assert spent < CPU_SECONDS, f"#{i} {what}: {spent:.1f} s of CPU"
        if what in ("document bytes", "document re-serialised"):
            assert isinstance(refused.value, SignatureError), f"#{i} {what}: {refused.value}"
            with pytest.raises(SignatureError):  # edited: refused with no key trusted too
                privpub.open(bad)
        name = type(refused.value).__name__
        outcomes[name] = outcomes.get(name, 0) + 1
        bad.unlink()
    # Both kinds of refusal are reached (a suite that never reached the
    # signature check would show only ArtifactErrors from parsing).
    assert outcomes.get("SignatureError", 0) > MUTANTS / 2, outcomes


def test_every_forged_statistic_of_every_group_is_refused_under_trust(signed, tmp_path):
    """Rows, low and high of each attribute of each group, moved and resealed
    (the seal anyone can recompute): the signature refuses each, whichever
    group or attribute a query would read."""
    path, public, _, footer = signed
    meta = json.loads(footer[b"privpub"])
    groups = meta["digest"]["parts"][0]["groups"]
    forged = 0
    for g in range(len(groups)):
        for stat, attribute in [("rows", None)] + [(s, a) for s in ("low", "high")
                                                   for a in range(len(SCHEMA))]:
            edited = json.loads(footer[b"privpub"])
            part = edited["digest"]["parts"][0]
            if attribute is None:
                part["groups"][g]["rows"] += 1
            else:
                part["groups"][g][stat][attribute] += 1 if stat == "high" else -1
            stats = tuple(groupstats.GroupStats(x["rows"], tuple(x["low"]), tuple(x["high"]),
                                                x["columns"]) for x in part["groups"])
            part["groups_sha256"] = groupstats.seal(stats, SCHEMA.names)
            bad = _with_entries(path, tmp_path / "forged.parquet",
                                {b"privpub": json.dumps(edited).encode()})
            for trust in (public, None):
                with pytest.raises(SignatureError, match="does not verify"):
                    privpub.open(bad, trust=trust).estimate("age > 30")
            forged += 1
    assert forged == len(groups) * (1 + 2 * len(SCHEMA))
