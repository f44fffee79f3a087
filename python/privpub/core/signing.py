"""Ed25519 keys and signatures, through the ``cryptography`` package.

A digest proves only that a file agrees with itself: anyone who edits it can
recompute it. A signature by the publisher's private key, checked against a
public key the reader trusts, proves who published it. Keys are in standard
formats, so keys made elsewhere work too: a private key in OpenSSH's format
(``-----BEGIN OPENSSH PRIVATE KEY-----``: what :func:`generate_key_pair` and
``ssh-keygen -t ed25519`` write, unencrypted) or as PKCS#8 PEM
(``-----BEGIN PRIVATE KEY-----``, OpenSSL's); a public key as an OpenSSH
line (``ssh-ed25519 AAAA… comment``, written beside the private key as
``NAME.pub``) or PEM. A key's fingerprint is OpenSSH's:
``SHA256:`` and the unpadded base64 of the SHA-256 of its wire form, as
``ssh-keygen -l`` prints it.
"""

from __future__ import annotations

import base64
import hashlib
import os
from typing import Any

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import dsa, ec, ed448, rsa
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

from privpub.core.errors import OutputExistsError, ParameterError, SignatureError
from privpub.core.files import atomic_output, check_output

#: Key files are read whole: a key file is a few hundred bytes.
MAX_KEY_BYTES = 64 << 10
PRIVATE_SUFFIX, PUBLIC_SUFFIX = ".key", ".pub"


def generate_key_pair(path: str | os.PathLike, comment: str = "privpub") -> Ed25519PublicKey:
    """Write a new Ed25519 key pair: the private key at ``path`` (which must
    end in ``.key``; OpenSSH's format, mode 0600) and the public key beside it as
    ``NAME.pub`` (an OpenSSH line ending in ``comment``). Either existing is
    refused: a key is never overwritten. Returns the public key."""
    private_path = os.fspath(path)
    public_path = private_path[:-len(PRIVATE_SUFFIX)] + PUBLIC_SUFFIX
    check_output(private_path, overwrite=True, suffix=PRIVATE_SUFFIX, what="key")  # (not: exists)
    for found in (private_path, public_path):
        if os.path.lexists(found):
            raise OutputExistsError(f"key {found!r} exists; a key is never replaced (choose "
                                    "another name, or remove it yourself)")
    key = Ed25519PrivateKey.generate()
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH,
                                serialization.NoEncryption())
    public = key.public_key().public_bytes(serialization.Encoding.OpenSSH,
                                           serialization.PublicFormat.OpenSSH)
    with atomic_output(private_path, suffix=PRIVATE_SUFFIX) as temp:
        # Readable by its owner only before a byte of the key is in it.
        fd = os.open(temp, os.O_WRONLY | os.O_TRUNC)
        try:
            os.fchmod(fd, 0o600)
            os.write(fd, private)
        finally:
            os.close(fd)
    try:
        with atomic_output(public_path) as temp, open(temp, "wb") as fh:
            fh.write(public + b" " + comment.encode() + b"\n")
    except OutputExistsError:
        os.unlink(private_path)  # written meanwhile: leave no half of a pair
        raise
    return key.public_key()


def private_key(key: Any) -> Ed25519PrivateKey:
    """An Ed25519 private key: given, or read from the file ``key`` names (PEM
    or OpenSSH); a ParameterError naming the file otherwise."""
    if isinstance(key, Ed25519PrivateKey):
        return key
    where, data = _read(key, "sign")
    try:
        if b"-----BEGIN OPENSSH PRIVATE KEY-----" in data:
            loaded = serialization.load_ssh_private_key(data, password=None)
        else:
            loaded = serialization.load_pem_private_key(data, password=None)
    except TypeError:  # a passphrase is needed
        raise ParameterError(f"sign: the key {where!r} is encrypted; privpub reads "
                             "unencrypted keys only (ssh-keygen -p -N '' removes a "
                             "passphrase)") from None
    except (ValueError, UnsupportedAlgorithm) as exc:
        raise ParameterError(f"sign: {where!r} is not a private key in PEM or OpenSSH "
                             f"format ({_first_line(exc)})") from None
    if not isinstance(loaded, Ed25519PrivateKey):
        raise ParameterError(f"sign: {where!r} is {_kind(loaded)} key; releases are signed "
                             "with Ed25519 keys (privpub keygen, or ssh-keygen -t ed25519)")
    return loaded


