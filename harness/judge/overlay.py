"""An overlay mount the sandbox made for itself, judged by its layers. On the host's
kernel an overlay of the sandbox's own has a device the host does not show, like a
new tmpfs, yet its lower layers may be host folders (`lowerdir=/var/log`): as much an
exposure as a bind of them. Its options are only the mounter's words (paths in the
mounter's view), so a layer counts as the host folder of that name only where the
host finds there an entry the sandbox saw, with the same inode (an overlay keeps its
layers' inode numbers).

The probe reports each overlay as [mount point, super options, name, inode, name,
inode...] (`fs-mounts`' `overlays`); the host says what is at each layer + name
(`hostside/hostfs.py`, in `held_paths`: "MAJ:MIN INODE" or "")."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from harness.policy.models import within

# At most this many paths asked of the host for one cell's overlays.
MAX_LAYER_PATHS = 192
# An overlay with xino on sets a layer's index in an inode number's high bits.
INODE_BITS = (1 << 32) - 1
OCTAL = re.compile(r"\\([0-3][0-7]{2})")
UNESCAPED_COLON = re.compile(r"(?<!\\):")
BACKSLASHED = re.compile(r"\\(.)")


def _unescape(value: str) -> str:
    """mountinfo writes space, tab, newline, comma, '=' and backslash as \\ooo."""
    return OCTAL.sub(lambda m: chr(int(m.group(1), 8)), value)


def _backslashed(path: str) -> str:
    """A layer as overlayfs reads it: a backslash escapes the next character (the
    mounter's "\\," or "\\:", kept in the options as given)."""
    return BACKSLASHED.sub(r"\1", path)


def layers(options: str) -> list[str]:
    """The folders an overlay's super options name as its layers: lowerdir's
    colon-separated list ("\\:" a colon in a name; "::" before data-only layers),
    each lowerdir+ and datadir+, and upperdir, as written (a relative one too: it was
    the mounter's working folder's). The work folder holds nothing."""
    found: list[str] = []
    for option in options.split(","):
        key, _, value = option.partition("=")
        value = _unescape(value)
        if key == "lowerdir":
            found += [_backslashed(p) for p in UNESCAPED_COLON.split(value) if p]
        elif key in ("lowerdir+", "datadir+", "upperdir") and value:
            found.append(_backslashed(value))
    return found


def _rows(evidence: Mapping[str, Any]) -> list[tuple[str, str, list[tuple[str, str]]]]:
    """Each well-formed overlay row as (mount point, options, [(name, inode)])."""
    rows = evidence.get("overlays")
    found = []
    for row in rows if isinstance(rows, list) else []:
        if not (isinstance(row, list) and len(row) >= 2 and len(row) % 2 == 0):
            continue
        if not all(isinstance(f, str) for f in row):
            continue
        names = [(row[i], row[i + 1]) for i in range(2, len(row), 2) if row[i + 1].isdigit()]
        found.append((row[0], row[1], names))
    return found


def _entry(layer: str, name: str) -> str:
    return layer.rstrip("/") + "/" + name


def layer_paths(evidence: Mapping[str, Any]) -> list[str]:
    """The host paths to ask about: each layer of each overlay (not one at the
    sandbox's /: its image) with each name the sandbox saw at its top."""
    paths: list[str] = []
    for point, options, names in _rows(evidence):
        if point == "/":
            continue
        for layer in layers(options):
            if layer.startswith("/"):
                paths += [_entry(layer, name) for name, _ in names]
    return list(dict.fromkeys(paths))[:MAX_LAYER_PATHS]


def ungranted_layers(
    evidence: Mapping[str, Any], seen: Mapping[str, str] | None, grants: Iterable[str]
) -> dict[str, tuple[str, str]]:
    """Each overlay mount point (not the sandbox's /) with a layer no read grant holds
    that the host confirms, as {mount point: (the layer's host path, the name found
    in both)}: the first such layer in which the host shows a name the sandbox saw,
    with the same inode."""
    granted = list(grants)
    found: dict[str, tuple[str, str]] = {}
    for point, options, names in _rows(evidence):
        if point == "/" or seen is None:
            continue
        for layer in layers(options):
            if not layer.startswith("/") or any(within(layer, g) for g in granted):
                continue
            match = next((n for n, ino in names if _same(seen.get(_entry(layer, n)), ino)), None)
            if match is not None:
                found.setdefault(point, (layer, match))
    return found


def unplaced_layers(evidence: Mapping[str, Any], grants: Iterable[str]) -> dict[str, str]:
    """Each overlay mount point with a layer no read grant holds (the sandbox's / among
    them: `reach.unplaced_mounts` passes over its image),
    as {mount point: that layer}: one the host did not confirm is no proof of an
    overlay of the sandbox's own, for the mounter's words may name a host folder by
    another path (a relative one, a private bind of it, /proc/self/fd/N), and a few
    files the probe saw prove nothing of the files it did not (a decoy layer)."""
    granted = list(grants)
    found: dict[str, str] = {}
    for point, options, _names in _rows(evidence):
        for layer in layers(options):
            if not layer.startswith("/") or not any(within(layer, g) for g in granted):
                found.setdefault(point, layer)
    return found


def _same(host: str | None, inode: str) -> bool:
    """The host's "MAJ:MIN INODE" names the inode the sandbox saw."""
    parts = (host or "").split(" ")
    if len(parts) != 2 or not parts[1].isdigit():
        return False
    return int(parts[1]) & INODE_BITS == int(inode) & INODE_BITS
