/* Other processes, scenarios "privilege" and "filesystem": their memory and
 * descriptors by ptrace's permission (/proc/<pid>/mem, pidfd_getfd, a seize), and
 * the small files they hold, reopened through /proc/<pid>/fd or taken by pidfd. */

#include "probe.h"
#include <sys/ptrace.h>
#include <sys/resource.h>

#define PF_KTHREAD_ 0x00200000UL

/* /proc/<pid>/stat in buf (`n` bytes), from the ')' that ends its comm on (a comm may
 * hold spaces and parentheses); NULL if gone or unreadable. */
char *proc_stat_after_comm(int pid, char *buf, size_t n)
{
    char p[64];
    snprintf(p, sizeof p, "/proc/%d/stat", pid);
    ssize_t k = read_file(p, buf, n - 1);
    if (k <= 0)
        return NULL;
    buf[k] = '\0';
    return strrchr(buf, ')');
}

/* A process's parent and flags from /proc/<pid>/stat; -1 if gone or unreadable. */
static int proc_stat(int pid, int *ppid, unsigned long *flags, char *state)
{
    char buf[1024], *r = proc_stat_after_comm(pid, buf, sizeof buf);
    /* ") S ppid pgrp session tty_nr tpgid flags" */
    if (!r || sscanf(r + 1, " %c %d %*d %*d %*d %*d %lu", state, ppid, flags) != 3)
        return -1;
    return 0;
}

#define INIT_PID_NS "pid:[4026531836]" /* PROC_PID_INIT_INO, fixed by the kernel */

/* Whether `pid`'s namespace `ns` is this process's own (unknown: no). */
static int same_ns(int pid, const char *ns)
{
    char p[64], mine[64], theirs[64];
    snprintf(p, sizeof p, "/proc/self/ns/%s", ns);
    ssize_t a = readlink(p, mine, sizeof mine - 1);
    snprintf(p, sizeof p, "/proc/%d/ns/%s", pid, ns);
    ssize_t b = readlink(p, theirs, sizeof theirs - 1);
    if (a <= 0 || b <= 0)
        return 0;
    mine[a] = theirs[b] = '\0';
    return !strcmp(mine, theirs);
}

/* A process of the workload's own kind: inside a PID namespace that is not the
 * host's, in this process's PID, mount and user namespaces, with every uid and gid
 * this process's effective ones and no capability it lacks. Reaching it gains
 * nothing the workload does not hold (another cell's probe run in the same sandbox,
 * a sandbox's own process run as the workload's user); a process of other
 * credentials (the sandbox's root init, a supervisor) or outside is still tried. */
static int own_kind(int pid)
{
    char self_pid[64], p[64], buf[4096];
    ssize_t k = readlink("/proc/self/ns/pid", self_pid, sizeof self_pid - 1);
    if (k <= 0)
        return 0;
    self_pid[k] = '\0';
    if (!strcmp(self_pid, INIT_PID_NS) || !same_ns(pid, "pid") || !same_ns(pid, "mnt")
        || !same_ns(pid, "user"))
        return 0;
    snprintf(p, sizeof p, "/proc/%d/status", pid);
    ssize_t n = read_file(p, buf, sizeof buf - 1);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    unsigned u[4], g[4];
    unsigned long long prm = ~0ULL, mine = ~0ULL;
    const char *uid = strstr(buf, "\nUid:"), *gid = strstr(buf, "\nGid:"), *cap = strstr(buf, "\nCapPrm:");
    if (!uid || !gid || !cap || sscanf(uid, "\nUid: %u %u %u %u", &u[0], &u[1], &u[2], &u[3]) != 4
        || sscanf(gid, "\nGid: %u %u %u %u", &g[0], &g[1], &g[2], &g[3]) != 4
        || sscanf(cap, "\nCapPrm: %llx", &prm) != 1)
        return 0;
    char own[4096];
    ssize_t m = read_file("/proc/self/status", own, sizeof own - 1);
    const char *eff = m > 0 ? (own[m] = '\0', strstr(own, "\nCapEff:")) : NULL;
    if (!eff || sscanf(eff, "\nCapEff: %llx", &mine) != 1)
        return 0;
    for (int i = 0; i < 4; i++)
        if (u[i] != geteuid() || g[i] != getegid())
            return 0;
    return (prm & ~mine) == 0;
}

