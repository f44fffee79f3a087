"""A published view's life in its file: the document written beside its rows,
the write, and the two ways back (:class:`StoredView`, which
:class:`~privpub.tables.published.PublishedView` is).

Reopening re-validates: the metadata is parsed within bounds, the mechanism
is rebuilt from the stored parameters by its own constructor checks, stored
derived values must follow from them, the columns must be the schema's, the
row groups must hold the stored row count, and the rows, when read in full,
must match the stored digest (:class:`~privpub.viewfile.digest.Digest`: per part
file and column, SHA-256 of the domain indices in file order). That refuses
a file whose values were edited, reordered, dropped, added or mixed up with
another file's. The digest alone is not a signature (someone who rewrites rows
and digest consistently writes a new release); a signed release's document,
digests included, is signed by its publisher (``sign=`` on writing,
``trust=`` on reading: :mod:`privpub.core.signing`), and docs/design.md says
what each proves.
"""

from __future__ import annotations

import copy
import os
from typing import Any

from privpub.core.errors import ArtifactError, ParameterError
from privpub.viewfile.digest import digest_document
from privpub.viewfile.document import view_document
from privpub.viewfile.fileview import FileView
from privpub.viewfile.reader import open_view, read_digits
from privpub.viewfile.rows import MemoryView
from privpub.viewfile.writer import write_view


class StoredView:
    """How a view is written to its Parquet file and reopened from it, for a
    release class with rows (a :class:`~privpub.viewfile.rows.TableView`), a
    schema, context sets and an envelope, built as ``cls(rows, schema, mechanism,
    parameters, seed_policy, context, library_version)``."""

    def metadata(self, digest: dict[str, Any] | None = None,
                 rows: int | None = None) -> dict[str, Any]:
        """The JSON document stored beside the rows (``rows`` and ``digest`` given
        when a stream wrote the rows, not held by this object; otherwise the
        digest of the rows as one file holds them: :func:`digest_document`)."""
        if digest is None:
            digest = digest_document([self.rows.digest()], {
                k: MemoryView(self.schema, v).digest() for k, v in self.context.items()})
        return view_document(self.envelope(), self.schema, len(self) if rows is None else rows,
                             digest, {k: len(v) for k, v in self.context.items()})

    def to_parquet(self, path: str | os.PathLike, *, overwrite: bool = False,
                   sign: Any = None) -> None:
        """Write the rows (dictionary-encoded columns, streamed batch by batch),
        any context sets, and the metadata (in the file's footer, with the
        digest taken in the same pass) to one Parquet file.

        The file appears whole or not at all (:func:`privpub.core.files.atomic_output`):
        an existing ``path`` is an :class:`~privpub.OutputExistsError` unless
        ``overwrite=True``, ``path`` must end in ``.parquet``, and a file-backed
        view is never written over its own file. ``sign`` (an Ed25519 private key
        or its file, :func:`privpub.core.signing.private_key`) signs the document
        (:mod:`privpub.core.signing` says what that covers)."""
        inputs = self.rows.files if isinstance(self.rows, FileView) else ()
        write_view(path, self.schema, self.rows.batches(),
                   lambda rows, digest: self.metadata(digest), self.context,
                   overwrite=overwrite, inputs=inputs, sign=sign)

    @classmethod
    def read_parquet(cls, path: str | os.PathLike, *, trust: Any = None) -> Any:
        """Reopen a view written by :meth:`to_parquet`, its rows in memory (as
        domain indices: dictionary indices mapped without Python objects), read
        in one full pass of :meth:`open`'s view, so every part's row groups,
        rows and digests are checked now.

        The check is the same whatever the speed-ups: each column is read on
        its own thread, its pages decoded straight into domain indices where
        privpub's page reader can, and hashed in file order as it is read
        (:mod:`privpub.viewfile.reader`; a file that also holds context sets
        is read by the view's batches); each column's digest is compared with
        the stored one before this returns. ``trust`` as for :meth:`open`."""
        view = cls.open(path, trust=trust)
        rows = MemoryView(view.schema, digits=read_digits(view.rows))
        release = cls(rows, view.schema, view.mechanism, view.parameters, view.seed_policy,
                      view.context, view.library_version)
        release.signed = view.signed
        return release

    @classmethod
    def open(cls, path: str | os.PathLike, *, trust: Any = None) -> Any:
        """A view backed by its Parquet file: counts and estimates go row group by
        row group in bounded memory, skipping or counting whole the groups that
        privpub's own statistics decide (:mod:`privpub.viewfile.scan` says what
        that checks and trusts; context sets, small, are read).
        The metadata, the columns and the row groups' row counts are checked
        now; each column's rows and digest when first read in full.
        ``path`` may also be the directory a Dask release wrote (its metadata in
        ``_common_metadata``, its rows in the part files, read in order).

        A signed file's signature is checked now (:attr:`signed` says by whom);
        ``trust`` (the publisher's Ed25519 public key or its file) refuses, with a
        :class:`~privpub.core.errors.SignatureError`, a file that is unsigned or
        signed by another key."""
        opened = open_view(path, trust)
        stored = opened.document
        try:
            release = cls(opened.rows, stored.schema, **copy.deepcopy(stored.envelope))
        except ParameterError as exc:
            raise ArtifactError(f"{opened.where!r}: field 'parameters': {exc}") from exc
        release.context.update(opened.context_sets())
        release.signed = stored.signed
        return release

