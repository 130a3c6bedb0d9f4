/* A process born into a host cgroup, scenario "privilege" (priv-root-kernel-state,
 * kstate.c's walk): clone3(CLONE_INTO_CGROUP) into a folder of the unified hierarchy
 * outside the workload's own cgroup, through the i386 entry too where x86_64's is
 * refused as a filter refuses. It needs an O_PATH handle on the folder and the write
 * permission of cgroup.procs' mode, neither of which a read-only mount or Landlock
 * takes away: another way to the write a cgroup.procs stands for. */

#include "probe.h"

#include <sys/mman.h>

struct cgmoves g_cgmoves;

/* Whether `path` is `prefix` or below it. */
static int prefixed(const char *path, const char *prefix)
{
    size_t n = strlen(prefix);
    return !strncmp(path, prefix, n) && (path[n] == 0 || path[n] == '/');
}

/* The unified hierarchy being walked (mount `g_cg2`), where the workload stands by
 * /proc/self/cgroup's "0::" path (relative to its cgroup namespace's root, as a
 * mount's root is: "/.." where the mount shows more than the namespace's root), and
 * its folder in the mount where that can be told ("" where not). */
static const struct mnt *g_cg2;
static char g_cg2_path[4096], g_cg2_own[4096];

/* The "0::" path of /proc/PID/cgroup (`pid` "self" or a number) in out[]: 0, or -1. */
static int unified_path(const char *pid, char *out, size_t n)
{
    char file[64], buf[8192];
    snprintf(file, sizeof file, "/proc/%s/cgroup", pid);
    ssize_t got = read_file(file, buf, sizeof buf - 1);
    if (got <= 0)
        return -1;
    buf[got] = '\0';
    char *path = strstr(buf, "0::");
    if (path == NULL || (path != buf && path[-1] != '\n'))
        return -1;
    path += 3;
    path[strcspn(path, "\n")] = '\0';
    snprintf(out, n, "%s", path);
    return 0;
}

/* Whether cgroup `path` is `own` or below it, both as /proc/PID/cgroup gives them. */
static int own_or_below(const char *path, const char *own)
{
    if (strcmp(own, "/"))
        return prefixed(path, own);
    return path[0] == '/' && strcmp(path, "/..") && strncmp(path, "/../", 4);
}

/* A walk of mount `m` begins: where it is a cgroup2 mount, its folders are tried. */
void cgmove_begin(const struct mnt *m)
{
    g_cg2 = NULL;
    if (strcmp(m->type, "cgroup2") || unified_path("self", g_cg2_path, sizeof g_cg2_path) != 0)
        return; /* it cannot be told where the workload stands: nothing tried */
    const char *root = strcmp(m->root, "/") ? m->root : "";
    g_cg2 = m;
    g_cg2_own[0] = '\0';
    if (!*root || prefixed(g_cg2_path, root))
        snprintf(g_cg2_own, sizeof g_cg2_own, "%s%s", m->mp,
                 strcmp(g_cg2_path + strlen(root), "/") ? g_cg2_path + strlen(root) : "");
}

struct born_args { uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls,
                   set_tid, set_tid_size, cgroup; };

/* Where a child born by clone3 `pid` landed (its "0::" path, in landed[]), then it is
 * killed (a frozen cgroup's too) and waited: 0 where it could be told. */
static int landed_then_killed(long pid, char *landed, size_t n)
{
    char num[24];
    snprintf(num, sizeof num, "%ld", pid);
    int read = unified_path(num, landed, n);
    kill((pid_t)pid, SIGKILL);
    waitpid((pid_t)pid, NULL, 0);
    return read;
}

#if defined(__x86_64__)
/* The same clone3 through the i386 entry (int $0x80, its own number, 435), which a
 * filter that refuses x86_64's clone3 by number alone leaves open: in a child (a
 * filter may kill it), the grandchild it bears judged and killed there, where it
 * landed written back. 0 where one was born and its cgroup told. */
