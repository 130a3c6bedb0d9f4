"""Runtime kinds by name. The spec validator and this registry share one list."""

from __future__ import annotations

from harness.errors import UsageError
from harness.matrix.models import RUNTIME_SPECS, RuntimeSpec
from harness.runtimes.base import CellPaths, Invocation, Runtime
from harness.runtimes.command import CommandRuntime
from harness.runtimes.existing import ExecRuntime
from harness.runtimes.host import HostRuntime
from harness.runtimes.kata import KataRuntime
from harness.runtimes.microvm import MicrovmRuntime
from harness.runtimes.oci import OciRuntime, RunscRuntime

RUNTIMES: dict[str, type[Runtime]] = {
    cls.kind: cls
    for cls in (
        HostRuntime,
        RunscRuntime,
        OciRuntime,
        CommandRuntime,
        MicrovmRuntime,
        KataRuntime,
        ExecRuntime,
    )
}
assert set(RUNTIMES) == set(RUNTIME_SPECS), "spec models and runtime classes must match"

__all__ = ["RUNTIMES", "CellPaths", "Invocation", "Runtime", "make_runtime"]


def make_runtime(name: str, spec: RuntimeSpec) -> Runtime:
    """Bind a validated runtime entry to its implementation."""
    try:
        cls = RUNTIMES[spec.kind]
    except KeyError:
        known = ", ".join(RUNTIMES)
        raise UsageError(f"unknown runtime kind {spec.kind!r} (expected one of: {known})") from None
    return cls(name, spec)
