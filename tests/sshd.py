"""OpenSSH sshd on a loopback address, started for real and waited for.

The one recipe behind the tests' hosts (tests/lab.py) and the fan-out benchmark's
fleet (bench/_lab.py). It imports nothing from pytest, so the bench can use it.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

SSHD = shutil.which("sshd") or "/usr/sbin/sshd"


def keygen(path: Path, comment: str = "harness", *, kind: str = "ed25519") -> str:
    """A passphrase-less key at `path`; returns its public line."""
    bits = ["-b", "3072"] if kind == "rsa" else (["-b", "256"] if kind == "ecdsa" else [])
    subprocess.run(
        ["ssh-keygen", "-q", "-t", kind, *bits, "-N", "", "-C", comment, "-f", str(path)],
        check=True,
    )
    return Path(f"{path}.pub").read_text().strip()


@dataclass
class Sshd:
    """One running sshd on a loopback address."""

    name: str
    address: str
    port: int
    process: subprocess.Popen[bytes]
    folder: Path
    host_pub: str = ""

    @property
    def log(self) -> Path:
        return self.folder / "sshd.log"

    def known_hosts_line(self) -> str:
        kind, key = self.host_pub.split()[:2]
        return f"[{self.address}]:{self.port} {kind} {key}"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def spawn_sshd(
    folder: Path,
    *,
    name: str,
    address: str,
    port: int,
    host_keys: list[Path],
    authorized: Path,
    extra: tuple[str, ...] = (),
    log_level: str = "ERROR",
    host_pub: str = "",
    sftp: bool = True,
    prefix: tuple[str, ...] = (),
    reach: tuple[str, int] | None = None,
) -> Sshd:
    """Start sshd in the foreground (-D) with its own config in `folder`, and wait
    until it answers with its banner.

    `prefix` runs it through other commands (`ip netns exec NS`, which execs it);
    `reach` is the (address, port) the banner is awaited on, when the clients reach
    it elsewhere than where it listens."""
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "sshd_config"
    config.write_text(
        "\n".join(
            [
                f"ListenAddress {address}:{port}",
                *(f"HostKey {k}" for k in host_keys),
                f"PidFile {folder / 'sshd.pid'}",
                f"AuthorizedKeysFile {authorized}",
                "PermitRootLogin prohibit-password",
                "PasswordAuthentication no",
                "KbdInteractiveAuthentication no",
                "UsePAM no",
                "StrictModes no",
                "MaxSessions 20",
                "MaxStartups 200:30:400",
                *(["Subsystem sftp internal-sftp"] if sftp else []),
                f"LogLevel {log_level}",
                *extra,
                "",
            ]
        )
    )
    process = _spawn(config, folder / "sshd.log", prefix)
    sshd = Sshd(name, address, port, process, folder, host_pub)
    _wait_banner(sshd, reach=reach)
    return sshd


def _spawn(config: Path, log: Path, prefix: tuple[str, ...] = ()) -> subprocess.Popen[bytes]:
    with open(log, "wb") as log_file:  # the child keeps its own copy of the fd
        return subprocess.Popen(
            [*prefix, SSHD, "-D", "-e", "-f", str(config)],
            stdout=subprocess.DEVNULL,
            stderr=log_file,
        )


def _wait_banner(sshd: Sshd, timeout: float = 15.0, reach: tuple[str, int] | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if sshd.process.poll() is not None:
            raise RuntimeError(f"sshd {sshd.name} exited: {sshd.log.read_text()}")
        try:
            target = reach or (sshd.address, sshd.port)
            with socket.create_connection(target, timeout=0.5) as s:
                if s.recv(4).startswith(b"SSH-"):
                    return
        except OSError:
            time.sleep(0.05)
    sshd.process.kill()
    raise RuntimeError(f"sshd {sshd.name} did not start: {sshd.log.read_text()}")
