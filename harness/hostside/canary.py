"""The egress canary as a fixture: started once per host, its log read after every
cell and once more after the host's settle window, where the cells are judged.

Starting and stopping it is `canary_setup.py`'s job, reading its log
`canary_log.py`'s; which arrival is which attempt's is the judge's
(`judge/arrivals.py`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import anyio

from harness.hostside.base import CellSetup, Fixture, HostSetup
from harness.hostside.canary_log import (
    parse_events,
    read_canary,
    settle_canary,
    unbound_ipc,
    unsettled,
)
from harness.hostside.canary_setup import RunningCanary, canary_netns, start_canary, stop_canary
from harness.judge.arrivals import Log, of_cell, unexplained
from harness.results.records import CellRecord, HostEvidence

if TYPE_CHECKING:
    from harness.hostside.envelope import Report
    from harness.plan import Cell
    from harness.probe.protocol import ProbeOutput
    from harness.results.records import ProbeCheck

# How many unexplained arrivals a cell's record keeps.
UNEXPLAINED_KEPT = 5


def start_order(cell: Cell) -> tuple[bool, bool]:
    """The host's control first (every verdict waits for it), then the runtimes that
    boot a kernel of their own, the slowest to start: the host's settle window counts
    from its last sandbox's end, so the slowest cell should not also start last."""
    return (not cell.is_host_runtime, not cell.runtime.promises_own_kernel)


def allowed_destination(cell: CellSetup, canary: CanaryFixture | None) -> str | None:
    """Where the cell's allowed connections go (IP:PORT): the runtime's
    `attribution.allowed`, else the canary's allowed port. One answer for every
    fixture that names it, so that what a `revoke` command takes out is what the
    probe tries."""
    source = cell.runtime.spec.attribution
    if source is not None and source.allowed:
        return source.allowed
    running = canary.usable if canary is not None else None
    return running.endpoint(running.config.allowed_port) if running is not None else None


class CanaryFixture(Fixture):
    """The canary on one host: started once, its log read after every cell and
    once more after the host's settle window, where the cells are judged."""

    def __init__(self) -> None:
        self.host: HostSetup | None = None
        self.running: RunningCanary | None = None
        self.waiting = False  # cells wait for the host's settle window to be judged
        self.judged: list[tuple[str, list[ProbeCheck]]] = []  # (tag, checks) settled so far

    @property
    def usable(self) -> RunningCanary | None:
        return self.running if self.running is not None and self.running.error is None else None

    async def start(self, host: HostSetup) -> None:
        self.host = host
        self.running = await start_canary(
            host.transport,
            probe=host.state.probe_path,
            workdir=host.state.workdir,
            canary=host.canary,
            run_id=host.run_id,
            host_index=host.index,
            nonce=host.nonce,
            high_port=host.high_port,
            run_lease=host.lease,
        )
        self.waiting = bool(host.targets) and self.running.error is None

    def manifest(self) -> dict[str, object]:
        return {"canary": self.running.manifest()} if self.running else {}

    def prepare(self, cell: CellSetup) -> None:
        cell.canary = self.usable

    def probe_args(self, cell: CellSetup) -> Sequence[str]:
        running = self.usable
        return (
            running.probe_args() if running is not None and self.host and self.host.targets else ()
        )

    async def collect(self, cell: CellSetup, report: Report | None, output: ProbeOutput) -> None:
        host, running = self.host, self.usable
        if host is None or running is None:
            return
        if report is None:  # the envelope was cut short: ask in a command of its own
            with anyio.CancelScope(shield=True):
                found = await read_canary(host.transport, running)
        elif report.canary_alive is None:
            return  # the sandbox never started (no sentinels): nothing to read
        elif report.canary_alive:
            found = {"canary_events": parse_events(report.canary_log)}
        else:
            found = {"canary_events": None, "canary_error": "canary dead or its log unreadable"}
        if found["canary_events"] is not None:
            found["canary_has"] = running.abilities()
            found["canary_unbound"] = (report and unbound_ipc(report.canary_log)) or None
            # A cell run after the host's window (`--reruns`) is judged at once: it
            # waits a window of its own if an attempt may still be in flight.
            if not self.waiting and unsettled(output, host.targets):
                wait = host.canary.settle
                found.update(await settle_canary(host.transport, running, wait=wait))
        if found["canary_events"] is not None:
            events = found["canary_events"]
            found["canary_events"] = of_cell(events, cell.cell_id, output.checks)
            if not self.waiting:  # a rerun: the host's other cells are all known
                cells = [*self.judged, (cell.cell_id, output.checks)]
                found["canary_unexplained"] = self._unexplained(events, cells)
        cell.evidence.update({k: v for k, v in found.items() if v is not None})

    def _unexplained(
        self, events: list[dict[str, Any]], cells: list[tuple[str, list[ProbeCheck]]]
    ) -> list[dict[str, Any]]:
        """The first arrivals no cell's attempts explain (bounded: a reason shows one)."""
        addresses = self.running.addresses() if self.running is not None else []
        allowed = [self.host.canary.allowed_port] if self.host is not None else []
        return unexplained(events, cells, addresses, allowed)[:UNEXPLAINED_KEPT]

    def window(self) -> float | None:
        return self.host.canary.settle if self.waiting and self.host else None

    async def late(self, records: Sequence[CellRecord], *, since: float) -> list[HostEvidence]:
        """Read the log once more, the window after the host's last sandbox was seen
        over (`since`, time.monotonic): an arrival carrying a cell's tag, however
        late, makes that attempt an escape. The window counts from the sandbox's
        end, not from an attempt: a relay in the sandbox's way may hold what it
        caught until the sandbox is gone. Cells rerun after this wait a window of
        their own (`collect`)."""
        assert self.host is not None and self.running is not None
        settle = self.host.canary.settle
        await anyio.sleep(max(0.0, since + settle - time.monotonic()))
        self.waiting = False
        with anyio.CancelScope(shield=True):
            found = await read_canary(self.host.transport, self.running)
        settled = []
        self.judged = [(r.host_side.tag, r.checks) for r in records]
        stray = []
        if found["canary_events"] is not None:
            stray = self._unexplained(found["canary_events"], self.judged)
        log = Log(found["canary_events"] or [])  # read once for the host's cells
        for record in records:
            evidence = record.host_side
            if evidence.canary_events is not None:
                if found["canary_events"] is not None:
                    events = log.of_cell(evidence.tag, record.checks)
                    evidence = replace(
                        evidence, canary_events=events, settled=settle, canary_unexplained=stray
                    )
                else:
                    why = f"after the settle window: {found['canary_error']}"
                    evidence = replace(evidence, canary_events=None, canary_error=why)
            settled.append(evidence)
        return settled

    def namespace(self) -> str:
        host = self.host
        return canary_netns(host.run_id, host.index) if host and host.canary.mode == "netns" else ""

    async def stop(self) -> None:
        if self.host is not None and self.running is not None:
            await stop_canary(self.host.transport, self.running)
