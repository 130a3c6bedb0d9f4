"""Privilege helpers: copies of the probe that are setuid-root, setgid-root, that
carry a file capability, and that carry every capability as inheritable (`inh`),
staged once per host on a mount without nosuid. The probe's
`whoami` mode reports what the kernel granted when they are executed. Beside them,
`other`: the probe with bytes appended, a program a network policy does not name
(its `connect` mode makes the connection).

Concurrent runs on one host share the staged helpers, so a staged helper is never
modified: the folder is built complete in a temporary folder (copy, owner, mode,
capability, then a `.ready` file saying what worked) and renamed into place. A run
that loses the race uses the winner's folder; no run ever sees a half-made helper
or one whose setuid bit a `chown` has just cleared. The one thing added later is the
host's list of its folders (`hostfs.list_folders`), a file of its own, replaced
whole by a rename.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from harness.errors import CommandError
from harness.hostside.base import CellSetup, Fixture, HostSetup
from harness.hostside.scripts import script
from harness.transport import Transport

TIMEOUT = 30.0

# Stage the helpers once per host, atomically (the header of the file says how).
SETUP = script("helpers-setup.sh")


@dataclass(frozen=True, slots=True)
class Helpers:
    """Where the helpers are on the host, and which could be made."""

    folder: str
    setuid_ok: bool
    fcap_ok: bool
    setgid_ok: bool = False
    other_sha256: str = ""  # the content of `other`, for attribution
    inh_ok: bool = False

    def probe_args(self, *, inside: str) -> list[str]:
        return [
            "--setuid-helper", f"{inside}/setuid",
            "--fcap-helper", f"{inside}/fcap",
            "--setgid-helper", f"{inside}/setgid",
            "--inh-helper", f"{inside}/inh",
            "--other-binary", f"{inside}/other",
        ]  # fmt: skip


async def stage_helpers(
    transport: Transport, *, probe: str, probe_sha: str, top: str = ""
) -> Helpers:
    """Stage both helpers once per host (atomically; see the module docstring); the
    host control shows whether they work. `top` overrides the shared folder."""
    argv = ["sh", "-c", SETUP, "harness-helpers", probe, probe_sha[:16], top]
    done = await transport.run(argv, timeout=TIMEOUT)
    if not done.ok:
        raise CommandError(
            transport.host, argv=argv, exit_status=done.exit_status, stderr=done.stderr
        )
    seen = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
    return Helpers(
        folder=seen.get("dir", ""),
        setuid_ok=seen.get("setuid") == "ok",
        fcap_ok=seen.get("fcap") == "ok",
        setgid_ok=seen.get("setgid") == "ok",
        other_sha256=seen.get("other_sha256", ""),
        inh_ok=seen.get("inh") == "ok",
    )


class HelpersFixture(Fixture):
    """The helpers, staged once per host and granted to every cell read-only."""

    def __init__(self) -> None:
        self.helpers: Helpers | None = None

    async def start(self, host: HostSetup) -> None:
        self.helpers = await stage_helpers(
            host.transport, probe=host.state.probe_path, probe_sha=host.state.probe_sha256
        )

    def manifest(self) -> dict[str, object]:
        h = self.helpers
        if h is None:
            return {}
        return {
            "helpers": {
                "folder": h.folder,
                "setuid": h.setuid_ok,
                "setgid": h.setgid_ok,
                "fcap": h.fcap_ok,
                "inh": h.inh_ok,
            }
        }

    def prepare(self, cell: CellSetup) -> None:
        if self.helpers is not None:
            cell.paths = replace(cell.paths, helpers=self.helpers.folder)

    def probe_args(self, cell: CellSetup) -> Sequence[str]:
        if self.helpers is None:
            return ()
        inside = cell.runtime.inside(self.helpers.folder, role="helpers", cell_id=cell.cell_id)
        return self.helpers.probe_args(inside=inside)
