/* Scenario "filesystem": the metadata changes a held file or folder lets its holder
 * make (fs-inherited-fds: held.c's rows), each to what it already is, by every way
 * into each. Its owner may make them through a descriptor opened for reading, on the
 * mount it was opened on, which may be the launcher's read-write view of a file the
 * sandbox sees only read-only (a bind). The descriptor's own call first; where that is
 * refused as a filter refuses (EPERM, EACCES, ENOSYS: a deny-list of the metadata
 * calls), its siblings: the newer *at call on the descriptor itself (AT_EMPTY_PATH),
 * the path calls through /proc/self/fd/N (to the same file on the same mount), and
 * the i386 entry's calls, each of which a deny-list may have left out. An O_PATH
 * handle, which no f-call takes, goes by those alone. */

#include "probe.h"
#include <sys/xattr.h>

struct held { int fd, by_path; char proc[64]; size_t n; /* its /proc/self/fd path's size */ };

static int filter_refused(long rc) { return rc != 0 && (errno == EPERM || errno == EACCES || errno == ENOSYS); }

/* Its own mode (not where S_ISGID is set: a chmod by one outside its group clears it). */
static void mode_ways(const struct held *h, mode_t mode)
{
    long rc = h->by_path ? chmod(h->proc, mode) : fchmod(h->fd, mode);
    tried("fchmod", rc);
    if (!filter_refused(rc))
        return;
    tried("fchmodat2 AT_EMPTY_PATH", syscall(SYS_fchmodat2, h->fd, "", (long)mode, (long)AT_EMPTY_PATH));
    tried("fchmodat by /proc/self/fd", syscall(SYS_fchmodat, AT_FDCWD, h->proc, (long)mode));
    const struct compat_call i386[] = { /* the descriptor's call last: no O_PATH handle's */
        { "fchmodat2 AT_EMPTY_PATH", I386_NR_fchmodat2, { CV(h->fd), CP("", 1), CV(mode), CV(AT_EMPTY_PATH) } },
        { "chmod by /proc/self/fd", I386_NR_chmod, { CP(h->proc, h->n), CV(mode) } },
        { "fchmodat by /proc/self/fd", I386_NR_fchmodat, { CV(AT_FDCWD), CP(h->proc, h->n), CV(mode) } },
        { "fchmod", I386_NR_fchmod, { CV(h->fd), CV(mode) } },
    };
    compat_tried(i386, h->by_path ? 3 : 4);
}

/* Its own owner and group: never a file with a setuid or setgid bit, nor one with file
 * capabilities (a chown clears them, even to the same owner). */
static void owner_ways(const struct held *h, const struct stat *st)
{
    char caps[64];
    if ((st->st_mode & (S_ISUID | S_ISGID)) ||
        (h->by_path ? getxattr(h->proc, "security.capability", caps, sizeof caps)
                    : fgetxattr(h->fd, "security.capability", caps, sizeof caps)) >= 0 ||
        (errno != ENODATA && errno != EOPNOTSUPP)) /* none, or none can be set there */
        return;
    long u = (long)st->st_uid, g = (long)st->st_gid;
    long rc = h->by_path ? syscall(SYS_fchownat, h->fd, "", u, g, (long)AT_EMPTY_PATH) : fchown(h->fd, (uid_t)u, (gid_t)g);
    tried(h->by_path ? "fchownat AT_EMPTY_PATH" : "fchown", rc);
    if (!filter_refused(rc))
        return;
    if (!h->by_path)
        tried("fchownat AT_EMPTY_PATH", syscall(SYS_fchownat, h->fd, "", u, g, (long)AT_EMPTY_PATH));
    tried("fchownat by /proc/self/fd", syscall(SYS_fchownat, AT_FDCWD, h->proc, u, g, 0L));
    struct compat_call i386[6] = {
        { "fchownat AT_EMPTY_PATH", I386_NR_fchownat, { CV(h->fd), CP("", 1), CV(u), CV(g), CV(AT_EMPTY_PATH) } },
        { "chown32 by /proc/self/fd", I386_NR_chown32, { CP(h->proc, h->n), CV(u), CV(g) } },
    };
    int k = 2;
    if (!h->by_path)
        i386[k++] = (struct compat_call){ "fchown32", I386_NR_fchown32, { CV(h->fd), CV(u), CV(g) } };
    if (u < 0xffff && g < 0xffff) { /* the 16-bit ids' calls */
        i386[k++] = (struct compat_call){ "chown by /proc/self/fd", I386_NR_chown, { CP(h->proc, h->n), CV(u), CV(g) } };
        if (!h->by_path)
            i386[k++] = (struct compat_call){ "fchown", I386_NR_fchown, { CV(h->fd), CV(u), CV(g) } };
    }
    compat_tried(i386, k);
}

