"""A WAN round trip for the fleet bench's hosts, in user space (this kernel has no netem).

One process, one listener per host inside that host's network namespace (on the
namespace's end of its veth, port 22), each connection forwarded to the host's sshd
on the namespace's own loopback. Every chunk is held `rtt / 2` in each direction,
in order; a connection's set-up costs one round trip as TCP's handshake does (the
upstream connect waits half a round trip, the client's first bytes a whole one more),
so a client sees what a host `rtt` away shows it.

Run: python bench/_wanproxy.py SPEC.json  (prints "ready" once every listener is up)
SPEC: {"rtt": 0.04, "hosts": [{"netns": NAME, "listen": [ADDR, PORT],
        "upstream": [ADDR, PORT]}, ...]}
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import json
import os
import signal
import socket
import sys
from pathlib import Path
from typing import Any

ROOT_NS = os.open("/proc/self/ns/net", os.O_RDONLY)
CLONE_NEWNET = 0x40000000
LIVE: set[asyncio.Task[None]] = set()


def setns(fd: int) -> None:
    """setns(2) for a network namespace (os.setns is Python 3.12's; this is 3.11)."""
    if ctypes.CDLL(None, use_errno=True).setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def socket_in(netns: str) -> socket.socket:
    """A TCP socket of `netns`'s (a socket keeps the namespace it was made in)."""
    fd = os.open(f"/run/netns/{netns}", os.O_RDONLY)
    try:
        setns(fd)
        try:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        finally:
            setns(ROOT_NS)
    finally:
        os.close(fd)
    sock.setblocking(False)
    return sock


async def carry(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    delay: float,
    not_before: float,
) -> None:
    """Copy reader to writer, each chunk `delay` after it arrived (and after
    `not_before`), in order; half-close the far side at the end."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

    async def deliver() -> None:
        while True:
            due, data = await queue.get()
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            if not data:
                with contextlib.suppress(OSError):
                    if writer.can_write_eof():
                        writer.write_eof()
                return
            writer.write(data)
            await writer.drain()

    task = asyncio.create_task(deliver())
    LIVE.add(task)
    task.add_done_callback(LIVE.discard)
    try:
        while True:
            data = await reader.read(65536)
            queue.put_nowait((max(loop.time(), not_before) + delay, data))
            if not data:
                break
        await task
    finally:
        if not task.done():
            task.cancel()


async def serve(spec: dict[str, Any]) -> None:
    rtt = float(spec["rtt"])
    half = rtt / 2
    loop = asyncio.get_running_loop()
    servers = []

    for host in spec["hosts"]:
        netns, (up_addr, up_port) = host["netns"], host["upstream"]

        async def handle(
            c_reader: asyncio.StreamReader,
            c_writer: asyncio.StreamWriter,
            netns: str = netns,
            up: tuple[str, int] = (up_addr, up_port),
        ) -> None:
            me = asyncio.current_task()
            if me is not None:  # held: a task nobody references may be collected
                LIVE.add(me)
                me.add_done_callback(LIVE.discard)
            accepted = loop.time()
            await asyncio.sleep(half)  # the SYN's way there
            sock = socket_in(netns)
            try:
                await loop.sock_connect(sock, up)
                s_reader, s_writer = await asyncio.open_connection(sock=sock)
            except OSError:
                sock.close()
                c_writer.close()
                return
            try:
                await asyncio.gather(
                    # the client may send once its SYN-ACK is back: one round trip in
                    carry(c_reader, s_writer, half, accepted + rtt),
                    carry(s_reader, c_writer, half, 0.0),
                )
            except (OSError, asyncio.IncompleteReadError):
                pass
            finally:
                for w in (c_writer, s_writer):
                    w.close()

        listener = socket_in(netns)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(tuple(host["listen"]))
        listener.listen(512)
        servers.append(await asyncio.start_server(handle, sock=listener))
    print("ready", flush=True)
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    loop.set_exception_handler(lambda _loop, _context: None)  # connections cut short
    for server in servers:
        server.close()


def main() -> None:
    asyncio.run(serve(json.loads(Path(sys.argv[1]).read_text())))


if __name__ == "__main__":
    main()
