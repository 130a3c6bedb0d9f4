/* Scenario "filesystem": write reach (`fs-write-reach`). Every mount the sandbox
 * sees, and the host's listed files and folders below it (--write-targets: those
 * outside the cell's write grants), tried for a write that changes nothing: a file
 * made with O_TMPFILE (no name, gone at close: the folder is not touched) and a
 * regular file opened for writing (no byte written, not truncated). A host folder
 * the workload can write into but not list (mode 0733), or a file of a read-only
 * grant it could change, is found here; the harness judges which writes lie beyond
 * the grants. */

#include "writereach.h"
#include <limits.h>
#include <sys/statvfs.h>

/* Filesystems that hold no files of anyone's (and autofs, whose stat mounts). */
static const char *const PSEUDO[] = {
    "proc", "sysfs", "cgroup", "cgroup2", "devpts", "mqueue", "debugfs", "tracefs",
    "securityfs", "pstore", "bpf", "configfs", "fusectl", "hugetlbfs", "autofs",
    "binfmt_misc", "nsfs", "efivarfs", "selinuxfs", "rpc_pipefs", NULL,
};
static int listed(const char *const *names, const char *type)
{
    for (int i = 0; names[i]; i++)
        if (!strcmp(names[i], type))
            return 1;
    return 0;
}

/* A line of a newline-separated option, exactly. */
int in_lines(const char *lines, const char *path)
{
    size_t n = strlen(path);
    for (const char *p = lines ? lines : ""; *p;) {
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && !strncmp(p, path, n))
            return 1;
        p += len + (end != NULL);
    }
    return 0;
}

int untried(const struct tried *t) { return !strncmp(t->how, UNTRIED, strlen(UNTRIED)); }

/* A file made in folder `path` without touching the folder: O_TMPFILE. Where the
 * filesystem has none (vfat, NFS, FUSE, 9p; or a filter refuses O_TMPFILE alone), a
 * named file made and removed at once, unless told not to (`--write-named 0`: the
 * host control, on the host's own folders). */
static int make_other(const char *path, struct tried *t);

