/* Another process's scheduling and OOM standing, scenario "privilege" (procs.c asks
 * here, standing in the host's PID namespace): setpriority, sched_setscheduler,
 * sched_setattr, sched_setaffinity and ioprio_set of a host process ask the same uid
 * alone (or CAP_SYS_NICE), no signalling call and no hook of Landlock's signal scope;
 * its /proc/<pid>/oom_score_adj, its owner's file, is written by the same uid (a
 * score of 1000: the OOM killer's first choice). A deny-list of the calls that reach
 * another process (ptrace, process_vm_*, the signalling calls, prlimit64) leaves them:
 * the workload may starve a host process (nice 19, SCHED_IDLE's neighbour SCHED_BATCH,
 * one CPU, the idle I/O class) or have it killed first.
 *
 * Each way is tried on harness's witnesses alone (host processes that envelope.sh
 * starts beside each sandbox and stops with it: one of uid 65534, and one of the
 * workload's own uid where it runs as another, on its request), never on another host
 * process: its value read (its /proc files, ioprio_get), changed by one step, read
 * back, then restored by the same call (but its nice: only CAP_SYS_NICE, or its own
 * RLIMIT_NICE, lowers a nice again; at 19 it is written back). The evidence is the
 * value read back. Each way runs in a child (a filter that kills on a call kills that child
 * alone, before it changed anything); by x86_64's numbers first, then, where each was
 * refused, by the i386 entry's (a deny-list of x86_64's numbers alone). */

#include "probe.h"
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>

enum { W_NICE, W_SCHED, W_ATTR, W_AFFINITY, W_IOPRIO, W_OOM, N_KINDS };

#define SCHED_OTHER_ 0
#define SCHED_BATCH_ 3
#define IOPRIO_WHO_PROCESS_ 1
#define IOPRIO_CLASS_BE_ 2
#define IOPRIO_CLASS_IDLE_ 3
#ifndef MAP_32BIT
#define MAP_32BIT 0 /* aarch64: no i386 entry, nothing below 4 GiB needed */
#endif

static const struct { const char *name, *what; long nr, nr386; } kinds[N_KINDS] = {
    [W_NICE] = { "setpriority(PRIO_PROCESS)", "nice", SYS_setpriority, I386_NR_setpriority },
    [W_SCHED] = { "sched_setscheduler", "policy", SYS_sched_setscheduler, I386_NR_sched_setscheduler },
    [W_ATTR] = { "sched_setattr", "policy", SYS_sched_setattr, I386_NR_sched_setattr },
    [W_AFFINITY] = { "sched_setaffinity", "CPU mask", SYS_sched_setaffinity, I386_NR_sched_setaffinity },
    [W_IOPRIO] = { "ioprio_set(IOPRIO_WHO_PROCESS)", "I/O priority", SYS_ioprio_set, I386_NR_ioprio_set },
    [W_OOM] = { "/proc/<pid>/oom_score_adj", "oom_score_adj", -1, -1 },
};

/* Field `k` (1-based, past the comm's ')': 3 is the state) of /proc/<pid>/stat. */
static int stat_field(int pid, int k, long *v)
{
    char buf[1024], *s = proc_stat_after_comm(pid, buf, sizeof buf);
    for (int f = 2; s && f < k; f++)
        s = strchr(s + 1, ' ');
    return s && sscanf(s + 1, "%ld", v) == 1 ? 0 : -1;
}

/* The witness's CPU mask (/proc/<pid>/status's Cpus_allowed, hex words by commas). */
static int cpus_allowed(int pid, cpu_set_t *set)
{
    char p[64], buf[8192];
    snprintf(p, sizeof p, "/proc/%d/status", pid);
    ssize_t n = read_file(p, buf, sizeof buf - 1);
    buf[n > 0 ? n : 0] = '\0';
    char *s = strstr(buf, "\nCpus_allowed:\t"), *end;
    if (!s)
        return -1;
    s += 15, end = strchr(s, '\n');
    if (!end)
        return -1;
    CPU_ZERO(set);
    int bit = 0;
    for (char *c = end - 1; c >= s && bit < CPU_SETSIZE; c--) {
        if (*c == ',')
            continue;
        int d = *c >= '0' && *c <= '9' ? *c - '0' : *c >= 'a' && *c <= 'f' ? *c - 'a' + 10 : -1;
        if (d < 0)
            return -1;
        for (int b = 0; b < 4; b++, bit++)
            if (d >> b & 1)
                CPU_SET(bit, set);
    }
    return 0;
}

