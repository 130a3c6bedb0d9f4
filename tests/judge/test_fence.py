"""controller_loss_fails_closed from a cell in phases: the attempts after the
barrier decide, but only when the host acted there and the allowed connection
worked before it; without a supervisor harness runs, nothing is measured."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from harness.judge.fence import observe_phased
from harness.results import CellRecord, CellStatus
from harness.results.records import HostEvidence, Observed, ProbeCheck
from harness.scenarios.fence import CONTROLLER_LOSS, REVOCATION

TAG = "c0001"
DST = "10.251.0.2:8081"
KILLED = {"controller-loss": {"status": 0, "ms": 40, "said": "killed the supervisor session 9"}}


def _cell(
    held: str = "blocked",
    new: str = "blocked",
    *,
    before: str = "ok",
    phases: dict[str, Any] | None = None,
    events: list[dict[str, Any]] | None = None,
    status: CellStatus = CellStatus.COMPLETE,
) -> CellRecord:
    checks = [
        ProbeCheck("loss-held", "controller-loss", "attempt", held, evidence={"before": before}),
        ProbeCheck("loss-new", "controller-loss", "attempt", new, evidence={"dst": DST}),
    ]
    return CellRecord(
        run_id="t", host="h", runtime="r", kind="command", scenarios=["controller-loss"],
        status=status, reason=None if status is CellStatus.COMPLETE else "why", started="",
        ended="", elapsed=0.0, checks=checks,
        host_side=HostEvidence(
            tag=TAG, canary_events=[] if events is None else events,
            phases=KILLED if phases is None else phases,
        ),
    )  # fmt: skip


CONTROL = _cell("escaped", "escaped", phases={})


def _judge(record: CellRecord, *, supervised: bool = True) -> tuple[Observed, str]:
    found = observe_phased(CONTROLLER_LOSS, record, control=CONTROL, supervised=supervised)
    return found.observed, found.reason or ""


def test_both_attempts_failing_after_the_kill_is_enforced() -> None:
    observed, reason = _judge(_cell())
    assert observed is Observed.ENFORCED
    assert "loss-held, loss-new" in reason and "killed the supervisor session 9" in reason


@pytest.mark.parametrize(("held", "new"), [("escaped", "blocked"), ("blocked", "escaped")])
def test_either_attempt_getting_out_is_violated(held: str, new: str) -> None:
    observed, reason = _judge(_cell(held, new))
    assert observed is Observed.VIOLATED and "escaped" in reason


def test_an_arrival_at_the_canary_is_violated_whatever_the_probe_said() -> None:
    line = {"event": "tcp", "peer": "10.251.0.1:5", "line": f"HARNESS {TAG} loss-held"}
    observed, reason = _judge(_cell(events=[line]))
    assert observed is Observed.VIOLATED and reason.startswith("loss-held escaped: canary saw")


@pytest.mark.parametrize(
    ("phases", "why"),
    [
        ({}, "the host never acted at barrier controller-loss"),
        (
            {"controller-loss": {"status": 1, "ms": 2, "said": "supervisor 9 was not running"}},
            "failed: supervisor 9 was not running",
        ),
        ({"controller-loss": {"status": 0, "ms": 1, "said": "nothing to act on"}}, "failed"),
    ],
)
def test_a_barrier_the_host_did_not_act_at_proves_nothing(phases: dict[str, Any], why: str) -> None:
    for held, new in (("blocked", "blocked"), ("blocked", "escaped")):
        observed, reason = _judge(_cell(held, new, phases=phases))
        assert observed is Observed.INCONCLUSIVE and why in reason


def test_a_connection_that_never_worked_has_nothing_to_lose() -> None:
    observed, reason = _judge(_cell(before="Connection refused"))
    assert observed is Observed.INCONCLUSIVE
    assert "did not work before the barrier (Connection refused)" in reason


def test_a_barrier_never_released_is_a_timeout_never_a_pass() -> None:
    observed, reason = _judge(_cell("timeout", "error"))
    assert observed is Observed.INCONCLUSIVE and reason.startswith("loss-held: timeout")


def test_an_incomplete_cell_is_inconclusive() -> None:
    observed, _ = _judge(_cell(status=CellStatus.TIMEOUT))
    assert observed is Observed.INCONCLUSIVE


def test_a_control_that_did_not_escape_is_inconclusive() -> None:
    dead = _cell("blocked", "blocked", phases={})
    found = observe_phased(CONTROLLER_LOSS, _cell(), control=dead, supervised=True)
    assert found.observed is Observed.INCONCLUSIVE and "control did not escape" in str(found.reason)


def test_without_a_supervisor_nothing_is_measured() -> None:
    observed, reason = _judge(_cell("escaped", "escaped"), supervised=False)
    assert observed is Observed.SKIPPED and "no controller to lose" in reason


def test_a_leak_after_the_kill_is_violated_even_if_the_connection_failed_before() -> None:
    observed, _ = _judge(_cell("escaped", "blocked", before="Connection refused"))
    assert observed is Observed.VIOLATED


def test_an_incomplete_cell_says_why_before_anything_else() -> None:
    observed, reason = _judge(_cell(status=CellStatus.TIMEOUT, phases={}))
    assert observed is Observed.INCONCLUSIVE and reason.startswith("cell timeout")


def test_the_barrier_proves_the_folder_shared_without_the_filesystem_scenario() -> None:
    """The filesystem scenario's proof that the allowed folder is the host's is not
    needed: the host saw the barrier there."""
    record = _cell()
    side = HostEvidence(
        tag=TAG, canary_events=[], phases=KILLED,
        fs={"allowed_shared": True, "allowed_visible": False},
    )  # fmt: skip
    observed, _ = _judge(replace(record, host_side=side))
    assert observed is Observed.ENFORCED


SUPERVISED = """
name = "fence"
inventory = "hosts.toml"
scenarios = ["controller-loss"]

