/* Other processes named by their number alone, scenarios "filesystem" (fs-proc-fds)
 * and "privilege" (priv-proc-access):
 * where no /proc lists the processes of the PID namespace the check stands in (a
 * sandbox in the host's PID namespace given no /proc of its own, or another
 * namespace's), a host process is still reached by its pid: pidfd_open(2) asks for no
 * permission, and pidfd_getfd(2) takes its descriptors by ptrace's. Each pid the kernel
 * has is found by getpgid(2) (no permission either), then each of its descriptors is
 * taken and read for the token; where x86_64's pidfd_open or pidfd_getfd is refused as
 * a filter refuses, the same again through the i386 entry (both numbered 434 and 438
 * there too), which a deny-list checking seccomp_data.arch and letting that entry
 * through leaves open. priv-proc-access asks each such process by procs.c's ways
 * (touch_process, then the i386 entry's: i386_reach), its own processes left out. */

#include "probe.h"
#include <sys/ioctl.h>

#define PID_CEILING (4 * 1024 * 1024) /* PID_MAX_LIMIT: no pid_max is higher */
#define FDS_TRIED 1024                /* per process: the usual soft RLIMIT_NOFILE */
#define PIDS_KEPT 65536                /* refused pids kept for the i386 entry */

static char g_buf[4096];

/* Whether this process stands in the kernel's first PID namespace, told without /proc:
 * pid 2 there is kthreadd, a kernel thread, whose process group is 0; in any other
 * namespace pid 2 is a process of a group of 1 or more, or none. */
int init_pid_ns_by_number(void)
{
    return getpgid(2) == 0;
}

/* Whether the descriptor `fd` (closed here) is a small regular file holding the token. */
static int gives_token(int fd)
{
    struct stat st;
    ssize_t k = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= 4096
                    ? pread(fd, g_buf, sizeof g_buf, 0) : -1;
    close(fd);
    return k > 0 && memmem(g_buf, (size_t)k, o.token, strlen(o.token)) != NULL;
}

static int filter_refusal(int e)
{
    return e == EPERM || e == ENOSYS;
}

/* x86_64's calls on `pid`: 0 if a descriptor gave the token (its number in *fd); 1 if
 * one call was refused as a filter refuses (or ptrace's permission: EPERM both), so the
 * i386 entry is asked; -1 if not (gone, or no such descriptor). */
static int native_take(int pid, int *fd, int *e)
{
    int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pfd < 0)
        return *e = errno, filter_refusal(errno) ? 1 : -1;
    int r = -1;
    for (int n = 0; n < FDS_TRIED; n++) {
        int got = (int)syscall(SYS_pidfd_getfd, pfd, n, 0);
        if (got >= 0 && gives_token(got)) {
            *fd = n, r = 0;
            break;
        }
        if (got < 0 && errno != EBADF) {
            *e = errno, r = filter_refusal(errno) ? 1 : -1;
            break;
        }
    }
    close(pfd);
    return r;
}

#if defined(__x86_64__)
/* In a child (a filter may kill it): for pids[from] on, pidfd_open through the i386
 * entry where x86_64's is refused, then pidfd_getfd there on each descriptor; one
 * answer per pid written to `out` as it comes (-1 none; else the descriptor's number,
 * plus FROM_I386 where pidfd_open went there too), so that a child a filter kills
 * mid-way still said what came before. */
#define FROM_I386 0x10000

static void i386_child(const int *pids, int k, int from, int out)
{
    for (int i = from; i < k; i++) {
        int said = -1, via = 0;
        long v[6] = { pids[i], 0, 0, 0, 0, 0 }, pfd = syscall(SYS_pidfd_open, pids[i], 0);
        if (pfd < 0 && filter_refusal(errno))
            pfd = int80(I386_NR_pidfd_open, v), via = FROM_I386;
        for (int n = 0; pfd >= 0 && said < 0 && n < FDS_TRIED; n++) {
            long w[6] = { pfd, n, 0, 0, 0, 0 }, got = int80(I386_NR_pidfd_getfd, w);
            if (got >= 0 && gives_token((int)got))
                said = n | via;
            else if (got < 0 && got != -EBADF)
                break;
        }
        if (pfd >= 0)
            close((int)pfd);
        if (write(out, &said, sizeof said) != sizeof said || said >= 0)
            _exit(0);
    }
    _exit(0);
}

/* 0 if the i386 entry's calls took a descriptor of one of `pids` giving the token,
 * named in how; -1 if none did. */
