"""Prepare a host once per run: find its work folder, learn its kernel, stage the
probe by content hash, and ask each runtime whether it is installed.

Every remote command is a fixed script plus positional arguments: values are
never spliced into shell text.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from harness.errors import CommandError, TransportError
from harness.probe import BuiltProbe, Probes
from harness.runtimes import Runtime
from harness.text import shorten
from harness.transport import Completed, Transport

SETUP_TIMEOUT = 60.0
HOST_WORD_LIMIT = 200  # a kernel release or machine name, as a host reports it

# facts WORKDIR SHA: WORKDIR as configured (may be empty or relative to $HOME),
# SHA the probe's sha256. Prints the work folder; the kernel release and machine
# (one line: a release has no spaces); the staged probe's sha256 (or "missing");
# the machine id (or "unknown"), which tells two inventory entries on one machine.
# Each step fails explicitly: `set -e` would be ignored wherever the caller tests
# the function's status.
FACTS_FUNCTION = r"""facts() (
  cd "$HOME" 2>/dev/null || cd / || exit 1
  wd=${1:-.cache/harness}
  mkdir -p "$wd/probe" "$wd/cells" "$wd/empty" || exit 1
  cd "$wd" || exit 1
  pwd -P || exit 1
  uname -r -m || exit 1
  if [ -f "probe/$2" ]; then sha256sum "probe/$2" || exit 1; else echo missing; fi
  id=$(cat /etc/machine-id 2>/dev/null)
  echo "${id:-unknown}"
)
"""

# $1: uploaded temp file; $2: expected sha256; $3: final path.
VERIFY_SCRIPT = r"""set -eu
got=$(sha256sum "$1" | cut -d' ' -f1)
if [ "$got" != "$2" ]; then rm -f "$1"; echo "sha256 mismatch: got $got" >&2; exit 1; fi
chmod 0755 "$1"
mkdir -p "$(dirname "$3")"
mv -f "$1" "$3"
"""

# runtimes MARKER [N WORD...]...: every runtime of a host, checked at once. Per
# runtime, N and N words: its binary, then its version command (if any). Each
# result follows a line "MARKER K". A version command that hangs is stopped
# (exit 124, or 137 once killed) without holding up the others.
RUNTIMES_FUNCTION = r"""check() {
  bin=$1; shift
  command -v "$bin" >/dev/null 2>&1 || { echo "harness-runtime-missing"; return 0; }
  if [ $# -gt 0 ]; then
    out=$(timeout -k 5 45 "$@" 2>&1 </dev/null); status=$?
    printf '%s\n\n%s\n' "$out" "harness-version-status=$status"
  fi
}
runtimes() {
  marker=$1; shift
  tmp=$(mktemp -d) || return 1
  i=0
  while [ $# -gt 0 ]; do
    n=$1; shift
    refs=""; j=1
    while [ "$j" -le "$n" ]; do refs="$refs \"\${$j}\""; j=$((j + 1)); done
    eval "check $refs" > "$tmp/$i" 2>&1 &
    shift "$n"; i=$((i + 1))
  done
  wait
  k=0
  while [ "$k" -lt "$i" ]; do echo "$marker $k"; cat "$tmp/$k"; k=$((k + 1)); done
  rm -rf "$tmp"
}
"""

# A host's preparation in one round trip: its facts, then its runtimes.
# $1 workdir, $2 probe sha256, then the runtimes' arguments. Exits non-zero only if
# the facts could not be learned; a runtime without an answer is reported as such.
PREPARE_SCRIPT = (
    FACTS_FUNCTION
    + RUNTIMES_FUNCTION
    + r"""facts "$1" "$2" || exit
shift 2
[ $# -gt 1 ] && runtimes "$@"
exit 0
"""
)
TIMED_OUT = ("124", "137")  # coreutils timeout's status: TERM, then KILL


@dataclass(frozen=True, slots=True)
class RuntimeStatus:
    """Whether a runtime can run on a host, and which version it is."""

    available: bool
    version: str | None = None
    reason: str | None = None
    fingerprint: dict[str, str] = field(default_factory=dict)
    build: dict[str, str] | None = None  # a release build harness installed (manifest)


@dataclass(slots=True)
class HostState:
    """What the runner learned about a host while preparing it."""

    workdir: str
    kernel_release: str
    machine: str
    probe_path: str
    probe_uploaded: bool
    runtimes: dict[str, RuntimeStatus] = field(default_factory=dict)
    probe_sha256: str = ""
    arch: str = ""
    machine_id: str = "unknown"  # /etc/machine-id: one machine behind two entries?

    def place(self) -> tuple[str, str] | None:
        """Where this host's runs live, as (machine id, work folder): two inventory
        entries with the same place would share canaries, leases and cells."""
        return None if self.machine_id == "unknown" else (self.machine_id, self.workdir)

    def manifest(self) -> dict[str, object]:
        return {
            "workdir": self.workdir,
            "kernel_release": self.kernel_release,
            "machine": self.machine,
            "arch": self.arch,
            "probe_path": self.probe_path,
            "probe_sha256": self.probe_sha256,
            "probe_uploaded": self.probe_uploaded,
            "runtimes": {
                name: {
                    "available": s.available,
                    "version": s.version,
                    "reason": s.reason,
                    **({"fingerprint": s.fingerprint} if s.fingerprint else {}),
                    **({"build": s.build} if s.build else {}),
                }
                for name, s in self.runtimes.items()
            },
        }


def claim_place(places: dict[tuple[str, str], str], host: str, state: HostState) -> None:
    """Take the host's (machine id, work folder) for `host`, or refuse: two inventory
    entries on one machine with one work folder would tear down each other's canary
    and cells. The entry that came second is the one refused.

    Raises:
        TransportError: another entry already holds this machine and work folder.
    """
    place = state.place()
    if place is None:
        return
    other = places.setdefault(place, host)
    if other != host:
        raise TransportError(
            host,
            f"the same machine (machine id {place[0][:12]}) and work folder {place[1]} as"
            f" host {other!r}: give one of them its own `workdir` in the inventory",
        )


async def run_or_raise(
    transport: Transport, argv: tuple[str, ...], *, shown: tuple[str, ...] | None = None
) -> Completed:
    """Run a setup command that must succeed; a failure (named as `shown`, or by
    the argv's start) is the host's error."""
    done = await transport.run(argv, timeout=SETUP_TIMEOUT)
    if not done.ok:
        stderr = done.stderr if not done.timed_out else f"timed out after {SETUP_TIMEOUT:g}s"
        raise CommandError(
            transport.host, argv=shown or argv[:3], exit_status=done.exit_status, stderr=stderr
        )
    return done


async def upload_verified(
    transport: Transport, source: Path, *, sha256: str, folder: str, final: str
) -> None:
    """Stage a file by content hash: upload it under a temporary name in `folder`
    (which must exist), check its sha256 on the host, then move it to `final`, so
    a half-copied or tampered file is never run and a run using `final` never sees
    it change."""
    tmp = f"{folder}/.{sha256[:16]}.{secrets.token_hex(4)}"
    await transport.put_file(source, tmp, mode=0o755)
    await run_or_raise(transport, ("sh", "-c", VERIFY_SCRIPT, "harness-verify", tmp, sha256, final))


# $1: final path. Prints its sha256, or "missing".
PRESENT_SCRIPT = r"""if [ -f "$1" ]; then sha256sum "$1" | cut -d' ' -f1; else echo missing; fi"""


async def prepare_host(
    transport: Transport,
    probe: BuiltProbe | Probes,
    *,
    workdir: str | None,
    runtimes: list[Runtime],
) -> HostState:
    """Learn the host's basics and its runtimes' versions (one command), then make
    sure the probe for its architecture is there, verified by sha256.

    The first command checks for the controller's own build; a host of another
    architecture costs one more command, and its probe is built on first need.

    Raises:
        ProbeBuildError: no probe can be built for the host's machine.
    """
    probes = Probes.of(probe)
    guess = probes.first
    local, remote, marker, args = _runtime_request(runtimes)
    argv = ("sh", "-c", PREPARE_SCRIPT, "harness-setup", workdir or "", guess.sha256, *args)
    done = await run_or_raise(transport, argv)
    lines = done.stdout.splitlines()
    kernel_machine = lines[1].split() if len(lines) >= 4 else []
    if len(kernel_machine) != 2 or not lines[2].strip() or not lines[3].strip():
        raise CommandError(
            transport.host, argv=argv[:3], exit_status=0, stderr=done.stdout or done.stderr
        )
    wd, (kernel, machine), present = lines[0], kernel_machine, lines[2].split()[0]
    # A real release is at most 64 bytes (utsname): anything longer is kept short, not
    # copied whole into every record and report.
    kernel, machine = shorten(kernel, HOST_WORD_LIMIT), shorten(machine, HOST_WORD_LIMIT)
    chosen = guess
    if guess.arch and machine.lower() not in (guess.arch, *_spellings(guess.arch)):
        chosen = await anyio.to_thread.run_sync(probes.for_arch, machine)
        final = f"{wd}/probe/{chosen.sha256}"
        present = (
            await run_or_raise(transport, ("sh", "-c", PRESENT_SCRIPT, "harness-present", final))
        ).stdout.strip()
    final = f"{wd}/probe/{chosen.sha256}"
    uploaded = present != chosen.sha256
    if uploaded:
        await upload_verified(
            transport, chosen.path, sha256=chosen.sha256, folder=f"{wd}/probe", final=final
        )
    found = {**local, **_runtime_results(remote, marker, done, lines[4:])}
    return HostState(
        workdir=wd,
        kernel_release=kernel,
        machine=machine,
        probe_path=final,
        probe_uploaded=uploaded,
        runtimes={rt.name: found[rt.name] for rt in runtimes},
        probe_sha256=chosen.sha256,
        arch=chosen.arch,
        machine_id=lines[3].strip()[:64],
    )


def _spellings(arch: str) -> tuple[str, ...]:
    from harness.probe.build import ARCH_OF_MACHINE

    return tuple(m for m, a in ARCH_OF_MACHINE.items() if a == arch)


def _nothing_to_check(runtime: Runtime) -> bool:
    """The host runtime, or a template that runs the probe directly: `true` is
    wherever sh is, so there is nothing to look for on the host."""
    return runtime.binary == "true" and runtime.version_argv() is None


def _runtime_status(runtime: Runtime, text: str) -> RuntimeStatus:
    """One runtime's part of the host preparation's output (its version check)."""
    if text.startswith("harness-runtime-missing"):
        return RuntimeStatus(available=False, reason=f"{runtime.binary}: not found on this host")
    marker = "harness-version-status="
    lines = text.splitlines()
    status = next((ln[len(marker) :] for ln in lines if ln.startswith(marker)), "0")
    output = "\n".join(ln for ln in lines if not ln.startswith(marker))[:2000]
    if status in TIMED_OUT:
        return RuntimeStatus(available=False, reason=f"{runtime.binary}: timed out")
    if status != "0" and runtime.version_required:
        shown = " ".join(output.split())[:200] or "no output"
        why = f"{runtime.binary}: its version command exited {status}: {shown}"
        return RuntimeStatus(available=False, reason=why)
    seen = runtime.identify(output)
    if seen.unavailable:
        return RuntimeStatus(available=False, reason=seen.unavailable, fingerprint=seen.fingerprint)
    return RuntimeStatus(available=True, version=seen.version, fingerprint=seen.fingerprint)


def _runtime_request(
    runtimes: list[Runtime],
) -> tuple[dict[str, RuntimeStatus], list[Runtime], str, list[str]]:
    """What can be known without asking the host, and the arguments asking for the rest."""
    local: dict[str, RuntimeStatus] = {}
    remote: list[Runtime] = []
    for rt in runtimes:
        if _nothing_to_check(rt):
            seen = rt.identify("")
            local[rt.name] = RuntimeStatus(
                available=True, version=seen.version, fingerprint=seen.fingerprint
            )
        else:
            remote.append(rt)
    marker = f"harness-runtime-{secrets.token_hex(6)}"
    args: list[str] = []
    for words in _asked(remote):  # each command once: a matrix of mutants shares a few
        args += [str(len(words)), *words]
    return local, remote, marker, [marker, *args] if remote else []


def _asked(remote: list[Runtime]) -> list[tuple[str, ...]]:
    """The distinct version commands of `remote`, in first-asked order (346 runtimes of
    matrices/mutants.toml ask 26: one Python start each for 159 of them was over a
    minute under load, and the host's setup timed out)."""
    return list(dict.fromkeys(_words(rt) for rt in remote))


def _words(rt: Runtime) -> tuple[str, ...]:
    return (rt.binary, *(rt.version_argv() or ()))


def _runtime_results(
    remote: list[Runtime], marker: str, done: Completed, lines: list[str]
) -> dict[str, RuntimeStatus]:
    """Each asked runtime's status, from its part of the output."""
    parts: dict[int, list[str]] = {}
    current: list[str] | None = None
    for line in lines:
        head, _, index = line.partition(" ")
        if head == marker and index.isdigit():
            current = parts.setdefault(int(index), [])
        elif current is not None:
            current.append(line)
    results = {}
    index = {words: k for k, words in enumerate(_asked(remote))}
    for rt in remote:
        k = index[_words(rt)]
        if k in parts:
            results[rt.name] = _runtime_status(rt, "\n".join(parts[k]))
        else:
            why = done.stderr.strip() or "no answer"
            results[rt.name] = RuntimeStatus(available=False, reason=f"{rt.binary}: {why}")
    return results
