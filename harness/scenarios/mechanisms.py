"""Kernel-mechanism facts, measured for audit only.

These are what the old conformance check demanded. They are recorded and can be
held to an expected value, but a fact never makes a security property pass.
"""

from __future__ import annotations

from harness.scenarios.base import Scenario

# What the probe measures for each fact, for docs/probe-protocol.md.
MEASURED: dict[str, str] = {
    "landlock_abi": "the ABI version returned by `landlock_create_ruleset(..., VERSION)`",
    "landlock_enforces": (
        "an empty ruleset that handles READ_FILE makes the probe's own executable EACCES"
    ),
    "seccomp_filter": "an allow-all filter can be installed",
    "seccomp_new_listener": "`SECCOMP_FILTER_FLAG_NEW_LISTENER` returns a listener",
    "seccomp_notif_round_trip": (
        "the supervisor answers 424242, and the target's `getppid()` returns it"
    ),
    "seccomp_addfd": "`NOTIF_ADDFD` with `ADDFD_FLAG_SEND` installs a pipe fd as the result",
    "seccomp_id_validation": (
        "`NOTIF_ID_VALID` succeeds while the notification is pending, and fails with ENOENT "
        "once it has been answered"
    ),
    "seccomp_retained_socket_operation": (
        "`a0` is one end of a UNIX datagram socketpair. The supervisor takes it with "
        "`pidfd_open` and `pidfd_getfd`, checks `SO_TYPE` and the family, and sends a byte "
        "through it. The target reads the byte from the other end."
    ),
    "seccomp_proc_fd_identity": (
        "`a0` is an fd on the probe's executable. `readlink(/proc/<pid>/fd/<a0>)` must name "
        "that file."
    ),
    "seccomp_task_memory_read": (
        "`a0`/`a1` point at a buffer that holds a marker with the target's pid. The "
        "supervisor reads it with `process_vm_readv`, or falls back to `/proc/<pid>/mem`. "
        "`detail` names the method that worked."
    ),
    "seccomp_task_memory_write": (
        "The supervisor writes a new marker into that buffer (with `process_vm_writev`, or "
        "falls back to `/proc/<pid>/mem`) and then answers. The target checks its buffer. "
        "`detail` names the method."
    ),
    "seccomp_cancellation": (
        "The supervisor sends SIGUSR1, whose handler has no SA_RESTART. The target's "
        "`getppid()` must fail with EINTR, and then `NOTIF_SEND` on the old id must fail "
        "with ENOENT."
    ),
    "landlock_allow_deny": (
        "A ruleset handles READ_FILE and READ_DIR, and a PATH_BENEATH rule allows only "
        "`allowed/`. `allowed/file` must stay readable, and `denied/file` must fail with "
        "EACCES. The tree is created under `$TMPDIR`, `/tmp`, `/var/tmp`, `/dev/shm` or the "
        "cwd, and removed afterwards. If none of these is writable, the status is `error`."
    ),
    "kernel_release, kernel_machine": "what `uname` says",
}

MECHANISMS = Scenario(
    name="mechanisms",
    summary="Landlock and seccomp facts, and the kernel the sandbox reports",
    facts={
        "landlock_abi": "Landlock ABI version, or the errno that refused it",
        "landlock_enforces": "an empty ruleset handling READ_FILE turns a readable file EACCES",
        "seccomp_filter": "a seccomp BPF filter can be installed",
        "seccomp_new_listener": "SECCOMP_FILTER_FLAG_NEW_LISTENER returns a listener fd",
        "seccomp_notif_round_trip": "a trapped syscall is received and answered by a supervisor",
        "seccomp_addfd": "SECCOMP_IOCTL_NOTIF_ADDFD injects an fd as the syscall result",
        "seccomp_id_validation": "NOTIF_ID_VALID holds while pending, fails ENOENT once answered",
        "seccomp_retained_socket_operation": "pidfd_getfd takes the task's socket, and it works",
        "seccomp_proc_fd_identity": "/proc/<pid>/fd/<n> of the task names the file it opened",
        "seccomp_task_memory_read": "the supervisor reads a marker from the trapped task's memory",
        "seccomp_task_memory_write": "the supervisor writes into the trapped task's memory",
        "seccomp_cancellation": "a signal interrupts a trapped syscall; its notification is gone",
        "landlock_allow_deny": "a PATH_BENEATH rule keeps one directory readable, another EACCES",
        "kernel_release": "uname release seen inside the sandbox",
        "kernel_machine": "uname machine seen inside the sandbox",
    },
    measured=MEASURED,
)
