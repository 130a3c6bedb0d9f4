"""The probe's check table (`checks.def`) as data, for the scenario modules' test and
the docs: the C build reads the same file as an X-macro, so the two cannot drift.

Also the ids the sweep row prints, one line per attempt, which `egress.c` builds
from its port lists and named attempts rather than declaring them in the table.
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


def _ports(code: str, name: str) -> list[str]:
    values = re.search(rf"{name}\[\] = \{{([^}}]*)\}}", code)
    if values is None:
        raise ValueError(f"egress.c: no {name}[]")
    numbers = [n.strip() for n in values.group(1).split(",") if n.strip()]
    return ["high" if n == "0" else n for n in numbers]  # 0: a high port, chosen per run


# An id the sweep names as a literal: att_new("id", sweep_add("id", a choice of two
# (`f ? "id6" : "id4"`), or a row of a table of calls (`{ "id", H_... }`).
_NAMED = re.compile(
    r'(?:att_new|sweep_add|att_line)\((?:\w+ \? "([\w-]+)" : )?"([\w-]+)"|\{ "([\w-]+)", H_\w+ \}'
)


def sweep_ids(text: str | None = None) -> set[str]:
    """The ids of the lines the sweep row prints (`text`: an egress.c, sweep.c and ipc.c;
    default the package's): TCP and UDP to each listed port and ICMP echo, over IPv4
    and IPv6, and the attempts it names (its own resolver, the unix sockets, the other
    protocols and send calls, ...)."""
    sources = ("egress.c", "sweep.c", "ipc.c")
    code = _code("".join(_source(name) for name in sources) if text is None else text)
    made = {f"icmp{v}" for v in "46"}
    for v in "46":
        made |= {f"tcp{v}-{p}" for p in _ports(code, "sweep_tcp_ports")}
        made |= {f"udp{v}-{p}" for p in _ports(code, "sweep_udp_ports")}
    made |= {i for found in _NAMED.findall(code) for i in found if i}
    return made