int write_dir(const char *path, struct tried *t)
{
    int fd = open(path, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
    if (fd >= 0) {
        close(fd);
        t->how = "made a file (O_TMPFILE)";
        return 1;
    }
    if (errno == EACCES || errno == EPERM)
        return make_other(path, t);
    if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
        return 0;
    if (o.write_named && !strcmp(o.write_named, "0")) {
        t->how = UNTRIED "O_TMPFILE unsupported, and no named file is made here";
        return 1;
    }
    char name[4096];
    if (snprintf(name, sizeof name, "%s/.harness-w-%s", strcmp(path, "/") ? path : "",
                 need(&o.tag)) >= (int)sizeof name)
        return 0;
    fd = open(name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return 0;
    close(fd);
    t->left = unlink(name) != 0;
    t->how = t->left ? "made a file it could not remove" : "made and removed a file";
    return 1;
}

/* A whiteout `name` made in folder `dir` through the i386 entry (mknod, then mknodat),
 * where x86_64's mknod of one was refused as a filter refuses (EPERM or ENOSYS: a
 * whiteout needs no CAP_MKNOD, and Landlock, DAC and a read-only mount refuse with
 * EACCES or EROFS): a launcher that leaves Landlock's MAKE_CHAR unhandled and refuses
 * x86_64's mknod and mknodat by a filter in its place lets the entry's through. Asked
 * only in a folder DAC lets the workload add to, and once at most where it is
 * refused: a filter's answer is the same in every folder, and Landlock's (MAKE_CHAR
 * handled) in every folder beyond a grant, so a correct sandbox pays one child. */
static int whiteout_i386(const char *dir, const char *name)
{
    static int refused;
    if (refused || (errno != EPERM && errno != ENOSYS) ||
        faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) != 0)
        return 0;
    if (mknod_i386(name, S_IFCHR | 0600, 0) == 0)
        return 1;
    refused = 1;
    return 0;
}

/* Where no regular file may be made: a folder, a symlink or a node of each other kind
 * (Landlock's MAKE_DIR, MAKE_SYM, MAKE_FIFO..., each a right of its own: a symlink planted in
 * /etc/apt/sources.list.d is a package source root follows), each made and removed at
 * once; never on the host control's own folders (`--write-named 0`). */
static int make_other(const char *path, struct tried *t)
{
    char name[4096];
    if ((o.write_named && !strcmp(o.write_named, "0")) ||
        snprintf(name, sizeof name, "%s/.harness-w-%s", strcmp(path, "/") ? path : "",
                 need(&o.tag)) >= (int)sizeof name)
        return 0;
    if (mkdir(name, 0700) == 0) {
        t->left = rmdir(name) != 0;
        t->how = t->left ? "made a folder it could not remove" : "made and removed a folder";
        return 1;
    }
    /* MAKE_SYM, MAKE_FIFO, MAKE_SOCK (a socket's node, no socket(2)), MAKE_CHAR (a
     * whiteout, 0:0, needs no CAP_MKNOD), MAKE_BLOCK (0:0, no driver: only with
     * CAP_MKNOD). */
    static const struct { mode_t mode; const char *made, *left; } NODES[] = {
        { S_IFIFO, "made and removed a named pipe", "made a named pipe it could not remove" },
        { S_IFSOCK, "made and removed a socket's node", "made a socket's node it could not remove" },
        { S_IFCHR, "made and removed a whiteout (a character device 0:0)",
          "made a whiteout (a character device 0:0) it could not remove" },
        { S_IFBLK, "made and removed a block device node 0:0",
          "made a block device node 0:0 it could not remove" },
    };
    if (symlink(".harness", name) == 0) {
        t->left = unlink(name) != 0;
        t->how = t->left ? "made a symlink it could not remove" : "made and removed a symlink";
        return 1;
    }
    for (size_t i = 0; i < sizeof NODES / sizeof NODES[0]; i++)
        if (mknod(name, NODES[i].mode | 0600, 0) == 0) {
            t->left = unlink(name) != 0;
            t->how = t->left ? NODES[i].left : NODES[i].made;
            return 1;
        } else if (NODES[i].mode == S_IFCHR && whiteout_i386(path, name)) {
            t->left = unlink(name) != 0;
            t->how = t->left ? "made a whiteout (a character device 0:0) through the i386 entry, x86_64's"
                               " mknod refused, and could not remove it"
                             : "made and removed a whiteout (a character device 0:0) through the i386"
                               " entry, x86_64's mknod refused";
            return 1;
        }
    return 0;
}

/* `name` (at folder `dir`) opened for appending, and found to be the file `st` says,
 * not one swapped in since; closed at once. */
static int open_for_append(int dir, const char *name, const struct stat *st)
{
    int fd = openat(dir, name, O_WRONLY | O_APPEND | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW);
    if (fd < 0)
        return 0;
    struct stat got;
    int same = fstat(fd, &got) == 0 && S_ISREG(got.st_mode) && got.st_dev == st->st_dev &&
               got.st_ino == st->st_ino;
    close(fd);
    return same;
}

/* A regular file opened for writing, nothing written; for appending, which an
 * append-only file (chattr +a: a log) takes where a plain open for writing is
 * refused, and which changes nothing more. Never one with an execute bit (an open
 * for writing makes a concurrent exec of it fail, ETXTBSY, even when a Landlock or
 * DAC check refuses the open a moment later), nor on overlayfs (the open copies the
 * file up into the upper layer: a change on the host): where such a file is a mount
 * point and the kernel's access check says it is writable, that is said, not tried. */
static int write_file(const char *path, const char *type, const struct stat *st,
                      int mount_point, struct tried *t)
{
    if (!S_ISREG(st->st_mode))
        return 0;
    if ((st->st_mode & 0111) || !strcmp(type, "overlay")) {
        /* Said only of a file that is a mount point of its own (a bind of one file):
         * below one, the access check (which Landlock does not govern) would make
         * every co-located sandbox run as root inconclusive. */
        if (!mount_point || faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) != 0)
            return 0;
        t->how = st->st_mode & 0111 ? UNTRIED "an executable file the access check lets be written"
                                    : UNTRIED "a file on overlayfs the access check lets be written";
        return 1;
    }
    if (open_for_append(AT_FDCWD, path, st)) {
        t->how = "opened a file for writing";
        return 1;
    }
    return truncate_way(path, st, t);
}


/* One listed target: folders on the first pass, files on the second; where neither
 * may be written, whether its folder's entries may be removed. An untried one proves
 * nothing, so the walk goes on past it (the first is kept). */
static int write_target(const char *path, const char *rest, const struct stat *st, void *ctx)
{
    struct walk *w = ctx;
    struct tried t = { "", 0 };
    int ok = w->dirs ? S_ISDIR(st->st_mode) && write_dir(path, &t)
                     : write_file(path, w->m->type, st, 0, &t);
    if (!ok && (w->dirs ? S_ISDIR(st->st_mode) : S_ISREG(st->st_mode)) &&
        remove_way_at(path, st, &t)) {
        const char *slash = strrchr(rest, '/');
        snprintf(w->proof, w->cap, "%.*s", slash ? (int)(slash - rest) : 0, rest);
        *w->t = t;
        return 1;
    }
    if (!ok || (untried(&t) && w->kept.how[0]))
        return 0;
    if (untried(&t)) {
        w->kept = t;
        snprintf(w->proof, w->cap, "%s", rest);
        return 0;
    }
    *w->t = t;
    snprintf(w->proof, w->cap, "%s", rest);
    return 1;
}

