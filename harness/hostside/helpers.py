"""Privilege helpers: copies of the probe that are setuid-root, setgid-root, that
carry a file capability, and that carry every capability as inheritable (`inh`),
staged once per host on a mount without nosuid. The probe's
`whoami` mode reports what the kernel granted when they are executed. Beside them,
`other`: the probe with bytes appended, a program a network policy does not name
(its `connect` mode makes the connection).

Concurrent runs on one host share the staged helpers, so a staged folder is never
modified: it is built complete in a temporary folder (copy, owner, mode,
capability, then a `.ready` file saying what worked) and renamed into place. A run
that loses the race uses the winner's folder; no run ever sees a half-made helper
or one whose setuid bit a `chown` has just cleared.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from harness.errors import CommandError
from harness.hostside.base import CellSetup, Fixture, HostSetup
from harness.transport import Transport

TIMEOUT = 30.0

# $1 probe, $2 probe hash, $3 top folder (empty: /var/tmp/harness-helpers-UID).
# The helpers must be executable by an unprivileged uid, so they live outside the
# (often 0700) home, in a world-traversable folder. `mv -T` is one rename(2): it
# fails if another run's folder is already in place, and then that one is used.
# Folders are named h-HASH: one made in place by an older harness (HASH alone) is
# never taken for a staged one.
SETUP = r"""set -u
probe=$1; top=${3:-/var/tmp/harness-helpers-$(id -u)}; dir=$top/h-$2
mkdir -p "$top" || exit 1
# Ours, or nothing: in /var/tmp any local user may have made it first (or a link of
# that name), and root's chmod would not take it back: its owner could stage forged
# helpers in it (false verdicts), or programs that cells run as root (`other`).
for d in "$top" "$dir"; do
  if [ -L "$d" ] || { [ -e "$d" ] && [ ! -O "$d" ]; }; then
    echo "harness-helpers: $d is not a folder of uid $(id -u)'s own; remove it" >&2; exit 1
  fi
done
chmod 0755 "$top" || exit 1
if [ ! -f "$dir/.ready" ]; then
  tmp=$(mktemp -d "$top/.stage-$2.XXXXXX") || exit 1
  chmod 0755 "$tmp" || exit 1
  if cp "$probe" "$tmp/setuid" && chown 0:0 "$tmp/setuid" && chmod 4755 "$tmp/setuid"; then
    s=ok
  else
    s=failed
  fi
  if cp "$probe" "$tmp/setgid" && chown 0:0 "$tmp/setgid" && chmod 2755 "$tmp/setgid"; then
    g=ok
  else
    g=failed
  fi
  cp "$probe" "$tmp/fcap" && chmod 0755 "$tmp/fcap" || exit 1
  # Another program: the probe with bytes appended (another name, another sha256),
  # for the attempt a network policy's binaries must refuse.
  { cp "$probe" "$tmp/other" && printf '\nharness: another binary\n' >> "$tmp/other" &&
    chmod 0755 "$tmp/other"; } || exit 1
  if command -v setcap >/dev/null 2>&1 && setcap cap_net_raw+ep "$tmp/fcap" 2>/dev/null; then
    f=ok
  else
    f=failed
  fi
  # Every capability inheritable and effective: what runs it gets the inheritable set
  # of whoever runs it, which an unprivileged uid's should leave empty.
  cp "$probe" "$tmp/inh" && chmod 0755 "$tmp/inh" || exit 1
  if command -v setcap >/dev/null 2>&1 && setcap =ei "$tmp/inh" 2>/dev/null; then
    i=ok
  else
    i=failed
  fi
  printf 'setuid=%s\nsetgid=%s\nfcap=%s\ninh=%s\n' "$s" "$g" "$f" "$i" > "$tmp/.ready" || exit 1
  chmod 0444 "$tmp/.ready" || exit 1
  mv -T "$tmp" "$dir" 2>/dev/null || rm -rf "$tmp"
fi
echo "dir=$dir"
cat "$dir/.ready" || exit 1
# What a decision record about `other` must name (a folder staged before it said none).
sum=$(sha256sum "$dir/other" 2>/dev/null) && echo "other_sha256=${sum%% *}"
exit 0
"""


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
        inside = cell.runtime.inside(self.helpers.folder, role="helpers")
        return self.helpers.probe_args(inside=inside)
