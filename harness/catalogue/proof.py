"""Which sandbox of `matrices/mutants.toml` leaves each row of the catalogue open:
the smallest misconfiguration that lets exactly that operation through. A row's
checks are proven by its mutant: `tests/e2e/test_properties.py` holds that each
mutant named here is a regression caught by one of its row's own checks (a mutant
flagged for another reason does not count), and `tests/catalogue/` that every row
with checks names a mutant or says why it has none."""

from __future__ import annotations

from harness.catalogue.rows import Row

_FS = "filesystem: "
_PRIV = "privilege: "
_NET = "network: "

# Row key -> the mutants that leave it open, each caught by one of the row's checks.
MUTANTS: dict[str, tuple[str, ...]] = {
    _FS + "EXECUTE: run a file": ("landlock-unhandled-execute",),
    _FS + "READ_FILE: read a file's content": (
        "landlock-unhandled-read-file",
        "landlock-undeclared-read",
    ),
    _FS + "READ_DIR: list a folder": ("landlock-unhandled-read-dir",),
    _FS + "WRITE_FILE: change a file's content": (
        "landlock-unhandled-write-file",
        "colocated-rw-etc",
        "bwrap-userns-sysadmin",
        "bwrap-hardlink-seed",
    ),
    _FS + "TRUNCATE: cut a file": ("landlock-unhandled-truncate",),
    _FS + "REMOVE_FILE: unlink a file": ("landlock-unhandled-remove-file",),
    _FS + "REMOVE_DIR: remove a folder": ("landlock-unhandled-remove-dir",),
    _FS + "MAKE_REG: create a regular file": (
        "landlock-unhandled-make-reg",
        "colocated-hidden-drop",
    ),
    _FS + "MAKE_DIR: create a folder": ("landlock-unhandled-make-dir",),
    _FS + "MAKE_SYM: create a symlink": ("landlock-unhandled-make-sym",),
    _FS + "MAKE_FIFO: create a named pipe": ("landlock-unhandled-make-fifo",),
    _FS + "MAKE_SOCK: create a unix socket file": ("landlock-unhandled-make-sock",),
    _FS + "MAKE_CHAR: create a character device": ("bwrap-block-device",),
    _FS + "MAKE_BLOCK: create a block device": (
        "bwrap-block-device",
        "bwrap-block-device-deeper",
        "landlock-loop-write",
    ),
    _FS + "mode: chmod": (
        "landlock-unfiltered-chmod",
        "landlock-i386-chmod",
        "landlock-i386-fchmodat2",
        "landlock-i386-fchmod",
        "landlock-any-arch",
        "landlock-fd-chmod",
    ),
    _FS + "owner: chown": (
        "landlock-unfiltered-chown",
        "landlock-i386-chown",
        "landlock-i386-chown16",
        "landlock-i386-fchown",
        "landlock-fd-chown",
    ),
    _FS + "times: utime": (
        "landlock-unfiltered-utime",
        "landlock-i386-utime",
        "landlock-i386-utime64",
        "landlock-fd-utime",
    ),
    _FS + "extended attributes: set or remove": (
        "landlock-unfiltered-xattr",
        "landlock-i386-xattr",
        "landlock-i386-xattrat",
        "landlock-i386-setxattrat",
        "landlock-i386-fxattr",
        "landlock-fd-xattr",
    ),
    _FS + "inode flags: chattr": (
        "landlock-unfiltered-chattr",
        "landlock-i386-chattr",
        "landlock-i386-file-setattr",
        "landlock-fd-chattr",
        "landlock-fd-fsxattr",
        "landlock-fd-setversion",
    ),
    _FS + "by file handle": ("runc-dac-read-search-allowed",),
    _FS + "through /proc/<pid>/root and /proc/<pid>/cwd": (
        "chroot-init-outside",
        "colocated-sibling-cwd",
        "colocated-parent-holds-dir",
    ),
    _FS + "through every mount point and path suffix": (
        "bwrap-host-at-host-ro",
        "runsc-host-at-host",
        "colocated-hidden-drop",
        "bwrap-helpers-rw",
        "bwrap-overlay-host",
        "landlock-write-deeper",
        "landlock-write-deep4",
        "landlock-write-fresh",
        "landlock-write-file-deep",
        "landlock-symlink-deeper",
        "landlock-remove-deeper",
        "landlock-rmdir-deeper",
        "landlock-truncate-deeper",
        "landlock-whiteout-deeper",
        "landlock-socknode-deeper",
        "landlock-remove-leaf",
        "landlock-truncate-bin",
        "landlock-rmdir-unlisted",
    ),
    _FS + "from the working folder it started in": ("jail-keep-cwd",),
    _FS + "by a second chroot, left unentered (CAP_SYS_CHROOT)": ("jail-keep-chroot",),
    _FS + "through a descriptor the workload holds when it starts": (
        "bwrap-leaked-fd",
        "bwrap-leaked-fd-high",
        "bwrap-leaked-file",
        "bwrap-leaked-mntns",
        "landlock-held-ring",
        "bwrap-held-ring-file",
        "bwrap-queued-dirfd",
        "bwrap-queued-empty",
        "bwrap-held-listener",
        "bwrap-held-pty",
        "bwrap-tty-session",
        # (bwrap-held-pipe is caught as an error, inconclusive: no escape to prove it)
        "bwrap-held-token",
    ),
    _FS + "through another process's descriptors": ("bwrap-shared-pid-fds",),
    _FS + "through io_uring's file operations": (
        "landlock-unfiltered-io-uring",
        "landlock-sqpoll-uring",
        "landlock-i386-io-uring",
    ),
    _PRIV + "starting user and group": ("colocated-wrong-user",),
    _PRIV + "set*id to root": (
        "root-no-setuid-fixup",
        "user-setgid-cap",
        "user-setgid-cap-groups",
        "user-setuid-cap-fsids",
        "user-i386-setgid-cap",
    ),
    _PRIV + "capset: raise a capability": ("user-dormant-cap", "user-i386-dormant-cap"),
    _PRIV + "ambient capabilities": ("user-inheritable-cap", "user-i386-inheritable-cap"),
    _PRIV + "securebits": ("root-securebits-unlocked",),
    _PRIV + "exec of a setuid file": (
        "runc-setuid",
        "user-suid-in-view",
        "user-suid-other-in-view",
        "user-held-setuid",
        "user-held-setuid-high",
    ),
    _PRIV + "exec of a setgid file": (
        "root-setgid-kept",
        "user-sgid-in-view",
        "user-sgid-other-in-view",
    ),
    _PRIV + "exec of a file with capabilities": (
        "root-fcap-kept",
        "root-fcap-no-net-raw",
        "user-fcap-in-view",
    ),
    _PRIV + "exec carrying the workload's inheritable capabilities": ("user-inheritable-only",),
    _PRIV + "mount, and the new mount API": ("runc-sys-admin-allowed",),
    _PRIV + "kernel parameters (/proc/sys)": ("runc-unmasked",),
    _PRIV + "host kernel state: every sysctl, sysfs attribute and cgroup file": (
        "bwrap-cgroup-rw",
        "bwrap-sysctl-vm-rw",
        "bwrap-hostnet-sysctl-rw",
        "bwrap-second-proc-rw",
        "bwrap-cgroup-at-run",
        "bwrap-cgroup-subtree",
        "root-proc-irq-rw",
        "bwrap-tracefs-rw",
        "bwrap-bpffs-rw",
        "bwrap-cgroup-clone3",
        "landlock-clone3",
        "landlock-clone3-i386",
        "landlock-i386-bpf",
        "bwrap-cgroup-own",
    ),
    _PRIV + "cgroup release_agent": ("runc-sys-admin",),
    _PRIV + "kernel modules": ("runc-sys-module-allowed",),
    _PRIV + "other processes' memory and descriptors": ("runc-host-pid", "landlock-host-pid"),
    _PRIV + "the kernel itself: boot, BPF, perf, raw I/O, swap, quotas, accounting, clock": (
        "runc-syslog-allowed",
    ),
    _NET + "AF_INET TCP, by name and by raw address": (
        "bwrap-port-allowlist",
        "bwrap-own-resolver-tcp",
        "bwrap-sidecar-resolver-tcp",
        "bwrap-addrlen-filter",
        "bwrap-socket-hibits",
        "bwrap-socket-proto-exact",
    ),
    _NET + "AF_INET UDP": (
        "bwrap-port-allowlist",
        "bwrap-own-resolver",
        "bwrap-own-resolver-notxt",
        "bwrap-linklocal-resolver",
        "bwrap-socket-type-exact",
        "bwrap-socket-type-cloexec",
    ),
    _NET + "AF_INET6 TCP": ("bwrap-ipv6-forwarded",),
    _NET + "AF_INET6 UDP": ("bwrap-ipv6-forwarded",),
    _NET + "ICMP echo (ping sockets)": ("bwrap-ipv6-forwarded", "bwrap-ping-exact"),
    _NET + "other IP protocols: UDP-Lite and raw IP": ("bwrap-other-protocols",),
    _NET + "AF_UNIX by path: a proxy on the host": (
        "bwrap-unix-proxy",
        "bwrap-unix-dialect",
        "bwrap-unix-proxy-deep",
        "bwrap-unix-proxy-long",
        "bwrap-unix-proxy-far",
        "bwrap-unix-proxy-usr",
    ),
    _NET + "AF_INET TCP to a relay in its own network namespace (a sidecar proxy), or one its"
    " environment names": (
        "bwrap-loopback-proxy",
        "landlock-host-proxy",
        "landlock-host-proxy-mapped",
        "bwrap-gateway-proxy-named",
        "bwrap-gateway-proxy",
        "bwrap-gateway6-proxy",
        "bwrap-loopback-proxy-443",
        "bwrap-loopback-proxy-auth",
        "bwrap-loopback-proxy-get",
    ),
    _NET + "AF_INET UDP to a relay or resolver (a sidecar's, a shipper on the host)": (
        "bwrap-gateway-udp",
        "bwrap-udp-sidecar",
        "bwrap-udp-sidecar-connected",
        "bwrap-udp-sidecar-mapped",
        "bwrap-udp-sidecar-exact",
        "bwrap-sidecar-resolver",
    ),
    _NET + "AF_UNIX abstract names": (
        "bwrap-abstract-unix",
        "bwrap-abstract-unix-dgram",
        "bwrap-abstract-unix-seqpacket",
    ),
    _NET + "AF_UNIX: a listener outside the sandbox (a daemon's, the host's)": (
        "bwrap-host-listener",
        "bwrap-host-listener-pid",
        "bwrap-host-listener-dgram",
        "bwrap-host-listener-sendto",
    ),
    _NET + "the socket API's send calls, connected or not": ("bwrap-send-calls",),
    _NET + "TCP made without connect(2): Fast Open": (
        "bwrap-fastopen-sendto",
        "bwrap-fastopen-sendmsg",
        "bwrap-fastopen-sendmmsg",
        "bwrap-ipv6-fastopen",
    ),
    _NET + "AF_INET TCP through a Multipath TCP socket": ("landlock-tcp-mptcp",),
    _NET + "IPv4 by an AF_INET6 socket (a v4-mapped address)": ("bwrap-ipv4-mapped",),
    _NET + "io_uring's network operations": (
        "bwrap-io-uring",
        "bwrap-io-uring-socket",
        "bwrap-io-uring-sqpoll",
        "landlock-tcp-uring",
    ),
    _NET + "socket calls through the i386 entry (int $0x80)": (
        "bwrap-i386-socket",
        "bwrap-i386-socketcall",
        "bwrap-i386-udp",
        "bwrap-i386-fastopen",
        "bwrap-i386-ipv6",
    ),
    _NET + "source ports a stateless rule keys on": ("bwrap-privport", "bwrap-tcp-sport"),
    _NET + "the host's own addresses": ("bwrap-no-forward",),
    _NET + "the cloud metadata addresses": ("bwrap-metadata",),
    _NET + "AF_PACKET": (
        "bwrap-packet-socket",
        "bwrap-packet-socket-raw",
        "bwrap-packet-socket-exact",
        "bwrap-firewall-packet",
        "bwrap-packet6-socket",
        "bwrap-wide-subnet",
        "bwrap-packet-socket-uring",
        "bwrap-packet-socket-i386",
        "bwrap-packet-socket-inet",
        "bwrap-xdp-socket",
        "bwrap-packet-socket-write",
        "bwrap-packet-socket-sendmmsg",
        "bwrap-packet-socket-uring-send",
        "bwrap-packet6-linklocal",
        "bwrap-packet-noaddr",
    ),
    _NET + "destinations other than the canary, the host and the metadata addresses": (
        "bwrap-private-ranges",
        "bwrap-web-out",
        "bwrap-http-out",
    ),
    _NET + "a route the workload makes itself (CAP_NET_ADMIN over its network namespace)": (
        "bwrap-route-net-admin",
        "bwrap-route-dead-default",
        "bwrap-rule-net-admin",
        "bwrap-route6-net-admin",
        "bwrap-rule6-net-admin",
        "bwrap-route-ioctl-hibits",
        "bwrap-route-ioctl-netlink",
        "bwrap-route-netlink-hibits",
    ),
    _NET + "a firewall inside its own network namespace, opened (CAP_NET_ADMIN over it)": (
        "bwrap-firewall-net-admin",
    ),
    _NET + "sockets the workload holds when it starts": (
        "bwrap-held-socket",
        "bwrap-held-tun",
        "bwrap-held-daemon",
        "bwrap-held-packet",
        "bwrap-held-raw",
        "bwrap-held-socket-high",
        "bwrap-held-socket-write",
        "bwrap-held-unix",
        "bwrap-held-unix-dgram",
        "bwrap-held-unix-seqpacket",
        "bwrap-held-inet6",
        "bwrap-held-netns",
        "bwrap-held-netns-ports",
        "bwrap-held-ring-socket",
        "bwrap-pid-netns",
        "bwrap-held-procfs",
        "bwrap-userns-netns",
        "bwrap-bound-procfs",
        "bwrap-sibling-socket",
    ),
    _NET + "System V and POSIX IPC shared with the host": ("bwrap-shared-ipc", "bwrap-host-mqueue"),
    _NET + "AF_INET TCP to an allowed destination, from a program the policy does not name": (
        "supervisor-any-binary",
    ),
}

# Row key -> why no sandbox on this machine can leave exactly that row open.
NO_MUTANT: dict[str, str] = {
    _FS + "REFER: move or link a file across folders": "none of its own: Landlock links or"
    " moves a file across folders only where it gains no right it lacked there (never"
    " with REFER unhandled), and a mount sandbox cannot link across its mounts (EXDEV),"
    " so what the move reaches the content rows reach first; only a mediator of path"
    " strings (seccomp user notification, ptrace) could leave it open alone. Its checks"
    " escape beside other rows in `bwrap-rw-root`",
}


def mutants_of(row: Row) -> tuple[str, ...]:
    return MUTANTS.get(row.key, ())
