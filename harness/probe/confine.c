/* `probe confine`: a small Landlock launcher, the co-located sandbox shape OpenShell
 * builds on the host's own filesystem view. It handles every filesystem access right
 * the kernel's Landlock ABI knows, allows reading (and executing) beneath each --read
 * path, reading alone beneath each --data path, and everything beneath each --write
 * path, keeps only Docker's default
 * capabilities (less CAP_MKNOD), refuses changes of mode, owner, times and extended
 * attributes, inode flags and generation (every filesystem ioctl that does more than
 * read), io_uring (which makes some of them unseen), bpf and clone3, with a
 * seccomp filter (Landlock governs none of them, and the
 * capabilities kept allow them on any host file), and unix sockets (socket(AF_UNIX):
 * Landlock governs no connect to the host's listeners), sets no_new_privs, then execs the
 * command after "--". harness uses it for its reference (matrices/local.toml) and its
 * mutants, each of which leaves one thing open: `--unhandled RIGHT` leaves a
 * Landlock access right unhandled, `--unfiltered FAMILY` a family of calls out of
 * the filter (`clone3`: clone3 let through, a child born into any cgroup),
 * `--any-arch` the filter's architecture check (another ABI's entry open), `--unscoped`
 * Landlock's scopes (ABI 6: signals to, abstract sockets of, processes outside),
 * `--i386-open FAMILY` that family's calls through the i386 entry alone (the mutant
 * of one row's one way), `--fd-open FAMILY` that family's descriptor calls
 * alone (fchmod, fchown, futimens, fsetxattr and fremovexattr, FS_IOC_SETFLAGS and
 * FS_IOC_FSSETXATTR and FS_IOC_SETVERSION, or `fsxattr` or `setversion`: that one
 * alone; io_uring_enter and
 * io_uring_register, a held ring's calls, io_uring_setup refused; or `sqpoll`,
 * io_uring_setup alone), `--deny CALL` a call refused besides (a hand-written deny-list's
 * entries, the mutant's missing one).
 * `--user` and `--group` (a number or a name of /etc/passwd and /etc/group) are who
 * the command runs as, with no supplementary group; `--skip-missing` passes over a
 * path this host lacks (a policy's, written for another image). harness derives
 * these options from a runtime's policy (`{policy}` in a command runtime's argv). It
 * is not a check. */

#include "probe.h"
#include "landlock.h"
#include "confinelists.h"

#define MAX_RULES 64

/* Docker's default capability set (moby's oci/caps/defaults.go), by number, less
 * CAP_MKNOD (27): only Docker's devices cgroup makes that one safe, and a launcher
 * has none, so a device node made in a writable folder would read the host's disk. */
static const int docker_caps[] = { 0, 1, 3, 4, 5, 6, 7, 8, 10, 13, 18, 29, 31 };

static uint64_t handled_rights(int abi)
{
    uint64_t r = LL_FS_ABI1;
    if (abi >= 2)
        r |= LL_FS_REFER;
    if (abi >= 3)
        r |= LL_FS_TRUNCATE;
    if (abi >= 5)
        r |= LL_FS_IOCTL_DEV;
    return r;
}

static void add_rule(int ruleset, const char *path, uint64_t rights)
{
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0)
        fatal(2, "confine: %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode))
        rights &= LL_FS_FILE_RIGHTS; /* a rule on a file takes only a file's rights */
    struct probe_path_beneath_attr rule = { .allowed_access = rights, .parent_fd = fd };
    if (syscall(__NR_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) != 0)
        fatal(2, "confine: landlock_add_rule %s: %s", path, strerror(errno));
    close(fd);
}