static int i386_take(const int *pids, int k, char *how, size_t n)
{
    for (int from = 0; from < k;) {
        int p[2], said = -1, status = 0, i = from;
        if (pipe2(p, O_CLOEXEC) != 0)
            return -1;
        pid_t child = fork();
        if (child == 0) {
            close(p[0]);
            i386_child(pids, k, from, p[1]);
        }
        close(p[1]);
        for (; child > 0 && i < k && read(p[0], &said, sizeof said) == sizeof said; i++)
            if (said >= 0)
                break;
        close(p[0]);
        while (child > 0 && waitpid(child, &status, 0) < 0 && errno == EINTR)
            ;
        if (said >= 0) {
            char also[40] = "";
            if (said & FROM_I386)
                snprintf(also, sizeof also, "; pidfd_open's %d there too", I386_NR_pidfd_open);
            snprintf(how, n, "pidfd_getfd(%d, %d) through the i386 entry (int $0x80, its number %d%s), x86_64's"
                     " refused", pids[i], said & ~FROM_I386, I386_NR_pidfd_getfd, also);
            return 0;
        }
        if (child <= 0 || i >= k || !WIFSIGNALED(status))
            return -1; /* every pid refused, or the child could not run */
        from = i + 1;   /* killed at pid i: a filter's refusal (SECCOMP_RET_KILL) */
    }
    return -1;
}
#else
/* aarch64: its arm32 entry is taken only by a 32-bit program; nothing to try. */
static int i386_take(const int *pids, int k, char *how, size_t n)
{
    (void)pids, (void)k, (void)how, (void)n;
    return -1;
}
#endif

/* Every process of this PID namespace by its number (from 1 to the kernel's ceiling, by
 * getpgid: this check's own left out; kernel threads hold no files), each descriptor
 * from 0 to FDS_TRIED - 1 taken and read: 0 if one gave the token, the way in `how`;
 * else -1, the processes found in *pids and the last refusal's errno in *e; -2 where
 * more were refused than PIDS_KEPT, so that some were not asked through the i386 entry. */
int numbered_fds(char *how, size_t n, int *pids, int *e)
{
    static int refused[PIDS_KEPT];
    int nref = 0, over = 0, self = getpid(), fd = -1;
    *pids = 0;
    for (int pid = 1; pid < PID_CEILING; pid++) {
        if (pid == self || getpgid(pid) <= 0)
            continue;
        (*pids)++;
        int r = native_take(pid, &fd, e);
        if (r == 0) {
            snprintf(how, n, "pidfd_getfd(%d, %d)", pid, fd);
            return 0;
        }
        if (r == 1 && nref < PIDS_KEPT)
            refused[nref++] = pid;
        else if (r == 1)
            over = 1;
    }
#if defined(__x86_64__)
    if (nref > 0 && i386_here() && i386_take(refused, nref, how, n) == 0)
        return 0;
#else
    if (nref > 0 && i386_take(refused, nref, how, n) == 0)
        return 0;
#endif
    return over ? -2 : -1;
}

/* ---- another process's memory, by number (priv-proc-access) ------------------ */

/* PIDFD_GET_INFO's first version (6.13): a process's parent, no permission asked. */
struct pidfd_info0 {
    uint64_t mask, cgroupid;
    uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
    int32_t exit_code;
};
#define PIDFD_GET_INFO_ _IOWR(0xFF, 11, struct pidfd_info0)

/* The parent of `pid` by its pidfd (0 where unknown: no pidfd, a kernel before 6.13). */
static int parent_of(int pid)
{
    struct pidfd_info0 info = { .mask = 1 /* PIDFD_INFO_PID */ };
    int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
    int r = pfd >= 0 && ioctl(pfd, PIDFD_GET_INFO_, &info) == 0 ? (int)info.ppid : 0;
    if (pfd >= 0)
        close(pfd);
    return r;
}

/* Whether `pid` is this check's own, told without /proc: of its session (the probe's
 * other checks, a sandbox's own processes), or one of its ancestors (its parent, and
 * above it where PIDFD_GET_INFO answers), as reach_processes leaves them out. */
static int own_by_number(int pid, const int *anc, int na)
{
    if (getsid(pid) == getsid(0))
        return 1;
    for (int i = 0; i < na; i++)
        if (anc[i] == pid)
            return 1;
    return 0;
}

int numbered_reach(int (*touch)(int, char *, size_t), int *seen, int *e, char *how, size_t n)
{
    static int refused[PIDS_KEPT];
    int anc[64], na = 0, nref = 0, self = getpid();
    for (int p = getppid(); p > 1 && na < 64; p = parent_of(p))
        anc[na++] = p;
    *seen = 0;
    for (int pid = 1; pid < PID_CEILING; pid++) {
        if (pid == self || getpgid(pid) <= 0 || own_by_number(pid, anc, na))
            continue;
        (*seen)++;
        int r = touch(pid, how, n);
        if (r == 0) {
            size_t k = strlen(how);
            snprintf(how + k, n - k, ", its pid found by number (no /proc lists the host's processes)");
            return 0;
        }
        if (r != ESRCH || !*e)
            *e = r;
        if (r != ESRCH && nref < PIDS_KEPT)
            refused[nref++] = pid;
    }
    /* signals: not here, where no /proc tells harness's witness apart */
    if (i386_reach(refused, nref, 0, how, n) != 0)
        return -1;
    size_t k = strlen(how);
    snprintf(how + k, n - k, ", its pid found by number");
    return 0;
}
