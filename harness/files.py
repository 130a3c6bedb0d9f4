"""Reading input files and writing output files, the two ways harness touches a disk.

Reading: only a regular file, and never more than a stated size. `/dev/zero` would
be read without end, a FIFO would block `open` forever, and a symlink loop makes
path resolution raise; each of those is one short `Unreadable` reason instead.

Writing: every output (a report, an evidence document, a rewritten results file)
goes to a temporary file in the same folder, is fsynced, then renamed over the
target. A reader, a crash or a full disk sees the old file or the new one, never
a torn or empty one.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import BinaryIO


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


def write_atomic(path: Path, data: bytes | str | Iterable[str]) -> None:
    """Replace `path` with `data` whole (text may come in pieces, written as they
    come): temporary file in the same folder, fsync, rename, fsync the folder. On
    any failure the temporary file is removed and the old file (if any) is left as
    it was; the OSError propagates.
    """
    parts: Iterable[bytes | str] = [data] if isinstance(data, bytes | str) else data
    folder = path.parent
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{path.name[:40]}.", suffix=".tmp")
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
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):
        dir_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def _umask() -> int:
    """The process umask (read by setting and restoring it), so an output file gets
    the mode a plain `open` would have given it rather than mkstemp's 0600."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def output_error(path: Path, exc: OSError) -> str:
    """One line saying why an output could not be written."""
    if isinstance(exc, NotADirectoryError):
        return f"{path}: cannot write: a parent is not a directory"
    return f"{path}: cannot write: {exc.strerror or exc}"