/* Keep Docker's default capabilities: the bounding set first, then the others. */
static void docker_capabilities(void)
{
    uint64_t keep = 0;
    for (size_t i = 0; i < sizeof docker_caps / sizeof docker_caps[0]; i++)
        keep |= 1ULL << docker_caps[i];
    for (int cap = 0; cap < 64; cap++)
        if (!(keep >> cap & 1) && prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 1 &&
            prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0)
            fatal(2, "confine: drop capability %d from the bounding set: %s", cap, strerror(errno));
    prctl(PR_CAP_AMBIENT, 4 /* PR_CAP_AMBIENT_CLEAR_ALL */, 0, 0, 0);
    struct cap_header h = { PROBE_CAP_VERSION_3, 0 };
    struct cap_data d[2];
    if (syscall(SYS_capget, &h, d) != 0)
        fatal(2, "confine: capget: %s", strerror(errno));
    for (int i = 0; i < 2; i++) {
        uint32_t k = (uint32_t)(keep >> (32 * i));
        d[i].effective &= k;
        d[i].permitted &= k;
        d[i].inheritable &= k;
    }
    if (syscall(SYS_capset, &h, d) != 0)
        fatal(2, "confine: capset: %s", strerror(errno));
}

/* ---- the mutants' knobs, and the filter on metadata changes ---------------- */

static const struct { const char *name; uint64_t right; } ll_names[] = {
    { "execute", LL_FS_EXECUTE }, { "write-file", LL_FS_WRITE_FILE },
    { "read-file", LL_FS_READ_FILE }, { "read-dir", LL_FS_READ_DIR },
    { "remove-dir", 1ULL << 4 }, { "remove-file", 1ULL << 5 }, { "make-char", 1ULL << 6 },
    { "make-dir", 1ULL << 7 }, { "make-reg", 1ULL << 8 }, { "make-sock", 1ULL << 9 },
    { "make-fifo", 1ULL << 10 }, { "make-block", 1ULL << 11 }, { "make-sym", 1ULL << 12 },
    { "refer", LL_FS_REFER }, { "truncate", LL_FS_TRUNCATE }, { "ioctl-dev", LL_FS_IOCTL_DEV },
};

static uint64_t ll_right(const char *name)
{
    for (size_t i = 0; i < sizeof ll_names / sizeof ll_names[0]; i++)
        if (!strcmp(ll_names[i].name, name))
            return ll_names[i].right;
    fatal(2, "confine: unknown Landlock right %s", name);
}

/* The calls that change a file's metadata, by family (-1: not on this architecture). */
#ifndef SYS_chmod
#define SYS_chmod -1
#endif
#ifndef SYS_chown
#define SYS_chown -1
#endif
#ifndef SYS_lchown
#define SYS_lchown -1
#endif
#ifndef SYS_utime
#define SYS_utime -1
#endif
#ifndef SYS_utimes
#define SYS_utimes -1
#endif
#ifndef SYS_futimesat
#define SYS_futimesat -1
#endif
static const struct { const char *family; long nr[8]; } meta_calls[] = {
    { "chmod", { SYS_chmod, SYS_fchmod, SYS_fchmodat, SYS_fchmodat2, -1, -1, -1, -1 } },
    { "chown", { SYS_chown, SYS_fchown, SYS_lchown, SYS_fchownat, -1, -1, -1, -1 } },
    { "utime", { SYS_utime, SYS_utimes, SYS_futimesat, SYS_utimensat, -1, -1, -1, -1 } },
    { "xattr", { SYS_setxattr, SYS_lsetxattr, SYS_fsetxattr, SYS_setxattrat, SYS_removexattr,
                 SYS_lremovexattr, SYS_fremovexattr, SYS_removexattrat } },
    /* io_uring sets extended attributes (IORING_OP_SETXATTR) where no filter on the
     * syscalls above sees it; Docker's default seccomp profile refuses it too. */
    { "io_uring", { __NR_io_uring_setup, __NR_io_uring_enter, __NR_io_uring_register, -1, -1, -1,
                    -1, -1 } },
    /* Inode flags by path; by descriptor they are ioctl commands (below). */
    { "chattr", { SYS_file_setattr, -1, -1, -1, -1, -1, -1, -1 } },
    /* A map pinned on the host's bpffs opens read-write by its path's mode alone
     * (BPF_OBJ_GET asks no capability, Landlock has no hook); Docker's profile too. */
    { "bpf", { SYS_bpf, -1, -1, -1, -1, -1, -1, -1 } },
};
#define N_FAMILIES (sizeof meta_calls / sizeof meta_calls[0])

/* The calls of a family that take only a descriptor: a mutant's `--fd-open FAMILY`
 * leaves these out of the filter (the path calls closed, a file opened for reading
 * where a read-only grant allows it still changed through its descriptor). */
