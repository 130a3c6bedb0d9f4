"""held-fds takes the IP sockets of other processes it may trace (pidfd_getfd: the
same uid, no capability it lacks) and tries each towards the canary. Before, it took at
most 32 and stopped without a word: a process holding 32 sockets of a closed network
namespace, seen first (a lower pid), hid a later one's socket of a namespace with a way
out, and the line said blocked. Now every one is taken, up to the line's cap on
attempts (more: an error naming it).

Real processes, all nobody (no capability: setns into their namespaces is refused, so
the sockets are the only way), each in a network namespace of its own, in a PID
namespace of the test's (only its processes in view)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.lab import require_tool
from tests.probe.copies import runnable_copy
from tests.probe.egress_args import canary_script, egress_argv

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (namespaces)")

HOLDER = """import socket, sys, time
keep = [socket.socket() for _ in range(int(sys.argv[1]))]
print("up", flush=True)
time.sleep(120)
"""
NOBODY = "setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all"
# The closed namespace's holder first (the lower pid), then the canary's namespace:
# the canary on the high port, a holder of one socket beside it.
SHAPE = f"""set -e
ip link set lo up
unshare -n sh -c 'ip link set lo up && exec {NOBODY} "$0" -c "$1" "$2"' "$PY" "$HOLDER" "$CLOSED" \\
    > "$DIR/closed.log" &
while ! grep -q up "$DIR/closed.log"; do sleep 0.05; done
unshare -n sh -c 'ip link set lo up
{NOBODY} "$0" -c "$1" > "$DIR/canary.log" &
while ! grep -q up "$DIR/canary.log"; do sleep 0.05; done
exec {NOBODY} "$0" -c "$2" 1' "$PY" "$CANARY" "$HOLDER" > "$DIR/open.log" &
while ! grep -q up "$DIR/open.log"; do sleep 0.05; done
unshare -n sh -c 'ip link set lo up && exec {NOBODY} "$@"' sh "$@" || true
kill $(jobs -p) 2>/dev/null || true
"""


def _held_line(folder: Path, closed: int, tmp: Path) -> dict[str, object]:
    require_tool("unshare")
    require_tool("setpriv")
    probe = runnable_copy(folder)
    argv = egress_argv("127.0.0.1", 9)
    argv[0] = str(probe)
    env = {
        "PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "PY": sys.executable, "HOLDER": HOLDER,
        "CANARY": canary_script("127.0.0.1", 40000), "CLOSED": str(closed), "DIR": str(tmp),
    }  # fmt: skip
    done = subprocess.run(
        ["unshare", "-p", "-f", "--mount-proc", "sh", "-c", SHAPE, "sh", *argv],
        capture_output=True, text=True, timeout=180, check=False, env=env,
    )  # fmt: skip
    lines = [json.loads(x) for x in done.stdout.splitlines() if x.startswith("{")]
    held = next((x for x in lines if x.get("id") == "held-fds"), None)
    assert held, done.stdout[-2000:] + done.stderr[-2000:]
    return held


def test_a_socket_taken_after_32_of_a_closed_namespace_is_tried(open_folder: Path) -> None:
    """40 sockets of a closed namespace first, then one of the canary's: taken too, it
    reaches the canary (escaped). Before: blocked, the 33rd never taken. By hand, in
    this shape, nobody in the probe's namespace took the socket (pidfd_getfd) and its
    connect reached the canary's listener of the other namespace."""
    open_folder.joinpath("logs").mkdir(mode=0o777)
    held = _held_line(open_folder, 40, open_folder / "logs")
    assert held["outcome"] == "escaped", held
    assert "taken by pidfd_getfd" in str(held["detail"]), held


def test_more_taken_sockets_than_the_line_tries_are_an_error(open_folder: Path) -> None:
    """Past the line's cap on attempts (160), the sockets left are counted and the line
    is an error that names the cap, never blocked."""
    open_folder.joinpath("logs").mkdir(mode=0o777)
    held = _held_line(open_folder, 170, open_folder / "logs")
    assert held["outcome"] == "error", held
    assert "than the 160 tried" in str(held["detail"]), held
