"""A private containerd for the runtime adapters that go through it (kata, exec)."""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.lab import require_tool

NAMESPACE = "harness-test"


@dataclass
class Containerd:
    address: str
    folder: Path

    def ctr(self, *args: str) -> str:
        done = subprocess.run(
            ["ctr", "--address", self.address, "--namespace", NAMESPACE, *args],
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout


@pytest.fixture(scope="module")
def containerd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Containerd]:
    """containerd on a private socket, with private root and state folders; CRI off."""
    daemon = require_tool("containerd")
    require_tool("ctr")
    require_tool("containerd-shim-runc-v2")
    folder = tmp_path_factory.mktemp("containerd")
    address = str(folder / "containerd.sock")
    config = folder / "config.toml"
    config.write_text(
        f"""version = 2
root = "{folder}/root"
state = "{folder}/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "{address}"
[ttrpc]
  address = "{address}.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
"""
    )
    with open(folder / "containerd.log", "wb") as log:
        process = subprocess.Popen([daemon, "--config", str(config)], stdout=log, stderr=log)
    try:
        deadline = time.monotonic() + 20
        while True:
            probe = subprocess.run(["ctr", "--address", address, "version"], capture_output=True)
            if probe.returncode == 0:
                break
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError((folder / "containerd.log").read_text()[-2000:])
            time.sleep(0.1)
        yield Containerd(address=address, folder=folder)
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        # Its namespace's cgroup in each hierarchy, which containerd leaves behind
        # (each container's below it goes with the container): empty by now.
        top = Path("/sys/fs/cgroup")
        for parent in [*top.glob(NAMESPACE), *top.glob(f"*/{NAMESPACE}")]:
            with contextlib.suppress(OSError):
                parent.rmdir()
