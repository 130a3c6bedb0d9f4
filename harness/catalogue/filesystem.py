"""Filesystem rows: Landlock's access rights first (a maintained list of the kernel's
file operations), then what Landlock does not cover, then the routes by which any of
them reaches a file (the rows of `ROUTES`)."""

from __future__ import annotations

from functools import partial

from harness.catalogue.rows import Row, Surface

_LANDLOCK = "Landlock access right"
_BEYOND = "beyond Landlock"
_ROUTE = "route"
_OPEN = ("open", "openat", "openat2", "creat")

_READS = (
    "fs-read-outside",
    "fs-traversal",
    "fs-symlink-planted",
    "fs-symlink-made",
    "fs-proc-self-root",
    "fs-proc-1-root",
    "fs-hardlink-in",
    "fs-routes",
    "fs-mounts",
)


_fs = partial(Row, Surface.FILESYSTEM)


ROWS: tuple[Row, ...] = (
    _fs(
        _LANDLOCK,
        "EXECUTE: run a file",
        ("execve", "execveat"),
        checks=("fs-exec-outside",),
        ways=("i386: execve, execveat",),
        target="outside/exec-me (a copy of the probe), by path and by an O_PATH handle; through"
        " the i386 entry where a filter refused x86_64's calls, as in place of EXECUTE left"
        " unhandled (a 64-bit caller may make them, and the kernel runs a 64-bit program as"
        " ELF64)",
    ),
    _fs(
        _LANDLOCK,
        "READ_FILE: read a file's content",
        (
            *_OPEN,
            "read",
            "pread64",
            "readv",
            "preadv",
            "preadv2",
            "sendfile",
            "splice",
            "tee",
            "copy_file_range",
            "mmap",
            "readahead",
        ),
        checks=_READS,
        target="sentinel, more sentinels, the host's files below each mount",
    ),
    _fs(
        _LANDLOCK,
        "READ_DIR: list a folder",
        ("getdents", "getdents64"),
        checks=("fs-list-outside",),
        ways=("i386: getdents64, getdents",),
        target="the outside folder (a name holding the token); through the i386 entry where a"
        " filter refused x86_64's calls, as in place of READ_DIR left unhandled (io_uring has"
        " no opcode that lists a folder)",
    ),
    _fs(
        _LANDLOCK,
        "WRITE_FILE: change a file's content",
        (
            *_OPEN,
            "write",
            "pwrite64",
            "writev",
            "pwritev",
            "pwritev2",
            "mmap",
            "msync",
            "fallocate",
        ),
        checks=(
            "fs-overwrite-outside",
            "fs-sentinel-intact",
            "fs-write-read-only",
            "fs-write-reach",
        ),
        ways=(
            "a read-only mount remounted read-write in a mount namespace of its own (CAP_SYS_ADMIN"
            " over the user namespace that owns it: a read-only flag is locked only where a more"
            " privileged namespace set it)",
            "mount_setattr: the same mount made read-write by the new mount API (5.12), where a"
            " deny-list refuses mount(2)",
        ),
        target="overwrite-me; every file harness made outside, compared on the host;"
        " overwrite-me in harness's folder in each of the policy's read-only grants; the"
        " host's files (no execute bit) below each mount, opened for writing; each file"
        " of the write grants, its link count held to the links found within them",
    ),
    _fs(
        _LANDLOCK,
        "TRUNCATE: cut a file",
        ("truncate", "ftruncate", *_OPEN),
        checks=("fs-truncate-outside", "fs-write-read-only"),
        ways=(
            "an open for reading with O_TRUNC: it cuts the file as truncate(2) does, and"
            " Landlock asks it for READ_FILE alone where TRUNCATE is unhandled (ABI < 3, a"
            " filter refusing truncate and ftruncate in its place)",
            "i386: truncate, truncate64",
        ),
        target="truncate-me (outside, and in each read-only grant's folder)",
        kernels="all (Landlock ABI 3+ handles it)",
    ),
    _fs(
        _LANDLOCK,
        "REMOVE_FILE: unlink a file",
        ("unlink", "unlinkat"),
        checks=("fs-unlink-outside", "fs-write-read-only"),
        ways=(
            "i386: unlink, unlinkat",
            "io_uring: IORING_OP_UNLINKAT (both where a filter refused x86_64's calls, as in"
            " place of REMOVE_FILE left unhandled: a deny-list of x86_64's numbers lets them"
            " through)",
        ),
        target="unlink-me (outside, and in each read-only grant's folder)",
    ),
    _fs(
        _LANDLOCK,
        "REMOVE_DIR: remove a folder",
        ("rmdir", "unlinkat"),
        checks=("fs-rmdir-outside",),
        ways=(
            "i386: rmdir, unlinkat",
            "io_uring: IORING_OP_UNLINKAT with AT_REMOVEDIR (both where a filter refused"
            " x86_64's calls, as in place of REMOVE_DIR left unhandled)",
        ),
        target="rmdir-me",
    ),
    _fs(
        _LANDLOCK,
        "MAKE_REG: create a regular file",
        (*_OPEN, "mknod", "mknodat"),
        checks=("fs-create-outside", "fs-write-read-only", "fs-write-reach"),
        ways=(
            "mknod: x86_64's mknod and mknodat with S_IFREG, which need no CAP_MKNOD (where a"
            " filter refused open with O_CREAT, as in place of MAKE_REG left unhandled: a"
            " deny-list of the creating opens may forget them)",
            "i386: open, openat, creat, openat2, mknod, mknodat",
            "io_uring: IORING_OP_OPENAT, IORING_OP_OPENAT2 with O_CREAT (both where a filter"
            " refused x86_64's calls: a deny-list of x86_64's numbers lets them through)",
        ),
        target="outside/created-TAG, created-TAG in each read-only grant's folder; an"
        " O_TMPFILE file at each mount point and in the host's folders below it",
    ),
    _fs(
        _LANDLOCK,
        "MAKE_DIR: create a folder",
        ("mkdir", "mkdirat"),
        checks=("fs-mkdir-outside",),
        ways=(
            "i386: mkdir, mkdirat",
            "io_uring: IORING_OP_MKDIRAT",
            "io_uring: IORING_OP_MKDIRAT, its ring set up and entered through the i386 entry",
        ),
        target="outside/dir-TAG",
    ),
    _fs(
        _LANDLOCK,
        "MAKE_SYM: create a symlink",
        ("symlink", "symlinkat"),
        checks=("fs-symlink-outside",),
        ways=("i386: symlink, symlinkat", "io_uring: IORING_OP_SYMLINKAT"),
        target="outside/symlink-TAG",
    ),
    _fs(
        _LANDLOCK,
        "MAKE_FIFO: create a named pipe",
        ("mknod", "mknodat"),
        checks=("fs-mkfifo-outside",),
        ways=("i386: mknod, mknodat",),
        target="outside/fifo-TAG",
    ),
    _fs(
        _LANDLOCK,
        "MAKE_SOCK: create a unix socket file",
        ("mknod", "mknodat", "bind"),
        checks=("fs-socket-outside",),
        ways=(
            "i386: mknod, mknodat",
            "i386: bind, socketcall",
            "io_uring: IORING_OP_SOCKET and IORING_OP_BIND (6.11+)",
            "socketpair: a socket of a pair, bound, where socket(AF_UNIX) is refused",
        ),
        target="outside/sock-TAG",
    ),
    _fs(
        _LANDLOCK,
        "MAKE_CHAR: create a character device",
        ("mknod", "mknodat"),
        checks=("priv-root-mknod", "fs-write-reach"),
        ways=("i386: mknod, mknodat",),
        target="a device node in the allowed folder; a whiteout (a character device 0:0,"
        " which needs no CAP_MKNOD) in each host folder fs-write-reach walks, through the"
        " i386 entry where a filter refused x86_64's mknod, as in place of MAKE_CHAR left"
        " unhandled (io_uring has no mknod)",
    ),
    _fs(
        _LANDLOCK,
        "MAKE_BLOCK: create a block device",
        ("mknod", "mknodat"),
        checks=("priv-root-mknod",),
        ways=("i386: mknod, mknodat",),
        target="a device node in the allowed folder",
    ),
    _fs(
        _LANDLOCK,
        "REFER: move or link a file across folders",
        ("rename", "renameat", "renameat2", "link", "linkat"),
        checks=("fs-rename-in", "fs-hardlink-in"),
        target="rename-me, sentinel",
        kernels="all (Landlock ABI 2+ handles it)",
    ),
    _fs(
        _LANDLOCK,
        "IOCTL_DEV: ioctl on a device file",
        ("ioctl",),
        unseen="a device's ioctls change the device, not a file: the devices that hold"
        " host files are disks, and `priv-root-mknod` makes the open an ioctl on one needs"
        " (a sector read through every block device node in /dev and through a node made"
        " for each mounted disk); TIOCSTI into a terminal shared with the host is never"
        " tried, since any success would type into the operator's terminal (kernels since"
        " 6.2 refuse it without CAP_SYS_ADMIN only where dev.tty.legacy_tiocsti is 0, which"
        " CONFIG_LEGACY_TIOCSTI sets to 1 by default, as on this lab's kernel): a controlling"
        " terminal of a host session is placed instead (fs-inherited-fds, the row of"
        " descriptors held at start), and judged by whether the kernel allows TIOCSTI",
        kernels="all (Landlock ABI 5+ handles it)",
    ),
    _fs(
        _BEYOND,
        "mode: chmod",
        ("chmod", "fchmod", "fchmodat", "fchmodat2"),
        checks=("fs-chmod-outside", "fs-write-read-only"),
        target="chmod-me, outside and in each read-only grant",
        ways=(
            "i386: chmod, fchmodat, fchmodat2, fchmod",
            "a descriptor opened for reading: fchmod",
        ),
        kernels="all (fchmodat2: 6.6+)",
    ),
    _fs(
        _BEYOND,
        "owner: chown",
        ("chown", "fchown", "lchown", "fchownat"),
        checks=("fs-chown-outside", "fs-write-read-only"),
        target="chown-me, outside and in each read-only grant",
        ways=(
            "i386: chown32, lchown32, fchownat, chown, lchown, fchown32, fchown",
            "a descriptor opened for reading: fchown",
        ),
    ),
    _fs(
        _BEYOND,
        "times: utime",
        ("utime", "utimes", "futimesat", "utimensat"),
        checks=("fs-utime-outside", "fs-write-read-only"),
        target="utime-me, outside and in each read-only grant",
        ways=(
            "i386: utime, utimes, utimensat, futimesat, utimensat_time64",
            "a descriptor opened for reading: futimens",
        ),
    ),
    _fs(
        _BEYOND,
        "extended attributes: set or remove",
        (
            "setxattr",
            "lsetxattr",
            "fsetxattr",
            "removexattr",
            "lremovexattr",
            "fremovexattr",
            "setxattrat",
            "removexattrat",
        ),
        checks=("fs-xattr-outside", "fs-write-read-only"),
        target="xattr-me (user.*), outside and in each read-only grant",
        ways=(
            "i386: setxattr, lsetxattr, removexattr, lremovexattr, removexattrat, setxattrat,"
            " fsetxattr, fremovexattr",
            "a descriptor opened for reading: fsetxattr, fremovexattr",
        ),
        kernels="all (setxattrat, removexattrat: 6.13+)",
    ),
    _fs(
        _BEYOND,
        "inode flags: chattr",
        ("ioctl", "file_setattr"),
        checks=("fs-chattr-outside", "fs-write-read-only"),
        ways=(
            "i386: ioctl, file_setattr",
            "a descriptor opened for reading: FS_IOC_SETFLAGS",
            "a descriptor opened for reading: FS_IOC_FSSETXATTR (xfs_io's)",
            "a descriptor opened for reading: FS_IOC_SETVERSION (its generation; ext4's too)",
            "a widened argument: each of those ioctls refused (EPERM) made again with its"
            " request's upper 32 bits set, which the kernel does not read and a filter"
            " comparing all 64 (libseccomp's SCMP_CMP_EQ) matches to no rule",
        ),
        target="chattr-me (the no-dump flag, and its generation)",
        kernels="all (file_setattr: 6.17+)",
    ),
    _fs(
        _BEYOND,
        "metadata: stat, access, readlink, extended attribute reads, watches",
        (
            "stat",
            "fstat",
            "lstat",
            "newfstatat",
            "statx",
            "access",
            "faccessat",
            "faccessat2",
            "readlink",
            "readlinkat",
            "getxattr",
            "lgetxattr",
            "fgetxattr",
            "listxattr",
            "llistxattr",
            "flistxattr",
            "getxattrat",
            "listxattrat",
            "statfs",
            "fstatfs",
            "ustat",
            "inotify_init",
            "inotify_init1",
            "inotify_add_watch",
            "inotify_rm_watch",
            "fanotify_init",
            "fanotify_mark",
            "file_getattr",
            "getcwd",
            "chdir",
            "fchdir",
            "name_to_handle_at",
        ),
        unseen="not a read of content: a file's existence, size and times are visible"
        " through a path the sandbox may traverse, and Landlock does not restrict them"
        " either; a policy that must hide names hides the folder",
    ),
    _fs(
        _ROUTE,
        "by file handle",
        ("open_by_handle_at",),
        checks=("priv-root-handle",),
        ways=("i386: name_to_handle_at, open_by_handle_at",),
        target="a handle to the host's root",
    ),
    _fs(
        _ROUTE,
        "through /proc/<pid>/root and /proc/<pid>/cwd",
        (),
        checks=("fs-proc-self-root", "fs-proc-1-root", "fs-proc-fds"),
        target="sentinel; every other visible process's working folder and every folder it"
        " holds, as a base for the sentinels' paths (and behind up to six ..), as its owner;"
        " pid 1's root, and every other visible process's root, working folder and held"
        " folders, against the grants (listed, or an O_TMPFILE made there)",
        ways=(
            "pid 1's root on a host tree no sentinel lies in (a launcher whose /tmp, /var/tmp"
            " and home are private mounts of its own): the host's folders listed and written"
            " through /proc/1/root",
            "another process's root or working folder on a host tree no sentinel lies in (a"
            " helper the launcher left in the sandbox's PID namespace, its /tmp, /var/tmp and"
            " home private): the host's folders listed and written through /proc/<pid>/root"
            " and /proc/<pid>/cwd",
        ),
    ),
    _fs(
        _ROUTE,
        "through every mount point and path suffix",
        (),
        checks=("fs-routes", "fs-mounts", "fs-write-reach"),
        target="every sentinel, the host's files and folders below each mount, and a write"
        " in every folder the workload can list below each; the same below the root of each"
        " visible process's mount namespace, entered by setns (no mutant of its own: a PID"
        " namespace shared with its launcher shows the launcher's root at /proc/<pid>/root"
        " first)",
        ways=(
            "a bind mount of a host folder",
            "an overlay of the sandbox's own whose layer is a host folder",
            "a write grant deeper than harness's listing of the host",
            "a grant of removal alone (Landlock's REMOVE_FILE, REMOVE_DIR) on a host folder:"
            " unlink of a folder in it, rmdir of a file in it, each refused only as the wrong"
            " kind, nothing removed",
            "a grant of truncation alone (Landlock's TRUNCATE) on a host folder: truncate past"
            " the file-size limit, refused only by that limit, nothing changed",
            "a grant of one kind of node alone (Landlock's MAKE_CHAR, MAKE_SOCK) on a host"
            " folder: a whiteout (a character device 0:0, no CAP_MKNOD needed) or a socket's"
            " node made by mknod, each removed",
            "harness's decoys (a file and a folder the host makes in each folder a launcher"
            " names beyond its policy): written, truncated (by truncate(2), an open with"
            " O_TRUNC, for reading alone too, and the i386 entry's truncate where a filter"
            " refused x86_64's) and removed where no entry of the host's own shows the right"
            " (a folder of files only, of executables only, or one the workload cannot list)",
        ),
    ),
    _fs(
        _ROUTE,
        "through a descriptor the workload holds when it starts",
        (
            "dup",
            "dup2",
            "dup3",
            "fcntl",
            "openat",
            "openat2",
            "setns",
            "recvmsg",
            "accept4",
            "ioctl",
        ),
        checks=("fs-inherited-fds",),
        target="every sentinel; overwrite-me; each held folder or file itself, against the"
        " grants; a held pty master's terminal and the controlling terminal, by their session"
        " (TIOCSTI where the kernel allows it); a held pipe's reader (an error where outside)",
        ways=(
            "a held namespace descriptor (nsfs) or pidfd: setns into its mount namespace",
            "a held io_uring ring: IORING_OP_OPENAT as each personality registered on it",
            "a held io_uring ring's registered files: IORING_OP_FIXED_FD_INSTALL, then as held",
            "a held unix socket's queued descriptors (SCM_RIGHTS): recvmsg (a message of no"
            " bytes too), and accept4 on a held unix listener, then as held",
            "a held file's owner: fchown to its own owner and group (with CAP_CHOWN, as"
            " Docker keeps it, to anyone's)",
            "a held file's metadata by another call (mode, owner, times, an extended"
            " attribute, inode flags, each set to what it was), where a filter refuses the"
            " descriptor's own: the *at call on the descriptor itself (AT_EMPTY_PATH:"
            " fchmodat2, fchownat, setxattrat, file_setattr; FS_IOC_FSSETXATTR), the path"
            " calls through /proc/self/fd",
            "a held file's metadata through the i386 entry: each of those calls there",
            "i386: setns",
        ),
    ),
    _fs(
        _ROUTE,
        "from the working folder it started in",
        ("getcwd", "chdir", "fchdir"),
        checks=("fs-cwd",),
        target="every sentinel, by .. and by path suffix; overwrite-me; the working folder"
        " and each folder .. leads to from it, against the grants (listed, or an O_TMPFILE"
        " made there)",
        ways=(
            "a working folder on a host tree no sentinel lies in (a launcher whose /tmp,"
            " /var/tmp and home are private mounts of its own): the host's folders listed"
            " and written from it",
        ),
    ),
    _fs(
        _ROUTE,
        "by a second chroot, left unentered (CAP_SYS_CHROOT)",
        ("chroot",),
        checks=("fs-chroot-escape",),
        target="every sentinel, by .. from the working folder",
        ways=("i386: chroot",),
    ),
    _fs(
        _ROUTE,
        "through another process's descriptors",
        ("pidfd_open", "pidfd_getfd", "kcmp"),
        checks=("fs-proc-fds",),
        target="sentinel (the decoy's fd 3)",
        ways=(
            "a pid by number: pidfd_open of each pid getpgid finds, in the host's PID namespace"
            " where no /proc lists its processes",
            "i386: pidfd_open, pidfd_getfd",
        ),
        kernels="all (pidfd_getfd: 5.6+)",
    ),
    _fs(
        _ROUTE,
        "through io_uring's file operations",
        ("io_uring_setup", "io_uring_enter", "io_uring_register"),
        checks=("fs-io-uring",),
        target="sentinel; uring-me",
        ways=(
            "io_uring: a ring polled by its own thread (IORING_SETUP_SQPOLL), enter refused",
            "i386: io_uring_setup, io_uring_enter",
            "a held io_uring ring: IORING_OP_SETXATTR through each ring held at start, as the"
            " workload itself, where io_uring_setup is refused",
        ),
        kernels="5.1+ (operations added up to 6.x)",
    ),
)
