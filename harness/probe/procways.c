/* Other processes through the i386 entry (int $0x80), scenario "privilege": ptrace,
 * process_vm_readv and _writev, pidfd_getfd, the calls that signal a process by its
 * number and prlimit64, by that entry's own numbers (ptrace 26, kill 37, prlimit64 340,
 * ...), which a seccomp deny-list of x86_64's numbers that does not check
 * seccomp_data.arch, or an i386 list copied from older tables, lets through (procs.c
 * asks here once its own ways are refused); and a descriptor's owner,
 * by x86_64's calls and then that entry's fcntl64, fcntl and ioctl. Where there is no
 * such entry (aarch64, a kernel without IA32 emulation, gVisor), nothing is tried there. */

#include "probe.h"
#include <sys/ioctl.h>
#include <sys/resource.h>

/* ---- a descriptor's owner: the signal the kernel sends it (SIGIO, or F_SETSIG's) ---- */

#define WITNESS_SIGS ((1ULL << (SIGIO - 1)) | (1ULL << (SIGURG - 1)))

/* Whether a witness whose parent is `ppid` is this cell's: that parent, the cell's
 * envelope, has the cell's tag among its arguments (a command line anyone reads, where
 * the witness's environment asks ptrace's permission). Another cell's witness ends
 * with that cell, maybe during this check. */
static int witness_mine(int ppid)
{
    static char args[65536];
    char p[64];
    snprintf(p, sizeof p, "/proc/%d/cmdline", ppid);
    ssize_t k = o.tag && *o.tag ? read_file(p, args, sizeof args - 1) : -1;
    args[k > 0 ? k : 0] = '\0';
    for (char *a = args; a < args + (k > 0 ? k : 0); a += strlen(a) + 1)
        if (!strcmp(a, o.tag))
            return 1;
    return 0;
}

/* A host process of uid `uid` named sleep that blocks SIGIO and SIGURG, neither
 * pending: harness's witness (envelope.sh starts one of uid 65534 beside each sandbox,
 * and one of the workload's own uid on its request), this cell's where it can be told
 * (`mine`: this cell's alone). A signal sent to it stays pending, shown in
 * /proc/<pid>/status's ShdPnd, nothing delivered. Its pending set in *pnd; 0 if none. */
static int g_skip; /* a witness own_witness has to pass over (see there) */

static int witness_of(unsigned want, int only_mine, unsigned long long *pnd)
{
    DIR *d = opendir("/proc");
    int found = 0, mine = 0;
    for (struct dirent *x; d && !mine && (x = readdir(d));) {
        char p[300], buf[4096];
        int pid = atoi(x->d_name);
        if (pid <= 1 || pid == getpid() || pid == g_skip)
            continue;
        snprintf(p, sizeof p, "/proc/%d/status", pid);
        ssize_t k = read_file(p, buf, sizeof buf - 1);
        if (k <= 0)
            continue;
        buf[k] = '\0';
        unsigned u[4];
        unsigned long long blk = 0, pending = ~0ULL;
        const char *uid = strstr(buf, "\nUid:"), *b = strstr(buf, "\nSigBlk:"), *s = strstr(buf, "\nShdPnd:");
        const char *pp = strstr(buf, "\nPPid:");
        int ppid = pp ? atoi(pp + 6) : 0;
        if (strncmp(buf, "Name:\tsleep\n", 12) || !uid || !b || !s ||
            sscanf(uid, "\nUid: %u %u %u %u", &u[0], &u[1], &u[2], &u[3]) != 4 ||
            sscanf(b, "\nSigBlk: %llx", &blk) != 1 || sscanf(s, "\nShdPnd: %llx", &pending) != 1)
            continue;
        if (u[0] != want || u[1] != want || u[2] != want || (blk & WITNESS_SIGS) != WITNESS_SIGS ||
            (pending & WITNESS_SIGS) || ((found || only_mine) && !witness_mine(ppid)))
            continue;
        found = pid, *pnd = pending, mine = witness_mine(ppid);
    }
    if (d)
        closedir(d);
    return found;
}

