"""Privilege floor: the workload starts with no more than a container's baseline,
root inside cannot reach the host, and an unprivileged process cannot gain privilege."""

from __future__ import annotations

from harness.scenarios.base import Check, Control, Need, Rule, Scenario

PRIVILEGE = Scenario(
    name="privilege-floor",
    probe_name="privilege",
    summary="capabilities as started; as root: sysctl, mount, release_agent, open_by_handle_at,"
    " mknod; then unprivileged: setuid and file-capability helpers, setuid(0), capset, ambient",
    property="privilege_floor",
    needs=frozenset({Need.HELPERS, Need.HOST_FS}),
    info=("creds",),
    checks=(
        Check(
            "priv-start",
            "no capability beyond Docker's default set in the initial user namespace",
            rule=Rule.CAPS,
        ),
        Check(
            "priv-root-sysctl",
            "as started: write a /proc/sys value (its own value back)",
            rule=Rule.ROOT,
        ),
        Check("priv-root-mount", "as started: mount a tmpfs and a proc", rule=Rule.ROOT),
        Check(
            "priv-root-release-agent",
            "as started: open a cgroup v1 release_agent for writing",
            rule=Rule.ROOT,
        ),
        Check(
            "priv-root-handle",
            "as started: open_by_handle_at (CAP_DAC_READ_SEARCH)",
            rule=Rule.ROOT,
        ),
        # A host whose own devices cgroup forbids reading its disk (this lab's) gives
        # this attempt no working control: a read is proof, a refusal is recorded.
        Check(
            "priv-root-mknod",
            "as started: mknod a disk's block device and read a sector",
            control=Control.NONE,
            rule=Rule.ROOT,
        ),
        Check(
            "priv-root-sys-module",
            "as started: CAP_SYS_MODULE held (nothing loaded)",
            rule=Rule.ROOT,
        ),
        Check("priv-setuid-exec", "exec a setuid-root helper as an unprivileged uid"),
        Check("priv-fcap-exec", "exec a helper carrying cap_net_raw+ep"),
        Check("priv-setuid0", "setuid(0) as an unprivileged uid", control=Control.NONE),
        Check("priv-capset", "raise CAP_SYS_ADMIN with capset", control=Control.NONE),
        Check("priv-ambient", "PR_CAP_AMBIENT_RAISE of CAP_NET_RAW", control=Control.NONE),
    ),
)
