"""Kata Containers, through containerd: `ctr run --runtime SHIM --rootfs DIR`.

The rootfs folder holds the probe and empty mount points; the granted folders
are bind mounts (the helpers read-only and nosuid), /tmp is a private tmpfs,
and ctr's own defaults add no_new_privs, a new network namespace with no
interface, and Docker's capability set. The shim is a name: containerd's runc
shim (`io.containerd.runc.v2`) runs the same adapter where Kata cannot, which
the runtime-identity check then reports, since that is the host's kernel.

As for OCI runtimes, the lifecycle (make the rootfs, run, remove it) is one
command; if it does not end cleanly, cleanup kills and deletes the task and
the container by id.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from harness.matrix.models import KataRuntimeSpec
from harness.runtimes.base import CellPaths, Identity, Invocation, Runtime

# $1 cell folder, $2 probe; the rest is the `ctr run` argv.
LIFECYCLE = r"""set -eu
dir=$1; probe=$2; shift 2
for d in allowed helpers proc dev sys tmp run; do mkdir -p "$dir/rootfs/$d"; done
cp "$probe" "$dir/rootfs/probe"
status=0
"$@" < /dev/null || status=$?
rm -rf "$dir"
exit "$status"
"""

# $1 ctr, $2 address, $3 namespace, $4 container id, $5 cell folder.
CLEANUP = r"""ctr=$1; address=$2; ns=$3; id=$4; dir=$5
c() { "$ctr" --address "$address" --namespace "$ns" "$@"; }
c tasks kill --signal SIGKILL "$id" >/dev/null 2>&1
i=0
while [ $i -lt 20 ] && c tasks ls -q 2>/dev/null | grep -qx "$id"; do
  c tasks delete --force "$id" >/dev/null 2>&1
  i=$((i + 1)); sleep 0.25
done
c containers delete "$id" >/dev/null 2>&1
rm -rf -- "$dir"
exit 0
"""

# $1 ctr, $2 address, $3 shim name.
FINGERPRINT = r"""ctr=$1; address=$2; shim=$3
if ! out=$("$ctr" --address "$address" --connect-timeout 3s version 2>&1); then
  why=$(printf '%s' "$out" | tail -n 1 | cut -c 1-200)
  echo "missing=containerd is not reachable at $address: $why"
  exit 0
fi
printf '%s\n' "$out"
case $shim in
  /*) bin=$shim ;;
  io.containerd.*.*) bin=containerd-shim-$(printf '%s' "${shim#io.containerd.}" | tr . -) ;;
  *) exit 0 ;;
esac
if path=$(command -v "$bin"); then echo "shim_binary=$path"
else echo "missing=shim $bin ($shim) not found on this host"; fi
"""


class KataRuntime(Runtime):
    """A containerd shim (Kata's, or any other) driven by `ctr run`."""

    kind = "kata"
    own_kernel = True
    own_root = True
    fixed_grants = True
    spec: KataRuntimeSpec

    @property
    def binary(self) -> str:
        return self.spec.binary

    def ctr(self) -> list[str]:
        return [self.binary, "--address", self.spec.address, "--namespace", self.spec.namespace]

    def version_argv(self) -> tuple[str, ...] | None:
        return (
            "sh", "-c", FINGERPRINT, "harness-kata-id",
            self.binary, self.spec.address, self.spec.runtime,
        )  # fmt: skip

    def identify(self, output: str) -> Identity:
        versions = re.findall(r"^\s*Version:\s*(\S+)", output, flags=re.MULTILINE)
        seen = dict(line.split("=", 1) for line in output.splitlines() if re.match(r"^\w+=", line))
        server = versions[1] if len(versions) > 1 else None
        fingerprint = {
            "shim": self.spec.runtime,
            "shim_binary": seen.get("shim_binary", "unknown"),
            "ctr_version": versions[0] if versions else "unknown",
            "containerd_version": server or "unknown",
            "address": self.spec.address,
            "namespace": self.spec.namespace,
        }
        version = f"containerd {server}" if server else None
        return Identity(version=version, fingerprint=fingerprint, unavailable=seen.get("missing"))

    def run_argv(self, paths: CellPaths, probe_args: Sequence[str]) -> list[str]:
        """`ctr run` for one cell: the rootfs, the granted folders, the probe's args."""
        mounts = ["type=tmpfs,src=tmpfs,dst=/tmp,options=nosuid:nodev:mode=1777"]
        for source, role, options in (
            (paths.allowed, "allowed", "rbind:rw"),
            (paths.helpers, "helpers", "rbind:ro:nosuid:nodev"),
        ):
            if source is None:
                continue
            if any(c in source for c in ",:"):
                raise ValueError(f"a granted folder's path cannot hold ',' or ':': {source}")
            target = self.inside(source, role=role, cell_id=paths.cell_id)
            mounts.append(f"type=bind,src={source},dst={target},options={options}")
        return [
            *self.ctr(), "run", "--rm", "--runtime", self.spec.runtime,
            "--rootfs", "--read-only",
            *(x for m in mounts for x in ("--mount", m)),
            *self.spec.flags,
            f"{paths.cell_dir}/rootfs", paths.cell_id, "/probe", *probe_args,
        ]  # fmt: skip

    def invocation(self, paths: CellPaths, probe_args: Sequence[str]) -> Invocation:
        argv = (
            "sh", "-c", LIFECYCLE, "harness-kata", paths.cell_dir, paths.probe,
            *self.run_argv(paths, probe_args),
        )  # fmt: skip
        cleanup = (
            "sh", "-c", CLEANUP, "harness-kata-cleanup",
            self.binary, self.spec.address, self.spec.namespace, paths.cell_id, paths.cell_dir,
        )  # fmt: skip
        return Invocation(argv=argv, cleanup=(cleanup,))