int witness_pid(unsigned long long *pnd)
{
    return witness_of(65534, 0, pnd);
}

/* The uid this process's euid is on the host: through /proc/self/uid_map (a user
 * namespace's, one level down; the kernel's first maps each to itself). -1 unknown. */
static long host_euid(void)
{
    char buf[1024];
    ssize_t k = read_file("/proc/self/uid_map", buf, sizeof buf - 1);
    buf[k > 0 ? k : 0] = '\0';
    unsigned long in, out, count, e = geteuid();
    for (char *l = buf; k > 0 && l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
        if (sscanf(l, "%lu %lu %lu", &in, &out, &count) == 3 && e >= in && e - in < count)
            return (long)(out + (e - in));
    return -1;
}

/* harness's witness of the workload's own uid on the host (*uid), where that is not
 * root's nor 65534's: a host process of the same uid is what the same-uid calls reach
 * (setpriority, sched_*, ioprio_set, F_SETOWN, prlimit64, kill). envelope.sh starts one
 * of the uid the cell's policy names, and one of each uid the sandbox's processes turn
 * out to run as on the host, looked for in its first seconds: where this cell's envelope
 * is here (its witness of 65534's), it is waited for once, 2.5 s at most. This cell's
 * alone is taken. 0 if none. */
int own_witness(unsigned *uid, unsigned long long *pnd)
{
    static int waited;
    unsigned long long p;
    long u = host_euid();
    if (u <= 0 || u == 65534)
        return 0;
    *uid = (unsigned)u; /* /proc shows it as this namespace's euid (a user namespace's root) */
    /* Where that euid is 65534 here (a map like podman's keep-id:uid=65534), the uid-65534
     * witness shows as 65534 too (unmapped: the overflow uid): the one witness_pid takes
     * is passed over, and the other of this cell's is this one. */
    g_skip = geteuid() == 65534 ? witness_of(65534, 1, &p) : 0;
    int w = witness_of(geteuid(), 1, pnd);
    for (int i = 0; w <= 0 && !waited && i < 25 && (i || witness_of(65534, 1, &p) > 0); i++) {
        struct timespec ts = { 0, 100 * 1000 * 1000 };
        nanosleep(&ts, NULL);
        w = witness_of(geteuid(), 1, pnd);
    }
    waited = 1, g_skip = 0;
    return w;
}

int witnesses(int *w, unsigned *uid, unsigned long long *pnd)
{
    int k = 0;
    if ((w[k] = witness_pid(&pnd[k])) > 0)
        uid[k++] = 65534;
    if ((w[k] = own_witness(&uid[k], &pnd[k])) > 0)
        k++;
    return k;
}

static unsigned long long pending_of(int pid)
{
    char p[64], buf[4096];
    snprintf(p, sizeof p, "/proc/%d/status", pid);
    ssize_t k = read_file(p, buf, sizeof buf - 1);
    buf[k > 0 ? k : 0] = '\0';
    const char *s = strstr(buf, "\nShdPnd:");
    unsigned long long v = 0;
    return s && sscanf(s, "\nShdPnd: %llx", &v) == 1 ? v : 0;
}

#if defined(__x86_64__)
#include <sys/mman.h>

/* Native way `i` of sigio_reach (refused as a filter refuses) again through the i386
 * entry, in a child (a filter may kill it; the owner it sets is the open file's, the
 * parent's too): fcntl64 (221), then fcntl (55), with F_SETOWN or F_SETOWN_EX, or ioctl
 * (54) with FIOSETOWN or SIOCSPGRP, by numbers a filter keyed to x86_64's fcntl (72) and
 * ioctl (16) never matches. 0 if the owner was set, its way named in `way`; -1 if not. */
static int owner_by_i386(int fd, int i, int w, char *way, size_t n)
{
    static const struct { const char *name; long nr; } calls[] = {
        { "fcntl64", I386_NR_fcntl64 }, { "fcntl", I386_NR_fcntl }, { "ioctl", I386_NR_ioctl },
    };
    static const char *const cmds[] = { "F_SETOWN", "F_SETOWN_EX", "FIOSETOWN", "SIOCSPGRP" };
    static int here = -1;
    if (here < 0)
        here = i386_here();
    for (int c = i < 2 ? 0 : 2; here && c < (i < 2 ? 2 : 3); c++) {
        pid_t kid = fork();
        if (kid == 0) {
            int32_t *low = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
            if (low == MAP_FAILED)
                _exit(1);
            low[0] = i == 1 ? 1 /* F_OWNER_PID */ : w, low[1] = w; /* an int, or struct f_owner_ex */
            static const long cmd[] = { F_SETOWN, 15 /* F_SETOWN_EX */, 0x8901 /* FIOSETOWN */, 0x8902 /* SIOCSPGRP */ };
            long v[6] = { fd, cmd[i], i ? (long)(uintptr_t)low : w };
            _exit(int80(calls[c].nr, v) == 0 ? 0 : 1);
        }
        int status = 0;
        while (kid > 0 && waitpid(kid, &status, 0) < 0 && errno == EINTR)
            ;
        if (kid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
            snprintf(way, n, "%s(%s) through the i386 entry (int $0x80, its number %ld; x86_64's %s refused)",
                     calls[c].name, cmds[i], calls[c].nr, i < 2 ? "fcntl" : "ioctl");
            return 0;
        }
    }
    return -1;
}
#else
static int owner_by_i386(int fd, int i, int w, char *way, size_t n)
{
    (void)fd, (void)i, (void)w, (void)way, (void)n;
    return -1;
}
#endif

int sigio_reach(char *how, size_t n)
{
    static const char *const ways[] = { "fcntl(F_SETOWN)", "fcntl(F_SETOWN_EX)", "ioctl(FIOSETOWN)",
                                        "ioctl(SIOCSPGRP)" };
    char way[160];
    unsigned long long pnd[2];
    unsigned uid[2];
    int ws[2], nw = witnesses(ws, uid, pnd);
    for (int j = 0; j < nw; j++)
        for (int i = 0, w = ws[j]; i < 4; i++) {
            int fd[2], one = 1, set;
            if ((i < 2 ? pipe2(fd, O_CLOEXEC) : socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fd)) != 0)
                continue;
            struct { int type; pid_t pid; } ex = { 1 /* F_OWNER_PID */, w };
            if (i == 0)
                set = fcntl(fd[0], F_SETOWN, w);
            else if (i == 1)
                set = fcntl(fd[0], 15 /* F_SETOWN_EX */, &ex);
            else
                set = ioctl(fd[0], i == 2 ? 0x8901 /* FIOSETOWN */ : 0x8902 /* SIOCSPGRP */, &w);
            snprintf(way, sizeof way, "%s", ways[i]);
            /* refused as a filter refuses: the same command through the i386 entry */
            if (set != 0 && (errno == EPERM || errno == ENOSYS))
                set = owner_by_i386(fd[0], i, w, way, sizeof way);
            /* SIGURG, whose default is to ignore it; refused, SIGIO: the witness blocks both */
            int urg = fcntl(fd[0], 10 /* F_SETSIG */, SIGURG) == 0;
            int async = fcntl(fd[0], F_SETFL, O_ASYNC | O_NONBLOCK) == 0 || ioctl(fd[0], FIOASYNC, &one) == 0;
            ssize_t wrote = set == 0 && async ? write(fd[1], "x", 1) : -1;
            close(fd[0]), close(fd[1]);
            unsigned long long now = wrote == 1 ? pending_of(w) : 0;
            if (now & ~pnd[j] & WITNESS_SIGS) {
                snprintf(how, n, "%s and O_ASYNC: %s queued to host process %d (harness's witness, uid %u%s,"
                         " which blocks it: pending, nothing delivered), no signalling call asked: the workload"
                         " may signal (kill) host processes as a descriptor's owner", way,
                         urg ? "SIGURG (F_SETSIG)" : "SIGIO", w, uid[j], uid[j] != 65534 ? ", the workload's own" : "");
                return 0;
            }
        }
    return -1;
}

