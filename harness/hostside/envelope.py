"""One command per cell: make the sentinels, run the sandbox, then report what the
host saw (the canary's log, the sentinels' state), all in one round trip.

Each step used to be a command of its own. Over SSH every command costs a session
on the host (sshd forks, a shell starts) and protocol work on the controller, so a
cell with the egress and filesystem scenarios took four round trips; now it takes
one. The report follows the sandbox's own output and is framed so that nothing the
sandbox prints can pass for it: the very last line, written after the sandbox has
exited, gives the sandbox's exit status and how many report lines precede it.

Layout of the command's stdout (sizes in bytes, as `${#var}` counts them under
LC_ALL=C, so the shell needs no helper process to measure them):

    <sandbox stdout>\n<marker> evidence\n<report, S bytes><marker> <status> <S>\n

The report's sections: `setup_error K\n<K bytes>\n` (the sentinels could not be
made, so the sandbox was not started); `canary ok K\n<K bytes of its log>\n`, or
`canary dead 0\n\n`; `phases K\n<K bytes>\n`, one line per phase the host acted
at (`NAME<TAB>STATUS<TAB>MS<TAB>what the hook said`); `fs\n` followed by
fs_inspect's `key=value` lines.

Phases (docs/probe-protocol.md): while the sandbox runs, a watcher waits for each
barrier file the probe makes in the allowed folder, runs that phase's host hook
(kill the supervisor, revoke a rule) and then releases the barrier. A barrier the
probe never reaches is never acted on; one the host never releases is the probe's
timeout.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass, replace

from harness.hostside.canary_log import LOG_FUNCTION
from harness.hostside.canary_setup import RunningCanary
from harness.hostside.filesystem import FUNCTIONS, ORIGINAL, Sentinels, parse_inspection
from harness.hostside.scripts import script
from harness.results.records import Phase
from harness.scenarios.base import NO_ACTION
from harness.transport import Completed

SETUP_FAILED = 87
PHASE_POLL = 0.01  # seconds between looks for a barrier file
# The share of the probe's per-check time limit a phase hook may take: the probe
# waits at the barrier within that limit, and needs the rest for its attempts after
# it. A hook still running then is killed (SIGTERM, SIGKILL a second later if it
# ignores that) and reported as timed out (status 124),
# so the barrier is released and the verdict says why, never "the host never acted".
HOOK_SHARE = 0.5

# phase_watch BARRIERS PHASES LIMIT: run each phase's hook at its barrier.
PHASE_FUNCTION = script("phase-watch.sh", PHASE_POLL=f"{PHASE_POLL:g}", NO_ACTION=NO_ACTION)

# The cell's one command: sentinels, the sandbox, the canary's log and the phases.
SCRIPT = FUNCTIONS + LOG_FUNCTION + PHASE_FUNCTION + script("envelope.sh")


@dataclass(frozen=True, slots=True)
class Report:
    """What the envelope saw on the host around the sandbox."""

    exit_status: int
    setup_error: str | None = None
    canary_alive: bool | None = None  # None: no canary was asked about
    canary_log: str = ""
    fs: dict[str, str] | None = None  # None: no sentinels were inspected
    # What the host did at each barrier, by phase name; None: the cell had no phases.
    phases: dict[str, Phase] | None = None

    @property
    def setup_reason(self) -> str:
        """Why the sandbox was not started: the sentinels could not be made."""
        return f"sentinels could not be made: {self.setup_error}"


@dataclass(frozen=True, slots=True)
class Envelope:
    """Wraps one cell's sandbox command and opens what comes back."""

    tag: str
    sentinels: Sentinels | None = None
    canary: RunningCanary | None = None
    marker: str = ""
    barrier_dir: str = ""  # the allowed folder on the host, where barriers appear
    phases: tuple[tuple[str, str], ...] = ()  # (name, host hook), in the probe's order
    # Seconds each hook may take (HOOK_SHARE of a check's limit); 0: no limit.
    hook_limit: float = 0.0
    # Whom the workload runs as by the cell's policy (run_as_user; "": it names no one):
    # the envelope starts a second witness of that uid (neither root nor 65534).
    user: str = ""
    # Whether the envelope looks for the uids the sandbox's processes run as on the host
    # (a cell of the privilege floor's), and starts a witness of each but root and 65534.
    watch: bool = False

    @classmethod
    def new(
        cls,
        tag: str,
        *,
        sentinels: Sentinels | None,
        canary: RunningCanary | None,
        phases: Sequence[tuple[str, str]] = (),
        check_timeout: float = 0.0,
        user: str = "",
        watch: bool = False,
    ) -> Envelope:
        usable = canary if canary is not None and canary.error is None else None
        marker = f"harness-envelope-{secrets.token_hex(8)}"
        if sentinels is None or not phases:
            return cls(tag, sentinels, usable, marker, user=user, watch=watch)
        limit = max(0.1, round(check_timeout * HOOK_SHARE, 1))
        allowed = sentinels.allowed
        return cls(tag, sentinels, usable, marker, allowed, tuple(phases), limit, user, watch)

    def wrap(self, argv: Sequence[str]) -> tuple[str, ...]:
        """The one command the cell runs: every value is a positional argument."""
        fs, canary = self.sentinels, self.canary
        return (
            "sh", "-c", SCRIPT, "harness-cell", self.marker,
            fs.root if fs else "", fs.token if fs else "", ORIGINAL if fs else "", self.tag,
            (canary.pid or "none") if canary else "", canary.log_path if canary else "",
            "\n".join(fs.skip) if fs else "",
            self.barrier_dir, "\n".join(f"{name}\t{hook}" for name, hook in self.phases),
            fs.probe if fs else "",
            fs.granted_host if fs else "", fs.granted_token if fs else "",
            f"{self.hook_limit:g}", self.user, "1" if self.watch else "",
            *argv,
        )  # fmt: skip

    def open(self, done: Completed) -> tuple[Completed, Report | None]:
        """Split the command's output into the sandbox's and the report. Without an
        intact trailer (the command was cut short) there is no report, and the
        output is left whole; an intact frame whose body does not read is no report
        either, and the frame is taken off all the same."""
        raw = done.stdout.encode()  # the bytes the sizes count, for a valid report
        if not raw.endswith(b"\n"):
            return done, None
        cut = raw.rfind(b"\n", 0, len(raw) - 1)
        parts = raw[cut + 1 : -1].split(b" ")
        if len(parts) != 3 or parts[0] != self.marker.encode():
            return done, None
        if not (parts[1].isdigit() and parts[2].isdigit()):
            return done, None
        status, size = int(parts[1]), int(parts[2])
        body = raw[: cut + 1]
        header = f"\n{self.marker} evidence\n".encode()
        start = len(body) - size
        if start < len(header) or body[start - len(header) : start] != header:
            return done, None
        sandbox = body[: start - len(header)].decode("utf-8", "replace")
        # A frame this cell's marker closes, around a body that does not read: no
        # report, but the frame is still not the sandbox's output (left in, its lines
        # made the probe's output "unusable", which blamed the probe).
        return replace(done, stdout=sandbox, exit_status=status), _read(body[start:], status)


