"""Any wrapper that can be written as an argv template (bwrap, firejail, nsjail...).

`{probe}` and `{args}` must be whole elements: the probe path is substituted and
the probe's arguments are spliced in, so no value is ever joined into a string.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.matrix.models import CommandRuntimeSpec
from harness.runtimes.base import CellPaths, Invocation, Runtime


class CommandRuntime(Runtime):
    kind = "command"
    spec: CommandRuntimeSpec

    @property
    def promises_own_kernel(self) -> bool:
        return self.spec.own_kernel

    @property
    def binary(self) -> str:
        # A template that runs the probe directly needs nothing installed.
        return "true" if self.spec.argv[0] == "{probe}" else self.spec.argv[0]

    def version_argv(self) -> tuple[str, ...] | None:
        return None if self.binary == "true" else (self.binary, "--version")

    def inside(self, host_path: str, *, role: str) -> str:
        inside = self.spec.allowed_inside if role == "allowed" else self.spec.helpers_inside
        return inside or host_path

    def invocation(self, paths: CellPaths, probe_args: Sequence[str]) -> Invocation:
        empty = f"{paths.workdir}/empty"  # made by staging; stands in for an ungranted folder
        values = {
            "{probe}": paths.probe,
            "{allowed}": paths.allowed or empty,
            "{helpers}": paths.helpers or empty,
        }
        argv: list[str] = []
        for element in self.spec.argv:
            if element == "{args}":
                argv.extend(probe_args)
            else:
                argv.append(values.get(element, element))
        if paths.allowed is None or paths.helpers is None:
            argv = [
                "sh",
                "-c",
                'mkdir -p "$1" && shift && exec "$@"',
                "harness-cmd",
                paths.cell_dir,
                *argv,
            ]
        return Invocation(argv=tuple(argv))