#if defined(__x86_64__)
#define PTRACE_SEIZE_ 0x4206

/* The ways, in the order tried; `sig`: a call that signals (1) or sets the limits of
 * (2) a process, tried only where the check stands in the host's PID namespace, as
 * procs.c's own. */
static const struct { const char *name; long nr; int sig; } ways[] = {
    { "process_vm_readv", I386_NR_process_vm_readv, 0 },
    { "process_vm_writev", I386_NR_process_vm_writev, 0 },
    { "ptrace(PTRACE_SEIZE)", I386_NR_ptrace, 0 },
    /* its descriptors 0 to 2 (EBADF counts), through a pidfd: a list copied from tables
     * older than pidfd_getfd (5.6) names the calls above alone */
    { "pidfd_getfd", I386_NR_pidfd_getfd, 0 },
    { "kill", I386_NR_kill, 1 },
    { "tkill", I386_NR_tkill, 1 },
    { "tgkill", I386_NR_tgkill, 1 },
    { "rt_sigqueueinfo", I386_NR_rt_sigqueueinfo, 1 },
    { "rt_tgsigqueueinfo", I386_NR_rt_tgsigqueueinfo, 1 },
    { "prlimit64", I386_NR_prlimit64, 2 },
};
#define N_WAYS (int)(sizeof ways / sizeof ways[0])

