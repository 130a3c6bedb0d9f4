"""The kernel's own lists, each member held to a check or a written reason: every
capability (linux/capability.h, up to CAP_LAST_CAP), every namespace type
(linux/sched.h's CLONE_NEW*), every io_uring opcode (linux/io_uring.h, up to
IORING_OP_LAST), every kind of descriptor (the probe's fdkinds.def). A newer header's
member, or a running kernel with more opcodes, capabilities or namespace types than
named here, fails the completeness test (tests/catalogue/) until someone decides."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from importlib import resources
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
        "route-made",
        "firewall-opened",
        reason="configures the network namespace it is in: the route its sandbox left out,"
        " or one around a route that leads nowhere, is made (route-made); a firewall inside"
        " that namespace (nftables) is opened (firewall-opened)",
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
            "IORING_OP_MKDIRAT",
            "IORING_OP_SYMLINKAT",
            "IORING_OP_LINKAT",
        )
    },
    # Landlock governs it as unlinkat(2), but a filter refusing unlinkat in place of
    # REMOVE_FILE or REMOVE_DIR never sees it: tried where x86_64's calls were refused.
    "IORING_OP_UNLINKAT": _c("fs-unlink-outside", "fs-rmdir-outside", "fs-write-read-only"),
    "IORING_OP_CONNECT": _c(
        "uring4",
        "uring4-udp",
        "uring4-mptcp",
        "uring6",
        "uring6-udp",
        "uring6-mptcp",
        "tcp-proxy",
        "udp-relay",
        "dns-own",
        "dns-own-tcp",
        "unix-host",
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
    # Past Debian 12's header (6.1), up to the kernel this lab runs (6.18).
    **{
        op: _c(reason=_OWN)
        for op in (
            "IORING_OP_READ_MULTISHOT",
            "IORING_OP_RECV_ZC",
            "IORING_OP_EPOLL_WAIT",
            "IORING_OP_READV_FIXED",
            "IORING_OP_WRITEV_FIXED",
            "IORING_OP_FIXED_FD_INSTALL",
        )
    },
    "IORING_OP_WAITID": _c(reason="waits for its own children, as waitid"),
    **{
        op: _c(reason="a futex in its own memory")
        for op in ("IORING_OP_FUTEX_WAIT", "IORING_OP_FUTEX_WAKE", "IORING_OP_FUTEX_WAITV")
    },
    "IORING_OP_FTRUNCATE": _c(
        reason="cuts a file it holds open: Landlock's TRUNCATE right is checked on the open"
        " (ABI 3+), and a file opened for writing is the write row's"
    ),
    "IORING_OP_BIND": _c(
        reason=_FS_BY_LANDLOCK + " (bind: a unix socket file is MAKE_SOCK); no bytes leave by it"
    ),
    "IORING_OP_LISTEN": _c(
        reason="no bytes leave by a listener alone (the rest of the socket API)"
    ),
    "IORING_OP_PIPE": _c(reason="makes a pipe of its own, as pipe2"),
}

# The kernel's numbering of io_uring opcodes (enum io_uring_op, 0 up), past the
# installed header's too: the running kernel says how many it has (IORING_REGISTER_PROBE),
# and each must have a name here, then a member above. A newer kernel's opcode has none
# and fails the completeness test until someone decides.
IO_URING_NUMBERING = (
    "IORING_OP_NOP", "IORING_OP_READV", "IORING_OP_WRITEV", "IORING_OP_FSYNC",
    "IORING_OP_READ_FIXED", "IORING_OP_WRITE_FIXED", "IORING_OP_POLL_ADD",
    "IORING_OP_POLL_REMOVE", "IORING_OP_SYNC_FILE_RANGE", "IORING_OP_SENDMSG",
    "IORING_OP_RECVMSG", "IORING_OP_TIMEOUT", "IORING_OP_TIMEOUT_REMOVE", "IORING_OP_ACCEPT",
    "IORING_OP_ASYNC_CANCEL", "IORING_OP_LINK_TIMEOUT", "IORING_OP_CONNECT",
    "IORING_OP_FALLOCATE", "IORING_OP_OPENAT", "IORING_OP_CLOSE", "IORING_OP_FILES_UPDATE",
    "IORING_OP_STATX", "IORING_OP_READ", "IORING_OP_WRITE", "IORING_OP_FADVISE",
    "IORING_OP_MADVISE", "IORING_OP_SEND", "IORING_OP_RECV", "IORING_OP_OPENAT2",
    "IORING_OP_EPOLL_CTL", "IORING_OP_SPLICE", "IORING_OP_PROVIDE_BUFFERS",
    "IORING_OP_REMOVE_BUFFERS", "IORING_OP_TEE", "IORING_OP_SHUTDOWN", "IORING_OP_RENAMEAT",
    "IORING_OP_UNLINKAT", "IORING_OP_MKDIRAT", "IORING_OP_SYMLINKAT", "IORING_OP_LINKAT",
    "IORING_OP_MSG_RING", "IORING_OP_FSETXATTR", "IORING_OP_SETXATTR", "IORING_OP_FGETXATTR",
    "IORING_OP_GETXATTR", "IORING_OP_SOCKET", "IORING_OP_URING_CMD", "IORING_OP_SEND_ZC",
    "IORING_OP_SENDMSG_ZC", "IORING_OP_READ_MULTISHOT", "IORING_OP_WAITID",
    "IORING_OP_FUTEX_WAIT", "IORING_OP_FUTEX_WAKE", "IORING_OP_FUTEX_WAITV",
    "IORING_OP_FIXED_FD_INSTALL", "IORING_OP_FTRUNCATE", "IORING_OP_BIND", "IORING_OP_LISTEN",
    "IORING_OP_RECV_ZC", "IORING_OP_EPOLL_WAIT", "IORING_OP_READV_FIXED",
    "IORING_OP_WRITEV_FIXED", "IORING_OP_PIPE",
)  # fmt: skip

# /proc/<pid>/ns's entries, the namespace types the running kernel has, by their flag.
NS_ENTRIES = {
    "cgroup": "CLONE_NEWCGROUP",
    "ipc": "CLONE_NEWIPC",
    "mnt": "CLONE_NEWNS",
    "net": "CLONE_NEWNET",
    "pid": "CLONE_NEWPID",
    "pid_for_children": "CLONE_NEWPID",
    "time": "CLONE_NEWTIME",
    "time_for_children": "CLONE_NEWTIME",
    "user": "CLONE_NEWUSER",
    "uts": "CLONE_NEWUTS",
}

_HELD = "held, it reaches nothing beyond what its holder has: "
# Every kind of descriptor a workload can hold (harness/probe/fdkinds.def: the probe
# tells each held one's kind by the same table). TRIED kinds name the checks that go
# through them; the others why they reach nothing, or (the probe's UNJUDGED) why
# harness cannot tell where they lead, which makes fs-inherited-fds an error.
DESCRIPTOR_KINDS: dict[str, Member] = {
    "file": _c("fs-inherited-fds"),
    "dir": _c("fs-inherited-fds"),
    "block": _c("fs-inherited-fds"),
    "char": _c(
        reason=_HELD + "a device's reach is its driver's (the IOCTL_DEV row; the devices a"
        " root workload could make are priv-root-mknod's), but for a TUN or TAP device,"
        " whose packets enter its interface's network stack: held-fds writes one to the"
        " host's address; and a pseudo-terminal's master (/dev/ptmx's, char 5:2) is a kind"
        " of its own, pty"
    ),
    "pty": _c(
        "fs-inherited-fds",
        "priv-held-tty",
        reason="a pseudo-terminal's master: what it writes, the process reading its terminal"
        " takes as typed (a host root shell runs it); its terminal is placed by its devpts"
        " (TIOCGPTPEER's O_PATH handle, nothing written), and one the sandbox's own devpts"
        " does not hold is outside",
    ),
    "pipe": _c(
        "fs-inherited-fds",
        reason="bytes to whoever holds the other end: the probe's own output leaves by one"
        " (0-2 are left out); a write end at 3 or above that something reads (no POLLERR)"
        " and no process of the sandbox holds open for reading feeds a process outside (a"
        " host shell runs what arrives): harness writes nothing into it and cannot tell"
        " what reads it, an error, never blocked",
    ),
    "socket": _c("held-fds"),
    "symlink": _c(reason=_HELD + "an O_PATH handle to a symlink reads only its target's name"),
    "mqueue": _c(
        reason="not judged (an error when held): a message queue another process reads,"
        " a channel like ipc-posix-mq's that harness does not aim at its canary"
    ),
    "ns": _c("fs-inherited-fds", "held-fds"),
    "anon_inode:[pidfd]": _c("fs-inherited-fds", "held-fds", "priv-proc-access"),
    "anon_inode:[io_uring]": _c(
        "fs-inherited-fds",
        reason="each personality registered on it runs a request with the credentials that"
        " registered it (no Landlock domain of the holder's), and each registered file is a"
        " descriptor it holds; a ring with a poll thread (SQPOLL) of another process, or"
        " files it cannot install, make the check an error",
    ),
    "anon_inode:[eventfd]": _c(reason=_HELD + "a counter: a few bits, as a semaphore"),
    "anon_inode:[eventpoll]": _c(reason=_HELD + "it waits on descriptors its holder has"),
    "anon_inode:[signalfd]": _c(reason=_HELD + "its own signals"),
    "anon_inode:[timerfd]": _c(reason=_HELD + "a timer"),
    "anon_inode:inotify": _c(
        reason=_HELD + "names and times of files its watches see: metadata (the listing row)"
    ),
    "anon_inode:[userfaultfd]": _c(
        reason="not judged (an error when held): one another process made resolves that"
        " process's page faults, writing into its memory (UFFDIO_COPY)"
    ),
    "anon_inode:[perf_event]": _c(
        reason="not judged (an error when held): one opened on another process samples it"
        " (its registers, its stack); opening one is priv-root-kernel's"
    ),
    "anon_inode:landlock-ruleset": _c(reason=_HELD + "a ruleset only narrows its holder"),
    "anon_inode:[fscontext]": _c(
        reason="not judged (an error when held): mounted by fsmount where its holder has"
        " CAP_SYS_ADMIN over its mount namespace, it is a filesystem of whoever set it up"
    ),
    "anon_inode:[fanotify]": _c(
        reason="not judged (an error when held): a group's events hand its reader a"
        " descriptor of each file the watched host touches, only when the host touches one"
    ),
    "anon_inode:seccomp notify": _c(
        reason="not judged (an error when held): a supervisor's listener answers, for the"
        " processes its filter holds, the calls that filter sends it"
    ),
    **{
        f"anon_inode:{name}": _c(
            reason="not judged (an error when held): a BPF object of whoever made it (a map"
            " its programs read, a program or link attached to the host's hooks)"
        )
        for name in ("bpf-map", "bpf-prog", "bpf_link", "bpf-token", "btf")
    },
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


def descriptor_kinds(text: str | None = None) -> list[tuple[str, str]]:
    """fdkinds.def's kinds, (name, route) in order (`text`: a fdkinds.def; default the
    probe's own)."""
    if text is None:
        text = resources.files("harness.probe").joinpath("fdkinds.def").read_text()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.findall(r'^FDKIND\(\w+, "([^"]+)", (TRIED|OWN|UNJUDGED)\)', text, re.M)


def running_io_uring_ops() -> int | None:
    """How many io_uring opcodes the running kernel has (IORING_REGISTER_PROBE's
    ops_len), or None where it has no io_uring or refuses it."""
    import ctypes  # only the completeness test asks the running kernel

    libc = ctypes.CDLL(None, use_errno=True)
    params = ctypes.create_string_buffer(120)  # struct io_uring_params
    ring = libc.syscall(425, 4, params)  # io_uring_setup: 425 on x86_64 and aarch64
    if ring < 0:
        return None
    try:
        probe = ctypes.create_string_buffer(16 + 256 * 8)  # struct io_uring_probe, 256 ops
        if libc.syscall(427, ring, 8, probe, 256) != 0:  # IORING_REGISTER_PROBE
            return None
        return probe.raw[1]
    finally:
        os.close(ring)


def running_capabilities() -> int | None:
    """How many capabilities the running kernel has (/proc/sys/kernel/cap_last_cap + 1)."""
    try:
        return int(Path("/proc/sys/kernel/cap_last_cap").read_text()) + 1
    except (OSError, ValueError):
        return None