/* The walk's bounds, for every mount together: WALK_FOLDERS folders (or
 * --walk-folders N), WALK_CPU times the check's time limit in CPU time, and a share
 * of its row's time limit (SLOW_ROW_FACTOR times the check's) in wall time. A host
 * whose listable folders exceed them is not walked through, and that is said (no
 * proof either way). CPU time is the bound that matters: it is the same on a busy
 * host, where twelve cells on two cores stretch a 2 s walk to 16 s of wall time. */
#define WALK_FOLDERS 400000
#define WALK_CPU 3.2
#define WALK_SHARE 0.9
static long g_walk_max = WALK_FOLDERS;
static long g_walked;   /* folders tried by the walk, in all mounts */
int g_walk_cut;         /* mounts whose walk the bounds cut short */
static double g_walk_until, g_walk_cpu_until;

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6;
}

static int out_of_time(void)
{
    return now_ms() > g_walk_until || cpu_ms() > g_walk_cpu_until;
}

/* The folders --write-skip names, by identity: a grant named through a symlink
 * (Debian's /usr/share/groff/site-tmac is /etc/groff) is that folder, and a write in
 * it, granted, must not end the walk before a folder beyond the grants. */
#define SKIP_IDS 64
static struct { dev_t dev; ino_t ino; } g_skip[SKIP_IDS];
static int g_nskip;

static void skip_ids(void)
{
    g_nskip = 0;
    for (const char *p = o.write_skip ? o.write_skip : ""; *p && g_nskip < SKIP_IDS;) {
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char path[4096];
        struct stat st;
        if (len < sizeof path) {
            memcpy(path, p, len);
            path[len] = 0;
            if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
                g_skip[g_nskip].dev = st.st_dev;
                g_skip[g_nskip++].ino = st.st_ino;
            }
        }
        p += len + (end != NULL);
    }
}

static int skipped(const struct stat *st)
{
    for (int i = 0; i < g_nskip; i++)
        if (g_skip[i].dev == st->st_dev && g_skip[i].ino == st->st_ino)
            return 1;
    return 0;
}

int walk_step(void)
{
    if (++g_walked > g_walk_max || (!(g_walked & 255) && out_of_time())) {
        g_walk_cut++;
        return 0;
    }
    return 1;
}

static int mount_point(const char *path)
{
    for (int i = 0; i < g_nmnt; i++)
        if (!strcmp(g_mnt[i].mp, path))
            return 1;
    return 0;
}

/* A regular file the walk meets, opened for appending (nothing written), as
 * write_file opens one: a Landlock rule on one file (WRITE_FILE on a host file deep in
 * a read-only grant) is found here. Never one with an execute bit (ETXTBSY), nor one
 * on overlayfs (a copy up). Files count against the walk's time, not its folders. */
static long g_files;
static int walk_file(struct walk *w, int dir, const char *name, const struct stat *st,
                     const char *path, size_t base)
{
    if (!(++g_files & 255) && out_of_time()) {
        g_walk_cut++;
        return 0;
    }
    if ((st->st_mode & 0111) || !strcmp(w->m->type, "overlay"))
        return 0;
    if (open_for_append(dir, name, st))
        w->t->how = "opened a file for writing";
    else if (!truncate_way(path, st, w->t))
        return 0;
    snprintf(w->proof, w->cap, "%s", path + base + 1);
    return 1;
}

/* Every folder below `path` (`len` bytes of a PATH_MAX buffer) that the workload
 * can list, on mount w->m alone (another mount below is its own row), depth first:
 * each tried as write_dir tries a folder. A write grant one folder deeper than
 * harness's listing of the host reaches (Landlock's rule on /etc/systemd/system) is
 * found here; a folder the cell may write (--write-skip) is neither tried nor
 * entered. Returns 1 at the first write, its path below the mount point the proof. */
