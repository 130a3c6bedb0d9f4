"""Kernel-mechanism facts, measured for audit only.

These are what the old conformance check demanded. They are recorded and can be
held to an expected value, but a fact never makes a security property pass.
"""

from __future__ import annotations

from harness.scenarios.base import Scenario

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
)
