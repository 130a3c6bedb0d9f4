"""Put a candidate runsc on the host, by content hash, as staging does for the probe.

The binary lands at `<workdir>/runsc-bin/<sha256>/runsc`: uploaded only when
missing, verified with sha256 on the host before it is moved into place, so a
half-copied or tampered file is never run. Every remote command is a fixed
script with positional arguments.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.errors import CommandError, UsageError
from harness.releases.artifacts import Candidate
from harness.staging import run_or_raise, upload_verified
from harness.transport import Transport

FOLDER = "runsc-bin"
ARCH_OF_MACHINE = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}

# $1: workdir as configured (may be empty or relative to $HOME).
PREPARE_SCRIPT = r"""set -eu
cd "$HOME" 2>/dev/null || cd /
wd=${1:-.cache/harness}
mkdir -p "$wd/runsc-bin"
cd "$wd"
pwd -P
uname -m
"""

# $1: final path (<workdir>/runsc-bin/<sha256>/runsc). Prints its sha256, or
# "missing" after making sure runsc-bin exists for the upload.
PRESENT_SCRIPT = r"""if [ -f "$1" ]; then sha256sum "$1" | cut -d' ' -f1; exit; fi
mkdir -p "$(dirname "$(dirname "$1")")" && echo missing"""


@dataclass(frozen=True, slots=True)
class HostInfo:
    """Where candidates go on the host, and which builds it needs."""

    workdir: str
    machine: str
    arch: str


@dataclass(frozen=True, slots=True)
class Installed:
    """The candidate on the host: where, whether it had to be uploaded, and what
    it says its version is."""

    path: str
    uploaded: bool
    version: str


async def _stdout(transport: Transport, argv: tuple[str, ...]) -> str:
    return (await run_or_raise(transport, argv)).stdout


async def candidate_host(transport: Transport, *, workdir: str | None) -> HostInfo:
    """Where candidates go on the host (its work folder, `runsc-bin` made) and which
    builds it needs (its machine); refuses machines gVisor does not build for.

    Not `staging.prepare_host`: a bisection stages candidate runsc builds, not the
    probe, and learns the host's runtimes through the runs it starts."""
    out = await _stdout(transport, ("sh", "-c", PREPARE_SCRIPT, "harness-bisect", workdir or ""))
    lines = out.splitlines()
    if len(lines) < 2:
        raise CommandError(transport.host, argv=("sh", "-c", "prepare"), exit_status=0, stderr=out)
    wd, machine = lines[0], lines[1].strip()
    arch = ARCH_OF_MACHINE.get(machine)
    if arch is None:
        known = ", ".join(sorted(set(ARCH_OF_MACHINE.values())))
        raise UsageError(f"--host {transport.host}: machine {machine!r} (gVisor builds: {known})")
    return HostInfo(workdir=wd, machine=machine, arch=arch)


async def install(transport: Transport, candidate: Candidate, *, host: HostInfo) -> Installed:
    """Make sure the candidate is on the host, verified, and starts at all.

    Raises:
        TransportError: the upload or the check failed; `CommandError` when the
            candidate cannot even print its version (a build that does not run).
    """
    final = f"{host.workdir}/{FOLDER}/{candidate.sha256}/runsc"
    present = await _stdout(transport, ("sh", "-c", PRESENT_SCRIPT, "harness-present", final))
    uploaded = present.strip() != candidate.sha256
    if uploaded:
        await upload_verified(
            transport,
            candidate.runsc,
            sha256=candidate.sha256,
            folder=f"{host.workdir}/{FOLDER}",
            final=final,
        )
    done = await run_or_raise(transport, (final, "--version"), shown=("runsc --version",))
    version = " ".join(done.stdout.split())[:300]
    return Installed(path=final, uploaded=uploaded, version=version)
