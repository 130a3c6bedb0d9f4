/* Scenario "filesystem": write reach (`fs-write-reach`). Every mount the sandbox
 * sees, and the host's listed files and folders below it (--write-targets: those
 * outside the cell's write grants), tried for a write that changes nothing: a file
 * made with O_TMPFILE (no name, gone at close: the folder is not touched) and a
 * regular file opened for writing (no byte written, not truncated). A host folder
 * the workload can write into but not list (mode 0733), or a file of a read-only
 * grant it could change, is found here; the harness judges which writes lie beyond
 * the grants. */

#include "probe.h"

/* Filesystems that hold no files of anyone's (and autofs, whose stat mounts). */
static const char *const PSEUDO[] = {
    "proc", "sysfs", "cgroup", "cgroup2", "devpts", "mqueue", "debugfs", "tracefs",
    "securityfs", "pstore", "bpf", "configfs", "fusectl", "hugetlbfs", "autofs",
    "binfmt_misc", "nsfs", "efivarfs", "selinuxfs", "rpc_pipefs", NULL,
};
/* A sandbox kernel's view of a host folder, where O_TMPFILE may be unsupported: a
 * named file is made and removed at once instead (its name carries the tag). */
static const char *const PASSTHROUGH[] = { "9p", "virtiofs", NULL };

static int listed(const char *const *names, const char *type)
{
    for (int i = 0; names[i]; i++)
        if (!strcmp(names[i], type))
            return 1;
    return 0;
}

struct tried { const char *how; int left; };

/* A file made in folder `path` without touching the folder: O_TMPFILE; on a
 * passthrough filesystem without it, a named file made and removed. */
static int write_dir(const char *path, const char *type, struct tried *t)
{
    int fd = open(path, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
    if (fd >= 0) {
        close(fd);
        t->how = "made a file (O_TMPFILE)";
        return 1;
    }
    if (!listed(PASSTHROUGH, type) || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
        return 0;
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

/* A regular file opened for writing, nothing written; for appending, which an
 * append-only file (chattr +a: a log) takes where a plain open for writing is
 * refused, and which changes nothing more. Never one with an execute bit: an open
 * for writing makes a concurrent exec of it fail (ETXTBSY), even when a Landlock or
 * DAC check refuses the open a moment later. */
static int write_file(const char *path, const struct stat *st, struct tried *t)
{
    if (!S_ISREG(st->st_mode) || (st->st_mode & 0111))
        return 0;
    int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW);
    if (fd < 0)
        return 0;
    struct stat got;
    int same = fstat(fd, &got) == 0 && S_ISREG(got.st_mode) && got.st_dev == st->st_dev &&
               got.st_ino == st->st_ino;
    close(fd);
    t->how = "opened a file for writing";
    return same;
}

struct walk { const struct mnt *m; struct tried *t; char *proof; size_t cap; int dirs; };

/* One listed target: folders on the first pass, files on the second. */
static int write_target(const char *path, const char *rest, const struct stat *st, void *ctx)
{
    struct walk *w = ctx;
    int ok = w->dirs ? S_ISDIR(st->st_mode) && write_dir(path, w->m->type, w->t)
                     : write_file(path, st, w->t);
    if (ok)
        snprintf(w->proof, w->cap, "%s", rest);
    return ok;
}

/* The mount point itself, then the host's listed folders below it, then its files:
 * the first write is the mount's proof ("" for the mount point), or 0. */
static int write_mount(const struct mnt *m, struct tried *t, char *proof, size_t cap)
{
    struct stat st;
    proof[0] = 0;
    if (stat(m->mp, &st) == 0 &&
        (S_ISDIR(st.st_mode) ? write_dir(m->mp, m->type, t) : write_file(m->mp, &st, t)))
        return 1;
    struct walk w = { m, t, proof, cap, 1 };
    if (each_target(m, o.write_targets, write_target, &w))
        return 1;
    w.dirs = 0;
    return each_target(m, o.write_targets, write_target, &w);
}

/* Each mount's first write, as [dev, type, mount point, root, path below it, how]. */
void chk_fs_write_reach(void)
{
    if (read_mounts() != 0)
        fail(errno, "read /proc/self/mountinfo");
    ev_kernel();
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
    ev_int("writes_cut", cut);
    if (found + cut == 0)
        outcome("blocked", 0, "no write at any of %d mounts or the host's files below them",
                g_nmnt);
    outcome("succeeded", 0, "wrote at %d of %d mounts", found + cut, g_nmnt);
}