static const struct { const char *family; long nr[2]; } fd_calls[] = {
    { "chmod", { SYS_fchmod, -1 } },
    { "chown", { SYS_fchown, -1 } },
    { "xattr", { SYS_fsetxattr, SYS_fremovexattr } },
    /* a ring it holds stays usable where no new one can be set up */
    { "io_uring", { __NR_io_uring_enter, __NR_io_uring_register } },
    /* or the reverse: rings set up, never entered (a polling thread's need no enter) */
    { "sqpoll", { __NR_io_uring_setup, -1 } },
};

static int fd_only(const char *fd_open, long nr)
{
    for (size_t j = 0; fd_open && j < sizeof fd_calls / sizeof fd_calls[0]; j++)
        if (!strcmp(fd_calls[j].family, fd_open) && (fd_calls[j].nr[0] == nr || fd_calls[j].nr[1] == nr))
            return 1;
    return 0;
}

/* The command's name as the launcher's execv passes it: `--deny execve` lets through the
 * execve of that address alone (no later program holds it at that address). */
static const char *g_launch;


static int meta_family(const char *name)
{
    for (size_t i = 0; i < N_FAMILIES; i++)
        if (!strcmp(meta_calls[i].family, name))
            return (int)i;
    fatal(2, "confine: unknown family %s (chmod, chown, utime, xattr, io_uring, chattr, bpf, clone3)", name);
}

/* EPERM for every call of the families not left out; another architecture's calls
 * (x32 on x86_64 included) are refused too, so none of them is a way around, unless
 * `any_arch` (a mutant's mistake: numbers matched whatever the entry, so i386's
 * chmod, 15, is no x86_64 chmod, 90, and goes through). */
static void metadata_filter(const int *unfiltered, int any_arch, const char *i386_open,
                            const char *fd_open, const long *deny, int ndeny)
{
    struct sock_filter f[256];
    unsigned n = 0;
    if (!any_arch) {
        f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
        f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PROBE_AUDIT_ARCH, 0, 1);
        f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JA, 0, 0, 0); /* target set below */
        unsigned native = n - 1;
#if defined(__x86_64__)
        if (i386_open) {
            const long *open = confine_i386_family(i386_open);
            f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_I386_, 1, 0);
            f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
            f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
            f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, I386_NR_getpid, 0, 1);
            f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
            for (int j = 0; j < 6 && open[j] > 0; j++) { /* 0: the rest unset */
                f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)open[j], 0, 1);
                f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
            }
        }
#else
        if (i386_open)
            fatal(2, "confine: --i386-open: no i386 entry on this architecture");
