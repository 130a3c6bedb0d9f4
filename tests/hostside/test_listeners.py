"""The host's own unix listeners (issue 38): the listing script, run for real on this
host against listeners made here, and what each cell's probe is handed of it."""

from __future__ import annotations

import os
import secrets
import socket
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from harness.hostside.base import CellSetup
from harness.hostside.listeners import (
    HostListeners,
    HostListenersFixture,
    Listener,
    list_listeners,
    offered,
    offered_tcp,
    offered_udp,
    parse_listing,
    skipped_tcp,
)
from harness.matrix.models import CommandRuntimeSpec, Host
from harness.plan import Cell
from harness.policy.models import Policy
from harness.runtimes import make_runtime
from harness.runtimes.base import CellPaths
from harness.transport.local import LocalTransport

pytestmark = pytest.mark.anyio


@pytest.fixture
def listeners(tmp_path: Path) -> Iterator[dict[str, socket.socket]]:
    """A stream listener three folders down, a bound datagram socket, and a listener
    with an abstract name, all of this process."""
    deep = tmp_path / "a" / "b" / "c"
    deep.mkdir(parents=True)
    stream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stream.bind(str(deep / "ctl.sock"))
    stream.listen()
    dgram = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    dgram.bind(str(tmp_path / "log.sock"))
    abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    abstract.bind(f"\0harness-test-{secrets.token_hex(4)}")
    abstract.listen()
    made = {"stream": stream, "dgram": dgram, "abstract": abstract}
    yield made
    for s in made.values():
        s.close()


async def test_the_host_lists_its_own_listeners(
    listeners: dict[str, socket.socket], tmp_path: Path
) -> None:
    """Each listener with its kind, its file's device and inode, the process that
    holds it and its path within its filesystem; and the host's namespaces and
    filesystems."""
    found = await list_listeners(LocalTransport())
    assert found.error is None
    by_name = {lst.name: lst for lst in found.listeners}
    path = str(tmp_path / "a" / "b" / "c" / "ctl.sock")
    st = os.stat(path)
    stream = by_name[path]
    assert (stream.kind, stream.file, stream.pid) == ("s", f"{st.st_dev}:{st.st_ino}", os.getpid())
    assert stream.comm.startswith("python") and stream.fspath.endswith("/a/b/c/ctl.sock")
    assert by_name[str(tmp_path / "log.sock")].kind == "d"
    name = "@" + listeners["abstract"].getsockname()[1:].decode()
    assert (by_name[name].kind, by_name[name].file, by_name[name].fspath) == ("s", "0:0", "-")
    net = os.readlink("/proc/self/ns/net").strip("net:[]")
    boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    fields = found.namespaces.split()
    assert (fields[0], *fields[3:]) == (net, boot, os.uname().release)
    assert f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}" in found.devices.split(",")


def test_a_listing_line_it_cannot_read_is_left_out() -> None:
    """Garbage, a kind it does not know, a name with no leading / or @: left out."""
    text = (
        "ns 1 2 3 0a-1 6.1.0\ndevs 8:1,0:23\ns 1:2 10 sshd /x /run/ssh.sock\nx 1:2 10 c - /y\n"
        "s 1:2 ten c - /z\ns 0:0 0 - - relative\nnonsense\n"
    )
    found = parse_listing(text)
    assert (found.namespaces, found.devices) == ("1 2 3 0a-1 6.1.0", "8:1,0:23")
    assert parse_listing("ns 1 2 x b r\n").namespaces == ""
    assert [lst.name for lst in found.listeners] == ["/run/ssh.sock"]
    assert found.listeners[0].line == "s 1:2 10 sshd /x /run/ssh.sock"


