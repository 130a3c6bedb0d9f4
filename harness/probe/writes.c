/* The catalogue's write kinds (docs/attack-surface.md), scenario "filesystem": one
 * attempt per kind of change, each against its own fresh file or name in the
 * outside folder (fs_setup makes them; a change the host sees is the escape), every
 * syscall of the kind tried in turn, so that a filter forgetting one is caught; and
 * reading the outside folder's listing. */

#include "probe.h"

#include <linux/io_uring.h>

const char *const target_name[T_COUNT] = {
#define TARGET(ident, name, kind, where, check, fact) [T_##ident] = name,
#include "targets.def"
#undef TARGET
};
static const enum target_kind target_kind[T_COUNT] = {
#define TARGET(ident, name, kind, where, check, fact) [T_##ident] = TK_##kind,
#include "targets.def"
#undef TARGET
};

/* "<outside>/<name>", or for a name the check makes, "<outside>/<name>-<tag>". */
const char *outside(enum target t)
{
    static char path[4096];
    const char *d = need(&o.outside_dir);
    if (target_kind[t] == TK_MADE)
        snprintf(path, sizeof path, "%s/%s-%s", d, target_name[t], need(&o.tag));
    else
        snprintf(path, sizeof path, "%s/%s", d, target_name[t]);
    return path;
}

/* The calls a kind is made of, tried in turn: which went through, and the errno
 * of the last refusal. */
static struct { char done[512]; size_t n; int err, ok; } g_try;

void tried(const char *call, long rc)
{
    if (rc == 0) {
        g_try.ok++;
        if (g_try.n < sizeof g_try.done)
            g_try.n += (size_t)snprintf(g_try.done + g_try.n, sizeof g_try.done - g_try.n,
                                        "%s%s", g_try.n ? ", " : "", call);
    } else if (errno != ENOSYS || !g_try.err) {
        g_try.err = errno;
    }
}

/* A row sharing its child starts with nothing tried (runner.c calls it before each). */
void writes_reset(void) { memset(&g_try, 0, sizeof g_try); }

/* The calls that went through since the last reset, comma-separated: "" for none. */
const char *tried_calls(void) { return g_try.ok ? g_try.done : ""; }

/* succeeded (the host decides whether it shows) if any call went through. */
int tried_any(void)
{
    return g_try.ok;
}

/* Whether every call tried since the reset was refused as a filter refuses (EPERM, or
 * ENOSYS), not as Landlock, DAC or a read-only mount do (EACCES, EROFS), which refuse
 * every other way alike: then a kind's other ways are worth their time. */
int refused_as_filter(void)
{
    return !g_try.ok && (g_try.err == EPERM || g_try.err == ENOSYS);
}

void verdict(const char *what, const char *path)
{
    if (g_try.ok)
        outcome(OC_SUCCEEDED, 0, "%s %s: %s", what, path, g_try.done);
    outcome(OC_BLOCKED, g_try.err, "%s %s", what, path);
}

/* A file cut to nothing by each way: truncate(2); an open with O_TRUNC, for writing and
 * for reading alone, which cuts it as well wherever DAC would let it be written (Landlock
 * asks that open for READ_FILE alone where its TRUNCATE right is unhandled, as on a
 * kernel older than ABI 3, whose operator refuses truncate and ftruncate by a filter in
 * its place); and the i386 entry's truncate and truncate64, where x86_64's was refused
 * as a filter refuses (not as Landlock, DAC or a read-only mount do, EACCES or EROFS,
 * which refuse every way alike). */
