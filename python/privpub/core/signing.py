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

A release is signed over its document, the exact bytes of the JSON that
describes it: its envelope (mechanism, parameters, seed policy, library
version), schema, row counts, per column digests and row-group statistics
(:mod:`privpub.viewfile.digest`). The rows themselves are covered through
their digests, which every read checks for the rows it reads. The signature
travels beside the document (:func:`signature_entry`: the algorithm, the
signer's public key as an OpenSSH line, the signature), so a reader without a
trusted key still sees who signed and that the document is as they signed it;
with one (:func:`check_signature`'s ``trust``) an unsigned release, or one
signed by another key, is refused.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from dataclasses import dataclass
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
#: The one signature algorithm a release names.
ALGORITHM = "ed25519"
#: The field of a JSON release document (a graph answer) that holds its signature.
SIGNATURE_FIELD = "signature"


@dataclass(frozen=True)
class Signed:
    """Who signed a release (their key's fingerprint), and whether that key is
    the one the reader said they trust (``trusted``) or only the one the release
    names (which proves the document is as that key's holder signed it, not who
    they are)."""

    fingerprint: str
    trusted: bool

    def __str__(self) -> str:
        return (f"signed by {self.fingerprint}, the trusted key" if self.trusted else
                f"signed by {self.fingerprint} (not checked against a key you trust: "
                "pass trust= or --trust with the publisher's public key)")


def public_key_path(private: str | os.PathLike) -> str | None:
    """Where :func:`generate_key_pair` writes the public key of ``private``
    (NAME.key → NAME.pub); None for a private key not so named."""
    private = os.fspath(private)
    stem, suffix = os.path.splitext(private)
    return stem + PUBLIC_SUFFIX if suffix == PRIVATE_SUFFIX else None


def generate_key_pair(path: str | os.PathLike, comment: str = "privpub") -> Ed25519PublicKey:
    """Write a new Ed25519 key pair: the private key at ``path`` (which must
    end in ``.key``; OpenSSH's format, mode 0600) and the public key beside it as
    ``NAME.pub`` (an OpenSSH line ending in ``comment``). Either existing is
    refused: a key is never overwritten. Returns the public key."""
    private_path = os.fspath(path)
    check_output(private_path, overwrite=True, suffix=PRIVATE_SUFFIX, what="key")  # (not: exists)
    public_path = public_key_path(private_path)
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


def signing_key(sign: Any) -> Ed25519PrivateKey | None:
    """A writer's ``sign`` argument (None: unsigned) read and checked before the
    release is drawn and written, so a wrong key file fails now, not after."""
    return None if sign is None else private_key(sign)


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
        raise SignatureError(f"{where}: the signature does not verify with the key "
                             f"{fingerprint(key)}: it was made by another key, or a byte it "
                             "covers was edited") from None


def signature_entry(key: Any, document: bytes) -> dict[str, str]:
    """What is stored beside ``document`` when ``key`` (a private key or its file)
    signs it: the algorithm, the signer's public key (an OpenSSH line, no comment)
    and the signature."""
    signer = private_key(key)
    line = signer.public_key().public_bytes(serialization.Encoding.OpenSSH,
                                            serialization.PublicFormat.OpenSSH)
    return {"algorithm": ALGORITHM, "public_key": line.decode("ascii"),
            "signature": sign(signer, document)}


def check_signature(document: bytes, entry: Any, trust: Any, where: str) -> Signed | None:
    """Check the signature ``entry`` (:func:`signature_entry`; None when the
    release is unsigned) of ``document``. Without ``trust``: an unsigned release
    is None, a signed one must verify with the key it names. With ``trust`` (a
    public key or its file): the release must be signed, by that key, and verify.
    Every failure is a SignatureError naming ``where``."""
    trusted = None if trust is None else public_key(trust)
    if entry is None:
        if trusted is None:
            return None
        raise SignatureError(f"{where}: it is not signed; the trusted key "
                             f"{fingerprint(trusted)} accepts only releases it signed")
    signer = _stored_signer(entry, where)
    if trusted is not None and _raw(signer) != _raw(trusted):
        raise SignatureError(f"{where}: it is signed by {fingerprint(signer)}, not by the "
                             f"trusted key {fingerprint(trusted)}")
    verify(signer, document, entry["signature"], where)
    return Signed(fingerprint(signer), trusted is not None)


def canonical_json(document: dict[str, Any]) -> bytes:
    """The bytes a JSON release document is signed over: sorted keys, no spaces,
    UTF-8 (what a document parsed back from its file encodes to again)."""
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8", "surrogatepass")


def signed_document(document: dict[str, Any], sign: Any) -> dict[str, Any]:
    """A JSON release document with its signature by ``sign`` (a private key or
    its file) in the field :data:`SIGNATURE_FIELD`, over :func:`canonical_json`
    of the rest."""
    if SIGNATURE_FIELD in document:
        raise ParameterError(f"the document already holds a field {SIGNATURE_FIELD!r}")
    return {**document, SIGNATURE_FIELD: signature_entry(sign, canonical_json(document))}


def document_signature(document: dict[str, Any], trust: Any, where: str
                       ) -> tuple[dict[str, Any], Signed | None]:
    """A JSON release document without its signature field, and who signed it
    (:func:`check_signature` of the rest's :func:`canonical_json`)."""
    body = {k: v for k, v in document.items() if k != SIGNATURE_FIELD}
    return body, check_signature(canonical_json(body), document.get(SIGNATURE_FIELD),
                                 trust, where)


def _stored_signer(entry: Any, where: str) -> Ed25519PublicKey:
    """The public key a stored signature entry names, checked to be Ed25519's."""
    if not isinstance(entry, dict) or set(entry) != {"algorithm", "public_key", "signature"}:
        raise SignatureError(f"{where}: its signature entry must be an object of "
                             "'algorithm', 'public_key' and 'signature'")
    if entry["algorithm"] != ALGORITHM:
        raise SignatureError(f"{where}: its signature's algorithm is "
                             f"{str(entry['algorithm'])[:40]!r}; privpub checks {ALGORITHM!r}")
    line = entry["public_key"]
    try:
        if not isinstance(line, str) or len(line) > 1024:
            raise ValueError("not a short text line")
        signer = serialization.load_ssh_public_key(line.encode("ascii"))
    except (ValueError, UnicodeEncodeError, UnsupportedAlgorithm):
        raise SignatureError(f"{where}: its signature's public key is not an OpenSSH "
                             "public key line") from None
    if not isinstance(signer, Ed25519PublicKey):
        raise SignatureError(f"{where}: its signature names {_kind(signer)} key; releases "
                             "are signed with Ed25519 keys")
    return signer


def _raw(key: Ed25519PublicKey) -> bytes:
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


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
