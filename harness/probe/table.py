"""The probe's check table (`checks.def`) as data, for the scenario modules' test and
the docs: the C build reads the same file as an X-macro, so the two cannot drift.

Also the ids the sweep row prints, one line per attempt, which the sweep's own
X-macro file (`sweep.def`: its port lists and named attempts) declares, read by the
C build and here alike.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources

KINDS = ("fact", "attempt", "control", "info", "sweep")
_ROW = re.compile(
    r'CHECK\("([\w-]+)", "([\w-]+)", (\w+), (FACT|ATTEMPT|CONTROL|INFO|SWEEP)(_LIGHT|_NET)?\)'
)
_LIGHTS = ("fact", "attempt", "control")  # the kinds that may share a child
_NETS = ("attempt", "control", "sweep")  # the kinds that may run at once
_COMMENT = re.compile(r"/\*.*?\*/", re.S)


@dataclass(frozen=True, slots=True)
class Row:
    """One CHECK() row: the lines it prints carry `scenario` and `id` (a sweep row's
    lines carry the ids of `sweep_ids()` instead). A light row (`KIND_LIGHT`) runs in
    one child with the light rows next to it; a concurrent row (`KIND_NET`) runs at the
    same time as the concurrent rows next to it. Its lines are the same as its kind's."""

    scenario: str
    id: str
    function: str
    kind: str  # one of KINDS
    light: bool = False
    concurrent: bool = False


def _source(name: str) -> str:
    return resources.files("harness.probe").joinpath(name).read_text()


def _code(text: str) -> str:
    """The text without C comments, line numbers kept."""
    return _COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text)


def rows(text: str | None = None) -> list[Row]:
    """The table's rows in order (`text`: a checks.def; default the package's).

    Raises:
        ValueError: a line that is neither blank, a comment nor a whole CHECK() row:
            a row the parser skipped would hide a check from the test that holds the
            table and the scenario modules together.
    """
    code = _code(_source("checks.def") if text is None else text)
    found = []
    for number, line in enumerate(code.splitlines(), 1):
        if not line.strip():
            continue
        match = _ROW.fullmatch(line.strip())
        if match is None:
            raise ValueError(f"checks.def:{number}: not a CHECK() row: {line.strip()!r}")
        scenario, id_, function, kind, suffix = match.groups()
        if suffix == "_LIGHT" and kind.lower() not in _LIGHTS:
            raise ValueError(f"checks.def:{number}: {kind} cannot be light: {line.strip()!r}")
        if suffix == "_NET" and kind.lower() not in _NETS:
            raise ValueError(f"checks.def:{number}: {kind} cannot be _NET: {line.strip()!r}")
        found.append(
            Row(
                scenario,
                id_,
                function,
                kind.lower(),
                light=suffix == "_LIGHT",
                concurrent=suffix == "_NET",
            )
        )
    return found


_SWEEP = re.compile(r'SWEEP\(\w+, "([\w-]+)"\)')
_SWEEP_PORTS = re.compile(r"SWEEP_(TCP|UDP)_PORTS\((\d+(?:, \d+)*)\)")


def sweep_ids(text: str | None = None) -> set[str]:
    """The ids of the lines the sweep row prints (`text`: a sweep.def; default the
    package's): TCP and UDP to each listed port, over IPv4 and IPv6 (port 0 is the
    run's high port), and the attempts it names (ICMP echo, its own resolver, the unix
    sockets, the other protocols and send calls, ...).

    Raises:
        ValueError: a line that is neither blank, a comment nor a whole SWEEP() or
            SWEEP_*_PORTS() line: an id the parser skipped would hide an attempt from
            the test that holds the sweep and the scenario modules together.
    """
    code = _code(_source("sweep.def") if text is None else text)
    made: set[str] = set()
    for number, line in enumerate(code.splitlines(), 1):
        if not line.strip():
            continue
        if named := _SWEEP.fullmatch(line.strip()):
            made.add(named.group(1))
        elif ports := _SWEEP_PORTS.fullmatch(line.strip()):
            proto = ports.group(1).lower()
            for port in ports.group(2).split(", "):
                made |= {f"{proto}{v}-{'high' if port == '0' else port}" for v in "46"}
        else:
            raise ValueError(f"sweep.def:{number}: not a SWEEP() line: {line.strip()!r}")
    return made
