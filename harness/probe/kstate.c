/* The host kernel's state, scenario "privilege" (as started): every file of
 * /proc/sys, /proc/sysrq-trigger, /proc/irq, /proc/bus, /proc/acpi and /sys (every
 * cgroup hierarchy, v1 and v2, with it) that the workload can open for writing,
 * wherever the sandbox shows them: every mount of the mount table of a kernel-state
 * type (proc, sysfs, cgroup, cgroup2, securityfs, configfs, binfmt_misc, efivarfs,
 * fusectl, tracefs, debugfs) that is the one seen at its point is walked where it
 * stands (a second proc at /run/proc, a host hierarchy bound at /run/pids, a bind of
 * /proc/sys/kernel alone), each file judged by its usual name (its mount's root, below
 * the usual mount point); without a mount table, the usual paths. An open for
 * writing, nothing written, is the proof: the kernel checks a sysctl's, a sysfs
 * attribute's and a cgroup file's write permission at open, so no host state is
 * changed to show it. Left out are what belongs to the sandbox's own namespaces: a
 * network namespace's sysctls and devices, a UTS, IPC, PID or user namespace's own
 * sysctls where it has one (a PID namespace's pid_max since 6.14: before, the host's),
 * ns_last_pid without the capability its write asks (its mode lets anyone open it),
 * and the workload's own cgroup and what is below it (the folder whose cgroup.procs
 * lists it, or in a cgroup namespace of its own the whole of a mount of that
 * namespace's root; where that cannot be told, a cgroup mount whose root is not the
 * hierarchy's), but its limits (own_limits: each written its own value back); and the
 * rest of debugfs and tracefs (their tracing
 * switches are tried: tracing_on, buffer_size_kb, current_tracer, whose open only
 * checks the mode) and IMA's policy, whose files may act on open or close; and any
 * other mount inside one (a tmpfs over a folder of /sys holds no kernel state).
 * Where no file opens, a cgroup.procs is also reached another way: a process born
 * into a host folder of the unified hierarchy by clone3 (cgmove.c), through the
 * i386 entry too where x86_64's is refused. */

#include "probe.h"

#define KSTATE_MAX_FILES 60000

static struct { int files, writable_seen, cut, bpf_seen, bpf_i386, own_limit; char first[4096]; } g_ks;
#define KSTATE_DEPTH_MAX 32 /* folders below a walk's top, at most: deeper ones cut the walk (an error) */
static int g_own_ns[5]; /* uts, ipc, pid, user, net: not the kernel's initial one */

/* A namespace of this kind other than the kernel's initial one (their fixed inode
 * numbers, include/linux/proc_ns.h; the network's is fixed since 6.18: before it, no
 * namespace has that number, so every one counts as own). */
static int own_ns(const char *kind, unsigned long initial)
{
    char path[64];
    struct stat st;
    snprintf(path, sizeof path, "/proc/self/ns/%s", kind);
    return stat(path, &st) != 0 || (unsigned long)st.st_ino != initial;
}

/* Whether the probe stands in the host's own PID namespace by --host-ns (the host's
 * net, pid and mount namespaces' numbers): a host that is itself a container has no
 * initial one, and its pid_max and ns_last_pid are still the host's. */
static int host_pid_ns(void)
{
    unsigned long net, pid, mnt;
    struct stat st;
    return o.host_ns && sscanf(o.host_ns, "%lu%*[ ,]%lu%*[ ,]%lu", &net, &pid, &mnt) == 3 && pid &&
           stat("/proc/self/ns/pid", &st) == 0 && (unsigned long)st.st_ino == pid;
}

static int prefixed(const char *path, const char *prefix)
{
    size_t n = strlen(prefix);
    return !strncmp(path, prefix, n) && (path[n] == 0 || path[n] == '/');
}

/* The filesystem types of kernel state, each with its usual mount point (NULL: where
 * it stands: cgroup hierarchies have no one place). */
static const char *const g_kstate[][2] = {
    { "proc", "/proc" }, { "sysfs", "/sys" }, { "cgroup", NULL }, { "cgroup2", NULL },
    { "securityfs", "/sys/kernel/security" }, { "configfs", "/sys/kernel/config" },
    { "binfmt_misc", "/proc/sys/fs/binfmt_misc" }, { "efivarfs", "/sys/firmware/efi/efivars" },
    { "fusectl", "/sys/fs/fuse/connections" }, { "tracefs", "/sys/kernel/tracing" },
    { "debugfs", "/sys/kernel/debug" }, { "bpf", "/sys/fs/bpf" }, { NULL, NULL },
};
static int g_bpf; /* walking a bpffs: its pinned objects are opened by bpf(BPF_OBJ_GET) */

