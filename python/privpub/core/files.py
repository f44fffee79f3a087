"""Every file privpub writes appears whole or not at all.

:func:`atomic_output` is the one way privpub writes a file (or a directory:
a Dask release). The caller writes to a temporary path in the target's own
directory (so on the same filesystem) and checks what it wrote there; then
the temporary is flushed to disk (fsync) and renamed into place in one step.
An exception, Ctrl-C or SIGTERM (the command line turns it into an
interrupt) anywhere before that leaves the previous file untouched and no
temporary behind.

The rules, checked before any work (:func:`check_output`) and again when
the file is put in place:

- an existing output is refused (:class:`OutputExistsError`) unless
  ``overwrite=True`` (``--force`` on the command line). Without it the file
  is put in place by ``link`` (``rename`` for a directory), which fails if
  the name exists: of two writers racing to one new name, exactly one
  succeeds, and the file at the name is the one it wrote and checked;
- an output that is one of the inputs (the same file, by ``samefile``) is
  refused, with or without ``overwrite``;
- the output's suffix must name the format written (``.parquet``);
- a directory is replaced only if it holds nothing but what a release
  writes, so ``overwrite=True`` with a mistyped path never deletes a folder.

The temporary (:class:`~privpub.core.temporaries.Temporary`) has no name
at all on Linux, so even a writer killed outright (SIGKILL) leaves nothing;
elsewhere it is a hidden name that the next write removes.
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from privpub.core.errors import OutputExistsError, ParameterError
from privpub.core.signals import deferred_signals
from privpub.core.temporaries import Temporary, remove_stale, sync_directory

#: The suffixes of a Parquet output (a release, an artifact), as privpub reads them.
PARQUET = (".parquet", ".pq")
#: How a replacement is asked for, in messages of the library (the CLI says --force).
OVERWRITE = "overwrite=True (--force on the command line)"


def check_output(path: str | os.PathLike, *, overwrite: bool = False,
                 suffix: str | tuple[str, ...] | None = None, inputs: Iterable[Any] = (),
                 directory: bool = False, replaces: Sequence[str] = (),
                 what: str = "output", how: str = OVERWRITE) -> str:
    """Refuse an output path before any work is done; return it as a string.

    ``suffix`` is the one the format needs, or a tuple of those it allows (a
    directory may also have none);
    ``inputs`` are files the output must not be (non-paths are ignored);
    ``directory`` says a directory is written, and ``replaces`` are the
    name patterns an existing directory may hold for ``overwrite`` to
    replace it. ``what`` names the path in messages (``--output``), ``how``
    the way to allow a replacement (``--force``)."""
    target = os.fspath(path)
    if not target:
        raise ParameterError(f"{what}: the path is empty")
    folder = os.path.dirname(os.path.abspath(target))
    if not os.path.isdir(folder):
        raise ParameterError(f"{what} {target!r}: the directory {folder!r} does not exist")
    if os.path.isdir(target) and not directory:
        raise ParameterError(f"{what} {target!r} is a directory; name the file to write")
    for given in inputs:
        if isinstance(given, (str, os.PathLike)) and _same_file(target, given):
            raise ParameterError(f"{what} {target!r} is the input {os.fspath(given)!r}: an "
                                 f"input is never overwritten, even with {how}")
    if suffix is not None:
        allowed = (suffix,) if isinstance(suffix, str) else suffix
        found = os.path.splitext(target.rstrip(os.sep))[1]
        if found.lower() not in allowed and not (directory and found == ""):
            raise ParameterError(f"{what} {target!r} must end in "
                                 f"{' or '.join(map(repr, allowed))}, the format written there "
                                 f"(it ends in {found or 'no suffix'!r})")
    if directory:
        _check_directory(target, overwrite, replaces, f"{what} {target!r}", how)
    elif os.path.lexists(target) and not overwrite:
        raise OutputExistsError(f"{what} {target!r} exists; {how} replaces it")
    return target


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike, *, overwrite: bool = False,
                  suffix: str | tuple[str, ...] | None = None, inputs: Iterable[Any] = (),
                  directory: bool = False, replaces: Sequence[str] = ()) -> Iterator[str]:
    """Yield a temporary path beside ``path`` to write (and check) the output
    at; on a normal exit put it in place atomically, on any exception (or
    interrupt) remove it. Arguments as in :func:`check_output`."""
    target = check_output(path, overwrite=overwrite, suffix=suffix, inputs=inputs,
                          directory=directory, replaces=replaces)
    folder, name = os.path.split(os.path.abspath(target))
    remove_stale(folder, name)
    temp = Temporary.create(folder, name, directory)
    try:
        try:
            yield temp.path
            temp.sync()
        except BaseException:
            with deferred_signals():
                temp.discard()
            raise
        with deferred_signals():  # a rename and its clean-up, never half of them
            try:
                temp.commit(target, overwrite, _exists)
            finally:
                temp.discard()
        sync_directory(folder)
    finally:
        temp.close()


def write_text(path: str | os.PathLike, text: str, *, overwrite: bool = False,
               suffix: str | tuple[str, ...] | None = None) -> None:
    """``text`` (UTF-8) to ``path``, through :func:`atomic_output`."""
    with atomic_output(path, overwrite=overwrite, suffix=suffix) as temp, \
            open(temp, "w", encoding="utf-8") as fh:
        fh.write(text)


def save_figure(figure: Any, path: str | os.PathLike, *, overwrite: bool = False,
                **options: Any) -> None:
    """A matplotlib figure to ``path`` (format from its suffix), through
    :func:`atomic_output`."""
    fmt = os.path.splitext(os.fspath(path))[1].lstrip(".").lower()
    with atomic_output(path, overwrite=overwrite) as temp:
        figure.savefig(temp, format=fmt, **options)


def check_outputs(folder: str | os.PathLike, names: Iterable[str], *,
                  overwrite: bool = False) -> None:
    """:func:`check_output` for each of the files ``names`` a run will write in
    ``folder`` (refused up front, before the run, not after it)."""
    for name in names:
        check_output(os.path.join(folder, name), overwrite=overwrite)


# ---- the steps ----------------------------------------------------------------------------------


def _same_file(output: str, given: Any) -> bool:
    try:
        return os.path.samefile(output, given)
    except OSError:  # either does not exist: not the same file
        return False


def _check_directory(target: str, overwrite: bool, replaces: Sequence[str], named: str,
                     how: str) -> None:
    """An existing non-empty directory (or a file) is replaced only with
    ``overwrite``, and a directory only if it holds nothing but ``replaces``."""
    if not os.path.lexists(target):
        return
    if not os.path.isdir(target) or os.path.islink(target):
        raise OutputExistsError(f"{named} exists and is not a directory; a "
                                "release directory does not replace it")
    entries = os.listdir(target)
    if not entries:
        return
    if not overwrite:
        raise OutputExistsError(f"{named} exists and is not an empty directory; a release is "
                                f"written to a new one, or {how} replaces it")
    for entry in entries:
        if os.path.isdir(os.path.join(target, entry)) or \
                not any(fnmatch.fnmatchcase(entry, p) for p in replaces):
            raise ParameterError(f"{named} holds {entry!r}, which a release does "
                                 "not write; it is not replaced (remove it, or choose "
                                 "another directory)")


def _exists(target: str, exc: OSError) -> OutputExistsError:
    return OutputExistsError(f"output {target!r} exists (written meanwhile by another "
                             f"process?); {OVERWRITE} replaces it ({exc.strerror})")
