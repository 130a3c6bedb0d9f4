"""A host whose SSH channels stall after setup costs the run one deadline for that
host, teardown included; the other host is unaffected."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.conftest import ROOT, Lab
from tests.e2e.helpers import cells_of, leftovers
from tests.lab import CuttableProxy

TIMEOUT = 6  # the cell timeout; the transport waits 10 s more for an answer


class StallingProxy(CuttableProxy):
    """A loopback TCP proxy that, once stalled, forwards nothing more in either
    direction while keeping every connection open: a black-holed path."""

    def __init__(self, address: str, target: tuple[str, int]) -> None:
        self.stalled = threading.Event()
        self.released = threading.Event()
        super().__init__(address, target)

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:  # type: ignore[override]
        try:
            while data := src.recv(65536):
                if self.stalled.is_set():
                    self.released.wait()
                    return
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self.released.set()
        super().close()


def test_a_stalled_host_costs_one_deadline(lab: Lab, tmp_path: Path) -> None:
    proxy = StallingProxy("127.0.0.9", (lab.trusted.address, lab.trusted.port))
    try:
        known = tmp_path / "known"
        kind, key = lab.trusted.host_pub.split()[:2]
        known.write_text(f"[127.0.0.9]:{proxy.port} {kind} {key}\n")
        (tmp_path / "inv.toml").write_text(
            f'[defaults]\nuser = "root"\nidentity_file = "{lab.client_key}"\n'
            f'known_hosts = "{lab.known_hosts}"\nconnect_timeout = 3\nconnect_retries = 0\n'
            f'[hosts.trusted]\naddress = "{lab.trusted.address}"\nport = {lab.trusted.port}\n'
            f'workdir = "{tmp_path}/work-trusted"\n'
            f'[hosts.stalled]\naddress = "127.0.0.9"\nport = {proxy.port}\n'
            f'workdir = "{tmp_path}/work-stalled"\nknown_hosts = "{known}"\n'
        )
        slow = '["sh", "-c", "sleep 2; exec \\"$0\\" \\"$@\\"", "{probe}", "{args}"]'
        (tmp_path / "m.toml").write_text(
            'name = "stall"\ninventory = "inv.toml"\nscenarios = ["mechanisms"]\n'
            f"[settings]\ntimeout = {TIMEOUT}\n"
            + "".join(f'[runtimes.slow{i}]\nkind = "command"\nargv = {slow}\n' for i in range(3))
        )
        started = time.monotonic()
        process = subprocess.Popen(
            [sys.executable, "-m", "harness", "run", str(tmp_path / "m.toml"),
             "--out", str(tmp_path / "out"), "--no-progress"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 30
            marker = f"{tmp_path}/work-stalled/probe/"
            while len(leftovers(marker, wait=0)) < 3 and time.monotonic() < deadline:
                time.sleep(0.1)
            proxy.stalled.set()
            out, err = process.communicate(timeout=170)
        finally:
            if process.poll() is None:
                process.kill()
        took = time.monotonic() - started
    finally:
        proxy.close()
    cells = cells_of(tmp_path / "out")
    for i in range(3):
        assert cells[("trusted", f"slow{i}")]["status"] == "complete", cells
        assert cells[("stalled", f"slow{i}")]["status"] != "complete", cells
    # One deadline for the stalled host (cell timeout, the transport's grace and its
    # answer grace: 21 s) and setup; never one per cell or per teardown command.
    assert took < TIMEOUT + 10 + 5 + 15, (took, err)
    assert process.returncode == 3, out + err