#endif
        f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
        f[native].k = n - native - 1;
    }
    f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
    f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000U, 0, 1);
    f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
    if (fd_open && !strcmp(fd_open, "utime")) {
        /* utimensat(fd, NULL, ...) is futimens: let it through, the path form not. */
        const uint32_t path_arg = offsetof(struct seccomp_data, args[1]);
        f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_utimensat, 0, 5);
        f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, path_arg);
        f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 3);
        f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, path_arg + 4);
        f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1);
        f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
        f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
    }
    /* socket(AF_UNIX): the host's listeners (a runtime's, an init's, a bus's) are in
     * a shared view's reach, and Landlock governs no connect to a named socket
     * (socketpair stays: it reaches nothing; another entry's socket calls and io_uring
     * are refused above). */
    f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_socket, 0, 3);
    f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0]));
    f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 0, 1);
    f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
    f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
    for (int i = 0; i < ndeny; i++) {
        if (deny[i] == DENY_SETOWN) { /* fcntl or ioctl, by their command */
            static const uint32_t cmds[] = { 8 /* F_SETOWN */, 15 /* F_SETOWN_EX */, 0x8901 /* FIOSETOWN */,
                                             0x8902 /* SIOCSPGRP */ };
            f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_fcntl, 0, 1);
            f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JA, 1, 0, 0);
            f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ioctl, 0, 7);
            f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1]));
            for (int k = 0; k < 4; k++)
                f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, cmds[k], (uint8_t)(4 - k), 0);
            f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JA, 1, 0, 0);
            f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
            f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
            continue;
        }
        if (deny[i] == SYS_execve && g_launch) { /* the launcher's own exec, by its name's address */
            const uint64_t at = (uint64_t)(uintptr_t)g_launch;
            const uint32_t arg = offsetof(struct seccomp_data, args[0]);
            f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_execve, 0, 6);
            f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, arg);
            f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)at, 0, 3);
            f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, arg + 4);
            f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)(at >> 32), 0, 1);
            f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
            f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
            f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
            continue;
        }
        if (deny[i] == DENY_OPEN_CREAT) { /* open's flags (args[1]), openat's (args[2]) */
            f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_open, 0, 2);
            f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1]));
            f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JA, 2, 0, 0);
            f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 0, 3);
            f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2]));
            f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, O_CREAT | 020000000, 0, 1);
            f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
            f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
            continue;
        }
        f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)deny[i], 0, 1);
        f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
    }
    for (size_t i = 0; i < N_FAMILIES; i++)
        for (int k = 0; k < 8 && !unfiltered[i]; k++)
            if (meta_calls[i].nr[k] >= 0 && !fd_only(fd_open, meta_calls[i].nr[k])) {
                f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
                                                      (uint32_t)meta_calls[i].nr[k], 0, 1);
                f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
            }
    if (!unfiltered[meta_family("chattr")] && !(fd_open && !strcmp(fd_open, "chattr"))) {
        /* Every ioctl that changes an inode through a descriptor opened for reading (the
         * command's low 32 bits): its flags, by chattr's and by xfs_io's, and its
         * generation, by the VFS's and ext4's numbers. `--fd-open fsxattr` and
         * `--fd-open setversion` leave one way open (a mutant's). */
        static const struct { uint32_t cmd; const char *way; } cmds[] = {
            { (uint32_t)_IOW('f', 2, long), "" },
            { (uint32_t)_IOW('X', 32, struct { uint32_t a[7]; }), "fsxattr" },
            { (uint32_t)_IOW('v', 2, long), "setversion" },
            { (uint32_t)_IOW('f', 4, long), "setversion" },
            /* declared as reads, yet they change: fscrypt's policy, ext4's shutdown */
            { (uint32_t)_IOR('f', 19, struct { uint8_t b[12]; }), "" },
            { (uint32_t)_IOR('X', 125, uint32_t), "" },
        };
        uint32_t refused[6];
        unsigned m = 0, deny[16], nd = 0, dir[5], ndir = 0;
        for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
            if (!fd_open || strcmp(fd_open, cmds[i].way))
                refused[m++] = cmds[i].cmd;
        /* And every other command of the filesystems' own ioctl types (ext4's and the
         * VFS's 'f', 'v', XFS's 'X', btrfs's 0x94, FAT's 'r') but those that only read: ext4's
         * MIGRATE, fs-verity's ENABLE, fscrypt's policy change an inode too (not where a
         * mutant leaves one of the above open: its way is that one). */
        /* `--fd-open wide-ioctl` (a mutant's): the listed commands alone, each compared on
         * all 64 bits as libseccomp's SCMP_CMP_EQ does, where the kernel reads 32. */
        int wide = fd_open && !strcmp(fd_open, "wide-ioctl");
        int generic = !wide && (!fd_open || (strcmp(fd_open, "fsxattr") && strcmp(fd_open, "setversion")));
        static const uint32_t fs_types[] = { 'f', 'v', 'X', 0x94, 'r' }; /* 'r': FAT's attributes */
        unsigned skip = n, high = 0;
        f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ioctl, 0, 0); /* jf set below */
        if (wide) { /* an upper half that is not 0 matches no rule: allowed (jf set below) */
            f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1]) + 4);
            high = n, f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 0);
        }
        f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1]));
        for (unsigned i = 0; i < m; i++)
            deny[nd++] = n, f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, refused[i], 0, 0);
        if (generic) {
            f[n++] = (struct sock_filter)BPF_STMT(BPF_ALU | BPF_RSH | BPF_K, 8);
            f[n++] = (struct sock_filter)BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xff);
            for (size_t i = 0; i < sizeof fs_types / sizeof fs_types[0]; i++)
                dir[ndir++] = n, f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, fs_types[i], 0, 0);
        }
        f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
        if (wide)
            f[high].jf = (uint8_t)(n - 1 - high - 1);
        unsigned check_dir = n;
        if (generic) { /* the direction bits: _IOC_READ (2) alone passes */
            f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1]));
            f[n++] = (struct sock_filter)BPF_STMT(BPF_ALU | BPF_RSH | BPF_K, 30);
            f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 2, 0, 1);
            f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
        }
        unsigned refuse = n;
        f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
        for (unsigned i = 0; i < nd; i++)
            f[deny[i]].jt = (uint8_t)(refuse - deny[i] - 1);
        for (unsigned i = 0; i < ndir; i++)
            f[dir[i]].jt = (uint8_t)(check_dir - dir[i] - 1);
        f[skip].jf = (uint8_t)(n - skip - 1);
    }
    /* clone3(2): a child born into any cgroup a handle names (CLONE_INTO_CGROUP, an
     * O_PATH open Landlock lets through), its flags in memory no filter reads: ENOSYS,
     * so libc falls back to clone(2), as under Docker's default profile. */
    if (!unfiltered[N_FAMILIES]) { /* `--unfiltered clone3`: a mutant's */
        f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
        f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1);
        f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS);
    }
    f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    struct sock_fprog prog = { .len = (unsigned short)n, .filter = f };
    if (syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0)
        fatal(2, "confine: seccomp: %s", strerror(errno));
}