/* The value way `k` changes, read where no filter refuses it ((/proc) but ioprio_get;
 * the mask's lowest CPU, with the count in *mask). -1 if unreadable. */
static int read_value(int k, int pid, long *v, cpu_set_t *mask)
{
    char p[64], buf[32];
    switch (k) {
    case W_NICE:
        return stat_field(pid, 19, v);
    case W_SCHED:
    case W_ATTR:
        return stat_field(pid, 41, v);
    case W_AFFINITY:
        if (cpus_allowed(pid, mask) != 0)
            return -1;
        *v = CPU_COUNT(mask);
        return 0;
    case W_IOPRIO:
        *v = syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS_, pid);
        return *v < 0 ? -1 : 0;
    default:
        snprintf(p, sizeof p, "/proc/%d/oom_score_adj", pid);
        ssize_t n = read_file(p, buf, sizeof buf - 1);
        return n > 0 ? (buf[n] = '\0', *v = strtol(buf, NULL, 10), 0) : -1;
    }
}

/* Way `k` sets `v` on `pid` (`nice`: its nice, which sched_setattr sets too), by
 * x86_64's call or the i386 entry's; `low`: 4 KiB below 4 GiB for the structures. 0, or
 * -errno. */
static long set_value(int k, int i386, int pid, long v, long nice, const cpu_set_t *mask, unsigned char *low)
{
    long a[6] = { 0 };
    switch (k) {
    case W_NICE:
        a[0] = PRIO_PROCESS, a[1] = pid, a[2] = v;
        break;
    case W_SCHED:
        memset(low, 0, 4), a[0] = pid, a[1] = v, a[2] = (long)(uintptr_t)low; /* sched_priority 0 */
        break;
    case W_ATTR: { /* struct sched_attr, SCHED_ATTR_SIZE_VER0: size, policy, flags, nice, ... */
        uint32_t *at = (uint32_t *)low;
        memset(low, 0, 48);
        at[0] = 48, at[1] = (uint32_t)v, at[4] = (uint32_t)(int32_t)nice;
        a[0] = pid, a[1] = (long)(uintptr_t)low;
        break;
    }
    case W_AFFINITY:
        memcpy(low, mask, sizeof *mask), a[0] = pid, a[1] = sizeof *mask, a[2] = (long)(uintptr_t)low;
        break;
    case W_IOPRIO:
        a[0] = IOPRIO_WHO_PROCESS_, a[1] = pid, a[2] = v;
        break;
    default: {
        char p[64], s[24];
        snprintf(p, sizeof p, "/proc/%d/oom_score_adj", pid);
        int fd = open(p, O_WRONLY | O_CLOEXEC);
        int n = snprintf(s, sizeof s, "%ld", v);
        long r = fd < 0 ? -errno : write(fd, s, (size_t)n) == n ? 0 : -errno;
        if (fd >= 0)
            close(fd);
        return r;
    }
    }
#if defined(__x86_64__)
    if (i386)
        return int80(kinds[k].nr386, a);
#else
    (void)i386;
#endif
    long r = syscall(kinds[k].nr, a[0], a[1], a[2]);
    return r < 0 ? -errno : 0;
}

/* What a child reports of one way: its answer, the values before, changed to, read
 * back after the change and after the restore. */
struct tried { long r, before, to, after, restored; };

