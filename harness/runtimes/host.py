"""No sandbox at all: the positive control that proves each attempt can succeed."""

from __future__ import annotations

from collections.abc import Sequence

from harness.runtimes.base import CellPaths, Invocation, Runtime


class HostRuntime(Runtime):
    kind = "host"

    @property
    def binary(self) -> str:
        return "true"

    def invocation(self, paths: CellPaths, probe_args: Sequence[str]) -> Invocation:
        return Invocation(argv=(paths.probe, *probe_args))