def _cell(policy: Policy | None, allowed: str | None) -> CellSetup:
    spec = CommandRuntimeSpec(kind="command", argv=["sh", "{probe}", "{args}"], policy=policy)
    runtime = make_runtime("rt", spec)
    cell = Cell(
        host=Host(name="h", transport="local", address="localhost"), runtime=runtime, scenarios=()
    )
    paths = CellPaths(probe="/w/probe", workdir="/w", cell_dir="/w/c", cell_id="c", allowed=allowed)
    return CellSetup(cell=cell, cell_id="c", runtime=runtime, paths=paths)


def test_a_cell_is_handed_the_listeners_its_policy_does_not_let_it_change() -> None:
    """A connect is a write to the socket file: those below a read-write grant or the
    allowed folder are the workload's to use; a read-only grant is not; the canaries'
    abstract names are tried by unix-abstract."""
    listing = HostListeners(
        listeners=tuple(
            Listener("s", "1:2", 1, "c", "-", name)
            for name in (
                "/run/docker.sock",
                "/work/tmp/x.sock",
                "/srv/allowed/y.sock",
                "/etc/z.sock",
                "@harness-canary-abc-0",
                "@/containerd-shim/k8s.io/shim.sock",
            )
        )
    )
    policy = Policy.model_validate(
        {"filesystem_policy": {"read_only": ["/etc"], "read_write": ["/work/tmp"]}}
    )
    cell = _cell(policy, "/srv/allowed")
    names = [lst.name for lst in offered(listing, cell)]
    assert names == ["/run/docker.sock", "/etc/z.sock", "@/containerd-shim/k8s.io/shim.sock"]
    assert len(offered(listing, _cell(None, None))) == 5
    fixture = HostListenersFixture()
    fixture.listing = replace(listing, namespaces="1 2 3", devices="8:1")
    args = list(fixture.probe_args(cell))
    assert args[args.index("--host-unix") + 1].splitlines()[0] == "s 1:2 1 c - /run/docker.sock"
    assert args[args.index("--host-ns") + 1] == "1 2 3"
    assert args[args.index("--host-devs") + 1] == "8:1"
    assert args[args.index("--unix-granted") + 1] == "/work/tmp\n/srv/allowed"


async def test_the_host_lists_its_tcp_listeners_with_their_owners() -> None:
    """A TCP listener of this process is listed with its pid and command, one bound to
    a v4-mapped address by its IPv4 one (as the probe names it)."""
    lo, mapped = socket.socket(), socket.socket(socket.AF_INET6)
    lo.bind(("127.0.0.3", 0))
    mapped.bind(("::ffff:127.0.0.4", 0))
    for s in (lo, mapped):
        s.listen()
    ports = lo.getsockname()[1], mapped.getsockname()[1]
    try:
        found = await list_listeners(LocalTransport())
    finally:
        lo.close()
        mapped.close()
    by_address = {t.address: t for t in found.tcp}
    mine = by_address[f"127.0.0.3:{ports[0]}"]
    assert mine.pid == os.getpid() and mine.comm.startswith("python"), mine
    assert by_address[f"127.0.0.4:{ports[1]}"].pid == os.getpid()


def test_the_ssh_daemons_and_the_canary_are_the_tcp_listeners_skipped() -> None:
    """Read from the script's lines (IPv4 and IPv6 as /proc/net/tcp prints them): the
    SSH daemons' own listeners and the canary's are handed to the probe to skip, not a
    port an SSH session forwards nor another process of the canary's name; a listener
    on any other address of the host's is listed too (a co-located sandbox reaches
    it)."""
    text = (
        "t 0100007F:0016 10 sshd systemd -D\n"
        "t 00000000000000000000000000000000:0016 11 sshd-session systemd -\n"
        "t 0100007F:0438 16 sshd sshd -\n"  # a session's forwarded port (ssh -R 1080)
        "t 0100007F:0C38 12 squid systemd -f\nt 0200007F:1F90 13 harness-probe-a sh canary\n"
        "t 0300007F:1F90 17 harness-probe-a sh run\n"
        "t 0101A8C0:0050 14 nginx systemd -\nt 00000000000000000000000001000000:0277 15 cupsd - -\n"
        "t zz:1 1 x - -\nt 0100007F:0050 1 short\n"
    )
    found = parse_listing(text)
    assert [t.address for t in found.tcp] == [
        "127.0.0.1:22", "[::]:22", "127.0.0.1:1080", "127.0.0.1:3128", "127.0.0.2:8080",
        "127.0.0.3:8080", "192.168.1.1:80", "[::1]:631",
    ]  # fmt: skip
    skipped = skipped_tcp(found, "harness-probe-a")
    assert [t.address for t in skipped] == ["127.0.0.1:22", "[::]:22", "127.0.0.2:8080"]


