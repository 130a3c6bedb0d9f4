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
