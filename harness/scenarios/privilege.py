"""Privilege floor: the workload starts with no more than a container's baseline,
root inside cannot reach the host, and an unprivileged process cannot gain privilege."""

from __future__ import annotations

from harness.scenarios.base import Check, Control, Need, Rule, Scenario


def _as_root(check_id: str, doc: str, control: Control = Control.HOST, *, how: str) -> Check:
    """An attempt made as started (root, if the sandbox starts so), before dropping
    privileges: a success inside the sandbox's own kernel reaches no host."""
    return Check(check_id, f"as started: {doc}", control=control, rule=Rule.ROOT, how=how)


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
            how=(
                "`succeeded`, with `evidence`: `uid`, `euid`, `suid`, `gid`, `egid`, `sgid`, "
                "`groups` (the supplementary groups, comma-separated), `user` and `group` (the "
                "names the sandbox's own `/etc/passwd` and `/etc/group` give the uid and gid, when "
                "they do), `initial_userns` (1 when `/proc/self/ns/user` is the kernel's initial "
                "namespace, `user:[4026531837]`, or unreadable), `cap_eff`, `cap_prm`, `cap_bnd` "
                "(hex), `boot_id`, `release`. harness judges it against Docker's default set, and "
                "the user and group against the runtime's policy ([policy.md](policy.md))."
            ),
        ),
        _as_root(
            "priv-root-sysctl",
            "write a /proc/sys value, /sys/kernel/uevent_helper or a module parameter"
            " (each its own value back)",
            how=(
                "Read `/proc/sys/kernel/printk_ratelimit`, `/sys/kernel/uevent_helper` and "
                "`/sys/module/printk/parameters/time` in turn and write the same value back; the "
                "first written is the escape. A read-write sysfs exposes the host kernel's "
                "settings even in a sandbox of its own network namespace (uevent_helper runs a "
                "program of the writer's choice on the host)."
            ),
        ),
        _as_root(
            "priv-root-kernel-state",
            "open any host kernel-state file for writing: /proc/sys, /proc/sysrq-trigger,"
            " /sys and every cgroup hierarchy (nothing written)",
            how=(
                "Every regular file with a write bit under `/proc/sys`, `/proc/irq`, `/proc/bus`, "
                "`/proc/acpi` (their files are written by their modes alone) and `/sys` (never "
                "through "
                "a symlink; every cgroup v1 and v2 hierarchy mounted there with it), and "
                "`/proc/sysrq-trigger`, wherever the sandbox shows them: every mount of the "
                "mount table of type proc (those folders and `sysrq-trigger`), sysfs, cgroup, "
                "cgroup2, securityfs, configfs, binfmt_misc, efivarfs, fusectl, tracefs, "
                "debugfs or bpf that is the one "
                "seen at its point (`st_dev` there is its own) is walked where it stands (a "
                "second proc at `/run/proc`, a hierarchy bound at `/run/pids`), each file judged "
                "by its usual name; any other mount inside one is left out (a tmpfs holds no "
                "kernel state); without a mount table, the usual paths. Each is "
                "opened `O_WRONLY`, nothing written: the kernel checks a "
                "sysctl's, a sysfs attribute's and a cgroup file's write permission at open; a "
                "pinned BPF object (a bpffs's) by `bpf(BPF_OBJ_GET)` read-write, which asks its "
                "mode alone (a map got so is the caller's to change; none is), through the "
                "i386 entry (`int $0x80`, 357, in a child) where x86_64's `bpf` is refused. The "
                "first that opens is `escaped` (`evidence.files_tried`). Left out: a network "
                "namespace's devices (`/sys/class/net`), and its sysctls (`/proc/sys/net`) "
                "unless it is the kernel's initial one (whose inode number is fixed since "
                "6.18; before it, never left in), the "
                "sysctls of a UTS, IPC, PID or user namespace of its own (one other than the "
                "kernel's initial one), the workload's own cgroup and what is below it (the "
                "folder whose `cgroup.procs` lists it, unless that is the hierarchy's root; in a "
                "cgroup namespace of its own, the whole of a mount of that namespace's root that "
                "is not the hierarchy's, wherever in it the workload sits; where "
                "that cannot be told, a cgroup mount whose root is not the hierarchy's: a v1 "
                "root has `release_agent`, a v2 root lacks `cgroup.events`), debugfs and "
                "tracefs but their tracing switches (`tracing_on`, `buffer_size_kb`, "
                "`current_tracer`, whose open only checks the mode: writable, they turn on "
                "events that watch every host process), and IMA's policy (whose files may act "
                "on open or close). The limits on the workload's own cgroup (its folder, or its "
                "cgroup namespace's root, not the hierarchy's root) are not its own: every "
                "limit file the kernel's controllers give a cgroup, v1 and v2, is written its "
                "own value back, one line to a write (every `*.max`, `*.high`, `*.low`, "
                "`*.min` and `*limit_in_bytes`: memory's, pids', hugetlb's, rdma's, misc's, "
                "io's; the CPU shares, weights, quotas, periods, bursts and real-time budgets; "
                "`cpuset.cpus`, `cpuset.mems` and v2's exclusive CPUs and partition; the I/O "
                "weights and v1's throttles; `net_cls.classid` and `net_prio.ifpriomap`, which "
                "host firewall rules match; `cgroup.max.descendants`, `cgroup.max.depth`), as "
                "the folder lists them (under `nsdelegate` a namespace's root refuses them at "
                "write, so an open would prove nothing). "
                "Another way to a `cgroup.procs`: in each folder of a "
                "cgroup2 mount (its mount point too, unlisted) that is not the workload's own "
                "cgroup nor below it (by `/proc/self/cgroup`'s `0::` path) and whose "
                "`cgroup.procs` mode lets the workload write it (its owner, group and bits; "
                "`CAP_DAC_OVERRIDE`: all), up to 32 (more: an error), a child "
                "born there by `clone3(CLONE_INTO_CGROUP)` (an `O_PATH` handle and the file's "
                "mode are all it asks: no writable mount; a cgroup namespace bounds it only "
                "under `nsdelegate`; where x86_64's `clone3` is refused, the same call "
                "through the i386 entry, `int $0x80`, number 435, in a child, the reason "
                "naming it), killed at once: `escaped` "
                "(`evidence.cgroup_moves_tried`; `evidence.cgroup_moves_refused_by_mode`). Over "
                "60,000 files tried, or a folder deeper than 32, without one: an error."
            ),
        ),
        _as_root(
            "priv-root-mount",
            "mount a tmpfs and a proc",
            how=(
                "`unshare(CLONE_NEWNS)`, make it private, mount a tmpfs on `/tmp` and a proc in it "
                "(gone with the check's process). In a child user namespace it is `blocked` even "
                "when the mounts succeed: that mount namespace is the child namespace's own, and "
                "reaches nothing the workload could not reach before, unless the sandbox's "
                "read-only /proc or /sys was all that kept the host's kernel settings from a uid "
                "they obey (the host's root mapped in, as bwrap --unshare-user run by root does): "
                "a host setting written back through the proc mounted there, a sysfs beside it, or "
                "/proc and /sys remounted read-write (/proc/sys unmounted) in that namespace is "
                "`escaped`. Where `mount(2)` is refused, every other way into a mount: the new "
                "mount API (a tmpfs made by `fsopen`, `fsconfig` and `fsmount`, `/` cloned by "
                "`open_tree` and its superblock opened by `fspick`, each detached, attached "
                "nowhere and closed, any of them `escaped` in the initial user namespace; in a "
                "child one a proc or sysfs made by `fsmount`, or the sandbox's own `/proc` and "
                "`/sys` cloned by `open_tree` and made read-write by `mount_setattr`, through "
                "which a host setting is written back), then the same `mount(2)` attempt through "
                "the i386 entry (`int $0x80`: `unshare`, `mount`, `umount2` by their i386 "
                "numbers, in a child) where x86_64's is refused; the detail names the way taken. "
                "Each way runs in a child: a filter that kills the process on a call (SIGSYS) "
                "refuses that way, and the next is still tried."
            ),
        ),
        _as_root(
            "priv-root-release-agent",
            "open a cgroup v1 release_agent for writing",
            how=(
                "Write each mounted cgroup v1 `release_agent` its own value back; then, in a "
                "private mount namespace, mount cgroup v1 (`rdma`, then a named hierarchy) and do "
                "the same (`unshare` killed by a filter, SIGSYS, is refused). Where that is "
                "refused (a deny-list of `mount(2)`), the same hierarchy made by the new mount API "
                "(`fsopen`, `fsconfig`, `fsmount`: detached, attached nowhere), its "
                "`release_agent` written through `openat` of that mount; the detail names the way. "
                "Nothing is run."
            ),
        ),
        _as_root(
            "priv-root-handle",
            "open_by_handle_at (CAP_DAC_READ_SEARCH)",
            how=(
                "`name_to_handle_at` + `open_by_handle_at` on the first mount that gives a handle. "
                "In a child user namespace a success is blocked: there the kernel (6.10 on) "
                "decodes a handle only on a filesystem of that namespace's or within the mount's "
                "own subtree (by hand: the ext4 root behind a bound host folder is a stale "
                "handle), never beyond what the path reaches. A filter that kills the process on "
                "either call (SIGSYS; asked first in a child) refuses it. Where x86_64's call is "
                "refused (`EPERM`, `ENOSYS`, killed), both again through the i386 entry "
                "(`int $0x80`, in a child); the detail names the way."
            ),
        ),
        # A host whose own devices cgroup forbids reading its disk (this lab's) gives
        # this attempt no working control: a read is proof, a refusal is recorded.
        _as_root(
            "priv-root-mknod",
            "read a sector of any block device in /dev, or of a mounted disk through mknod,"
            " or open it for writing (nothing written)",
            Control.NONE,
            how=(
                "For each block device behind a visible mount: read a sector through its node in "
                "`/dev`, then through a node made with `mknod` in `/tmp`, the allowed folder or "
                "`/dev` (removed at once). Then every block device node in `/dev` at any depth "
                "(never through a symlink; not pts, shm, mqueue or hugepages), whatever it "
                "backs: one passed in with `--device`, at `/dev/sdb` or one folder deeper at "
                "`/dev/disk/data` (a node, no mount), is host storage in reach. Then each of the "
                "host's block devices by its name (`--block-devs`, from the host's "
                "`/sys/class/block`), where `/dev` does not list. Where a node "
                "cannot be read, it is opened for writing (`O_WRONLY`, nothing written): "
                "Landlock's `WRITE_FILE` alone on a disk's node lets it be written, not read. A "
                "node `mknod` is refused (`EPERM`, `ENOSYS`) is made again through the i386 "
                "entry (`mknod`, then `mknodat`, in a child)."
            ),
        ),
        _as_root(
            "priv-root-sys-module",
            "CAP_SYS_MODULE held (nothing loaded)",
            how=(
                "Escaped if CAP_SYS_MODULE is effective or permitted in the initial user "
                "namespace. Nothing is loaded."
            ),
        ),
        Check(
            "priv-setuid-exec",
            "exec a setuid-root helper as an unprivileged uid",
            how=(
                "Exec the setuid helper (`whoami`) and read its euid. Escaped if the euid is 0. "
                "`evidence.euid` records it."
            ),
        ),
        Check(
            "priv-fcap-exec",
            "exec a helper carrying cap_net_raw+ep",
            how=(
                "Exec the file-capability helper. Escaped if its CapEff has CAP_NET_RAW, unless "
                "the unprivileged attempts run in a user namespace of the probe's own (rootless, "
                "`evidence.own_userns`): capabilities there reach what it owns, nothing. "
                "`evidence.cap_eff` records it. If the exec is refused `EPERM` while the helpers' "
                "`other` (the same program, no capability) runs, the kernel honoured the file "
                "capability and found CAP_NET_RAW outside the bounding set (a sandbox that drops "
                "it): escaped too when `no_new_privs` is not set and the bounding set is not "
                "empty, in the initial user namespace, since a file carrying a capability that set "
                "holds grants it (`evidence.cap_bnd`, `evidence.nnp`). Only where that rule can "
                "explain the refusal: with CAP_NET_RAW in the bounding set, the helper's mount "
                "nosuid, or no `security.capability` on it, the `EPERM` is another refuser's (an "
                "exec-control daemon's fanotify, an LSM): blocked."
            ),
        ),
        # Only a launcher that leaves capabilities inheritable makes this route: the
        # host control, an unprivileged uid of the host's, has none to carry.
        Check(
            "priv-inh-exec",
            "exec a helper carrying every capability inheritable (=ei) as an unprivileged"
            " uid: it gets the workload's inheritable set",
            control=Control.NONE,
            how=(
                "As the unprivileged uid: its inheritable set (less what the bounding set drops, "
                "`evidence.cap_inh`) with no_new_privs off (`evidence.nnp`) in the host's user "
                "namespace is the escape: any program carrying those capabilities as inheritable "
                "file capabilities runs with them (CVE-2022-24769: Docker before 20.10.14 left a "
                "container's set inheritable). Where the `--inh-helper` carries its file "
                "capability, it is run first, and the CapEff it gets is the proof. Blocked when "
                "nothing is inheritable, with no_new_privs, or in a child user namespace. No "
                "control: the host's unprivileged uid has nothing inheritable."
            ),
        ),
        Check(
            "priv-setuid0",
            "setuid(0), or else setgid(0), or any other way to id 0, as an unprivileged uid",
            control=Control.NONE,
            how=(
                "`setuid(0)`; refused, `setgid(0)` (CAP_SETGID alone makes group 0 the process's); "
                "refused, every other call that sets an id, by its raw number, with every id 0 "
                "and then with each alone 0 and the others -1 (a filter may look at one argument): "
                "`setreuid`, `setresuid`, `setfsuid`, `setregid`, `setresgid`, `setfsgid`, "
                "`setgroups` with the one group 0, then the same through the i386 entry (`int "
                "$0x80`: the 32-bit ids' calls, `setuid32` and the rest, and the 16-bit ones), "
                "each in a child, where the entry is there. Escaped on the first that wins an id "
                "0 the workload did not hold before (a uid started in group 0, as OpenShift "
                "starts its arbitrary uids, gains nothing by `setgid(0)`): a real, effective or "
                "saved uid or gid, the filesystem uid or gid (by which the kernel checks file "
                "access), or group 0 among the process's; its way is named "
                "(`setgroups gave group 0`, `setgid32 (i386) gave egid 0`). A filter's kill "
                "(SIGSYS) is a refusal; an i386 child that gives no answer otherwise makes the "
                "check an error. `evidence.ways` counts the ways tried."
            ),
        ),
        Check(
            "priv-capset",
            "raise CAP_SYS_ADMIN, and any capability permitted but not effective, with capset",
            control=Control.NONE,
            how=(
                "Use `capset` to raise CAP_SYS_ADMIN, and every capability still permitted but not "
                "effective, into the effective set (CAP_SYS_ADMIN into the permitted set too; the "
                "kernel refuses a permitted set that grows, and the permitted ones alone are then "
                "raised). Escaped if any capability became effective (`evidence.raised`, a mask): "
                "a dormant capability, e.g. a file capability without `+e`, is one `capset` from "
                "use. Where `capset` is refused (or kills the process, SIGSYS, asked first in a "
                "child), the same sets through the i386 entry (`int "
                "$0x80`, in a child whose effective set is then read: a filter keyed to x86_64's "
                "number misses it). `evidence.cap_sys_admin`."
            ),
        ),
        Check(
            "priv-ambient",
            "PR_CAP_AMBIENT_RAISE of CAP_NET_RAW, and of any capability permitted and inheritable",
            control=Control.NONE,
            how=(
                "`PR_CAP_AMBIENT_RAISE` of CAP_NET_RAW and of every capability both permitted and "
                "inheritable; each one refused, again through the i386 entry's `prctl` (in a "
                "child). Escaped if any is then in the ambient set (`evidence.raised`, a "
                "mask), where every program run after keeps it; those ambient already are not "
                "tried (`priv-start` judges what the workload starts with), and a raise in a "
                "user namespace other than the kernel's initial one (the sandbox's, or one the "
                "probe made to drop to `--unpriv-uid`) is `blocked`: those capabilities reach "
                "only what that namespace owns (as `priv-inh-exec`)."
            ),
        ),
        Check(
            "priv-setgid-exec",
            "exec a setgid-root helper as an unprivileged uid (egid 0)",
            how=(
                "Exec the setgid-root helper (`whoami`) and read its egid. Escaped if the egid is "
                "0, unless the workload held group 0 already (its gid, or a supplementary group: "
                "a uid started in group 0, as `ctr task exec --user UID` and OpenShift start "
                "theirs, gains nothing; `evidence.held_group0`). `evidence.egid` records it."
            ),
        ),
        # The image's own set-id programs, where the helpers were put on a nosuid mount:
        # no control (the host's own set-id programs are not the helpers').
        Check(
            "priv-setid-view",
            "exec each set-id or file-capability program in the sandbox's own view, as an"
            " unprivileged uid, with no_new_privs off",
            control=Control.NONE,
            how=(
                "As the unprivileged uid: blocked with no_new_privs (no set-id bit is honoured "
                "at exec). Otherwise the sandbox's view is walked (never through a symlink, "
                "`/proc` or `/sys`; 2,000,000 entries, 4 seconds) for regular files "
                "setuid to a uid not the workload's, setgid and group-executable to a group "
                "it does not hold (a setgid-shadow program reads `/etc/shadow`), root's "
                "first, an owner the user namespace does not map left out (the kernel "
                "honours no set-id bit of one), or (in the host's user namespace) executable and "
                "carrying file capabilities, that it may execute (`access(X_OK)`) on a mount "
                "without nosuid, harness's own helpers of any build left out; and every "
                "descriptor the workload holds (3 and up) of such a file (its folder may be "
                "hidden since: started by `execveat(AT_EMPTY_PATH)`), tried first. Each (at "
                "most 8) is "
                "started with `--version`, no environment and `/dev/null` for its standard "
                "streams, and stopped (`SIGSTOP`) before it runs a single instruction: the child "
                "waits at `SCHED_IDLE` on the parent's CPU, and the parent stops it once its "
                "close-on-exec pipe closes. Its `/proc/<pid>/status` is read, and it is killed. "
                "Escaped if one starts with an effective or saved uid not the workload's (or, "
                "setgid, a gid it does not hold), or "
                "(file capabilities) with an effective capability the workload lacks "
                "(`evidence.via`); a file whose exec fails never ran (no gain); an error where "
                "the walk was cut (time, entries, a path too long, a folder it may pass through "
                "but not list where set-id bits may be honoured below it: its mount is not "
                "nosuid, or another mount lies below), more than 8 are in view, or one's start "
                "could not be caught; `evidence.setid_in_view` counts them."
            ),
        ),
        # Nothing to clear and nothing to gain on the host: the exec itself is the proof.
        _as_root(
            "priv-securebits",
            "clear every securebit left unlocked, then exec: no capability gained",
            Control.NONE,
            how=(
                "As started: clear every securebit set and not locked (`SECBIT_NOROOT`, "
                "`NO_SETUID_FIXUP`, `NO_CAP_AMBIENT_RAISE`; needs CAP_SETPCAP) by "
                "`prctl(PR_SET_SECUREBITS)`, and where that is refused as a filter refuses "
                "(`EPERM`, `ENOSYS`) by the i386 entry's `prctl` (`int $0x80`, 172: tried in a "
                "child first, a filter may kill on it, then made by the check itself; the "
                "detail names that way), then exec the "
                "probe's own file (`whoami`). Escaped if the new program holds a capability the "
                "check did not (in the initial user namespace): a root neutered by an unlocked "
                "`SECBIT_NOROOT` gets its bounding set back. `evidence.securebits`, "
                "`evidence.cleared`."
            ),
        ),
        Check(
            "priv-proc-access",
            "process_vm_readv, /proc/<pid>/mem, pidfd_getfd, ptrace, signal 0, prlimit64 on"
            " every visible process not the check's own, as started and as the unprivileged uid"
            " (the filesystem fixture's decoy); a descriptor's owner, the scheduling and OOM"
            " standing of harness's witnesses (uid 65534's, the workload's own uid's)",
            rule=Rule.ROOT,
            how=(
                "Every visible process but the check's own and its ancestors (kernel threads and "
                "zombies left out), as started and then as the unprivileged uid: "
                "`process_vm_readv` of its first mapping (`EFAULT` counts: the kernel allowed it), "
                "`/proc/<pid>/mem` opened for reading (ptrace's permission; an open and a read, "
                "which no filter of the calls sees) and read there, "
                "`pidfd_getfd` of descriptor 0 to 2 (`EBADF` counts likewise), `PTRACE_SEIZE` "
                "(ended by the check's exit), and, where the check stands in the host's PID "
                "namespace (the kernel's first), signal 0 by every call that signals by number or "
                "pidfd: `kill`, `tkill`, `tgkill`, `rt_sigqueueinfo`, `rt_tgsigqueueinfo` "
                "(`SI_QUEUE`), `pidfd_send_signal` (a seccomp deny-list may refuse some and not "
                "the others): signal 0 sends nothing, and its "
                "permission (the same uid, or CAP_KILL; Landlock's signal scope refuses it) is "
                "the power to kill that host process; then `prlimit64` of its `RLIMIT_CPU`, read "
                "and written back unchanged (the same uid's permission alone, no signalling call, "
                "no hook of Landlock's scope: a CPU limit of 1 s set so, the kernel kills it). "
                "Where each of these is refused, the same "
                "calls by the i386 entry's own numbers (`int $0x80`: `process_vm_readv` and "
                "`_writev` of 16 bytes at address 0, never mapped, `EFAULT` counting; "
                "`PTRACE_SEIZE`; `pidfd_getfd` of descriptor 0 to 2 through a pidfd, x86_64's "
                "or that entry's `pidfd_open` (434), `EBADF` counting; signal 0 by each "
                "signalling call; `prlimit64`'s `RLIMIT_CPU` "
                "read and written back), in a child: a deny-list of x86_64's numbers that does "
                "not check the architecture, or an i386 list written from older tables, leaves "
                "them open. "
                "Then, in the host's PID namespace, a descriptor's owner: harness's witness (a "
                "host process of uid 65534, `sleep`, that `envelope.sh` starts beside the sandbox "
                "with SIGIO and SIGURG blocked; and one of the workload's own uid on the host "
                "where that is neither root nor 65534: of the cell's policy's `run_as_user`, and "
                "of each uid the sandbox's processes, those whose arguments hold the probe's "
                "`--tag`, turn out to run as in its first seconds, for which the check waits "
                "once, 2.5 s at most (a user namespace's root may be an unprivileged uid on the "
                "host, through `/proc/self/uid_map`): the same-uid calls reach a host process of "
                "that uid, so every way above is tried on it too, and the line names it 'the "
                "workload's own'; where none is in view, the line says so) made the owner of a "
                "pipe by `fcntl(F_SETOWN)`, "
                "`F_SETOWN_EX`, of a socket by `ioctl(FIOSETOWN)`, `SIOCSPGRP` (each refused as "
                "a filter refuses again through the i386 entry, in a child: `fcntl64` (221), "
                "then `fcntl` (55), or `ioctl` (54), numbers a filter of x86_64's `fcntl` and "
                "`ioctl` commands never matches), its signal "
                "SIGURG (`F_SETSIG`; SIGIO where refused), `O_ASYNC` on, a byte written: the "
                "signal pending in its status (`ShdPnd`) is the escape, nothing delivered. "
                "Then each witness's scheduling and OOM standing, each in a child, by the "
                "same uid's permission alone (no signalling call, no hook of Landlock's scope): "
                "its nice raised one step by `setpriority(PRIO_PROCESS)` (left: only "
                "CAP_SYS_NICE lowers a nice; the witness stops with the cell), its policy "
                "`SCHED_OTHER` made `SCHED_BATCH` by `sched_setscheduler`, then by "
                "`sched_setattr`, its CPU mask its lowest CPU alone by `sched_setaffinity`, its "
                "I/O priority the idle class by `ioprio_set`, its `/proc/<pid>/oom_score_adj` "
                "one more; each value read back (its `/proc` files, `ioprio_get`) is the escape, "
                "then restored by the same call; where x86_64's calls are refused, the i386 "
                "entry's (`int $0x80`). No other host process is changed. "
                "And each pidfd held at start of a process "
                "outside the check's PID namespace (its fdinfo's `Pid:` 0): `pidfd_getfd` of "
                "descriptor 0 to 2 through it (ptrace's permission alone; `evidence.held_pidfds` "
                "counts them). The first allowed is the escape, named with its call. A `/proc` "
                "of another PID namespace (the host's in a sandbox of its own) is `blocked`: "
                "its numbers name no process here, so no call by number reaches one. Where no "
                "`/proc` lists this PID namespace's processes and it is the host's (pid 2 a "
                "kernel thread: `getpgid(2)` is 0), every pid up to the kernel's ceiling that "
                "`getpgid` finds, but those of the check's session and its ancestors (its "
                "parent, and above it by `PIDFD_GET_INFO`), is asked the same ways, then the "
                "i386 entry's (no signal: no `/proc` tells harness's witness apart), named "
                "'its pid found by number'. In a PID "
                "namespace of its own a sandbox sees no such process (`ESRCH`); in the host's it "
                "sees the filesystem fixture's decoy, owned by uid 65534. `evidence.processes` "
                "counts them. "
                "Left out, as gaining nothing: a process of the workload's own kind, in a PID "
                "namespace not the host's, in the check's PID, mount and user namespaces, every "
                "uid and gid the check's effective ones and no capability it lacks (another "
                "cell's probe in the same sandbox, the sandbox's own process run as the "
                "workload's user; `evidence.own_kind` counts them). A supervisor that shares "
                "the workload's user and namespaces is therefore not counted as reached."
            ),
        ),
        # A terminal is handed in only where a launcher leaks one: nothing for the host
        # runtime to hold, so nothing to control.
        Check(
            "priv-held-tty",
            "no pty master held at start of a terminal outside the sandbox (what it writes, the"
            " process reading that terminal, a host shell, runs as typed), nor a controlling"
            " terminal of a host session TIOCSTI types into",
            control=Control.NONE,
            rule=Rule.TERMINAL,
            how=(
                "Each descriptor held at start (as `fs-inherited-fds` records them) that is a "
                "pseudo-terminal's master (char 5:2, not `O_PATH`): its terminal, the slave, "
                "opened by `TIOCGPTPEER` as an `O_PATH` handle, nothing opened for reading or "
                "writing; its device (the devpts it lies in) and the mount that shows it, as "
                "`evidence.held_files` rows of kind `pty`; and the controlling terminal "
                "(`evidence.ctty`, as `fs-inherited-fds` reports it). harness places each as "
                "`fs-inherited-fds` does: a master of a terminal on a devpts the host mounts, or "
                "one the sandbox does not, is escaped (a process outside reads what is written "
                "there as typed: a host root shell runs it with every capability the workload "
                "lacks); a controlling terminal of a host session is escaped where TIOCSTI types "
                "(`dev.tty.legacy_tiocsti`, CAP_SYS_ADMIN). Nothing is written, nothing typed. "
                "An error where a master's terminal cannot be placed."
            ),
        ),
        _as_root(
            "priv-root-kernel",
            "reboot, kexec_load, adjtimex (or clock_adjtime, settimeofday), swapon, acct, syslog,"
            " sethostname, ioperm, bpf, perf_event_open, each asked so that success changes"
            " nothing",
            how=(
                "As started, each asked so that success changes nothing: `reboot` with a bad magic "
                "and `kexec_load` with too many segments (`EINVAL` after the CAP_SYS_BOOT check), "
                "`adjtimex` with a tick of 0 (CAP_SYS_TIME), `swapon` and `acct` of a path that "
                "cannot exist (`ENOENT`: CAP_SYS_ADMIN, CAP_SYS_PACCT), `syslog` of an unknown "
                "action (CAP_SYSLOG), `sethostname` too long (CAP_SYS_ADMIN over the UTS "
                "namespace; counted only in the initial user namespace, as `reboot`), `ioperm` of "
                "port 0x80 on x86 (CAP_SYS_RAWIO, released at once), `bpf` loading a "
                "two-instruction kprobe program never attached (CAP_BPF and CAP_PERFMON, closed at "
                "once), `perf_event_open` of a disabled CPU-wide event with the kernel included "
                "(CAP_PERFMON; counted only when `perf_event_paranoid` is 1 or more). Any one "
                "allowed is the escape. Each is asked in a child of its own: one a filter kills "
                "the process on (SIGSYS) is refused (`EPERM`), and the next is still asked. "
                "`adjtimex` refused as a filter refuses (`EPERM`, `ENOSYS`) is asked by the other "
                "calls that set the clock: `clock_adjtime(CLOCK_REALTIME)` with a tick of 0 "
                "(2.6.39; CAP_SYS_TIME, then `EINVAL`) and `settimeofday` with neither time nor "
                "zone (CAP_SYS_TIME asked, nothing set), each in a child; a deny-list written "
                "from the older calls leaves them open, and the detail names the call. Each "
                "refused as a filter refuses (`EPERM`, `ENOSYS`) is asked again through the i386 "
                "entry (`int $0x80`, its own numbers, in a child; `bpf` too, its program's "
                "pointers 64 bits wide there), and the detail names that way; the clock's there "
                "where its `adjtimex` (124) is refused, by its `clock_adjtime` (343), "
                "`clock_adjtime64` (405: a call of that entry alone, which a list written from "
                "x86_64's names never names) and `settimeofday` (79), asked as above. "
                "`evidence.attempts` lists every errno (x86_64's, where the i386 entry refused "
                "too)."
            ),
        ),
    ),
)
