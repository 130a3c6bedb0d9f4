"""Every declared check, as users read it: `harness scenarios --checks` and
docs/checks.md come from here, so a check's metadata has one source (its scenario
module) and the docs cannot drift from it (tests/scenarios/test_listing.py).

Regenerate the pages with `python -m harness.scenarios.listing > docs/checks.md` and
`python -m harness.scenarios.listing --protocol docs/probe-protocol.md` (which rewrites
that page's generated tables in place, from each scenario's `protocol`).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

from harness.scenarios import listed
from harness.scenarios.base import Check, Control, Scenario


@dataclass(frozen=True, slots=True)
class CheckRow:
    """One check's metadata, flattened for a listing."""

    scenario: str
    id: str
    doc: str
    kind: str  # attempt | inside control
    rule: str
    control: str  # what proves the attempt could have succeeded
    transport: str  # how an arrival is matched to it: tcp, udp, or "marker"
    row: str  # the probe's check-table row that reports it; "host" if none
    needs: str  # what the canary must have for it to be asked


def _control(check: Check) -> str:
    if check.inside_control:
        return "n/a"
    if check.control is Control.NONE:
        return "none needed"
    return f"host runtime's {check.control_id}" if check.control_id else "host runtime"


def rows(scenario: Scenario) -> list[CheckRow]:
    """A scenario's checks, in the order the verdict lists them."""
    return [
        CheckRow(
            scenario=scenario.name,
            id=c.id,
            doc=c.doc,
            kind="inside control" if c.inside_control else "attempt",
            rule=str(c.rule),
            control=_control(c),
            transport=str(c.transport) if c.transport else "-",
            row=c.table_row or "host",
            needs=", ".join(c.needs) or "-",
        )
        for c in scenario.checks
    ]


def markdown() -> str:
    """docs/checks.md: one table per scenario that has checks."""
    out = [
        "# Checks",
        "",
        "Every check harness judges, by scenario. Generated from `harness/scenarios/` by",
        "`python -m harness.scenarios.listing > docs/checks.md`; a test holds it to the code,",
        "so do not edit it by hand. `harness scenarios --checks` prints the same.",
        "",
        "Columns: **rule** is how the host's evidence decides the outcome",
        "([judging.md](judging.md)); **control** is what proves the attempt could have",
        "succeeded; **transport** is how a canary arrival is matched to the attempt when no",
        "marker survived (`-`: by marker only); **row** is the probe's check-table row",
        "(`harness/probe/`) that reports it (`host`: decided on the host alone); **needs** is",
        "what the canary must have for the attempt to be asked (`policy-binaries`: the",
        "runtime's policy names the binaries that may reach its endpoints).",
    ]
    for scenario in listed():
        table = rows(scenario)
        if not table:
            continue
        prop = f"`{scenario.property}`" if scenario.property else "facts only"
        out += [
            "",
            f"## `{scenario.name}` ({prop})",
            "",
            "| id | must fail (or, for an inside control, succeed) | rule | control"
            " | transport | row | needs |",
            "|---|---|---|---|---|---|---|",
        ]
        for r in table:
            doc = r.doc.replace("|", "\\|")
            kind = " (inside control)" if r.kind == "inside control" else ""
            out.append(
                f"| `{r.id}` | {doc}{kind} | {r.rule} | {r.control} | {r.transport}"
                f" | {r.row} | {r.needs} |"
            )
    return "\n".join(out) + "\n"


# A family of sweep lines in a protocol key: "tcp4-P" stands for tcp4-22, tcp4-high, ...
_FAMILY = re.compile(r"^(?P<stem>[\w-]+)-P$")
_BLOCK = re.compile(
    r"(?P<open><!-- generated: (?P<scenario>[\w-]+) (?P<table>[\w-]+) -->\n)"
    r".*?(?P<close><!-- end generated -->)",
    re.S,
)


def _members(scenario: Scenario) -> list[str]:
    """What a scenario's protocol must describe: its facts and every check the probe
    reports (one decided on the host alone has no line)."""
    return [*scenario.facts, *(c.id for c in scenario.checks if c.table_row)]


def _expand(name: str, members: list[str]) -> list[str]:
    family = _FAMILY.match(name)
    if family is None:
        return [name] if name in members else []
    pattern = re.compile(rf"{re.escape(family['stem'])}-(\d+|high)")
    return [m for m in members if pattern.fullmatch(m)]


def protocol_gaps() -> list[str]:
    """What the scenarios' protocol tables get wrong: a check or fact described by no
    key or by two, a key naming nothing."""
    problems = []
    for scenario in listed():
        members = _members(scenario)
        seen: dict[str, str] = {}
        for table in scenario.protocol.values():
            for key in table:
                for name in key.split(", "):
                    found = _expand(name, members)
                    if not found:
                        problems.append(f"{scenario.name}: {name!r} names no check or fact")
                    for member in found:
                        if member in seen:
                            problems.append(f"{scenario.name}: {member} described twice")
                        seen[member] = key
        problems += [f"{scenario.name}: {m} not described" for m in members if m not in seen]
    return problems


def _id_cell(key: str, members: list[str]) -> str:
    names = key.split(", ")
    cell = ", ".join(f"`{n}`" for n in names)
    ports: list[str] = []
    for name in names:
        if _FAMILY.match(name):
            ports += [m.rsplit("-", 1)[1] for m in _expand(name, members)]
    if ports:
        unique = dict.fromkeys(ports)
        cell += " (P = " + ", ".join(p if p.isdigit() else f"`{p}`" for p in unique) + ")"
    return cell


def protocol_table(scenario: Scenario, table: str) -> str:
    """One of docs/probe-protocol.md's tables: what the probe does, per check or fact."""
    members = _members(scenario)
    controls = {c.id for c in scenario.checks if c.inside_control}
    rows = scenario.protocol[table]
    facts = all(n in scenario.facts for key in rows for n in key.split(", "))
    kinds = not facts and any(n in controls for key in rows for n in key.split(", "))
    if facts:
        out = ["| id | what is measured |", "|---|---|"]
    elif kinds:
        out = ["| id | kind | attempt |", "|---|---|---|"]
    else:
        out = ["| id | attempt |", "|---|---|"]
    for key, how in rows.items():
        cells = [_id_cell(key, members)]
        if kinds:
            cells.append("control" if key.split(", ")[0] in controls else "attempt")
        cells.append(how.replace("|", "\\|"))
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def protocol_page(text: str) -> str:
    """The page with each generated block (`<!-- generated: SCENARIO TABLE -->` up to
    `<!-- end generated -->`) written anew from the scenarios.

    Raises:
        KeyError: a block names a scenario or table that does not exist.
    """
    from harness.scenarios import SCENARIOS

    def block(match: re.Match[str]) -> str:
        table = protocol_table(SCENARIOS[match["scenario"]], match["table"])
        return match["open"] + "\n" + table + "\n" + match["close"]

    return _BLOCK.sub(block, text)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--protocol"]:
        page = Path(sys.argv[2])
        page.write_text(protocol_page(page.read_text(encoding="utf-8")), encoding="utf-8")
    else:
        print(markdown(), end="")
