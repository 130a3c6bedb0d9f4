"""probe.c's check table and the scenario modules name the same checks, both ways.

Adding a scenario means probe.c and one scenario module: if either side names a
check the other does not, the probe would report a line nobody judges, or a
scenario would wait for a line the probe never prints (inconclusive forever).
"""

from __future__ import annotations

import re
from importlib import resources

from harness.fixtures.filesystem import Sentinels
from harness.scenarios import SCENARIOS
from harness.scenarios.base import Need, Rule

SOURCE = resources.files("harness.probe").joinpath("probe.c").read_text()
KIND = {"attempt": "K_ATTEMPT", "control": "K_CONTROL"}


def _table() -> set[tuple[str, str, str]]:
    body = SOURCE.split("static const struct check checks[] = {", 1)[1].split("};", 1)[0]
    rows = re.findall(r'\{\s*"([\w-]+)",\s*"([\w-]+)",\s*\w+,\s*(K_\w+)\s*\}', body)
    assert len(rows) == body.count("{"), "a row of the table did not parse"
    return set(rows)


def _declared() -> set[tuple[str, str, str]]:
    rows = set()
    for s in SCENARIOS.values():
        rows |= {(s.probe_name, fact, "K_FACT") for fact in s.facts}
        rows |= {(s.probe_name, info, "K_INFO") for info in s.info}
        for c in s.checks:
            if c.table_row == "sweep":
                rows.add((s.probe_name, "sweep", "K_SWEEP"))
            elif c.table_row is not None:
                kind = "control" if c.inside_control else "attempt"
                rows.add((s.probe_name, c.table_row, KIND[kind]))
    return rows


def test_every_table_row_is_declared_by_a_scenario_and_back() -> None:
    """Each row of probe.c's table is a fact, check or info line some scenario
    declares, with the same kind; and each declared one has its row."""
    table, declared = _table(), _declared()
    assert table - declared == set(), "rows in probe.c that no scenario declares"
    assert declared - table == set(), "declared checks that probe.c does not run"


def _ports(name: str) -> list[str]:
    values = re.search(rf"{name}\[\] = \{{([^}}]*)\}}", SOURCE)
    assert values is not None, name
    numbers = re.sub(r"/\*.*?\*/", "", values.group(1)).split(",")
    return [("high" if n.strip() == "0" else n.strip()) for n in numbers if n.strip()]


def test_the_sweep_reports_exactly_the_declared_sweep_checks() -> None:
    """The sweep row prints many lines: their ids (built from probe.c's port lists
    and named attempts) are exactly the checks declared as the sweep's."""
    made = {f"icmp{v}" for v in "46"}
    for v in "46":
        made |= {f"tcp{v}-{p}" for p in _ports("sweep_tcp_ports")}
        made |= {f"udp{v}-{p}" for p in _ports("sweep_udp_ports")}
    made |= set(re.findall(r'att_new\("([\w-]+)"', SOURCE))
    declared = {c.id for s in SCENARIOS.values() for c in s.checks if c.table_row == "sweep"}
    assert made == declared


def test_host_side_checks_are_not_in_the_table() -> None:
    """A check judged on the host alone (no probe row) says how it is judged."""
    for s in SCENARIOS.values():
        for c in s.checks:
            if c.table_row is None:
                assert c.rule is Rule.SENTINEL, c.id
                assert all(row[1] != c.id for row in _table())


def test_every_write_names_a_fact_the_sentinels_report() -> None:
    """A write is an escape only through the host fact it names: a misspelt fact
    would never be seen, and the write never judged escaped."""
    seen = Sentinels("/w/fs/c", "t").inspection(
        {"inspected": "yes", "created": "no", "rename_source": "yes"}
    )
    writes = [c for s in SCENARIOS.values() for c in s.checks if c.rule is Rule.WRITE]
    assert writes, "the filesystem scenario declares its writes"
    for c in writes:
        assert c.host_fact in seen, c.id


def test_every_attempt_at_the_canary_is_judged_by_its_arrival() -> None:
    """In a scenario whose attempts aim at the canary, each attempt is decided by the
    canary's log: one judged on the probe's word alone would be `blocked` whenever the
    probe saw no answer, even if a relay delivered it (a false `enforced`)."""
    aiming = [s for s in SCENARIOS.values() if Need.TARGETS in s.needs]
    assert aiming, "the egress scenario aims at the canary"
    for s in aiming:
        assert Need.CANARY in s.needs
        for c in s.checks:
            if not c.inside_control:
                assert c.rule is Rule.ARRIVAL, c.id