static int walk_below(struct walk *w, dev_t dev, char *path, size_t len, size_t base)
{
    DIR *d = opendir(len ? path : "/");
    if (d == NULL)
        return 0;
    list_seen(len ? path : "/");
    struct dirent *e;
    int found = 0, removal = 0; /* each removal tried once per folder: its first entry of each kind */
    while (!found && (e = readdir(d)) != NULL) {
        struct stat st;
        size_t n = strlen(e->d_name);
        if ((e->d_type != DT_DIR && e->d_type != DT_REG && e->d_type != DT_UNKNOWN &&
             (removal & 2)) ||
            !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || len + 1 + n >= PATH_MAX)
            continue; /* of other kinds, only the first (rmdir's) is looked at */
        path[len] = '/';
        memcpy(path + len + 1, e->d_name, n + 1);
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || st.st_dev != dev ||
            in_lines(o.write_skip, path) || mount_point(path))
            continue;
        int kind = S_ISDIR(st.st_mode) ? 1 : 2;
        if (!(removal & kind)) {
            removal |= kind;
            struct tried t = { "", 0 };
            if (remove_way(dirfd(d), e->d_name, &st, &t)) { /* the proof: this folder */
                *w->t = t;
                snprintf(w->proof, w->cap, "%.*s", len > base ? (int)(len - base - 1) : 0,
                         path + base + (len > base));
                found = 1;
                break;
            }
        }
        if (S_ISREG(st.st_mode)) {
            if ((found = walk_file(w, dirfd(d), e->d_name, &st, path, base)) || g_walk_cut)
                break;
            continue;
        }
        if (!S_ISDIR(st.st_mode) || skipped(&st))
            continue;
        if (!walk_step())
            break;
        struct tried t = { "", 0 };
        if (write_dir(path, &t)) {
            if (!untried(&t)) {
                *w->t = t;
                snprintf(w->proof, w->cap, "%s", path + base + 1);
                found = 1;
                break;
            }
            if (!w->kept.how[0]) {
                w->kept = t;
                snprintf(w->proof, w->cap, "%s", path + base + 1);
            }
        }
        found = walk_below(w, dev, path, len + 1 + n, base);
        if (g_walk_cut)
            break;
    }
    closedir(d);
    path[len] = 0;
    return found;
}

int walk_listed(struct walk *w, dev_t dev, const char *start, size_t base)
{
    char path[PATH_MAX];
    size_t len = strlen(start);
    if (len >= sizeof path)
        return 0;
    memcpy(path, start, len + 1);
    return walk_below(w, dev, path, len, base);
}

/* Path `path` is `top` or below it. */
int path_within(const char *path, const char *top)
{
    size_t n = strlen(top);
    if (n == 1)
        return 1; /* "/" */
    return !strncmp(path, top, n) && (path[n] == '/' || path[n] == 0);
}

/* Where the walk started (at most WALK_ROOTS): a folder below one was walked. */
#define WALK_ROOTS 64
struct walk_roots { struct walk *w; dev_t dev; size_t base; int n; char *at[WALK_ROOTS]; };

static int walk_from(struct walk_roots *r, const char *start)
{
    char path[PATH_MAX];
    size_t len = strcmp(start, "/") ? strlen(start) : 0;
    DIR *d = opendir(start);
    if (d == NULL || len >= sizeof path || r->n == WALK_ROOTS) {
        if (d != NULL)
            closedir(d);
        return 0; /* unlistable: the folders below it the host listed are walked */
    }
    closedir(d);
    r->at[r->n++] = strdup(start);
    memcpy(path, start, len + 1);
    return walk_below(r->w, r->dev, path, len, r->base);
}

/* A host folder listed below a mount point the workload cannot list (Landlock's
 * "/", reading only /usr and /etc): walked from, unless below one walked. */
static int walk_target(const char *path, const char *rest, const struct stat *st, void *ctx)
{
    struct walk_roots *r = ctx;
    (void)rest;
    if (!S_ISDIR(st->st_mode) || st->st_dev != r->dev || in_lines(o.write_skip, path) ||
        skipped(st))
        return 0;
    for (int i = 0; i < r->n; i++)
        if (r->at[i] && path_within(path, r->at[i]))
            return 0;
    return walk_from(r, path);
}

/* The walk of one mount from its mount point, or, where that cannot be listed, from
 * each of the host's listed folders below it; not of a read-only mount (nothing
 * below it can be written through it), nor once the walk's bounds are spent. */
static int walk_mount(struct walk *w)
{
    struct statvfs vfs;
    struct stat top;
    /* Without --write-targets the sandbox has a kernel of its own (gVisor, a VM):
     * there a write below a host folder's mount point is judged by its mount point
     * alone, and a walk of a host tree through its gofer would only cost time. */
    if (g_walk_cut || !o.write_targets || statvfs(w->m->mp, &vfs) != 0 || (vfs.f_flag & ST_RDONLY) ||
        stat(w->m->mp, &top) != 0 || !S_ISDIR(top.st_mode))
        return 0;
    struct walk_roots r = { w, top.st_dev, strcmp(w->m->mp, "/") ? strlen(w->m->mp) : 0, 0, { 0 } };
    int found = walk_from(&r, w->m->mp);
    if (!found && r.n == 0)
        found = each_target(w->m, o.write_targets, walk_target, &r);
    if (!found && !g_walk_cut)
        found = list_pass(w, top.st_dev);
    for (int i = 0; i < r.n; i++)
        free(r.at[i]);
    return found;
}