void cut_file(const char *path)
{
    long r = syscall(SYS_truncate, path, 0L);
    int e = errno;
    tried("truncate", r);
    static const int modes[] = { O_WRONLY, O_RDONLY };
    for (int i = 0; i < 2; i++) {
        int fd = open(path, modes[i] | O_TRUNC | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        tried(i ? "open O_RDONLY|O_TRUNC" : "open O_TRUNC", fd < 0 ? -1 : 0);
        if (fd >= 0)
            close(fd);
    }
    if (r == 0 || e == EACCES || e == EROFS || e == ENOENT)
        return;
    size_t n = strlen(path) + 1;
    const struct compat_call i386[] = {
        { "truncate", I386_NR_truncate, { CP(path, n), CV(0) } },
        { "truncate64", I386_NR_truncate64, { CP(path, n), CV(0), CV(0) } }, /* its length's halves */
    };
    compat_tried(i386, 2);
}

void chk_fs_truncate_outside(void)
{
    const char *path = outside(T_truncate_me);
    cut_file(path);
    verdict("truncate", path);
}

/* A file (flags 0) or a folder (AT_REMOVEDIR) removed by each way the kernel has: unlink
 * or rmdir, and unlinkat; where those were refused as a filter refuses (not as Landlock,
 * DAC or a read-only mount do, EACCES or EROFS, which refuse every way alike; nor a name
 * gone, ENOENT), the i386 entry's (unlink or rmdir, and unlinkat), which a deny-list of
 * x86_64's numbers lets through, as Landlock does where its REMOVE_FILE or REMOVE_DIR
 * right is left to that list; then io_uring's IORING_OP_UNLINKAT (5.11), which no
 * filter on the calls sees, where the list lets io_uring through. */
void remove_name(const char *path, int flags)
{
    const int dir = flags & AT_REMOVEDIR, before = g_try.ok;
    const char *at = dir ? "unlinkat AT_REMOVEDIR" : "unlinkat";
#if defined(SYS_unlink) && defined(SYS_rmdir)
    tried(dir ? "rmdir" : "unlink", syscall(dir ? SYS_rmdir : SYS_unlink, path));
#endif
    long r = syscall(SYS_unlinkat, AT_FDCWD, path, flags);
    int e = errno;
    tried(at, r);
    if (g_try.ok > before || e == EACCES || e == EROFS || e == ENOENT)
        return;
    size_t n = strlen(path) + 1;
    const struct compat_call i386[] = {
        { dir ? "rmdir" : "unlink", dir ? I386_NR_rmdir : I386_NR_unlink, { CP(path, n) } },
        { at, I386_NR_unlinkat, { CV(AT_FDCWD), CP(path, n), CV(flags) } },
    };
    compat_tried(i386, 2);
    if (g_try.ok > before)
        return;
    struct io_uring_sqe sqe = { .opcode = IORING_OP_UNLINKAT, .fd = AT_FDCWD,
                                .addr = (unsigned long long)(uintptr_t)path, .unlink_flags = (unsigned)flags };
    const char *step;
    tried(dir ? "io_uring IORING_OP_UNLINKAT AT_REMOVEDIR" : "io_uring IORING_OP_UNLINKAT",
          uring_one(&sqe, "IORING_OP_UNLINKAT", &step) < 0 ? -1 : 0);
}

void chk_fs_unlink_outside(void)
{
    const char *path = outside(T_unlink_me);
    remove_name(path, 0);
    verdict("unlink", path);
}

void chk_fs_rmdir_outside(void)
{
    const char *path = outside(T_rmdir_me);
    remove_name(path, AT_REMOVEDIR);
    verdict("remove the folder", path);
}

void chk_fs_mkdir_outside(void)
{
    const char *path = outside(T_made_dir);
#ifdef SYS_mkdir
    tried("mkdir", syscall(SYS_mkdir, path, 0755));
#endif
    tried("mkdirat", syscall(SYS_mkdirat, AT_FDCWD, path, 0755));
    if (refused_as_filter())
        mkdir_other_ways(path);
    verdict("make the folder", path);
}

void chk_fs_symlink_outside(void)
{
    const char *path = outside(T_made_symlink);
#ifdef SYS_symlink
    tried("symlink", syscall(SYS_symlink, "sentinel", path));
#endif
    tried("symlinkat", syscall(SYS_symlinkat, "sentinel", AT_FDCWD, path));
    if (refused_as_filter())
        symlink_other_ways("sentinel", path);
    verdict("make the symlink", path);
}

void chk_fs_mkfifo_outside(void)
{
    const char *path = outside(T_made_fifo);
#ifdef SYS_mknod
    tried("mknod S_IFIFO", syscall(SYS_mknod, path, S_IFIFO | 0644, 0));
#endif
    tried("mknodat S_IFIFO", syscall(SYS_mknodat, AT_FDCWD, path, S_IFIFO | 0644, 0));
    if (refused_as_filter())
        mknod_other_ways(path, S_IFIFO | 0644);
    verdict("make the FIFO", path);
}

/* A socket file, by each way the kernel makes one: bind(2) (from inside the folder,
 * so that a long work folder does not overrun sun_path; this check's own process:
 * the others keep their cwd), and mknod(2) with S_IFSOCK, which needs no unix socket
 * at all (a filter that refuses socket(AF_UNIX) leaves it open) and no CAP_MKNOD. */
void chk_fs_socket_outside(void)
{
    const char *dir = need(&o.outside_dir), *path = outside(T_made_sock);
    struct sockaddr_un a = { .sun_family = AF_UNIX };
    snprintf(a.sun_path, sizeof a.sun_path, "sock-%s", need(&o.tag));
    if (chdir(dir) != 0)
        outcome(OC_BLOCKED, errno, "chdir %s", dir);
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), e = errno;
    tried("socket(AF_UNIX) and bind", s < 0 ? -1 : bind(s, (struct sockaddr *)&a, sizeof a));
    if (s >= 0)
        close(s);
    int sv[2];
    if (s < 0 && e == EPERM && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0) {
        /* socket(AF_UNIX) refused by a filter (the Landlock reference's): a socket of a
         * pair is as unbound, and bind names it all the same (a deny-list that counted
         * on that refusal in place of MAKE_SOCK, and left bind off) */
        tried("socketpair(AF_UNIX) and bind", bind(sv[0], (struct sockaddr *)&a, sizeof a));
        close(sv[0]), close(sv[1]);
    }
#ifdef SYS_mknod
    tried("mknod S_IFSOCK", syscall(SYS_mknod, path, S_IFSOCK | 0644, 0));
#endif
    tried("mknodat S_IFSOCK", syscall(SYS_mknodat, AT_FDCWD, path, S_IFSOCK | 0644, 0));
    if (refused_as_filter())
        mknod_other_ways(path, S_IFSOCK | 0644);
    if (refused_as_filter())
        bind_other_ways(&a);
    verdict("make a unix socket file at", path);
}

