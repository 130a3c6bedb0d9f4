/* Scenario "filesystem": write reach's list pass (`fs-write-reach`). The host lists
 * every folder of its own filesystems (--write-dirs FILE, "MAJ:MIN FSPATH" lines, in
 * the helpers' folder: `hostside/hostfs.py`). Each one on a writable mount whose
 * parent the walk did not list is tried as the walk tries a folder: a write grant
 * below folders the workload cannot list, at any depth (Landlock reading only /usr
 * and /etc, writing /var/lib/apt/lists/auxfiles), is found here. */

#include "writereach.h"

#define SEEN_SLOTS (1u << 20) /* > the walk's bound of folders */
#define DIRS_MAX (64u << 20)
static uint64_t *g_seen; /* FNV-1a hashes of the folders the walk listed; 0: empty */
static char *g_dirs;     /* the list, NUL-terminated */
static int g_dirs_state; /* 0 not read, 1 read, -1 unreadable */

static uint64_t fnv(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return h ? h : 1;
}

/* Where `h` is in the table, or the empty slot it would take; NULL when full. */
static uint64_t *slot(uint64_t h)
{
    for (uint32_t i = (uint32_t)h & (SEEN_SLOTS - 1), k = 0; k < SEEN_SLOTS;
         k++, i = (i + 1) & (SEEN_SLOTS - 1))
        if (g_seen[i] == h || g_seen[i] == 0)
            return &g_seen[i];
    return NULL;
}

void list_seen(const char *path)
{
    if (!o.write_dirs || (!g_seen && !(g_seen = calloc(SEEN_SLOTS, sizeof *g_seen))))
        return;
    uint64_t h = fnv(path, strlen(path)), *at = slot(h);
    if (at != NULL)
        *at = h;
}

static int seen(const char *path, size_t n)
{
    if (g_seen == NULL)
        return 0;
    uint64_t h = fnv(path, n), *at = slot(h);
    return at != NULL && *at == h;
}

/* The list, read once; 0 when it cannot be. */
static int load(void)
{
    if (g_dirs_state == 0) {
        g_dirs_state = -1;
        int fd = open(o.write_dirs, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
            (size_t)st.st_size < DIRS_MAX && (g_dirs = malloc((size_t)st.st_size + 1))) {
            size_t got = 0;
            for (ssize_t n; got < (size_t)st.st_size &&
                            (n = read(fd, g_dirs + got, (size_t)st.st_size - got)) > 0;)
                got += (size_t)n;
            g_dirs[got] = 0;
            g_dirs_state = got == (size_t)st.st_size ? 1 : -1;
        }
        if (fd >= 0)
            close(fd);
    }
    return g_dirs_state == 1;
}

/* A host device: one the host listed targets on (--write-targets). */
static int host_device(const char *dev, size_t n)
{
    for (const char *p = o.write_targets ? o.write_targets : ""; *p;) {
        const char *end = strchr(p, '\n');
        if (!strncmp(p, dev, n))
            return 1;
        p = end ? end + 1 : p + strlen(p);
    }
    return 0;
}

/* `path` lies within a --write-skip line (the cell may write there), or on another
 * mount below m's (its own row). */
static int elsewhere(const char *path, const struct mnt *m)
{
    for (const char *p = o.write_skip ? o.write_skip : ""; *p;) {
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char line[4096];
        if (len && len < sizeof line) {
            memcpy(line, p, len);
            line[len] = 0; /* a grant on this mount: not "/" of a root of its own's */
            if (path_within(line, m->mp) && path_within(path, line))
                return 1;
        }
        p += len + (end != NULL);
    }
    size_t mlen = strlen(m->mp);
    for (int i = 0; i < g_nmnt; i++)
        if (strlen(g_mnt[i].mp) > mlen && path_within(g_mnt[i].mp, m->mp) &&
            path_within(path, g_mnt[i].mp))
            return 1;
    return 0;
}

/* One listed folder, at `path` in this view (`base`: the mount point's length): a
 * write in it; else whether its parent's entries may be removed; then, where it
 * lists, the walk below it (a grant of one right alone on a host folder below
 * unlistable ones: Landlock's TRUNCATE on /var/log). */
static int list_try(struct walk *w, const char *path, size_t base, dev_t dev)
{
    struct tried t = { "", 0 };
    struct stat st;
    if (write_dir(path, &t) && !untried(&t)) {
        *w->t = t;
        snprintf(w->proof, w->cap, "%s", path + base + 1);
        return 1;
    }
    if (untried(&t) && !w->kept.how[0]) {
        w->kept = t;
        snprintf(w->proof, w->cap, "%s", path + base + 1);
    }
    t = (struct tried){ "", 0 };
    if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_dev != dev)
        return 0;
    if (remove_way_at(path, &st, &t)) { /* the proof: its parent */
        size_t parent = (size_t)(strrchr(path, '/') - path);
        *w->t = t;
        snprintf(w->proof, w->cap, "%.*s", parent > base ? (int)(parent - base - 1) : 0,
                 path + base + (parent > base));
        return 1;
    }
    return !seen(path, strlen(path)) && walk_listed(w, dev, path, base); /* walked once */
}

int list_pass(struct walk *w, dev_t dev)
{
    const struct mnt *m = w->m;
    char devs[32];
    int dl = snprintf(devs, sizeof devs, "%u:%u ", m->maj, m->min);
    if (!o.write_dirs || !host_device(devs, (size_t)dl) ||
        (unsigned)major(dev) != m->maj || (unsigned)minor(dev) != m->min)
        return 0;
    if (!load()) {
        g_walk_cut++; /* the host's folders below what the workload cannot list: untried */
        return 0;
    }
    size_t rootlen = strcmp(m->root, "/") ? strlen(m->root) : 0;
    size_t base = strcmp(m->mp, "/") ? strlen(m->mp) : 0;
    for (char *p = g_dirs; *p;) {
        char *end = strchr(p, '\n'), *line = p;
        size_t len = end ? (size_t)(end - p) : strlen(p);
        p += len + (end != NULL);
        if (!strncmp(line, "# cut", 5)) {
            g_walk_cut++; /* the host had more folders than it listed */
            continue;
        }
        const char *fspath = line + dl, *rest = fspath + rootlen;
        if (len <= (size_t)dl + rootlen || strncmp(line, devs, (size_t)dl) ||
            strncmp(fspath, m->root, rootlen) || *rest != '/')
            continue;
        char path[4096];
        size_t rl = len - (size_t)dl - rootlen;
        if (base + rl >= sizeof path)
            continue;
        memcpy(path, m->mp, base);
        memcpy(path + base, rest, rl);
        path[base + rl] = 0;
        size_t parent = (size_t)(strrchr(path, '/') - path);
        if (seen(parent ? path : "/", parent ? parent : 1) || elsewhere(path, m))
            continue; /* tried by the walk, granted, or another mount's */
        if (!walk_step())
            break;
        if (list_try(w, path, base, dev))
            return 1;
    }
    return 0;
}
