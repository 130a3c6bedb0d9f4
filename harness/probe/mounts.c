/* The mount table, scenario "filesystem": every mount as this process sees it, and
 * what it reaches below each (the host's listed targets, each_target, which
 * writereach.c and root.c use too). */

#include "probe.h"

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

/* Where the sandbox shows no /proc: the same table by listmount(2) and statmount(2)
 * (6.8; every mount of this mount namespace below this process's root, as mountinfo
 * shows them), its strings kept in g_mntbuf. 0, or -1 with errno. */
static int list_mounts(void)
{
    uint64_t req[3] = { 24, 0xffffffffffffffffULL /* LSMT_ROOT */, 0 }, ids[MAX_MOUNTS];
    long nids = syscall(458 /* listmount */, req, ids, (long)MAX_MOUNTS, 0L);
    if (nids < 0)
        return -1;
    if (nids == MAX_MOUNTS)
        return errno = EFBIG, -1;
    static unsigned char sm[16384]; /* struct statmount: its strings from offset 512 */
    size_t used = 0;
    g_nmnt = 0;
    for (long i = 0; i < nids; i++) {
        uint64_t q[3] = { 24, ids[i], 0x1 | 0x2 | 0x8 | 0x10 | 0x20 | 0x80 };
        if (syscall(457 /* statmount */, q, sm, sizeof sm - 1, 0L) != 0)
            return -1;
        sm[sizeof sm - 1] = 0;
        uint32_t u[28];
        memcpy(u, sm, sizeof u);
        uint64_t mask;
        memcpy(&mask, sm + 8, sizeof mask);
        if ((mask & 0x3b) != 0x3b)
            return errno = ENOSYS, -1; /* no root, point or type: no table */
        const char *str = (const char *)sm + 512, *opts = mask & 0x80 ? str + u[1] : "";
        struct mnt *m = &g_mnt[g_nmnt++];
        m->id = (int)u[14]; /* mnt_id_old, mountinfo's */
        m->maj = u[4], m->min = u[5];
        char *fields[4] = { NULL };
        const char *from[4] = { str + u[26], str + u[27], str + u[9], opts };
        for (int k = 0; k < 4; k++) {
            size_t len = strlen(from[k]) + (k == 3 ? 3 : 0);
            if (used + len + 1 > sizeof g_mntbuf)
                return errno = EFBIG, -1;
            fields[k] = g_mntbuf + used;
            if (k == 3) /* mountinfo's super options: ro or rw first */
                snprintf(fields[k], len + 1, "%s%s%s", u[8] & 1 ? "ro" : "rw", *opts ? "," : "", opts);
            else
                memcpy(fields[k], from[k], len + 1);
            used += strlen(fields[k]) + 1;
        }
        m->root = fields[0], m->mp = fields[1], m->type = fields[2], m->opts = fields[3];
    }
    return 0;
}

/* Parse /proc/self/mountinfo into g_mnt; 0, or -1 with errno (EFBIG: too long).
 * Without /proc, the table listmount and statmount give. */
int read_mounts(void)
{
    ssize_t n = read_file("/proc/self/mountinfo", g_mntbuf, sizeof g_mntbuf - 1);
    if (n < 0 && errno == ENOENT && access("/proc/self", F_OK) != 0)
        return list_mounts();
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
        m->opts = sep + 3 < k ? tok[sep + 3] : "";
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

/* Up to OVERLAY_NAMES files (not folders) of an overlay mount, at its top or one
 * folder down ("sub/name"), as "name", "inode" pairs: an overlay keeps its layers'
 * inode numbers for files (a folder's may be its own), so the host, finding the same
 * name with the same inode in a layer its options name, proves that layer is the host
 * folder of that name (the options are only the mounter's words). */
#define OVERLAY_NAMES 16
#define OVERLAY_DIRS 8
static int overlay_files(const char *mp, const char *sub, int n)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s%s%s", mp, *sub ? "/" : "", sub) >= (int)sizeof path)
        return n;
    DIR *d = opendir(path);
    int dirs = 0;
    for (struct dirent *e; d != NULL && n < OVERLAY_NAMES && (e = readdir(d)) != NULL;) {
        struct stat st;
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
            fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            if (!*sub && dirs < OVERLAY_DIRS && strlen(e->d_name) < 256)
                dirs++; /* walked below, once the top's files are in */
            continue;
        }
        char name[600];
        if (snprintf(name, sizeof name, "%s%s%s", sub, *sub ? "/" : "", e->d_name) >=
            (int)sizeof name)
            continue;
        bput(&g_ev, ",");
        bstr(&g_ev, name);
        bput(&g_ev, ",\"%llu\"", (unsigned long long)st.st_ino);
        n++;
    }
    if (d != NULL && !*sub && dirs) {
        rewinddir(d);
        for (struct dirent *e; n < OVERLAY_NAMES && dirs && (e = readdir(d)) != NULL;) {
            struct stat st;
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
                fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                S_ISDIR(st.st_mode) && strlen(e->d_name) < 256) {
                dirs--;
                n = overlay_files(mp, e->d_name, n);
            }
        }
    }
    if (d != NULL)
        closedir(d);
    return n;
}

/* Each overlay mount as [mount point, super options (escaped as mountinfo writes
 * them), name, inode, name, inode...]: its layers, judged where the host shows them. */
static void put_overlays(void)
{
    bput(&g_ev, ",\"overlays\":[");
    int n = 0;
    for (int i = 0; i < g_nmnt && g_ev.n < sizeof g_ev.s - 4000; i++) {
        if (strcmp(g_mnt[i].type, "overlay"))
            continue;
        bput(&g_ev, "%s[", n++ ? "," : "");
        bstr(&g_ev, g_mnt[i].mp);
        bput(&g_ev, ",");
        bstr(&g_ev, g_mnt[i].opts);
        if (on_mount(g_mnt[i].mp, &g_mnt[i]))
            overlay_files(g_mnt[i].mp, "", 0);
        bput(&g_ev, "]");
    }
    bput(&g_ev, "]");
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
    put_overlays();
    if (g_ev.n > sizeof g_ev.s - 1500) {
        g_ev.n = 0;
        fail(0, "the mount table (%d mounts) is too long to report", g_nmnt);
    }
    outcome(OC_SUCCEEDED, 0, "%d mounts", g_nmnt);
}
