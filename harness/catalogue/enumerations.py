"""The kernel's own lists, each member held to a check or a written reason: every
capability (linux/capability.h, up to CAP_LAST_CAP), every namespace type
(linux/sched.h's CLONE_NEW*), every io_uring opcode (linux/io_uring.h, up to
IORING_OP_LAST). A newer header's member is in neither, and the completeness test
(tests/catalogue/) names it until someone decides."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

INCLUDE = Path("/usr/include/linux")


@dataclass(frozen=True, slots=True)
class Member:
    """One member of a kernel list: the checks that attempt what it opens, or why none."""

    checks: tuple[str, ...] = ()
    reason: str = ""


def _c(*checks: str, reason: str = "") -> Member:
    return Member(checks, reason)


# Every capability a workload may hold is judged as started (`priv-start`: any beyond
# Docker's default set in the initial user namespace is a violation by itself), and
# each one's escapes are attempted where it has some.
CAPABILITIES: dict[str, Member] = {
    "CAP_CHOWN": _c("fs-chown-outside", "fs-write-read-only"),
    "CAP_DAC_OVERRIDE": _c(
        "fs-read-outside",
        "fs-overwrite-outside",
        "fs-write-reach",
        reason="every read and write attempt runs as started: a mode it overrides is used",
    ),
    "CAP_DAC_READ_SEARCH": _c("priv-start", "priv-root-handle"),
    "CAP_FOWNER": _c(
        "fs-chmod-outside", "fs-utime-outside", "fs-xattr-outside", "fs-chattr-outside"
    ),
    "CAP_FSETID": _c(
        reason="keeps a set-user-ID bit through a write or chown of a file it may change; a"
        " file it makes setuid is run by priv-setuid-exec's kind only if a write escapes"
    ),
    "CAP_KILL": _c(
        "priv-proc-access",
        reason="signals reach only processes it can see: another PID namespace's are"
        " priv-proc-access's (no signal is sent: it would change a host process)",
    ),
    "CAP_SETGID": _c("priv-start", "priv-setgid-exec"),
    "CAP_SETUID": _c("priv-start", "priv-setuid0"),
    "CAP_SETPCAP": _c("priv-capset", "priv-ambient", "priv-securebits"),
    "CAP_LINUX_IMMUTABLE": _c("priv-start", "fs-chattr-outside"),
    "CAP_NET_BIND_SERVICE": _c("udp4-privport"),
    "CAP_NET_BROADCAST": _c("priv-start", reason="no kernel operation checks it"),
    "CAP_NET_ADMIN": _c(
        "priv-start",
        reason="configures the network namespace it is in: a route out is what the egress"
        " sweep finds, whatever made it",
    ),
    "CAP_NET_RAW": _c("rawip4", "rawip6", "icmp4", "icmp6"),
    "CAP_IPC_LOCK": _c("priv-start", reason="locks its own memory: no file, privilege or network"),
    "CAP_IPC_OWNER": _c("priv-start", "ipc-sysv-msg", "ipc-sysv-shm"),
    "CAP_SYS_MODULE": _c("priv-start", "priv-root-sys-module"),
    "CAP_SYS_RAWIO": _c("priv-start", "priv-root-mknod", "priv-root-kernel"),
    "CAP_SYS_CHROOT": _c("fs-chroot-escape"),
    "CAP_SYS_PTRACE": _c("priv-start", "priv-proc-access", "fs-proc-fds"),
    "CAP_SYS_PACCT": _c("priv-start", "priv-root-kernel"),
    "CAP_SYS_ADMIN": _c(
        "priv-start", "priv-root-mount", "priv-root-release-agent", "priv-root-kernel"
    ),
    "CAP_SYS_BOOT": _c("priv-start", "priv-root-kernel"),
    "CAP_SYS_NICE": _c(
        "priv-start", reason="scheduling of processes it can see: no file or network"
    ),
    "CAP_SYS_RESOURCE": _c("priv-start", reason="its own limits: no file, privilege or network"),
    "CAP_SYS_TIME": _c("priv-start", "priv-root-kernel"),
    "CAP_SYS_TTY_CONFIG": _c("priv-start", reason="a terminal it holds: none is a host route"),
    "CAP_MKNOD": _c("priv-root-mknod"),
    "CAP_LEASE": _c("priv-start", reason="a lease on a file it can open: no new reach"),
    "CAP_AUDIT_WRITE": _c(reason="writes audit records: no file, privilege or network"),
    "CAP_AUDIT_CONTROL": _c("priv-start", reason="the audit rules: no file, privilege or network"),
    "CAP_SETFCAP": _c(
        "priv-fcap-exec",
        reason="a file capability it sets is raised only by an exec, which priv-fcap-exec tries",
    ),
    "CAP_MAC_OVERRIDE": _c("priv-start", reason="no LSM of this lab reads it"),
    "CAP_MAC_ADMIN": _c("priv-start", reason="no LSM of this lab reads it"),
    "CAP_SYSLOG": _c("priv-start", "priv-root-kernel"),
    "CAP_WAKE_ALARM": _c("priv-start", reason="timers that wake the host: no reach"),
    "CAP_BLOCK_SUSPEND": _c("priv-start", reason="keeps the host awake: no reach"),
    "CAP_AUDIT_READ": _c("priv-start", reason="reads audit records over netlink: not attempted"),
    "CAP_PERFMON": _c("priv-start", "priv-root-kernel"),
    "CAP_BPF": _c("priv-start", "priv-root-kernel"),
    "CAP_CHECKPOINT_RESTORE": _c(
        "priv-start", reason="sets its own PID namespace's next pid, not another's"
    ),
}

NAMESPACES: dict[str, Member] = {
    "CLONE_NEWNS": _c("fs-mounts", "fs-proc-1-root", "fs-cwd", "priv-root-mount"),
    "CLONE_NEWCGROUP": _c("priv-root-kernel-state", "priv-root-release-agent"),
    "CLONE_NEWUTS": _c("priv-root-kernel", "priv-root-kernel-state"),
    "CLONE_NEWIPC": _c("ipc-sysv-msg", "ipc-sysv-shm", "ipc-posix-mq"),
    "CLONE_NEWUSER": _c(
        "priv-start",
        "priv-root-mount",
        reason="priv-start judges capabilities in the initial user namespace; a mount made in"
        " a child one is escaped only where it reaches host state",
    ),
    "CLONE_NEWPID": _c("priv-proc-access", "fs-proc-1-root", "fs-proc-fds"),
    "CLONE_NEWNET": _c("tcp-raw-ip", "host4-tcp", "unix-abstract"),
    "CLONE_NEWTIME": _c(reason="the clocks it reads: no file, privilege or network"),
}

_FS_BY_LANDLOCK = "a file operation Landlock and mount namespaces govern as its syscall"
_OWN = "acts on descriptors or memory it already holds"
IO_URING_OPS: dict[str, Member] = {
    "IORING_OP_NOP": _c(reason="does nothing"),
    **{
        op: _c(reason=_OWN)
        for op in (
            "IORING_OP_READV",
            "IORING_OP_WRITEV",
            "IORING_OP_FSYNC",
            "IORING_OP_READ_FIXED",
            "IORING_OP_WRITE_FIXED",
            "IORING_OP_POLL_ADD",
            "IORING_OP_POLL_REMOVE",
            "IORING_OP_SYNC_FILE_RANGE",
            "IORING_OP_RECVMSG",
            "IORING_OP_TIMEOUT",
            "IORING_OP_TIMEOUT_REMOVE",
            "IORING_OP_ACCEPT",
            "IORING_OP_ASYNC_CANCEL",
            "IORING_OP_LINK_TIMEOUT",
            "IORING_OP_FALLOCATE",
            "IORING_OP_CLOSE",
            "IORING_OP_FILES_UPDATE",
            "IORING_OP_WRITE",
            "IORING_OP_FADVISE",
            "IORING_OP_MADVISE",
            "IORING_OP_RECV",
            "IORING_OP_EPOLL_CTL",
            "IORING_OP_SPLICE",
            "IORING_OP_PROVIDE_BUFFERS",
            "IORING_OP_REMOVE_BUFFERS",
            "IORING_OP_TEE",
            "IORING_OP_SHUTDOWN",
            "IORING_OP_MSG_RING",
            "IORING_OP_FGETXATTR",
            "IORING_OP_URING_CMD",
        )
    },
    "IORING_OP_READ": _c("fs-io-uring"),
    "IORING_OP_OPENAT": _c("fs-io-uring"),
    "IORING_OP_OPENAT2": _c(reason=_FS_BY_LANDLOCK + " (openat2)"),
    "IORING_OP_STATX": _c(reason="a file's metadata, not its content (the listing row)"),
    "IORING_OP_GETXATTR": _c(reason="reads an attribute: metadata, as statx"),
    "IORING_OP_SETXATTR": _c("fs-io-uring"),
    "IORING_OP_FSETXATTR": _c(
        "fs-io-uring",
        reason="on a descriptor: the filter that refuses io_uring (IORING_OP_SETXATTR's"
        " mutant) refuses it with the ring",
    ),
    **{
        op: _c(reason=_FS_BY_LANDLOCK + f" ({op.removeprefix('IORING_OP_').lower()})")
        for op in (
            "IORING_OP_RENAMEAT",
            "IORING_OP_UNLINKAT",
            "IORING_OP_MKDIRAT",
            "IORING_OP_SYMLINKAT",
            "IORING_OP_LINKAT",
        )
    },
    "IORING_OP_CONNECT": _c(
        "uring4", "uring4-udp", "uring4-mptcp", "uring6", "uring6-udp", "uring6-mptcp"
    ),
    "IORING_OP_SEND": _c(
        "uring4", "uring4-udp", "uring4-mptcp", "uring6", "uring6-udp", "uring6-mptcp"
    ),
    "IORING_OP_SENDMSG": _c(
        "uring4", reason="the same send path as IORING_OP_SEND, to the same destination"
    ),
    "IORING_OP_SOCKET": _c(
        "uring4", "uring4-udp", "uring4-mptcp", "uring6", "uring6-udp", "uring6-mptcp"
    ),
    "IORING_OP_SEND_ZC": _c("uring4", reason="a send as IORING_OP_SEND, copied later"),
    "IORING_OP_SENDMSG_ZC": _c("uring4", reason="a send as IORING_OP_SENDMSG, copied later"),
}


def _members(text: str, pattern: str) -> list[str]:
    """The names `text` defines that match `pattern` (one group), in order, each once."""
    return list(dict.fromkeys(re.findall(pattern, text)))


def _header(include: Path, name: str) -> str:
    return (include / name).read_text(encoding="utf-8", errors="replace")


def capabilities(include: Path = INCLUDE) -> list[str]:
    """linux/capability.h's capabilities, up to CAP_LAST_CAP."""
    return _members(_header(include, "capability.h"), r"#define\s+(CAP_[A-Z_]+)\s+\d+\b")


def namespaces(include: Path = INCLUDE) -> list[str]:
    """linux/sched.h's namespace flags."""
    return _members(_header(include, "sched.h"), r"#define\s+(CLONE_NEW[A-Z]+)\s")


def io_uring_ops(include: Path = INCLUDE) -> list[str]:
    """linux/io_uring.h's opcodes, before IORING_OP_LAST."""
    text = _header(include, "io_uring.h")
    body = text[text.index("IORING_OP_NOP") : text.index("IORING_OP_LAST")]
    return _members(body, r"\b(IORING_OP_[A-Z0-9_]+)\b")