/* Its own times, given explicitly (UTIME_OMIT is let through unchecked), to the
 * nanosecond: never by utimes or utime, which would round them. */
static void times_ways(const struct held *h, const struct stat *st)
{
    const struct timespec times[2] = { st->st_atim, st->st_mtim };
    long rc = h->by_path ? utimensat(AT_FDCWD, h->proc, times, 0) : futimens(h->fd, times);
    tried("futimens", rc);
    if (!filter_refused(rc))
        return;
    if (!h->by_path)
        tried("utimensat by /proc/self/fd", utimensat(AT_FDCWD, h->proc, times, 0));
    const int64_t t64[4] = { st->st_atim.tv_sec, st->st_atim.tv_nsec, st->st_mtim.tv_sec, st->st_mtim.tv_nsec };
    const int32_t t32[4] = { (int32_t)st->st_atim.tv_sec, (int32_t)st->st_atim.tv_nsec,
                             (int32_t)st->st_mtim.tv_sec, (int32_t)st->st_mtim.tv_nsec };
    int fits = t32[0] == st->st_atim.tv_sec && t32[2] == st->st_mtim.tv_sec; /* before 2038 */
    struct compat_call i386[4] = {
        { "utimensat_time64 by /proc/self/fd", I386_NR_utimensat_time64,
          { CV(AT_FDCWD), CP(h->proc, h->n), CP(t64, sizeof t64), CV(0) } },
    };
    int k = 1;
    if (!h->by_path) /* futimens: utimensat on the descriptor, no path */
        i386[k++] = (struct compat_call){ "futimens (time64)", I386_NR_utimensat_time64,
                                          { CV(h->fd), CV(0), CP(t64, sizeof t64), CV(0) } };
    if (fits)
        i386[k++] = (struct compat_call){ "utimensat by /proc/self/fd", I386_NR_utimensat,
                                          { CV(AT_FDCWD), CP(h->proc, h->n), CP(t32, sizeof t32), CV(0) } };
    if (fits && !h->by_path)
        i386[k++] = (struct compat_call){ "futimens", I386_NR_utimensat,
                                          { CV(h->fd), CV(0), CP(t32, sizeof t32), CV(0) } };
    compat_tried(i386, k);
}

/* An extended attribute it lacks, replaced: ENODATA comes only once setting one is
 * allowed, so nothing is set. */
static long replaced(long rc) { return rc != 0 && errno == ENODATA ? 0 : -1; }

static void xattr_ways(const struct held *h)
{
    static const char absent[] = "user.harness-absent";
    ssize_t has = h->by_path ? getxattr(h->proc, absent, NULL, 0) : fgetxattr(h->fd, absent, NULL, 0);
    if (has >= 0 || errno != ENODATA)
        return;
    long rc = h->by_path ? setxattr(h->proc, absent, "", 0, XATTR_REPLACE)
                         : fsetxattr(h->fd, absent, "", 0, XATTR_REPLACE);
    tried("fsetxattr", replaced(rc));
    if (rc == 0 || errno == ENODATA || !filter_refused(rc))
        return;
    struct { uint64_t value; uint32_t size, flags; } args = { (uint64_t)(uintptr_t) "", 0, XATTR_REPLACE };
    tried("setxattrat AT_EMPTY_PATH",
          replaced(syscall(SYS_setxattrat, h->fd, "", (long)AT_EMPTY_PATH, absent, &args, sizeof args)));
    if (!h->by_path)
        tried("setxattr by /proc/self/fd", replaced(setxattr(h->proc, absent, "", 0, XATTR_REPLACE)));
    const struct compat_call i386[] = { /* its struct's value a 64-bit pointer on both */
        { "setxattrat AT_EMPTY_PATH", I386_NR_setxattrat,
          { CV(h->fd), CP("", 1), CV(AT_EMPTY_PATH), CP(absent, sizeof absent), CP(&args, sizeof args),
            CV(sizeof args) } },
        { "setxattr by /proc/self/fd", I386_NR_setxattr,
          { CP(h->proc, h->n), CP(absent, sizeof absent), CP("", 1), CV(0), CV(XATTR_REPLACE) } },
        { "fsetxattr", I386_NR_fsetxattr,
          { CV(h->fd), CP(absent, sizeof absent), CP("", 1), CV(0), CV(XATTR_REPLACE) } },
    };
    compat_tried_as(i386, h->by_path ? 2 : 3, ENODATA);
}

