"""The syscall tables of the probe's other ABIs, held to x86_64's (syscalls.py): the
i386 entry an x86_64 kernel keeps (asm/unistd_32.h), the generic table aarch64 uses
(asm-generic/unistd.h) and the arm32 (EABI) entry an aarch64 kernel keeps for 32-bit
programs (Debian's linux-libc-dev-armhf-cross). Each name x86_64's table lacks is the
same operation as one it has, whose row (or reason) covers it, or it reaches nothing. A
newer header's name is in neither, and the completeness test names it. The probe is
an AArch64 program there and cannot enter arm32's numbers (only a 32-bit binary can):
a filter on an aarch64 host that checks no architecture leaves them open unseen
(docs/attack-surface.md says so). arm32's private calls (__ARM_NR_: cache flush, TLS,
breakpoint) are the process's own."""

from __future__ import annotations

import re
from pathlib import Path

I386_HEADER = Path("/usr/include/x86_64-linux-gnu/asm/unistd_32.h")
GENERIC_HEADER = Path("/usr/include/asm-generic/unistd.h")
ARM32_HEADER = Path("/usr/arm-linux-gnueabihf/include/asm/unistd-eabi.h")

_TIME64 = (
    "clock_gettime64",
    "clock_settime64",
    "clock_adjtime64",
    "clock_getres_time64",
    "clock_nanosleep_time64",
    "timer_gettime64",
    "timer_settime64",
    "timerfd_gettime64",
    "timerfd_settime64",
    "utimensat_time64",
    "pselect6_time64",
    "ppoll_time64",
    "io_pgetevents_time64",
    "recvmmsg_time64",
    "mq_timedsend_time64",
    "mq_timedreceive_time64",
    "semtimedop_time64",
    "rt_sigtimedwait_time64",
    "futex_time64",
    "sched_rr_get_interval_time64",
)

# Another ABI's name -> the x86_64 call it is the same kernel operation as (another
# layout of the same arguments: 32-bit ids, 64-bit offsets or times, an older struct).
SAME_AS: dict[str, str] = {
    **{name: name[:-7] if name.endswith("_time64") else name[:-2] for name in _TIME64},
    "waitpid": "wait4",
    "umount": "umount2",
    "stime": "settimeofday",
    "oldstat": "stat",
    "oldfstat": "fstat",
    "oldlstat": "lstat",
    "nice": "setpriority",
    "signal": "rt_sigaction",
    "sigaction": "rt_sigaction",
    "sgetmask": "rt_sigprocmask",
    "ssetmask": "rt_sigprocmask",
    "sigsuspend": "rt_sigsuspend",
    "sigpending": "rt_sigpending",
    "sigreturn": "rt_sigreturn",
    "sigprocmask": "rt_sigprocmask",
    "oldolduname": "uname",
    "olduname": "uname",
    "readdir": "getdents",
    "_llseek": "lseek",
    "llseek": "lseek",
    "_newselect": "select",
    "ugetrlimit": "getrlimit",
    "mmap2": "mmap",
    "truncate64": "truncate",
    "ftruncate64": "ftruncate",
    "stat64": "stat",
    "lstat64": "lstat",
    "fstat64": "fstat",
    "fstatat64": "newfstatat",
    "fstatat": "newfstatat",
    "lchown32": "lchown",
    "chown32": "chown",
    "fchown32": "fchown",
    "getuid32": "getuid",
    "getgid32": "getgid",
    "geteuid32": "geteuid",
    "getegid32": "getegid",
    "setreuid32": "setreuid",
    "setregid32": "setregid",
    "getgroups32": "getgroups",
    "setgroups32": "setgroups",
    "setresuid32": "setresuid",
    "getresuid32": "getresuid",
    "setresgid32": "setresgid",
    "getresgid32": "getresgid",
    "setuid32": "setuid",
    "setgid32": "setgid",
    "setfsuid32": "setfsuid",
    "setfsgid32": "setfsgid",
    "fcntl64": "fcntl",
    "sendfile64": "sendfile",
    "statfs64": "statfs",
    "fstatfs64": "fstatfs",
    "fadvise64_64": "fadvise64",
    "sync_file_range2": "sync_file_range",
    "arm_fadvise64_64": "fadvise64",
    "arm_sync_file_range": "sync_file_range",
    "send": "sendto",  # arm32's: sendto without an address, recvfrom without one
    "recv": "recvfrom",
    # The multiplexers: each of their calls is one of x86_64's own (socketcall's are
    # the socket calls, socket first; ipc's the System V calls, msgget among them).
    "socketcall": "socket",
    "ipc": "msgget",
}

# Names that reach nothing: never implemented (the kernel answers ENOSYS), a count,
# or the workload's own virtual 8086 mode.
NOTHING: dict[str, str] = {
    **{
        name: "never implemented: the kernel answers ENOSYS"
        for name in (
            "break",
            "stty",
            "gtty",
            "ftime",
            "prof",
            "lock",
            "mpx",
            "ulimit",
            "profil",
            "idle",
        )
    },
    "bdflush": "deprecated: does nothing since 2.6",
    "vm86old": "the process's own virtual 8086 mode: no file, privilege or network",
    "vm86": "the process's own virtual 8086 mode: no file, privilege or network",
    "syscalls": "not a call: the table's length",
    "arch_specific_syscall": "not a call: where an architecture's own numbers start",
    **{
        name: "the machine's PCI configuration space, for CAP_SYS_ADMIN alone (priv-start"
        " judges holding it): no file, network or privilege of its own"
        for name in ("pciconfig_iobase", "pciconfig_read", "pciconfig_write")
    },
}


def table(header: Path) -> list[str]:
    """The syscall names an asm/unistd*.h defines (`__NR_x`, and the generic table's
    `__NR3264_x`), in its order, each once."""
    text = header.read_text(encoding="ascii")
    return list(dict.fromkeys(re.findall(r"^#define __NR(?:3264)?_(\w+)\s", text, re.M)))