static int kstate_type(const char *type)
{
    int i = 0;
    while (g_kstate[i][0] && strcmp(type, g_kstate[i][0]))
        i++;
    return g_kstate[i][0] ? i : -1;
}

/* The usual mount point of a mount of a kernel-state type (where it stands for one
 * that has none). */
static const char *usual_place(const struct mnt *m)
{
    int i = kstate_type(m->type);
    return i >= 0 && g_kstate[i][1] ? g_kstate[i][1] : m->mp;
}

/* Whether mount `m` is the one seen at its point (st_dev there is its maj:min, as
 * mountinfo defines it): not one hidden under a later mount at or above it. */
static int visible(const struct mnt *m)
{
    struct stat st;
    return lstat(m->mp, &st) == 0 && major(st.st_dev) == m->maj && minor(st.st_dev) == m->min;
}

/* Whether this kernel keeps pid_max per PID namespace (6.14, "pid: allow pid_max to be
 * set per pid namespace"): a namespace's own, bounded by its parents'. Before it, one
 * value for the whole host. */
static int pid_max_per_ns(void)
{
    struct utsname u;
    int major = 0, minor = 0;
    if (kernel_uname(&u) != 0 || sscanf(u.release, "%d.%d", &major, &minor) != 2)
        return 0;
    return major > 6 || (major == 6 && minor >= 14);
}

/* ns_last_pid is mode 0666, but a write asks CAP_CHECKPOINT_RESTORE or CAP_SYS_ADMIN
 * over the user namespace that owns the writer's PID namespace: held where the workload
 * stands in that one (a host that is itself a container: not the initial one), never
 * from a child of it (NS_GET_USERNS answers EPERM for an owner above the caller's).
 * Where the owner cannot be told otherwise, the open decides. */
static int pid_restorer(void)
{
    struct cap_data d[2];
    struct stat mine, owner;
    uint64_t c = caps_get(d) ? ~0ULL : cap64(d[0].permitted, d[1].permitted);
    int ns = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC), u = ns < 0 ? -1 : ioctl(ns, _IO(0xb7, 0x1));
    int above = u < 0 && errno == EPERM, told = u >= 0 && fstat(u, &owner) == 0 && stat("/proc/self/ns/user", &mine) == 0;
    if (ns >= 0)
        close(ns);
    if (u >= 0)
        close(u);
    if (above)
        return 0;
    return !told || (owner.st_ino == mine.st_ino && (c & (1ULL << 21 | 1ULL << 40)));
}

/* Sysctls a namespace of the sandbox's own holds (kernel/sysctl.c, kernel/pid.c, ipc/,
 * utsname), or that it cannot write whatever the open says. */
static int namespaced_sysctl(const char *path)
{
    static const char *const uts[] = { "hostname", "domainname", NULL };
    static const char *const ipc[] = { "shmmax", "shmall", "shmmni", "shm_rmid_forced",
                                       "msgmax", "msgmni", "msgmnb", "sem", "auto_msgmni",
                                       "sem_next_id", "msg_next_id", "shm_next_id", NULL };
    if (g_own_ns[4] && prefixed(path, "/proc/sys/net"))
        return 1;
    if (g_own_ns[1] && prefixed(path, "/proc/sys/fs/mqueue"))
        return 1;
    if (g_own_ns[3] && prefixed(path, "/proc/sys/user"))
        return 1;
    if ((g_own_ns[2] || !pid_restorer()) && !strcmp(path, "/proc/sys/kernel/ns_last_pid"))
        return 1;
    if (g_own_ns[2] && !strcmp(path, "/proc/sys/kernel/pid_max") && pid_max_per_ns())
        return 1;
    if (strncmp(path, "/proc/sys/kernel/", 17))
        return 0;
    for (int i = 0; g_own_ns[0] && uts[i]; i++)
        if (!strcmp(path + 17, uts[i]))
            return 1;
    for (int i = 0; g_own_ns[1] && ipc[i]; i++)
        if (!strcmp(path + 17, ipc[i]))
            return 1;
    return 0;
}

/* Whether `file` lists `pid` (a cgroup.procs). */
static int lists_pid(const char *file, pid_t pid)
{
    FILE *f = fopen(file, "r");
    long v;
    int found = 0;
    while (f && !found && fscanf(f, "%ld", &v) == 1)
        found = v == (long)pid;
    if (f)
        fclose(f);
    return found;
}

