"""Filesystem confinement: nothing outside the allowed paths may be read or changed."""

from __future__ import annotations

from harness.probe import targets
from harness.scenarios.base import GRANTED_SENTINELS, Check, Control, Need, Rule, Scenario

# The write kinds' calls through the i386 entry too (harness/probe/i386.c), for how.
I386_WAY = (
    " Then the calls the catalogue's row names for the i386 entry (`int $0x80`, on x86_64"
    " where the kernel has it; each run in a child of its own, so that a filter that kills"
    " on a foreign architecture costs that child), named `<call> (i386)` in the detail."
)

# Checked on the host after the cell, not by the probe: writes count only if visible there.
SENTINEL_INTACT = "fs-sentinel-intact"


def _read(check_id: str, doc: str, *, control_id: str | None = None, how: str) -> Check:
    """A read: one that goes through without the sentinel's content is blocked."""
    return Check(check_id, doc, control_id=control_id, rule=Rule.READ, how=how)


def _write(check_id: str, doc: str, *, how: str) -> Check:
    """A write: an escape only if the host sees its target's fact (`targets.def`) in
    the sentinels' state."""
    doc = f"{doc} (escape only if the host sees it)"
    return Check(check_id, doc, rule=Rule.WRITE, host_fact=targets.host_fact(check_id), how=how)


