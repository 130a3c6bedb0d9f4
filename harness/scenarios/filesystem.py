"""Filesystem confinement: nothing outside the allowed paths may be read or changed."""

from __future__ import annotations

from harness.scenarios.base import GRANTED_SENTINELS, Check, Control, Need, Rule, Scenario

# Checked on the host after the cell, not by the probe: writes count only if visible there.
SENTINEL_INTACT = "fs-sentinel-intact"


def _read(check_id: str, doc: str, *, control_id: str | None = None) -> Check:
    """A read: one that goes through without the sentinel's content is blocked."""
    return Check(check_id, doc, control_id=control_id, rule=Rule.READ)


def _write(check_id: str, doc: str, host_fact: str) -> Check:
    """A write: an escape only if the host sees `host_fact` in the sentinels' state."""
    doc = f"{doc} (escape only if the host sees it)"
    return Check(check_id, doc, rule=Rule.WRITE, host_fact=host_fact)


FILESYSTEM = Scenario(
    name="filesystem-confinement",
    summary="the mount table; read, write, traverse, symlink, /proc/*/root, link, rename or"
    " open by handle outside the allowed dir",
    property="filesystem_confinement",
    needs=frozenset({Need.SENTINELS, Need.HOST_FS}),
    checks=(
        _read("fs-read-outside", "read the sentinel by absolute path"),
        _write("fs-create-outside", "create a file outside", "created"),
        _write(
            "fs-overwrite-outside",
            "overwrite a file outside (open for writing, no O_TRUNC)",
            "overwritten",
        ),
        _read("fs-traversal", "read the sentinel via .. from the allowed dir"),
        _read("fs-symlink-planted", "read through a symlink the harness planted, pointing out"),
        _read("fs-symlink-made", "make a symlink to the sentinel in the allowed dir, read it"),
        _read("fs-proc-self-root", "read the sentinel via /proc/self/root"),
        # The host may deny /proc/1/root even to root (ptrace access to pid 1), so
        # the control is the sentinel being readable at all.
        _read("fs-proc-1-root", "read the sentinel via /proc/1/root", control_id="fs-read-outside"),
        _read("fs-hardlink-in", "hard-link the sentinel into the allowed dir, read it"),
        _write("fs-rename-in", "rename an outside file into the allowed dir", "renamed"),
        Check(
            "fs-mounts",
            "no mount exposes a host filesystem beyond the granted folders",
            rule=Rule.MOUNTS,
        ),
        Check(
            "fs-write-reach",
            "make a file (O_TMPFILE) or open one for writing at every mount point and the"
            " host's folders and files below it: none beyond the write grants",
            rule=Rule.WRITE_REACH,
        ),
        Check(
            "fs-routes",
            "read any sentinel (fixture, /tmp, /var/tmp, work folder) by every route: host"
            " path, mount point + path suffix, /proc/<pid>/root as its owner, file handles",
        ),
        Check("fs-allowed-write", "write inside the allowed dir", inside_control=True),
        Check("fs-allowed-read", "read back inside the allowed dir", inside_control=True),
        # The catalogue's write kinds (docs/attack-surface.md), each on its own fresh
        # target outside, every syscall of the kind in turn.
        _write("fs-truncate-outside", "truncate a file outside (truncate, O_TRUNC)", "truncated"),
        _write("fs-unlink-outside", "unlink a file outside", "unlinked"),
        _write("fs-rmdir-outside", "remove a folder outside", "removed_dir"),
        _write("fs-mkdir-outside", "make a folder outside", "made_dir"),
        _write("fs-symlink-outside", "make a symlink outside", "made_symlink"),
        _write("fs-mkfifo-outside", "make a named pipe outside (mknod S_IFIFO)", "made_fifo"),
        _write("fs-socket-outside", "bind a unix socket file outside", "made_socket"),
        _write("fs-chmod-outside", "change a file's mode outside", "mode_changed"),
        _write("fs-chown-outside", "change a file's owner or group outside", "owner_changed"),
        _write("fs-utime-outside", "change a file's times outside", "times_changed"),
        _write(
            "fs-xattr-outside",
            "set or remove a file's user.* extended attributes outside",
            "xattrs_changed",
        ),
        _write(
            "fs-chattr-outside",
            "change a file's inode flags outside (file_setattr, FS_IOC_SETFLAGS)",
            "flags_changed",
        ),
        _read("fs-list-outside", "list the outside folder: a name harness put there shows"),
        # A descriptor handed in at start is a route only where a launcher leaks one:
        # there is nothing for the host runtime to hold, so nothing to control.
        Check(
            "fs-inherited-fds",
            "read any sentinel through each descriptor held at start: under a folder (up"
            " with .., or a path suffix below it), a file's content, /proc/self/fd/N; and"
            " no folder, file or block device held at start, nor folder `..` leads to from"
            " one, beyond the grants (read, or written through: opened for writing, re-opened"
            " through /proc/self/fd, an O_TMPFILE under a folder)",
            control=Control.NONE,
            rule=Rule.HELD,
        ),
        _write(
            "fs-io-uring",
            "through io_uring: read the sentinel (IORING_OP_OPENAT, READ), set an extended"
            " attribute outside (IORING_OP_SETXATTR)",
            "uring_changed",
        ),
        _read(
            "fs-proc-fds",
            "read the sentinel through another process's descriptors: /proc/<pid>/fd/N as"
            " its owner, pidfd_getfd (the host's decoy holds it)",
        ),
        # Landlock asks for READ_FILE as well as EXECUTE when a file is run, so a sandbox
        # that lets this through also lets a read of that file through.
        _read(
            "fs-exec-outside",
            "run a file outside (a copy of the probe): by path, and through an O_PATH handle",
        ),
        # The policy's read-only grants (docs/policy.md): harness's own folder in each,
        # placed on the host; reading it must work, changing it must not. After the
        # catalogue's kinds, so that a reason names the kind's own check first.
        Check(
            "fs-read-granted",
            "read harness's file in each of the policy's read-only grants",
            inside_control=True,
            needs=(GRANTED_SENTINELS,),
        ),
        Check(
            "fs-write-read-only",
            "overwrite, truncate, create and remove in harness's folder in each of the"
            " policy's read-only grants (escape only if the host sees it)",
            rule=Rule.WRITE,
            host_fact="granted_changed",
            needs=(GRANTED_SENTINELS,),
        ),
        # Last: a reason names the attempt that made a change before this catch-all.
        Check(
            SENTINEL_INTACT,
            "every file harness made outside is as it made it on the host after the cell"
            " (content, size, existence, name, mode, owner, times, extended attributes)",
            control=Control.NONE,
            rule=Rule.SENTINEL,
            row=None,
        ),
    ),
)
