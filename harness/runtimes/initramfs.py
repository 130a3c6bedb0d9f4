"""Initramfs archives for microVM guests: the "newc" cpio format, written two ways.

A guest's initramfs is two archives back to back, which the kernel unpacks in
turn. The harness writes the first one here: the folders, /dev/console and the
per-cell files under /harness. It reaches the host as the cell's stdin. The
host appends the second with `SH_WRITER`: the files that already live there
(the probe as /init, the privilege helpers, the allowed folder's entries,
kernel modules), so nothing large crosses the connection and the cell is still
one command.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

MAGIC = b"070701"
TRAILER = "TRAILER!!!"
DIR = 0o040000
REG = 0o100000
CHR = 0o020000
LNK = 0o120000


@dataclass(frozen=True, slots=True)
class Entry:
    """One archive member. `name` has no leading slash; `rdev` is (major, minor)."""

    name: str
    mode: int
    data: bytes = b""
    rdev: tuple[int, int] = (0, 0)


def _pad(n: int) -> bytes:
    return b"\0" * (-n % 4)


def _member(entry: Entry, ino: int) -> bytes:
    name = entry.name.encode() + b"\0"
    fields = (
        ino, entry.mode, 0, 0, 1, 0, len(entry.data), 0, 0, *entry.rdev, len(name), 0,
    )  # fmt: skip
    head = MAGIC + b"".join(b"%08X" % v for v in fields) + name
    return head + _pad(len(head)) + entry.data + _pad(len(entry.data))


def newc(entries: Iterable[Entry], *, first_ino: int = 1) -> bytes:
    """A complete archive (ending with its trailer), owned by root, mtime 0."""
    out = [_member(e, first_ino + i) for i, e in enumerate(entries)]
    out.append(_member(Entry(TRAILER, 0), 0))
    return b"".join(out)


def folder(name: str, mode: int = 0o755) -> Entry:
    return Entry(name, DIR | mode)


def file(name: str, data: bytes, mode: int = 0o644) -> Entry:
    return Entry(name, REG | mode, data)


def read_newc(data: bytes) -> list[Entry]:
    """Every member of one or more concatenated archives (trailers dropped), as the
    kernel would unpack them. For tests and diagnosis; raises ValueError if malformed."""
    entries: list[Entry] = []
    pos = 0
    while pos < len(data):
        if data[pos : pos + 4] == b"\0\0\0\0":  # padding between archives
            pos += 4
            continue
        if data[pos : pos + 6] != MAGIC:
            raise ValueError(f"bad magic at offset {pos}")
        fields = [int(data[pos + 6 + 8 * i : pos + 14 + 8 * i], 16) for i in range(13)]
        mode, size, namesize = fields[1], fields[6], fields[11]
        name_at = pos + 110
        name = data[name_at : name_at + namesize - 1].decode()
        body = name_at + namesize + (-(110 + namesize) % 4)
        if body + size > len(data):
            raise ValueError(f"member {name!r} runs past the end")
        if name != TRAILER:
            rdev = (fields[9], fields[10])
            entries.append(Entry(name, mode, data[body : body + size], rdev))
        pos = body + size + (-size % 4)
    return entries


# Shell functions that append members to stdout, for files already on the host.
# `LC_ALL=C` makes ${#x} count bytes. Every member is owned by root, with mtime 0.
SH_WRITER = r"""
ino=100000
pad() { if [ "$1" -gt 0 ]; then head -c "$1" /dev/zero; fi; }
hdr() { # NAME MODE SIZE
  ino=$((ino + 1)); n=$((${#1} + 1))
  printf '070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%s' \
    "$ino" "$2" 0 0 1 0 "$3" 0 0 0 0 "$n" 0 "$1"
  pad $((1 + (4 - (110 + n) % 4) % 4))
}
member() { # NAME MODE PATH: a regular file
  size=$(wc -c < "$3"); size=$((size + 0))
  hdr "$1" "$2" "$size"; cat "$3"; pad $(((4 - size % 4) % 4))
}
symlink() { # NAME TARGET
  hdr "$1" 41471 "${#2}"; printf '%s' "$2"; pad $(((4 - ${#2} % 4) % 4))
}
trailer() { ino=-1; hdr 'TRAILER!!!' 0 0; }
"""
