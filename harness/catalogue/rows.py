"""The shape of a catalogue row."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

# A row harness should attempt but does not yet: the completeness test lists them.
NOT_YET = "not attempted yet"


class Surface(StrEnum):
    """Which property a row's operations threaten."""

    FILESYSTEM = "filesystem"
    PRIVILEGE = "privilege"
    NETWORK = "network"


@dataclass(frozen=True, slots=True)
class Row:
    """One kernel operation (or a family the kernel groups as one), and how harness
    attempts it.

    `checks` are ids of scenario checks (`harness scenarios --checks`) that attempt
    it; a row without checks says in `unseen` why harness cannot see it (or why it is
    not a violation of its property). `target` is what the attempt is made against (a
    sentinel, a helper, a canary address); `kernels` where the operation exists; `ways`
    the other entries into it that its checks also take."""

    surface: Surface
    group: str  # the kernel's own grouping (a Landlock access right, a syscall family)
    operation: str
    syscalls: tuple[str, ...]
    checks: tuple[str, ...] = ()
    target: str = ""
    kernels: str = "all"
    unseen: str = ""
    # The entries the checks take into the operation besides the native syscalls
    # above: another ABI's ("i386: chmod, fchmodat", the int $0x80 entry of an x86_64
    # kernel), an io_uring opcode, a descriptor held. A filter that closes the native
    # calls and leaves one of these open is caught only if it is tried.
    ways: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        """A stable name for the row: its surface and operation."""
        return f"{self.surface}: {self.operation}"
