/* Scenario "filesystem": reads and writes outside the allowed folder, by every
 * route to every sentinel, and the controls inside it. */

#include "probe.h"

#define READ_MAX 65536
static char g_file[READ_MAX]; /* what a file check read */

static int has_token(const char *buf, ssize_t n)
{
    return n > 0 && memmem(buf, (size_t)n, o.token, strlen(o.token)) != NULL;
}

/* "<dir>/<prefix><tag>" for a directory option. */
static const char *in_dir(const char **dir, const char *prefix)
{
    static char path[4096];
    const char *d = need(dir);
    snprintf(path, sizeof path, "%s/%s%s", d, prefix, need(&o.tag));
    return path;
}

/* Read path: escaped when the token is in what came back. */
__attribute__((noreturn))
static void read_attempt(const char *path)
{
    need(&o.token);
    ssize_t n = read_file(path, g_file, sizeof g_file);
    if (n < 0)
        outcome("blocked", errno, "read %s", path);
    ev_int("bytes", n);
    if (has_token(g_file, n))
        outcome("escaped", 0, "read the token through %s", path);
    outcome("succeeded", 0, "read %zd bytes of %s, but no token", n, path);
}

/* Open path for writing with extra flags and write the token: succeeded. */
__attribute__((noreturn))
static void write_attempt(const char *path, int flags)
{
    const char *token = need(&o.token);
    int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | flags, 0644);
    if (fd < 0)
        outcome("blocked", errno, "open %s", path);
    if (write(fd, token, strlen(token)) != (ssize_t)strlen(token))
        outcome("blocked", errno, "write %s", path);
    close(fd);
    outcome("succeeded", 0, "wrote the token to %s", path);
}

void chk_fs_read_outside(void) { read_attempt(need(&o.sentinel)); }
void chk_fs_create_outside(void) { write_attempt(in_dir(&o.outside_dir, "created-"), O_CREAT | O_EXCL); }
/* WRITE_FILE alone: no O_TRUNC, which asks for Landlock's TRUNCATE right too (that
 * is fs-truncate-outside's row), so a sandbox that handles TRUNCATE but not
 * WRITE_FILE does not refuse it; the token, longer than the file, replaces it. */
void chk_fs_overwrite_outside(void) { write_attempt(need(&o.overwrite), 0); }
void chk_fs_symlink_planted(void) { read_attempt(need(&o.planted_link)); }

void chk_fs_traversal(void)
{
    char path[4096];
    int n = snprintf(path, sizeof path, "%s", need(&o.allowed_dir));
    for (int i = 0; i < 32 && n > 0 && (size_t)n < sizeof path; i++)
        n += snprintf(path + n, sizeof path - (size_t)n, "/..");
    if (n > 0 && (size_t)n < sizeof path)
        snprintf(path + n, sizeof path - (size_t)n, "%s", need(&o.sentinel));
    read_attempt(path);
}

void chk_fs_symlink_made(void)
{
    const char *target = need(&o.sentinel), *path = in_dir(&o.allowed_dir, "link-");
    need(&o.token);
    if (symlink(target, path) != 0)
        outcome("blocked", errno, "symlink(%s, %s)", target, path);
    read_attempt(path);
}

static void proc_root(const char *root)
{
    char path[4096];
    snprintf(path, sizeof path, "%s%s", root, need(&o.sentinel));
    read_attempt(path);
}

void chk_fs_proc_self_root(void) { proc_root("/proc/self/root"); }
void chk_fs_proc_1_root(void) { proc_root("/proc/1/root"); }

void chk_fs_hardlink_in(void)
{
    const char *target = need(&o.sentinel), *path = in_dir(&o.allowed_dir, "hardlink-");
    need(&o.token);
    if (link(target, path) != 0)
        outcome("blocked", errno, "link(%s, %s)", target, path);
    read_attempt(path);
}

void chk_fs_rename_in(void)
{
    const char *from = need(&o.rename), *to = in_dir(&o.allowed_dir, "renamed-");
    if (rename(from, to) != 0)
        outcome("blocked", errno, "rename(%s, %s)", from, to);
    outcome("succeeded", 0, "renamed %s to %s", from, to);
}