/* In a child: way `k` on `pid`, read, changed by one step, read back, restored. */
static void try_way(int fd, int k, int i386, int pid)
{
    struct tried t = { -EINVAL, 0, 0, 0, 0 };
    cpu_set_t mask, one, now;
    long nice = 0;
    unsigned char *low = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
    if (low == MAP_FAILED || read_value(k, pid, &t.before, &mask) != 0 || stat_field(pid, 19, &nice) != 0)
        _exit(1);
    switch (k) {
    case W_NICE: /* raised (only CAP_SYS_NICE lowers it back); at 19, written back */
        t.to = t.before < 19 ? t.before + 1 : 19;
        break;
    case W_SCHED:
    case W_ATTR:
        if (t.before != SCHED_OTHER_ && t.before != SCHED_BATCH_)
            _exit(1); /* a real-time or idle witness: not ours to move */
        t.to = t.before == SCHED_BATCH_ ? SCHED_OTHER_ : SCHED_BATCH_;
        break;
    case W_AFFINITY: /* its lowest CPU alone (one CPU: itself, written back) */
        CPU_ZERO(&one);
        for (int c = 0; c < CPU_SETSIZE; c++)
            if (CPU_ISSET(c, &mask)) {
                CPU_SET(c, &one);
                break;
            }
        t.to = 1;
        break;
    case W_IOPRIO:
        t.to = t.before >> 13 == IOPRIO_CLASS_IDLE_ ? IOPRIO_CLASS_BE_ << 13 | 7 : IOPRIO_CLASS_IDLE_ << 13;
        break;
    default:
        t.to = t.before < 1000 ? t.before + 1 : t.before - 1;
    }
    t.r = set_value(k, i386, pid, t.to, nice, &one, low);
    if (t.r == 0 && read_value(k, pid, &t.after, &now) == 0) {
        if (k == W_AFFINITY)
            t.after = CPU_EQUAL(&now, &one) ? 1 : 0;
        set_value(k, i386, pid, t.before, nice, &mask, low);
        if (read_value(k, pid, &t.restored, &now) == 0 && k == W_AFFINITY)
            t.restored = CPU_EQUAL(&now, &mask) ? t.before : -1;
    }
    _exit(write(fd, &t, sizeof t) == sizeof t ? 0 : 1);
}

/* Way `k` in a child: 1 if the witness's value read back was the one set, *t told. */
static int run_way(int k, int i386, int pid, struct tried *t)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        return 0;
    pid_t child = fork();
    if (child < 0) {
        close(p[0]), close(p[1]);
        return 0;
    }
    if (child == 0) {
        close(p[0]);
        try_way(p[1], k, i386, pid);
    }
    close(p[1]);
    ssize_t got = read(p[0], t, sizeof *t);
    close(p[0]);
    while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
        ;
    return got == sizeof *t && t->r == 0 && t->after == t->to;
}

/* The line of way `k` taken (`i386`: through that entry) on the witness `w` of `uid`. */
static void say(int k, int i386, int w, unsigned uid, const struct tried *t, char *how, size_t n)
{
    char vals[96], entry[96] = "";
    if (k == W_AFFINITY)
        snprintf(vals, sizeof vals, "its %ld CPU(s) made its lowest alone%s", t->before,
                 t->before > 1 ? "" : " (its one: written back)");
    else if (k == W_IOPRIO)
        snprintf(vals, sizeof vals, "its I/O priority %#lx made %#lx (the idle class)", t->before, t->to);
    else
        snprintf(vals, sizeof vals, "its %s %ld made %ld", kinds[k].what, t->before, t->to);
    if (i386)
        snprintf(entry, sizeof entry, " through the i386 entry (int $0x80, its number %ld), x86_64's refused",
                 kinds[k].nr386);
    snprintf(how, n, "%s of harness's witness (host process %d, uid %u%s)%s: %s, read back, then %s: the"
             " workload may %s", kinds[k].name, w, uid, uid != 65534 ? ", the workload's own" : "", entry, vals,
             t->restored == t->before ? "restored"
             : k == W_NICE ? "left (only CAP_SYS_NICE lowers a nice; the witness stops with the cell)"
                           : "not restored (the witness stops with the cell)",
             k == W_OOM ? "have the OOM killer take a host process first (a score of 1000)"
                        : "change a host process's scheduling (starve it)");
}

int sched_reach(char *how, size_t n)
{
    unsigned long long pnd[2];
    unsigned uid[2];
    int w[2], nw = witnesses(w, uid, pnd);
    struct tried t;
    for (int j = 0; j < nw; j++)
        for (int k = 0; k < N_KINDS; k++)
            if (run_way(k, 0, w[j], &t))
                return say(k, 0, w[j], uid[j], &t, how, n), 0;
#if defined(__x86_64__)
    for (int j = 0, here = i386_here(); j < nw && here; j++)
        for (int k = 0; k < W_OOM; k++) /* oom_score_adj: a file's */
            if (run_way(k, 1, w[j], &t))
                return say(k, 1, w[j], uid[j], &t, how, n), 0;
#endif
    return -1;
}
