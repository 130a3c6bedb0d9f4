"""Privilege floor: the workload starts with no more than a container's baseline,
root inside cannot reach the host, and an unprivileged process cannot gain privilege."""

from __future__ import annotations

from harness.scenarios.base import Check, Control, Need, Rule, Scenario


def _as_root(check_id: str, doc: str, control: Control = Control.HOST) -> Check:
    """An attempt made as started (root, if the sandbox starts so), before dropping
    privileges: a success inside the sandbox's own kernel reaches no host."""
    return Check(check_id, f"as started: {doc}", control=control, rule=Rule.ROOT)


PRIVILEGE = Scenario(
    name="privilege-floor",
    summary="capabilities as started; as root: sysctl, mount, release_agent, open_by_handle_at,"
    " mknod, securebits, the kernel's own operations; then unprivileged: setuid, setgid,"
    " file-capability and inheritable helpers, setuid(0), capset, ambient; other processes'"
    " memory",
    property="privilege_floor",
    needs=frozenset({Need.HELPERS, Need.HOST_FS}),
    info=("creds", "userns"),
    checks=(
        Check(
            "priv-start",
            "no capability beyond Docker's default set in the initial user namespace",
            rule=Rule.CAPS,
        ),
        _as_root(
            "priv-root-sysctl",
            "write a /proc/sys value, /sys/kernel/uevent_helper or a module parameter"
            " (each its own value back)",
        ),
        _as_root("priv-root-mount", "mount a tmpfs and a proc"),
        _as_root("priv-root-release-agent", "open a cgroup v1 release_agent for writing"),
        _as_root("priv-root-handle", "open_by_handle_at (CAP_DAC_READ_SEARCH)"),
        # A host whose own devices cgroup forbids reading its disk (this lab's) gives
        # this attempt no working control: a read is proof, a refusal is recorded.
        _as_root(
            "priv-root-mknod",
            "read a sector of any block device in /dev, or of a mounted disk through mknod",
            Control.NONE,
        ),
        _as_root("priv-root-sys-module", "CAP_SYS_MODULE held (nothing loaded)"),
        Check("priv-setuid-exec", "exec a setuid-root helper as an unprivileged uid"),
        Check("priv-fcap-exec", "exec a helper carrying cap_net_raw+ep"),
        # Only a launcher that leaves capabilities inheritable makes this route: the
        # host control, an unprivileged uid of the host's, has none to carry.
        Check(
            "priv-inh-exec",
            "exec a helper carrying every capability inheritable (=ei) as an unprivileged"
            " uid: it gets the workload's inheritable set",
            control=Control.NONE,
        ),
        Check(
            "priv-setuid0",
            "setuid(0), or else setgid(0), as an unprivileged uid",
            control=Control.NONE,
        ),
        Check(
            "priv-capset",
            "raise CAP_SYS_ADMIN, and any capability permitted but not effective, with capset",
            control=Control.NONE,
        ),
        Check(
            "priv-ambient",
            "PR_CAP_AMBIENT_RAISE of CAP_NET_RAW, and of any capability permitted and inheritable",
            control=Control.NONE,
        ),
        Check("priv-setgid-exec", "exec a setgid-root helper as an unprivileged uid (egid 0)"),
        # Nothing to clear and nothing to gain on the host: the exec itself is the proof.
        _as_root(
            "priv-securebits",
            "clear every securebit left unlocked, then exec: no capability gained",
            Control.NONE,
        ),
        Check(
            "priv-proc-access",
            "process_vm_readv, pidfd_getfd, ptrace on every visible process not the check's"
            " own, as started and as the unprivileged uid (the filesystem fixture's decoy)",
            rule=Rule.ROOT,
        ),
        _as_root(
            "priv-root-kernel",
            "reboot, kexec_load, adjtimex, swapon, acct, syslog, sethostname, ioperm, bpf,"
            " perf_event_open, each asked so that success changes nothing",
        ),
    ),
)
