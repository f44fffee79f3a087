"""Ed25519 keys and signatures (privpub.core.signing, `privpub keygen`).

Keys in standard formats: privpub's own (PKCS#8 PEM and an OpenSSH public
line) and ssh-keygen's; fingerprints as ssh-keygen prints them; every
refusal (a key of another type, an encrypted or damaged key file, a
signature by another key, over edited bytes, truncated or not base64) a
named error.
"""

from __future__ import annotations

import base64
import os
import re
import shutil
import stat
import subprocess

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from privpub import OutputExistsError, ParameterError, cli
from privpub.core.errors import SignatureError
from privpub.core.signing import (
    fingerprint,
    generate_key_pair,
    private_key,
    public_key,
    sign,
    verify,
)

SSH_KEYGEN = shutil.which("ssh-keygen")
DOCUMENT = b'{"privpub": "a release\'s digest document"}'


def ssh_keygen(*args: str) -> str:
    if SSH_KEYGEN is None:
        pytest.skip("no ssh-keygen")
    return subprocess.run([SSH_KEYGEN, *args], check=True, capture_output=True,
                          text=True).stdout


def test_keygen_writes_a_private_key_only_its_owner_reads_and_a_public_line(tmp_path, capsys):
    path = tmp_path / "steward.key"
    assert cli.main(["keygen", "--output", str(path), "--comment", "census"]) == 0
    out = capsys.readouterr().out
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert path.read_bytes().startswith(b"-----BEGIN OPENSSH PRIVATE KEY-----")
    line = (tmp_path / "steward.pub").read_text()
    assert line.startswith("ssh-ed25519 ") and line.endswith(" census\n")
    key = private_key(path)
    assert fingerprint(key) == fingerprint(public_key(tmp_path / "steward.pub"))
    assert f"fingerprint {fingerprint(key)}" in out
    if SSH_KEYGEN is not None:  # OpenSSH reads both files and prints the same fingerprint
        assert fingerprint(key) in ssh_keygen("-lf", str(tmp_path / "steward.pub"))
        assert ssh_keygen("-yf", str(path)).split()[:2] == line.split()[:2]
    assert sorted(os.listdir(tmp_path)) == ["steward.key", "steward.pub"]


def test_a_key_is_never_replaced(tmp_path, capsys):
    path = tmp_path / "steward.key"
    generate_key_pair(path)
    before = {p: p.read_bytes() for p in tmp_path.iterdir()}
    assert cli.main(["keygen", "--output", str(path)]) == 1
    assert f"key '{path}' exists; a key is never replaced" in capsys.readouterr().err
    (tmp_path / "steward.pub").unlink()
    with pytest.raises(OutputExistsError, match="steward.key' exists"):
        generate_key_pair(path)
    other = tmp_path / "other.key"
    (tmp_path / "other.pub").write_text("someone's public key\n")
    with pytest.raises(OutputExistsError, match="other.pub' exists"):
        generate_key_pair(other)
    assert not other.exists() and path.read_bytes() == before[path]
    with pytest.raises(ParameterError, match="must end in '.key'"):
        generate_key_pair(tmp_path / "k.pem")


