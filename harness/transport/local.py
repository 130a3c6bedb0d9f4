"""Run commands on this machine, in their own process group so a timeout can
kill everything they started."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

import anyio
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

from harness.errors import TransportError
from harness.transport.base import MAX_OUTPUT, Completed, Transport

_CLOSED = (anyio.BrokenResourceError, anyio.ClosedResourceError)


def _signal_name(status: int | None) -> tuple[int | None, str | None]:
    if status is not None and status < 0:
        try:
            return None, signal.Signals(-status).name
        except ValueError:
            return None, f"SIG{-status}"
    return status, None


def _killpg(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


async def _drain(stream: object, sink: bytearray) -> None:
    if stream is None:
        return
    reader = BufferedByteReceiveStream(stream)  # type: ignore[arg-type]
    try:
        while True:
            chunk = await reader.receive(65536)
            room = MAX_OUTPUT - len(sink)
            if room > 0:
                sink.extend(chunk[:room])
    except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
        return


class LocalTransport(Transport):
    """The machine the harness runs on; no connection to open."""

    def __init__(self, host: str = "localhost") -> None:
        self.host = host

    async def run(
        self,
        argv: Sequence[str],
        *,
        stdin: bytes | None = None,
        timeout: float | None = None,
    ) -> Completed:
        started = time.monotonic()
        out, err = bytearray(), bytearray()
        timed_out = False
        try:
            process: Process = await anyio.open_process(
                list(argv),
                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError as exc:
            return Completed(
                argv=tuple(argv),
                exit_status=127,
                signal=None,
                stdout="",
                stderr=f"{argv[0]}: {exc.strerror or exc}",
                elapsed=time.monotonic() - started,
            )
        try:
            with anyio.move_on_after(timeout) as scope:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(_drain, process.stdout, out)
                    tg.start_soon(_drain, process.stderr, err)
                    if process.stdin is not None:
                        if stdin:
                            with contextlib.suppress(
                                anyio.BrokenResourceError, anyio.ClosedResourceError
                            ):
                                await process.stdin.send(stdin)
                        await process.stdin.aclose()
                    await process.wait()
            timed_out = scope.cancelled_caught
        finally:
            if process.returncode is None:
                # Timed out or cancelled: take the whole process group down. A command
                # that ended by itself keeps what it deliberately left running (as over
                # SSH), such as a canary started in its own session.
                _killpg(process.pid)
            # Close its pipes now, inside the loop: a transport left to the garbage
            # collector closes itself after the loop has gone ("Event loop is closed").
            with anyio.CancelScope(shield=True):
                await process.aclose()
        status, sig = _signal_name(process.returncode)
        return Completed(
            argv=tuple(argv),
            exit_status=None if timed_out else status,
            signal=None if timed_out else sig,
            stdout=out.decode("utf-8", "replace"),
            stderr=err.decode("utf-8", "replace"),
            elapsed=time.monotonic() - started,
            timed_out=timed_out,
        )

    async def put_file(self, source: Path, dest: str, *, mode: int = 0o644) -> None:
        try:
            await anyio.to_thread.run_sync(shutil.copyfile, source, dest)
            os.chmod(dest, mode)
        except OSError as exc:
            raise TransportError(self.host, f"cannot copy {source} to {dest}: {exc}") from exc

    async def get_file(self, source: str, dest: Path) -> None:
        try:
            await anyio.to_thread.run_sync(shutil.copyfile, source, dest)
        except OSError as exc:
            raise TransportError(self.host, f"cannot copy {source} to {dest}: {exc}") from exc