/* The mount point itself, then the host's listed folders below it, then its files:
 * the first write is the mount's proof ("" for the mount point), or else the first
 * untried one, or 0. A mount point the cell may write (--write-skip: its write
 * grants as the sandbox sees them) is not tried, nor one mounted over. */
static int write_mount(const struct mnt *m, struct tried *t, char *proof, size_t cap)
{
    struct stat st;
    proof[0] = 0;
    if (in_lines(o.write_skip, m->mp) || !on_mount(m->mp, m))
        return 0; /* granted, or mounted over: a write there lands on another mount */
    g_server_decided = server_decided(m->type);
    if (stat(m->mp, &st) == 0 &&
        (S_ISDIR(st.st_mode) ? write_dir(m->mp, t) : write_file(m->mp, m->type, &st, 1, t)) &&
        !untried(t))
        return 1;
    struct tried at_point = *t;
    struct walk w = { m, t, { "", 0 }, proof, cap, 1 };
    if (each_target(m, o.decoys, decoy_target, &w) ||
        each_target(m, o.write_targets, write_target, &w) || walk_mount(&w))
        return 1;
    w.dirs = 0;
    if (each_target(m, o.write_targets, write_target, &w))
        return 1;
    if (w.kept.how[0]) { /* an untried target */
        *t = w.kept;
        return 1;
    }
    proof[0] = 0;
    *t = at_point; /* an untried mount point, or nothing */
    return t->how[0] != 0;
}

/* Each mount's first write, as [dev, type, mount point, root, path below it, how]. */
void chk_fs_write_reach(void)
{
    if (read_mounts() != 0)
        fail(errno, "read /proc/self/mountinfo");
    ev_kernel();
    g_walk_until = now_ms() + WALK_SHARE * SLOW_ROW_FACTOR * g_check_timeout_ms;
    g_walk_cpu_until = cpu_ms() + WALK_CPU * g_check_timeout_ms;
    skip_ids();
    read_leases();
    fsize_zero(1);
    if (o.walk_folders)
        g_walk_max = atol(o.walk_folders);
    int links = links_beyond(g_check_timeout_ms); /* within the walk's own bounds */
    bput(&g_ev, ",\"writes\":[");
    int found = 0, cut = 0;
    for (int i = 0; i < g_nmnt; i++) {
        const struct mnt *m = &g_mnt[i];
        struct tried t = { "", 0 };
        char proof[1024];
        if (listed(PSEUDO, m->type) || !write_mount(m, &t, proof, sizeof proof))
            continue;
        if (g_ev.n > sizeof g_ev.s - 10000) { /* bounded: the first writes are proof */
            cut++;
            continue;
        }
        bput(&g_ev, "%s[\"%u:%u\",", found++ ? "," : "", m->maj, m->min);
        bstr(&g_ev, m->type);
        bput(&g_ev, ",");
        bstr(&g_ev, m->mp);
        bput(&g_ev, ",");
        bstr(&g_ev, m->root);
        bput(&g_ev, ",");
        bstr(&g_ev, proof);
        bput(&g_ev, ",");
        bstr(&g_ev, t.how);
        bput(&g_ev, "]");
    }
    bput(&g_ev, "]");
    fsize_zero(0);
    ev_int("writes_cut", cut);
    ev_int("walked", g_walked);
    ev_int("lease_skips", g_lease_skips);
    ev_int("walk_cut", g_walk_cut);
    if (found + cut == 0 && links == 0)
        outcome(OC_BLOCKED, 0, "no write at any of %d mounts or the host's files below them",
                g_nmnt);
    if (links < 0) /* the harness judges the writes, and makes this an error */
        outcome(OC_SUCCEEDED, 0, "wrote at %d of %d mounts; the links of the write grants' files"
                " not all counted", found + cut, g_nmnt);
    if (links)
        outcome(OC_SUCCEEDED, 0, "wrote at %d of %d mounts; %d files of the write grants have"
                " links beyond those found in them", found + cut, g_nmnt, links);
    outcome(OC_SUCCEEDED, 0, "wrote at %d of %d mounts", found + cut, g_nmnt);
}