def _read(data: bytes, status: int) -> Report | None:
    """Parse the report's sections; None if they are not what the script writes."""
    setup_error: str | None = None
    alive: bool | None = None
    log = b""
    fs: dict[str, str] | None = None
    phases: dict[str, Phase] | None = None
    at = 0
    while at < len(data):
        end = data.find(b"\n", at)
        if end < 0:
            return None
        head = data[at:end].decode("ascii", "replace").split(" ")
        at = end + 1
        if head == ["fs"]:
            fs = parse_inspection(data[at:].decode("utf-8", "replace"))
            break
        if len(head) != 3 and not (len(head) == 2 and head[0] in ("setup_error", "phases")):
            return None
        size = head[-1]
        if not size.isdigit() or data[at + int(size) : at + int(size) + 1] != b"\n":
            return None
        content = data[at : at + int(size)]
        at += int(size) + 1
        if head[0] == "setup_error":
            setup_error = content.decode("utf-8", "replace").strip() or f"exit {status}"
        elif head[:2] in (["canary", "ok"], ["canary", "dead"]):
            alive, log = head[1] == "ok", content
        elif head[0] == "phases":
            phases = _phases(content.decode("utf-8", "replace"))
            if phases is None:
                return None
        else:
            return None
    return Report(status, setup_error, alive, log.decode("utf-8", "replace"), fs, phases)


def _phases(text: str) -> dict[str, Phase] | None:
    """The watcher's lines; None if one is not what it writes."""
    found: dict[str, Phase] = {}
    for line in text.splitlines():
        parts = line.split("\t", 3)
        if len(parts) != 4 or not parts[0] or parts[0] in found:
            return None
        name, status, ms, said = parts
        if not (status.isdigit() and ms.lstrip("-").isdigit()):
            return None
        found[name] = Phase(int(status), max(0, int(ms)), said[:300])
    return found