/* The workload's own cgroup folder below mount `m` (the one whose cgroup.procs lists
 * this process, by /proc/self/cgroup's path for each hierarchy; the mount point itself
 * where a unified mount shows a subtree below the workload's cgroup), in own[]: 1
 * found, 0 the workload's cgroup is not below that mount, -1 it cannot be told. */
static int own_cgroup_dir(const struct mnt *m, char *own, size_t n)
{
    char buf[8192];
    ssize_t got = read_file("/proc/self/cgroup", buf, sizeof buf - 1);
    if (got <= 0)
        return -1;
    buf[got] = '\0';
    const char *root = strcmp(m->root, "/") ? m->root : "";
    for (char *save = NULL, *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        char *path = strchr(l, ':');
        path = path ? strchr(path + 1, ':') : NULL;
        if (!path++)
            continue;
        if (!strncmp(l, "0::", 3) && !strcmp(m->type, "cgroup2") && *root && prefixed(root, path) &&
            strcmp(root, path)) { /* the unified hierarchy's, a subtree below its own: its own */
            snprintf(own, n, "%s", m->mp);
            return 1;
        }
        if (*root && !prefixed(path, root))
            continue;
        char procs[4200];
        snprintf(own, n, "%s%s", m->mp, strcmp(path + strlen(root), "/") ? path + strlen(root) : "");
        snprintf(procs, sizeof procs, "%s/cgroup.procs", own);
        if (lists_pid(procs, getpid()))
            return 1;
    }
    return 0;
}

/* Whether `dir`, a folder of cgroup mount `m`, is its hierarchy's root cgroup: only a
 * v1 root has `release_agent`, and only a v2 root lacks `cgroup.events`. */
static int hierarchy_root(const struct mnt *m, const char *dir)
{
    char probe[4200];
    struct stat st;
    int v1 = !strcmp(m->type, "cgroup");
    snprintf(probe, sizeof probe, "%s/%s", dir, v1 ? "release_agent" : "cgroup.events");
    int has = stat(probe, &st) == 0;
    return v1 ? has : !has;
}

/* A cgroup file the host's, not the workload's own: below its mount (the longest
 * mount point above it), anything not at or below the workload's own cgroup folder
 * (a host subtree bound in, another service's cgroup beside the workload's), and
 * everything where the workload sits in the hierarchy's root cgroup. Where its own
 * cgroup cannot be told, by the mount's root: the hierarchy's is the host's; below a
 * delegated subtree, what it can write is its own. */
static int own_of(const struct mnt *m, char *own, size_t n)
{
    int state = own_cgroup_dir(m, own, n);
    if (state == 1 && hierarchy_root(m, own))
        state = 0; /* the workload sits in the root cgroup: nothing there is its own */
    if (own_ns("cgroup", 0xEFFFFFFBUL) && !strcmp(m->root, "/") && !hierarchy_root(m, m->mp)) {
        state = 1; /* its cgroup namespace's root, delegated to it, and all below: its own, */
        snprintf(own, n, "%s", m->mp); /* wherever in it the workload sits */
    }
    return state;
}

static int host_cgroup(const char *path)
{
    static const struct mnt *seen; /* the last mount asked about, and its answer */
    static int state;
    static char own[4096];
    const struct mnt *m = NULL;
    for (int i = 0; i < g_nmnt; i++)
        if (prefixed(path, g_mnt[i].mp) && (!m || strlen(g_mnt[i].mp) >= strlen(m->mp)))
            m = &g_mnt[i]; /* the last of a stack of mounts at one point is the one seen */
    if (m == NULL)
        return 1; /* not in the table: the host's as far as anyone can tell */
    if (strcmp(m->type, "cgroup") && strcmp(m->type, "cgroup2"))
        return 1; /* not a cgroup file */
    if (m != seen) {
        seen = m;
        state = own_of(m, own, sizeof own);
    }
    if (state >= 0)
        return !(state && prefixed(path, own));
    return hierarchy_root(m, m->mp);
}

