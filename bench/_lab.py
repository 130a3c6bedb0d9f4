"""Many real OpenSSH sshd instances on loopback, for the fan-out benchmark.

The tests' recipe (tests/sshd.py: sshd -D on a 127.x address with generated keys),
with a known_hosts the bench writes.
Every host listens on its own address (127.0.1.1, 127.0.1.2, ...) and the same
port, so host names, inventories and known_hosts lines look like a real fleet.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tests.sshd import Sshd, keygen, spawn_sshd

PORT = 2222
# root's ~/.bashrc on this machine runs `pyenv init` (0.14 s per SSH command); bash
# skips ~/.bashrc when SHLVL says it is not top level, as a target host with a stock
# ~/.bashrc effectively does.
CLEAN_SHELL = ("SetEnv SHLVL=1",)


@dataclass
class Fleet:
    """N sshd hosts sharing one client key, host key(s) and a known_hosts file."""

    folder: Path
    client_key: Path
    known_hosts: Path
    hosts: list[Sshd] = field(default_factory=list)

    @property
    def pids(self) -> list[int]:
        return [h.process.pid for h in self.hosts]

    def ssh_options(self) -> list[str]:
        """OpenSSH client options for a user's `ssh` loop: strict host keys, our key."""
        return [
            "-i", str(self.client_key),
            "-o", f"UserKnownHostsFile={self.known_hosts}",
            "-o", "StrictHostKeyChecking=yes",
            "-o", "IdentitiesOnly=yes",
            "-o", "BatchMode=yes",
            "-o", "LogLevel=ERROR",
            "-p", str(self.hosts[0].port),
        ]  # fmt: skip

    def inventory(self, path: Path, *, workdir: Path, max_cells: int = 4) -> Path:
        """A harness inventory naming every host; each has its own workdir."""
        lines = [
            "[defaults]",
            'user = "root"',
            f'identity_file = "{self.client_key}"',
            f'known_hosts = "{self.known_hosts}"',
            f"port = {self.hosts[0].port}",
            "connect_timeout = 60",
            f"max_cells = {max_cells}",
            "",
        ]
        for h in self.hosts:
            lines += [
                f"[hosts.{h.name}]",
                f'address = "{h.address}"',
                f'workdir = "{workdir}/{h.name}"',
                "",
            ]
        path.write_text("\n".join(lines))
        return path


def address_of(index: int) -> str:
    """Host i (0-based) of the fleet: 127.0.1.1, 127.0.1.2, ... 127.0.2.x past 254."""
    return f"127.0.{1 + index // 254}.{1 + index % 254}"


@contextmanager
def fleet(
    folder: Path,
    count: int,
    *,
    host_key_types: tuple[str, ...] = ("ed25519",),
    port: int = PORT,
    extra: tuple[str, ...] = (),
    clean_shell: bool = True,
    log_level: str = "ERROR",
) -> Iterator[Fleet]:
    """Start `count` sshd hosts sharing one set of host keys; stop them all after."""
    folder.mkdir(parents=True, exist_ok=True)
    client_key = folder / "client_key"
    authorized = folder / "authorized_keys"
    authorized.write_text(keygen(client_key, comment="bench-client") + "\n")
    host_keys: list[Path] = []
    publics: list[str] = []
    for kind in host_key_types:
        path = folder / f"host_{kind}"
        publics.append(keygen(path, kind=kind, comment=f"bench-host-{kind}"))
        host_keys.append(path)
    known = folder / "known_hosts"
    out = Fleet(folder=folder, client_key=client_key, known_hosts=known)
    entries = []
    try:
        for i in range(count):
            address = address_of(i)
            sshd = spawn_sshd(
                folder / f"h{i + 1:03d}",
                name=f"h{i + 1:03d}",
                address=address,
                port=port,
                host_keys=host_keys,
                authorized=authorized,
                extra=(*(CLEAN_SHELL if clean_shell else ()), *extra),
                log_level=log_level,
            )
            out.hosts.append(sshd)
            for pub in publics:
                kind, key = pub.split()[:2]
                entries.append(f"[{address}]:{port} {kind} {key}")
        known.write_text("\n".join(entries) + "\n")
        yield out
    finally:
        for h in out.hosts:
            h.stop()