/* Way `w` on `pid`, in the child: its answer (-errno on failure). The memory calls ask
 * for 16 bytes at address 0 of the target (below mmap_min_addr: never mapped), so the
 * kernel checks ptrace's permission and then fails EFAULT, nothing read nor written;
 * a seize ends when this child exits; every signal is 0 (the permission checked,
 * nothing sent). `low`: 64 KiB below 4 GiB for the 32-bit structures. */
static long way_call(int w, int pid, unsigned char *low)
{
    uint32_t *iov = (uint32_t *)low; /* compat_iovec: base, len (local, then remote) */
    iov[0] = (uint32_t)(uintptr_t)(low + 1024), iov[1] = 16;
    iov[2] = 0, iov[3] = 16;
    int32_t *si = (int32_t *)(low + 256); /* compat_siginfo: 128 bytes */
    memset(si, 0, 128);
    si[2] = SI_QUEUE, si[3] = getpid(), si[4] = (int32_t)getuid(); /* code, pid, uid */
    long v[6] = { pid, 0, 0, 0, 0, 0 };
    switch (ways[w].nr) {
    case I386_NR_process_vm_readv:
    case I386_NR_process_vm_writev:
        v[1] = (long)(uintptr_t)iov, v[2] = 1, v[3] = (long)(uintptr_t)(iov + 2), v[4] = 1;
        break;
    case I386_NR_ptrace:
        v[0] = PTRACE_SEIZE_, v[1] = pid;
        break;
    case I386_NR_pidfd_getfd: { /* a pidfd first: x86_64's, else the entry's own (434) */
        long pfd = syscall(SYS_pidfd_open, pid, 0), r = -EBADF;
        if (pfd < 0)
            pfd = int80(I386_NR_pidfd_open, v);
        if (pfd < 0)
            return pfd;
        for (int fd = 0; fd < 3 && r == -EBADF; fd++) {
            long w[6] = { pfd, fd, 0, 0, 0, 0 };
            r = int80(I386_NR_pidfd_getfd, w);
        }
        if (r >= 0)
            close((int)r);
        close((int)pfd);
        return r;
    }
    case I386_NR_tgkill:
        v[1] = pid;
        break;
    case I386_NR_rt_sigqueueinfo:
        v[2] = (long)(uintptr_t)si;
        break;
    case I386_NR_rt_tgsigqueueinfo:
        v[1] = pid, v[3] = (long)(uintptr_t)si;
        break;
    case I386_NR_prlimit64: { /* RLIMIT_CPU read, then written back unchanged (as procs.c) */
        long r;
        v[1] = RLIMIT_CPU, v[3] = (long)(uintptr_t)(low + 512);
        if ((r = int80(I386_NR_prlimit64, v)) != 0)
            return r;
        v[2] = v[3], v[3] = 0;
        break;
    }
    }
    return int80(ways[w].nr, v);
}