/* Controls: the allowed directory must work. Read the control file back. */
static void control_read(const char *path)
{
    ssize_t n = read_file(path, g_file, sizeof g_file);
    if (n < 0)
        outcome("failed", errno, "read %s", path);
    if (!has_token(g_file, n))
        outcome("failed", 0, "%s does not hold the token (%zd bytes)", path, n);
    outcome("ok", 0, "read the token back from %s", path);
}

void chk_fs_allowed_write(void)
{
    const char *path = in_dir(&o.allowed_dir, "control-"), *token = need(&o.token);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        outcome("failed", errno, "open %s", path);
    if (write(fd, token, strlen(token)) != (ssize_t)strlen(token))
        outcome("failed", errno, "write %s", path);
    close(fd);
    control_read(path);
}

void chk_fs_allowed_read(void)
{
    need(&o.token);
    control_read(in_dir(&o.allowed_dir, "control-"));
}

/* ---- the mount table and every route to every sentinel ------------------- */

#define MAX_MOUNTS 512
struct mnt g_mnt[MAX_MOUNTS];
int g_nmnt;
static char g_mntbuf[131072];

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void mnt_unescape(char *s)
{
    char *w = s;
    for (char *r = s; *r;) {
        if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
            r[3] >= '0' && r[3] <= '7') {
            *w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
            r += 4;
        } else {
            *w++ = *r++;
        }
    }
    *w = '\0';
}

/* Parse /proc/self/mountinfo into g_mnt; 0, or -1 with errno (EFBIG: too long). */
int read_mounts(void)
{
    ssize_t n = read_file("/proc/self/mountinfo", g_mntbuf, sizeof g_mntbuf - 1);
    if (n < 0)
        return -1;
    if ((size_t)n == sizeof g_mntbuf - 1) {
        errno = EFBIG;
        return -1;
    }
    g_mntbuf[n] = '\0';
    g_nmnt = 0;
    char *save = NULL;
    for (char *line = strtok_r(g_mntbuf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *tok[64], *s2 = NULL;
        int k = 0;
        for (char *t = strtok_r(line, " ", &s2); t && k < 64; t = strtok_r(NULL, " ", &s2))
            tok[k++] = t;
        int sep = -1;
        for (int i = 6; i < k; i++)
            if (!strcmp(tok[i], "-")) {
                sep = i;
                break;
            }
        if (k < 5 || sep < 0 || sep + 1 >= k)
            continue;
        if (g_nmnt == MAX_MOUNTS) {
            errno = EFBIG;
            return -1;
        }
        struct mnt *m = &g_mnt[g_nmnt++];
        if (sscanf(tok[0], "%d", &m->id) != 1)
            m->id = -1;
        if (sscanf(tok[2], "%u:%u", &m->maj, &m->min) != 2)
            m->maj = m->min = 0;
        m->root = tok[3];
        m->mp = tok[4];
        m->type = tok[sep + 1];
        mnt_unescape(m->root);
        mnt_unescape(m->mp);
    }
    return 0;
}

/* What a mount point yields to this process, as proof of reach: the name of one entry
 * of a directory it could list ("." for an empty one), "(file)" for a regular file it
 * could read, "" when it could do neither (visible, not readable), "?" when it did
 * not try (a device or other special file, whose open may have side effects). */
static void mount_reach(const char *mp, char *out, size_t cap)
{
    struct stat st;
    snprintf(out, cap, "?");
    errno = 0;
    int found = stat(mp, &st) == 0;
    if (!found) {
        if (errno == EACCES || errno == EPERM)
            out[0] = 0;
        return;
    }
    if (!(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)))
        return; /* a device: not opened, so not tried */
    out[0] = 0;
    int fd = open(mp, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return;
    if (S_ISREG(st.st_mode)) {
        char c;
        if (read(fd, &c, 1) >= 0)
            snprintf(out, cap, "(file)");
        close(fd);
        return;
    }
    DIR *d = fdopendir(fd);
    if (d == NULL) {
        close(fd);
        return;
    }
    errno = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(out, cap, "%.*s", (int)cap - 1, e->d_name); /* bounded: proof, not data */
            break;
        }
        snprintf(out, cap, ".");
    }
    closedir(d);
}