/* Mode, owner, times, extended attributes: the path calls and, where a descriptor
 * is needed, one opened with O_PATH (which no read or write right governs). */
void meta_chmod(const char *path)
{
    struct stat st;
    mode_t m = stat(path, &st) == 0 ? (st.st_mode & 07777) : 0666;
#ifdef SYS_chmod
    tried("chmod", syscall(SYS_chmod, path, (long)(m ^ 0002)));
#endif
    tried("fchmodat", syscall(SYS_fchmodat, AT_FDCWD, path, (long)(m ^ 0020)));
    tried("fchmodat2", syscall(SYS_fchmodat2, AT_FDCWD, path, (long)(m ^ 0200), 0L));
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd >= 0)
        tried("fchmod", syscall(SYS_fchmod, fd, (long)(m ^ 0004)));
    size_t n = strlen(path) + 1;
    const struct compat_call i386[] = { /* the descriptor's call last, where it opened */
        { "chmod", I386_NR_chmod, { CP(path, n), CV((long)(m ^ 0040)) } },
        { "fchmodat", I386_NR_fchmodat, { CV(AT_FDCWD), CP(path, n), CV((long)(m ^ 0400)) } },
        { "fchmodat2", I386_NR_fchmodat2, { CV(AT_FDCWD), CP(path, n), CV((long)(m ^ 0001)), CV(0) } },
        { "fchmod", I386_NR_fchmod, { CV(fd), CV((long)(m ^ 0010)) } },
    };
    compat_tried(i386, fd >= 0 ? 4 : 3);
    if (fd >= 0)
        close(fd);
}

