"""The filesystem checks' targets (`targets.def`) as data: the C build includes the
same file, so the probe, the host-side setup and the catalogue read one table of
names, kinds and the places they are made."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

KINDS = ("FILE", "DIR", "COPY", "MADE")
WHERE = ("OUTSIDE", "GRANTED")
_ROW = re.compile(
    r'TARGET\((\w+), "([\w-]+)", (FILE|DIR|COPY|MADE), (OUTSIDE|GRANTED), "([\w-]+)", "(\w*)"\)'
)
_COMMENT = re.compile(r"/\*.*?\*/", re.S)


@dataclass(frozen=True, slots=True)
class Target:
    """One TARGET() row. `name` is the file's name in the outside folder (a MADE
    target's is the prefix of the `name-TAG` the check makes); `granted`: harness's
    folder in each read-only grant holds one too; `host_fact`: what the host's
    inspection reports when it changed or appeared ("" where the probe decides)."""

    ident: str
    name: str
    kind: str  # one of KINDS
    granted: bool
    check: str
    host_fact: str


def parse(text: str) -> list[Target]:
    """The rows of a targets.def, in order.

    Raises:
        ValueError: a line that is neither blank, a comment nor a whole TARGET() row,
            or a name or ident given twice.
    """
    code = _COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    found: list[Target] = []
    for number, line in enumerate(code.splitlines(), 1):
        if not line.strip():
            continue
        match = _ROW.fullmatch(line.strip())
        if match is None:
            raise ValueError(f"targets.def:{number}: not a TARGET() row: {line.strip()!r}")
        ident, name, kind, where, check, fact = match.groups()
        if any(t.ident == ident or t.name == name for t in found):
            raise ValueError(f"targets.def:{number}: {name} ({ident}) given twice")
        found.append(Target(ident, name, kind, where == "GRANTED", check, fact))
    return found


@cache
def targets() -> tuple[Target, ...]:
    """The package's targets.def."""
    text = resources.files("harness.probe").joinpath("targets.def").read_text()
    return tuple(parse(text))


def made_by_setup() -> list[Target]:
    """What the host makes in the outside folder before a cell (not the MADE names)."""
    return [t for t in targets() if t.kind != "MADE"]


def host_fact(check: str) -> str:
    """The host fact that proves `check`'s write: the fact of its target.

    Raises:
        KeyError: no target is that check's.
    """
    for target in targets():
        if target.check == check and target.host_fact:
            return target.host_fact
    raise KeyError(check)