/* --reach-targets: newline-separated "MAJ:MIN FSPATH", files and folders the host
 * listed on its own filesystems (`hostside/hostfs.py`), less what the cell grants. */
#define TARGETS_MAX 131072
static char g_targets[TARGETS_MAX];

/* Is the opened fd a folder that lists, or a regular file that gives a byte? */
static int reach_fd(int fd, int dir)
{
    if (dir) {
        DIR *d = fdopendir(fd);
        if (d == NULL) {
            close(fd);
            return 0;
        }
        errno = 0;
        int ok = readdir(d) != NULL || errno == 0;
        closedir(d);
        return ok;
    }
    char c;
    int ok = read(fd, &c, 1) >= 0;
    close(fd);
    return ok;
}

/* Whether `path` leads onto mount `m` itself, not onto one mounted over it or over a
 * folder below it (/dev/shm mounted twice; the workspace bound at /var/tmp below a
 * host /var): the mount id /proc/self/fdinfo gives for it, or without /proc the device. */
int on_mount(const char *path, const struct mnt *m)
{
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0)
        return 0;
    char proc[64], info[512];
    snprintf(proc, sizeof proc, "/proc/self/fdinfo/%d", fd);
    ssize_t n = read_file(proc, info, sizeof info - 1);
    struct stat st;
    int dev = fstat(fd, &st) == 0 && major(st.st_dev) == m->maj && minor(st.st_dev) == m->min;
    close(fd);
    const char *at = n > 0 ? (info[n] = 0, strstr(info, "mnt_id:")) : NULL;
    int id;
    if (m->id >= 0 && at != NULL && sscanf(at + 7, "%d", &id) == 1)
        return id == m->id;
    return dev; /* no /proc: the device, which tells apart all but a bind of the same one */
}

/* Each host target in `list` ("MAJ:MIN FSPATH" lines) that lies on mount m's device
 * within its root, at the mount point + its path below the root: a folder or a regular
 * file of the mount point's own device (a mount of the sandbox's over the path is not
 * the host's file; a device or other special file is never handed on). `try` gets its
 * path, its path below the mount point and its stat; a nonzero return stops the walk
 * and is returned. Meaningful only on the host's kernel: device numbers match. */
int each_target(const struct mnt *m, const char *list, target_fn try, void *ctx)
{
    struct stat top, st;
    int have_top = stat(m->mp, &top) == 0;
    size_t rootlen = strlen(m->root);
    if (rootlen == 1)
        rootlen = 0; /* "/": every path is below it */
    const char *p = list ? list : "";
    while (*p) {
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char line[4096];
        unsigned maj, min;
        int off = 0;
        if (len < sizeof line) {
            memcpy(line, p, len);
            line[len] = 0;
        } else {
            line[0] = 0;
        }
        p += len + (end != NULL);
        if (sscanf(line, "%u:%u %n", &maj, &min, &off) != 2 || off == 0 || maj != m->maj ||
            min != m->min)
            continue;
        const char *fspath = line + off;
        if (fspath[0] != '/' || strncmp(fspath, m->root, rootlen) ||
            (fspath[rootlen] != '/' && fspath[rootlen] != 0))
            continue;
        const char *rest = fspath + rootlen;
        char path[4096];
        if (!*rest || snprintf(path, sizeof path, "%s%s", strcmp(m->mp, "/") ? m->mp : "",
                               rest) >= (int)sizeof path)
            continue;
        if (stat(path, &st) != 0 || !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)))
            continue;
        if ((have_top ? st.st_dev != top.st_dev
                      : (major(st.st_dev) != m->maj || minor(st.st_dev) != m->min)) ||
            !on_mount(path, m))
            continue; /* another mount's: a write or read there is not this mount's */
        int stop = try(path, rest + 1, &st, ctx);
        if (stop)
            return stop;
    }
    return 0;
}