/* Whether the kernel let way `w` through: 0 from each, or for the memory calls EFAULT
 * (allowed, the address was not), for pidfd_getfd EBADF (allowed, no such descriptor),
 * as procs.c counts them. */
static int way_allowed(int w, long r)
{
    if (ways[w].nr == I386_NR_pidfd_getfd)
        return r >= 0 || r == -EBADF;
    return r >= 0 || (r == -EFAULT && ways[w].nr != I386_NR_ptrace && !ways[w].sig);
}

/* In a child: from attempt `from` on (pid index * N_WAYS + way), each answer written
 * to `fd` as it comes, so that a child a filter kills mid-way still said what came
 * before. */
static void run_ways(int fd, const int *pids, int k, int from, int signals)
{
    unsigned char *low = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
    if (low == MAP_FAILED)
        _exit(1);
    for (int a = from; a < k * N_WAYS; a++) {
        int w = a % N_WAYS;
        long r = ways[w].sig && !signals ? -ENOSYS : way_call(w, pids[a / N_WAYS], low);
        if (write(fd, &r, sizeof r) != sizeof r)
            _exit(1);
        if (way_allowed(w, r))
            _exit(0);
    }
    _exit(0);
}

int i386_reach(const int *pids, int k, int signals, char *how, size_t n)
{
    static int here = -1;
    if (k <= 0 || (here < 0 && (here = i386_here()) == 0) || !here)
        return -1;
    for (int from = 0; from < k * N_WAYS;) {
        int p[2];
        if (pipe2(p, O_CLOEXEC) != 0)
            return -1;
        pid_t child = fork();
        if (child < 0) {
            close(p[0]), close(p[1]);
            return -1;
        }
        if (child == 0) {
            close(p[0]);
            run_ways(p[1], pids, k, from, signals);
        }
        close(p[1]);
        long r;
        int a = from, found = -1;
        for (; a < k * N_WAYS && read(p[0], &r, sizeof r) == sizeof r; a++)
            if (way_allowed(a % N_WAYS, r)) {
                found = a;
                break;
            }
        close(p[0]);
        int status = 0;
        while (waitpid(child, &status, 0) < 0 && errno == EINTR)
            ;
        if (found >= 0) {
            int w = found % N_WAYS, pid = pids[found / N_WAYS];
            if (ways[w].sig == 2)
                snprintf(how, n, "%s(%d, RLIMIT_CPU) through the i386 entry (int $0x80, its number %ld) read and"
                         " written back unchanged, x86_64's refused: the workload may set that host process's"
                         " limits (a CPU limit of 1 s, and the kernel kills it)", ways[w].name, pid, ways[w].nr);
            else if (ways[w].sig)
                snprintf(how, n, "%s(%d, 0) through the i386 entry (int $0x80, its number %ld) allowed, x86_64's"
                         " refused: the workload may signal (kill) that host process", ways[w].name, pid, ways[w].nr);
            else
                snprintf(how, n, "%s of pid %d through the i386 entry (int $0x80, its number %ld) allowed, x86_64's"
                         " refused: ptrace's permission to its %s", ways[w].name, pid, ways[w].nr,
                         ways[w].nr == I386_NR_pidfd_getfd ? "descriptors" : "memory");
            return 0;
        }
        if (a >= k * N_WAYS || !WIFSIGNALED(status))
            return -1; /* every way refused, or the child could not run */
        from = a + 1;   /* killed at attempt a: a filter's refusal (SECCOMP_RET_KILL) */
    }
    return -1;
}
#else
/* aarch64: its arm32 entry is taken only by a 32-bit program; nothing to try. */
int i386_reach(const int *pids, int k, int signals, char *how, size_t n)
{
    (void)pids, (void)k, (void)signals, (void)how, (void)n;
    return -1;
}
#endif