def public_key(key: Any) -> Ed25519PublicKey:
    """An Ed25519 public key: given, or read from the file ``key`` names (an
    OpenSSH line or PEM); a ParameterError naming the file otherwise."""
    if isinstance(key, Ed25519PublicKey):
        return key
    if isinstance(key, Ed25519PrivateKey):
        return key.public_key()
    where, data = _read(key, "trust")
    try:
        if data.lstrip().startswith(b"-----BEGIN"):
            loaded = serialization.load_pem_public_key(data)
        else:
            loaded = serialization.load_ssh_public_key(data.strip())
    except (ValueError, UnsupportedAlgorithm) as exc:
        raise ParameterError(f"trust: {where!r} is not a public key as an OpenSSH line or "
                             f"PEM ({_first_line(exc)})") from None
    if not isinstance(loaded, Ed25519PublicKey):
        raise ParameterError(f"trust: {where!r} is {_kind(loaded)} key; releases are signed "
                             "with Ed25519 keys")
    return loaded


def fingerprint(key: Ed25519PublicKey | Ed25519PrivateKey) -> str:
    """OpenSSH's fingerprint of the (public) key: ``SHA256:…``, as ``ssh-keygen -l``."""
    if isinstance(key, Ed25519PrivateKey):
        key = key.public_key()
    line = key.public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    wire = base64.b64decode(line.split()[1])
    return "SHA256:" + base64.b64encode(hashlib.sha256(wire).digest()).decode().rstrip("=")


def sign(key: Ed25519PrivateKey, data: bytes) -> str:
    """The signature of ``data`` (base64 of Ed25519's 64 bytes)."""
    return base64.b64encode(key.sign(data)).decode("ascii")


def verify(key: Ed25519PublicKey, data: bytes, signature: Any, where: str) -> None:
    """``signature`` (as :func:`sign` gives it) is ``key``'s over ``data``: a
    SignatureError naming ``where`` and the key's fingerprint otherwise."""
    if not isinstance(signature, str):
        raise SignatureError(f"{where}: its signature must be base64 text, got "
                             f"{type(signature).__name__}")
    try:
        raw = base64.b64decode(signature, validate=True)
    except ValueError:
        raise SignatureError(f"{where}: its signature is not base64") from None
    if len(raw) != 64:
        raise SignatureError(f"{where}: its signature holds {len(raw)} bytes; an Ed25519 "
                             "signature holds 64 (truncated or not Ed25519)")
    try:
        key.verify(raw, data)
    except InvalidSignature:
        raise SignatureError(f"{where}: the signature does not verify with the trusted key "
                             f"{fingerprint(key)}: it was made by another key, or a byte it "
                             "covers was edited") from None


def _read(path: Any, role: str) -> tuple[str, bytes]:
    if not isinstance(path, (str, os.PathLike)):
        raise ParameterError(f"{role}: expected a key file's path or an Ed25519 key, got "
                             f"{type(path).__name__}")
    where = os.fspath(path)
    try:
        with open(where, "rb") as fh:
            data = fh.read(MAX_KEY_BYTES + 1)
    except OSError as exc:
        raise ParameterError(f"{role}: cannot read the key {where!r}: {exc.strerror}") from None
    if len(data) > MAX_KEY_BYTES:
        raise ParameterError(f"{role}: {where!r} is larger than a key file "
                             f"({MAX_KEY_BYTES:,} bytes at most)")
    return where, data


def _kind(key: Any) -> str:
    for kind, types in (("an RSA", (rsa.RSAPrivateKey, rsa.RSAPublicKey)),
                        ("an ECDSA", (ec.EllipticCurvePrivateKey, ec.EllipticCurvePublicKey)),
                        ("a DSA", (dsa.DSAPrivateKey, dsa.DSAPublicKey)),
                        ("an Ed448", (ed448.Ed448PrivateKey, ed448.Ed448PublicKey))):
        if isinstance(key, types):
            return kind
    return f"a {type(key).__name__}"


def _first_line(exc: Exception) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0]
