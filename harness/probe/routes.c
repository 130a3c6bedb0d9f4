/* Every route to every sentinel, scenario "filesystem": by path below each mount,
 * through /proc/<pid>/root as each process's owner, and by file handle. */

#include "probe.h"

#define MAX_SENTINELS 8
static const char *g_sent[MAX_SENTINELS];
static int g_nsent;
static char g_sentbuf[4096];

/* --sentinel and the newline-separated --more-sentinels (other host places). */
static void load_sentinels(void)
{
    g_sent[0] = need(&o.sentinel);
    g_nsent = 1;
    if (!o.more_sentinels)
        return;
    snprintf(g_sentbuf, sizeof g_sentbuf, "%s", o.more_sentinels);
    char *save = NULL;
    for (char *p = strtok_r(g_sentbuf, "\n", &save); p && g_nsent < MAX_SENTINELS;
         p = strtok_r(NULL, "\n", &save))
        if (p[0] == '/')
            g_sent[g_nsent++] = p;
}

static struct { int tried, absent, denied, other; } g_routes;

/* A route opened: escaped if it is a regular file holding the token. */
static void route_fd(int fd, const char *path, const char *how)
{
    struct stat st;
    ssize_t n = -1;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        n = read(fd, g_file, sizeof g_file);
    close(fd);
    if (has_token(g_file, n)) {
        ev_str("route", how);
        ev_int("routes_tried", g_routes.tried);
        outcome(OC_ESCAPED, 0, "read the token through %s (%s)", path, how);
    }
}

static void route_errno(int e)
{
    if (e == ENOENT || e == ENOTDIR)
        g_routes.absent++;
    else if (e == EACCES || e == EPERM)
        g_routes.denied++;
    else
        g_routes.other++;
}

static void route(const char *path, const char *how)
{
    g_routes.tried++;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        route_errno(errno);
    else
        route_fd(fd, path, how);
}

/* Every suffix of a sentinel's host path ("/a/b/s", "/b/s", "/s") under a
 * directory fd: a host folder bound anywhere, at any depth, is found. */