void chk_fs_chmod_outside(void)
{
    const char *path = outside(T_chmod_me);
    meta_chmod(path);
    verdict("change the mode of", path);
}

void meta_chown(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        tried("stat", -1);
        return;
    }
    /* Another owner as root; as anyone else, another group of its own, or itself
     * as the owner: a change either way. */
    uid_t u = geteuid() == 0 ? (st.st_uid == 65534 ? 65533 : 65534) : geteuid();
    gid_t g = (gid_t)-1, groups[64];
    if (geteuid() == 0) {
        g = st.st_gid == 65534 ? 65533 : 65534;
    } else {
        int n = getgroups(64, groups);
        for (int i = 0; i < n; i++)
            if (groups[i] != st.st_gid)
                g = groups[i];
        if (g == (gid_t)-1 && getegid() != st.st_gid)
            g = getegid();
    }
#ifdef SYS_chown
    tried("chown", syscall(SYS_chown, path, (long)u, (long)g));
#endif
#ifdef SYS_lchown
    tried("lchown", syscall(SYS_lchown, path, (long)u, (long)g));
#endif
    tried("fchownat", syscall(SYS_fchownat, AT_FDCWD, path, (long)u, (long)g, 0L));
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd >= 0) {
        tried("fchownat O_PATH", syscall(SYS_fchownat, fd, "", (long)u, (long)g, (long)AT_EMPTY_PATH));
        close(fd);
    }
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd >= 0)
        tried("fchown", syscall(SYS_fchown, fd, (long)u, (long)g));
    size_t n = strlen(path) + 1;
    struct compat_call i386[7] = {
        { "chown32", I386_NR_chown32, { CP(path, n), CV((long)u), CV((long)g) } },
        { "lchown32", I386_NR_lchown32, { CP(path, n), CV((long)u), CV((long)g) } },
        { "fchownat", I386_NR_fchownat, { CV(AT_FDCWD), CP(path, n), CV((long)u), CV((long)g) } },
    };
    int k = 3;
    if (fd >= 0) /* the descriptor's, opened for reading */
        i386[k++] = (struct compat_call){ "fchown32", I386_NR_fchown32, { CV(fd), CV((long)u), CV((long)g) } };
    if (u < 0xffff && (g == (gid_t)-1 || g < 0xffff)) { /* the 16-bit ids' (-1 is 0xffff there) */
        i386[k++] = (struct compat_call){ "chown", I386_NR_chown, { CP(path, n), CV((long)u), CV((long)g) } };
        i386[k++] = (struct compat_call){ "lchown", I386_NR_lchown, { CP(path, n), CV((long)u), CV((long)g) } };
        if (fd >= 0)
            i386[k++] = (struct compat_call){ "fchown", I386_NR_fchown, { CV(fd), CV((long)u), CV((long)g) } };
    }
    compat_tried(i386, k);
    if (fd >= 0)
        close(fd);
}

void chk_fs_chown_outside(void)
{
    const char *path = outside(T_chown_me);
    meta_chown(path);
    verdict("change the owner of", path);
}

void meta_utime(const char *path)
{
    struct timespec ts[2] = { { 1, 0 }, { 1, 0 } };
    tried("utimensat", syscall(SYS_utimensat, AT_FDCWD, path, ts, 0));
    tried("utimensat now", syscall(SYS_utimensat, AT_FDCWD, path, NULL, 0));
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd >= 0)
        tried("futimens", syscall(SYS_utimensat, fd, NULL, ts, 0));
#ifdef SYS_utimes
    struct timeval tv[2] = { { 2, 0 }, { 2, 0 } };
    tried("utimes", syscall(SYS_utimes, path, tv));
#endif
#ifdef SYS_futimesat
    struct timeval fv[2] = { { 3, 0 }, { 3, 0 } };
    tried("futimesat", syscall(SYS_futimesat, AT_FDCWD, path, fv));
