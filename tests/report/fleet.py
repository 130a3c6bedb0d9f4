"""Two nights of a small fleet, written through the results store (no run needed):
three hosts, two runtimes, every property and a fact. In the second night node-2 is
dead (every cell unreachable), node-3 moved to another address, and runsc on node-1
regressed on egress_confinement: one change of the sandbox's among the lab's."""

from __future__ import annotations

from pathlib import Path

from harness.results import CellRecord, CellStatus, ResultsStore, Verdict, VerdictRecord

HOSTS = ("node-1", "node-2", "node-3")
RUNTIMES = ("host", "runsc")
PROPERTIES = ("egress_confinement", "filesystem_confinement", "privilege_floor", "attribution")
DEAD = "connection refused"
UNREACHABLE = f"cell unreachable: {DEAD}"


def _cell(host: str, runtime: str, *, dead: bool) -> CellRecord:
    return CellRecord(
        run_id="night", host=host, runtime=runtime, kind=runtime, scenarios=["mechanisms"],
        status=CellStatus.UNREACHABLE if dead else CellStatus.COMPLETE,
        reason=DEAD if dead else None, started="", ended="", elapsed=0.0,
    )  # fmt: skip


def _verdicts(host: str, runtime: str, *, dead: bool, regressed: bool) -> list[VerdictRecord]:
    expected = "violated" if runtime == "host" else "enforced"
    rows = []
    for prop in PROPERTIES:
        verdict, observed, reason = Verdict.PASS, expected, None
        if dead:
            verdict, observed, reason = Verdict.INCONCLUSIVE, "inconclusive", UNREACHABLE
        elif regressed and prop == "egress_confinement":
            verdict, observed, reason = Verdict.REGRESSION, "violated", "tcp-raw-ip escaped"
        rows.append(VerdictRecord(
            host=host, runtime=runtime, property=prop, expected=expected, observed=observed,
            verdict=verdict, reason=reason, display=observed,
        ))  # fmt: skip
    fact = VerdictRecord(
        host=host, runtime=runtime, fact="kernel_release", expected=None,
        observed=None if dead else "6.1", verdict=Verdict.INCONCLUSIVE if dead else Verdict.SKIPPED,
        reason=UNREACHABLE if dead else "no expectation: recorded only",
        display="unreachable" if dead else "6.1",
    )  # fmt: skip
    return [fact, *rows]  # as a run judges them: the mechanism facts first


def night(folder: Path, *, second: bool) -> Path:
    """The first night (all well) or the second (node-2 dead, node-3 moved, a regression)."""
    store = ResultsStore(folder)
    store.open()
    hosts: dict[str, dict[str, object]] = {}
    try:
        for i, host in enumerate(HOSTS):
            dead = second and host == "node-2"
            address = f"10.0.0.{i + 1}" if not (second and host == "node-3") else "10.0.9.3"
            entry: dict[str, object] = {"transport": "ssh", "address": address, "port": 22,
                                        "user": "root"}  # fmt: skip
            if dead:
                entry["error"] = DEAD
            else:
                entry.update(workdir="/var/tmp/harness", kernel_release="6.1")
            hosts[host] = entry
            for runtime in RUNTIMES:
                store.add_cell(_cell(host, runtime, dead=dead))
                regressed = second and host == "node-1" and runtime == "runsc"
                store.add_verdicts(_verdicts(host, runtime, dead=dead, regressed=regressed))
        store.write_manifest({
            "matrix": {"path": "fleet.toml", "sha256": "m"}, "name": "fleet",
            "run_id": "night-2" if second else "night-1", "hosts": hosts,
            "runtimes": {rt: {"kind": rt} for rt in RUNTIMES}, "exit_code": 1 if second else 0,
        })  # fmt: skip
    finally:
        store.close()
    return folder


def nights(root: Path) -> tuple[Path, Path]:
    return night(root / "night-1", second=False), night(root / "night-2", second=True)