/* Whether a file of a cgroup folder is a limit on the processes in it, by the names
 * the kernel's controllers give their cftypes (v1 and v2): every "*.max", "*.high",
 * "*.low", "*.min" and "*limit_in_bytes" (memory, pids, hugetlb's per page size, rdma,
 * misc, dmem, io, cpu.uclamp), and the rest by name: CPU shares, quotas, periods,
 * bursts and real-time budgets, the CPUs and memory nodes of a cpuset, I/O weights and
 * throttles, the net_cls class and net_prio priorities host firewall rules match on,
 * and the hierarchy's own caps. Not the counters a write resets (max_usage, peak). */
static int limit_file(const char *name)
{
    static const char *const named[] = {
        "cgroup.max.descendants", "cgroup.max.depth", "cpu.max.burst", "cpu.weight",
        "cpu.weight.nice", "cpu.idle", "cpu.shares", "cpu.cfs_quota_us", "cpu.cfs_period_us",
        "cpu.cfs_burst_us", "cpu.rt_runtime_us", "cpu.rt_period_us", "cpuset.cpus", "cpuset.mems",
        "cpuset.cpus.exclusive", "cpuset.cpus.partition", "io.weight", "io.bfq.weight",
        "io.latency", "io.prio.class", "blkio.weight", "blkio.weight_device", "blkio.bfq.weight",
        "blkio.bfq.weight_device", "blkio.throttle.read_bps_device", "blkio.throttle.write_bps_device",
        "blkio.throttle.read_iops_device", "blkio.throttle.write_iops_device", "net_cls.classid",
        "net_prio.ifpriomap", NULL };
    static const char *const ends[] = { ".max", ".high", ".low", ".min", "limit_in_bytes", NULL };
    size_t n = strlen(name);
    for (int i = 0; named[i]; i++)
        if (!strcmp(name, named[i]))
            return 1;
    for (int i = 0; ends[i]; i++)
        if (n > strlen(ends[i]) && !strcmp(name + n - strlen(ends[i]), ends[i]))
            return 1;
    return 0;
}

/* `path`'s own value written back, one line to a write (a cgroup file takes one
 * setting at a time: io.max, a throttle's, rdma.max list one device to a line): 0
 * where every line went through, an errno where one did not or nothing was read. */
static int lines_back(const char *path)
{
    char v[4096];
    ssize_t n = read_file(path, v, sizeof v - 1);
    if (n <= 0 || n == (ssize_t)sizeof v - 1) /* nothing, or more than it reads: untried */
        return n < 0 ? errno : EIO;
    v[n] = 0;
    int fd = open(path, O_WRONLY | O_CLOEXEC), e = fd < 0 ? errno : 0;
    for (char *save = NULL, *l = fd < 0 ? NULL : strtok_r(v, "\n", &save); l && !e;
         l = strtok_r(NULL, "\n", &save))
        if (write(fd, l, strlen(l)) != (ssize_t)strlen(l))
            e = errno ? errno : EIO;
    if (fd >= 0)
        close(fd);
    return e;
}

/* The limits on the workload's own cgroup (its folder, or its cgroup namespace's
 * root), which whoever placed it there set: delegation hands a workload cgroup.procs,
 * cgroup.threads and cgroup.subtree_control of that folder, never its limits (under
 * nsdelegate a namespace's root refuses them, at write: an open proves nothing). Each
 * limit file there (limit_file) written its own value back, as priv-root-sysctl
 * writes a sysctl. 1 where one is. */
static int own_limits(const struct mnt *m)
{
    char own[4096], path[4400];
    if (own_of(m, own, sizeof own) != 1)
        return 0;
    DIR *d = opendir(own);
    int found = 0;
    for (struct dirent *e; d && !found && (e = readdir(d)) != NULL;) {
        struct stat st;
        snprintf(path, sizeof path, "%.4000s/%s", own, e->d_name);
        if (!limit_file(e->d_name) || lstat(path, &st) != 0 || !S_ISREG(st.st_mode) || !(st.st_mode & 0222))
            continue;
        g_ks.files++;
        if ((found = lines_back(path) == 0))
            snprintf(g_ks.first, sizeof g_ks.first, "%.4000s", path);
    }
    if (d)
        closedir(d);
    return found;
}

/* A folder left out, by its usual name `canon`, or by its real `path` where another
 * mount stands there: one of a kernel-state type is walked on its own, any other holds
 * no kernel state. IMA's policy file is replaced once a writer closes it. */
static int skipped_dir(const char *path, const char *canon)
{
    static const char *const trees[] = { "/sys/kernel/debug", "/sys/kernel/tracing",
                                         "/sys/class/net", "/sys/devices/virtual/net",
                                         "/sys/kernel/security/ima",
                                         "/sys/kernel/security/integrity", NULL };
    for (int i = 0; trees[i]; i++)
        if (!strcmp(canon, trees[i]))
            return 1;
    for (int i = 0; i < g_nmnt; i++)
        if (!strcmp(path, g_mnt[i].mp))
            return 1;
    return 0;
}

