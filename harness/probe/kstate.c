/* The host kernel's state, scenario "privilege" (as started): every file of
 * /proc/sys, /proc/sysrq-trigger and /sys (every cgroup hierarchy, v1 and v2, with
 * it) that the workload can open for writing. An open for writing, nothing written,
 * is the proof: the kernel checks a sysctl's, a sysfs attribute's and a cgroup
 * file's write permission at open, so no host state is changed to show it. Left out
 * are what belongs to the sandbox's own namespaces: a network namespace's sysctls
 * and devices, a UTS, IPC, PID or user namespace's own sysctls where it has one,
 * and a delegated cgroup subtree (a cgroup mount whose root is not the hierarchy's);
 * and debugfs and tracefs, whose files may act on open. */

#include "probe.h"

#define KSTATE_MAX_FILES 60000

static struct { int files, writable_seen, cut; char first[4096]; } g_ks;
static int g_own_ns[4]; /* uts, ipc, pid, user: not the kernel's initial one */

/* A namespace of this kind other than the kernel's initial one (their fixed inode
 * numbers, include/linux/proc_ns.h; the network's is not fixed: always own). */
static int own_ns(const char *kind, unsigned long initial)
{
    char path[64];
    struct stat st;
    snprintf(path, sizeof path, "/proc/self/ns/%s", kind);
    return stat(path, &st) != 0 || (unsigned long)st.st_ino != initial;
}

static int prefixed(const char *path, const char *prefix)
{
    size_t n = strlen(prefix);
    return !strncmp(path, prefix, n) && (path[n] == 0 || path[n] == '/');
}

/* Sysctls a namespace of the sandbox's own holds (kernel/sysctl.c, ipc/, utsname). */
static int namespaced_sysctl(const char *path)
{
    static const char *const uts[] = { "hostname", "domainname", NULL };
    static const char *const ipc[] = { "shmmax", "shmall", "shmmni", "shm_rmid_forced",
                                       "msgmax", "msgmni", "msgmnb", "sem", "auto_msgmni",
                                       "sem_next_id", "msg_next_id", "shm_next_id", NULL };
    if (prefixed(path, "/proc/sys/net"))
        return 1;
    if (g_own_ns[1] && prefixed(path, "/proc/sys/fs/mqueue"))
        return 1;
    if (g_own_ns[3] && prefixed(path, "/proc/sys/user"))
        return 1;
    if (g_own_ns[2] && !strcmp(path, "/proc/sys/kernel/ns_last_pid"))
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

/* A cgroup file the host's own tree holds: its mount (the longest mount point above
 * it) shows the hierarchy's real root, which a sandbox's delegated subtree never is:
 * only the root of a v1 hierarchy has `release_agent`, and only a v2 root lacks
 * `cgroup.events`. Below a delegated subtree, what it can write is its own. */
static int host_cgroup(const char *path)
{
    const struct mnt *m = NULL;
    for (int i = 0; i < g_nmnt; i++)
        if ((!strcmp(g_mnt[i].type, "cgroup") || !strcmp(g_mnt[i].type, "cgroup2")) &&
            prefixed(path, g_mnt[i].mp) && (!m || strlen(g_mnt[i].mp) > strlen(m->mp)))
            m = &g_mnt[i];
    if (m == NULL)
        return 1; /* not in the table: the host's as far as anyone can tell */
    char probe[4200];
    struct stat st;
    int v1 = !strcmp(m->type, "cgroup");
    snprintf(probe, sizeof probe, "%s/%s", m->mp, v1 ? "release_agent" : "cgroup.events");
    int has = stat(probe, &st) == 0;
    return v1 ? has : !has;
}

static int skipped_dir(const char *path, const struct stat *st)
{
    static const char *const trees[] = { "/sys/kernel/debug", "/sys/kernel/tracing",
                                         "/sys/class/net", "/sys/devices/virtual/net", NULL };
    for (int i = 0; trees[i]; i++)
        if (!strcmp(path, trees[i]))
            return 1;
    (void)st;
    return 0;
}

static void try_file(const char *path, const struct stat *st)
{
    if (!(st->st_mode & 0222) || namespaced_sysctl(path))
        return;
    if (prefixed(path, "/sys/fs/cgroup") && !host_cgroup(path))
        return;
    g_ks.files++;
    int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return;
    close(fd);
    if (!g_ks.writable_seen++)
        snprintf(g_ks.first, sizeof g_ks.first, "%s", path);
}

/* Depth-first, never through a symlink (sysfs links every device many times). */
static void walk(const char *dir, int depth)
{
    DIR *d = opendir(dir);
    if (d == NULL || depth > 12)
        goto out;
    for (struct dirent *e; (e = readdir(d)) != NULL && !g_ks.writable_seen;) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (g_ks.files >= KSTATE_MAX_FILES) {
            g_ks.cut = 1;
            break;
        }
        char path[4096];
        if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path)
            continue;
        struct stat st;
        if (lstat(path, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode) && !skipped_dir(path, &st))
            walk(path, depth + 1);
        else if (S_ISREG(st.st_mode))
            try_file(path, &st);
    }
out:
    if (d)
        closedir(d);
}

void chk_priv_root_kernel_state(void)
{
    g_own_ns[0] = own_ns("uts", 0xEFFFFFFEUL);
    g_own_ns[1] = own_ns("ipc", 0xEFFFFFFFUL);
    g_own_ns[2] = own_ns("pid", 0xEFFFFFFCUL);
    g_own_ns[3] = own_ns("user", 0xEFFFFFFDUL);
    read_mounts();
    struct stat st;
    if (lstat("/proc/sysrq-trigger", &st) == 0 && S_ISREG(st.st_mode))
        try_file("/proc/sysrq-trigger", &st);
    walk("/proc/sys", 0);
    walk("/sys", 0);
    ev_int("files_tried", g_ks.files);
    if (g_ks.writable_seen)
        outcome(OC_ESCAPED, 0, "can open %s for writing (nothing written)", g_ks.first);
    if (g_ks.cut)
        outcome(OC_ERROR, 0, "none of %d kernel-state files opens for writing, but the walk was cut there",
                g_ks.files);
    outcome(OC_BLOCKED, 0, "none of %d writable-mode files of /proc/sys, /proc/sysrq-trigger and /sys"
            " opens for writing", g_ks.files);
}
