"""What a runtime is: a rewrite of "run the probe with these args" into an argv.

Runtimes never open connections; the runner hands their argv to a transport.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from harness.matrix.models import RuntimeSpec

# Where a runtime that builds the sandbox's root (`fixed_grants`) mounts the granted
# folders, whatever their paths on the host: the probe is told these paths, and its
# mount table is read against them.
ALLOWED_INSIDE = "/allowed"
HELPERS_INSIDE = "/helpers"


def tagged(cell_id: str) -> str:
    """The pattern (pgrep's extended regex) of a command line that names the cell as
    a word of its own: the probe's `--tag ID`, gVisor's container id, a VMM's `-name`.
    Never the id inside a path: another cell's sandbox may be handed a file of this
    cell's folder (a host unix listener there, in its `--host-unix`), and is not this
    cell's. The bracket keeps the pattern from matching the shell that runs it; ids
    have a fixed width, so one never matches a prefix of another."""
    return f"(^| )[{cell_id[0]}]{cell_id[1:]}( |$)"


@dataclass(frozen=True, slots=True)
class CellPaths:
    """Where a cell may put things on its host. `cell_dir` does not exist yet;
    the invocation creates it if it needs it and cleanup removes it."""

    probe: str
    workdir: str
    cell_dir: str
    cell_id: str
    allowed: str | None = None  # the filesystem scenario's allowed folder (host path)
    helpers: str | None = None  # the privilege helpers' folder (host path)


@dataclass(frozen=True, slots=True)
class Invocation:
    """The one command that starts the sandbox and runs the probe inside it,
    plus the commands that tear it down if it did not end cleanly."""

    argv: tuple[str, ...]
    stdin: bytes | None = None
    cleanup: tuple[tuple[str, ...], ...] = ()


@dataclass(frozen=True, slots=True)
class Identity:
    """What a runtime's version command showed: the version, a fingerprint for the
    manifest (VMM, accelerator, guest kernel, shim...), and, when the runtime
    cannot run on this host, why."""

    version: str | None
    fingerprint: dict[str, str] = field(default_factory=dict)
    unavailable: str | None = None


class Runtime(abc.ABC):
    """A named runtime entry from a matrix, bound to its validated spec."""

    kind: ClassVar[str]
    #: True when the sandbox brings its own kernel (runsc's sentry, a VM guest):
    #: seeing the host's kernel release inside it means the runtime is not what it claims.
    own_kernel: ClassVar[bool] = False
    #: True when a failing version command means the binary is broken (runsc, runc);
    #: a generic wrapper may simply have no --version.
    version_required: ClassVar[bool] = False
    #: False when the sandbox gets a copy of the allowed folder (a VM's initramfs)
    #: rather than the host's folder itself; then writes inside are not seen outside.
    shares_allowed: ClassVar[bool] = True
    #: True when the sandbox's root is one harness builds (a bundle's rootfs, a
    #: guest's initramfs): a host-backed mount at "/" is then a grant.
    own_root: ClassVar[bool] = False
    #: True when the sandbox's root on the host is what the matrix says (`root`), not
    #: a folder harness made: the judge checks the claim before it grants it.
    root_declared: ClassVar[bool] = False
    #: True when the granted folders appear at ALLOWED_INSIDE and HELPERS_INSIDE
    #: (a bundle's bind mounts, a guest's initramfs) rather than at their host paths.
    fixed_grants: ClassVar[bool] = False

    def __init__(self, name: str, spec: RuntimeSpec) -> None:
        self.name = name
        self.spec = spec

    @property
    def promises_own_kernel(self) -> bool:
        return self.own_kernel

    @property
    @abc.abstractmethod
    def binary(self) -> str:
        """The program that must exist on the host for this runtime to work."""

    def version_argv(self) -> tuple[str, ...] | None:
        """A command whose output identifies the runtime's version, if it has one."""
        return None

    def identify(self, output: str) -> Identity:
        """Read the version command's output; most runtimes print just a version."""
        return Identity(version=" ".join(output.split())[:300] or None)

    def filter_output(self, stdout: str) -> str:
        """The probe's lines from what the sandbox printed; a console that mixes
        in other text (a VM's serial port) drops it here."""
        return stdout

    def host_root(self, paths: CellPaths) -> str | None:
        """The host folder that is the sandbox's root, granted as its own: the bundle's
        rootfs harness makes for the cell (none made, none there)."""
        return f"{paths.cell_dir}/rootfs"

    def inside(self, host_path: str, *, role: str, cell_id: str) -> str:
        """Where a host folder granted to the sandbox (`allowed`, `helpers`) appears
        inside it: the fixed path for its role when the runtime mounts grants there,
        else the same path (the sandbox shares the host's view)."""
        if self.fixed_grants:
            return ALLOWED_INSIDE if role == "allowed" else HELPERS_INSIDE
        return host_path

    @abc.abstractmethod
    def invocation(self, paths: CellPaths, probe_args: Sequence[str]) -> Invocation:
        """Turn a probe run into the argv that runs it inside this sandbox."""
