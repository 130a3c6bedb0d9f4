"""The probe's check table (checks.def) and the scenario modules name the same
checks, both ways.

Adding a check means its C file, its row in checks.def and one scenario module: if
either side names a check the other does not, the probe would report a line nobody
judges, or a scenario would wait for a line the probe never prints (inconclusive
forever).
"""

from __future__ import annotations

import pytest

from harness.hostside.filesystem import Sentinels
from harness.probe import table
from harness.scenarios import SCENARIOS
from harness.scenarios.base import Need, Rule


def _table() -> set[tuple[str, str, str]]:
    return {(row.scenario, row.id, row.kind) for row in table.rows()}


def _declared() -> set[tuple[str, str, str]]:
    rows = set()
    for s in SCENARIOS.values():
        rows |= {(s.name, fact, "fact") for fact in s.facts}
        rows |= {(s.name, info, "info") for info in s.info}
        for c in s.checks:
            if c.table_row == "sweep":
                rows.add((s.name, "sweep", "sweep"))
            elif c.table_row is not None:
                rows.add((s.name, c.table_row, "control" if c.inside_control else "attempt"))
    return rows


def test_every_table_row_is_declared_by_a_scenario_and_back() -> None:
    """Each row of checks.def is a fact, check or info line some scenario
    declares, with the same kind; and each declared one has its row."""
    in_table, declared = _table(), _declared()
    assert in_table - declared == set(), "rows in checks.def that no scenario declares"
    assert declared - in_table == set(), "declared checks that checks.def does not run"


def test_the_sweep_reports_exactly_the_declared_sweep_checks() -> None:
    """The sweep row prints many lines: their ids (declared in sweep.def: its port lists
    and named attempts) are exactly the checks declared as the sweep's."""
    declared = {c.id for s in SCENARIOS.values() for c in s.checks if c.table_row == "sweep"}
    assert table.sweep_ids() == declared


def test_sweep_def_is_read_whole() -> None:
    """sweep.def's port lists give an id per family and port (0: the high port), and a
    line the parser cannot read is an error, not a skipped attempt."""
    text = 'SWEEP_TCP_PORTS(22, 0) /* a comment */\nSWEEP(URING4, "uring4")\n'
    assert table.sweep_ids(text) == {"tcp4-22", "tcp6-22", "tcp4-high", "tcp6-high", "uring4"}
    with pytest.raises(ValueError, match=r"sweep\.def:3"):
        table.sweep_ids(text + 'SWEEP(URING4 "uring4")\n')


def test_the_table_is_read_whole_and_in_order() -> None:
    """Every row is read, in file order (the order the probe runs and prints them),
    and a line the parser cannot read is an error, not a skipped check."""
    rows = table.rows()
    assert [r.id for r in rows[:2]] == ["landlock_abi", "landlock_enforces"]
    assert len({(r.scenario, r.id) for r in rows}) == len(rows)
    assert {r.kind for r in rows} == set(table.KINDS)
    text = 'CHECK("egress-confinement", "tcp-raw-ip", chk_tcp_raw_ip, ATTEMPT) /* a comment */\n'
    assert table.rows(text) == [
        table.Row("egress-confinement", "tcp-raw-ip", "chk_tcp_raw_ip", "attempt")
    ]
    with pytest.raises(ValueError, match=r"checks\.def:2"):
        table.rows(text + 'CHECK("egress-confinement", "tcp-raw-ip", chk_tcp_raw_ip, ATEMPT)\n')


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
        {
            "inspected": "yes",
            "created": "no",
            "rename_source": "yes",
            "before:outside/sentinel": "81a4 32 0 0 2 1 1 1",
        }
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
