"""Every declared check, as users read it: `harness scenarios --checks` and
docs/checks.md come from here, so a check's metadata has one source (its scenario
module) and the docs cannot drift from it (tests/scenarios/test_listing.py).

Regenerate the pages with `python -m harness.scenarios.listing > docs/checks.md` and
`python -m harness.scenarios.listing --protocol docs/probe-protocol.md` (which rewrites
that page's generated tables in place, from each check's `how` and each scenario's
`measured`).
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


_FAMILY = re.compile(r"^(?P<stem>[\w-]+)-(\d+|high)$")  # a sweep line: tcp4-22, tcp4-high
_BLOCK = re.compile(
    r"(?P<open><!-- generated: (?P<scenario>[\w-]+) (?P<table>[\w-]+) -->\n)"
    r".*?(?P<close><!-- end generated -->)",
    re.S,
)


def protocol_gaps() -> list[str]:
    """What the scenarios' descriptions for docs/probe-protocol.md miss: a check the
    probe reports with no `how`, a fact measured by no key or by two, a key naming
    no fact."""
    problems = []
    for scenario in listed():
        problems += [
            f"{scenario.name}: {c.id} not described"
            for c in scenario.checks
            if c.table_row and not c.how
        ]
        seen: set[str] = set()
        for key in scenario.measured:
            for name in key.split(", "):
                if name not in scenario.facts:
                    problems.append(f"{scenario.name}: {name!r} names no fact")
                elif name in seen:
                    problems.append(f"{scenario.name}: {name} described twice")
                seen.add(name)
        problems += [f"{scenario.name}: {f} not described" for f in scenario.facts if f not in seen]
    return problems


def _id_cell(ids: list[str]) -> str:
    """`tcp4-P`, `tcp6-P` (P = 22, ..., `high`) for a sweep's family, else each id."""
    names = dict.fromkeys((f"{m['stem']}-P" if (m := _FAMILY.match(i)) else i) for i in ids)
    cell = ", ".join(f"`{n}`" for n in names)
    ports = dict.fromkeys(m[2] for i in ids if (m := _FAMILY.match(i)))
    if len(ports) > 1:
        cell += " (P = " + ", ".join(p if p.isdigit() else f"`{p}`" for p in ports) + ")"
    elif ports:  # one port: the id is itself, not a family
        cell = ", ".join(f"`{i}`" for i in ids)
    return cell


def protocol_table(scenario: Scenario, table: str) -> str:
    """One of docs/probe-protocol.md's tables: what the probe does, per check (those of
    the scenario's `section` named `table`; checks with the same words share a row),
    or, for `facts`, what it measures."""
    if table == "facts":
        out = ["| id | what is measured |", "|---|---|"]
        for key, how in scenario.measured.items():
            out.append(f"| {', '.join(f'`{n}`' for n in key.split(', '))} | {_cell(how)} |")
        return "\n".join(out) + "\n"
    groups: dict[str, list[Check]] = {}
    for check in scenario.checks:
        if check.section == table and check.table_row and check.how:
            groups.setdefault(check.how, []).append(check)
    kinds = any(c.inside_control for group in groups.values() for c in group)
    head = ["| id | kind | attempt |", "|---|---|---|"]
    out = head if kinds else ["| id | attempt |", "|---|---|"]
    for how, group in groups.items():
        cells = [_id_cell([c.id for c in group])]
        if kinds:
            cells.append("control" if group[0].inside_control else "attempt")
        out.append("| " + " | ".join([*cells, _cell(how)]) + " |")
    return "\n".join(out) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


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
