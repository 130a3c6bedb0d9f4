/* Scenario "filesystem": write reach's links beyond the grants (`fs-write-reach`). A
 * regular file in a write grant whose link count (st_nlink) exceeds the links to it
 * (same device and inode) found within the write grants the probe can walk has a name
 * elsewhere: writing it in place changes a file outside the grants (a launcher that
 * seeds the allowed folder with `cp -al` from a host template). Nothing is written:
 * the kernel's count is the proof, and a file is only opened for appending (as the
 * write reach opens one) to show the workload may write it.
 *
 * The files looked at: those of the allowed folder (--allowed-dir) and of the
 * policy's write grants the host names (--link-grants), less the probe's own names
 * (`*-TAG`: fs-hardlink-in's link is that check's). Their links are counted there and,
 * where one is missing, in the cell's other write grants (--write-skip), each folder
 * once by its identity, each on its own device. A walk cut by its bounds, a folder it
 * may enter but not list, a file changed during the walk, an executable file or one
 * on overlayfs (the access check's word only), are said (no proof): the harness makes
 * them errors, never blocked nor an escape. */

#include "writereach.h"
#include <limits.h>

#define LINK_ENTRIES 100000 /* folders and files looked at, in all grants */
#define LINK_FILES 4096     /* files of more than one link, in the looked-at grants */
#define LINK_SLOTS (1u << 18)
#define LINK_ROWS 16        /* files reported */
#define LINK_SHARE 1.0      /* times the check's time limit, wall time; half in CPU */

struct lfile { dev_t dev; ino_t ino; nlink_t nlink; long found; char *path; };
static struct lfile *g_lf;
static int g_nlf;
static struct { dev_t dev; ino_t ino; } *g_dirs; /* folders walked; ino 0: empty */
static long g_entries;
static double g_until, g_cpu_until;
static char g_cut[600]; /* why the links cannot all be told, or "" */

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6;
}

static void cut(const char *fmt, const char *path)
{
    if (!g_cut[0])
        snprintf(g_cut, sizeof g_cut, fmt, path);
}

static int step(void)
{
    if (++g_entries > LINK_ENTRIES ||
        (!(g_entries & 255) && (now_ms() > g_until || cpu_now() > g_cpu_until))) {
        cut("the walk of the write grants stopped at its bounds (%s)", "entries or time");
        return 0;
    }
    return 1;
}

/* A folder not walked before (by identity: a bind mount shows one twice), marked. */
static int first_visit(const struct stat *st)
{
    uint64_t h = ((uint64_t)st->st_dev * 1000003u) ^ (uint64_t)st->st_ino;
    for (uint32_t k = 0, i = (uint32_t)(h ^ (h >> 29)) & (LINK_SLOTS - 1); k < LINK_SLOTS;
         k++, i = (i + 1) & (LINK_SLOTS - 1)) {
        if (g_dirs[i].ino == 0) {
            g_dirs[i].dev = st->st_dev;
            g_dirs[i].ino = st->st_ino;
            return 1;
        }
        if (g_dirs[i].dev == st->st_dev && g_dirs[i].ino == st->st_ino)
            return 0;
    }
    return 0;
}

static struct lfile *known(const struct stat *st)
{
    for (int i = 0; i < g_nlf; i++)
        if (g_lf[i].ino == st->st_ino && g_lf[i].dev == st->st_dev)
            return &g_lf[i];
    return NULL;
}

/* The probe's own names (in_dir's `PREFIX-TAG`), left out: its attempts' own. */
static int own_name(const char *name)
{
    size_t n = strlen(name), t = o.tag ? strlen(o.tag) : 0;
    return t && n > t + 1 && name[n - t - 1] == '-' && !strcmp(name + n - t, o.tag);
}

/* Below `path` (`len` bytes of a PATH_MAX buffer), on device `dev` alone: each
 * regular file of more than one link counted; `add`: a file not seen before is
 * noted (the looked-at grants), else only those noted are counted. */
static void walk(char *path, size_t len, dev_t dev, int add)
{
    DIR *d = opendir(path);
    if (d == NULL) {
        /* One the workload may not enter holds nothing it can write by this way. */
        if (errno != ENOENT && faccessat(AT_FDCWD, path, X_OK, AT_EACCESS) == 0)
            cut("%s cannot be listed: the links below it are not counted", path);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL && !g_cut[0]) {
        size_t n = strlen(e->d_name);
        struct stat st;
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
            (e->d_type != DT_DIR && e->d_type != DT_REG && e->d_type != DT_UNKNOWN))
            continue;
        if (!step())
            break;
        if (len + 1 + n >= PATH_MAX) {
            cut("a name below %s is too long to follow", path);
            break;
        }
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || st.st_dev != dev)
            continue; /* gone, or another mount: its own grant or none */
        path[len] = '/';
        memcpy(path + len + 1, e->d_name, n + 1);
        if (S_ISDIR(st.st_mode)) {
            if (first_visit(&st))
                walk(path, len + 1 + n, dev, add);
        } else if (S_ISREG(st.st_mode) && st.st_nlink > 1) {
            struct lfile *f = known(&st);
            if (f != NULL)
                f->found++;
            else if (add && !(add == 2 && own_name(e->d_name))) {
                if (g_nlf == LINK_FILES) {
                    cut("more than %s files of more than one link", "4096");
                    break;
                }
                g_lf[g_nlf++] = (struct lfile){ st.st_dev, st.st_ino, st.st_nlink, 1, strdup(path) };
            }
        }
        path[len] = 0;
    }
    closedir(d);
    path[len] = 0;
}

