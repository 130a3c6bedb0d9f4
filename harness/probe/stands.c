/* Where the workload stands, scenario "filesystem": the working folder it started
 * in (opened first thing, before the probe moves) and a root of its own choosing
 * (a second chroot, where it holds CAP_SYS_CHROOT). From each, ".." climbs as far
 * as the kernel lets it, then every sentinel's host path: a working folder outside
 * the root, or a chroot that leaves the old root above the new one, reaches the
 * host's tree. Inside a correct sandbox both climbs stop at its own root. */

#include "probe.h"
#include <sys/mman.h>

static int g_cwd = -1;
static char g_cwd_name[4096];

/* Called in main right after fds_at_start (so it is not counted as handed in). */
void cwd_at_start(void)
{
    g_cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (!getcwd(g_cwd_name, sizeof g_cwd_name))
        snprintf(g_cwd_name, sizeof g_cwd_name, "(%s)", errname(errno));
}

/* A folder the workload stands in or can stand in (`label`: "cwd" for its working
 * folder, "/proc/1/root" for pid 1's root) and the folders ".." leads to from it, as
 * rows of held_files ("cwd", "cwd/..", ...), held to the grants like a folder held at
 * start, its metadata untouched: one on a host tree where no sentinel lies (a launcher
 * whose /tmp, /var/tmp and home are private mounts of its own) still lists and writes
 * the host's files. `fd` < 0: no rows (the table is still reported). */
void stand_rows(int fd, const char *label)
{
    struct stat st;
    int have_mounts = read_mounts() == 0;
    bput(&g_ev, "%s\"held_files\":[", g_ev.n ? "," : "");
    if (fd >= 0 && fstat(fd, &st) == 0) {
        held_row(label, fd, &st, "path", have_mounts);
        held_climb(label, fd, &st, have_mounts);
    }
    bput(&g_ev, "],\"held_changed\":[]");
}

/* The working folder: getcwd says "(unreachable)..." (or fails) when it lies outside
 * the root; the climb to each sentinel, and where it and the folders above it lead
 * (stand_rows), decide, wherever getcwd puts it. */
void chk_fs_cwd(void)
{
    need(&o.token);
    if (g_cwd < 0)
        outcome(OC_BLOCKED, 0, "the working folder it started in cannot be opened");
    ev_str("cwd", g_cwd_name);
    int tried = route_dir(g_cwd, "the working folder it started in");
    ev_int("routes_tried", tried);
    stand_rows(g_cwd, "cwd");
    outcome(OC_BLOCKED, 0, "%d routes from the working folder it started in (%s) reach no sentinel",
            tried, g_cwd_name);
}

/* chroot into a new folder of its own without entering it: the working folder is
 * then outside the root, and ".." from it is not stopped. Blocked when chroot is
 * refused, or when the climb (bounded by the sandbox's own root: pivot_root, a
 * sandbox kernel) reaches no sentinel. The folder is removed by a descriptor before the
 * climb (the root may be an unlinked folder; an escape ends the check). */
static void chroot_call(void *arg)
{
    if (chroot(arg) != 0)
        _exit(1);
}

/* chroot(path) through the i386 entry (int $0x80, its number 61), which a filter of
 * x86_64's chroot (161) that checks no architecture lets through: asked in a child
 * first (a filter may kill on it), then here. 0 if this process's root is now path. */
static int chroot_i386(const char *path)
{
#if defined(__x86_64__)
    static char *low;
    if (!low && (low = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT,
                            -1, 0)) == MAP_FAILED)
        low = NULL;
    if (!low || strlen(path) >= 4096 || !i386_here())
        return -1;
    strcpy(low, path);
    long v[6] = { (long)(uintptr_t)low };
    pid_t kid = fork();
    if (kid == 0)
        _exit(int80(I386_NR_chroot, v) == 0 ? 0 : 1);
    int status = 0;
    while (kid > 0 && waitpid(kid, &status, 0) < 0 && errno == EINTR)
        ;
    if (kid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return int80(I386_NR_chroot, v) == 0 ? 0 : -1;
#else
    (void)path;
#endif
    return -1;
}