def test_a_probe_of_its_own_namespace_is_offered_the_hosts_reachable_tcp_listeners() -> None:
    """From a network namespace of its own the probe asks the host's listeners it can
    reach (at the host's end of its links): those bound beyond loopback, held by a
    process the host names, less the SSH daemons' and the canary's."""
    text = (
        "t 00000000:0016 10 sshd systemd -D\n"  # the SSH daemon's own: never asked
        "t 00000000:0C38 12 squid systemd -f\n"  # a host proxy on every address
        "t 0100007F:1F90 13 nginx systemd -\n"  # loopback alone: out of reach
        "t 0101A8C0:0050 14 nginx systemd -\n"  # one address of the host's
        "t 00000000:07E8 0 - - -\n"  # a holder the host cannot see: not its to judge
        "t 00000000000000000000000000000000:1F91 15 envoy systemd -\n"
        "t 00000000:7700 16 probe-other sh canary\n"  # another build's canary: never
    )
    offered = offered_tcp(parse_listing(text), "harness-probe-a")
    assert [t.address for t in offered] == ["0.0.0.0:3128", "192.168.1.1:80", "[::]:8081"]


async def test_the_host_lists_its_udp_sockets_bound_and_not_connected() -> None:
    """A UDP socket of this process bound beyond loopback (a statsd shipper's shape)
    is listed with its owner; one connected to a peer is no listener."""
    shipper, connected = (
        socket.socket(type=socket.SOCK_DGRAM),
        socket.socket(type=socket.SOCK_DGRAM),
    )
    shipper.bind(("127.0.0.5", 0))
    connected.bind(("127.0.0.6", 0))
    connected.connect(("127.0.0.7", 9))
    port = shipper.getsockname()[1]
    try:
        found = await list_listeners(LocalTransport())
    finally:
        shipper.close()
        connected.close()
    by_address = {u.address: u for u in found.udp}
    assert by_address[f"127.0.0.5:{port}"].pid == os.getpid()
    assert not [a for a in by_address if a.startswith("127.0.0.6:")]
    assert not [t for t in found.tcp if t.address == f"127.0.0.5:{port}"]


def test_a_probe_of_its_own_namespace_is_offered_the_hosts_udp_shippers() -> None:
    """The host's UDP sockets bound beyond loopback and held by a process it names go
    to the probe (--host-udp), never a canary's of any build."""
    text = (
        "u 00000000:1FBD 20 statsd systemd -\n"  # 0.0.0.0:8125
        "u 0100007F:0202 21 rsyslogd systemd -\n"  # loopback alone: out of reach
        "u 00000000:7701 22 probe-other sh canary\n"
        "u 00000000:0044 0 - - -\n"  # a holder the host cannot see
        "t 00000000:0C38 12 squid systemd -f\n"
    )
    listing = parse_listing(text)
    assert [u.address for u in offered_udp(listing)] == ["0.0.0.0:8125"]
    fixture = HostListenersFixture()
    fixture.listing = listing
    args = list(fixture.probe_args(_cell(None, None)))
    assert args[args.index("--host-udp") + 1] == "0.0.0.0:8125"
    assert args[args.index("--host-tcp") + 1] == "0.0.0.0:3128"
