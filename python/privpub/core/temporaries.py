"""Where a file is written before it is put in place, and how it gets there.

On Linux a file is written through an unnamed temporary: ``open(2)`` with
``O_TMPFILE`` makes a file in the target's directory (so on its filesystem)
that has no name, and the kernel frees it when its last descriptor closes.
Nothing is in the directory while it is written, and a writer killed
outright (SIGKILL, a crash) leaves nothing. The writer reaches it at
``/proc/self/fd/N`` (opening that path opens the same file), and when it is
whole ``linkat(2)`` with ``AT_SYMLINK_FOLLOW`` gives it its name, as open(2)
documents. A new name is given in one step that fails if the name exists:
of two writers racing to one new name, exactly one wins. A replacement
cannot be one step: no Linux call puts an unnamed file over an existing
name, so it is linked under a hidden name and renamed over the target; only
a SIGKILL between those two system calls strands the hidden name, which the
next write to the target removes (:func:`remove_stale`).

Elsewhere, on a filesystem that refuses ``O_TMPFILE`` (EOPNOTSUPP; EISDIR
from a kernel without it) and for a directory (a Dask release), the
temporary is a hidden name, ``.{name}.privpub-tmp-XXXXXXXX``: never ending
in ``.parquet`` (globs such as DuckDB's ``*.parquet`` skip it) and
recognisably not a release. A writer holds an advisory lock (``flock``) on
its temporary, named or not, while it writes; only a writer killed outright
leaves a named one behind, and the next write to the same name removes
those whose lock is free.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import os
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from typing import Any

from privpub.core.errors import OutputExistsError
from privpub.core.signals import deferred_signals

try:
    import fcntl
except ImportError:  # no flock (Windows): stale temporaries are left for the user
    fcntl = None

TEMP_MARK = ".privpub-tmp-"
#: Characters of the target's name kept in a temporary's name (NAME_MAX is 255).
NAME_KEEP = 200
#: ``os.O_TMPFILE`` where the platform has it (0 elsewhere: named temporaries only).
O_TMPFILE = getattr(os, "O_TMPFILE", 0)
#: What ``open(2)`` answers when a filesystem (or kernel) cannot make an unnamed file.
_NO_TMPFILE = (errno.EOPNOTSUPP, errno.ENOTSUP, errno.EISDIR)
_AT_FDCWD, _AT_SYMLINK_FOLLOW, _RENAME_EXCHANGE = -100, 0x400, 2


class Temporary:
    """A temporary beside a target: ``path`` is where the caller writes it
    (``/proc/self/fd/N`` for an unnamed one), ``named`` its hidden name (None
    while it has none), ``fd`` a descriptor on it holding its lock."""

    def __init__(self, path: str, fd: int, named: str | None, directory: bool):
        self.path, self.fd, self.named, self.directory = path, fd, named, directory

    @classmethod
    def create(cls, folder: str, name: str, directory: bool) -> Temporary:
        """An unnamed temporary in ``folder`` where the platform and filesystem
        allow it, else a new hidden one (mode from the umask, as any new file)."""
        if not directory and O_TMPFILE and _libc() is not None:
            try:
                fd = os.open(folder, O_TMPFILE | os.O_RDWR, 0o666)
            except OSError as exc:
                if exc.errno not in _NO_TMPFILE:
                    raise
            else:
                path = f"/proc/self/fd/{fd}"
                if os.path.exists(path):  # no /proc: the file cannot be reached nor linked
                    return cls(path, _locked(fd), None, directory)
                os.close(fd)
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
            return cls(temp, _locked(fd), temp, directory)
        raise OutputExistsError(f"no free temporary name for {name!r} in {folder!r}")

    def sync(self) -> None:
        """Flush the temporary's bytes (each file's, for a directory) to disk."""
        if not self.directory:
            os.fsync(self.fd)
            return
        for entry in sorted(os.listdir(self.path)):
            fd = os.open(os.path.join(self.path, entry), os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        sync_directory(self.path)

    def commit(self, target: str, overwrite: bool, exists: Any) -> None:
        """Put the temporary at ``target`` in one step; without ``overwrite``,
        only if nothing is there (else ``exists(target, exc)`` is raised). The
        caller then calls :meth:`discard` (after a directory replaced another,
        the hidden name holds the old one)."""
        if self.named is None:
            try:
                _link(self.path, target)
                return
            except FileExistsError as exc:
                if not overwrite:
                    raise exists(target, exc) from None
            self.named = _link_hidden(self.path, *os.path.split(target))
            os.replace(self.named, target)
        elif self.directory:
            try:
                os.rename(self.named, target)  # onto nothing or an empty directory only
                return
            except OSError as exc:
                if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR):
                    raise
                if not overwrite or not os.path.isdir(target):
                    raise exists(target, exc) from None
            _exchange(self.named, target)
        elif overwrite:
            os.replace(self.named, target)
        else:
            _link_new(self.named, target, exists)

    def discard(self) -> None:
        """Remove the hidden name, if any (nothing if it is gone: renamed away)."""
        if self.named is not None:
            remove(self.named)

    def close(self) -> None:
        """Release the lock; an unnamed temporary not linked by now is freed."""
        os.close(self.fd)


def temp_prefix(name: str) -> str:
    """What the named temporaries of a target called ``name`` start with."""
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
            remove(stale)
            removed.append(stale)
        finally:
            os.close(fd)
    return removed


def sync_directory(folder: str) -> None:
    """Make a rename or link in ``folder`` durable (where the platform allows it)."""
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


@contextlib.contextmanager
def temporary_directory(prefix: str | None = None) -> Iterator[str]:
    """A new private directory in $TMPDIR, removed with its files when the block
    ends, its removal run with SIGINT and SIGTERM held (delivered after it).

    Not ``tempfile.TemporaryDirectory``: its ``shutil.rmtree`` (Python 3.11)
    closes each directory's descriptor and then notes it closed, and an
    interrupt raised between the two makes its ``finally`` close the number
    again: ``OSError: [Errno 9] Bad file descriptor`` instead of the
    interrupt, or, had another thread opened a file meanwhile, that file
    closed under it."""
    folder = tempfile.mkdtemp(prefix=prefix)
    try:
        yield folder
    finally:
        with deferred_signals():
            remove(folder)


def remove(path: str) -> None:
    """Remove a temporary (file or directory); nothing if it is gone."""
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


# ---- the system calls ---------------------------------------------------------------------------


def _locked(fd: int) -> int:
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def _link(proc_path: str, target: str) -> None:
    """Give the unnamed file at ``/proc/self/fd/N`` the name ``target``
    (``linkat(2)`` following the /proc link; ``os.link`` does not follow it)."""
    if _libc().linkat(_AT_FDCWD, os.fsencode(proc_path), _AT_FDCWD, os.fsencode(target),
                      _AT_SYMLINK_FOLLOW) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), target)


def _link_hidden(proc_path: str, folder: str, name: str) -> str:
    """Name the unnamed file with a new hidden temporary name in ``folder``."""
    for _ in range(100):
        hidden = os.path.join(folder, temp_prefix(name) + secrets.token_hex(4))
        try:
            _link(proc_path, hidden)
            return hidden
        except FileExistsError:
            continue
    raise OutputExistsError(f"no free temporary name for {name!r} in {folder!r}")


def _link_new(temp: str, target: str, exists: Any) -> None:
    """A named temporary at a new ``target``: by ``link``, which fails if the
    name exists; on a filesystem without hard links, check, then rename."""
    try:
        os.link(temp, target)
    except FileExistsError as exc:
        raise exists(target, exc) from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK):
            raise
        if os.path.lexists(target):
            raise exists(target, exc) from None
        os.rename(temp, target)


def _exchange(temp: str, target: str) -> None:
    """Swap two directories in one step (Linux renameat2 RENAME_EXCHANGE);
    elsewhere, move the old one to ``temp``'s name's sibling and rename."""
    renameat2 = getattr(_libc(), "renameat2", None)
    if renameat2 is not None:
        if renameat2(_AT_FDCWD, os.fsencode(temp), _AT_FDCWD, os.fsencode(target),
                     _RENAME_EXCHANGE) == 0:
            return
        code = ctypes.get_errno()
        if code not in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP):
            raise OSError(code, os.strerror(code), target)
    old = temp + "-old"
    os.rename(target, old)
    os.rename(temp, target)
    os.rename(old, temp)


@functools.cache
def _libc() -> Any:
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