/* Each grant of `lines` (newline-separated) walked from its top, unless walked. */
static void walk_grants(const char *lines, int add)
{
    for (const char *p = lines ? lines : ""; *p && !g_cut[0];) {
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char path[PATH_MAX];
        struct stat st;
        if (len && len < sizeof path) {
            memcpy(path, p, len);
            path[len] = 0;
            while (len > 1 && path[len - 1] == '/')
                path[--len] = 0;
            if (stat(path, &st) == 0 && S_ISDIR(st.st_mode) && first_visit(&st))
                walk(path, len == 1 ? 0 : len, st.st_dev, add);
        }
        p += len + (end != NULL);
    }
}

static const char *type_of(const char *path)
{
    const struct mnt *m = NULL;
    for (int i = 0; i < g_nmnt; i++)
        if (path_within(path, g_mnt[i].mp) && (!m || strlen(g_mnt[i].mp) >= strlen(m->mp)))
            m = &g_mnt[i];
    return m ? m->type : "";
}

/* One file of missing links: whether the workload may write it (an open for
 * appending, nothing written: never of an executable file, nor on overlayfs, where
 * the access check says so and it is not tried), as [dev, type, path, links, links
 * found, how] (all strings: protocol.py's tables); nothing where it may not be
 * written. */
static int report(const struct lfile *f, int rows)
{
    struct stat st;
    const char *type = type_of(f->path), *how = "opened a file for writing";
    if (lstat(f->path, &st) != 0 || st.st_dev != f->dev || st.st_ino != f->ino ||
        st.st_nlink != f->nlink) {
        cut("%s changed during the walk", f->path);
        return 0;
    }
    if ((st.st_mode & 0111) || !strcmp(type, "overlay")) {
        if (faccessat(AT_FDCWD, f->path, W_OK, AT_EACCESS) != 0)
            return 0;
        how = st.st_mode & 0111 ? UNTRIED "an executable file the access check lets be written"
                                : UNTRIED "a file on overlayfs the access check lets be written";
    } else {
        int fd = open(f->path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW);
        struct stat got;
        int same = fd >= 0 && fstat(fd, &got) == 0 && got.st_dev == f->dev && got.st_ino == f->ino;
        if (fd >= 0)
            close(fd);
        if (!same)
            return 0;
    }
    if (g_ev.n + 2 * strlen(f->path) + 400 > sizeof g_ev.s / 4) {
        cut("a file linked beyond the grants has too long a name to report: %.200s", f->path);
        return 0;
    }
    bput(&g_ev, "%s[\"%u:%u\",", rows ? "," : "", major(f->dev), minor(f->dev));
    bstr(&g_ev, type);
    bput(&g_ev, ",");
    bstr(&g_ev, f->path);
    bput(&g_ev, ",\"%lu\",\"%ld\",", (unsigned long)f->nlink, f->found);
    bstr(&g_ev, how);
    bput(&g_ev, "]");
    return 1;
}

/* The evidence's "links" rows and "links_cut" (why not all could be told, or ""):
 * the number of rows, -1 where cut. */
int links_beyond(double budget_ms)
{
    g_until = now_ms() + LINK_SHARE * budget_ms;
    g_cpu_until = cpu_now() + LINK_SHARE * budget_ms / 2;
    g_nlf = 0;
    g_entries = 0;
    g_cut[0] = 0;
    g_lf = calloc(LINK_FILES, sizeof *g_lf);
    g_dirs = calloc(LINK_SLOTS, sizeof *g_dirs);
    if (g_lf == NULL || g_dirs == NULL)
        cut("%s", "no memory for the walk of the write grants");
    /* The allowed folder first: the probe's own names are left out there only. */
    if (!g_cut[0] && o.allowed_dir) {
        char top[PATH_MAX];
        struct stat st;
        size_t len = strlen(o.allowed_dir);
        if (len < sizeof top && stat(o.allowed_dir, &st) == 0 && S_ISDIR(st.st_mode) &&
            first_visit(&st)) {
            memcpy(top, o.allowed_dir, len + 1);
            walk(top, len, st.st_dev, 2);
        }
    }
    if (!g_cut[0])
        walk_grants(o.link_grants, 1);
    int missing = 0;
    for (int i = 0; i < g_nlf; i++)
        missing += g_lf[i].found < (long)g_lf[i].nlink;
    if (missing && !g_cut[0])
        walk_grants(o.write_skip, 0); /* the other write grants: counted, not looked at */
    int rows = 0;
    bput(&g_ev, ",\"links\":[");
    /* Bounded (a quarter of the line: room for the writes after): the first rows are
     * proof, and any row keeps the check from `blocked`. */
    for (int i = 0; i < g_nlf && !g_cut[0] && rows < LINK_ROWS; i++)
        if (g_lf[i].found < (long)g_lf[i].nlink)
            rows += report(&g_lf[i], rows);
    bput(&g_ev, "]");
    ev_int("links_walked", g_entries);
    ev_str("links_cut", g_cut);
    for (int i = 0; i < g_nlf; i++)
        free(g_lf[i].path);
    free(g_lf);
    free(g_dirs);
    g_lf = NULL;
    g_dirs = NULL;
    return g_cut[0] ? -1 : rows;
}