#endif
#ifdef SYS_utime
    struct { long actime, modtime; } ut = { 4, 4 };
    tried("utime", syscall(SYS_utime, path, &ut));
#endif
    /* i386's own layouts: 32-bit seconds (and microseconds) */
    const int32_t ut32[2] = { 5, 5 }, tv32[4] = { 6, 0, 6, 0 };
    size_t n = strlen(path) + 1;
    const struct compat_call i386[] = {
        { "utime", I386_NR_utime, { CP(path, n), CP(ut32, sizeof ut32) } },
        { "utimes", I386_NR_utimes, { CP(path, n), CP(tv32, sizeof tv32) } },
        { "utimensat now", I386_NR_utimensat, { CV(AT_FDCWD), CP(path, n), CV(0), CV(0) } },
        { "futimesat", I386_NR_futimesat, { CV(AT_FDCWD), CP(path, n), CP(tv32, sizeof tv32) } },
        { "utimensat_time64 now", I386_NR_utimensat_time64, { CV(AT_FDCWD), CP(path, n), CV(0), CV(0) } },
        { "futimens now", I386_NR_utimensat, { CV(fd), CV(0), CV(0), CV(0) } }, /* where it opened */
    };
    compat_tried(i386, fd >= 0 ? 6 : 5);
    if (fd >= 0)
        close(fd);
}

void chk_fs_utime_outside(void)
{
    const char *path = outside(T_utime_me);
    meta_utime(path);
    verdict("change the times of", path);
}

void meta_xattr(const char *path)
{
    const char *v = need(&o.tag);
    size_t n = strlen(v);
    tried("removexattr", syscall(SYS_removexattr, path, "user.harness"));
    tried("setxattr", syscall(SYS_setxattr, path, "user.harness-set", v, n, 0));
    tried("lsetxattr", syscall(SYS_lsetxattr, path, "user.harness-lset", v, n, 0));
    struct { uint64_t value; uint32_t size, flags; } args = { (uint64_t)(uintptr_t)v, (uint32_t)n, 0 };
    tried("setxattrat",
          syscall(SYS_setxattrat, AT_FDCWD, path, 0, "user.harness-at", &args, sizeof args));
    tried("lremovexattr", syscall(SYS_lremovexattr, path, "user.harness-set"));
    tried("removexattrat", syscall(SYS_removexattrat, AT_FDCWD, path, 0, "user.harness-lset"));
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd >= 0) {
        tried("fsetxattr", syscall(SYS_fsetxattr, fd, "user.harness-f", v, n, 0));
        tried("fremovexattr", syscall(SYS_fremovexattr, fd, "user.harness"));
    }
    size_t pn = strlen(path) + 1;
    static const char set[] = "user.harness-i386", lset[] = "user.harness-li386", fset[] = "user.harness-fi386",
                      atset[] = "user.harness-ati386";
    const struct compat_call i386[] = {
        { "setxattr", I386_NR_setxattr, { CP(path, pn), CP(set, sizeof set), CP(v, n), CV((long)n), CV(0) } },
        { "lsetxattr", I386_NR_lsetxattr, { CP(path, pn), CP(lset, sizeof lset), CP(v, n), CV((long)n), CV(0) } },
        { "removexattr", I386_NR_removexattr, { CP(path, pn), CP(set, sizeof set) } },
        { "lremovexattr", I386_NR_lremovexattr, { CP(path, pn), CP(lset, sizeof lset) } },
        { "setxattrat", I386_NR_setxattrat, /* its struct's value a 64-bit pointer on both */
          { CV(AT_FDCWD), CP(path, pn), CV(0), CP(atset, sizeof atset), CP(&args, sizeof args), CV(sizeof args) } },
        { "removexattrat", I386_NR_removexattrat,
          { CV(AT_FDCWD), CP(path, pn), CV(0), CP("user.harness", sizeof "user.harness") } },
        /* the descriptor's, where it opened */
        { "fsetxattr", I386_NR_fsetxattr, { CV(fd), CP(fset, sizeof fset), CP(v, n), CV((long)n), CV(0) } },
        { "fremovexattr", I386_NR_fremovexattr, { CV(fd), CP("user.harness", sizeof "user.harness") } },
    };
    compat_tried(i386, fd >= 0 ? 8 : 6);
    if (fd >= 0)
        close(fd);
}

