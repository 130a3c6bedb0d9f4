/* Scenario "filesystem", the catalogue's write kinds (docs/attack-surface.md): one
 * attempt per kind of change, each against its own fresh file or name in the
 * outside folder (fs_setup makes them; a change the host sees is the escape), every
 * syscall of the kind tried in turn, so that a filter forgetting one is caught; and
 * reading the outside folder's listing. */

#include "probe.h"
#include <limits.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <linux/io_uring.h>


/* "<outside>/<name>" or, with the cell's tag, "<outside>/<name>-<tag>". */
static const char *outside(const char *name, int tagged)
{
    static char path[4096];
    const char *d = need(&o.outside_dir);
    if (tagged)
        snprintf(path, sizeof path, "%s/%s-%s", d, name, need(&o.tag));
    else
        snprintf(path, sizeof path, "%s/%s", d, name);
    return path;
}

/* The calls a kind is made of, tried in turn: which went through, and the errno
 * of the last refusal. */
static struct { char done[512]; size_t n; int err, ok; } g_try;

static void tried(const char *call, long rc)
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
void fsops_reset(void) { memset(&g_try, 0, sizeof g_try); }

/* succeeded (the host decides whether it shows) if any call went through. */
__attribute__((noreturn))
static void verdict(const char *what, const char *path)
{
    if (g_try.ok)
        outcome("succeeded", 0, "%s %s: %s", what, path, g_try.done);
    outcome("blocked", g_try.err, "%s %s", what, path);
}

void chk_fs_truncate_outside(void)
{
    const char *path = outside("truncate-me", 0);
    tried("truncate", syscall(SYS_truncate, path, 0L));
    int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    tried("open O_TRUNC", fd < 0 ? -1 : 0);
    if (fd >= 0)
        close(fd);
    verdict("truncate", path);
}

void chk_fs_unlink_outside(void)
{
    const char *path = outside("unlink-me", 0);
#ifdef SYS_unlink
    tried("unlink", syscall(SYS_unlink, path));
#endif
    tried("unlinkat", syscall(SYS_unlinkat, AT_FDCWD, path, 0));
    verdict("unlink", path);
}

void chk_fs_rmdir_outside(void)
{
    const char *path = outside("rmdir-me", 0);
#ifdef SYS_rmdir
    tried("rmdir", syscall(SYS_rmdir, path));
#endif
    tried("unlinkat AT_REMOVEDIR", syscall(SYS_unlinkat, AT_FDCWD, path, AT_REMOVEDIR));
    verdict("remove the folder", path);
}

void chk_fs_mkdir_outside(void)
{
    const char *path = outside("dir", 1);
#ifdef SYS_mkdir
    tried("mkdir", syscall(SYS_mkdir, path, 0755));
#endif
    tried("mkdirat", syscall(SYS_mkdirat, AT_FDCWD, path, 0755));
    verdict("make the folder", path);
}

void chk_fs_symlink_outside(void)
{
    const char *path = outside("symlink", 1);
#ifdef SYS_symlink
    tried("symlink", syscall(SYS_symlink, "sentinel", path));
#endif
    tried("symlinkat", syscall(SYS_symlinkat, "sentinel", AT_FDCWD, path));
    verdict("make the symlink", path);
}

void chk_fs_mkfifo_outside(void)
{
    const char *path = outside("fifo", 1);
#ifdef SYS_mknod
    tried("mknod S_IFIFO", syscall(SYS_mknod, path, S_IFIFO | 0644, 0));
#endif
    tried("mknodat S_IFIFO", syscall(SYS_mknodat, AT_FDCWD, path, S_IFIFO | 0644, 0));
    verdict("make the FIFO", path);
}

/* bind(2) makes the socket file; from inside the folder, so that a long work folder
 * does not overrun sun_path (this check's own process: the others keep their cwd). */
void chk_fs_socket_outside(void)
{
    const char *dir = need(&o.outside_dir), *path = outside("sock", 1);
    struct sockaddr_un a = { .sun_family = AF_UNIX };
    snprintf(a.sun_path, sizeof a.sun_path, "sock-%s", need(&o.tag));
    if (chdir(dir) != 0)
        outcome("blocked", errno, "chdir %s", dir);
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        fail(errno, "socket(AF_UNIX)");
    tried("bind", bind(s, (struct sockaddr *)&a, sizeof a));
    close(s);
    verdict("bind a unix socket at", path);
}