/* A user or group as a number, or by name from /etc/passwd or /etc/group (field 3;
 * *primary: a user's group, field 4). -1 where it is neither. */
static long principal(const char *name, const char *file, long *primary)
{
    char *end;
    long id = strtol(name, &end, 10);
    if (*name && !*end && id >= 0)
        return id;
    FILE *f = fopen(file, "r");
    char line[1024];
    size_t len = strlen(name);
    id = -1;
    while (f && id < 0 && fgets(line, sizeof line, f)) {
        if (strncmp(line, name, len) || line[len] != ':')
            continue;
        char *field = strchr(line + len + 1, ':'); /* past the password */
        if (field) {
            id = strtol(field + 1, &end, 10);
            if (primary && *end == ':')
                *primary = strtol(end + 1, NULL, 10);
        }
    }
    if (f)
        fclose(f);
    return id;
}

/* The user and group the command runs as (--user, --group): no supplementary group,
 * the group, then the user; after that, no capability is left. */
static void become(const char *user, const char *group)
{
    long primary = -1, uid = principal(user, "/etc/passwd", &primary);
    long gid = group ? principal(group, "/etc/group", NULL) : primary >= 0 ? primary : uid;
    if (uid < 0 || gid < 0)
        fatal(2, "confine: no such %s: %s", uid < 0 ? "user" : "group", uid < 0 ? user : group);
    if (setgroups(0, NULL) != 0 || setresgid((gid_t)gid, (gid_t)gid, (gid_t)gid) != 0 ||
        setresuid((uid_t)uid, (uid_t)uid, (uid_t)uid) != 0)
        fatal(2, "confine: to uid %ld gid %ld: %s", uid, gid, strerror(errno));
}