/* Its own inode flags (chattr's FS_IOC_SETFLAGS, widened where refused: ioctl_tried);
 * where that is refused, the same flags by xfs_io's FS_IOC_FSSETXATTR and by
 * file_setattr (6.17) on the descriptor, then the i386 entry's. `fd` is one that takes
 * an ioctl (an O_PATH handle's file re-opened for reading). */
static void flag_ways(const struct held *h, int fd)
{
    int flags;
    if (ioctl(fd, PROBE_FS_IOC_GETFLAGS, &flags) != 0)
        return;
    long rc = ioctl_tried("FS_IOC_SETFLAGS", fd, PROBE_FS_IOC_SETFLAGS, &flags);
    if (!filter_refused(rc))
        return;
    struct probe_fsxattr fx;
    memset(&fx, 0, sizeof fx);
    int have_fx = ioctl(fd, PROBE_FS_IOC_FSGETXATTR, &fx) == 0;
    if (have_fx)
        ioctl_tried("FS_IOC_FSSETXATTR", fd, PROBE_FS_IOC_FSSETXATTR, &fx);
    struct probe_file_attr fa;
    memset(&fa, 0, sizeof fa);
    int have_fa = syscall(SYS_file_getattr, h->fd, "", &fa, sizeof fa, (long)AT_EMPTY_PATH) == 0;
    if (have_fa)
        tried("file_setattr AT_EMPTY_PATH", syscall(SYS_file_setattr, h->fd, "", &fa, sizeof fa, (long)AT_EMPTY_PATH));
    struct compat_call i386[3] = { /* the 32-bit command (fs/ioctl.c's compat path) */
        { "ioctl FS_IOC32_SETFLAGS", I386_NR_ioctl, { CV(fd), CV((long)_IOW('f', 2, int)), CP(&flags, sizeof flags) } },
    };
    int k = 1;
    if (have_fx) /* struct fsxattr has one layout on both entries, so one command */
        i386[k++] = (struct compat_call){ "ioctl FS_IOC_FSSETXATTR", I386_NR_ioctl,
                                          { CV(fd), CV((long)PROBE_FS_IOC_FSSETXATTR), CP(&fx, sizeof fx) } };
    if (have_fa)
        i386[k++] = (struct compat_call){ "file_setattr AT_EMPTY_PATH", I386_NR_file_setattr,
                                          { CV(h->fd), CP("", 1), CP(&fa, sizeof fa), CV(sizeof fa), CV(AT_EMPTY_PATH) } };
    compat_tried(i386, k);
}

/* The calls that went through, as `tried` lists them: "" for none. */
const char *meta_unchanged(int held)
{
    struct held h = { .fd = held, .by_path = (fcntl(held, F_GETFL) & O_PATH) != 0 };
    h.n = (size_t)snprintf(h.proc, sizeof h.proc, "/proc/self/fd/%d", held) + 1;
    struct stat st;
    writes_reset();
    if (fstat(held, &st) != 0)
        return "";
    mode_t mode = st.st_mode & 07777;
    if (!(mode & S_ISGID))
        mode_ways(&h, mode);
    owner_ways(&h, &st);
    times_ways(&h, &st);
    xattr_ways(&h);
    int fd = h.by_path ? open(h.proc, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK) : held;
    if (fd >= 0)
        flag_ways(&h, fd);
    if (h.by_path && fd >= 0)
        close(fd);
    return tried_calls();
}