def test_a_signature_holds_for_its_key_and_bytes_only(tmp_path):
    key = private_key(generate_key_pair(tmp_path / "a.key") and tmp_path / "a.key")
    trusted = public_key(tmp_path / "a.pub")
    signature = sign(key, DOCUMENT)
    verify(trusted, DOCUMENT, signature, "v.parquet")
    another = public_key(generate_key_pair(tmp_path / "b.key"))
    with pytest.raises(SignatureError, match=re.escape(
            f"v.parquet: the signature does not verify with the key "
            f"{fingerprint(another)}")):
        verify(another, DOCUMENT, signature, "v.parquet")
    for at in (0, len(DOCUMENT) // 2, len(DOCUMENT) - 1):  # any byte it covers
        edited = bytearray(DOCUMENT)
        edited[at] ^= 1
        with pytest.raises(SignatureError, match="another key, or a byte it covers was edited"):
            verify(trusted, bytes(edited), signature, "v.parquet")
    raw = base64.b64decode(signature)
    with pytest.raises(SignatureError, match="holds 63 bytes; an Ed25519 signature holds 64"):
        verify(trusted, DOCUMENT, base64.b64encode(raw[:-1]).decode(), "v.parquet")
    with pytest.raises(SignatureError, match="is not base64"):
        verify(trusted, DOCUMENT, "not*base64", "v.parquet")
    with pytest.raises(SignatureError, match="must be base64 text, got NoneType"):
        verify(trusted, DOCUMENT, None, "v.parquet")


def test_an_ssh_keygen_key_signs_and_its_pub_verifies(tmp_path):
    path = tmp_path / "id_ed25519"
    ssh_keygen("-q", "-t", "ed25519", "-N", "", "-C", "steward@host", "-f", str(path))
    assert path.read_bytes().startswith(b"-----BEGIN OPENSSH PRIVATE KEY-----")
    key, trusted = private_key(path), public_key(tmp_path / "id_ed25519.pub")
    verify(trusted, DOCUMENT, sign(key, DOCUMENT), "v.parquet")
    assert fingerprint(trusted) in ssh_keygen("-lf", str(tmp_path / "id_ed25519.pub"))


def test_keys_of_another_kind_or_damaged_are_named_errors(tmp_path):
    ecdsa = ec.generate_private_key(ec.SECP256R1())
    (tmp_path / "ec.key").write_bytes(ecdsa.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()))
    (tmp_path / "ec.pub").write_bytes(ecdsa.public_key().public_bytes(
        serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH))
    with pytest.raises(ParameterError, match="ec.key' is an ECDSA key; releases are "
                                             "signed with Ed25519 keys"):
        private_key(tmp_path / "ec.key")
    with pytest.raises(ParameterError, match="ec.pub' is an ECDSA key"):
        public_key(tmp_path / "ec.pub")
    encrypted = ed25519.Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(b"secret"))
    (tmp_path / "locked.key").write_bytes(encrypted)
    with pytest.raises(ParameterError, match="locked.key' is encrypted"):
        private_key(tmp_path / "locked.key")
    pkcs8 = ed25519.Ed25519PrivateKey.generate()  # OpenSSL's PEM form reads too
    (tmp_path / "pkcs8.key").write_bytes(pkcs8.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()))
    assert fingerprint(private_key(tmp_path / "pkcs8.key")) == fingerprint(pkcs8)
    (tmp_path / "junk.key").write_bytes(b"-----BEGIN PRIVATE KEY-----\nAAAA\n")
    with pytest.raises(ParameterError, match="junk.key' is not a private key in PEM or OpenSSH"):
        private_key(tmp_path / "junk.key")
    (tmp_path / "junk.pub").write_text("ssh-ed25519 AAAA-not-base64 x\n")
    with pytest.raises(ParameterError, match="junk.pub' is not a public key"):
        public_key(tmp_path / "junk.pub")
    (tmp_path / "huge.pub").write_bytes(b"x" * (65 << 10))
    with pytest.raises(ParameterError, match="huge.pub' is larger than a key file"):
        public_key(tmp_path / "huge.pub")
    with pytest.raises(ParameterError, match="cannot read the key .*missing.pub"):
        public_key(tmp_path / "missing.pub")
    with pytest.raises(ParameterError, match="expected a key file's path or an Ed25519 key"):
        public_key(42)
    if SSH_KEYGEN is not None:  # an RSA key from ssh-keygen, in OpenSSH's own format
        ssh_keygen("-q", "-t", "rsa", "-b", "2048", "-N", "", "-f", str(tmp_path / "id_rsa"))
        with pytest.raises(ParameterError, match="id_rsa' is an RSA key"):
            private_key(tmp_path / "id_rsa")
        with pytest.raises(ParameterError, match="id_rsa.pub' is an RSA key"):
            public_key(tmp_path / "id_rsa.pub")
