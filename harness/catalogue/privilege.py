"""Privilege rows: every way credentials and capabilities change, and the kernel
interfaces that only privilege opens (what `priv-root-*` proves unreachable)."""

from __future__ import annotations

from functools import partial

from harness.catalogue.rows import Row, Surface

_CREDS = "credentials"
_EXEC = "exec"
_NS = "namespaces"
_ROOT = "what privilege opens"

_priv = partial(Row, Surface.PRIVILEGE)

ROWS: tuple[Row, ...] = (
    _priv(
        _CREDS,
        "starting user and group",
        (),
        checks=("priv-start",),
        target="the policy's run_as_user and run_as_group",
    ),
    _priv(
        _CREDS,
        "set*id to root",
        (
            "setuid",
            "setgid",
            "setreuid",
            "setregid",
            "setresuid",
            "setresgid",
            "setfsuid",
            "setfsgid",
            "setgroups",
        ),
        checks=("priv-setuid0",),
        target="uid 0, or else gid 0; then every call that sets an id, with 0: the"
        " effective ids, the filesystem ids (by which file access is checked), group 0"
        " among the supplementary groups",
        ways=(
            "i386: setuid32, setgid32, setreuid32, setregid32, setresuid32, setresgid32,"
            " setfsuid32, setfsgid32, setgroups32, setuid, setgid, setreuid, setregid,"
            " setresuid, setresgid, setfsuid, setfsgid, setgroups",
        ),
    ),
    _priv(
        _CREDS,
        "capset: raise a capability",
        ("capset", "capget"),
        checks=("priv-capset",),
        target="CAP_SYS_ADMIN, and any capability permitted but not effective",
        ways=("i386: capset",),
    ),
    _priv(
        _CREDS,
        "ambient capabilities",
        ("prctl",),
        checks=("priv-ambient",),
        target="CAP_NET_RAW, and any capability permitted and inheritable",
        ways=("i386: prctl",),
    ),
    _priv(
        _CREDS,
        "securebits",
        ("prctl",),
        checks=("priv-securebits",),
        target="SECBIT_NOROOT and the others a sandbox set unlocked; an exec after",
        ways=("i386: prctl",),
    ),
    _priv(
        _EXEC,
        "exec of a setuid file",
        ("execve", "execveat"),
        checks=("priv-setuid-exec", "priv-setid-view"),
        target="the setuid-root helper; with no_new_privs off, every file in the sandbox's"
        " view, and every descriptor it holds, setuid to a uid not the workload's (root's"
        " first) on a mount that honours setuid, started and stopped before it runs",
    ),
    _priv(
        _EXEC,
        "exec of a setgid file",
        ("execve", "execveat"),
        checks=("priv-setgid-exec", "priv-setid-view"),
        target="the setgid-root helper (egid 0); with no_new_privs off, every file setgid to"
        " a group the workload does not hold (group 0's first; shadow's reads /etc/shadow)"
        " in the sandbox's view on a mount that honours setgid",
    ),
    _priv(
        _EXEC,
        "exec of a file with capabilities",
        ("execve", "execveat"),
        checks=("priv-fcap-exec", "priv-setid-view"),
        target="the cap_net_raw helper; with no_new_privs off, in the host's user namespace,"
        " every executable carrying file capabilities in the sandbox's view",
    ),
    _priv(
        _EXEC,
        "exec carrying the workload's inheritable capabilities",
        ("execve", "execveat", "capset"),
        checks=("priv-inh-exec",),
        target="the inh helper (every capability =ei): it gets the inheritable set it is run with",
    ),
    _priv(
        _NS,
        "user namespaces",
        ("unshare", "clone", "clone3", "setns"),
        unseen="not a gain of its own: capabilities in a user namespace of the workload's"
        " own reach only what that namespace owns, and the kernel asks the initial one for"
        " everything of the host's, which the root-phase attempts and `priv-start` try (the"
        " `userns` info line records whether one can be made); setns into the host's"
        " namespaces needs CAP_SYS_ADMIN there (`priv-start`)",
    ),
    _priv(
        _CREDS,
        "keyrings",
        ("add_key", "request_key", "keyctl"),
        unseen="keys are data, not privilege: a user keyring is shared by every process of"
        " its uid, the host's included (Docker's seccomp profile refuses these calls for"
        " that reason), but harness places no sentinel key, so a shared keyring is not seen",
    ),
    _priv(
        _ROOT,
        "mount, and the new mount API",
        (
            "mount",
            "umount2",
            "pivot_root",
            "chroot",
            "open_tree",
            "move_mount",
            "fsopen",
            "fsconfig",
            "fsmount",
            "fspick",
            "mount_setattr",
            "open_tree_attr",
        ),
        checks=("priv-root-mount",),
        ways=(
            "fsmount: a detached mount made by fsopen, fsconfig and fsmount (5.2), where a"
            " deny-list refuses mount(2): a tmpfs in the initial user namespace; in a child one,"
            " a proc or sysfs through which root, the host's uid 0 mapped in, writes the host's"
            " kernel settings",
            "open_tree: a detached clone of a mount (the root, or the sandbox's own /proc and"
            " /sys without the read-only mounts over them, made read-write by mount_setattr),"
            " where a deny-list refuses mount(2) and fsopen",
            "fspick: a superblock of the initial user namespace's opened for reconfiguring,"
            " where a deny-list refuses mount(2), fsopen and open_tree: fsconfig's"
            " FSCONFIG_CMD_RECONFIGURE then changes a host filesystem's options (a host tmpfs"
            " resized, the host's root made read-only), with CAP_SYS_ADMIN there",
            "i386: mount, umount2, unshare",
        ),
        target="a tmpfs and a proc; where mount(2) is refused, a detached tmpfs (fsmount), a"
        " detached clone of / (open_tree) or /'s superblock opened for reconfiguring (fspick,"
        " nothing reconfigured), each closed",
    ),
    _priv(
        _ROOT,
        "kernel parameters (/proc/sys)",
        ("_sysctl",),
        checks=("priv-root-sysctl",),
        target="a sysctl written back unchanged",
    ),
    _priv(
        _ROOT,
        "host kernel state: every sysctl, sysfs attribute and cgroup file",
        (),
        checks=("priv-root-kernel-state",),
        ways=(
            "clone3(CLONE_INTO_CGROUP): a process born into a host cgroup of the unified"
            " hierarchy (an O_PATH handle and cgroup.procs' mode, the mount read-only or"
            " unlistable)",
            "clone3(CLONE_INTO_CGROUP) through the i386 entry (int $0x80): the same call by"
            " its i386 number, where a filter refuses x86_64's",
            "i386: bpf",
        ),
        target="every file of /proc/sys, /proc/irq, /proc/bus, /proc/acpi, /sys (every cgroup"
        " hierarchy, the workload's own cgroup left out but its limits: every limit file of"
        " the kernel's controllers, v1 and v2, each written back) and"
        " /proc/sysrq-trigger, opened for"
        " writing, nothing written, wherever a mount of their types stands (a second proc, a"
        " hierarchy or a host service's subtree bound elsewhere), and a tracefs's tracing"
        " switches",
    ),
    _priv(
        _ROOT,
        "cgroup release_agent",
        (),
        checks=("priv-root-release-agent",),
        ways=(
            "fsmount: a cgroup v1 hierarchy made by fsopen, fsconfig and fsmount (5.2),"
            " detached, where a deny-list refuses mount(2); its release_agent written through"
            " openat of that mount",
        ),
        target="a cgroup v1 release_agent (one mounted, else a hierarchy mounted; each written"
        " its own value back)",
    ),
    _priv(
        _ROOT,
        "kernel modules",
        (
            "init_module",
            "finit_module",
            "delete_module",
            "create_module",
            "query_module",
            "get_kernel_syms",
        ),
        checks=("priv-root-sys-module",),
        target="CAP_SYS_MODULE (nothing loaded)",
    ),
    _priv(
        _ROOT,
        "other processes' memory and descriptors",
        (
            "ptrace",
            "process_vm_readv",
            "process_vm_writev",
            "process_madvise",
            "process_mrelease",
            "kill",
            "prlimit64",
        ),
        checks=("priv-proc-access",),
        ways=(
            "kill(pid, 0): a host process signalled, standing in the host's PID namespace",
            "pidfd_send_signal, tkill, tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo (signal 0):"
            " the same signal by each other call, where a deny-list refuses kill",
            "/proc/<pid>/mem: the same memory as a file, opened by ptrace's permission alone"
            " (an open and a read: no call a filter of ptrace and process_vm_readv refuses)",
            "a held pidfd: pidfd_getfd through a pidfd held at start of a process outside its PID"
            " namespace (no number names it there; ptrace's permission alone is asked)",
            "a pid by number: process_vm_readv, pidfd_getfd and ptrace of each pid getpgid"
            " finds, in the host's PID namespace where no /proc lists its processes (its session"
            " and ancestors left out)",
            "prlimit64: a host process's resource limits (RLIMIT_CPU read and written back"
            " unchanged), by the same uid alone: no signalling call, no hook of Landlock's signal"
            " scope, and a CPU limit of 1 s kills it",
            "a descriptor's owner: fcntl(F_SETOWN, F_SETOWN_EX) or ioctl(FIOSETOWN,"
            " SIOCSPGRP) and O_ASYNC, where every signalling call is refused: the kernel signals"
            " the owner on each write (any signal, by F_SETSIG), by the same uid or euid 0 alone"
            " (harness's witness beside the sandbox, a host process that blocks SIGIO and SIGURG,"
            " holds it pending)",
            "scheduling: setpriority, sched_setscheduler, sched_setattr, sched_setaffinity or"
            " ioprio_set of a host process, by the same uid alone, where the calls that signal,"
            " trace and set limits are refused: no hook of Landlock's signal scope, and nice 19,"
            " SCHED_BATCH, one CPU or the idle I/O class starve it (harness's witness: the value"
            " changed one step, read back, restored but its nice)",
            "oom_score_adj: a host process's /proc/<pid>/oom_score_adj, its owner's file,"
            " written by the same uid where /proc is writable and every call above refused: a"
            " score of 1000 makes it the OOM killer's first choice (harness's witness: one"
            " more, read back, restored)",
            "i386: process_vm_readv, process_vm_writev, ptrace, pidfd_getfd, kill, tkill,"
            " tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo, prlimit64, fcntl64, fcntl, ioctl,"
            " setpriority, sched_setscheduler, sched_setattr, sched_setaffinity, ioprio_set",
        ),
        target="every visible process not the sandbox's own (the decoy); harness's witnesses"
        " (uid 65534's, and the workload's own host uid's where that is another), for"
        " a descriptor's owner, its scheduling and its oom_score_adj",
    ),
    _priv(
        _ROOT,
        "a host process's input: a terminal it reads",
        (),
        checks=("priv-held-tty",),
        target="each pty master held at start, by its terminal's devpts (TIOCGPTPEER's O_PATH"
        " handle); the controlling terminal, by its session and devpts; nothing written,"
        " nothing typed",
        ways=(
            "a held pty master: what it writes, the process reading its terminal (a host root"
            " shell) takes as typed",
            "the controlling terminal of a host session: TIOCSTI types into its input"
            " (CVE-2017-5226)",
        ),
    ),
    _priv(
        _ROOT,
        "the kernel itself: boot, BPF, perf, raw I/O, swap, quotas, accounting, clock",
        (
            "kexec_load",
            "kexec_file_load",
            "reboot",
            "bpf",
            "perf_event_open",
            "iopl",
            "ioperm",
            "swapon",
            "swapoff",
            "quotactl",
            "quotactl_fd",
            "acct",
            "syslog",
            "settimeofday",
            "clock_settime",
            "adjtimex",
            "clock_adjtime",
            "vhangup",
            "lookup_dcookie",
            "nfsservctl",
            "uselib",
            "sethostname",
            "setdomainname",
        ),
        checks=("priv-root-kernel",),
        ways=(
            "clock_adjtime: the clock's parameters by clock_adjtime(CLOCK_REALTIME) (2.6.39),"
            " adjtimex by another number, where a deny-list refuses adjtimex (CAP_SYS_TIME)",
            "settimeofday: the clock (and the kernel's timezone) by the oldest setter, where a"
            " deny-list refuses adjtimex and clock_adjtime (asked with neither time nor zone:"
            " CAP_SYS_TIME, nothing set)",
            "i386: reboot, kexec_load, adjtimex, clock_adjtime, clock_adjtime64, settimeofday,"
            " swapon, acct, syslog, sethostname, ioperm, bpf, perf_event_open",
        ),
        target="a no-op form of each (the capability proven); the rest by `priv-start`"
        " (clock_settime has no form that sets nothing: the same capability as"
        " settimeofday's)",
    ),
)
