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

Temporaries are named ``.{name}.privpub-tmp-XXXXXXXX``: hidden, never
ending in ``.parquet`` (globs such as DuckDB's ``*.parquet`` skip them) and
recognisably not a release. A writer holds an advisory lock (``flock``) on
its temporary while it writes; only a process killed outright (SIGKILL, a
crash) leaves one behind, and the next write to the same name removes
temporaries whose lock is free.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fnmatch
import os
import secrets
import shutil
import signal
import threading
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from privpub.core.errors import OutputExistsError, ParameterError

try:
    import fcntl
except ImportError:  # no flock (Windows): stale temporaries are left for the user
    fcntl = None

#: The suffixes of a Parquet output (a release, an artifact), as privpub reads them.
PARQUET = (".parquet", ".pq")
TEMP_MARK = ".privpub-tmp-"
#: Characters of the target's name kept in a temporary's name (NAME_MAX is 255).
NAME_KEEP = 200
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
    temp, lock = _create(folder, name, directory)
    try:
        try:
            yield temp
            _sync(temp, directory)
        except BaseException:
            with deferred_signals():
                _remove(temp)
            raise
        with deferred_signals():  # a rename and its clean-up, never half of them
            try:
                _commit(temp, target, overwrite, directory)
            finally:
                _remove(temp)
        _sync_directory(folder)
    finally:
        os.close(lock)


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


def temp_prefix(name: str) -> str:
    """What the temporaries of a target called ``name`` start with."""
    return f".{name[:NAME_KEEP]}{TEMP_MARK}"


def remove_stale(folder: str, name: str) -> list[str]:
    """Remove temporaries of ``name`` in ``folder`` left by a killed writer
    (their lock is free; a live writer's is held). Returns what was removed."""
    if fcntl is None:
        return []
    prefix, removed = temp_prefix(name), []
    for entry in os.listdir(folder):
        if not entry.startswith(prefix):
            continue
        stale = os.path.join(folder, entry)
        try:
            fd = os.open(stale, os.O_RDONLY)
        except OSError:  # gone meanwhile
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # a writer holds it
            os.close(fd)
            continue
        try:
            _remove(stale)
            removed.append(stale)
        finally:
            os.close(fd)
    return removed


@contextlib.contextmanager
def deferred_signals() -> Iterator[None]:
    """Hold SIGINT and SIGTERM while the block runs, then deliver them: the
    block (a rename and its clean-up) runs whole. Outside the main thread,
    where handlers cannot be set, the block runs as is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = {}
    for number in (signal.SIGINT, signal.SIGTERM):
        previous[number] = signal.signal(number, lambda sig, frame: caught.append(sig))
    try:
        yield
    finally:
        for number, handler in previous.items():  # None: a handler set outside Python
            signal.signal(number, signal.SIG_DFL if handler is None else handler)
        if caught:
            signal.raise_signal(caught[0])


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


def _create(folder: str, name: str, directory: bool) -> tuple[str, int]:
    """A new temporary (mode from the umask, as any new file) and a locked fd on it."""
    for _ in range(100):
        temp = os.path.join(folder, temp_prefix(name) + secrets.token_hex(4))
        try:
            if directory:
                os.mkdir(temp)
                fd = os.open(temp, os.O_RDONLY)
            else:
                fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        return temp, fd
    raise OutputExistsError(f"no free temporary name for {name!r} in {folder!r}")


def _sync(temp: str, directory: bool) -> None:
    """Flush the temporary's bytes (each file's, for a directory) to disk."""
    files = [os.path.join(temp, e) for e in sorted(os.listdir(temp))] if directory else [temp]
    for file in files:
        fd = os.open(file, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    if directory:
        _sync_directory(temp)


def _sync_directory(folder: str) -> None:
    """Make a rename in ``folder`` durable (where the platform allows it)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:  # some filesystems refuse fsync on a directory
        pass
    finally:
        os.close(fd)


def _commit(temp: str, target: str, overwrite: bool, directory: bool) -> None:
    """Put ``temp`` at ``target`` in one step; without ``overwrite``, only if
    nothing is there (else :class:`OutputExistsError`). ``temp`` is left for
    the caller to remove (after a replace of a directory it holds the old one)."""
    if directory:
        try:
            os.rename(temp, target)  # onto nothing or an empty directory only
            return
        except OSError as exc:
            if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR):
                raise
            if not overwrite or not os.path.isdir(target):
                raise _exists(target, exc) from None
        _exchange(temp, target)
        return
    if overwrite:
        os.replace(temp, target)
        return
    try:
        os.link(temp, target)
    except FileExistsError as exc:
        raise _exists(target, exc) from None
    except OSError as exc:  # a filesystem without hard links: check, then rename
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK):
            raise
        if os.path.lexists(target):
            raise _exists(target, exc) from None
        os.rename(temp, target)


def _exists(target: str, exc: OSError) -> OutputExistsError:
    return OutputExistsError(f"output {target!r} exists (written meanwhile by another "
                             f"process?); {OVERWRITE} replaces it ({exc.strerror})")


def _exchange(temp: str, target: str) -> None:
    """Swap two directories in one step (Linux renameat2 RENAME_EXCHANGE);
    elsewhere, move the old one to ``temp``'s name's sibling and rename."""
    renameat2 = getattr(_libc(), "renameat2", None)
    if renameat2 is not None:
        at_cwd, exchange = -100, 2
        if renameat2(at_cwd, os.fsencode(temp), at_cwd, os.fsencode(target), exchange) == 0:
            return
        code = ctypes.get_errno()
        if code not in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP):
            raise OSError(code, os.strerror(code), target)
    old = temp + "-old"
    os.rename(target, old)
    os.rename(temp, target)
    os.rename(old, temp)


def _libc() -> Any:
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def _remove(path: str) -> None:
    """Remove a temporary (file or directory); nothing if it is gone."""
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