static void routes_under(int dirfd, const char *prefix, const char *how)
{
    char path[4096];
    for (int s = 0; s < g_nsent; s++)
        for (const char *p = g_sent[s]; p; p = strchr(p + 1, '/')) {
            if (dirfd >= 0) {
                g_routes.tried++;
                int fd = openat(dirfd, p + 1, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
                snprintf(path, sizeof path, "%s%s", prefix, p);
                if (fd < 0)
                    route_errno(errno);
                else
                    route_fd(fd, path, how);
            } else if (strcmp(prefix, "/") || p != g_sent[s]) {
                snprintf(path, sizeof path, "%s%s", strcmp(prefix, "/") ? prefix : "", p);
                route(path, how);
            }
        }
}

/* The fs root of the filesystem mounted at mp, by a file handle made up for its
 * root inode (ext2/3/4: FILEID_INO32_GEN, inode 2, generation 0): the "shocker"
 * route, open only to a holder of CAP_DAC_READ_SEARCH in the initial namespace. */
static int g_handle_errno;
/* The same through the i386 entry (rootways.c), where x86_64's calls are refused. */
static void routes_by_handle_i386(const char *mp)
{
    int fd = handle_root_i386(mp);
    if (fd < 0)
        return;
    char how[300];
    snprintf(how, sizeof how, "open_by_handle_at(inode 2) on the fs of %s through the i386 entry (int $0x80),"
             " x86_64's refused", mp);
    routes_under(fd, "<fs root>", how);
    close(fd);
}

static void routes_by_handle(const char *mp)
{
    struct { struct file_handle fh; unsigned char f[128]; } h;
    int mid;
    h.fh.handle_bytes = sizeof h.f;
    if (handle_name_killed()) { /* refused: counted as a route that failed, once */
        static int counted;
        if (!counted++)
            g_routes.tried++, route_errno(g_handle_errno = EPERM);
        routes_by_handle_i386(mp);
        return;
    }
    if (name_to_handle_at(AT_FDCWD, mp, &h.fh, &mid, 0) != 0) {
        if (errno == EPERM || errno == ENOSYS)
            routes_by_handle_i386(mp);
        return;
    }
    int mfd = open(mp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (mfd < 0)
        return;
    g_routes.tried++;
    struct handle_open call = { mfd, &h.fh };
    static int killed = -1; /* a filter kills on open_by_handle_at (SIGSYS): refused */
    if (killed < 0)
        killed = killed_on(handle_open_call, &call);
    int fd = killed ? (errno = EPERM, -1) : open_by_handle_at(mfd, &h.fh, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        g_handle_errno = errno;
        route_errno(errno);
        if (g_handle_errno == EPERM || g_handle_errno == ENOSYS)
            routes_by_handle_i386(mp);
    } else {
        close(fd);
        if (h.fh.handle_type == 1 && h.fh.handle_bytes >= 8) {
            uint32_t root[2] = { 2, 0 };
            memcpy(h.fh.f_handle, root, sizeof root);
            h.fh.handle_bytes = sizeof root;
            fd = open_by_handle_at(mfd, &h.fh, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            if (fd >= 0) {
                char how[256];
                snprintf(how, sizeof how, "open_by_handle_at(inode 2) on the fs of %s", mp);
                routes_under(fd, "<fs root>", how);
                close(fd);
            } else {
                route_errno(errno);
            }
        }
    }
    close(mfd);
}

/* The mount namespace of visible process `pid` (once per namespace, the probe's own
 * too: a chrooted probe's setns leaves its chroot), opened as the pid's owner:
 * entered by setns in a child, whose root (the namespace's, whatever the process's
 * own root) is the base of every suffix of every sentinel's path. */
static int g_mntns_over, g_mntns_lost;
static void routes_by_setns(const char *pid, struct stat *seen, int *nseen)
{
    char path[64], how[192];
    struct stat st, mine, there;
    snprintf(path, sizeof path, "/proc/%.20s/ns/mnt", pid);
    if (stat(path, &st) != 0)
        return;
    for (int i = 0; i < *nseen; i++)
        if (seen[i].st_dev == st.st_dev && seen[i].st_ino == st.st_ino)
            return;
    if (*nseen >= 16) { /* bounded: more make the check an error, not blocked */
        g_mntns_over++;
        return;
    }
    seen[(*nseen)++] = st;
    int why = NS_OUTSIDE, h = open(path, O_RDONLY | O_CLOEXEC);
    int root = h >= 0 ? fd_in_ns(h, CLONE_NEWNS, ns_root, NULL, &why) : -1;
    g_routes.tried++;
    if (root < 0) {
        g_mntns_lost += why == NS_LOST;
        route_errno(errno);
    } else if (stat("/", &mine) == 0 && fstat(root, &there) == 0 && mine.st_dev == there.st_dev &&
               mine.st_ino == there.st_ino) {
        close(root); /* the probe's own root (its own namespace, unchrooted): nothing new */
    } else {
        snprintf(how, sizeof how, "setns into %s as the pid's owner%s", path, ns_way());
        routes_under(root, "<its root>", how);
        close(root);
    }
    if (h >= 0)
        close(h);
}

/* Every route to every sentinel: its host path, every mount point joined with
 * every suffix of it, /proc/<pid>/root of every visible process (as that
 * process's owner, by setfsuid) and its mount namespace (by setns), and file
 * handles on every mounted filesystem. */
void chk_fs_routes(void)
{
    char path[4096];
    need(&o.token);
    load_sentinels();
    if (read_mounts() != 0)
        fail(errno, "read /proc/self/mountinfo");
    for (int s = 0; s < g_nsent; s++)
        route(g_sent[s], "host path");
    for (int i = 0; i < g_nmnt; i++)
        routes_under(-1, g_mnt[i].mp, "mount point + path suffix");
    DIR *d = opendir("/proc");
    int pids = 0, nseen = 0; /* its own namespace too: a chrooted probe's setns leaves the chroot */
    struct stat seen[16];
    for (struct dirent *e; d && (e = readdir(d));) {
        struct stat st;
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof path, "/proc/%s", e->d_name);
        if (stat(path, &st) != 0)
            continue;
        pids++;
        unsigned fsuid = (unsigned)setfsuid((uid_t)-1), fsgid = (unsigned)setfsgid((gid_t)-1);
        setfsgid(st.st_gid);
        setfsuid(st.st_uid);
        for (int s = 0; s < g_nsent; s++) {
            snprintf(path, sizeof path, "/proc/%s/root%s", e->d_name, g_sent[s]);
            route(path, "/proc/<pid>/root as the pid's owner");
        }
        routes_by_setns(e->d_name, seen, &nseen);
        setfsuid(fsuid);
        setfsgid(fsgid);
    }
    if (d)
        closedir(d);
    for (int i = 0; i < g_nmnt; i++)
        routes_by_handle(g_mnt[i].mp);
    ev_int("routes_tried", g_routes.tried);
    ev_int("sentinels", g_nsent);
    ev_int("mounts", g_nmnt);
    ev_int("pids", pids);
    ev_int("absent", g_routes.absent);
    ev_int("denied", g_routes.denied);
    ev_int("other", g_routes.other);
    if (g_handle_errno)
        ev_str("open_by_handle_at", errname(g_handle_errno));
    if (g_mntns_over || g_mntns_lost) /* not blocked: namespaces it never tried */
        fail(0, "%d mount namespaces beyond the 16 entered, %d that gave no answer", g_mntns_over,
             g_mntns_lost);
    outcome(OC_BLOCKED, 0, "%d routes to %d sentinels failed (%d absent, %d denied, %d other)",
            g_routes.tried, g_nsent, g_routes.absent, g_routes.denied, g_routes.other);
}
