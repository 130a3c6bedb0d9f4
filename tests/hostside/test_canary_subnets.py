"""Canary subnets are leased per host, for IPv4 and IPv6, picked at random in the
configured ranges: concurrent runs never share one, a subnet someone else's interface
holds is skipped, and a dead run's lease is taken back. Real namespaces, veths and ULA
addresses, made and removed here."""

from __future__ import annotations

import ipaddress
import os
import secrets
import subprocess
from pathlib import Path

import anyio
import pytest

from harness.hostside import canary_setup as canary_module
from harness.hostside.canary_setup import LEASES, RunningCanary, start_canary, stop_canary
from harness.matrix.models import Canary
from harness.probe.build import build_probe
from harness.transport.local import LocalTransport
from tests.lab import require_tool


@pytest.fixture(scope="module")
def probe() -> str:
    require_tool("ip")
    return str(build_probe().path)


async def _start(
    probe: str, workdir: Path, run_id: str, canary: Canary | None = None
) -> RunningCanary:
    with anyio.CancelScope(shield=True):  # a canary half started must still be stopped
        return await start_canary(
            LocalTransport(),
            probe=probe,
            workdir=str(workdir),
            canary=canary or Canary(),
            run_id=run_id,
            host_index=0,
            nonce="n0nce",
            high_port=40000,
        )


def _namespaces() -> str:
    return subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout


def test_concurrent_runs_never_share_a_subnet(probe: str, tmp_path: Path) -> None:
    """Four canaries started at once, with run ids alike in their first byte (which
    once chose the subnet), get four subnets; stopping them frees the leases."""
    prefix = secrets.token_hex(1)
    run_ids = [f"{prefix}{secrets.token_hex(3)}" for _ in range(4)]
    started: list[RunningCanary] = []

    async def main() -> None:
        async def one(run_id: str) -> None:
            started.append(await _start(probe, tmp_path, run_id))

        try:
            async with anyio.create_task_group() as tg:
                for run_id in run_ids:
                    tg.start_soon(one, run_id)
            assert [c.error for c in started] == [None] * 4
            assert len({c.address for c in started}) == 4
            assert len({c.address6 for c in started}) == 4
            assert len({c.subnet["subnet"] for c in started}) == 4
            for c in started:
                assert c.address6.startswith("fd5e:7a1c:9b3d:")
                assert [Path(f).read_text().strip() for f in c.leases] == [c.netns] * 2
        finally:
            for c in started:
                await stop_canary(LocalTransport(), c)

    anyio.run(main)
    for c in started:
        for lease in c.leases:
            assert not Path(lease).exists() or Path(lease).read_text().strip() != c.netns
        assert c.netns not in _namespaces()


def test_subnets_come_from_the_configured_ranges(probe: str, tmp_path: Path) -> None:
    """Addresses from `range4` and `range6`, anywhere in them (not the lowest free
    subnet), recorded with both subnets; the leases are named after the subnets."""
    canary = Canary(range4="172.29.0.0/16", range6="fdc3:5e1f:42::/48")
    subnets: list[str] = []

    async def main() -> None:
        for _ in range(3):
            c = await _start(probe, tmp_path, secrets.token_hex(4), canary)
            try:
                assert c.error is None, c.error
                net4 = ipaddress.IPv4Network(c.subnet["subnet"])
                net6 = ipaddress.IPv6Network(c.subnet["subnet6"])
                assert net4.prefixlen == 30 and net4.subnet_of(canary.range4)
                assert net6.prefixlen == 64 and net6.subnet_of(canary.range6)
                assert ipaddress.IPv4Address(c.address) in net4
                assert ipaddress.IPv6Address(c.address6) in net6
                assert c.leases == (f"{LEASES}/{net4.network_address}", c.leases[1])
                subnets.append(str(net4))
            finally:
                await stop_canary(LocalTransport(), c)

    anyio.run(main)
    assert subnets != ["172.29.0.0/30"] * 3


def test_held_subnets_are_skipped_and_dead_leases_taken_back(
    probe: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A subnet whose address an interface already holds (another tool, an older
    harness) is skipped; a lease naming a namespace that is gone is free again.
    Every start here walks from the same subnet (a random one, not the lowest)."""
    holder = f"hxt{os.getpid() % 10**9}"[:15]  # a veth, standing in for anyone's interface
    first_index = 1000 + secrets.randbelow(10000)
    monkeypatch.setattr(canary_module, "walk", lambda count: (first_index % count, 1))

    async def main() -> None:
        first = await _start(probe, tmp_path, secrets.token_hex(4))
        await stop_canary(LocalTransport(), first)
        assert first.error is None, first.error
        index, host4, host6 = first.subnet["subnet"], first.subnet["host4"], first.subnet["host6"]
        peer = ["peer", "name", f"{holder}p"[:15]]
        subprocess.run(["ip", "link", "add", holder, "type", "veth", *peer], check=True)
        try:
            subprocess.run(["ip", "addr", "add", f"{host4}/30", "dev", holder], check=True)
            add6 = ["ip", "addr", "add", f"{host6}/64", "dev", holder, "nodad"]
            subprocess.run(add6, check=True)
            second = await _start(probe, tmp_path, secrets.token_hex(4))
            try:
                assert second.error is None, second.error
                assert second.subnet["subnet"] != index
                assert second.subnet["host4"] != host4
                assert second.subnet["subnet6"] != first.subnet["subnet6"]
            finally:
                await stop_canary(LocalTransport(), second)
        finally:
            subprocess.run(["ip", "link", "del", holder], check=False)
        for lease in first.leases:  # its run died
            Path(lease).write_text(f"harness-gone-{os.getpid()}\n")
        third = await _start(probe, tmp_path, secrets.token_hex(4))
        try:
            assert third.error is None, third.error
            assert third.subnet["subnet"] == index
            assert third.subnet["subnet6"] == first.subnet["subnet6"]
        finally:
            await stop_canary(LocalTransport(), third)

    anyio.run(main)
