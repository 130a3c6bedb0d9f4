"""Reading the canary's log: the arrivals it saw (`parse_events`), the IPC objects it
could not make, and whether an attempt may still be on its way to it (`unsettled`),
which the settle window waits out.

The log is read inside the cell's envelope (`LOG_FUNCTION`, shared with
`scripts/envelope.sh`), or in a command of its own when that was cut short.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import anyio

from harness.errors import TransportError
from harness.hostside.canary_setup import ALIVE, TIMEOUT, RunningCanary
from harness.hostside.scripts import script
from harness.transport import Transport

if TYPE_CHECKING:
    from harness.probe.protocol import ProbeOutput

# canary_log PID LOG: the log, but only from a canary that is still alive.
LOG_FUNCTION = ALIVE + script("canary-log.sh")
READ_LOG = LOG_FUNCTION + 'canary_log "$1" "$2"\n'


ARRIVALS = ("tcp", "dns", "udp", "packet", "unix", "ipc")


def unbound_ipc(text: str) -> dict[str, str]:
    """The IPC objects the canary logged it could not make, by the sweep check that
    aims at each, with the error: why that check's control cannot escape."""
    found = {}
    for line in text.splitlines():
        if '"unbound"' not in line:
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            continue
        proto = obj.get("proto") if isinstance(obj, dict) else None
        if obj.get("event") == "unbound" and proto in ("sysv-msg", "sysv-shm", "posix-mq"):
            found[f"ipc-{proto}"] = str(obj.get("error") or "")[:200]
    return found


def parse_events(text: str) -> list[dict[str, Any]]:
    """The arrivals (tcp, dns, udp, unix, ipc and captured packet events) in the
    canary's log."""
    events = []
    for line in text.splitlines():
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict) and obj.get("event") in ARRIVALS:
            events.append(obj)
    return events


async def canary_events(transport: Transport, canary: RunningCanary) -> list[dict[str, Any]] | None:
    """Everything the canary logged so far, asked in a command of its own; None if
    it died or its log cannot be read."""
    argv = ["sh", "-c", READ_LOG, "harness-canary-log", canary.pid or "none", canary.log_path]
    done = await transport.run(argv, timeout=TIMEOUT)
    if not done.ok:
        return None
    return parse_events(done.stdout)


# Refusals made before a packet could leave: nothing of the attempt is in flight.
REFUSED_AT_ONCE = frozenset(
    {"ENETUNREACH", "EHOSTUNREACH", "ECONNREFUSED", "EPERM", "EACCES", "EAFNOSUPPORT"}
)


def unsettled(output: ProbeOutput, targets: frozenset[str]) -> bool:
    """Could an attempt at the canary (one of the `targets` scenarios') still be on
    its way? Yes unless every attempt escaped (proof already) or was refused
    outright: one that connected without the nonce, timed out waiting, or got an
    answer from something else may have gone through a proxy that delivers it late."""
    return any(
        c.scenario in targets
        and c.kind == "attempt"
        and c.outcome != "escaped"
        and not (c.outcome == "blocked" and c.errno in REFUSED_AT_ONCE)
        for c in output.checks
    )


async def read_canary(transport: Transport, canary: RunningCanary) -> dict[str, Any]:
    """Every arrival the canary logged so far (`canary_events`), or why there are
    none to trust (`canary_error`: dead canary, unreadable log): a gap the judge
    makes inconclusive."""
    try:
        events = await canary_events(transport, canary)
    except TransportError as exc:
        return {"canary_events": None, "canary_error": f"canary log unreadable: {exc.reason}"}
    if events is None:
        return {"canary_events": None, "canary_error": "canary dead or its log unreadable"}
    return {"canary_events": events}


async def settle_canary(
    transport: Transport, canary: RunningCanary, *, wait: float
) -> dict[str, Any]:
    """Read the canary's log again, `wait` seconds later, before an attempt that may
    be in flight (see `unsettled`) can count as blocked or intercepted: a proxy in
    the sandbox may still be carrying it to the canary."""
    with anyio.CancelScope(shield=True):
        await anyio.sleep(wait)
        found = await read_canary(transport, canary)
    return found