/* Mode, owner, times, extended attributes: the path calls and, where a descriptor
 * is needed, one opened with O_PATH (which no read or write right governs). */
void chk_fs_chmod_outside(void)
{
    const char *path = outside("chmod-me", 0);
    struct stat st;
    mode_t m = stat(path, &st) == 0 ? (st.st_mode & 07777) : 0666;
#ifdef SYS_chmod
    tried("chmod", syscall(SYS_chmod, path, (long)(m ^ 0002)));
#endif
    tried("fchmodat", syscall(SYS_fchmodat, AT_FDCWD, path, (long)(m ^ 0020)));
    tried("fchmodat2", syscall(SYS_fchmodat2, AT_FDCWD, path, (long)(m ^ 0200), 0L));
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd >= 0) {
        tried("fchmod", syscall(SYS_fchmod, fd, (long)(m ^ 0004)));
        close(fd);
    }
    verdict("change the mode of", path);
}

void chk_fs_chown_outside(void)
{
    const char *path = outside("chown-me", 0);
    struct stat st;
    if (stat(path, &st) != 0)
        outcome("blocked", errno, "stat %s", path);
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
    verdict("change the owner of", path);
}

void chk_fs_utime_outside(void)
{
    const char *path = outside("utime-me", 0);
    struct timespec ts[2] = { { 1, 0 }, { 1, 0 } };
    tried("utimensat", syscall(SYS_utimensat, AT_FDCWD, path, ts, 0));
    tried("utimensat now", syscall(SYS_utimensat, AT_FDCWD, path, NULL, 0));
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
    verdict("change the times of", path);
}

void chk_fs_xattr_outside(void)
{
    const char *path = outside("xattr-me", 0), *v = need(&o.tag);
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
        close(fd);
    }
    verdict("set or remove extended attributes of", path);
}

/* READ_DIR: the outside folder's listing holds "listed-<token>", a name only the
 * host's folder has (no attempt makes it). */
void chk_fs_list_outside(void)
{
    const char *dir = need(&o.outside_dir), *token = need(&o.token);
    char want[128];
    snprintf(want, sizeof want, "listed-%s", token);
    DIR *d = opendir(dir);
    if (d == NULL)
        outcome("blocked", errno, "opendir %s", dir);
    int n = 0;
    errno = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL; n++)
        if (!strcmp(e->d_name, want)) {
            closedir(d);
            outcome("escaped", 0, "listed %s: it holds listed-<token>", dir);
        }
    int e = errno;
    closedir(d);
    if (e)
        outcome("blocked", e, "readdir %s", dir);
    outcome("succeeded", 0, "listed %d names in %s, but not the host's", n, dir);
}

/* ---- routes through the descriptors the workload holds when it starts ------- */

#define MAX_HELD 64
#define MAX_FD_SCAN (1 << 20) /* where /proc/self/fd cannot be listed */
static int g_held[MAX_HELD], g_nheld, g_held_more;

static void held_one(int fd)
{
    if (g_nheld < MAX_HELD)
        g_held[g_nheld++] = fd;
    else
        g_held_more++;
}

/* Called first thing in main, before the probe opens anything: every descriptor
 * open now was handed in by whoever started the probe (a launcher that leaks one),
 * at any number (`exec 1500</` is as good a leak as fd 3): /proc/self/fd's entries,
 * less the descriptor listing them, or without /proc every number below the
 * descriptor limit. Those beyond the first MAX_HELD are counted, not dropped. */
void fds_at_start(void)
{
    DIR *dir = opendir("/proc/self/fd");
    if (dir != NULL) {
        int self = dirfd(dir);
        struct dirent *e;
        while ((e = readdir(dir)) != NULL) {
            char *end;
            long fd = strtol(e->d_name, &end, 10);
            if (e->d_name[0] != '.' && *end == 0 && fd >= 0 && fd <= INT_MAX && fd != self)
                held_one((int)fd);
        }
        closedir(dir);
        return;
    }
    struct rlimit lim;
    long top = getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY
                   ? (long)lim.rlim_cur
                   : MAX_FD_SCAN;
    for (long fd = 0; fd < top && fd < MAX_FD_SCAN; fd++)
        if (fcntl((int)fd, F_GETFD) != -1)
            held_one((int)fd);
}

