"""Any wrapper that can be written as an argv template (bwrap, firejail, nsjail...).

`{probe}` and `{args}` must be whole elements: the probe path is substituted and
the probe's arguments are spliced in, so no value is ever joined into a string.
`{policy}` is spliced in as `probe confine`'s options derived from the runtime's
policy (`policy_confine`): a co-located launcher that allows what the policy says.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.matrix.models import CommandRuntimeSpec
from harness.policy.models import Policy
from harness.runtimes.base import CellPaths, Invocation, Runtime

# Who a launcher derived from a policy runs the workload as where the policy names
# no one: OpenShell's default is a sandbox user that is not root; this lab's is nobody.
DEFAULT_USER = "65534"


def policy_confine(policy: Policy | None, values: dict[str, str]) -> list[str]:
    """`probe confine`'s options for what `policy` allows: reading beneath each
    read_only path, everything beneath each read_write one (paths this host lacks
    skipped), run as its user and group (nobody where it names none); and what harness
    itself needs: the probe and the helpers readable, the allowed folder and /dev/null
    writable."""
    if policy is None:  # the matrix loader refuses {policy} without one
        raise ValueError("{policy} without a policy")
    fs, process = policy.filesystem_policy, policy.process
    user = process.run_as_user if process.run_as_user is not None else DEFAULT_USER
    group = process.run_as_group
    if group is None and process.run_as_user is None:
        group = DEFAULT_USER
    out = ["--skip-missing", "--user", str(user)]
    out += ["--group", str(group)] if group is not None else []
    out += [a for path in fs.read_only for a in ("--read", path)]
    out += [a for path in fs.read_write for a in ("--write", path)]
    out += ["--read", values["{probe}"], "--read", values["{helpers}"]]
    out += ["--write", values["{allowed}"], "--write", "/dev/null"]
    return out


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

    def inside(self, host_path: str, *, role: str, cell_id: str) -> str:
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
            elif element == "{policy}":
                argv.extend(policy_confine(self.spec.policy, values))
            else:
                argv.append(values.get(element, element))
        return Invocation(argv=tuple(argv))
