/* What a root workload would try against the host, scenario "privilege": write
 * /proc/sys back, mount, rewrite a cgroup's release_agent, open by file handle, make
 * and read a block device node, hold CAP_SYS_MODULE, and the kernel operations
 * only a capability opens; each made so that success changes nothing. */

#include "probe.h"
#include <sys/timex.h>

#define PROBE_CAP_SYS_MODULE 16

/* Writable /proc/sys: write a value's own content back (changes nothing). */
/* Write one kernel value back as read; 0 if written, else the errno (or EIO). */
int write_back(const char *p)
{
    char v[256];
    ssize_t n = read_file(p, v, sizeof v);
    if (n <= 0)
        return n < 0 ? errno : EIO;
    int fd = open(p, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return errno;
    ssize_t k = write(fd, v, (size_t)n);
    int e = errno;
    close(fd);
    return k == n ? 0 : (k < 0 ? e : EIO);
}

/* Host kernel settings: a sysctl, and two under /sys that a read-write sysfs exposes
   (uevent_helper runs a program of the writer's choice on the host at the next
   uevent; a module parameter stands for the rest). Each gets its own value back. */
void chk_priv_root_sysctl(void)
{
    const char *paths[] = {
        "/proc/sys/kernel/printk_ratelimit",
        "/sys/kernel/uevent_helper",
        "/sys/module/printk/parameters/time",
    };
    int first = 0;
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        int e = write_back(paths[i]);
        if (e == 0)
            outcome(OC_ESCAPED, 0, "wrote %s (its own value back)", paths[i]);
        if (!first)
            first = e;
    }
    outcome(OC_BLOCKED, first, "write %s, /sys/kernel/uevent_helper or a /sys module parameter",
            paths[0]);
}

/* priv-root-mount: mountways.c (mount(2), the new mount API, the i386 entry). */

static void unshare_call(void *arg)
{
    (void)arg;
    unshare(CLONE_NEWNS);
}

/* A cgroup v1 release_agent written: its own value back (nothing changes, nothing
 * runs; the kernel checks CAP_SYS_ADMIN in the initial namespace at write time,
 * so opening it is no proof). One already mounted, else a hierarchy mounted in a
 * private mount namespace. 0, or the errno of the refusal. */
static int rewrite_agent(const char *path)
{
    char v[4096];
    ssize_t n = read_file(path, v, sizeof v - 1);
    if (n < 0)
        return errno;
    if (n == 0)
        v[n++] = '\n';
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return errno;
    ssize_t k = write(fd, v, (size_t)n);
    int e = k == n ? 0 : k < 0 ? errno : EIO;
    close(fd);
    return e;
}

void chk_priv_root_release_agent(void)
{
    char p[4096];
    int e = 0, seen = 0;
    if (read_mounts() == 0)
        for (int i = 0; i < g_nmnt; i++) {
            if (strcmp(g_mnt[i].type, "cgroup"))
                continue;
            snprintf(p, sizeof p, "%s/release_agent", g_mnt[i].mp);
            seen++;
            if ((e = rewrite_agent(p)) == 0)
                outcome(OC_ESCAPED, 0, "wrote %s (its own value back)", p);
        }
    ev_int("mounted_release_agents", seen);
    const char *opts[] = { "rdma", "none,name=harness-probe" };
    char step[120] = "mount a cgroup v1 hierarchy and write its release_agent";
    if (killed_on(unshare_call, NULL) || unshare(CLONE_NEWNS) != 0)
        e = e ? e : errno, snprintf(step, sizeof step, "%d mounted release_agent(s) not writable;"
                                    " unshare(CLONE_NEWNS)", seen);
    else if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        e = errno, snprintf(step, sizeof step, "make the new mount namespace private");
    else {
        struct stat st;
        const char *dir = stat("/tmp", &st) == 0 && S_ISDIR(st.st_mode) ? "/tmp" : "/dev";
        for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
            if (mount("cgroup", dir, "cgroup", MS_NOSUID | MS_NODEV | MS_NOEXEC, opts[i]) != 0) {
                e = errno;
                continue;
            }
            snprintf(p, sizeof p, "%s/release_agent", dir);
            e = rewrite_agent(p);
            umount2(dir, MNT_DETACH);
            if (e == 0)
                outcome(OC_ESCAPED, 0, "mounted cgroup v1 (%s) and wrote its release_agent (its own value back)", opts[i]);
        }
    }
    /* mount(2) refused (or its namespace): the new mount API's detached hierarchy */
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
        if (agent_by_fsmount(opts[i]) == 0)
            outcome(OC_ESCAPED, 0, "made a cgroup v1 hierarchy (%s) by fsmount: the new mount API (detached,"
                    " attached nowhere; mount(2)'s way: %s), and wrote its release_agent (its own value back)",
                    opts[i], e ? strerror(e) : "not refused");
    outcome(OC_BLOCKED, e, "%s", step);
}