struct proof { char *out; size_t cap; }; /* where a target's proof is written */

/* Opened for reading, the target a stat described (not one swapped in since), and
 * read: a folder that lists or a regular file that gives a byte. */
static int read_target(const char *path, const char *rest, const struct stat *st, void *ctx)
{
    int dir = S_ISDIR(st->st_mode);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | (dir ? O_DIRECTORY : 0));
    if (fd < 0)
        return 0;
    struct stat got;
    if (fstat(fd, &got) != 0 || got.st_dev != st->st_dev || got.st_ino != st->st_ino) {
        close(fd); /* swapped since the stat: not what was aimed at */
        return 0;
    }
    if (!reach_fd(fd, dir))
        return 0;
    struct proof *proof = ctx;
    snprintf(proof->out, proof->cap, "%.*s", (int)proof->cap - 1, rest); /* bounded */
    return 1;
}

/* Below a mount point this process could not read (F1: Landlock on "/"; a host folder
 * of mode 0711): try each host target below it. The first one read is the proof (its
 * path below the mount point). */
static void reach_below(const struct mnt *m, char *out, size_t cap)
{
    struct proof proof = { out, cap };
    each_target(m, g_targets, read_target, &proof);
}

/* Every mount the sandbox sees, as [dev, type, mount point, root, reach]: the harness
 * judges which of them expose a host filesystem beyond the grants. */
void chk_fs_mounts(void)
{
    if (read_mounts() != 0)
        fail(errno, "read /proc/self/mountinfo");
    snprintf(g_targets, sizeof g_targets, "%s", o.reach_targets ? o.reach_targets : "");
    ev_kernel();
    bput(&g_ev, ",\"mounts\":[");
    for (int i = 0; i < g_nmnt; i++) {
        char reach[64];
        if (on_mount(g_mnt[i].mp, &g_mnt[i]))
            mount_reach(g_mnt[i].mp, reach, sizeof reach);
        else
            reach[0] = 0; /* mounted over: its mount point leads elsewhere */
        if (!reach[0])
            reach_below(&g_mnt[i], reach, sizeof reach);
        bput(&g_ev, "%s[\"%u:%u\",", i ? "," : "", g_mnt[i].maj, g_mnt[i].min);
        bstr(&g_ev, g_mnt[i].type);
        bput(&g_ev, ",");
        bstr(&g_ev, g_mnt[i].mp);
        bput(&g_ev, ",");
        bstr(&g_ev, g_mnt[i].root);
        bput(&g_ev, ",");
        bstr(&g_ev, reach);
        bput(&g_ev, "]");
    }
    bput(&g_ev, "]");
    if (g_ev.n > sizeof g_ev.s - 1500) {
        g_ev.n = 0;
        fail(0, "the mount table (%d mounts) is too long to report", g_nmnt);
    }
    outcome("succeeded", 0, "%d mounts", g_nmnt);
}

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
        outcome("escaped", 0, "read the token through %s (%s)", path, how);
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
static void routes_by_handle(const char *mp)
{
    struct { struct file_handle fh; unsigned char f[128]; } h;
    int mid;
    h.fh.handle_bytes = sizeof h.f;
    if (name_to_handle_at(AT_FDCWD, mp, &h.fh, &mid, 0) != 0)
        return;
    int mfd = open(mp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (mfd < 0)
        return;
    g_routes.tried++;
    int fd = open_by_handle_at(mfd, &h.fh, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        g_handle_errno = errno;
        route_errno(errno);
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

/* Every route to every sentinel: its host path, every mount point joined with
 * every suffix of it, /proc/<pid>/root of every visible process (as that
 * process's owner, by setfsuid), and file handles on every mounted filesystem. */
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
    int pids = 0;
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
    outcome("blocked", 0, "%d routes to %d sentinels failed (%d absent, %d denied, %d other)",
            g_routes.tried, g_nsent, g_routes.absent, g_routes.denied, g_routes.other);
}