static const char *g_paths[10];
static int g_npaths;
static char g_pathbuf[4096];

/* --sentinel and --more-sentinels: what a route must not reach. */
static void held_targets(void)
{
    g_paths[g_npaths++] = need(&o.sentinel);
    snprintf(g_pathbuf, sizeof g_pathbuf, "%s", o.more_sentinels ? o.more_sentinels : "");
    char *save = NULL;
    for (char *p = strtok_r(g_pathbuf, "\n", &save); p && g_npaths < 9; p = strtok_r(NULL, "\n", &save))
        if (p[0] == '/')
            g_paths[g_npaths++] = p;
}

static char g_held_buf[65536];
static int g_held_tried;

/* Read an opened route: escaped when the token is in it. */
static void held_read(int fd, const char *how, int n)
{
    struct stat st;
    ssize_t got = -1;
    g_held_tried++;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        got = pread(fd, g_held_buf, sizeof g_held_buf, 0);
    close(fd);
    if (got > 0 && memmem(g_held_buf, (size_t)got, o.token, strlen(o.token))) {
        ev_int("fd", n);
        outcome("escaped", 0, "read the token through descriptor %d held at start (%s)", n, how);
    }
}

static void held_open(int dirfd, const char *rel, const char *how, int n)
{
    int fd = openat(dirfd, rel, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd >= 0)
        held_read(fd, how, n);
    else
        g_held_tried++;
}

/* Under a folder held at start: each sentinel by its host path after climbing with
 * ".." to the root of that folder's tree (a folder from outside the sandbox's root
 * climbs to the host's), and every suffix of its path below the folder itself. An
 * overwrite through the climb is tried too: the host's sentinel state shows it. */
static void held_dir(int dirfd, int n)
{
    char rel[4096];
    for (int s = 0; s < g_npaths; s++) {
        int k = 0;
        for (int i = 0; i < 40; i++)
            k += snprintf(rel + k, sizeof rel - (size_t)k, "../");
        snprintf(rel + k, sizeof rel - (size_t)k, "%s", g_paths[s] + 1);
        held_open(dirfd, rel, "\"..\" up from it, then the host path", n);
        for (const char *p = strchr(g_paths[s] + 1, '/'); p; p = strchr(p + 1, '/'))
            held_open(dirfd, p + 1, "a suffix of the host path below it", n);
    }
    if (o.overwrite) {
        int k = 0;
        for (int i = 0; i < 40; i++)
            k += snprintf(rel + k, sizeof rel - (size_t)k, "../");
        snprintf(rel + k, sizeof rel - (size_t)k, "%s", o.overwrite + 1);
        int fd = openat(dirfd, rel, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd >= 0) {
            if (write(fd, o.token, strlen(o.token)) < 0)
                ev_int("overwrite_errno", errno);
            close(fd);
            ev_int("overwrote_through_fd", n);
        }
    }
}

/* The mount a descriptor lies on, by the mount id /proc/self/fdinfo gives (-1 when
 * the sandbox's own table does not show it: a descriptor from outside its mount
 * namespace, whose /proc/self/fd link then names the path as the launcher saw it). */
static int held_mount(int fd)
{
    char path[64], info[512];
    snprintf(path, sizeof path, "/proc/self/fdinfo/%d", fd);
    ssize_t n = read_file(path, info, sizeof info - 1);
    if (n <= 0)
        return -1;
    info[n] = 0;
    const char *m = strstr(info, "mnt_id:");
    int id;
    if (m == NULL || sscanf(m + 7, "%d", &id) != 1)
        return -1;
    for (int i = 0; i < g_nmnt; i++)
        if (g_mnt[i].id == id)
            return i;
    return -1;
}

/* What a held folder or file gives by itself, whatever sentinels lie where: "listed"
 * for a folder whose entries it read, "read" for a file it read a byte of (either
 * through the descriptor or re-opened through /proc/self/fd/N), "" for neither. */
