"""``privpub.open``: any release, by what its file holds, never by its name.

A table release is Parquet (a file that begins with Parquet's magic bytes, or a
directory of parts written by a Dask release); a release stored as one JSON
document (a graph answer) names its ``kind``, which the families register
(:func:`privpub.core.release.register_release_document`). A file that is
neither is refused by name; every release is re-validated as it is reopened.
"""

from __future__ import annotations

import os
from typing import Any

from privpub.core.artifacts import MAX_METADATA_BYTES, load_json
from privpub.core.errors import ArtifactError
from privpub.core.release import release_documents
from privpub.core.signing import document_signature
from privpub.tables.published import PublishedView

#: The first bytes of every Parquet file (its format's magic number).
PARQUET_MAGIC = b"PAR1"


def open_release(path: str | os.PathLike[str], *, trust: Any = None) -> Any:
    """The release stored at ``path``: a :class:`PublishedView` streamed from a
    Parquet file or a Dask release's directory (views larger than memory), or a
    release document such as a graph answer, by its stored kind.

    A signed release's signature is checked (its ``signed`` says by whom);
    ``trust`` (the publisher's Ed25519 public key, or its file: an OpenSSH line
    or PEM) refuses, with a :class:`~privpub.core.errors.SignatureError`, a
    release that is unsigned, signed by another key, or edited in what the
    signature covers (:mod:`privpub.core.signing`).

    Examples
    --------
    >>> import privpub, tempfile, os
    >>> df, schema = privpub.datasets.load_adult()
    >>> path = os.path.join(tempfile.mkdtemp(), "view")  # no suffix needed
    >>> privpub.AlphaBeta(schema, 1.0, 0.0).publish(df, duplicates="set").to_parquet(
    ...     path + ".parquet")
    >>> os.rename(path + ".parquet", path)
    >>> privpub.open(path).estimate("sex = 'Female'").value
    6737.0
    """
    target = os.fspath(path)
    if os.path.isdir(target):
        return PublishedView.open(target, trust=trust)
    try:
        with open(target, "rb") as fh:
            head = fh.read(len(PARQUET_MAGIC))
            if head == PARQUET_MAGIC:
                return PublishedView.open(target, trust=trust)
            raw = head + fh.read(MAX_METADATA_BYTES + 1 - len(head))
    except OSError as exc:
        raise ArtifactError(f"cannot open {target!r}: {exc.strerror or exc}") from None
    kinds = release_documents()
    if not raw.lstrip()[:1] == b"{":
        raise ArtifactError(f"{target!r} is not a release: neither Parquet (a table release) "
                            f"nor a JSON release document (kinds: {', '.join(sorted(kinds))})")
    document = load_json(raw, repr(target))
    kind = document.get("kind") if isinstance(document, dict) else None
    if kind not in kinds:
        raise ArtifactError(f"{target!r} is a JSON document but not a release: its field "
                            f"'kind' is {kind!r}, not one of {sorted(kinds)}")
    body, signed = document_signature(document, trust, repr(target))
    release = kinds[kind].from_dict(body)
    release.signed = signed
    return release