void chk_fs_xattr_outside(void)
{
    const char *path = outside(T_xattr_me);
    meta_xattr(path);
    verdict("set or remove extended attributes of", path);
}

/* Whether the folder open at fd holds the name want, read through the i386 entry's
 * getdents64 and then getdents (the 32-bit layout): 1, the way in *way; 0 if listed
 * without it (*n names); -1 if both were refused (errno). io_uring has no opcode that
 * lists a folder, so these are the ways a deny-list of x86_64's calls leaves. */
static int list_i386(int fd, const char *want, int *n, const char **way)
{
    static char buf[32768];
    for (int wide = 1; wide >= 0; wide--) {
        const size_t at_len = wide ? 16 : 8, at_name = wide ? 19 : 10; /* d_reclen, d_name */
        long got;
        *way = wide ? "getdents64 (i386)" : "getdents (i386)";
        for (int rounds = 0; rounds < 64 && (got = i386_getdents(fd, wide, buf, sizeof buf)) > 0; rounds++) {
            for (long at = 0; at + (long)at_name < got;) {
                unsigned short len;
                memcpy(&len, buf + at + at_len, sizeof len);
                if (len <= at_name || at + len > got)
                    break;
                (*n)++;
                if (!strncmp(buf + at + at_name, want, len - at_name) && strlen(want) < len - at_name)
                    return 1;
                at += len;
            }
        }
        if (got >= 0) /* its end, or 64 rounds read */
            return 0;
    }
    return -1;
}

/* READ_DIR: the outside folder's listing holds "listed-<token>", a name only the
 * host's folder has (no attempt makes it). Where x86_64's getdents64 was refused as a
 * filter refuses (a deny-list of it and getdents in place of the right), the i386
 * entry's calls list the same open folder. */
void chk_fs_list_outside(void)
{
    const char *dir = need(&o.outside_dir), *token = need(&o.token);
    char want[128];
    snprintf(want, sizeof want, "listed-%s", token);
    DIR *d = opendir(dir);
    if (d == NULL)
        outcome(OC_BLOCKED, errno, "opendir %s", dir);
    int n = 0;
    errno = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL; n++)
        if (!strcmp(e->d_name, want)) {
            closedir(d);
            outcome(OC_ESCAPED, 0, "listed %s: it holds listed-<token>", dir);
        }
    int e = errno, listed = 0;
    const char *way = NULL;
    if (n == 0 && (e == EPERM || e == ENOSYS)) {
        listed = list_i386(dirfd(d), want, &n, &way);
        if (listed < 0)
            ev_str("i386", errname(errno));
    }
    closedir(d);
    if (listed > 0)
        outcome(OC_ESCAPED, 0, "listed %s (%s): it holds listed-<token>", dir, way);
    if (e && listed == 0 && way)
        outcome(OC_SUCCEEDED, 0, "listed %d names in %s (%s), but not the host's", n, dir, way);
    if (e)
        outcome(OC_BLOCKED, e, "readdir %s", dir);
    outcome(OC_SUCCEEDED, 0, "listed %d names in %s, but not the host's", n, dir);
}

/* ---- inode flags ------------------------------------------------------------ */

/* An ioctl refused as a filter refuses (EPERM), made again with its request widened (its
 * upper 32 bits set): the kernel reads the low 32, and a filter that compares all 64
 * (libseccomp's SCMP_CMP_EQ) matches no rule of its. 0 if either went through, else -1
 * with the last errno. */
long ioctl_tried(const char *name, int fd, unsigned long req, void *arg)
{
    char wide[64];
    long r = ioctl(fd, req, arg);
    tried(name, r);
    if (r != 0 && errno == EPERM) {
        snprintf(wide, sizeof wide, "%s (upper 32 bits set)", name);
        r = syscall(SYS_ioctl, fd, req | 1UL << 32, arg);
        tried(wide, r);
    }
    return r == 0 ? 0 : -1;
}