static const char *held_reach(int fd, const struct stat *st)
{
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    if (S_ISDIR(st->st_mode)) {
        int d = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *dir = d >= 0 ? fdopendir(d) : NULL;
        if (dir == NULL) {
            if (d >= 0)
                close(d);
            return "";
        }
        errno = 0;
        int listed = readdir(dir) != NULL || errno == 0;
        closedir(dir);
        return listed ? "listed" : "";
    }
    char c;
    if (pread(fd, &c, 1, 0) >= 0)
        return "read";
    int again = open(proc, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    int got = again >= 0 && pread(again, &c, 1, 0) >= 0;
    if (again >= 0)
        close(again);
    return got ? "read" : "";
}

/* Whether the workload can write through a held folder or file, whatever mode the
 * descriptor was opened in: a folder given a file with O_TMPFILE (no name, gone at
 * close: the folder is not touched), a regular file re-opened for writing through
 * /proc/self/fd/N, nothing written (that re-open goes to the launcher's mount, not
 * the sandbox's read-only view of the file). Never a file with an execute bit (an
 * open for writing makes a concurrent exec of it fail) nor a device. */
static int held_writable(int fd, const struct stat *st)
{
    int w = -1;
    if (S_ISDIR(st->st_mode)) {
        w = openat(fd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
    } else if (S_ISREG(st->st_mode) && !(st->st_mode & 0111)) {
        char proc[64];
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
        w = open(proc, O_WRONLY | O_APPEND | O_CLOEXEC | O_NONBLOCK | O_NOCTTY); /* +a too */
    }
    if (w < 0)
        return 0;
    close(w);
    return 1;
}

static int g_held_rows, g_held_cut;

/* One row of held_files for descriptor `fd` (named `label`): [label, kind, dev, path,
 * mount point, mount root, access, reach, inode]. `access` is what the workload can do
 * through it: the mode it was opened in ("r", "w", "rw", "path" for O_PATH), made
 * "rw" (or "w" where nothing reads) when a write goes through anyway. */
static void held_row(const char *label, int fd, const struct stat *st, const char *opened,
                     int have_mounts)
{
    if (g_ev.n >= sizeof g_ev.s - 10000) {
        g_held_cut++;
        return;
    }
    char proc[64], path[4096];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    ssize_t len = readlink(proc, path, sizeof path - 1);
    path[len > 0 ? len : 0] = 0;
    int m = have_mounts ? held_mount(fd) : -1;
    const char *reach = held_reach(fd, st), *access = opened;
    if (!strchr(opened, 'w') && held_writable(fd, st))
        access = reach[0] ? "rw" : "w";
    bput(&g_ev, "%s[", g_held_rows++ ? "," : "");
    bstr(&g_ev, label);
    bput(&g_ev, ",\"%s\",\"%u:%u\",",
         S_ISDIR(st->st_mode) ? "dir" : S_ISBLK(st->st_mode) ? "block" : "file",
         major(st->st_dev), minor(st->st_dev));
    bstr(&g_ev, path);
    bput(&g_ev, ",");
    bstr(&g_ev, m >= 0 ? g_mnt[m].mp : "");
    bput(&g_ev, ",");
    bstr(&g_ev, m >= 0 ? g_mnt[m].root : "");
    bput(&g_ev, ",\"%s\",\"%s\",\"%llu\"]", access, reach, (unsigned long long)st->st_ino);
}

/* A held folder's ancestors, each a row of its own ("3/..", "3/../.."): ".." from a
 * folder held on the launcher's mount climbs to the host's root whatever the
 * sandbox's own root is, so the folder's grant says nothing of where it leads. */
static void held_climb(int n, const struct stat *st, int have_mounts)
{
    char label[128];
    int k = snprintf(label, sizeof label, "%d", n);
    int cur = fcntl(n, F_DUPFD_CLOEXEC, 0);
    struct stat was = *st;
    for (int depth = 0; cur >= 0 && depth < 16 && k < (int)sizeof label - 4; depth++) {
        int up = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
        close(cur);
        cur = up;
        struct stat at;
        if (up < 0 || fstat(up, &at) != 0 || (at.st_dev == was.st_dev && at.st_ino == was.st_ino))
            break; /* the top: a root ".." does not leave */
        k += snprintf(label + k, sizeof label - (size_t)k, "/..");
        held_row(label, up, &at, "path", have_mounts);
        was = at;
    }
    if (cur >= 0)
        close(cur);
}

/* Each folder, regular file or block device held at start, as [fd, kind, dev, path,
 * mount point, mount root, access, reach, inode], and each folder's ancestors by "..": the
 * harness judges them against the grants (a descriptor is a route like any other,
 * sentinel or not). */
static void held_files(void)
{
    int have_mounts = read_mounts() == 0;
    bput(&g_ev, "%s\"held_files\":[", g_ev.n ? "," : "");
    for (int i = 0; i < g_nheld; i++) {
        int n = g_held[i];
        struct stat st;
        if (fstat(n, &st) != 0 ||
            !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)))
            continue;
        int flags = fcntl(n, F_GETFL);
        const char *opened = flags < 0             ? ""
                             : (flags & O_PATH)    ? "path"
                             : (flags & O_ACCMODE) == O_WRONLY ? "w"
                             : (flags & O_ACCMODE) == O_RDWR   ? "rw"
                                                               : "r";
        char label[16];
        snprintf(label, sizeof label, "%d", n);
        held_row(label, n, &st, opened, have_mounts);
        if (S_ISDIR(st.st_mode))
            held_climb(n, &st, have_mounts);
    }
    bput(&g_ev, "]");
    ev_int("held_files_cut", g_held_cut);
}