/* `path` judged by its usual name `canon` (a sysctl's /proc/sys/...). */
static void try_file(const char *path, const char *canon, const struct stat *st)
{
    if (!(st->st_mode & 0222) || namespaced_sysctl(canon))
        return;
    if (!host_cgroup(path))
        return;
    g_ks.files++;
    int fd = g_bpf ? bpf_obj_get(path, &g_ks.bpf_i386) : open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return;
    if (!g_bpf)
        close(fd);
    if (!g_ks.writable_seen++) {
        snprintf(g_ks.first, sizeof g_ks.first, "%s", path);
        g_ks.bpf_seen = g_bpf;
    }
}

/* Depth-first, never through a symlink (sysfs links every device many times); `canon`
 * the folder's usual name. */
static void walk(const char *dir, const char *canon, int depth)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        goto out;
    if (depth > KSTATE_DEPTH_MAX) { /* its files never tried: no proof */
        g_ks.cut = 1;
        goto out;
    }
    for (struct dirent *e; (e = readdir(d)) != NULL && !g_ks.writable_seen && !g_cgmoves.moved;) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (g_ks.files >= KSTATE_MAX_FILES) {
            g_ks.cut = 1;
            break;
        }
        char path[4096], name[4096];
        if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path ||
            snprintf(name, sizeof name, "%s/%s", canon, e->d_name) >= (int)sizeof name)
            continue;
        struct stat st;
        if (lstat(path, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode) && !skipped_dir(path, name))
            walk(path, name, depth + 1);
        else if (S_ISREG(st.st_mode))
            try_file(path, name, &st);
    }
out:
    if (d)
        closedir(d);
    if (!g_ks.writable_seen)
        cgmove_try(dir); /* the unified hierarchy's folders (cgmove.c), its mount point unlisted too */
}

/* A tracefs (debugfs's own `tracing` with it): not walked, some of its files act when
 * opened (a trace opened with O_TRUNC is cleared); only files whose open does nothing
 * but check the mode, the kernel's tracing switches, opened O_WRONLY without O_TRUNC.
 * Writable, they turn on events that watch every host process. */
static void trace_files(const struct mnt *m)
{
    static const char *const files[] = { "tracing_on", "buffer_size_kb", "current_tracer" };
    int debugfs = !strcmp(m->type, "debugfs");
    for (size_t k = 0; k < sizeof files / sizeof files[0] && !g_ks.writable_seen; k++) {
        char path[4200];
        struct stat st;
        snprintf(path, sizeof path, "%s%s/%s", m->mp, debugfs ? "/tracing" : "", files[k]);
        if (lstat(path, &st) == 0 && S_ISREG(st.st_mode))
            try_file(path, files[k], &st);
    }
}

