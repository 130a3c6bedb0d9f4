"""priv-fcap-exec reads an EPERM from the fcap helper's exec (while `other` runs) as
the kernel refusing a file capability outside the bounding set, and so as file
capabilities honoured without no_new_privs: an escape. Only if the kernel's rule
can explain it: an exec-control daemon refusing the helper (fanotify, as
fapolicyd does) with CAP_NET_RAW in the bounding set is no such proof (root needed:
fanotify, and setpriv to run the probe as nobody in the initial user namespace)."""

from __future__ import annotations

import ctypes
import json
import os
import select
import shutil
import struct
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.probe.copies import runnable_copy

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("setpriv") or not shutil.which("setcap"),
    reason="needs root, setpriv and setcap",
)
_libc = ctypes.CDLL(None, use_errno=True)
_FAN_CLASS_CONTENT, _FAN_CLOEXEC, _FAN_MARK_ADD = 0x4, 0x1, 0x1
_FAN_OPEN_EXEC_PERM, _FAN_DENY, _AT_FDCWD = 0x40000, 0x2, -100


@pytest.fixture
def denied(open_folder: Path) -> Iterator[Path]:
    """A file carrying cap_net_raw+ep whose every exec a fanotify listener refuses."""
    fcap = runnable_copy(open_folder, "fcap")
    subprocess.run(["setcap", "cap_net_raw+ep", str(fcap)], check=True)
    fd = _libc.fanotify_init(_FAN_CLASS_CONTENT | _FAN_CLOEXEC, os.O_RDONLY)
    if fd < 0:
        pytest.skip(f"fanotify_init: {os.strerror(ctypes.get_errno())}")
    mark = _libc.fanotify_mark(
        fd, _FAN_MARK_ADD, ctypes.c_uint64(_FAN_OPEN_EXEC_PERM), _AT_FDCWD, str(fcap).encode()
    )
    if mark < 0:
        os.close(fd)
        pytest.skip(f"fanotify_mark: {os.strerror(ctypes.get_errno())}")

    done = threading.Event()

    def deny() -> None:
        # Polls, and stops before the descriptor is closed: a thread still reading a
        # closed number would read (and answer) whatever file the next test opens there.
        while not done.is_set():
            if not select.select([fd], [], [], 0.05)[0]:
                continue
            data = os.read(fd, 4096)
            at = 0
            while at + 24 <= len(data):
                length, _, _, _, _, event_fd, _ = struct.unpack_from("=IBBHQii", data, at)
                os.write(fd, struct.pack("=iI", event_fd, _FAN_DENY))
                os.close(event_fd)
                at += length

    thread = threading.Thread(target=deny, daemon=True)
    thread.start()
    try:
        yield fcap
    finally:
        done.set()
        thread.join(timeout=5)
        os.close(fd)


def test_an_exec_refused_by_another_than_the_kernel_is_no_escape(denied: Path) -> None:
    for name in ("other", "probe"):
        runnable_copy(denied.parent, name)
    argv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
    argv += [str(denied.parent / "probe"), "run", "--tag", "t", "--fcap-helper", str(denied)]
    argv += ["--other-binary", str(denied.parent / "other"), "privilege-floor"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    rows = [r for r in map(json.loads, done.stdout.splitlines()) if r.get("id") == "priv-fcap-exec"]
    assert rows, done.stdout
    # The host's bounding set holds CAP_NET_RAW: the kernel did not refuse the helper.
    assert rows[0]["outcome"] == "blocked", rows[0]
    assert "not for its file capability: CAP_NET_RAW is in" in rows[0]["detail"], rows[0]