/* The "do not dump" flag on <outside>/chattr-me, which its owner (or CAP_FOWNER) may
 * set: by path with file_setattr (6.17+), and if it opens by both ioctls that set it
 * (FS_IOC_SETFLAGS, chattr's; FS_IOC_FSSETXATTR, xfs_io's), natively (widened where
 * refused: ioctl_tried) and by i386's;
 * and its generation (FS_IOC_SETVERSION, ext4's own number too), which the same owner
 * may set through a descriptor opened for reading (the host sees its ctime move). */
void meta_chattr(const char *path)
{
    /* One target state, set by every way: a second flip would undo the first. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK), flags = 0;
    if (fd >= 0)
        ioctl(fd, PROBE_FS_IOC_GETFLAGS, &flags);
    flags ^= PROBE_FS_NODUMP_FL;
    struct { uint64_t xflags; uint32_t extsize, nextents, projid, cowextsize; } fa;
    memset(&fa, 0, sizeof fa);
    syscall(SYS_file_getattr, AT_FDCWD, path, &fa, sizeof fa, 0);
    fa.xflags = (fa.xflags & ~(uint64_t)PROBE_FS_XFLAG_NODUMP) |
                (flags & PROBE_FS_NODUMP_FL ? PROBE_FS_XFLAG_NODUMP : 0);
    tried("file_setattr", syscall(SYS_file_setattr, AT_FDCWD, path, &fa, sizeof fa, 0));
    size_t n = strlen(path) + 1;
    const struct compat_call by_path[] = { /* its struct has one layout on both entries */
        { "file_setattr", I386_NR_file_setattr, { CV(AT_FDCWD), CP(path, n), CP(&fa, sizeof fa), CV(sizeof fa), CV(0) } },
    };
    compat_tried(by_path, 1);
    if (fd >= 0) {
        ioctl_tried("FS_IOC_SETFLAGS", fd, PROBE_FS_IOC_SETFLAGS, &flags);
        struct probe_fsxattr fx;
        memset(&fx, 0, sizeof fx);
        ioctl(fd, PROBE_FS_IOC_FSGETXATTR, &fx);
        fx.xflags = (uint32_t)fa.xflags;
        ioctl_tried("FS_IOC_FSSETXATTR", fd, PROBE_FS_IOC_FSSETXATTR, &fx);
        long gen = 0;
        ioctl(fd, PROBE_FS_IOC_GETVERSION, &gen);
        gen++; /* one target: each way sets the same generation */
        int gen32 = (int)gen;
        ioctl_tried("FS_IOC_SETVERSION", fd, PROBE_FS_IOC_SETVERSION, &gen);
        ioctl_tried("EXT4_IOC_SETVERSION", fd, PROBE_EXT4_IOC_SETVERSION, &gen);
        /* The i386 entry's ioctl takes the 32-bit command (fs/ioctl.c's compat path);
         * struct fsxattr has one layout on both, so its command is the same. */
        const struct compat_call i386[] = { /* (the last refusal is the one reported) */
            { "ioctl FS_IOC32_SETVERSION", I386_NR_ioctl,
              { CV(fd), CV((long)_IOW('v', 2, int)), CP(&gen32, sizeof gen32) } },
            { "ioctl", I386_NR_ioctl,
              { CV(fd), CV((long)_IOW('f', 2, int)), CP(&flags, sizeof flags) } },
            { "ioctl FS_IOC_FSSETXATTR", I386_NR_ioctl,
              { CV(fd), CV((long)PROBE_FS_IOC_FSSETXATTR), CP(&fx, sizeof fx) } },
        };
        compat_tried(i386, 3);
        close(fd);
    }
}

void chk_fs_chattr_outside(void)
{
    const char *path = outside(T_chattr_me);
    meta_chattr(path);
    verdict("change the inode flags of", path);
}
