"""Reading input files and writing output files, the two ways harness touches a disk.

Reading: only a regular file, and never more than a stated size. `/dev/zero` would
be read without end, a FIFO would block `open` forever, and a symlink loop makes
path resolution raise; each of those is one short `Unreadable` reason instead.

Writing: every output (a report, an evidence document, a rewritten results file)
goes to a temporary file in the same folder, is fsynced, then renamed over the
target. A reader, a crash or a full disk sees the old file or the new one, never
a torn or empty one. A folder harness makes in a user's output folder is entered
without following a symlink planted there (`own_folder`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import BinaryIO

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC


class Unreadable(Exception):
    """A file that cannot be read as input; `why` is one short line for the user."""

    def __init__(self, why: str, *, missing: bool = False) -> None:
        self.why = why
        self.missing = missing
        super().__init__(why)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def open_regular(path: Path, *, limit: int | None = None) -> BinaryIO:
    """A regular file of at most `limit` bytes, opened for reading (binary).

    Opened with O_NONBLOCK so a FIFO never blocks the open; the type is judged on
    the opened descriptor, so a file swapped in between cannot slip through.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise Unreadable("no such file", missing=True) from None
    except IsADirectoryError:
        raise Unreadable("is a directory, expected a file") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Unreadable("a symlink loop") from None
        raise Unreadable(f"cannot read: {exc.strerror or exc}") from None
    except ValueError:  # a NUL byte in the name
        raise Unreadable("not a file name (holds a NUL byte)") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Unreadable(f"is {_kind(info.st_mode)}, expected a regular file")
        if limit is not None and info.st_size > limit:
            raise Unreadable(f"file is larger than {limit} bytes")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: Path, *, limit: int | None) -> bytes:
    """The bytes of a regular file of at most `limit` bytes (None: no size limit)."""
    with open_regular(path, limit=limit) as fh:
        try:
            data = fh.read() if limit is None else fh.read(limit + 1)
        except OSError as exc:
            raise Unreadable(f"cannot read: {exc.strerror or exc}") from None
    if limit is not None and len(data) > limit:  # grew while read
        raise Unreadable(f"file is larger than {limit} bytes")
    return data


def write_atomic(
    path: Path, data: bytes | str | Iterable[str], *, folder: int | None = None
) -> None:
    """Replace `path` with `data` whole (text may come in pieces, written as they
    come): temporary file in the same folder, fsync, rename, fsync the folder. On
    any failure the temporary file is removed and the old file (if any) is left as
    it was; the OSError propagates.

    `folder` is an open descriptor of path's folder (from `own_folder`): the file is
    made in it by name, so a symlink swapped in for the folder is never followed.
    """
    parts: Iterable[bytes | str] = [data] if isinstance(data, bytes | str) else data
    dir_fd = os.open(path.parent, _DIR) if folder is None else folder
    tmp = f".{path.name[:40]}.{secrets.token_hex(6)}.tmp"
    try:
        # O_EXCL: never through a symlink, never into another's file.
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600, dir_fd=dir_fd)
        try:
            try:
                for part in parts:
                    view = memoryview(part.encode("utf-8") if isinstance(part, str) else part)
                    while view:
                        view = view[os.write(fd, view) :]
                os.fchmod(fd, 0o644 & ~_umask())
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, path.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dir_fd)
            raise
        with contextlib.suppress(OSError):
            os.fsync(dir_fd)
    finally:
        if folder is None:
            os.close(dir_fd)


def own_folder(base: Path, names: Sequence[str] = ()) -> int:
    """An open descriptor of `base`/names..., each made if missing; the caller closes
    it. `base` is the user's (a symlink there is their choice); the names below it
    are harness's own, and a symlink planted at one is never followed (an OSError,
    ELOOP, naming it): root's files would go where the planter chose."""
    base.mkdir(parents=True, exist_ok=True)
    fd = os.open(base, _DIR)
    where = base
    try:
        for name in names:
            where = where / name
            try:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, dir_fd=fd)
                child = os.open(name, _DIR | os.O_NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                code = exc.errno
                if code == errno.ENOTDIR and _is_link(name, fd):  # O_DIRECTORY said it first
                    code = errno.ELOOP
                raise OSError(code, os.strerror(code or 0), str(where)) from exc
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _is_link(name: str, dir_fd: int) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _umask() -> int:
    """The process umask (read by setting and restoring it), so an output file gets
    the mode a plain `open` would have given it rather than its temporary 0600."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def output_error(path: Path, exc: OSError) -> str:
    """One line saying why an output could not be written."""
    if isinstance(exc, NotADirectoryError):
        return f"{path}: cannot write: a parent is not a directory"
    if exc.errno == errno.ELOOP:
        return f"{path}: a symlink; harness writes no file through one"
    return f"{path}: cannot write: {exc.strerror or exc}"