/* Every descriptor the workload held when it started: a folder (or an O_PATH handle
 * to one) is a root to open the sentinels under; a file is read, and re-opened
 * through /proc/self/fd/N (which gives a read that an O_PATH or write-only
 * descriptor does not); each is reported by number and kind. */
void chk_fs_inherited_fds(void)
{
    need(&o.token);
    held_targets();
    char kinds[512] = "";
    size_t kn = 0;
    for (int i = 0; i < g_nheld; i++) {
        int n = g_held[i];
        struct stat st;
        if (fstat(n, &st) != 0)
            continue;
        const char *kind = S_ISDIR(st.st_mode) ? "dir" : S_ISREG(st.st_mode) ? "file"
                         : S_ISFIFO(st.st_mode) ? "pipe" : S_ISSOCK(st.st_mode) ? "socket"
                         : S_ISCHR(st.st_mode) ? "char" : "other";
        int flags = fcntl(n, F_GETFL);
        if (kn < sizeof kinds)
            kn += (size_t)snprintf(kinds + kn, sizeof kinds - kn, "%s%d:%s%s", kn ? " " : "", n,
                                   kind, flags >= 0 && (flags & O_PATH) ? "(O_PATH)" : "");
        char proc[64];
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", n);
        if (S_ISDIR(st.st_mode)) {
            held_dir(n, n);
            int again = open(proc, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            if (again >= 0) {
                held_dir(again, n);
                close(again);
            }
        } else if (S_ISREG(st.st_mode)) {
            int dup = fcntl(n, F_DUPFD_CLOEXEC, 0);
            if (dup >= 0)
                held_read(dup, "read from offset 0", n);
            int again = open(proc, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
            if (again >= 0)
                held_read(again, "re-opened through /proc/self/fd", n);
        }
    }
    ev_str("held", kinds);
    ev_int("routes_tried", g_held_tried);
    ev_kernel();
    held_files();
    if (g_held_cut)
        fail(0, "%d rows of held files not reported (too many to report)", g_held_cut);
    if (g_held_more) /* not blocked: descriptors it never tried */
        fail(0, "%d descriptors held at start, %d beyond the %d it checks", g_nheld + g_held_more,
             g_held_more, MAX_HELD);
    outcome("blocked", 0, "%d descriptors held at start (%s), %d routes through them failed",
            g_nheld, kinds[0] ? kinds : "none", g_held_tried);
}

/* ---- routes through another process's descriptors -------------------------- */


/* Every visible process's descriptors to small regular files (the sentinel is one;
 * nothing else is opened, so no device's open runs): re-opened through
 * /proc/<pid>/fd/N as the process's owner (setfsuid, as fs-routes does for
 * /proc/<pid>/root), and taken with pidfd_getfd. The fixture's decoy holds the
 * sentinel on its fd 3, so the host runtime's control reads it. */
void chk_fs_proc_fds(void)
{
    need(&o.token);
    DIR *d = opendir("/proc");
    if (d == NULL)
        outcome("blocked", errno, "opendir /proc");
    int pids = 0, fds = 0, last = 0;
    char path[600];
    pid_t self = getpid();
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9' || atoi(e->d_name) == self)
            continue;
        struct stat owner;
        snprintf(path, sizeof path, "/proc/%s", e->d_name);
        if (stat(path, &owner) != 0)
            continue;
        pids++;
        unsigned fsuid = (unsigned)setfsuid((uid_t)-1), fsgid = (unsigned)setfsgid((gid_t)-1);
        setfsgid(owner.st_gid);
        setfsuid(owner.st_uid);
        snprintf(path, sizeof path, "/proc/%s/fd", e->d_name);
        DIR *fdd = opendir(path);
        int pidfd = -2;
        for (struct dirent *f; fdd && (f = readdir(fdd)) != NULL;) {
            struct stat st;
            if (f->d_name[0] < '0' || f->d_name[0] > '9')
                continue;
            snprintf(path, sizeof path, "/proc/%s/fd/%s", e->d_name, f->d_name);
            if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > 4096)
                continue;
            fds++;
            int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
            if (fd >= 0) {
                ssize_t n = pread(fd, g_held_buf, sizeof g_held_buf, 0);
                close(fd);
                if (n > 0 && memmem(g_held_buf, (size_t)n, o.token, strlen(o.token)))
                    outcome("escaped", 0, "read the token through %s, as its owner uid %u", path,
                            (unsigned)owner.st_uid);
            } else {
                last = errno;
            }
            if (pidfd == -2)
                pidfd = (int)syscall(SYS_pidfd_open, atoi(e->d_name), 0);
            fd = pidfd >= 0 ? (int)syscall(SYS_pidfd_getfd, pidfd, atoi(f->d_name), 0) : -1;
            if (fd >= 0) {
                ssize_t n = pread(fd, g_held_buf, sizeof g_held_buf, 0);
                close(fd);
                if (n > 0 && memmem(g_held_buf, (size_t)n, o.token, strlen(o.token)))
                    outcome("escaped", 0, "read the token through pidfd_getfd(%s, %s)", e->d_name,
                            f->d_name);
            } else {
                last = errno;
            }
        }
        if (fdd)
            closedir(fdd);
        if (pidfd >= 0)
            close(pidfd);
        setfsuid(fsuid);
        setfsgid(fsgid);
    }
    closedir(d);
    ev_int("pids", pids);
    ev_int("fds", fds);
    outcome("blocked", last, "%d small files held by %d other visible processes: none gave the token",
            fds, pids);
}

