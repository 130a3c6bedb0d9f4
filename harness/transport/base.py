"""What every transport offers: run an argv, move a file, close.

The runner never asks which transport it holds. Commands are argv lists, never
shell strings; a transport that must speak a shell (SSH) quotes every element.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Self

# What a transport keeps of each output stream of one command; the rest is read
# and dropped, so a flooding host costs bounded memory.
MAX_OUTPUT = 32 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Completed:
    """How a command ended. `timed_out` means the transport gave up waiting and
    killed what it could; stdout then holds whatever arrived before that."""

    argv: tuple[str, ...]
    exit_status: int | None
    signal: str | None
    stdout: str
    stderr: str
    elapsed: float
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.exit_status == 0 and not self.timed_out


class Transport(abc.ABC):
    """A connection to one host. Use `async with` so it is always closed."""

    host: str

    async def connect(self) -> None:  # noqa: B027 - optional hook
        """Open the connection eagerly, so a dead host fails before any cell starts."""

    @abc.abstractmethod
    async def run(
        self,
        argv: Sequence[str],
        *,
        stdin: bytes | None = None,
        timeout: float | None = None,
    ) -> Completed:
        """Run argv on the host; never raises for a non-zero exit or a timeout."""

    @abc.abstractmethod
    async def put_file(self, source: Path, dest: str, *, mode: int = 0o644) -> None:
        """Copy a local file to `dest` on the host (parent folder must exist)."""

    @abc.abstractmethod
    async def get_file(self, source: str, dest: Path) -> None:
        """Copy a file from the host to a local path."""

    def describe(self) -> dict[str, str]:
        """How the connection was made (negotiated algorithms...), for the manifest."""
        return {}

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release the connection."""

    async def __aenter__(self) -> Self:
        await self.connect()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
