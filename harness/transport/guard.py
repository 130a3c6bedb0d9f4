"""One stall, one deadline: a host whose channels stop answering costs its run once.

A host can stall after setup (a hung sshd, a black-holed network path): the
connection stays open, nothing comes back. Left alone, every cell waits out its
own deadline, then each teardown command waits out its own, one after another.
`StallGuard` wraps the host's transport: the first command that gets no answer
by its deadline marks the host stalled, every command still waiting on it is
stopped at once, and every later one (teardown included) fails at once, as a
`TransportError` saying so. Commands without a deadline (the lease's lock
holder) never mark a stall.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import anyio

from harness.errors import TransportError
from harness.transport.base import Completed, Transport

# An answer may come this long after the command's own deadline (a busy host, a
# slow channel close) before the host counts as stalled.
ANSWER_GRACE = 5.0


class StallGuard(Transport):
    """A host's transport, as above; the runner holds one per host."""

    def __init__(self, inner: Transport) -> None:
        self.inner = inner
        self.host = inner.host
        self.stalled: str | None = None
        self._waiting: set[anyio.CancelScope] = set()

    def _refuse(self) -> None:
        if self.stalled is not None:
            raise TransportError(self.host, self.stalled)

    def _stall(self, why: str) -> None:
        if self.stalled is None:
            self.stalled = why
            for scope in self._waiting:
                scope.cancel()

    async def connect(self) -> None:
        await self.inner.connect()

    async def run(
        self,
        argv: Sequence[str],
        *,
        stdin: bytes | None = None,
        timeout: float | None = None,
    ) -> Completed:
        self._refuse()
        bound = None if timeout is None else timeout + ANSWER_GRACE
        done: Completed | None = None
        with anyio.CancelScope() as waiting:
            self._waiting.add(waiting)
            try:
                with anyio.move_on_after(bound):
                    done = await self.inner.run(argv, stdin=stdin, timeout=timeout)
            finally:
                self._waiting.discard(waiting)
        if done is None:
            # Stopped by another command's stall, or not even the transport's own
            # timeout came back: the channel is stuck either way.
            self._stall(f"host stopped answering: no reply within {bound}s")
            raise TransportError(self.host, self.stalled or "host stopped answering")
        if done.timed_out and timeout is not None:
            self._stall(f"host stopped answering: {argv[0]} gave no reply within {timeout:g}s")
        return done  # a command's own timeout: its caller records it as such

    async def put_file(self, source: Path, dest: str, *, mode: int = 0o644) -> None:
        self._refuse()
        await self.inner.put_file(source, dest, mode=mode)

    async def get_file(self, source: str, dest: Path) -> None:
        self._refuse()
        await self.inner.get_file(source, dest)

    def describe(self) -> dict[str, str]:
        return self.inner.describe()

    async def aclose(self) -> None:
        await self.inner.aclose()
