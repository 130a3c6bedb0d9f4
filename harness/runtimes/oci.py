"""OCI runtimes (runc, crun, gVisor's runsc): run the probe from a generated bundle.

For runsc this is `runsc run`, not `runsc do`, which exposes the whole host root:
the bundle's rootfs holds the probe and nothing else, so the sandbox sees only
what the bundle grants. State lives in a private `--root` so harness never
touches other containers.

The whole lifecycle (make the bundle, run, remove it) is one command on the
host, so a cell costs one round trip; cleanup runs only when it did not finish.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from harness.caps import DOCKER_DEFAULT_CAPS
from harness.matrix.models import Bind, OciRuntimeSpec, RunscRuntimeSpec
from harness.runtimes.base import ALLOWED_INSIDE, HELPERS_INSIDE, CellPaths, Invocation, Runtime

# A fixed script; every value reaches it as a positional argument, never as text.
LIFECYCLE = r"""set -eu
dir=$1; probe=$2; root=$3; id=$4; shift 4
mkdir -p "$dir/rootfs/allowed" "$dir/rootfs/helpers"
cp "$probe" "$dir/rootfs/probe"
cat > "$dir/config.json"
status=0
"$@" --root "$root" run --bundle "$dir" "$id" || status=$?
rm -rf "$dir"
exit "$status"
"""

# A typical container's set (Docker's default): enough to drop to another uid,
# which the privilege scenario does before each attempt.
DEFAULT_CAPS = sorted(DOCKER_DEFAULT_CAPS)

# Docker's defaults (moby `oci/defaults.go`): what a root workload must not read
# (masked) or write (read-only), /proc/sys above all, whose sysctls are the host's.
MASKED_PATHS = [
    "/proc/asound", "/proc/acpi", "/proc/interrupts", "/proc/kcore", "/proc/keys",
    "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug",
    "/proc/scsi", "/sys/firmware", "/sys/devices/virtual/powercap",
]  # fmt: skip
READONLY_PATHS = ["/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"]


def bundle_config(
    *,
    args: Sequence[str],
    uid: int,
    allowed: str | None = None,
    helpers: str | None = None,
    no_new_privs: bool = True,
    nosuid: bool = True,
    network_namespace: bool = True,
    netns_path: str | None = None,
    hostname: str = "harness",
    cap_add: Sequence[str] = (),
    masked_paths: bool = True,
    host_pid: bool = False,
    binds: Sequence[Bind] = (),
    sysfs: str = "none",
) -> dict[str, Any]:
    """An OCI runtime config granting a read-only rootfs with the probe, /proc,
    private tmpfs mounts, and exactly the folders the scenarios grant: the
    allowed folder (read-write) and the privilege helpers (read-only). The
    arguments after `hostname` exist to build mutants."""
    caps = sorted({*DEFAULT_CAPS, *cap_add}) if uid == 0 else []
    sys_opts = ["nosuid", "noexec", "nodev", *(["ro"] if sysfs == "ro" else [])]
    masking = {"maskedPaths": MASKED_PATHS, "readonlyPaths": READONLY_PATHS} if masked_paths else {}
    granted = []
    if allowed:
        granted.append(
            {
                "destination": ALLOWED_INSIDE,
                "type": "bind",
                "source": allowed,
                "options": ["rbind", "rw"],
            }
        )
    if helpers:
        options = ["rbind", "ro", *(["nosuid"] if nosuid else [])]
        granted.append(
            {"destination": HELPERS_INSIDE, "type": "bind", "source": helpers, "options": options}
        )
    return {
        "ociVersion": "1.0.2",
        "process": {
            "terminal": False,
            "user": {"uid": uid, "gid": uid},
            "args": ["/probe", *args],
            "env": ["PATH=/", "HOME=/tmp"],
            "cwd": "/",
            "capabilities": {k: caps for k in ("bounding", "effective", "permitted")},
            "rlimits": [{"type": "RLIMIT_NOFILE", "hard": 1024, "soft": 1024}],
            "noNewPrivileges": no_new_privs,
        },
        "root": {"path": "rootfs", "readonly": True},
        "hostname": hostname,
        "mounts": [
            {"destination": "/proc", "type": "proc", "source": "proc"},
            {
                "destination": "/dev",
                "type": "tmpfs",
                "source": "tmpfs",
                "options": ["nosuid", "strictatime", "mode=755", "size=65536k"],
            },
            {
                "destination": "/tmp",
                "type": "tmpfs",
                "source": "tmpfs",
                "options": ["nosuid", "nodev", "mode=1777"],
            },
            *granted,
            *(
                [{"destination": "/sys", "type": "sysfs", "source": "sysfs", "options": sys_opts}]
                if sysfs != "none"
                else []
            ),
            *(
                {
                    "destination": b.destination,
                    "type": "bind",
                    "source": b.source,
                    "options": ["rbind", "ro" if b.readonly else "rw"],
                }
                for b in binds
            ),
        ],
        "linux": {
            "namespaces": [
                {"type": t, **({"path": netns_path} if t == "network" and netns_path else {})}
                for t in ("pid", "network", "ipc", "uts", "mount")
                if (t != "network" or network_namespace) and (t != "pid" or not host_pid)
            ],
            **masking,
        },
    }


class OciRuntime(Runtime):
    """runc, crun or any runtime with runc's command line."""

    kind = "oci"
    own_root = True
    fixed_grants = True
    version_required = True
    spec: OciRuntimeSpec | RunscRuntimeSpec

    @property
    def binary(self) -> str:
        return self.spec.binary

    @property
    def promises_own_kernel(self) -> bool:
        return self.own_kernel or getattr(self.spec, "own_kernel", False)

    def global_flags(self) -> list[str]:
        return list(self.spec.flags)

    def network_namespace(self) -> bool:
        return True

    def netns_path(self) -> str | None:
        """An existing network namespace to join, e.g. one routed out through a veth."""
        name = self.spec.netns
        if not name:
            return None
        return name if "/" in name else f"/var/run/netns/{name}"

    def version_argv(self) -> tuple[str, ...] | None:
        return (self.binary, "--version")

    def state_root(self, paths: CellPaths) -> str:
        return f"{paths.workdir}/runsc-root"

    def invocation(self, paths: CellPaths, probe_args: Sequence[str]) -> Invocation:
        config = bundle_config(
            args=probe_args,
            uid=self.spec.user,
            allowed=paths.allowed,
            helpers=paths.helpers,
            no_new_privs=self.spec.no_new_privs,
            nosuid=self.spec.nosuid,
            network_namespace=self.network_namespace(),
            netns_path=self.netns_path(),
            cap_add=self.spec.cap_add,
            masked_paths=self.spec.masked_paths,
            host_pid=self.spec.host_pid,
            binds=self.spec.binds,
            sysfs=self.spec.sysfs,
        )
        root = self.state_root(paths)
        argv = (
            "sh", "-c", LIFECYCLE, "harness-runsc",
            paths.cell_dir, paths.probe, root, paths.cell_id,
            self.binary, *self.global_flags(),
        )  # fmt: skip
        return Invocation(
            argv=argv,
            stdin=json.dumps(config).encode(),
            cleanup=(
                (self.binary, "--root", root, "delete", "--force", paths.cell_id),
                ("rm", "-rf", "--", paths.cell_dir),
            ),
        )


class RunscRuntime(OciRuntime):
    """gVisor: the sentry is the sandbox's kernel."""

    kind = "runsc"
    own_kernel = True
    spec: RunscRuntimeSpec

    def global_flags(self) -> list[str]:
        flags = [f"--platform={self.spec.platform}"] if self.spec.platform else []
        return [*flags, *self.spec.flags]

    def network_namespace(self) -> bool:
        # With --network=host runsc uses the host's stack only when the bundle asks
        # for no network namespace of its own (as Docker's host networking does).
        return "--network=host" not in self.spec.flags