void chk_priv_root_kernel_state(void)
{
    g_own_ns[0] = own_ns("uts", 0xEFFFFFFEUL);
    g_own_ns[1] = own_ns("ipc", 0xEFFFFFFFUL);
    g_own_ns[2] = own_ns("pid", 0xEFFFFFFCUL) && !host_pid_ns();
    g_own_ns[3] = own_ns("user", 0xEFFFFFFDUL);
    g_own_ns[4] = own_ns("net", 0xEFFFFFF9UL);
    struct stat st;
    if (read_mounts() != 0)
        g_nmnt = 0;
    int walked = 0;
    for (int i = 0; i < g_nmnt && !g_ks.writable_seen && !g_cgmoves.moved; i++) {
        const struct mnt *m = &g_mnt[i];
        if (kstate_type(m->type) < 0 || !visible(m))
            continue;
        walked++;
        const char *root = strcmp(m->root, "/") ? m->root : "";
        char path[4096], canon[4096];
        if (!strcmp(m->type, "proc")) { /* its sysctls, sysrq-trigger, IRQ affinities, PCI
                                          * config space and ACPI wakeups (written by their
                                          * modes alone); the rest is processes' or read-only */
            if (!*root) {
                snprintf(path, sizeof path, "%s/sysrq-trigger", m->mp);
                if (lstat(path, &st) == 0 && S_ISREG(st.st_mode))
                    try_file(path, "/proc/sysrq-trigger", &st);
                static const char *const dirs[] = { "sys", "irq", "bus", "acpi" };
                for (size_t k = 0; k < sizeof dirs / sizeof dirs[0]; k++) {
                    snprintf(path, sizeof path, "%s/%s", m->mp, dirs[k]);
                    snprintf(canon, sizeof canon, "/proc/%s", dirs[k]);
                    if (!skipped_dir(path, canon)) /* a mount there is walked on its own */
                        walk(path, canon, 0);
                }
            } else if (prefixed(root, "/sys") || prefixed(root, "/irq") || prefixed(root, "/bus") ||
                       prefixed(root, "/acpi") || !strcmp(root, "/sysrq-trigger")) {
                snprintf(canon, sizeof canon, "/proc%s", root);
                if (lstat(m->mp, &st) == 0 && S_ISREG(st.st_mode))
                    try_file(m->mp, canon, &st); /* a file bound alone */
                else
                    walk(m->mp, canon, 0);
            }
            continue;
        }
        if (!strcmp(m->type, "tracefs") || !strcmp(m->type, "debugfs")) {
            trace_files(m); /* not walked: some of their files act when opened */
            continue;
        }
        snprintf(canon, sizeof canon, "%s%s", usual_place(m), root);
        g_bpf = !strcmp(m->type, "bpf");
        cgmove_begin(m);
        if ((!strcmp(m->type, "cgroup") || !strcmp(m->type, "cgroup2")) && own_limits(m)) {
            g_ks.own_limit = 1;
            break;
        }
        if (lstat(m->mp, &st) == 0 && S_ISREG(st.st_mode))
            try_file(m->mp, canon, &st);
        else
            walk(m->mp, canon, 0);
        g_bpf = 0;
        cgmove_end();
    }
    if (!walked) { /* no mount table: the usual places */
        if (lstat("/proc/sysrq-trigger", &st) == 0 && S_ISREG(st.st_mode))
            try_file("/proc/sysrq-trigger", "/proc/sysrq-trigger", &st);
        walk("/proc/sys", "/proc/sys", 0);
        walk("/proc/irq", "/proc/irq", 0);
        walk("/proc/bus", "/proc/bus", 0);
        walk("/proc/acpi", "/proc/acpi", 0);
        walk("/sys", "/sys", 0);
    }
    ev_int("files_tried", g_ks.files);
    ev_int("mounts_walked", walked);
    ev_int("cgroup_moves_tried", g_cgmoves.moves);
    ev_int("cgroup_moves_refused_by_mode", g_cgmoves.refused);
    if (g_ks.own_limit)
        outcome(OC_ESCAPED, 0, "can write %s, a limit on its own cgroup that whoever placed it there set"
                " (its own value back)", g_ks.first);
    if (g_cgmoves.moved)
        outcome(OC_ESCAPED, 0, "can start a process in the host's cgroup %s: clone3(CLONE_INTO_CGROUP)%s,"
                " though none of its files opens for writing (the child killed at once)", g_cgmoves.where,
                g_cgmoves.moved > 1 ? " through the i386 entry (int $0x80), x86_64's refused" : "");
    if (g_ks.writable_seen)
        outcome(OC_ESCAPED, 0, "can open %s for writing (nothing written)%s", g_ks.first,
                g_ks.bpf_seen ? g_ks.bpf_i386 ? ": a pinned BPF object, read-write by BPF_OBJ_GET through the i386"
                                                " entry (int $0x80), x86_64's bpf refused"
                                              : ": a pinned BPF object, read-write by BPF_OBJ_GET"
                              : "");
    if (g_ks.cut)
        outcome(OC_ERROR, 0, "none of %d kernel-state files opens for writing, but the walk was cut there"
                " (at %d files or %d folders deep): no proof for the rest", g_ks.files, KSTATE_MAX_FILES,
                KSTATE_DEPTH_MAX);
    if (g_cgmoves.over)
        outcome(OC_ERROR, 0, "no clone3(CLONE_INTO_CGROUP) of %d moved a process out of its cgroup, but %d more"
                " cgroups whose cgroup.procs' mode lets this uid write were never tried (at most %d moves):"
                " no proof that none moves", g_cgmoves.moves, g_cgmoves.over, CGMOVE_MAX);
    outcome(OC_BLOCKED, 0, "none of %d writable-mode files of /proc/sys, /proc/sysrq-trigger and /sys"
            " opens for writing (%d mounts of a kernel-state type walked where they stand)", g_ks.files,
            walked);
}
