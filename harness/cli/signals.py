"""Run a long job so that SIGINT or SIGTERM stop it cleanly.

The job is cancelled (its cleanup runs shielded) and the signal is reported to
the caller, which keeps what finished and exits 130 or 143.
"""

from __future__ import annotations

import signal
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio

T = TypeVar("T")


def run_until_signal(job: Callable[[], Awaitable[T]]) -> tuple[T | None, int | None]:
    """(the job's result or None if interrupted, the signal number or None)."""

    async def supervise() -> tuple[T | None, int | None]:
        caught: list[int] = []
        result: list[T] = []
        try:
            async with anyio.create_task_group() as tg:

                async def watch() -> None:
                    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                        async for signum in signals:
                            caught.append(signum)
                            tg.cancel_scope.cancel()
                            return

                async def main() -> None:
                    result.append(await job())
                    tg.cancel_scope.cancel()

                tg.start_soon(watch)
                tg.start_soon(main)
        except BaseExceptionGroup as group:
            # One failing task (bad input, an unwritable folder): raise it as itself,
            # so the CLI maps it to its exit code instead of calling it a bug.
            if len(group.exceptions) == 1:
                raise group.exceptions[0] from None
            raise
        return (result[0] if result else None), (caught[0] if caught else None)

    return anyio.run(supervise, backend="asyncio")