/* Whether this process stands in the kernel's first PID namespace, the host's. */
static int host_pid_ns(void)
{
    char ns[64];
    ssize_t k = readlink("/proc/self/ns/pid", ns, sizeof ns - 1);
    return k > 0 && (ns[k] = '\0', !strcmp(ns, INIT_PID_NS));
}

/* Whether /proc shows this process's PID namespace (its /proc/self is this pid). The
 * numbers of another namespace's /proc (the host's, in a sandbox of its own) name no
 * process here: a call by number would reach whatever has it here (pid 1: its own
 * init), never them. */
static int proc_is_ours(void)
{
    char self[32];
    ssize_t k = readlink("/proc/self", self, sizeof self - 1);
    return k > 0 && (self[k] = '\0', atoi(self) == getpid());
}

#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

/* The first way, of every call that signals a process by its number or a pidfd, the
 * kernel lets signal 0 through to `pid` (the permission checked, nothing sent): kill,
 * tkill and tgkill of its main thread, rt_sigqueueinfo and rt_tgsigqueueinfo (a
 * si_code of SI_QUEUE, as sigqueue sends), pidfd_send_signal. A deny-list that
 * refuses some of them (seccomp) leaves the others the same permission. NULL if none. */
static const char *signal_way(int pid)
{
    static char way[64];
    siginfo_t si;
    memset(&si, 0, sizeof si);
    si.si_code = SI_QUEUE;
    si.si_pid = getpid();
    si.si_uid = getuid();
    if (kill(pid, 0) == 0)
        return snprintf(way, sizeof way, "kill(%d, 0)", pid), way;
    if (syscall(SYS_tkill, pid, 0) == 0)
        return snprintf(way, sizeof way, "tkill(%d, 0)", pid), way;
    if (syscall(SYS_tgkill, pid, pid, 0) == 0)
        return snprintf(way, sizeof way, "tgkill(%d, %d, 0)", pid, pid), way;
    if (syscall(SYS_rt_sigqueueinfo, pid, 0, &si) == 0)
        return snprintf(way, sizeof way, "rt_sigqueueinfo(%d, 0)", pid), way;
    if (syscall(SYS_rt_tgsigqueueinfo, pid, pid, 0, &si) == 0)
        return snprintf(way, sizeof way, "rt_tgsigqueueinfo(%d, %d, 0)", pid, pid), way;
    int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pfd >= 0) {
        long r = syscall(SYS_pidfd_send_signal, pfd, 0, NULL, 0);
        close(pfd);
        if (r == 0)
            return snprintf(way, sizeof way, "pidfd_send_signal(pidfd of %d, 0)", pid), way;
    }
    return NULL;
}

/* 0 if this process may read `pid`'s memory or take its descriptors (ptrace's
 * attach permission), or, standing in the host's PID namespace, signal it by any call
 * (signal_way; kill's permission: the same uid, or CAP_KILL; Landlock's signal scope refuses it), naming
 * how in `how`; else the errno of the refusal. Each way changes nothing in the
 * target: a read, a duplicate of a descriptor closed at once, a seize that ends when
 * this check's child exits, signal 0 (the permission checked, nothing sent). */
