"""Filesystem rows: Landlock's access rights first (a maintained list of the kernel's
file operations), then what Landlock does not cover, then the routes by which any of
them reaches a file (the rows of `ROUTES`)."""

from __future__ import annotations

from functools import partial

from harness.catalogue.rows import NOT_YET, Row, Surface

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
    _fs(_LANDLOCK, "EXECUTE: run a file", ("execve", "execveat"), unseen=NOT_YET),
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
    _fs(_LANDLOCK, "READ_DIR: list a folder", ("getdents", "getdents64"), unseen=NOT_YET),
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
        checks=("fs-overwrite-outside", "fs-sentinel-intact"),
        target="overwrite-me, sentinel",
    ),
    _fs(
        _LANDLOCK,
        "TRUNCATE: cut a file",
        ("truncate", "ftruncate", *_OPEN),
        unseen=NOT_YET,
        kernels="all (Landlock ABI 3+ handles it)",
    ),
    _fs(_LANDLOCK, "REMOVE_FILE: unlink a file", ("unlink", "unlinkat"), unseen=NOT_YET),
    _fs(_LANDLOCK, "REMOVE_DIR: remove a folder", ("rmdir", "unlinkat"), unseen=NOT_YET),
    _fs(
        _LANDLOCK,
        "MAKE_REG: create a regular file",
        (*_OPEN, "mknod", "mknodat"),
        checks=("fs-create-outside",),
        target="outside/created-TAG",
    ),
    _fs(_LANDLOCK, "MAKE_DIR: create a folder", ("mkdir", "mkdirat"), unseen=NOT_YET),
    _fs(_LANDLOCK, "MAKE_SYM: create a symlink", ("symlink", "symlinkat"), unseen=NOT_YET),
    _fs(_LANDLOCK, "MAKE_FIFO: create a named pipe", ("mknod", "mknodat"), unseen=NOT_YET),
    _fs(
        _LANDLOCK,
        "MAKE_SOCK: create a unix socket file",
        ("mknod", "mknodat", "bind"),
        unseen=NOT_YET,
    ),
    _fs(
        _LANDLOCK,
        "MAKE_CHAR: create a character device",
        ("mknod", "mknodat"),
        checks=("priv-root-mknod",),
        target="a device node in the allowed folder",
    ),
    _fs(
        _LANDLOCK,
        "MAKE_BLOCK: create a block device",
        ("mknod", "mknodat"),
        checks=("priv-root-mknod",),
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
        unseen=NOT_YET,
        kernels="all (Landlock ABI 5+ handles it)",
    ),
    _fs(_BEYOND, "mode: chmod", ("chmod", "fchmod", "fchmodat", "fchmodat2"), unseen=NOT_YET),
    _fs(_BEYOND, "owner: chown", ("chown", "fchown", "lchown", "fchownat"), unseen=NOT_YET),
    _fs(_BEYOND, "times: utime", ("utime", "utimes", "futimesat", "utimensat"), unseen=NOT_YET),
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
        unseen=NOT_YET,
    ),
    _fs(_BEYOND, "inode flags: chattr", ("ioctl", "file_setattr"), unseen=NOT_YET),
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
        target="a handle to the host's root",
    ),
    _fs(
        _ROUTE,
        "through /proc/<pid>/root and /proc/<pid>/cwd",
        (),
        checks=("fs-proc-self-root", "fs-proc-1-root"),
        target="sentinel",
    ),
    _fs(
        _ROUTE,
        "through every mount point and path suffix",
        (),
        checks=("fs-routes", "fs-mounts"),
        target="every sentinel, the host's files below each mount",
    ),
    _fs(
        _ROUTE,
        "through a descriptor the workload holds when it starts",
        ("dup", "dup2", "dup3", "fcntl", "openat", "openat2"),
        unseen=NOT_YET,
    ),
    _fs(
        _ROUTE,
        "through another process's descriptors",
        ("pidfd_open", "pidfd_getfd", "kcmp"),
        unseen=NOT_YET,
    ),
    _fs(
        _ROUTE,
        "through io_uring's file operations",
        ("io_uring_setup", "io_uring_enter", "io_uring_register"),
        unseen=NOT_YET,
        kernels="5.1+ (operations added up to 6.x)",
    ),
)