void confine_main(int argc, char **argv)
{
    const char *paths[MAX_RULES];
    uint64_t rights[MAX_RULES];
    int n = 0, i = 2, unfiltered[N_FAMILIES + 1] = { 0 }, any_arch = 0, unscoped = 0;
    const char *i386_open = NULL, *fd_open = NULL, *user = NULL, *group = NULL;
    int skip_missing = 0, ndeny = 0;
    long deny[MAX_DENY];
    uint64_t unhandled = 0;
    for (; i < argc && strcmp(argv[i], "--"); i++) {
        if (i + 1 < argc && !strcmp(argv[i], "--user")) {
            user = argv[++i];
            continue;
        }
        if (i + 1 < argc && !strcmp(argv[i], "--group")) {
            group = argv[++i];
            continue;
        }
        if (!strcmp(argv[i], "--skip-missing")) {
            skip_missing = 1;
            continue;
        }
        int write = !strcmp(argv[i], "--write"), data = !strcmp(argv[i], "--data");
        if (i + 1 < argc && !strcmp(argv[i], "--unhandled")) {
            unhandled |= ll_right(argv[++i]);
            continue;
        }
        if (i + 1 < argc && !strcmp(argv[i], "--i386-open")) {
            i386_open = argv[++i];
            continue;
        }
        if (i + 1 < argc && !strcmp(argv[i], "--fd-open")) {
            fd_open = argv[++i];
            if (strcmp(fd_open, "chmod") && strcmp(fd_open, "chown") && strcmp(fd_open, "xattr") &&
                strcmp(fd_open, "utime") && strcmp(fd_open, "chattr") && strcmp(fd_open, "io_uring") &&
                strcmp(fd_open, "fsxattr") && strcmp(fd_open, "setversion") && strcmp(fd_open, "sqpoll") &&
                strcmp(fd_open, "wide-ioctl"))
                fatal(2, "confine: --fd-open: unknown family %s (chmod, chown, utime, xattr, chattr,"
                         " fsxattr, setversion, io_uring, sqpoll, wide-ioctl)", fd_open);
            continue;
        }
        if (i + 1 < argc && !strcmp(argv[i], "--deny")) {
            if (ndeny == MAX_DENY)
                fatal(2, "confine: --deny: at most %d calls", MAX_DENY);
            deny[ndeny++] = confine_deny_nr(argv[++i]);
            continue;
        }
        if (!strcmp(argv[i], "--any-arch")) {
            any_arch = 1;
            continue;
        }
        if (!strcmp(argv[i], "--unscoped")) {
            unscoped = 1;
            continue;
        }
        if (i + 1 < argc && !strcmp(argv[i], "--unfiltered")) {
            i++;
            unfiltered[strcmp(argv[i], "clone3") ? meta_family(argv[i]) : (int)N_FAMILIES] = 1;
            continue;
        }
        if ((!write && !data && strcmp(argv[i], "--read")) || i + 1 >= argc || n == MAX_RULES)
            fatal(2, "usage: probe confine [--read PATH]... [--data PATH]... [--write PATH]..."
                     " [--skip-missing] [--user USER] [--group GROUP]"
                     " [--unhandled RIGHT]... [--unfiltered FAMILY]... [--any-arch] [--unscoped] [--i386-open FAMILY]"
                     " [--fd-open FAMILY] [--deny CALL]..."
                     " -- COMMAND...");
        if (skip_missing && access(argv[i + 1], F_OK) != 0 && errno == ENOENT) {
            i++; /* a policy's path this host lacks: nothing there to allow */
            continue;
        }
        paths[n] = argv[++i];
        rights[n++] = write ? ~0ULL : (LL_FS_READ_FILE | LL_FS_READ_DIR | (data ? 0 : LL_FS_EXECUTE));
    }
    if (i + 1 >= argc)
        fatal(2, "confine: no command after --");
    int abi = (int)syscall(__NR_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    if (abi < 1)
        fatal(2, "confine: Landlock unavailable: %s", strerror(errno));
    uint64_t handled = handled_rights(abi) & ~unhandled;
    struct probe_ruleset_attr6 attr = { .handled_access_fs = handled };
    if (abi >= 6 && !unscoped) /* no signal to, no abstract unix socket of, a process outside */
        attr.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
    int ruleset = (int)syscall(__NR_landlock_create_ruleset, &attr,
                               abi >= 6 ? sizeof attr : sizeof(struct probe_ruleset_attr), 0);
    if (ruleset < 0)
        fatal(2, "confine: landlock_create_ruleset: %s", strerror(errno));
    for (int k = 0; k < n; k++)
        add_rule(ruleset, paths[k], rights[k] & handled);
    docker_capabilities();
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        fatal(2, "confine: no_new_privs: %s", strerror(errno));
    g_launch = argv[i + 1];
    metadata_filter(unfiltered, any_arch, i386_open, fd_open, deny, ndeny);
    if (syscall(__NR_landlock_restrict_self, ruleset, 0) != 0)
        fatal(2, "confine: landlock_restrict_self: %s", strerror(errno));
    close(ruleset);
    if (user || group)
        become(user ? user : "0", group);
    execv(argv[i + 1], &argv[i + 1]);
    fatal(127, "confine: exec %s: %s", argv[i + 1], strerror(errno));
}