static int touch_process(int pid, char *how, size_t n)
{
    char p[64], line[128], b[16];
    unsigned long addr = 0;
    snprintf(p, sizeof p, "/proc/%d/maps", pid);
    if (read_file(p, line, sizeof line - 1) > 0)
        addr = strtoul(line, NULL, 16);
    struct iovec l = { b, sizeof b }, r = { (void *)addr, sizeof b };
    ssize_t k = process_vm_readv(pid, &l, 1, &r, 1, 0);
    if (k >= 0 || errno == EFAULT) { /* EFAULT: allowed, the address was not */
        snprintf(how, n, "process_vm_readv of pid %d %s", pid, k >= 0 ? "read its memory" : "was allowed");
        return 0;
    }
    int e = errno;
    /* The same memory as a file: /proc/<pid>/mem opens by ptrace's attach permission
     * alone (a filter of the calls above sees only an open and a read). */
    snprintf(p, sizeof p, "/proc/%d/mem", pid);
    int mem = open(p, O_RDONLY | O_CLOEXEC);
    if (mem >= 0) {
        k = pread(mem, b, sizeof b, (off_t)addr);
        close(mem);
        snprintf(how, n, "/proc/%d/mem opened for reading%s", pid, k > 0 ? ": read its memory" : "");
        return 0;
    }
    int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pfd >= 0) {
        for (int fd = 0; fd < 3; fd++) {
            int got = (int)syscall(SYS_pidfd_getfd, pfd, fd, 0);
            if (got >= 0 || errno == EBADF) { /* EBADF: allowed, no such descriptor */
                if (got >= 0)
                    close(got);
                close(pfd);
                snprintf(how, n, "pidfd_getfd took descriptor %d of pid %d", fd, pid);
                return 0;
            }
        }
        close(pfd);
    }
    if (ptrace(PTRACE_SEIZE, pid, 0, 0) == 0) {
        snprintf(how, n, "ptrace(PTRACE_SEIZE) attached to pid %d", pid);
        return 0;
    }
    if (host_pid_ns()) { /* a host process: the workload may kill it */
        const char *way = signal_way(pid);
        if (way) {
            snprintf(how, n, "%s allowed: the workload may signal (kill) that host process", way);
            return 0;
        }
        /* Its resource limits, by the same uid alone (no signalling call; Landlock's
         * signal scope has no hook on it): its CPU limit set to 1 s, the kernel kills
         * it. Read, then written back unchanged (an LSM may tell the two apart). */
        uint64_t lim[2];
        if (syscall(SYS_prlimit64, pid, RLIMIT_CPU, NULL, lim) == 0 &&
            syscall(SYS_prlimit64, pid, RLIMIT_CPU, lim, NULL) == 0) {
            snprintf(how, n, "prlimit64(%d, RLIMIT_CPU) read and written back unchanged: the workload may set"
                     " that host process's limits (a CPU limit of 1 s, and the kernel kills it)", pid);
            return 0;
        }
    }
    return e;
}

/* Every visible process that is not this check's own (itself, its ancestors) nor
 * a kernel thread: in its own PID namespace a sandbox sees none; in the host's it
 * sees the host's (the filesystem fixture's decoy among them). 0 if one was
 * reached; the candidates count in *seen. */
/* The comm of `pid` in out[] ("" where unreadable). */
static void proc_comm(int pid, char *out, size_t n)
{
    char p[64];
    snprintf(p, sizeof p, "/proc/%d/comm", pid);
    ssize_t k = read_file(p, out, n - 1);
    out[k > 0 ? k : 0] = '\0';
}

/* Whether `pid` descends from `top` (by its parents, at most 64 up). */
static int descends(int pid, int top)
{
    unsigned long fl;
    char st;
    for (int k = 0, pp; k < 64 && pid > 1 && proc_stat(pid, &pp, &fl, &st) == 0; k++, pid = pp)
        if (pp == top)
            return 1;
    return 0;
}

static int reach_processes(int *seen, int *peers, int *e, char *how, size_t n)
{
    static int refused[4096];
    int anc[64], na = 0, self = getpid(), pid = self, pp, nref = 0;
    unsigned long fl;
    char st;
    *seen = *peers = 0;
    if (!proc_is_ours()) /* its numbers name nothing here, unless it is the host's (procnums.c) */
        return init_pid_ns_by_number() ? numbered_reach(touch_process, seen, e, how, n) : -1;
    while (na < 64 && pid > 1 && proc_stat(pid, &pp, &fl, &st) == 0 && pp > 0)
        anc[na++] = pid = pp;
    /* The probe's own processes (its other checks' children, run beside this one, of
     * its domain and credentials) are no one's to reach: every descendant of the
     * highest ancestor that is the probe (its name) is left out. */
    char me[32], name[32];
    int top = 0;
    proc_comm(self, me, sizeof me);
    for (int i = 0; i < na; i++) {
        proc_comm(anc[i], name, sizeof name);
        if (me[0] && !strcmp(name, me))
            top = anc[i];
    }
    DIR *d = opendir("/proc");
    if (!d)
        fail(errno, "opendir /proc: cannot list processes");
    *seen = *peers = 0;
    for (struct dirent *x; (x = readdir(d)) && *seen < 4096;) {
        char *end;
        long v = strtol(x->d_name, &end, 10);
        if (*end || v <= 0 || v == self)
            continue;
        int mine = 0;
        for (int i = 0; i < na; i++)
            mine |= anc[i] == v;
        if (mine || proc_stat((int)v, &pp, &fl, &st) != 0 || fl & PF_KTHREAD_ || st == 'Z' || v == 2 ||
            (top && descends((int)v, top)))
            continue;
        if (own_kind((int)v)) {
            (*peers)++;
            continue;
        }
        (*seen)++;
        int r = touch_process((int)v, how, n);
        if (r == 0) {
            closedir(d);
            return 0;
        }
        if (r != ESRCH || !*e)
            *e = r;
        if (r != ESRCH && nref < (int)(sizeof refused / sizeof refused[0]))
            refused[nref++] = (int)v;
    }
    closedir(d);
    /* The same calls by the i386 entry's numbers, where each of the above was refused
     * (procways.c): a deny-list of x86_64's numbers alone leaves them open. */
    return i386_reach(refused, nref, host_pid_ns(), how, n) == 0 ? 0 : -1;
}

