"""Put a candidate runsc on the host, by content hash, as staging does for the probe.

The binary lands at `<workdir>/runsc-bin/<sha256>/runsc`: uploaded only when
missing, verified with sha256 on the host before it is moved into place, so a
half-copied or tampered file is never run. Every remote command is a fixed
script with positional arguments.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from harness.bisect.artifacts import Candidate
from harness.errors import CommandError, UsageError
from harness.transport import Transport

SETUP_TIMEOUT = 60.0
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

# $1: final path. Prints its sha256, or "missing".
PRESENT_SCRIPT = r"""if [ -f "$1" ]; then sha256sum "$1" | cut -d' ' -f1; else echo missing; fi"""

# $1: uploaded temp file; $2: expected sha256; $3: final path.
VERIFY_SCRIPT = r"""set -eu
got=$(sha256sum "$1" | cut -d' ' -f1)
if [ "$got" != "$2" ]; then rm -f "$1"; echo "sha256 mismatch: got $got" >&2; exit 1; fi
chmod 0755 "$1"
mkdir -p "$(dirname "$3")"
mv -f "$1" "$3"
"""


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


async def _must(transport: Transport, argv: tuple[str, ...]) -> str:
    done = await transport.run(argv, timeout=SETUP_TIMEOUT)
    if not done.ok:
        stderr = done.stderr if not done.timed_out else f"timed out after {SETUP_TIMEOUT:g}s"
        raise CommandError(
            transport.host, argv=argv[:3], exit_status=done.exit_status, stderr=stderr
        )
    return done.stdout


async def prepare_host(transport: Transport, *, workdir: str | None) -> HostInfo:
    """The host's work folder and machine; refuses machines gVisor does not build for."""
    out = await _must(transport, ("sh", "-c", PREPARE_SCRIPT, "harness-bisect", workdir or ""))
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
    present = await _must(transport, ("sh", "-c", PRESENT_SCRIPT, "harness-present", final))
    uploaded = present.strip() != candidate.sha256
    if uploaded:
        tmp = f"{host.workdir}/{FOLDER}/.{candidate.sha256[:16]}.{secrets.token_hex(4)}"
        await transport.put_file(candidate.runsc, tmp, mode=0o755)
        await _must(
            transport, ("sh", "-c", VERIFY_SCRIPT, "harness-verify", tmp, candidate.sha256, final)
        )
    done = await transport.run((final, "--version"), timeout=SETUP_TIMEOUT)
    if not done.ok:
        stderr = done.stderr if not done.timed_out else f"timed out after {SETUP_TIMEOUT:g}s"
        raise CommandError(
            transport.host, argv=("runsc --version",), exit_status=done.exit_status, stderr=stderr
        )
    version = " ".join(done.stdout.split())[:300]
    return Installed(path=final, uploaded=uploaded, version=version)