/* A handle below mount point mp opened (by `way`). Outside the initial user namespace
 * the kernel (6.10 on) decodes a handle only on a filesystem of the caller's own
 * namespace or within the mount's subtree, with permission checks: the ext4 root
 * behind a bind is stale. */
__attribute__((noreturn)) static void handle_opened(const char *mp, const char *way)
{
    if (!initial_userns())
        outcome(OC_BLOCKED, 0, "open_by_handle_at on %s succeeded%s, in a child user namespace"
                " (only what that mount's own path reaches)", mp, way);
    outcome(OC_ESCAPED, 0, "open_by_handle_at on %s succeeded%s (CAP_DAC_READ_SEARCH)", mp, way);
}

/* A handle's open, for killed_on. */
void handle_open_call(void *arg)
{
    const struct handle_open *h = arg;
    open_by_handle_at(h->mfd, h->fh, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

static void handle_name_call(void *arg)
{
    struct { struct file_handle fh; unsigned char f[128]; } h;
    int mid;
    h.fh.handle_bytes = sizeof h.f;
    name_to_handle_at(AT_FDCWD, "/", &h.fh, &mid, 0);
    (void)arg;
}

/* Whether a filter kills the process on name_to_handle_at (SIGSYS): refused. */
int handle_name_killed(void)
{
    static int killed = -1;
    return killed < 0 ? (killed = killed_on(handle_name_call, NULL)) : killed;
}

/* open_by_handle_at on any visible filesystem: needs CAP_DAC_READ_SEARCH. */
void chk_priv_root_handle(void)
{
    struct { struct file_handle fh; unsigned char f[128]; } h;
    int mid, e = ENOENT;
    if (read_mounts() != 0)
        fail(errno, "read /proc/self/mountinfo");
    if (handle_name_killed()) {
        for (int i = 0; i < g_nmnt; i++)
            if (handle_i386(g_mnt[i].mp) == 0)
                handle_opened(g_mnt[i].mp, " through the i386 entry (int $0x80), x86_64's refused");
        outcome(OC_BLOCKED, EPERM, "name_to_handle_at: the process killed (SIGSYS, a seccomp filter)");
    }
    for (int i = 0; i < g_nmnt; i++) {
        h.fh.handle_bytes = sizeof h.f;
        if (name_to_handle_at(AT_FDCWD, g_mnt[i].mp, &h.fh, &mid, 0) != 0) {
            e = errno;
            if ((e == EPERM || e == ENOSYS) && handle_i386(g_mnt[i].mp) == 0)
                handle_opened(g_mnt[i].mp, " through the i386 entry (int $0x80), x86_64's refused");
            continue;
        }
        int mfd = open(g_mnt[i].mp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (mfd < 0)
            continue;
        struct handle_open call = { mfd, &h.fh };
        if (killed_on(handle_open_call, &call)) {
            close(mfd);
            if (handle_i386(g_mnt[i].mp) == 0)
                handle_opened(g_mnt[i].mp, " through the i386 entry (int $0x80), x86_64's refused");
            outcome(OC_BLOCKED, EPERM, "open_by_handle_at on %s: the process killed (SIGSYS, a"
                    " seccomp filter)", g_mnt[i].mp);
        }
        int fd = open_by_handle_at(mfd, &h.fh, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        e = errno;
        close(mfd);
        if (fd >= 0) {
            close(fd);
            handle_opened(g_mnt[i].mp, "");
        }
        if ((e == EPERM || e == ENOSYS) && handle_i386(g_mnt[i].mp) == 0)
            handle_opened(g_mnt[i].mp, " through the i386 entry (int $0x80), x86_64's refused");
        outcome(OC_BLOCKED, e, "open_by_handle_at on %s", g_mnt[i].mp);
    }
    outcome(OC_BLOCKED, e, "name_to_handle_at on every mount");
}

/* mknod a block device for a disk behind a visible mount and read one sector. */
static char g_node[256];
static void unlink_node(void)
{
    if (g_node[0])
        unlink(g_node);
}

/* Read one sector through a block device node, or else open it for writing (nothing
 * written: Landlock's WRITE_FILE alone on /dev/vda lets a disk be written but not
 * read); escaped on either. */
static void read_sector(const char *node, unsigned maj, unsigned min, const char *how, int *e)
{
    int fd = open(node, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    *e = errno;
    if (fd < 0) {
        fd = open(node, O_WRONLY | O_CLOEXEC | O_NONBLOCK);
        if (fd >= 0) {
            close(fd);
            outcome(OC_ESCAPED, 0, "opened block device %u:%u %s for writing (nothing written)",
                    maj, min, how);
        }
        return;
    }
    char sector[512];
    ssize_t n = read(fd, sector, sizeof sector);
    *e = errno;
    close(fd);
    if (n == 512)
        outcome(OC_ESCAPED, 0, "read a sector of block device %u:%u %s", maj, min, how);
}

/* Block device nodes at any depth below `dir` (never through a symlink; /dev's pts,
 * shm, mqueue and hugepages hold none): those of maj:min, or every one where `any`,
 * each read (one sector). A node one folder down (`--device /dev/sdb:/dev/disk/data`)
 * is as much in reach as one in /dev itself. */
static void blk_nodes(const char *dir, int depth, int any, unsigned maj, unsigned min, int *e, int *tried)
{
    static const char *const none[] = { "pts", "shm", "mqueue", "hugepages" };
    DIR *d = depth < 8 ? opendir(dir) : NULL;
    for (struct dirent *x; d && (x = readdir(d));) {
        char p[512];
        struct stat st;
        int skip = x->d_name[0] == '.' && (!x->d_name[1] || (x->d_name[1] == '.' && !x->d_name[2]));
        for (size_t k = 0; k < sizeof none / sizeof none[0] && !depth; k++)
            skip |= !strcmp(x->d_name, none[k]);
        if (skip || snprintf(p, sizeof p, "%s/%s", dir, x->d_name) >= (int)sizeof p || lstat(p, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode))
            blk_nodes(p, depth + 1, any, maj, min, e, tried);
        else if (S_ISBLK(st.st_mode) && (any || (major(st.st_rdev) == maj && minor(st.st_rdev) == min))) {
            (*tried)++;
            char how[600];
            snprintf(how, sizeof how, "through its node %s", p);
            read_sector(p, major(st.st_rdev), minor(st.st_rdev), how, e);
        }
    }
    if (d)
        closedir(d);
}

void chk_priv_root_mknod(void)
{
    const char *dirs[] = { "/tmp", o.allowed_dir, "/dev" };
    int e = ENOENT, tried = 0;
    if (read_mounts() != 0)
        fail(errno, "read /proc/self/mountinfo");
    g_cleanup = unlink_node;
    for (int i = 0; i < g_nmnt; i++) {
        if (g_mnt[i].maj == 0)
            continue;
        int dup = 0;
        for (int j = 0; j < i; j++)
            dup |= g_mnt[j].maj == g_mnt[i].maj && g_mnt[j].min == g_mnt[i].min;
        if (dup)
            continue;
        blk_nodes("/dev", 0, 0, g_mnt[i].maj, g_mnt[i].min, &e, &tried); /* as the host has for its disk */
        for (size_t k = 0; k < sizeof dirs / sizeof dirs[0]; k++) {
            if (!dirs[k])
                continue;
            tried++;
            snprintf(g_node, sizeof g_node, "%s/harness-blk-%d", dirs[k], (int)getpid());
            dev_t dev = makedev(g_mnt[i].maj, g_mnt[i].min);
            const char *way = "";
            if (mknod(g_node, S_IFBLK | 0600, dev) != 0) {
                e = errno;
                if ((e != EPERM && e != ENOSYS) || mknod_i386(g_node, S_IFBLK | 0600, (unsigned)dev) != 0) {
                    g_node[0] = '\0';
                    continue;
                }
                way = " through the i386 entry (int $0x80), x86_64's refused";
            }
            char how[300];
            snprintf(how, sizeof how, "through a node made in %s%s", dirs[k], way);
            read_sector(g_node, g_mnt[i].maj, g_mnt[i].min, how, &e);
            unlink(g_node);
            g_node[0] = '\0';
        }
    }
    /* Every node already there, whatever it backs: a host disk, loop device or zram
     * passed into the sandbox is host storage in reach, even when no mount names it. */
    blk_nodes("/dev", 0, 1, 0, 0, &e, &tried);
    /* Where /dev does not list (Landlock granting one node of it): each of the host's
     * block devices by its name (--block-devs, /sys/class/block's on the host). */
    for (const char *p = o.block_devs ? o.block_devs : ""; *p;) {
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char node[256];
        struct stat st;
        p += len + (end != NULL);
        if (len >= sizeof node)
            continue;
        memcpy(node, p - len - (end != NULL), len);
        node[len] = 0;
        if (lstat(node, &st) != 0 || !S_ISBLK(st.st_mode))
            continue;
        tried++;
        char how[300];
        snprintf(how, sizeof how, "through its node %s", node);
        read_sector(node, major(st.st_rdev), minor(st.st_rdev), how, &e);
    }
    ev_int("tried", tried);
    outcome(OC_BLOCKED, e, "mknod and read %d block device node(s)", tried);
}

/* Holding CAP_SYS_MODULE in the initial namespace is the finding: load nothing. */
void chk_priv_root_sys_module(void)
{
    struct cap_data d[2];
    if (caps_get(d) != 0)
        fail(errno, "capget");
    int held = (d[0].effective | d[0].permitted) >> PROBE_CAP_SYS_MODULE & 1;
    if (held && initial_userns())
        outcome(OC_ESCAPED, 0, "holds CAP_SYS_MODULE in the initial user namespace (nothing loaded)");
    outcome(OC_BLOCKED, 0, held ? "CAP_SYS_MODULE held only in a child user namespace"
                               : "CAP_SYS_MODULE not held");
}


/* What only CAP_SYS_BOOT, CAP_SYS_TIME, CAP_SYS_ADMIN, CAP_SYS_PACCT, CAP_SYSLOG,
 * CAP_SYS_RAWIO, CAP_BPF and CAP_PERFMON open, each asked so that success changes
 * nothing: an argument the kernel refuses only after the capability check (a bad
 * reboot magic, a tick out of range, a path that cannot exist, too many kexec
 * segments), or something undone at once (an I/O port, a BPF program never
 * attached, a disabled perf event). Every errno is recorded. */
struct kattempt { const char *name; int granted; int e; int i386; const char *via, *what; int which; };

static int perf_paranoid(void)
{
    char v[16];
    return read_file("/proc/sys/kernel/perf_event_paranoid", v, sizeof v - 1) > 0 ? atoi(v) : 2;
}

static void k_try(struct kattempt *a, long r, int ok_errno)
{
    a->e = r == 0 || r > 0 ? 0 : errno;
    a->granted = r >= 0 || (ok_errno && a->e == ok_errno);
}

/* Attempt `which` of chk_priv_root_kernel, its result (0 or more: granted, or -1 with
 * errno). Each is made in a child: a filter that kills on one (SIGSYS) refuses it, and
 * the next is still asked; what one changes (an I/O port, a program, an event) ends
 * with the child. */
enum { K_REBOOT, K_KEXEC, K_ADJTIMEX, K_SWAPON, K_ACCT, K_SYSLOG, K_HOSTNAME, K_IOPERM, K_BPF, K_PERF, K_N,
       /* another call into the same operation (k_siblings) */
       K_CLOCK_ADJTIME = K_N, K_SETTIMEOFDAY, K_ALL };
static const char *const k_names[K_ALL] = {
    "reboot (bad magic)", "kexec_load (too many segments)", "adjtimex (tick 0)", "swapon (no such file)",
    "acct (no such file)", "syslog (unknown action)", "sethostname (too long)", "ioperm (port 0x80)",
    "bpf (load a kprobe program)", "perf_event_open (a CPU, kernel included)",
    "clock_adjtime(CLOCK_REALTIME) (tick 0)", "settimeofday(NULL, NULL)",
};
/* The capabilities each of the first K_N asks (any one will do; -1: none listed, and
 * perf_event_open asks none where perf_event_paranoid lets anyone): one the process
 * holds in no set is refused by every entry alike, so the i386 entry is not asked
 * (each call there is a child, slow under gVisor's ptrace platform). */
static const int k_caps[K_N][2] = {
    { 22, -1 } /* CAP_SYS_BOOT */, { 22, -1 }, { 25, -1 } /* CAP_SYS_TIME */, { 21, -1 } /* CAP_SYS_ADMIN */,
    { 20, -1 } /* CAP_SYS_PACCT */, { 34, 21 } /* CAP_SYSLOG */, { 21, -1 }, { 17, -1 } /* CAP_SYS_RAWIO */,
    { 39, 21 } /* CAP_BPF */, { -2, -2 },
};

/* May the process hold what attempt `which` asks (effective or permitted; capget
 * refused: it may)? */
static int k_may(int which)
{
    struct cap_data d[2];
    memset(d, 0xff, sizeof d); /* a capget a filter answers without filling: may hold all */
    if (which >= K_N || k_caps[which][0] == -2 || caps_get(d) != 0)
        return 1;
    for (int k = 0; k < 2 && k_caps[which][k] >= 0; k++) {
        int cap = k_caps[which][k];
        if ((d[cap / 32].effective | d[cap / 32].permitted) >> (cap % 32) & 1)
            return 1;
    }
    return 0;
}

static const int k_ok_errno[K_ALL] = { EINVAL, EINVAL, EINVAL, ENOENT, ENOENT, EINVAL, EINVAL, 0, 0, 0, EINVAL, 0 };

/* The other calls into an attempt's operation, tried where its own call is refused as a
 * filter refuses (EPERM, ENOSYS, or the child killed): a deny-list of the older call
 * alone leaves them open. The clock's parameters: clock_adjtime(CLOCK_REALTIME) (2.6.39)
 * is adjtimex by another number, checked as it is (CAP_SYS_TIME, then the tick refused);
 * settimeofday with neither time nor zone asks CAP_SYS_TIME and sets nothing. */
static const struct { int of, way; const char *what; } k_siblings[] = {
    { K_ADJTIMEX, K_CLOCK_ADJTIME, "the host clock's parameters set by another call" },
    { K_ADJTIMEX, K_SETTIMEOFDAY, "the host's clock (and its timezone) set by another call" },
};

static long k_call(int which)
{
    static char name[1100];
    switch (which) {
    case K_REBOOT:
        return syscall(SYS_reboot, 0, 0, 0, NULL);
    case K_KEXEC:
#ifdef SYS_kexec_load
        return syscall(SYS_kexec_load, 0UL, 1000UL, NULL, 0UL);
#else
        return errno = ENOSYS, -1;
#endif
    case K_ADJTIMEX: {
        struct timex tx = { .modes = ADJ_TICK, .tick = 0 };
        return syscall(SYS_adjtimex, &tx);
    }
    case K_CLOCK_ADJTIME: {
        struct timex tx = { .modes = ADJ_TICK, .tick = 0 };
        return syscall(SYS_clock_adjtime, CLOCK_REALTIME, &tx);
    }
    case K_SETTIMEOFDAY:
        return syscall(SYS_settimeofday, NULL, NULL);
    case K_SWAPON:
        return syscall(SYS_swapon, "/proc/harness-no-such-file", 0);
    case K_ACCT:
        return syscall(SYS_acct, "/proc/harness-no-such-file");
    case K_SYSLOG:
        return syscall(SYS_syslog, 9999, NULL, 0);
    case K_HOSTNAME:
        memset(name, 'h', sizeof name);
        return syscall(SYS_sethostname, name, sizeof name);
    case K_IOPERM: {
#if defined(__x86_64__) || defined(__i386__)
        long r = syscall(SYS_ioperm, 0x80UL, 1UL, 1);
        if (r == 0)
            syscall(SYS_ioperm, 0x80UL, 1UL, 0);
        return r;
#else
        return errno = ENOSYS, -1;
#endif
    }
    case K_BPF: {
        /* r0 = 0; exit: a kprobe program, loaded and never attached */
        struct { uint8_t code, regs; int16_t off; int32_t imm; } insns[2] = { { 0xb7, 0, 0, 0 }, { 0x95, 0, 0, 0 } };
        uint64_t battr[16] = { 0 };
        battr[0] = 2 | (uint64_t)2 << 32; /* BPF_PROG_TYPE_KPROBE, two instructions */
        battr[1] = (uint64_t)(uintptr_t)insns;
        battr[2] = (uint64_t)(uintptr_t)"GPL";
        long fd = syscall(SYS_bpf, 5 /* BPF_PROG_LOAD */, battr, sizeof battr);
        if (fd >= 0)
            close((int)fd);
        return fd < 0 ? -1 : 0;
    }
    case K_PERF: {
        /* A disabled software event on one CPU, kernel included: CAP_PERFMON, unless
         * perf_event_paranoid lets anyone (then it proves nothing). */
        uint32_t pattr[32] = { 0 };
        pattr[0] = 1;            /* PERF_TYPE_SOFTWARE, config 0: the CPU clock */
        pattr[1] = sizeof pattr; /* size */
        pattr[10] = 1;           /* disabled; exclude_kernel left clear */
        long fd = syscall(SYS_perf_event_open, pattr, -1, 0, -1, 0UL);
        if (fd >= 0)
            close((int)fd);
        return fd < 0 ? -1 : 0;
    }
    }
    return errno = ENOSYS, -1;
}

/* Attempt `which` in a child: *a as k_try records it; killed: refused (EPERM). */
static void k_child(struct kattempt *a, int which, int *killed)
{
    int p[2];
    long res[2] = { -1, EIO };
    a->name = k_names[which];
    a->which = which;
    if (pipe(p) != 0)
        fail(errno, "pipe");
    pid_t pid = fork();
    if (pid < 0)
        fail(errno, "fork");
    if (pid == 0) {
        close(p[0]);
        long r = k_call(which);
        res[0] = r, res[1] = r < 0 ? errno : 0;
        _exit(write(p[1], res, sizeof res) == sizeof res ? 0 : 1);
    }
    close(p[1]);
    int got = read(p[0], res, sizeof res) == sizeof res, st = 0;
    close(p[0]);
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (!got && WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS) {
        (*killed)++;
        a->e = EPERM, a->granted = 0;
        return;
    }
    if (!got)
        fail(0, "%s: its child ended without a result (status %d)", a->name, st);
    errno = (int)res[1];
    k_try(a, res[0], k_ok_errno[which]);
}

void chk_priv_root_kernel(void)
{
    struct kattempt a[K_N] = { 0 };
    int n = 0, killed = 0;
    for (int which = 0; which < K_N; which++) {
#ifndef SYS_kexec_load
        if (which == K_KEXEC)
            continue;
#endif
#if !defined(__x86_64__) && !defined(__i386__)
        if (which == K_IOPERM)
            continue;
#endif
        k_child(&a[n++], which, &killed);
    }
    int paranoid = perf_paranoid();
    a[n - 1].granted &= paranoid >= 1; /* perf_event_open, the last */
    /* Each refused as a filter refuses, by the other calls into its operation. */
    for (int i = 0; i < n; i++)
        for (size_t k = 0; k < sizeof k_siblings / sizeof k_siblings[0]; k++) {
            struct kattempt b = { 0 };
            if (a[i].granted || (a[i].e != EPERM && a[i].e != ENOSYS) || strcmp(a[i].name, k_names[k_siblings[k].of]))
                continue;
            k_child(&b, k_siblings[k].way, &killed);
            if (b.granted)
                a[i].granted = 1, a[i].via = b.name, a[i].what = k_siblings[k].what;
        }
    /* Each refused as a filter refuses (killed too), again through the i386 entry (rootways.c),
     * the clock's other setters there too; the errno recorded stays x86_64's. */
    for (int i = 0; i < n; i++) {
        const char *via = NULL;
        if (!a[i].granted && (a[i].e == EPERM || a[i].e == ENOSYS) && k_may(a[i].which) &&
            kernel_i386(a[i].name, &via) > 0) {
            a[i].granted = a[i].i386 = strncmp(a[i].name, "perf_event_open", 15) || paranoid >= 1;
            if (via) /* the clock's other setter there: what it sets, as k_siblings says */
                a[i].via = via, a[i].what = k_siblings[strncmp(via, "settimeofday", 12) ? 0 : 1].what;
        }
    }
    int init = initial_userns();
    char list[800];
    size_t len = 0;
    list[0] = '\0';
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s: %s%s%s", i ? "; " : "", a[i].name,
                                a[i].granted ? a[i].i386 ? "allowed (i386)" : "allowed" : strerror(a[i].e),
                                a[i].via ? " by " : "", a[i].via ? a[i].via : "");
    ev_str("attempts", list);
    ev_int("perf_event_paranoid", paranoid);
    for (int i = 0; i < n; i++)
        /* reboot and sethostname ask the namespace's own user namespace */
        if (a[i].granted && (init || (strncmp(a[i].name, "reboot", 6) && strncmp(a[i].name, "sethostname", 11)))) {
            if (a[i].via) /* its own call refused: the other call into the same operation */
                outcome(OC_ESCAPED, 0, "%s allowed%s, %s refused%s: %s (nothing changed)", a[i].via,
                        a[i].i386 ? " through the i386 entry (int $0x80)" : "", a[i].name,
                        a[i].i386 ? " on both entries" : "", a[i].what);
            outcome(OC_ESCAPED, 0, "%s allowed%s (nothing changed)", a[i].name,
                    a[i].i386 ? " through the i386 entry (int $0x80), x86_64's refused" : "");
        }
    if (killed) /* by a filter (SIGSYS): refused, the kernel never ran them */
        outcome(OC_BLOCKED, a[0].e, "%d kernel operations refused (%d of them by killing the process:"
                " SIGSYS, a seccomp filter)", n, killed);
    outcome(OC_BLOCKED, n ? a[0].e : 0, "%d kernel operations refused", n);
}