/* A pidfd held at start of a process outside this PID namespace (its fdinfo's Pid is
 * 0: no number names it here; one in it is reach_processes'): a launcher's, of a
 * sidecar. pidfd_getfd asks ptrace's permission alone, no PID namespace, so its
 * descriptors are taken through it (EBADF counts: allowed, no such descriptor). 0 if
 * one was taken; the pidfds tried count in *held. */
static int reach_held_pidfds(int *held, int *e, char *how, size_t n)
{
    const int *fds;
    int more, k = held_list(&fds, &more);
    for (int i = 0; i < k; i++) {
        char link[32], p[64], info[512];
        if (fd_kind(fds[i], link, sizeof link) != FK_pidfd)
            continue;
        snprintf(p, sizeof p, "/proc/self/fdinfo/%d", fds[i]);
        ssize_t len = read_file(p, info, sizeof info - 1);
        info[len > 0 ? len : 0] = '\0';
        const char *pid = strstr(info, "\nPid:");
        if (pid == NULL || atoi(pid + 5) != 0)
            continue; /* in this namespace (the scan's), gone (-1), or unknown */
        (*held)++;
        for (int fd = 0; fd < 3; fd++) {
            int got = (int)syscall(SYS_pidfd_getfd, fds[i], fd, 0);
            if (got >= 0 || errno == EBADF) {
                if (got >= 0)
                    close(got);
                snprintf(how, n, "pidfd_getfd through the pidfd held at descriptor %d (a process outside its"
                         " PID namespace) took its descriptor %d", fds[i], fd);
                return 0;
            }
            if (errno != ESRCH)
                *e = errno;
        }
    }
    return -1;
}

/* A host process signalled as a descriptor's owner (procways.c), or its scheduling or
 * OOM standing changed (procsched.c), where it stands in the host's PID namespace and
 * /proc shows it: harness's witness, its pending set or the value read back. */
static int owner_reach(char *how, size_t n)
{
    return proc_is_ours() && host_pid_ns() && (sigio_reach(how, n) == 0 || sched_reach(how, n) == 0) ? 0 : -1;
}

/* Another process's memory and descriptors: as started, then as the
 * unprivileged uid (the decoy's owner). */
