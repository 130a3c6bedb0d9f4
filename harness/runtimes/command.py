"""Any wrapper that can be written as an argv template (bwrap, firejail, nsjail...).

`{probe}` and `{args}` must be whole elements: the probe path is substituted and
the probe's arguments are spliced in, so no value is ever joined into a string.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.runtimes.base import CellPaths, Invocation, Runtime
from harness.spec.models import CommandRuntimeSpec


class CommandRuntime(Runtime):
    kind = "command"
    spec: CommandRuntimeSpec

    @property
    def promises_own_kernel(self) -> bool:
        return self.spec.own_kernel

    @property
    def binary(self) -> str:
        return self.spec.argv[0]

    def version_argv(self) -> tuple[str, ...] | None:
        return (self.binary, "--version")

    def invocation(self, paths: CellPaths, probe_args: Sequence[str]) -> Invocation:
        argv: list[str] = []
        for element in self.spec.argv:
            if element == "{args}":
                argv.extend(probe_args)
            elif element == "{probe}":
                argv.append(paths.probe)
            elif element == "{cell_dir}":
                argv.append(paths.cell_dir)
            else:
                argv.append(element)
        return Invocation(argv=tuple(argv), cleanup=(("rm", "-rf", "--", paths.cell_dir),))