[runtimes.host]
kind = "host"

[runtimes.plain]
kind = "command"
argv = ["{probe}", "{args}"]

[runtimes.guarded]
kind = "command"
argv = ["{probe}", "{args}"]
supervisor = "reference"
"""


def test_a_cell_is_judged_on_the_guarantee_only_behind_harness_supervisor(
    tmp_path: Path,
) -> None:
    from harness.judge.cell import judge_cell
    from harness.matrix import load_matrix
    from harness.plan import make_plan

    (tmp_path / "hosts.toml").write_text('[hosts.lab]\ntransport = "local"\n')
    (tmp_path / "m.toml").write_text(SUPERVISED)
    cells = {c.runtime.name: c for c in make_plan(load_matrix(tmp_path / "m.toml")).cells}
    for name, observed in (("guarded", Observed.ENFORCED), ("plain", Observed.SKIPPED)):
        [verdict] = judge_cell(cells[name], _cell(), control=CONTROL)
        assert (verdict.property, verdict.observed) == ("controller_loss_fails_closed", observed)


REVOKED = {
    "revocation": {"status": 0, "ms": 30, "said": "policy reloaded: 0 rules; cut 1"},
    "revocation-restore": {"status": 0, "ms": 20, "said": "policy reloaded: 1 rules; cut 0"},
}


def _revoked(
    held: str = "blocked",
    new: str = "blocked",
    restored: str = "ok",
    *,
    phases: dict[str, Any] | None = None,
) -> CellRecord:
    checks = [
        ProbeCheck("revoke-held", "revocation", "attempt", held, evidence={"before": "ok"}),
        ProbeCheck("revoke-new", "revocation", "attempt", new, evidence={"dst": DST}),
        ProbeCheck("revoke-restored", "revocation", "control", restored),
    ]
    return replace(
        _cell(phases=REVOKED if phases is None else phases),
        scenarios=["revocation"],
        checks=checks,
    )


def test_revocation_is_judged_from_its_own_held_check_and_both_barriers() -> None:
    """revocation_verified: both attempts blocked after the revocation, the rule
    working again once restored, the host having acted at both barriers."""
    control = _revoked("escaped", "escaped", phases={})
    found = observe_phased(REVOCATION, _revoked(), control=control, supervised=True)
    assert found.observed is Observed.ENFORCED
    assert "revoke-held, revoke-new" in (found.reason or "") and "cut 1" in (found.reason or "")
    kept = observe_phased(REVOCATION, _revoked("escaped"), control=control, supervised=True)
    assert kept.observed is Observed.VIOLATED
    # Without the restore, nothing says the revocation (not a dead supervisor) did it.
    dead = observe_phased(
        REVOCATION, _revoked(restored="blocked"), control=control, supervised=True
    )
    assert dead.observed is Observed.INCONCLUSIVE
    half = {"revocation": REVOKED["revocation"]}
    lost = observe_phased(REVOCATION, _revoked(phases=half), control=control, supervised=True)
    assert lost.observed is Observed.INCONCLUSIVE
    assert "never acted at barrier revocation-restore" in (lost.reason or "")


def test_a_silent_revoke_command_is_said_to_act_by_its_time() -> None:
    """An external `revoke` command need print nothing: the reason gives its time."""
    control = _revoked("escaped", "escaped", phases={})
    silent = {p: {**done, "said": ""} for p, done in REVOKED.items()}
    found = observe_phased(REVOCATION, _revoked(phases=silent), control=control, supervised=True)
    assert found.observed is Observed.ENFORCED
    assert "revocation: done in 30 ms; revocation-restore: done in 20 ms" in (found.reason or "")


EXTERNAL = """
name = "fence"
inventory = "hosts.toml"
scenarios = ["controller-loss", "revocation"]

[runtimes.host]
kind = "host"

[runtimes.recorded]
kind = "command"
argv = ["{probe}", "{args}"]
attribution = { source = "file", path = "/var/log/d.jsonl" }

[runtimes.revocable]
kind = "command"
argv = ["{probe}", "{args}"]
attribution = { source = "file", path = "/var/log/d.jsonl", revoke = "a", restore = "b" }
"""


def test_an_external_supervisor_is_revocable_through_its_commands_and_never_killed(
    tmp_path: Path,
) -> None:
    """revocation_verified is measured behind an external supervisor with a revoke
    command, skipped behind one without; controller loss is never measured there."""
    from harness.judge.cell import judge_cell
    from harness.matrix import load_matrix
    from harness.plan import make_plan

    (tmp_path / "hosts.toml").write_text('[hosts.lab]\ntransport = "local"\n')
    (tmp_path / "m.toml").write_text(EXTERNAL)
    cells = {c.runtime.name: c for c in make_plan(load_matrix(tmp_path / "m.toml")).cells}
    record = _revoked()
    record = replace(
        record,
        scenarios=["controller-loss", "revocation"],
        checks=[*_cell().checks, *record.checks],
        host_side=replace(record.host_side, phases={**KILLED, **REVOKED}),
    )
    control = replace(
        record,
        checks=[
            replace(c, outcome="escaped" if c.kind == "attempt" else "ok") for c in record.checks
        ],
        host_side=replace(record.host_side, phases={}),
    )
    for name, revoked in (("revocable", Observed.ENFORCED), ("recorded", Observed.SKIPPED)):
        got = {v.property: v.observed for v in judge_cell(cells[name], record, control=control)}
        assert got == {
            "controller_loss_fails_closed": Observed.SKIPPED,
            "revocation_verified": revoked,
        }, name
