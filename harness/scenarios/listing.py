"""Every declared check, as users read it: `harness scenarios --checks` and
docs/checks.md come from here, so a check's metadata has one source (its scenario
module) and the docs cannot drift from it (tests/scenarios/test_listing.py).

Regenerate the page with `python -m harness.scenarios.listing > docs/checks.md`.
"""

from __future__ import annotations

from dataclasses import dataclass

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


if __name__ == "__main__":
    print(markdown(), end="")
