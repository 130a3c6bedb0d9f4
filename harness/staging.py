"""Prepare a host once per run: find its work folder, learn its kernel, stage the
probe by content hash, and ask each runtime whether it is installed.

Every remote command is a fixed script plus positional arguments: values are
never spliced into shell text.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field

import anyio

from harness.errors import CommandError
from harness.probe import BuiltProbe
from harness.runtimes import Runtime
from harness.transport import Transport

SETUP_TIMEOUT = 60.0

# $1: workdir as configured (may be empty or relative to $HOME); $2: probe sha256.
FACTS_SCRIPT = r"""set -eu
cd "$HOME" 2>/dev/null || cd /
wd=${1:-.cache/harness}
mkdir -p "$wd/probe" "$wd/cells" "$wd/empty"
cd "$wd"
pwd -P
uname -r
uname -m
if [ -f "probe/$2" ]; then sha256sum "probe/$2" | cut -d' ' -f1; else echo missing; fi
"""

# $1: uploaded temp file; $2: expected sha256; $3: final path.
VERIFY_SCRIPT = r"""set -eu
got=$(sha256sum "$1" | cut -d' ' -f1)
if [ "$got" != "$2" ]; then rm -f "$1"; echo "sha256 mismatch: got $got" >&2; exit 1; fi
chmod 0755 "$1"
mv -f "$1" "$3"
"""

# $1: binary; the rest (optional): a version command to run.
RUNTIME_SCRIPT = r"""bin=$1; shift
command -v "$bin" >/dev/null 2>&1 || { echo "$bin: not found on this host" >&2; exit 127; }
if [ $# -gt 0 ]; then
  out=$("$@" 2>&1); status=$?
  printf '%s\n' "$out" | head -c 2000
  echo; echo "harness-version-status=$status"
fi
exit 0
"""


@dataclass(frozen=True, slots=True)
class RuntimeStatus:
    """Whether a runtime can run on a host, and which version it is."""

    available: bool
    version: str | None = None
    reason: str | None = None
    fingerprint: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class HostState:
    """What the runner learned about a host while preparing it."""

    workdir: str
    kernel_release: str
    machine: str
    probe_path: str
    probe_uploaded: bool
    runtimes: dict[str, RuntimeStatus] = field(default_factory=dict)

    def manifest(self) -> dict[str, object]:
        return {
            "workdir": self.workdir,
            "kernel_release": self.kernel_release,
            "machine": self.machine,
            "probe_path": self.probe_path,
            "probe_uploaded": self.probe_uploaded,
            "runtimes": {
                name: {
                    "available": s.available,
                    "version": s.version,
                    "reason": s.reason,
                    **({"fingerprint": s.fingerprint} if s.fingerprint else {}),
                }
                for name, s in self.runtimes.items()
            },
        }


async def _must(transport: Transport, argv: tuple[str, ...], *, stdin: bytes | None = None) -> str:
    done = await transport.run(argv, stdin=stdin, timeout=SETUP_TIMEOUT)
    if not done.ok:
        stderr = done.stderr if not done.timed_out else f"timed out after {SETUP_TIMEOUT:g}s"
        raise CommandError(
            transport.host, argv=argv[:3], exit_status=done.exit_status, stderr=stderr
        )
    return done.stdout


async def stage_probe(transport: Transport, probe: BuiltProbe, *, workdir: str | None) -> HostState:
    """Learn the host's basics and make sure the probe is there, verified by sha256."""
    out = await _must(
        transport, ("sh", "-c", FACTS_SCRIPT, "harness-setup", workdir or "", probe.sha256)
    )
    lines = out.splitlines()
    if len(lines) < 4:
        raise CommandError(transport.host, argv=("sh", "-c", "setup"), exit_status=0, stderr=out)
    wd, kernel, machine, present = lines[0], lines[1], lines[2], lines[3].strip()
    final = f"{wd}/probe/{probe.sha256}"
    uploaded = False
    if present != probe.sha256:
        tmp = f"{wd}/probe/.{probe.sha256[:16]}.{secrets.token_hex(4)}"
        await transport.put_file(probe.path, tmp, mode=0o755)
        await _must(
            transport, ("sh", "-c", VERIFY_SCRIPT, "harness-verify", tmp, probe.sha256, final)
        )
        uploaded = True
    return HostState(
        workdir=wd,
        kernel_release=kernel,
        machine=machine,
        probe_path=final,
        probe_uploaded=uploaded,
    )


async def check_runtime(transport: Transport, runtime: Runtime) -> RuntimeStatus:
    """Is the runtime's binary on this host, and what version does it report?"""
    argv = (
        "sh",
        "-c",
        RUNTIME_SCRIPT,
        "harness-runtime",
        runtime.binary,
        *(runtime.version_argv() or ()),
    )
    done = await transport.run(argv, timeout=SETUP_TIMEOUT)
    if done.exit_status == 127:
        return RuntimeStatus(available=False, reason=f"{runtime.binary}: not found on this host")
    if not done.ok:
        why = "timed out" if done.timed_out else (done.stderr.strip() or f"exit {done.exit_status}")
        return RuntimeStatus(available=False, reason=f"{runtime.binary}: {why}")
    marker = "harness-version-status="
    lines = done.stdout.splitlines()
    status = next((ln[len(marker) :] for ln in lines if ln.startswith(marker)), "0")
    output = "\n".join(ln for ln in lines if not ln.startswith(marker))
    if status != "0" and runtime.version_required:
        shown = " ".join(output.split())[:200] or "no output"
        why = f"{runtime.binary}: its version command exited {status}: {shown}"
        return RuntimeStatus(available=False, reason=why)
    seen = runtime.identify(output)
    if seen.unavailable:
        return RuntimeStatus(available=False, reason=seen.unavailable, fingerprint=seen.fingerprint)
    return RuntimeStatus(available=True, version=seen.version, fingerprint=seen.fingerprint)


async def check_runtimes(transport: Transport, runtimes: list[Runtime]) -> dict[str, RuntimeStatus]:
    results: dict[str, RuntimeStatus] = {}

    async def one(rt: Runtime) -> None:
        results[rt.name] = await check_runtime(transport, rt)

    async with anyio.create_task_group() as tg:
        for rt in runtimes:
            tg.start_soon(one, rt)
    return {rt.name: results[rt.name] for rt in runtimes}
