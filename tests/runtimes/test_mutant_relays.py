"""The mutants' relays in the host's network namespace serve their own sandbox alone.

matrices/mutants.toml runs its cells side by side, and a cell that shares the host's
network namespace asks every TCP listener of the host's to relay to the canary
(`tcp-proxy`): a co-located proxy, a gateway's proxy or a held socket's host service of
another cell's would be a way out for it, and its verdict would depend on what ran
beside it (seen once: bwrap-i386-socketcall's tcp-proxy escaped through one). Each such
relay of scripts/mutant-sandbox asks who holds the other end of a connection
(`from_here`): this script or a process it started, and nobody else."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import signal
import socket
import subprocess
import sys
from importlib.machinery import SourceFileLoader
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONNECT = (
    "import socket, sys, time\n"
    "s = socket.socket(int(sys.argv[1]))\n"
    "s.connect((sys.argv[2], int(sys.argv[3])))\n"
    "print(s.getsockname()[1], flush=True)\n"
    "time.sleep(30)\n"
)


def _mutant_sandbox() -> ModuleType:
    loader = SourceFileLoader("mutant_sandbox", str(ROOT / "scripts" / "mutant-sandbox"))
    spec = importlib.util.spec_from_loader("mutant_sandbox", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["mutant_sandbox"] = module  # its dataclasses look themselves up there
    loader.exec_module(module)
    return module


def _accept_from(listener: socket.socket, *ports: int) -> list[socket.socket]:
    """The connections from client ports `ports`, in that order (another lane's probe
    may connect to this listener meanwhile: it is not ours to judge)."""
    listener.settimeout(10)
    got: dict[int, socket.socket] = {}
    while len(got) < len(ports):
        client, peer = listener.accept()
        if peer[1] in ports:
            got[peer[1]] = client
        else:
            client.close()
    return [got[p] for p in ports]


@pytest.mark.parametrize(
    ("family", "address", "client_family", "to"),
    [
        (socket.AF_INET, "127.0.0.1", socket.AF_INET, "127.0.0.1"),
        (socket.AF_INET6, "::1", socket.AF_INET6, "::1"),
        # colocated-proxy-mapped: an IPv6 listener, an IPv4 client
        (socket.AF_INET6, "::ffff:127.0.0.1", socket.AF_INET, "127.0.0.1"),
    ],
    ids=["ipv4", "ipv6", "mapped"],
)
def test_a_relay_serves_a_process_it_started_and_not_another(
    family: int, address: str, client_family: int, to: str
) -> None:
    mutant = _mutant_sandbox()
    with socket.socket(family, socket.SOCK_STREAM) as listener:
        listener.bind((address, 0))
        listener.listen(8)
        port = str(listener.getsockname()[1])
        argv = [sys.executable, "-c", CONNECT, str(int(client_family)), to, port]
        # Its own: a child of this process (as the sandbox's probe is the script's).
        own = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
        # Another's: a process whose parent is gone (reparented: no descendant of ours),
        # as another cell's probe is another script's.
        stranger = subprocess.Popen(
            ["sh", "-c", '"$@" & echo $!', "sh", *argv], stdout=subprocess.PIPE, text=True
        )
        stranger_pid = 0
        try:
            assert own.stdout is not None and stranger.stdout is not None
            own_port = int(own.stdout.readline())
            stranger_pid = int(stranger.stdout.readline())
            stranger.wait(timeout=10)
            stranger_port = int(stranger.stdout.readline())
            # Its own too: a connection this process holds (a held socket's, handed in).
            held = socket.socket(client_family, socket.SOCK_STREAM)
            held.connect((to, int(port)))
            held_port = held.getsockname()[1]
            ours, theirs, mine = _accept_from(listener, own_port, stranger_port, held_port)
            assert mutant.from_here(ours), "a relay refused its own sandbox's connection"
            assert mutant.from_here(mine), "a relay refused the connection its script holds"
            held.close()
            mine.close()
            assert not mutant.from_here(theirs), "a relay served another cell's process"
            assert theirs.fileno() == -1  # refused: closed at once
            ours.close()
        finally:
            own.kill()
            own.wait()
            if stranger_pid > 1:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(stranger_pid, signal.SIGKILL)
            for pipe in (own.stdout, stranger.stdout):
                if pipe is not None:
                    pipe.close()