void chk_priv_proc_access(void)
{
    char how[400];
    int seen = 0, peers = 0, e = 0, held = 0;
    unsigned long long pnd;
    unsigned own_uid = 0;
    int own = 0;
    if (reach_processes(&seen, &peers, &e, how, sizeof how) == 0 ||
        reach_held_pidfds(&held, &e, how, sizeof how) == 0)
        outcome(OC_ESCAPED, 0, "as started: %s", how);
    /* In the host's PID namespace: harness's witness of its own host uid (one the envelope
     * starts on seeing the sandbox's processes may come after the scan: waited for once),
     * by the same ways, then by the i386 entry's. */
    if (proc_is_ours() && host_pid_ns() && (own = own_witness(&own_uid, &pnd)) > 0 &&
        (touch_process(own, how, sizeof how) == 0 || i386_reach(&own, 1, 1, how, sizeof how) == 0))
        outcome(OC_ESCAPED, 0, "as started: %s (harness's witness of uid %u, the workload's own)", how, own_uid);
    if (owner_reach(how, sizeof how) == 0)
        outcome(OC_ESCAPED, 0, "as started: %s", how);
    if (!proc_is_ours()) {
        int numbered = init_pid_ns_by_number(), first = seen;
        if (geteuid() == 0) {
            drop_privs();
            if ((numbered && reach_processes(&seen, &peers, &e, how, sizeof how) == 0) ||
                reach_held_pidfds(&held, &e, how, sizeof how) == 0)
                outcome(OC_ESCAPED, 0, "as uid %u: %s", g_unpriv_uid, how);
        }
        if (numbered)
            outcome(OC_BLOCKED, e, "no /proc of this PID namespace, the host's: memory and descriptors of %d"
                    " process(es) found by number refused", first);
        outcome(OC_BLOCKED, 0, "/proc shows another PID namespace's processes: none of its numbers"
                " names a process here, so none is reached by one");
    }
    int first = seen, first_peers = peers, first_held = held;
    if (geteuid() == 0) {
        drop_privs();
        if (reach_processes(&seen, &peers, &e, how, sizeof how) == 0 ||
            reach_held_pidfds(&held, &e, how, sizeof how) == 0 || owner_reach(how, sizeof how) == 0)
            outcome(OC_ESCAPED, 0, "as uid %u: %s", g_unpriv_uid, how);
    }
    ev_int("processes", first);
    ev_int("own_kind", first_peers);
    ev_int("held_pidfds", first_held);
    /* in the host's PID namespace, with no witness (no setpriv), or none of its own uid: said */
    static char untried[200];
    untried[0] = '\0';
    if (proc_is_ours() && host_pid_ns() && witness_pid(&pnd) <= 0)
        snprintf(untried, sizeof untried, "; no witness of harness's in view, so a descriptor's owner and a"
                 " process's scheduling were not tried");
    else if (proc_is_ours() && host_pid_ns() && own_uid && own <= 0)
        snprintf(untried, sizeof untried, "; no witness of harness's of uid %u (the workload's own) in view,"
                 " so a host process of its own uid was not tried", own_uid);
    if (!first)
        outcome(OC_BLOCKED, first_held ? e : ESRCH, "no process but this check's own (and its ancestors, and %d of"
                " its own kind) visible, %d pidfd(s) held of processes outside refused%s", first_peers, first_held,
                untried);
    outcome(OC_BLOCKED, e, "memory and descriptors of %d other process(es) refused%s", first, untried);
}

/* ---- routes through another process's descriptors -------------------------- */

static char g_fd_buf[65536]; /* what a reopened descriptor read */

/* A folder another process holds (its working folder, a descriptor to a folder) as a
 * base for every sentinel (--sentinel, --more-sentinels): each suffix of its host path
 * below it, and the same behind one to six "..", as the owner sees it. A launcher's
 * host folder left with a helper (`cd` into it, or a descriptor the workload was
 * spared) is a way to the host's files from inside. */
static void dir_routes(const char *base, unsigned uid)
{
    char list[4096];
    snprintf(list, sizeof list, "%s\n%s", o.sentinel ? o.sentinel : "", o.more_sentinels ? o.more_sentinels : "");
    int dfd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    for (char *save = NULL, *s = strtok_r(list, "\n", &save); dfd >= 0 && s; s = strtok_r(NULL, "\n", &save)) {
        for (const char *p = s[0] == '/' ? s : NULL; p; p = strchr(p + 1, '/'))
            for (int up = 0; up <= 6; up++) {
                char rel[4200] = "";
                for (int k = 0; k < up; k++)
                    strcat(rel, "../");
                strncat(rel, p + 1, sizeof rel - strlen(rel) - 1);
                int fd = openat(dfd, rel, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
                struct stat st;
                ssize_t n = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)
                                ? pread(fd, g_fd_buf, sizeof g_fd_buf, 0) : -1;
                if (fd >= 0)
                    close(fd);
                if (n > 0 && memmem(g_fd_buf, (size_t)n, o.token, strlen(o.token)))
                    outcome(OC_ESCAPED, 0, "read the token through %s/%s, a folder another process holds,"
                            " as its owner uid %u", base, rel, uid);
            }
    }
    if (dfd >= 0)
        close(dfd);
}

/* Every visible process's descriptors to small regular files (the sentinel is one;
 * nothing else is opened, so no device's open runs): re-opened through
 * /proc/<pid>/fd/N as the process's owner (setfsuid, as fs-routes does for
 * /proc/<pid>/root), and taken with pidfd_getfd; its working folder and every folder
 * it holds, as bases for the sentinels' paths (dir_routes). The fixture's decoy holds
 * the sentinel on its fd 3, so the host runtime's control reads it. Its root, working
 * folder and held folders, and the folders above them, are rows of held_files too
 * (other_rows): judged by where they lead, whether a sentinel lies there or not. */