void chk_fs_chroot_escape(void)
{
    need(&o.token);
    char made[4096];
    snprintf(made, sizeof made, "/tmp/harness-chroot-XXXXXX");
    if (!mkdtemp(made)) {
        snprintf(made, sizeof made, "%s/chroot-%s", need(&o.allowed_dir), need(&o.tag));
        if (mkdir(made, 0700) != 0)
            outcome(OC_BLOCKED, errno, "no folder to chroot into (/tmp, the allowed folder)");
    }
    char *slash = strrchr(made, '/');
    *slash = 0;
    int parent = open(made[0] ? made : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    *slash = '/';
    /* a filter that kills on chroot (SIGSYS, asked in a child first) refuses it */
    int killed = killed_on(chroot_call, made), rc = killed ? -1 : chroot(made), e = killed ? EPERM : errno;
    const char *how = "a second chroot (CAP_SYS_CHROOT) left unentered";
    /* refused as a filter refuses: the same call through the i386 entry */
    if (rc != 0 && (e == EPERM || e == ENOSYS) && chroot_i386(made) == 0)
        rc = 0, how = "a second chroot (CAP_SYS_CHROOT) through the i386 entry (int $0x80, its number 61;"
                      " x86_64's refused), left unentered";
    if (parent >= 0) /* now, not after the climb: an escape ends the check there */
        unlinkat(parent, slash + 1, AT_REMOVEDIR);
    if (rc == 0)
        ev_int("routes_tried", route_dir(AT_FDCWD, how));
    if (rc != 0)
        outcome(OC_BLOCKED, e, "chroot(%s)", made);
    outcome(OC_BLOCKED, 0, "chroot(%s) succeeded%s; climbing out of it reached no sentinel", made,
            strstr(how, "i386") ? " through the i386 entry, x86_64's refused" : "");
}

/* ---- where other processes stand (fs-proc-fds) ------------------------------ */

/* Another visible process's root, working folder and every folder it holds, each
 * kept once (by device and inode) as an O_PATH handle: a helper the launcher left in
 * the sandbox's PID namespace at the host's / lists and writes the host's tree
 * through /proc/<pid>/root and /proc/<pid>/cwd where a launcher's private /tmp,
 * /var/tmp and home hide every sentinel. */
#define MAX_OTHER 128
static struct { int fd; char label[64]; struct stat st; } g_other[MAX_OTHER];
static int g_nother, g_other_over;

static int other_seen(const struct stat *st, int upto)
{
    for (int i = 0; i < upto; i++)
        if (g_other[i].st.st_dev == st->st_dev && g_other[i].st.st_ino == st->st_ino)
            return 1;
    return 0;
}

/* Opened as the process's owner (the caller's setfsuid): ptrace's read check. */
void other_folder(const char *path)
{
    struct stat st;
    int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return;
    int unseen = fstat(fd, &st) == 0 && !other_seen(&st, g_nother);
    if (!unseen || g_nother >= MAX_OTHER) {
        g_other_over += unseen;
        close(fd);
        return;
    }
    g_other[g_nother].fd = fd;
    g_other[g_nother].st = st;
    snprintf(g_other[g_nother++].label, sizeof g_other[0].label, "%s", path);
}

/* Whether the workload can open a folder to list it, or make an O_TMPFILE in it (no
 * name, gone at close): one it can do neither to gives nothing and is not reported,
 * so that a host's PID namespace, where many processes stand, fits the evidence. */
static int folder_gives(int fd)
{
    int d = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (d < 0)
        d = openat(fd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
    if (d < 0)
        return 0;
    close(d);
    return 1;
}

/* The folders other_folder kept, and the folders ".." leads to from each (one not
 * yet placed), those the workload lists or writes as rows of held_files ("/proc/<pid>/cwd", "/proc/<pid>/root/..",
 * ...), held to the grants like a folder held at start, their metadata untouched.
 * Returns the folders neither kept nor reported (too many): the check is then no
 * proof. */
int other_rows(void)
{
    static struct stat placed[256];
    int nplaced = 0, have_mounts = read_mounts() == 0;
    bput(&g_ev, "%s\"held_files\":[", g_ev.n ? "," : "");
    for (int i = 0; i < g_nother; i++) {
        if (folder_gives(g_other[i].fd))
            held_row(g_other[i].label, g_other[i].fd, &g_other[i].st, "path", have_mounts);
        char label[128];
        int k = snprintf(label, sizeof label, "%s", g_other[i].label);
        int cur = fcntl(g_other[i].fd, F_DUPFD_CLOEXEC, 0);
        struct stat was = g_other[i].st;
        for (int depth = 0; cur >= 0 && depth < 16 && k < (int)sizeof label - 4; depth++) {
            int up = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
            close(cur);
            cur = up;
            struct stat at;
            if (up < 0 || fstat(up, &at) != 0 || (at.st_dev == was.st_dev && at.st_ino == was.st_ino))
                break; /* the top: a root ".." does not leave */
            int dup = other_seen(&at, g_nother);
            for (int j = 0; j < nplaced && !dup; j++)
                dup = placed[j].st_dev == at.st_dev && placed[j].st_ino == at.st_ino;
            if (dup || nplaced >= (int)(sizeof placed / sizeof placed[0]))
                break; /* placed already, with what lies above it */
            placed[nplaced++] = at;
            k += snprintf(label + k, sizeof label - (size_t)k, "/..");
            if (folder_gives(up))
                held_row(label, up, &at, "path", have_mounts);
            was = at;
        }
        if (cur >= 0)
            close(cur);
        close(g_other[i].fd);
    }
    bput(&g_ev, "],\"held_changed\":[]");
    return g_other_over + held_rows_cut();
}
