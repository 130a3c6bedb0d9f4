/* Scenario "filesystem": write reach's ways that make nothing (`fs-write-reach`):
 * removal and truncation proved without changing anything, the leases that keep a
 * file from truncation, the file-size limit that makes truncation safe, and harness's
 * own decoys, really written and removed. writereach.c's walk and writelist.c's list
 * pass call them. */

#include "writereach.h"
#include <limits.h>
#include <sys/resource.h>

/* Filesystems whose server decides each change after the kernel's own checks (FUSE
 * without default_permissions allows all of them; an NFS export may be read-only):
 * there an answer the kernel gives before asking the server (EISDIR, ENOTDIR, EFBIG)
 * proves nothing, and the removal and truncation ways are not tried. */
static const char *const SERVER_DECIDED[] = {
    "9p", "virtiofs", "nfs", "nfs4", "cifs", "smb3", "ceph", "afs", "lustre", NULL,
};
int g_server_decided; /* the mount being tried is one (write_mount sets it) */

int server_decided(const char *type)
{
    if (!strncmp(type, "fuse", 4))
        return 1;
    for (int i = 0; SERVER_DECIDED[i]; i++)
        if (!strcmp(SERVER_DECIDED[i], type))
            return 1;
    return 0;
}

/* Removal, proved without removing anything. unlink(2) of a folder is refused as a
 * folder (EISDIR) only after every check of whether files may be removed from its
 * parent (Landlock's REMOVE_FILE, DAC's write permission, a read-only mount, an
 * append-only folder); rmdir(2) of anything else, as no folder (ENOTDIR), only after
 * those of whether folders may be (REMOVE_DIR). A grant of removal alone (an agent
 * let clear /var/lib/apt/lists) makes nothing, and is found here. Entry `name` of the
 * open folder `dir` is tried only as what `st` said it was, looked at again just
 * before: an entry the host swaps for another kind in that instant is the one window. */
int remove_way(int dir, const char *name, const struct stat *st, struct tried *t)
{
    struct stat now;
    if (g_server_decided || fstatat(dir, name, &now, AT_SYMLINK_NOFOLLOW) != 0 || now.st_ino != st->st_ino ||
        now.st_dev != st->st_dev || (now.st_mode & S_IFMT) != (st->st_mode & S_IFMT))
        return 0;
    if (S_ISDIR(now.st_mode) && unlinkat(dir, name, 0) != 0 && errno == EISDIR) {
        t->how = "its files may be removed (unlink of a folder in it refused only as a folder, EISDIR)";
        return 1;
    }
    if (!S_ISDIR(now.st_mode) && unlinkat(dir, name, AT_REMOVEDIR) != 0 && errno == ENOTDIR) {
        t->how = "its folders may be removed (rmdir of a file in it refused only as no folder, ENOTDIR)";
        return 1;
    }
    return 0;
}