FILESYSTEM = Scenario(
    name="filesystem-confinement",
    summary="the mount table; read, write, traverse, symlink, /proc/*/root, link, rename or"
    " open by handle outside the allowed dir",
    property="filesystem_confinement",
    needs=frozenset({Need.SENTINELS, Need.HOST_FS, Need.HELPERS}),
    checks=(
        _read(
            "fs-read-outside",
            "read the sentinel by absolute path",
            how="Read the sentinel: escaped if the token is found.",
        ),
        _write(
            "fs-create-outside",
            "create a file outside",
            how=(
                "`O_CREAT|O_EXCL` of `<outside-dir>/created-<tag>`, then write the token: "
                "`succeeded`. Where that open is refused as a filter refuses (EPERM or ENOSYS, "
                "not EACCES or EROFS: a filter of the creating opens in place of MAKE_REG left "
                "unhandled), the other ways, to the first that makes the file (one that makes "
                "it and is then refused its open, as Landlock's WRITE_FILE refuses, counts): "
                "x86_64's `openat`, `creat`, `openat2` with `O_CREAT`, `mknod` and `mknodat` "
                "with `S_IFREG`; the i386 entry's `open`, `openat`, `creat`, `openat2`, "
                "`mknod`, `mknodat`; io_uring's `IORING_OP_OPENAT` and `IORING_OP_OPENAT2` "
                "(the detail names the way, e.g. `open O_CREAT (i386)`)."
            ),
        ),
        _write(
            "fs-overwrite-outside",
            "overwrite a file outside (open for writing, no O_TRUNC)",
            how=(
                "`O_WRONLY` of `--overwrite` (no `O_TRUNC`: that asks for Landlock's `TRUNCATE` "
                "too, `fs-truncate-outside`'s row), then write the token over its start: "
                "`succeeded`."
            ),
        ),
        _read(
            "fs-traversal",
            "read the sentinel via .. from the allowed dir",
            how="Read `<allowed-dir>` + `/..` 32 times + sentinel.",
        ),
        _read(
            "fs-symlink-planted",
            "read through a symlink the harness planted, pointing out",
            how="Read through `--planted-link`.",
        ),
        _read(
            "fs-symlink-made",
            "make a symlink to the sentinel in the allowed dir, read it",
            how="`symlink(sentinel, <allowed-dir>/link-<tag>)`, then read through it.",
        ),
        _read(
            "fs-proc-self-root",
            "read the sentinel via /proc/self/root",
            how="Read `/proc/self/root` + sentinel.",
        ),
        # The host may deny /proc/1/root even to root (ptrace access to pid 1), so
        # the control is the sentinel being readable at all.
        Check(
            "fs-proc-1-root",
            "read the sentinel via /proc/1/root, and pid 1's root not beyond the grants"
            " (listed, or written through by an O_TMPFILE)",
            control_id="fs-read-outside",
            rule=Rule.HELD,
            how=(
                "Read `/proc/1/root` + sentinel. Where no sentinel came through, pid 1's root "
                "(opened `O_PATH` through `/proc/1/root`) and each folder `..` leads to from it "
                "are rows of `evidence.held_files` (`/proc/1/root`, ...; its metadata "
                "untouched), judged as fs-inherited-fds judges a folder held at start: an init "
                "left at the host's root beside a chroot'ed workload lists the host's tree "
                "where a launcher's private /tmp, /var/tmp and home hide every sentinel; a root "
                "on a filesystem of the sandbox's own is not judged."
            ),
        ),
        _read(
            "fs-hardlink-in",
            "hard-link the sentinel into the allowed dir, read it",
            how="`link(sentinel, <allowed-dir>/hardlink-<tag>)`, then read it.",
        ),
        _write(
            "fs-rename-in",
            "rename an outside file into the allowed dir",
            how="`rename(--rename, <allowed-dir>/renamed-<tag>)`: `succeeded`.",
        ),
        Check(
            "fs-mounts",
            "no mount exposes a host filesystem beyond the granted folders",
            rule=Rule.MOUNTS,
            how=(
                "Read `/proc/self/mountinfo` (where the sandbox shows no `/proc`, the same table "
                "by `listmount` and `statmount`, 6.8): `succeeded`, with `evidence.mounts` (each "
                "`[dev, "
                "type, mount point, root, reach]`; `reach` is what the probe could read at the "
                "mount point: the name of an entry of a folder it listed, `.` for an empty one, "
                "`(file)` for a file it read a byte of, empty when it could do neither, `?` for a "
                "device or other special file it did not open; probes before December 2026 sent "
                "four fields). Where it could read nothing at the mount point, it tries each "
                "`--reach-targets` line of the mount's device within the mount's root, at the "
                "mount point plus the path below the root: a folder it opens and reads an entry "
                "of, or a regular file it reads a byte of (never a device, and only a file of the "
                "mount point's own device), and `reach` is then that path below the mount point "
                "(`srv`, `rv-secret/secret.txt`), `evidence.boot_id` (empty when unreadable) and "
                "`evidence.release`. `evidence.overlays`: each overlay mount as `[mount point, "
                "super options as mountinfo writes them, name, inode, ...]`, up to 16 files (not "
                "folders) at its top or one folder down with their inode numbers, which an overlay "
                "keeps from its layers: the host looks for them in each layer the options name "
                "(`host_side.held_paths`), and a layer where it finds the same file is that host "
                "folder (`judge/overlay.py`). harness judges it (`judge/reach.py`): on the host's "
                "kernel a FUSE or network filesystem of the sandbox's own, or an overlay with a "
                "layer no read grant holds and the host did not confirm (its options name a "
                "host folder by another path, or its files are decoys), or a loop device the "
                "host mounts nowhere (a file's image: the launcher's own, or a host folder's "
                "copy), readable, at a mount point no grant holds, is an `error` (it may serve "
                "a host folder under a new device). More than fits a 16 KiB line is `error`."
            ),
        ),
        Check(
            "fs-write-reach",
            "make a file (O_TMPFILE) or open one for writing at every mount point, every"
            " folder below it the workload can list, and the host's listed folders and files"
            " below it: none beyond the write grants; no file of a write grant with a link"
            " beyond them",
            rule=Rule.WRITE_REACH,
            how=(
                "At every mount point (not proc, sysfs, cgroup, devpts, mqueue and the other "
                "kernel filesystems; not one in `--write-skip`; not one mounted over, told by the "
                "mount id `/proc/self/fdinfo` gives) try one write that changes nothing: in a "
                "folder, a file made with `O_TMPFILE` (no name, gone at close); at a regular file, "
                "an open for appending (nothing written, not truncated; an append-only file takes "
                "it). Where the mount point takes none, try the `--write-targets` lines of the "
                "mount's device within its root (as `fs-mounts` does, only paths on that very "
                "mount): folders first; then, on the host's kernel (`--write-targets` given: "
                "not in gVisor or a VM), on a mount that is not read-only, every folder "
                "the workload can list below the mount point (and every regular file in it "
                "without an execute bit, opened for appending), depth first on that mount alone "
                "(not one in `--write-skip`, nor below it), or, where the mount point does not "
                "list, below each listed folder that does (Landlock reading only /etc and /usr; "
                "the listed targets include every absolute path a command runtime's argv "
                "names: a folder its launcher made just now); "
                "then every folder of the host's list of all its folders (`--write-dirs FILE`, "
                "lines `MAJ:MIN PATH-IN-THE-FILESYSTEM`, which the host keeps in the helpers' "
                "folder) on that mount whose parent the walk did not list, not one within a "
                "`--write-skip` line nor on another mount (a list the sandbox cannot read, or "
                "one ending `# cut`, leaves folders untried: `evidence.walk_cut`); "
                "then the listed regular files. Where no file may be made in a folder "
                "(`EACCES`), a folder, a symlink, a named pipe, a socket's node, a whiteout (a "
                "character device 0:0, which needs no CAP_MKNOD; where x86_64's `mknod` of it "
                "is refused as a filter refuses, EPERM or ENOSYS, the i386 entry's `mknod` and "
                "`mknodat` in a folder DAC lets it add to, until that entry refuses one: a "
                "filter in place of MAKE_CHAR left unhandled) and a block device node 0:0 "
                "are tried (`.harness-w-TAG`, "
                "each removed at once; one that cannot be removed is said, and the host removes "
                "it after the cell), unless `--write-named 0`. Where nothing may be made or "
                "written, removal and truncation alone (Landlock's REMOVE_FILE, REMOVE_DIR, "
                "TRUNCATE): in each folder the walk lists, unlink of its first folder (refused "
                "only as a folder, `EISDIR`: its files may be removed) and rmdir of its first "
                "other entry (refused only as no folder, `ENOTDIR`: its folders may be removed), "
                "each entry looked at again just before; for a file that cannot be opened for "
                "writing, truncate to the largest length under a file-size limit of 0 (`SIGXFSZ` "
                "ignored: refused only by that limit, `EFBIG`: it may be truncated), never one "
                "under a lease (`--leased` lines `MAJ:MIN:INO`, the host's /proc/locks, and the "
                "sandbox's own: truncate(2) breaks a lease before any access check and waits "
                "for its holder; `evidence.lease_skips`). Neither is tried on a filesystem whose "
                "server decides each change after the kernel's checks (FUSE, NFS, CIFS, 9p, "
                "virtiofs, Ceph: there those answers come before the server is asked). First of "
                "all, harness's decoys (`--decoys`, lines as `--write-targets`: a file and a "
                "folder `.harness-decoy-RUN-N[.d]` the host makes for the cell's runtime in each "
                "folder its launcher's argv names beyond its policy's paths, made again after "
                "each cell, removed after the run and by `harness clean`): the file opened for "
                "writing, else truncated to nothing (by each way, through its descriptor's "
                "`/proc/self/fd` link: truncate(2), an open with `O_TRUNC` for writing and for "
                "reading alone, which a grant of `TRUNCATE` alone allows behind a filter of "
                "truncate and ftruncate, and the i386 entry's truncate and truncate64 where "
                "x86_64's was refused as a filter refuses), else removed; the folder removed. "
                "They are "
                "harness's own. Of the host's own entries nothing is "
                "removed or changed. A folder of the host's list whose parent the walk did not "
                "list is walked below where it lists. A `--write-skip` line is matched "
                "by name and by the identity of the folder it leads to (a grant named through a "
                "symlink). The walk stops at the first write, at 400,000 "
                "folders (or `--walk-folders N`), once it has used 3.2 times the check's time "
                "limit in CPU time, or at 90% of its row's time limit (eight times the check's) "
                "(`evidence.walked`: folders tried; `evidence.walk_cut`: mounts cut short, no "
                "proof either way: an `error`). Where "
                "`O_TMPFILE` is unsupported "
                "(vfat, NFS, FUSE, 9p, or a filter refusing it alone), a named file "
                "(`.harness-w-TAG`) is made and removed at once, unless `--write-named 0`. A file "
                "with an execute bit is never opened for writing (the open, even one refused a "
                "moment later by Landlock, makes a concurrent exec of it fail with ETXTBSY), nor "
                "one on overlayfs (the open would copy it up into the upper layer): where such a "
                "file is a mount point of its own and `faccessat(W_OK)` allows it, the row's `how` "
                "starts with `not tried: ` (no proof either way: the harness makes it an `error` "
                "beyond the grants); below a mount point such files are left out. `succeeded` with "
                "`evidence.writes` (each mount's first write, `[dev, type, mount point, root, path "
                'below the mount point or "", how]`), `evidence.writes_cut` (writes not reported, '
                "the line being full), `evidence.boot_id` and `evidence.release`; `blocked` when "
                "no mount took a write and no file is linked beyond the grants. harness judges "
                "each write against the cell's write grants (`judge/reach.py`). "
                "First of all, the links (`linkcount.c`): every regular file of more than one "
                "link (`st_nlink`) in the allowed folder (`--allowed-dir`, less the probe's own "
                "names `*-TAG`: fs-hardlink-in's link is that check's) and in the policy's write "
                "grants of a sandbox with a root or a kernel of its own (`--link-grants`; a "
                "co-located sandbox's grant, such as /tmp, is the host's own folder, whose links "
                "are its users'), its links (same device and inode) counted there and, where "
                "one is missing, in the cell's other write grants (`--write-skip`), each folder "
                "once by its identity, each grant on its own device. A file with more links than "
                "found has a name elsewhere: writing it in place changes a file outside the "
                "grants (a launcher seeding the workspace with `cp -al` from a host template). "
                "Nothing is written: the kernel's count is the proof, and the file is opened for "
                "appending (as above) to show the workload may write it (one it may not is no "
                "way out); an executable file, or one on overlayfs (a write copies it up), is "
                "only held to `faccessat(W_OK)`, its `how` starting with `not tried: `. "
                "`evidence.links`: `[dev, type, path, links, links found, how]`, each an "
                '`escaped` ("allowed/config.toml has 2 links, 1 within the write grants: '
                "writing it changes a file elsewhere\") unless on a filesystem of the sandbox's "
                "own (a new tmpfs: its other names are the sandbox's own files), in a kernel of "
                "its own (its count is that kernel's word: an `error`), or not tried (an "
                "`error`). `evidence.links_cut` says why not every link could be told, an "
                "`error`: the walk's bounds (100,000 folders and files, the check's time limit "
                "in wall time, half of it in CPU time), a folder the workload may enter but not "
                "list, more than 4,096 files of several links, a file changed during the walk. "
                "A file made with `O_TMPFILE` has no name to count until linked, and a correct "
                "sandbox's links between two files of its grants are all found."
            ),
        ),
        Check(
            "fs-routes",
            "read any sentinel (fixture, /tmp, /var/tmp, work folder) by every route: host"
            " path, mount point + path suffix, /proc/<pid>/root as its owner, file handles",
            how=(
                "Every route to every sentinel: its path; every mount point + every suffix of its "
                "path; `/proc/<pid>/root` + path for every visible pid, with `setfsuid`/`setfsgid` "
                "to the pid's owner; each visible pid's mount namespace (`/proc/<pid>/ns/mnt`, "
                "opened as its owner; the probe's own too: a chrooted probe's `setns` leaves its "
                "chroot; at most 16, more, or a child that gives no answer, make the check an "
                "error), entered by `setns` in a child (the i386 entry's where x86_64's is "
                "refused as a filter refuses) that hands back its root (the probe's own "
                "root: skipped), then every suffix of the path below it; `open_by_handle_at` of "
                "each mounted filesystem's root inode "
                "(ext2/3/4 handle, inode 2), through the i386 entry (`int $0x80`, in a child "
                "that hands the folder back) where x86_64's calls are refused, then every suffix "
                "below it (a filter that kills the process on a call, SIGSYS, asked first in a "
                "child, refuses it). Escaped with "
                "`evidence.route`; else blocked with counts (`routes_tried`, `absent`, `denied`, "
                "`other`, `pids`)."
            ),
        ),
        Check(
            "fs-allowed-write",
            "write inside the allowed dir",
            inside_control=True,
            how="Create `<allowed-dir>/control-<tag>`, write the token, read it back.",
        ),
        Check(
            "fs-allowed-read",
            "read back inside the allowed dir",
            inside_control=True,
            how="Read back the control file.",
        ),
        # The catalogue's write kinds (docs/attack-surface.md), each on its own fresh
        # target outside, every syscall of the kind in turn.
        _write(
            "fs-truncate-outside",
            "truncate a file outside (truncate, O_TRUNC)",
            how=(
                "`truncate(<outside-dir>/truncate-me, 0)`, then `open(O_WRONLY|O_TRUNC)` and "
                "`open(O_RDONLY|O_TRUNC)` of it (an open for reading cuts it too, and Landlock "
                "asks it for READ_FILE alone where TRUNCATE is unhandled), and where "
                "`truncate` was refused as a filter refuses (not EACCES, EROFS or ENOENT) the "
                "i386 entry's `truncate` and `truncate64`: "
                "`succeeded` if any went through (the detail names which), else blocked with "
                "the last errno. The same shape for the write kinds below: every syscall of the "
                "kind in turn, each against its own fresh target."
            ),
        ),
        _write(
            "fs-unlink-outside",
            "unlink a file outside",
            how=(
                "`unlink`, `unlinkat` of `<outside-dir>/unlink-me`; where refused as a filter "
                "refuses (not EACCES, EROFS or ENOENT: a filter in place of REMOVE_FILE left "
                "unhandled), the i386 entry's `unlink` and `unlinkat`, then io_uring's "
                "`IORING_OP_UNLINKAT` (the detail names the way, e.g. `unlink (i386)`)."
            ),
        ),
        _write(
            "fs-rmdir-outside",
            "remove a folder outside",
            how=(
                "`rmdir`, `unlinkat(AT_REMOVEDIR)` of the folder `<outside-dir>/rmdir-me`; "
                "where refused as a filter refuses, the i386 entry's `rmdir` and "
                "`unlinkat(AT_REMOVEDIR)`, then io_uring's `IORING_OP_UNLINKAT` with "
                "`AT_REMOVEDIR`, as `fs-unlink-outside`."
            ),
        ),
        _write(
            "fs-mkdir-outside",
            "make a folder outside",
            how=(
                "`mkdir`, `mkdirat` of `<outside-dir>/dir-<tag>`; where both were refused as a "
                "filter refuses (EPERM or ENOSYS, not Landlock's EACCES), the i386 entry's "
                "`mkdir` and `mkdirat`, then io_uring's `IORING_OP_MKDIRAT` (a MAKE_DIR right "
                "left to a deny-list of x86_64's calls), its ring set up and entered through "
                "the i386 entry where x86_64's `io_uring_setup` is refused (the same for the "
                "rows below): the detail names the way."
            ),
        ),
        _write(
            "fs-symlink-outside",
            "make a symlink outside",
            how=(
                "`symlink`, `symlinkat` making `<outside-dir>/symlink-<tag>`; where both were "
                "refused as a filter refuses (EPERM or ENOSYS), the i386 entry's `symlink` and "
                "`symlinkat`, then io_uring's `IORING_OP_SYMLINKAT`."
            ),
        ),
        _write(
            "fs-mkfifo-outside",
            "make a named pipe outside (mknod S_IFIFO)",
            how=(
                "`mknod`, `mknodat` (`S_IFIFO`) of `<outside-dir>/fifo-<tag>`; where both were "
                "refused as a filter refuses (EPERM or ENOSYS), the i386 entry's `mknod` and "
                "`mknodat` (io_uring has no mknod)."
            ),
        ),
        _write(
            "fs-socket-outside",
            "make a unix socket file outside (bind, or mknod S_IFSOCK)",
            how=(
                "`bind` an `AF_UNIX` socket to `sock-<tag>` in `<outside-dir>` (after `chdir` "
                "there: a long path would overrun `sun_path`), or where `socket(AF_UNIX)` is "
                "refused by a filter (EPERM) a socket of a `socketpair` (as unbound), then "
                "`mknod` and `mknodat` of "
                "the same path with `S_IFSOCK` (no socket needed, nor CAP_MKNOD); where all were "
                "refused as a filter refuses (EPERM or ENOSYS), the i386 entry's `mknod` and "
                "`mknodat` with `S_IFSOCK`, then a socket (made natively, of a pair, or there) "
                "bound by that entry's `bind` or `socketcall(SYS_BIND)`, then a socket made by "
                "io_uring's `IORING_OP_SOCKET` and bound by its `IORING_OP_BIND` (6.11+)."
            ),
        ),
        _write(
            "fs-chmod-outside",
            "change a file's mode outside",
            how=(
                "`chmod`, `fchmodat`, `fchmodat2` of `<outside-dir>/chmod-me`, and `fchmod` if it "
                "opens for reading, each to another mode."
            )
            + I386_WAY,
        ),
        _write(
            "fs-chown-outside",
            "change a file's owner or group outside",
            how=(
                "`chown`, `lchown`, `fchownat` of `<outside-dir>/chown-me`, and "
                "`fchownat(AT_EMPTY_PATH)` on an `O_PATH` descriptor, `fchown` if it opens for "
                "reading: as root to uid and gid "
                "65534, else to another of its own groups or itself as owner."
            )
            + I386_WAY,
        ),
        _write(
            "fs-utime-outside",
            "change a file's times outside",
            how=(
                "`utimensat` (given times, then now), `utimes`, `futimesat`, `utime` of "
                "`<outside-dir>/utime-me`, and `futimens` if it opens for reading."
            )
            + I386_WAY,
        ),
        _write(
            "fs-xattr-outside",
            "set or remove a file's user.* extended attributes outside",
            how=(
                "`removexattr` of `user.harness`, `setxattr`, `lsetxattr`, `setxattrat` of "
                "`user.harness-*`, `lremovexattr`, `removexattrat`, and `fsetxattr` and "
                "`fremovexattr` if it opens for reading, on `<outside-dir>/xattr-me`."
            )
            + I386_WAY,
        ),
        _write(
            "fs-chattr-outside",
            "change a file's inode flags or generation outside (file_setattr, the ioctls)",
            how=(
                "Flip the no-dump flag of `<outside-dir>/chattr-me` (one target state, set by "
                "every way): `file_setattr` (6.17+, by path), and if it opens for reading "
                "`ioctl(FS_IOC_SETFLAGS)` and `FS_IOC_FSSETXATTR`, and its generation by "
                "`FS_IOC_SETVERSION` and ext4's own number (each refused with EPERM made again "
                "with its request's upper 32 bits set, which the kernel does not read); through "
                "the i386 entry, "
                "`file_setattr` by path, and `FS_IOC32_SETFLAGS`, `FS_IOC_FSSETXATTR` and "
                "`FS_IOC32_SETVERSION`."
            ),
        ),
        _read(
            "fs-list-outside",
            "list the outside folder: a name harness put there shows",
            how=(
                "List `--outside-dir`: escaped if it holds `listed-<token>` (a name only the "
                "host's folder has); a listing without it `succeeded` (harness: blocked). "
                "Where x86_64's `getdents64` was refused as a filter refuses (EPERM or "
                "ENOSYS: a deny-list of it and `getdents` in place of READ_DIR), the same open "
                "folder is read through the i386 entry's `getdents64` (220), then `getdents` "
                "(141, the 32-bit layout), each in a child, the reason naming the way "
                "(`getdents64 (i386)`); `evidence.i386` is their errno where both were "
                "refused. io_uring has no opcode that lists a folder."
            ),
        ),
        # A descriptor handed in at start is a route only where a launcher leaks one:
        # there is nothing for the host runtime to hold, so nothing to control.
        Check(
            "fs-inherited-fds",
            "read any sentinel through each descriptor held at start: under a folder (up"
            " with .., or a path suffix below it), a file's content, /proc/self/fd/N; and"
            " no folder, file or block device held at start, nor folder `..` leads to from"
            " one, beyond the grants (read, or written through: opened for writing, re-opened"
            " through /proc/self/fd, an O_TMPFILE under a folder, its mode, times, flags or"
            " extended attributes set to what they were), nor the master of a terminal outside"
            " the sandbox (a pty master: what it writes is typed into it), nor a controlling"
            " terminal of a host session (TIOCSTI types into it); each descriptor queued in a"
            " held unix socket, or in a connection waiting on a held unix listener, is held"
            " too; the write end of a pipe read outside the sandbox is an error",
            control=Control.NONE,
            rule=Rule.HELD,
            how=(
                "The descriptors open when the probe started (recorded first thing in `main`, "
                "before it opens anything: the entries of `/proc/self/fd`, or without `/proc` "
                "`fcntl(F_GETFD)` on every number below the descriptor limit; a leak at fd 1500 "
                "counts like one at fd 3. Past the first 64 they are counted, and the check is "
                "then an error, not blocked): under each folder (or `O_PATH` handle to one), and "
                "under its `/proc/self/fd/N`, each sentinel by `..` 40 times then its host path, "
                "and every suffix of its path; each regular file read from offset 0 and re-opened "
                "through `/proc/self/fd/N`; a held namespace descriptor or pidfd is a handle to a "
                "mount namespace: a child enters it by `setns` (where x86_64's is refused as a "
                "filter refuses, `EPERM` or `ENOSYS`, by the i386 entry's, 346, the detail naming "
                "that way) and hands back its root, under "
                "which each sentinel is tried the same way; a held io_uring ring is mapped (its "
                "sizes from its whole `fdinfo`, its layout found in its own words; one set up "
                "disabled is enabled first), its personalities found by a NOP as each of 1 to "
                "65535 (`evidence.ring_personalities`), and each sentinel opened through it by "
                "`IORING_OP_OPENAT` as each of them (a request that carries one runs with the "
                "credentials that registered it: no Landlock domain of the holder's); each file "
                "registered on it is installed as a descriptor (`IORING_OP_FIXED_FD_INSTALL`) and "
                "judged like one held at start, labelled `3:fixed 0`. io_uring_enter refused: "
                "`evidence.ring_refused`, no route; a ring it cannot drive (a layout it does not "
                "know, a poll thread of another process, a registered file it cannot install, "
                "before 6.8 or under the ring's restrictions): an error. A held unix socket (not "
                "0-2, the probe's own channel) is read, never blocking, up to 16 messages, and "
                "each descriptor queued in them by `SCM_RIGHTS` is judged like one held at start, "
                "labelled `3:queued 0`: a message of no bytes is a message (a datagram's or a "
                "seqpacket's, SCM_RIGHTS alone), only a stream's end is not (a seqpacket's end is "
                "told by `SO_PASSCRED`, set for the reading and set back: each message then "
                "carries credentials, the end nothing); one still waiting after the 16 "
                "(`FIONREAD`, or a peek that installs nothing) makes the check an error. A held "
                "unix listener's connections waiting in its backlog (a host client of the "
                "launcher's that queued descriptors and hung up) are each accepted (`accept4`, at "
                "most 16, more an error), read the same way (`3:accepted 0`) and closed; an IP "
                "listener's are left alone (a socket-activated server's own clients). A held "
                "pipe's write end at 3 or above that something reads (`poll` shows no `POLLERR`; "
                "nothing is written) and that no process of the sandbox holds open for reading "
                "(each `/proc/<pid>/fd` link naming the same `pipe:[inode]`, its `fdinfo` flags "
                "not write-only, among the processes of the probe's own PID namespace where that "
                "is not the kernel's initial one, the probe alone where it is) feeds a process "
                "outside: what reads it (a host root shell running each line) harness cannot "
                "tell, and the check is an error, never blocked. Each descriptor's kind is told "
                "by `fdkinds.def` (the kernel's own names); one of a kind harness does not judge "
                "(a fanotify group, a seccomp listener, a BPF object, a filesystem context, a "
                "message queue, a userfaultfd, a perf event, an anonymous inode the table lacks) "
                "makes the check an error, never blocked. Escaped with `evidence.through` if the "
                "token is read; an overwrite of `--overwrite` through the climb is tried too (the "
                "host's `overwritten` shows it). Else blocked, `evidence.held` naming each "
                "descriptor (`3:dir`, `4:file(O_PATH)`, `5:ns(mnt)`, `6:pidfd`, `7:[io_uring]`, "
                "`8:pty`), and `evidence.held_files`: each folder, regular file, block device or "
                "pty master held, and each folder's ancestors by `..` (fd `3/..`, `3/../..`, up "
                "to the top it climbs to: from a folder on the launcher's mount, the host's "
                "root), `[fd, kind, dev, path, mount point, mount root, access, reach, inode]` "
                "(kind `dir`, `file`, `block` or `pty`; its `/proc/self/fd` link; the mount its "
                "`fdinfo` `mnt_id` names in the sandbox's own table, empty where that table does "
                "not show it; access as opened, `r`, `w`, `rw` or `path` for `O_PATH`, made `rw` "
                "(`w` where nothing reads) when a write goes through anyway: an `O_TMPFILE` under "
                "a folder, a regular file without an execute bit re-opened for writing through "
                "`/proc/self/fd/N`, nothing written; `listed` for a folder whose entries it read, "
                "`read` for a file or device it read a byte of through the descriptor or "
                "re-opened, empty for neither; `evidence.held_files_cut` rows not reported, the "
                "check then an error), with `evidence.boot_id` and `evidence.release`. A pty "
                "master (`/dev/ptmx`'s char 5:2, `TIOCGPTN` its terminal's number) is its "
                "terminal's row: the slave opened by `TIOCGPTPEER` as an `O_PATH` handle (the "
                "terminal is not opened, nothing is written into it), whose device is the devpts "
                "instance it lies in; one the probe cannot place makes the check an error. "
                "`evidence.ctty`, where the workload has a controlling terminal (`/dev/tty` opens "
                "with `O_NOCTTY | O_NONBLOCK`, `TIOCGSID` answers on 0-2, or `/proc/self/stat` "
                "names one; nothing is read, written or typed): one row `[found by, session, PID "
                "namespace, dev, path, mount point, legacy_tiocsti, CAP_SYS_ADMIN]`: `getsid(0)` "
                "(`0` where the session's leader lies outside its PID namespace), `own` or "
                "`initial`, the devpts and path of the terminal where it is one of 0-2 with its "
                "mount point in the sandbox's table, `/proc/sys/dev/tty/legacy_tiocsti` as read "
                "(`absent` on a kernel before the switch, which always allows TIOCSTI), and `1` "
                "where it holds CAP_SYS_ADMIN in the initial user namespace. "
                "`evidence.held_changed`, `[fd, calls]`: through each folder or file row, its "
                "metadata set to what it already is, and the calls that went through: `fchmod` to "
                "its own mode (not with `S_ISGID`, which a chmod by one outside its group "
                "clears), `fchown` to its own owner and group (not with `S_ISUID` or `S_ISGID`, "
                "nor with file capabilities, which a chown clears), `futimens` to its own times "
                "given explicitly, `FS_IOC_SETFLAGS` to its own flags, `fsetxattr` replacing a "
                "`user.` attribute it lacks (`ENODATA` comes only once setting one is allowed); "
                "an `O_PATH` handle by its `/proc/self/fd` link. Where a call is refused as a "
                "filter refuses (`EPERM`, `EACCES`, `ENOSYS`), the same change by each other way, "
                "named after the call: the `*at` call on the descriptor itself (`fchmodat2 "
                "AT_EMPTY_PATH`, `fchownat AT_EMPTY_PATH`, `setxattrat AT_EMPTY_PATH`, "
                "`file_setattr AT_EMPTY_PATH`, and `FS_IOC_FSSETXATTR` for the flags), the path "
                "calls through `/proc/self/fd/N` (`fchmodat by /proc/self/fd`...), and the i386 "
                "entry's (`fchmod (i386)`, `chmod by /proc/self/fd (i386)`, `fchown32 (i386)`, "
                "`futimens (time64) (i386)`, `ioctl FS_IOC32_SETFLAGS (i386)`...), each to the "
                "nanosecond for times (never utimes or utime, which round them). Harness holds "
                "each to the grants (`judge/reach.py`): a row changed is a "
                "write, escaped beyond the write grants (its owner sets a write bit, then "
                "writes); a pty on a devpts the host mounts, or on one the sandbox does not "
                "mount, is the master of a terminal outside, escaped (a new devpts mounted in the "
                "sandbox, bwrap `--dev`'s, is its own). A controlling terminal whose session's "
                "leader is outside the PID namespace, or that lies on a devpts the host mounts or "
                "the sandbox does not, is a host session's (bwrap without `--new-session` from an "
                "operator's shell): escaped where TIOCSTI types into it (`legacy_tiocsti` 1 or "
                "absent, or CAP_SYS_ADMIN; CVE-2017-5226), nothing where it reads 0 without "
                "CAP_SYS_ADMIN, an error where neither is told or where one in the host's PID "
                "namespace cannot be placed; harness starts probes with no controlling terminal, "
                "so only a launcher's own session shows one. A descriptor from outside the "
                "sandbox's mount namespace names its file by a link the kernel keeps, which a "
                "moved file or a lazily unmounted mount leaves saying the old path: the host is "
                "asked what is at that path (`host_side.held_paths`), and the row is within a "
                "grant only if the host finds the very same device and inode there; where it "
                "finds nothing now (a launcher that removed it at its exit), the row is placed by "
                "its name alone and, granted so, an error, never blocked. A block device read or "
                "written through is storage whatever filesystem its node lies on: an escape. No "
                "control: a route only a leaking launcher makes."
            ),
        ),
        Check(
            "fs-cwd",
            "read any sentinel from the working folder it started in (up with .., or a path"
            " suffix below it), and neither that folder nor any folder .. leads to from it"
            " beyond the grants (listed, or written through by an O_TMPFILE): a working folder"
            " outside the root reaches the host's tree, whether a sentinel lies there or not",
            control_id="fs-read-outside",
            rule=Rule.HELD,
            how=(
                "The working folder, opened (`O_PATH`) first thing in `main`, right after the "
                "held descriptors are listed: under it each sentinel by `..` 40 times then its "
                "host path, and every suffix of its path, as for a held folder; an overwrite of "
                "`--overwrite` through the climb too. `evidence.cwd`: what `getcwd` said "
                "(`(unreachable)/...` for a folder outside the root). Escaped on the token. A "
                "chroot that did not chdir leaves the working folder on the host: `..` is "
                "stopped only at the root, and the working folder is not below it. Where no "
                "sentinel came through, the folder and each folder `..` leads to from it are "
                "rows of `evidence.held_files` (`cwd`, `cwd/..`, ...; its metadata untouched), "
                "judged as fs-inherited-fds judges a folder held at start: one on a host "
                "filesystem it lists, or makes an `O_TMPFILE` in, beyond the grants is an escape "
                "(a launcher whose /tmp, /var/tmp and home are private mounts hides every "
                "sentinel, not the rest of the host's tree); one on a filesystem of the "
                "sandbox's own is not judged."
            ),
        ),
        _read(
            "fs-chroot-escape",
            "chroot into a new folder without entering it, then read any sentinel by .. from"
            " the working folder (CAP_SYS_CHROOT: the second chroot of a chroot jail)",
            control_id="fs-read-outside",
            how=(
                "In its own process, as started: `mkdtemp` under `/tmp` (else a folder in the "
                "allowed dir), `chroot` into it and stay where it stood, then every sentinel as "
                "from a held folder (`..` 40 times, the host path); the folder is removed by a "
                "descriptor. Where `chroot` is refused as a filter refuses (`EPERM`, `ENOSYS`, or "
                "the process killed on it, SIGSYS, asked first in a child), the same call through "
                "the i386 entry (`int $0x80`, its number 61, asked in a child first, then in its "
                "own process): a filter of x86_64's number that checks no architecture lets it "
                "through, and the detail names that way. "
                "Blocked with chroot's errno where it is refused, or when the "
                "climb stops at the sandbox's own root (a pivoted root, a kernel of its own) and "
                "reaches no sentinel. Escaped on the token."
            ),
        ),
        _write(
            "fs-io-uring",
            "through io_uring: read the sentinel (IORING_OP_OPENAT, READ), set an extended"
            " attribute outside (IORING_OP_SETXATTR)",
            how=(
                "Through an io_uring of its own, one request at a time: `IORING_OP_OPENAT` and "
                "`IORING_OP_READ` of the sentinel (escaped on the token), then "
                "`IORING_OP_SETXATTR` of `user.harness-uring` on `<outside-dir>/uring-me`: "
                "`succeeded` (the host's `uring_changed` decides), else blocked with its errno "
                "(`io_uring_setup`'s if there is no ring). Where x86_64's `io_uring_setup` is "
                "refused, or kills the process (SIGSYS; asked first in a child), a ring set up "
                "and entered through the i386 entry (`int $0x80`, its "
                "numbers 425 and 426; a child asks first whether the entry answers both), named "
                "in the detail; where none can be set up, the same `IORING_OP_SETXATTR` through "
                "each ring held at start (`anon_inode:[io_uring]` in `/proc/self/fd`), as the "
                "workload itself, its descriptor named in the detail."
            ),
        ),
        Check(
            "fs-proc-fds",
            "read the sentinel through another process's descriptors: /proc/<pid>/fd/N as"
            " its owner, pidfd_getfd (the host's decoy holds it; by its pid alone where no /proc"
            " lists it, and through the i386 entry); and no other process's root,"
            " working folder or held folder beyond the grants (listed, or written through by"
            " an O_TMPFILE)",
            rule=Rule.HELD,
            how=(
                "For every other visible pid, as its owner (`setfsuid`/`setfsgid`): each "
                "descriptor in `/proc/<pid>/fd` that `stat` shows to be a regular file of at most "
                "4 KiB (nothing else is opened) is re-opened through `/proc/<pid>/fd/N` and taken "
                "with `pidfd_getfd`; and its working folder (`/proc/<pid>/cwd`) and every folder "
                "it holds are bases for each suffix of every sentinel's host path, also behind "
                "one to six `..` (a launcher's host folder left with a helper, a descriptor the "
                "workload was spared). Escaped if any reads the token (the fixture's decoy holds "
                "the sentinel on its fd 3), else blocked with `evidence.pids` and `evidence.fds`. "
                "Where no sentinel came through, each process's root (`/proc/<pid>/root`), "
                "working folder and held folders (opened `O_PATH` as its owner, each folder once) "
                "and each folder `..` leads to from them are rows of `evidence.held_files` "
                "(`/proc/<pid>/cwd`, `/proc/<pid>/root/..`, ...; their metadata untouched), "
                "judged as fs-inherited-fds judges a folder held at start: a helper the launcher "
                "left in the sandbox's PID namespace at the host's / lists the host's tree where "
                "a launcher's private /tmp, /var/tmp and home hide every sentinel; a folder on a "
                "filesystem of the sandbox's own is not judged, and one it can neither open to "
                "list nor make an `O_TMPFILE` in is not reported. More than 128 such folders, or "
                "rows beyond the evidence's room, make the check an error. Where no `/proc` "
                "lists this PID namespace's processes (none mounted, or another namespace's) "
                "and it is the host's (pid 2 a kernel thread: `getpgid(2)` is 0), every pid up "
                "to the kernel's ceiling that `getpgid` finds is opened with `pidfd_open` and "
                "its descriptors 0 to 1023 are taken with `pidfd_getfd` and read "
                "(`evidence.numbered_pids`); where x86_64's `pidfd_open` or `pidfd_getfd` is "
                "refused as a filter refuses (`EPERM`, `ENOSYS`), the same through the i386 "
                "entry (`int $0x80`, numbers 434 and 438; in a child, which a filter may "
                "kill), named in the detail; more than 65536 pids refused make the check an "
                "error."
            ),
        ),
        # Landlock asks for READ_FILE as well as EXECUTE when a file is run, so a sandbox
        # that lets this through also lets a read of that file through.
        _read(
            "fs-exec-outside",
            "run a file outside (a copy of the probe): by path, and through an O_PATH handle",
            how=(
                "Run `<outside-dir>/exec-me` (a copy of the staged probe that fs_setup makes: "
                "static, so no library of the sandbox's matters) as `exec-me version`, by path "
                "(`execve`), then through an `O_PATH` handle "
                "(`execveat(AT_EMPTY_PATH)`), in a child whose stdout is a pipe: escaped when it "
                "printed the probe's version line, else blocked with `execve`'s errno and "
                "`evidence.by_handle`. Where both were refused as a filter refuses (EPERM or "
                "ENOSYS: a deny-list of x86_64's `execve` and `execveat` in place of EXECUTE, "
                "never after Landlock's EACCES), the same through the i386 entry's `execve` "
                "(11) and `execveat` (358), the name, argv and envp copied below 4 GiB: a "
                "64-bit caller may make them, and the kernel loads the copy as ELF64; the "
                "reason names the way (`execve (i386)`), `evidence.i386` its errno."
            ),
        ),
        # The policy's read-only grants (docs/policy.md): harness's own folder in each,
        # placed on the host; reading it must work, changing it must not. After the
        # catalogue's kinds, so that a reason names the kind's own check first.
        Check(
            "fs-read-granted",
            "read harness's file in each of the policy's read-only grants",
            inside_control=True,
            needs=(GRANTED_SENTINELS,),
            how=(
                "Read `sentinel` in each `--granted` folder: `ok` if every one holds "
                "`--granted-token`, else `failed` naming the first it could not read."
            ),
        ),
        Check(
            "fs-write-read-only",
            "overwrite, truncate, create and remove in harness's folder in each of the"
            " policy's read-only grants, and change a file's mode, owner, times and"
            " extended attributes there by every way (escape only if the host sees it)",
            rule=Rule.WRITE,
            host_fact="granted_changed",
            needs=(GRANTED_SENTINELS,),
            how=(
                "In each `--granted` folder: write a byte at the start of `overwrite-me`, "
                "`truncate-me` cut by every way of `fs-truncate-outside`, `O_CREAT|O_EXCL` of "
                "`created-<tag>` (by every way of `fs-create-outside` where refused as a filter "
                "refuses), `unlink-me` removed by every way of `fs-unlink-outside`; "
                "then on `chmod-me`, `chown-me`, `utime-me`, `xattr-me` and `chattr-me` "
                "every call of `fs-chmod-outside`, `fs-chown-outside`, "
                "`fs-utime-outside`, `fs-xattr-outside` and `fs-chattr-outside` (by path, "
                "through the i386 entry, and by a descriptor opened for reading, which a "
                "read-only grant allows: `fchmod`, `fchown`, `futimens`, `fsetxattr`, "
                "`fremovexattr`, `FS_IOC_SETFLAGS`). Where none went through and the folder's "
                "mount is read-only, that mount is remounted read-write (`MS_REMOUNT|MS_BIND`, "
                "its other flags kept; where mount(2) is refused, `mount_setattr` clearing "
                "`MOUNT_ATTR_RDONLY`, and the namespace made private by it too, named in the "
                "detail) in a mount namespace of the check's own, and every change "
                "made again: with CAP_SYS_ADMIN over the user namespace that owns the sandbox's "
                "mounts (bwrap --unshare-user keeping it), a read-only bind is not locked. "
                "`succeeded` if any went through (the detail names which, and the remount; the "
                "host's `granted_changed` decides), else blocked with the last errno."
            ),
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