static int born_i386(int fd, char *landed, size_t n)
{
    static int here = -1;
    if (here < 0)
        here = i386_here();
    int p[2];
    if (!here || pipe2(p, O_CLOEXEC) != 0)
        return -1;
    pid_t mover = fork();
    if (mover == 0) {
        close(p[0]);
        struct born_args *a = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
        if (a == MAP_FAILED)
            _exit(1);
        memset(a, 0, sizeof *a);
        a->flags = 0x200000000ULL; /* CLONE_INTO_CGROUP */
        a->exit_signal = SIGCHLD;
        a->cgroup = (uint64_t)fd;
        long v[6] = { (long)(uintptr_t)a, (long)sizeof *a };
        long pid = int80(I386_NR_clone3, v);
        if (pid == 0) {
            for (;;)
                pause();
        }
        if (pid < 0 || landed_then_killed(pid, landed, n) != 0)
            _exit(1);
        _exit(write(p[1], landed, strlen(landed) + 1) > 0 ? 0 : 1);
    }
    close(p[1]);
    ssize_t got = mover > 0 ? read(p[0], landed, n - 1) : -1;
    close(p[0]);
    if (mover > 0)
        waitpid(mover, NULL, 0);
    if (got <= 0)
        return -1;
    landed[got] = '\0';
    return 0;
}
#else
static int born_i386(int fd, char *landed, size_t n)
{
    (void)fd, (void)landed, (void)n;
    return -1; /* aarch64: no entry the probe can take (i386.c) */
}
#endif

/* Whether cgroup.procs' mode (owner, group, bits: the kernel's DAC check, asked first)
 * lets this process write it; a folder it refuses spends no move. Unknown: lets. */
static int procs_mode_lets(const char *dir)
{
    char path[4200];
    struct stat st;
    struct cap_data c[2];
    gid_t groups[256];
    snprintf(path, sizeof path, "%s/cgroup.procs", dir);
    if (stat(path, &st) != 0 || caps_get(c) != 0 || (c[0].effective & (1u << 1))) /* CAP_DAC_OVERRIDE */
        return 1;
    if (st.st_uid == geteuid())
        return (st.st_mode & S_IWUSR) != 0;
    int n = getgroups(256, groups), in = st.st_gid == getegid();
    for (int i = 0; i < n && !in; i++)
        in = groups[i] == st.st_gid;
    return in ? (st.st_mode & S_IWGRP) != 0 : (st.st_mode & S_IWOTH) != 0;
}

/* A process born into folder `dir` of the unified hierarchy outside the workload's
 * own cgroup: clone3(CLONE_INTO_CGROUP) needs only a handle on the folder (O_PATH,
 * which a read-only mount and Landlock let through) and the write permission of
 * cgroup.procs' mode, which a mount's read-only flag does not enter: another way to
 * the write a cgroup.procs stands for. Where x86_64's clone3 is refused as a filter
 * refuses (EPERM, ENOSYS), the i386 entry's. Where the child landed is the kernel's word (its /proc/PID/cgroup, against
 * the workload's: a move within its own is no reach). The child does nothing and is
 * killed (a frozen cgroup's too) before it is waited. */
void cgmove_try(const char *dir)
{
    if (g_cg2 == NULL || g_cgmoves.moved || (*g_cg2_own && prefixed(dir, g_cg2_own)))
        return;
    if (!procs_mode_lets(dir) || g_cgmoves.moves >= CGMOVE_MAX) { /* over the cap: never tried, no proof */
        *(procs_mode_lets(dir) ? &g_cgmoves.over : &g_cgmoves.refused) += 1;
        return;
    }
    int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return;
    g_cgmoves.moves++;
    struct born_args args;
    memset(&args, 0, sizeof args);
    args.flags = 0x200000000ULL; /* CLONE_INTO_CGROUP */
    args.exit_signal = SIGCHLD;
    args.cgroup = (uint64_t)fd;
    long pid = syscall(SYS_clone3, &args, sizeof args);
    if (pid == 0) {
        for (;;)
            pause();
    }
    char landed[4096];
    int i386 = pid < 0;
    if (i386 && errno != EPERM && errno != ENOSYS) { /* the cgroup's answer, not a filter's */
        close(fd);
        return;
    }
    int read = i386 ? born_i386(fd, landed, sizeof landed) : landed_then_killed(pid, landed, sizeof landed);
    close(fd);
    if (read != 0 || own_or_below(landed, g_cg2_path))
        return;
    g_cgmoves.moved = 1 + i386;
    snprintf(g_cgmoves.where, sizeof g_cgmoves.where, "%s", dir);
}

/* The walk of the unified hierarchy's mount is over: no move is tried elsewhere. */
void cgmove_end(void)
{
    g_cg2 = NULL;
}