/* remove_way for a path: its parent opened first, nothing followed past it. */
int remove_way_at(const char *path, const struct stat *st, struct tried *t)
{
    const char *slash = strrchr(path, '/');
    char parent[PATH_MAX];
    if (slash == NULL || !slash[1] || (size_t)(slash - path) >= sizeof parent)
        return 0;
    snprintf(parent, sizeof parent, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    int dir = open(parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0)
        return 0;
    int found = remove_way(dir, slash + 1, st, t);
    close(dir);
    return found;
}

/* truncate(2) to the largest length, past the file-size limit the check set at its
 * start (RLIMIT_FSIZE 0, SIGXFSZ ignored): the kernel refuses it with EFBIG only
 * after every check of whether the file may be truncated (DAC's write permission,
 * Landlock's TRUNCATE, an append-only or immutable file), and before the filesystem
 * changes anything (inode_newsize_ok, first in each filesystem's setattr). Landlock's
 * TRUNCATE alone on a host log is found here. Never without that limit. */
static int g_fsize_zero;

/* Files under a lease (Samba's oplocks, nfsd's delegations): truncate(2) breaks a
 * lease before Landlock's check, and waits up to lease-break-time (45 s) for its
 * holder, so such a file is never truncated. They are the host's (--leased
 * "MAJ:MIN:INO" lines, its /proc/locks) and those the sandbox's own /proc/locks
 * shows. */
#define LEASED_MAX 256
static struct { unsigned maj, min; unsigned long ino; } g_leased[LEASED_MAX];
static int g_nleased;
int g_lease_skips;

static void lease_add(unsigned maj, unsigned min, unsigned long ino)
{
    if (g_nleased < LEASED_MAX)
        g_leased[g_nleased].maj = maj, g_leased[g_nleased].min = min,
        g_leased[g_nleased++].ino = ino;
}

void read_leases(void)
{
    g_nleased = g_lease_skips = 0;
    for (const char *p = o.leased ? o.leased : ""; *p;) {
        unsigned maj, min;
        unsigned long ino;
        if (sscanf(p, "%u:%u:%lu", &maj, &min, &ino) == 3)
            lease_add(maj, min, ino);
        const char *end = strchr(p, '\n');
        p = end ? end + 1 : p + strlen(p);
    }
    FILE *f = fopen("/proc/locks", "re");
    char line[256], type[16];
    unsigned maj, min;
    unsigned long ino;
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        /* "1: LEASE  ACTIVE    READ 1234 fd:00:5678 0 EOF" (device in hex) */
        if (sscanf(line, "%*[^:]: %15s %*s %*s %*s %x:%x:%lu", type, &maj, &min, &ino) == 4 &&
            (!strcmp(type, "LEASE") || !strcmp(type, "DELEG")))
            lease_add(maj, min, ino);
    if (f != NULL)
        fclose(f);
}

static int leased(const struct stat *st)
{
    for (int i = 0; i < g_nleased; i++)
        if (g_leased[i].ino == st->st_ino && g_leased[i].maj == major(st->st_dev) &&
            g_leased[i].min == minor(st->st_dev))
            return 1;
    return 0;
}

int truncate_way(const char *path, const struct stat *st, struct tried *t)
{
    if (g_fsize_zero && leased(st)) {
        g_lease_skips++;
        return 0;
    }
    if (!g_fsize_zero || g_server_decided || truncate(path, LLONG_MAX) == 0 || errno != EFBIG)
        return 0;
    t->how = "a file may be truncated (truncate past the file-size limit refused only by it, EFBIG)";
    return 1;
}

static struct rlimit g_fsize;
static void (*g_xfsz)(int);
void fsize_zero(int on)
{
    if (on) {
        struct rlimit zero;
        g_xfsz = signal(SIGXFSZ, SIG_IGN);
        g_fsize_zero = getrlimit(RLIMIT_FSIZE, &g_fsize) == 0 && g_xfsz != SIG_ERR &&
                       (zero = (struct rlimit){ 0, g_fsize.rlim_max }, setrlimit(RLIMIT_FSIZE, &zero) == 0) &&
                       getrlimit(RLIMIT_FSIZE, &zero) == 0 && zero.rlim_cur == 0;
        return;
    }
    if (g_fsize_zero)
        setrlimit(RLIMIT_FSIZE, &g_fsize);
    if (g_xfsz != SIG_ERR)
        signal(SIGXFSZ, g_xfsz);
    g_fsize_zero = 0;
}

/* Harness's decoys (--decoys: "MAJ:MIN FSPATH" lines, as --write-targets): a file and
 * a folder the host made, for this cell's runtime, in each folder its launcher names
 * beyond its policy (a Landlock rule on /etc/cron.d). They are harness's own, so they
 * are really written, truncated (through the descriptor of the very file: a symlink or
 * a hard link put in its place is left alone) and removed: a grant of removal or truncation alone
 * on a folder where no folder or other file shows it (only files in it; only
 * executables, never truncated; not listable) is found here. The host makes them
 * again after the cell. */
#define DECOY ".harness-decoy-"

/* The decoy file cut by every way (writes.c's cut_file: truncate(2), an open with
 * O_TRUNC even for reading alone, the i386 entry's where a filter refused x86_64's):
 * a grant of truncation alone behind a filter of truncate and ftruncate still lets an
 * open for reading with O_TRUNC empty the host's files there. NULL where none did. */
static const char *decoy_cut(const char *self)
{
    static char how[160];
    writes_reset(); /* fs-write-reach keeps no other tally of calls */
    cut_file(self);
    if (!tried_any())
        return NULL;
    snprintf(how, sizeof how, "truncated harness's decoy file (%s)", tried_calls());
    writes_reset();
    return how;
}

int decoy_target(const char *path, const char *rest, const struct stat *st, void *ctx)
{
    struct walk *w = ctx;
    const char *name = strrchr(path, '/');
    if (name == NULL || strncmp(name + 1, DECOY, strlen(DECOY)))
        return 0;
    (void)st; /* each_target's stat follows a symlink: the entry itself is looked at */
    struct stat own;
    int fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return 0;
    /* Only the decoy itself: not a symlink or a hard link another sandbox put in its
     * place (then a truncate would reach the host file it leads to). */
    int ok = fstat(fd, &own) == 0 && (S_ISDIR(own.st_mode) || (S_ISREG(own.st_mode) && own.st_nlink == 1));
    const char *how = NULL;
    char self[64];
    snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
    if (ok && S_ISDIR(own.st_mode)) {
        if (rmdir(path) == 0)
            how = "removed harness's decoy folder";
    } else if (ok) {
        int wfd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
        struct stat got;
        if (wfd >= 0 && fstat(wfd, &got) == 0 && got.st_ino == own.st_ino && got.st_dev == own.st_dev)
            how = "opened harness's decoy file for writing";
        else if (access(self, F_OK) == 0) /* that very file */
            how = decoy_cut(self);
        if (how == NULL && unlink(path) == 0)
            how = "removed harness's decoy file";
        if (wfd >= 0)
            close(wfd);
    }
    close(fd);
    if (how == NULL)
        return 0;
    w->t->how = how;
    snprintf(w->proof, w->cap, "%s", rest);
    return 1;
}

