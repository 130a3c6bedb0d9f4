"""Fetch an egress supervisor's decision records, for attribution.

A bearer token is read from the environment at fetch time and goes only into
the request header: never into results, logs or error text.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import anyio

from harness.errors import TransportError
from harness.hostside.base import CellSetup, Fixture, HostSetup
from harness.hostside.canary import allowed_destination
from harness.judge.attribution import find_records
from harness.matrix.models import AttributionSource
from harness.scenarios.attribution import ALLOWED_CONNECT, TWO_BINARIES, TWO_BINARIES_CONNECTIONS
from harness.text import redact_url
from harness.transport import Transport

if TYPE_CHECKING:
    from harness.hostside.canary import CanaryFixture
    from harness.hostside.envelope import Report
    from harness.hostside.helpers import HelpersFixture
    from harness.hostside.supervisor import SupervisorFixture
    from harness.probe.protocol import ProbeOutput

TIMEOUT = 15.0


def parse_records(text: str) -> list[dict[str, Any]]:
    """A JSON array of objects, or JSON lines; anything else yields no records."""
    text = text.strip()
    if not text:
        return []
    if text.startswith("["):
        data = json.loads(text)
        return [r for r in data if isinstance(r, dict)] if isinstance(data, list) else []
    records = []
    for line in text.splitlines():
        line = line.strip()
        if line:
            obj = json.loads(line)
            if isinstance(obj, dict):
                records.append(obj)
    return records


async def fetch_records(
    source: AttributionSource, transport: Transport
) -> tuple[list[dict[str, Any]] | None, str | None]:
    """(records, None) or (None, why they could not be read)."""
    import httpx  # here, not at the top: most runs never fetch over HTTP

    try:
        if source.source == "http":
            headers = {}
            if source.token_env:
                token = os.environ.get(source.token_env)
                if not token:
                    return None, f"environment variable {source.token_env} is not set"
                headers["Authorization"] = f"Bearer {token}"
            shown = redact_url(str(source.url))  # never the URL's password or key=
            async with httpx.AsyncClient(timeout=TIMEOUT) as client:
                response = await client.get(str(source.url), headers=headers)
            if response.status_code != 200:
                return None, f"GET {shown}: HTTP {response.status_code}"
            return parse_records(response.text), None
        done = await transport.run(["cat", "--", str(source.path)], timeout=TIMEOUT)
        if not done.ok:
            return None, f"cannot read {source.path}: {done.stderr.strip()[-200:]}"
        return parse_records(done.stdout), None
    except httpx.HTTPError as exc:
        return None, f"GET {redact_url(str(source.url))}: {type(exc).__name__}"
    except (json.JSONDecodeError, ValueError) as exc:
        return None, f"decision records are not JSON: {exc}"


class DecisionsFixture(Fixture):
    """The allowed connection each cell makes, and the decision records about it.

    The allowed destination is the runtime entry's, else the canary's allowed port;
    the records come from the runtime's attribution source, or from the reference
    supervisor standing in front of it."""

    def __init__(
        self,
        canary: CanaryFixture | None,
        supervisors: SupervisorFixture | None,
        helpers: HelpersFixture | None = None,
    ) -> None:
        self.canary = canary
        self.supervisors = supervisors
        self.helpers = helpers
        self.host: HostSetup | None = None

    async def start(self, host: HostSetup) -> None:
        self.host = host

    def probe_args(self, cell: CellSetup) -> Sequence[str]:
        allowed = allowed_destination(cell, self.canary)
        if not allowed or self.host is None:
            return ()
        return ["--allowed-tcp", allowed, "--nonce", self.host.nonce]

    async def collect(self, cell: CellSetup, report: Report | None, output: ProbeOutput) -> None:
        source = cell.runtime.spec.attribution
        guard = self.supervisors.running.get(cell.cell.runtime.name) if self.supervisors else None
        if guard is not None:
            source = guard.source()
        if source is None or self.host is None:
            return
        # The binary a record must name: the probe made the connection.
        cell.evidence["probe_sha256"] = self.host.state.probe_sha256
        staged = self.helpers.helpers if self.helpers is not None else None
        if staged is not None and staged.other_sha256:
            cell.evidence["other_sha256"] = staged.other_sha256
        with anyio.CancelScope(shield=True):
            try:
                records, error = await fetch_records(source, self.host.transport)
            except TransportError as exc:
                cell.evidence["evidence_error"] = exc.reason
                return
        if records is None:
            cell.evidence["decisions_error"] = error
            return
        cell.evidence["decisions"] = [
            r for port, dst in connections(output) for r in find_records(records, port, dst)
        ]


def connections(output: ProbeOutput) -> list[tuple[int, str | None]]:
    """(source port, destination) of every connection the records are asked about:
    the allowed connection, then each of the two binaries' connections."""
    found = []
    for check in output.checks:
        if check.id == ALLOWED_CONNECT:
            keys = ["src_port"]
        elif check.id == TWO_BINARIES:
            keys = [key for key, _who in TWO_BINARIES_CONNECTIONS]
        else:
            continue
        dst = check.evidence.get("dst")
        found += [
            (int(check.evidence[k]), str(dst) if dst else None)
            for k in keys
            if check.evidence.get(k) is not None
        ]
    return found