/* ---- io_uring's file operations ------------------------------------------- */

/* One ring, one request at a time: what a seccomp filter on the syscalls never
 * sees. Returns the request's result (negative errno), or -errno of the setup. */
struct uring {
    int fd;
    unsigned *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
    struct io_uring_sqe *sqes;
    struct io_uring_cqe *cqes;
};

static int uring_open(struct uring *u)
{
    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    u->fd = (int)syscall(__NR_io_uring_setup, 4, &p);
    if (u->fd < 0)
        return -errno;
    size_t sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned);
    size_t cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
    char *sq = mmap(NULL, sq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, u->fd,
                    IORING_OFF_SQ_RING);
    char *cq = mmap(NULL, cq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, u->fd,
                    IORING_OFF_CQ_RING);
    void *sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_POPULATE, u->fd, IORING_OFF_SQES);
    if (sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED)
        return -errno;
    u->sq_tail = (unsigned *)(sq + p.sq_off.tail);
    u->sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
    u->sq_array = (unsigned *)(sq + p.sq_off.array);
    u->cq_head = (unsigned *)(cq + p.cq_off.head);
    u->cq_tail = (unsigned *)(cq + p.cq_off.tail);
    u->cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
    u->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
    u->sqes = sqes;
    return 0;
}

static int uring_do(struct uring *u, const struct io_uring_sqe *sqe)
{
    unsigned tail = *u->sq_tail, idx = tail & *u->sq_mask;
    u->sqes[idx] = *sqe;
    u->sq_array[idx] = idx;
    __atomic_store_n(u->sq_tail, tail + 1, __ATOMIC_RELEASE);
    if (syscall(__NR_io_uring_enter, u->fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
        return -errno;
    unsigned head = *u->cq_head;
    if (head == __atomic_load_n(u->cq_tail, __ATOMIC_ACQUIRE))
        return -EAGAIN;
    int res = u->cqes[head & *u->cq_mask].res;
    __atomic_store_n(u->cq_head, head + 1, __ATOMIC_RELEASE);
    return res;
}

/* Through io_uring: open and read the sentinel (escaped on the token), and set an
 * extended attribute of <outside>/uring-me (Landlock governs none; the host's state
 * shows it). */
void chk_fs_io_uring(void)
{
    const char *sentinel = need(&o.sentinel), *path = outside("uring-me", 0), *v = need(&o.tag);
    need(&o.token);
    struct uring u;
    int rc = uring_open(&u);
    if (rc < 0)
        outcome("blocked", -rc, "io_uring_setup");
    struct io_uring_sqe sqe;
    memset(&sqe, 0, sizeof sqe);
    sqe.opcode = IORING_OP_OPENAT;
    sqe.fd = AT_FDCWD;
    sqe.addr = (uint64_t)(uintptr_t)sentinel;
    sqe.open_flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
    int fd = uring_do(&u, &sqe), opened = fd;
    if (fd >= 0) {
        memset(&sqe, 0, sizeof sqe);
        sqe.opcode = IORING_OP_READ;
        sqe.fd = fd;
        sqe.addr = (uint64_t)(uintptr_t)g_held_buf;
        sqe.len = sizeof g_held_buf;
        int n = uring_do(&u, &sqe);
        close(fd);
        if (n > 0 && memmem(g_held_buf, (size_t)n, o.token, strlen(o.token)))
            outcome("escaped", 0, "read the token of %s through io_uring (IORING_OP_OPENAT, READ)",
                    sentinel);
    }
    memset(&sqe, 0, sizeof sqe);
    sqe.opcode = IORING_OP_SETXATTR;
    sqe.addr = (uint64_t)(uintptr_t)"user.harness-uring";
    sqe.addr2 = (uint64_t)(uintptr_t)v;
    sqe.addr3 = (uint64_t)(uintptr_t)path;
    sqe.len = (uint32_t)strlen(v);
    int set = uring_do(&u, &sqe);
    close(u.fd);
    if (set == 0)
        outcome("succeeded", 0, "IORING_OP_SETXATTR on %s", path);
    ev_str("openat", opened < 0 ? errname(-opened) : "ok");
    outcome("blocked", -set, "IORING_OP_SETXATTR on %s (IORING_OP_OPENAT of the sentinel: %s)",
            path, opened < 0 ? errname(-opened) : "opened, no token");
}

/* ---- inode flags ------------------------------------------------------------ */

#define PROBE_FS_IOC_GETFLAGS _IOR('f', 1, long)
#define PROBE_FS_IOC_SETFLAGS _IOW('f', 2, long)
#define PROBE_FS_NODUMP_FL 0x00000040
#define PROBE_FS_XFLAG_NODUMP 0x00000080

/* The "do not dump" flag on <outside>/chattr-me, which its owner (or CAP_FOWNER) may
 * set: by path with file_setattr (6.17+), and by FS_IOC_SETFLAGS if it opens. */
void chk_fs_chattr_outside(void)
{
    const char *path = outside("chattr-me", 0);
    struct { uint64_t xflags; uint32_t extsize, nextents, projid, cowextsize; } fa;
    memset(&fa, 0, sizeof fa);
    syscall(SYS_file_getattr, AT_FDCWD, path, &fa, sizeof fa, 0);
    fa.xflags ^= PROBE_FS_XFLAG_NODUMP;
    tried("file_setattr", syscall(SYS_file_setattr, AT_FDCWD, path, &fa, sizeof fa, 0));
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd >= 0) {
        int flags = 0;
        ioctl(fd, PROBE_FS_IOC_GETFLAGS, &flags);
        flags ^= PROBE_FS_NODUMP_FL;
        tried("FS_IOC_SETFLAGS", ioctl(fd, PROBE_FS_IOC_SETFLAGS, &flags));
        close(fd);
    }
    verdict("change the inode flags of", path);
}

/* ---- execute ---------------------------------------------------------------- */


/* Run `exec-me version` in a grandchild, stdout to a pipe: by path (dirfd AT_FDCWD)
 * or through an O_PATH handle (AT_EMPTY_PATH). 1 if it ran (printed the probe's
 * version line), else 0 with *err the refusal's errno. */
static int exec_ran(const char *path, int by_handle, int *err)
{
    char out[512];
    char *const argv[] = { "exec-me", "version", NULL }, *const envp[] = { NULL };
    run_program(path, argv, envp, by_handle, 1, out, sizeof out);
    const char *ee = strstr(out, "\"exec_errno\":");
    *err = ee ? atoi(ee + 13) : EIO;
    return strstr(out, "\"type\":\"version\"") != NULL;
}

/* EXECUTE: <outside>/exec-me is a copy of the probe harness put there (static, so a
 * sandbox's own libraries do not matter): run by path, and through an O_PATH handle,
 * which no read right governs when it opens. It ran: escaped. */
void chk_fs_exec_outside(void)
{
    const char *path = outside("exec-me", 0);
    int e1, e2;
    if (exec_ran(path, 0, &e1))
        outcome("escaped", 0, "ran %s (execve): it printed the probe's version line", path);
    if (exec_ran(path, 1, &e2))
        outcome("escaped", 0, "ran %s through an O_PATH handle (execveat AT_EMPTY_PATH)", path);
    ev_str("by_handle", errname(e2));
    outcome("blocked", e1, "execve %s", path);
}

/* ---- the policy's read-only grants (docs/policy.md) ----------------------- */

/* --granted: harness's own folder in each read-only grant, at the path the sandbox
 * sees it, newline-separated. The next one into dir; 0 when none is left. */
static int next_granted(const char **cur, char *dir, size_t size)
{
    const char *s = *cur;
    while (*s == '\n')
        s++;
    if (!*s)
        return 0;
    size_t n = strcspn(s, "\n");
    snprintf(dir, size, "%.*s", (int)n, s);
    *cur = s + n;
    return 1;
}

static char g_granted[4096]; /* what the control read */

/* The inside control: harness's file in each grant reads back with its token, so a
 * sandbox that blocks every read cannot pass against a policy that allows reading. */
void chk_fs_read_granted(void)
{
    const char *cur = need(&o.granted), *token = need(&o.granted_token);
    char dir[4096], path[4200];
    int n = 0;
    for (; next_granted(&cur, dir, sizeof dir); n++) {
        snprintf(path, sizeof path, "%s/sentinel", dir);
        ssize_t got = read_file(path, g_granted, sizeof g_granted);
        if (got < 0)
            outcome("failed", errno, "read %s", path);
        if (!memmem(g_granted, (size_t)got, token, strlen(token)))
            outcome("failed", 0, "%s does not hold harness's token (%zd bytes)", path, got);
    }
    outcome("ok", 0, "read harness's file in each of %d read-only grants", n);
}

/* Every kind of change in each grant's folder, on files fs_setup made writable by
 * anyone: overwrite a byte, truncate, create a name, unlink. The host decides. */
void chk_fs_write_read_only(void)
{
    const char *cur = need(&o.granted), *tag = need(&o.tag);
    char dir[4096], path[4200];
    int n = 0;
    for (; next_granted(&cur, dir, sizeof dir); n++) {
        snprintf(path, sizeof path, "%s/overwrite-me", dir);
        int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        tried("write", fd >= 0 && write(fd, "x", 1) == 1 ? 0 : -1);
        if (fd >= 0)
            close(fd);
        snprintf(path, sizeof path, "%s/truncate-me", dir);
        tried("truncate", syscall(SYS_truncate, path, 0L));
        snprintf(path, sizeof path, "%s/created-%s", dir, tag);
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0644);
        tried("create", fd >= 0 ? 0 : -1);
        if (fd >= 0)
            close(fd);
        snprintf(path, sizeof path, "%s/unlink-me", dir);
        tried("unlink", syscall(SYS_unlinkat, AT_FDCWD, path, 0));
    }
    snprintf(path, sizeof path, "harness's folder in %d read-only grants", n);
    verdict("change", path);
}