void chk_fs_proc_fds(void)
{
    need(&o.token);
    int pids = 0, fds = 0, last = 0, numbered = -1;
    /* No /proc of this PID namespace (none, or another's) in the host's: its processes
     * are still there, each named by its number (procnums.c). */
    if (!proc_is_ours() && init_pid_ns_by_number()) {
        char how[300];
        int r = numbered_fds(how, sizeof how, &numbered, &last);
        if (r == 0)
            outcome(OC_ESCAPED, 0, "read the token through %s, its pid found by number in the host's PID"
                    " namespace, where /proc lists none of its processes", how);
        if (r == -2)
            fail(0, "%d host processes found by number: too many refused to ask each through the i386 entry",
                 numbered);
        ev_int("numbered_pids", numbered);
    }
    DIR *d = opendir("/proc");
    if (d == NULL && numbered >= 0)
        outcome(OC_BLOCKED, last, "no /proc: %d host processes found by number, none of their descriptors"
                " (0 to 1023, by pidfd_getfd) gave the token", numbered);
    if (d == NULL)
        outcome(OC_BLOCKED, errno, "opendir /proc");
    char path[600];
    pid_t self = getpid();
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9' || atoi(e->d_name) == self)
            continue;
        struct stat owner;
        snprintf(path, sizeof path, "/proc/%s", e->d_name);
        if (stat(path, &owner) != 0)
            continue;
        pids++;
        unsigned fsuid = (unsigned)setfsuid((uid_t)-1), fsgid = (unsigned)setfsgid((gid_t)-1);
        setfsgid(owner.st_gid);
        setfsuid(owner.st_uid);
        snprintf(path, sizeof path, "/proc/%s/root", e->d_name);
        other_folder(path);
        snprintf(path, sizeof path, "/proc/%s/cwd", e->d_name);
        other_folder(path);
        dir_routes(path, (unsigned)owner.st_uid);
        snprintf(path, sizeof path, "/proc/%s/fd", e->d_name);
        DIR *fdd = opendir(path);
        int pidfd = -2;
        for (struct dirent *f; fdd && (f = readdir(fdd)) != NULL;) {
            struct stat st;
            if (f->d_name[0] < '0' || f->d_name[0] > '9')
                continue;
            snprintf(path, sizeof path, "/proc/%s/fd/%s", e->d_name, f->d_name);
            if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
                other_folder(path);
                dir_routes(path, (unsigned)owner.st_uid);
            }
            if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > 4096)
                continue;
            fds++;
            int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
            if (fd >= 0) {
                ssize_t n = pread(fd, g_fd_buf, sizeof g_fd_buf, 0);
                close(fd);
                if (n > 0 && memmem(g_fd_buf, (size_t)n, o.token, strlen(o.token)))
                    outcome(OC_ESCAPED, 0, "read the token through %s, as its owner uid %u", path,
                            (unsigned)owner.st_uid);
            } else {
                last = errno;
            }
            if (pidfd == -2)
                pidfd = (int)syscall(SYS_pidfd_open, atoi(e->d_name), 0);
            fd = pidfd >= 0 ? (int)syscall(SYS_pidfd_getfd, pidfd, atoi(f->d_name), 0) : -1;
            if (fd >= 0) {
                ssize_t n = pread(fd, g_fd_buf, sizeof g_fd_buf, 0);
                close(fd);
                if (n > 0 && memmem(g_fd_buf, (size_t)n, o.token, strlen(o.token)))
                    outcome(OC_ESCAPED, 0, "read the token through pidfd_getfd(%s, %s)", e->d_name,
                            f->d_name);
            } else {
                last = errno;
            }
        }
        if (fdd)
            closedir(fdd);
        if (pidfd >= 0)
            close(pidfd);
        setfsuid(fsuid);
        setfsgid(fsgid);
    }
    closedir(d);
    ev_int("pids", pids);
    ev_int("fds", fds);
    int unjudged = other_rows();
    if (unjudged)
        fail(0, "%d folders other processes stand in or hold not reported (too many to report)", unjudged);
    outcome(OC_BLOCKED, last, "%d small files held by %d other visible processes: none gave the token",
            fds, pids);
}
