/* Scenario "privilege": the credentials the workload starts with, what a root
 * workload would try, and the unprivileged attempts. */

#include "probe.h"
#include <sys/ptrace.h>
#include <sys/timex.h>

static int caps_get(struct cap_data d[2])
{
    struct cap_header h = { PROBE_CAP_VERSION_3, 0 };
    memset(d, 0, 2 * sizeof *d);
    return (int)syscall(SYS_capget, &h, d);
}

static uint64_t cap64(uint32_t lo, uint32_t hi) { return (uint64_t)hi << 32 | lo; }

/* The bounding (PR_CAPBSET_READ) or ambient (PR_CAP_AMBIENT_IS_SET) set. */
static uint64_t cap_set_by_prctl(int ambient)
{
    uint64_t m = 0;
    for (unsigned long c = 0; c < 64; c++) {
        int r = ambient ? prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, c, 0, 0)
                        : prctl(PR_CAPBSET_READ, c, 0, 0, 0);
        if (r < 0)
            break; /* EINVAL past the last capability */
        if (r > 0)
            m |= 1ULL << c;
    }
    return m;
}

static void bcap(Buf *b, const char *key, uint64_t v)
{
    bput(b, ",\"%s\":\"%016llx\"", key, (unsigned long long)v);
}

/* "uid":..,"euid":..,"cap_eff":..,"nnp":.. and, if full, the other sets. */
void put_creds(Buf *b, int full)
{
    struct cap_data d[2];
    int e = caps_get(d) ? errno : 0;
    bput(b, "\"uid\":%u,\"euid\":%u,\"egid\":%u", (unsigned)getuid(), (unsigned)geteuid(),
         (unsigned)getegid());
    bcap(b, "cap_eff", cap64(d[0].effective, d[1].effective));
    bput(b, ",\"nnp\":%d", prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
    if (full) {
        bput(b, ",\"gid\":%u", (unsigned)getgid());
        bcap(b, "cap_prm", cap64(d[0].permitted, d[1].permitted));
        bcap(b, "cap_inh", cap64(d[0].inheritable, d[1].inheritable));
        bcap(b, "cap_bnd", cap_set_by_prctl(0));
        bcap(b, "cap_amb", cap_set_by_prctl(1));
    }
    if (e)
        bkv(b, "detail", strerror(e));
}

void chk_creds(void)
{
    Buf b = { .n = 0 };
    put_creds(&b, 1);
    send_result(&b);
}

/* What `<file> whoami` reported when run. */

/* Run `<path> whoami` in a grandchild, stdout to a pipe (as the caller is: the
 * unprivileged attempts drop privileges first). */
void run_whoami(const char *path, struct whoami *w)
{
    char out[1024];
    char *const argv[] = { (char *)path, "whoami", NULL };
    int st = run_program(path, argv, NULL, 0, 0, out, sizeof out);
    const char *ee = strstr(out, "\"exec_errno\":"), *eu = strstr(out, "\"euid\":"),
               *ce = strstr(out, "\"cap_eff\":\"");
    if (ee)
        outcome("blocked", atoi(ee + 13), "execve(%s)", path);
    if (!eu || !ce)
        fail(0, "helper %s printed no whoami line (wait status 0x%x): \"%.100s\"", path, (unsigned)st, out);
    const char *eg = strstr(out, "\"egid\":");
    w->euid = (unsigned)strtoul(eu + 7, NULL, 10);
    w->egid = eg ? (unsigned)strtoul(eg + 7, NULL, 10) : (unsigned)-1;
    w->cap_eff = strtoull(ce + 11, NULL, 16);
}

/* A helper run as the unprivileged uid. */
static void exec_helper(const char **opt, struct whoami *w)
{
    const char *path = need(opt);
    drop_privs();
    run_whoami(path, w);
}

void chk_priv_setuid_exec(void)
{
    struct whoami w;
    exec_helper(&o.setuid_helper, &w);
    ev_int("euid", w.euid);
    outcome(w.euid == 0 ? "escaped" : "blocked", 0, "the setuid helper ran with euid %u", w.euid);
}

/* The helper is setgid to group 0: running with egid 0 is the gain. */
void chk_priv_setgid_exec(void)
{
    struct whoami w;
    exec_helper(&o.setgid_helper, &w);
    if (w.egid == (unsigned)-1)
        fail(0, "the setgid helper reported no egid");
    ev_int("egid", w.egid);
    outcome(w.egid == 0 ? "escaped" : "blocked", 0, "the setgid helper ran with egid %u", w.egid);
}

/* The errno with which `<path> whoami` could not be executed; 0 if it ran. */
static int whoami_exec_errno(const char *path)
{
    char out[1024];
    char *const argv[] = { (char *)path, "whoami", NULL };
    run_program(path, argv, NULL, 0, 0, out, sizeof out);
    const char *ee = strstr(out, "\"exec_errno\":");
    return ee ? atoi(ee + 13) : 0;
}

#define ST_NOSUID_ 2 /* statfs's f_flags */

/* Why an EPERM from execve(path) cannot be the kernel's refusal of a file capability
 * outside the bounding set `bnd`, or NULL if it can be: that refusal needs the
 * capability honoured (no nosuid mount), carried (the xattr) and out of the set. */
static const char *not_fcap_refusal(const char *path, uint64_t bnd)
{
    struct statfs sf;
    if (bnd >> PROBE_CAP_NET_RAW & 1)
        return "CAP_NET_RAW is in the bounding set";
    if (statfs(path, &sf) == 0 && sf.f_flags & ST_NOSUID_)
        return "its mount is nosuid, where file capabilities are ignored";
    if (getxattr(path, "security.capability", NULL, 0) < 0 && errno == ENODATA)
        return "the file carries no capability here";
    return NULL;
}

/* The helper carries cap_net_raw+ep. Run, CAP_NET_RAW in its effective set is the
 * gain. Refused EPERM while `other`, the same program without a capability, runs:
 * the kernel honoured the file capability and found CAP_NET_RAW outside the
 * bounding set (a sandbox that drops it, as `--cap-drop NET_RAW` does). Without
 * no_new_privs, a file carrying a capability the bounding set holds then grants it
 * all the same: the gain, unless that set is empty. An EPERM the kernel's rule
 * cannot explain (CAP_NET_RAW bounded, a nosuid mount, no xattr) is another
 * refusal's (an exec-control LSM, fanotify): blocked. */
void chk_priv_fcap_exec(void)
{
    struct whoami w;
    char hex[24];
    const char *path = need(&o.fcap_helper);
    drop_privs();
    if (o.other_binary && whoami_exec_errno(path) == EPERM && whoami_exec_errno(o.other_binary) == 0) {
        uint64_t bnd = cap_set_by_prctl(0);
        int nnp = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
        const char *other = not_fcap_refusal(path, bnd);
        snprintf(hex, sizeof hex, "%016llx", (unsigned long long)bnd);
        ev_str("cap_bnd", hex);
        ev_int("nnp", nnp);
        if (other != NULL)
            outcome("blocked", EPERM, "execve(%s) refused EPERM, not for its file capability: %s", path, other);
        if (nnp == 0 && bnd && initial_userns())
            outcome("escaped", 0, "execve(%s) refused EPERM while %s runs: file capabilities are honoured"
                    " without no_new_privs, CAP_NET_RAW is outside the bounding set %s, and a file"
                    " carrying one it holds grants it", path, o.other_binary, hex);
        outcome("blocked", EPERM, "execve(%s): the file capability is honoured, but %s", path,
                nnp ? "no_new_privs is set" : bnd ? "in a child user namespace" : "the bounding set is empty");
    }
    run_whoami(path, &w);
    uint64_t caps = w.cap_eff;
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)caps);
    ev_str("cap_eff", hex);
    /* Granted in the user namespace drop_privs made (rootless): capabilities over
     * what that namespace owns, which is nothing (a raw socket stays refused). */
    if (g_own_userns && caps >> PROBE_CAP_NET_RAW & 1)
        outcome("blocked", 0, "the fcap helper ran with CapEff %s, in the probe's own user namespace,"
                " which owns no network namespace", hex);
    outcome(caps >> PROBE_CAP_NET_RAW & 1 ? "escaped" : "blocked", 0,
            "the fcap helper ran with CapEff %s", hex);
}

/* As the unprivileged uid: setuid(0), then setgid(0) (CAP_SETGID alone makes
 * group 0 the process's: every file group root may read or write). */
void chk_priv_setuid0(void)
{
    drop_privs();
    int e = setuid(0) == 0 ? 0 : errno;
    ev_int("euid", geteuid());
    if (e == 0)
        outcome(geteuid() == 0 ? "escaped" : "succeeded", 0, "setuid(0) returned 0");
    if (setgid(0) == 0) {
        ev_int("egid", getegid());
        outcome(getegid() == 0 ? "escaped" : "succeeded", 0, "setuid(0) refused (%s), setgid(0) returned 0",
                strerror(e));
    }
    outcome("blocked", e, "setuid(0), and setgid(0) (%s)", strerror(errno));
}

/* As the unprivileged uid: raise CAP_SYS_ADMIN, and every capability still held
 * permitted but not effective (dormant: one capset from use, e.g. a program's file
 * capability without +e). The kernel grows no permitted set, so a capability the
 * uid did not hold stays refused; any capability made effective is the gain. */
void chk_priv_capset(void)
{
    struct cap_header h = { PROBE_CAP_VERSION_3, 0 };
    struct cap_data d[2];
    char hex[24];
    drop_privs();
    if (caps_get(d) != 0)
        fail(errno, "capget");
    uint64_t before = cap64(d[0].effective, d[1].effective);
    for (int i = 0; i < 2; i++)
        d[i].effective |= d[i].permitted;
    d[0].effective |= 1U << PROBE_CAP_SYS_ADMIN;
    d[0].permitted |= 1U << PROBE_CAP_SYS_ADMIN;
    int e = 0;
    if (syscall(SYS_capset, &h, d) != 0) {
        e = errno; /* CAP_SYS_ADMIN refused: raise what is permitted alone */
        if (caps_get(d) != 0)
            fail(errno, "capget");
        for (int i = 0; i < 2; i++)
            d[i].effective |= d[i].permitted;
        if (syscall(SYS_capset, &h, d) != 0)
            outcome("blocked", errno, "capset(+CAP_SYS_ADMIN) (%s), and of the permitted set", strerror(e));
    }
    if (caps_get(d) != 0)
        fail(errno, "capget");
    uint64_t gained = cap64(d[0].effective, d[1].effective) & ~before;
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)gained);
    ev_int("cap_sys_admin", d[0].effective >> PROBE_CAP_SYS_ADMIN & 1);
    ev_str("raised", hex);
    if (gained)
        outcome("escaped", 0, "capset raised capabilities %s as uid %u", hex, (unsigned)geteuid());
    outcome("blocked", e, "capset(+CAP_SYS_ADMIN); no capability held permitted but not effective");
}

/* As the unprivileged uid: raise CAP_NET_RAW, and every capability both permitted
 * and inheritable, into the ambient set, where every program run after keeps it
 * (not only a program whose file carries it). Any capability raised is the gain. */
void chk_priv_ambient(void)
{
    struct cap_data d[2];
    char hex[24];
    drop_privs();
    if (caps_get(d) != 0)
        fail(errno, "capget");
    uint64_t can = cap64(d[0].permitted & d[0].inheritable, d[1].permitted & d[1].inheritable);
    uint64_t raised = 0;
    int e = 0;
    can |= 1ULL << PROBE_CAP_NET_RAW;
    for (unsigned long c = 0; c < 64; c++) {
        if (!(can >> c & 1))
            continue;
        if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, c, 0, 0) != 0) {
            if (c == PROBE_CAP_NET_RAW)
                e = errno;
            continue;
        }
        if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, c, 0, 0) == 1)
            raised |= 1ULL << c;
    }
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)raised);
    ev_str("raised", hex);
    if (raised)
        outcome("escaped", 0, "PR_CAP_AMBIENT_RAISE raised capabilities %s as uid %u", hex,
                (unsigned)geteuid());
    outcome("blocked", e, "PR_CAP_AMBIENT_RAISE of CAP_NET_RAW; no capability both permitted and inheritable");
}

/* ---- privilege as started, and what a root workload would try ------------ */

#define PROBE_CAP_SYS_MODULE 16
/* The credentials the workload started with; the harness judges the
 * capabilities against its baseline. */
void chk_priv_start(void)
{
    struct cap_data d[2];
    char hex[3][24];
    if (caps_get(d) != 0)
        fail(errno, "capget");
    uint64_t sets[3] = { cap64(d[0].effective, d[1].effective),
                         cap64(d[0].permitted, d[1].permitted), cap_set_by_prctl(0) };
    const char *keys[3] = { "cap_eff", "cap_prm", "cap_bnd" };
    int init = initial_userns();
    uid_t ruid, euid, suid;
    gid_t rgid, egid, sgid;
    getresuid(&ruid, &euid, &suid);
    getresgid(&rgid, &egid, &sgid);
    ev_int("uid", ruid);
    ev_int("euid", euid);
    ev_int("suid", suid);
    ev_int("gid", rgid);
    ev_int("egid", egid);
    ev_int("sgid", sgid);
    /* Supplementary groups, comma-separated (evidence is scalars): a workload the
     * policy puts in one group must not hold others (e.g. shadow's). */
    gid_t groups[64];
    int ng = getgroups(64, groups);
    char list[64 * 11 + 1];
    size_t len = 0;
    list[0] = 0;
    for (int k = 0; k < ng && len < sizeof list - 12; k++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%u", k ? "," : "", (unsigned)groups[k]);
    ev_str("groups", ng < 0 ? "?" : list);
    /* The names the sandbox's own /etc/passwd and /etc/group give them: what a
     * policy's run_as_user and run_as_group name. */
    struct passwd *pw = getpwuid(getuid());
    if (pw != NULL)
        ev_str("user", pw->pw_name);
    struct group *gr = getgrgid(getgid());
    if (gr != NULL)
        ev_str("group", gr->gr_name);
    ev_int("initial_userns", init);
    for (int i = 0; i < 3; i++) {
        snprintf(hex[i], sizeof hex[i], "%016llx", (unsigned long long)sets[i]);
        ev_str(keys[i], hex[i]);
    }
    ev_kernel();
    outcome("succeeded", 0, "uid %u, CapEff %s, CapPrm %s, %s user namespace", (unsigned)getuid(),
            hex[0], hex[1], init ? "initial" : "a child");
}

/* Writable /proc/sys: write a value's own content back (changes nothing). */
/* Write one kernel value back as read; 0 if written, else the errno (or EIO). */
static int write_back(const char *p)
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
            outcome("escaped", 0, "wrote %s (its own value back)", paths[i]);
        if (!first)
            first = e;
    }
    outcome("blocked", first, "write %s, /sys/kernel/uevent_helper or a /sys module parameter",
            paths[0]);
}

/* A private mount namespace of this check child's own, so nothing propagates. */
static const char *private_mountns(void)
{
    struct stat st;
    if (unshare(CLONE_NEWNS) != 0)
        outcome("blocked", errno, "unshare(CLONE_NEWNS)");
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        outcome("blocked", errno, "make the new mount namespace private");
    return stat("/tmp", &st) == 0 && S_ISDIR(st.st_mode) ? "/tmp" : "/dev";
}

/* In the check's private mount namespace (a child user namespace's), the host's
 * kernel settings written through what its own mounts undo: a proc mounted in
 * `dir`, a sysfs beside it, /proc/sys unmounted and /proc and /sys remounted
 * read-write. Each gets its own value back. What was written, or NULL. */
static const char *undone_ro_kernel_settings(const char *dir, int proc_mounted)
{
    static char how[160];
    static const char *const own[] = { "proc/sys/kernel/printk_ratelimit", "sys/kernel/uevent_helper",
                                       "sys/module/printk/parameters/time" };
    char p[96];
    snprintf(p, sizeof p, "%s/sys", dir);
    mkdir(p, 0755);
    int sys = mount("sysfs", p, "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == 0;
    for (int undone = 0; undone < 2; undone++) {
        if (undone) { /* the sandbox's own: /proc/sys bound over, /proc and /sys read-only */
            umount2("/proc/sys", MNT_DETACH);
            mount(NULL, "/proc", NULL, MS_REMOUNT | MS_BIND, NULL);
            mount(NULL, "/sys", NULL, MS_REMOUNT | MS_BIND, NULL);
        }
        for (size_t i = 0; i < sizeof own / sizeof own[0]; i++) {
            snprintf(p, sizeof p, "%s/%s", undone ? "" : dir, own[i]);
            if ((undone || (i ? sys : proc_mounted)) && write_back(p) == 0) {
                snprintf(how, sizeof how, "wrote %s %s", p, undone ? "with the sandbox's mounts over it undone"
                         : i ? "through a sysfs mounted there" : "through a proc mounted there");
                return how;
            }
        }
    }
    return NULL;
}

void chk_priv_root_mount(void)
{
    const char *dir = private_mountns();
    char p[64];
    if (mount("harness", dir, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=64k") != 0)
        outcome("blocked", errno, "mount a tmpfs on %s", dir);
    snprintf(p, sizeof p, "%s/proc", dir);
    mkdir(p, 0755);
    int pr = mount("proc", p, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
    ev_int("proc_mounted", pr == 0);
    /* A mount namespace made from a child user namespace is that namespace's: what
     * is mounted there reaches nothing the workload could not reach before (any user
     * may `unshare -rm` where user namespaces are allowed), unless the sandbox's
     * read-only /proc or /sys was all that kept a uid the host's kernel settings
     * obey (its root, mapped in) from writing them. */
    if (!initial_userns()) {
        const char *how = undone_ro_kernel_settings(dir, pr == 0);
        if (how)
            outcome("escaped", 0, "in a child user namespace, %s (its own value back): a"
                    " read-only /proc or /sys undone by the namespace's own mounts", how);
        outcome("blocked", 0, "mounted a tmpfs on %s%s, only in a mount namespace of a child"
                " user namespace", dir, pr == 0 ? " and a proc in it" : "");
    }
    outcome("escaped", 0, "mounted a tmpfs on %s%s", dir, pr == 0 ? " and a proc in it" : "");
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
                outcome("escaped", 0, "wrote %s (its own value back)", p);
        }
    ev_int("mounted_release_agents", seen);
    if (unshare(CLONE_NEWNS) != 0)
        outcome("blocked", e ? e : errno, "%d mounted release_agent(s) not writable; unshare(CLONE_NEWNS)", seen);
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        outcome("blocked", errno, "make the new mount namespace private");
    struct stat st;
    const char *dir = stat("/tmp", &st) == 0 && S_ISDIR(st.st_mode) ? "/tmp" : "/dev";
    const char *opts[] = { "rdma", "none,name=harness-probe" };
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
        if (mount("cgroup", dir, "cgroup", MS_NOSUID | MS_NODEV | MS_NOEXEC, opts[i]) != 0) {
            e = errno;
            continue;
        }
        snprintf(p, sizeof p, "%s/release_agent", dir);
        e = rewrite_agent(p);
        umount2(dir, MNT_DETACH);
        if (e == 0)
            outcome("escaped", 0, "mounted cgroup v1 (%s) and wrote its release_agent (its own value back)", opts[i]);
    }
    outcome("blocked", e, "mount a cgroup v1 hierarchy and write its release_agent");
}

/* open_by_handle_at on any visible filesystem: needs CAP_DAC_READ_SEARCH. */
void chk_priv_root_handle(void)
{
    struct { struct file_handle fh; unsigned char f[128]; } h;
    int mid, e = ENOENT;
    if (read_mounts() != 0)
        fail(errno, "read /proc/self/mountinfo");
    for (int i = 0; i < g_nmnt; i++) {
        h.fh.handle_bytes = sizeof h.f;
        if (name_to_handle_at(AT_FDCWD, g_mnt[i].mp, &h.fh, &mid, 0) != 0) {
            e = errno;
            continue;
        }
        int mfd = open(g_mnt[i].mp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (mfd < 0)
            continue;
        int fd = open_by_handle_at(mfd, &h.fh, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        e = errno;
        close(mfd);
        if (fd >= 0) {
            close(fd);
            /* Outside the initial user namespace the kernel (6.10 on) decodes a handle
             * only on a filesystem of the caller's own namespace or within the mount's
             * subtree, with permission checks: the ext4 root behind a bind is stale. */
            if (!initial_userns())
                outcome("blocked", 0, "open_by_handle_at on %s succeeded, in a child user namespace"
                        " (only what that mount's own path reaches)", g_mnt[i].mp);
            outcome("escaped", 0, "open_by_handle_at on %s succeeded (CAP_DAC_READ_SEARCH)", g_mnt[i].mp);
        }
        outcome("blocked", e, "open_by_handle_at on %s", g_mnt[i].mp);
    }
    outcome("blocked", e, "name_to_handle_at on every mount");
}

/* mknod a block device for a disk behind a visible mount and read one sector. */
static char g_node[256];
static void unlink_node(void)
{
    if (g_node[0])
        unlink(g_node);
}

/* Read one sector through a block device node; escaped on success. */
static void read_sector(const char *node, unsigned maj, unsigned min, const char *how, int *e)
{
    int fd = open(node, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    *e = errno;
    if (fd < 0)
        return;
    char sector[512];
    ssize_t n = read(fd, sector, sizeof sector);
    *e = errno;
    close(fd);
    if (n == 512)
        outcome("escaped", 0, "read a sector of block device %u:%u %s", maj, min, how);
}

/* An existing node in /dev for the device, as the host has for its own disk. */
static void existing_node(unsigned maj, unsigned min, int *e, int *tried)
{
    char p[512];
    DIR *d = opendir("/dev");
    for (struct dirent *x; d && (x = readdir(d));) {
        struct stat st;
        snprintf(p, sizeof p, "/dev/%s", x->d_name);
        if (lstat(p, &st) != 0 || !S_ISBLK(st.st_mode) || major(st.st_rdev) != maj ||
            minor(st.st_rdev) != min)
            continue;
        (*tried)++;
        closedir(d);
        read_sector(p, maj, min, "through its node in /dev", e);
        return;
    }
    if (d)
        closedir(d);
}

/* Every block device node already in /dev, whatever it backs: a host disk, loop
   device or zram passed into the sandbox (`--device`) is host storage in reach,
   even when no mount of the sandbox's names it. */
static void every_node(int *e, int *tried)
{
    char p[512];
    DIR *d = opendir("/dev");
    for (struct dirent *x; d && (x = readdir(d));) {
        struct stat st;
        snprintf(p, sizeof p, "/dev/%s", x->d_name);
        if (lstat(p, &st) != 0 || !S_ISBLK(st.st_mode))
            continue;
        (*tried)++;
        read_sector(p, major(st.st_rdev), minor(st.st_rdev), "through its node in /dev", e);
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
        existing_node(g_mnt[i].maj, g_mnt[i].min, &e, &tried);
        for (size_t k = 0; k < sizeof dirs / sizeof dirs[0]; k++) {
            if (!dirs[k])
                continue;
            tried++;
            snprintf(g_node, sizeof g_node, "%s/harness-blk-%d", dirs[k], (int)getpid());
            if (mknod(g_node, S_IFBLK | 0600, makedev(g_mnt[i].maj, g_mnt[i].min)) != 0) {
                e = errno;
                g_node[0] = '\0';
                continue;
            }
            char how[300];
            snprintf(how, sizeof how, "through a node made in %s", dirs[k]);
            read_sector(g_node, g_mnt[i].maj, g_mnt[i].min, how, &e);
            unlink(g_node);
            g_node[0] = '\0';
        }
    }
    every_node(&e, &tried);
    ev_int("tried", tried);
    outcome("blocked", e, "mknod and read %d block device node(s)", tried);
}

/* Holding CAP_SYS_MODULE in the initial namespace is the finding: load nothing. */
void chk_priv_root_sys_module(void)
{
    struct cap_data d[2];
    if (caps_get(d) != 0)
        fail(errno, "capget");
    int held = (d[0].effective | d[0].permitted) >> PROBE_CAP_SYS_MODULE & 1;
    if (held && initial_userns())
        outcome("escaped", 0, "holds CAP_SYS_MODULE in the initial user namespace (nothing loaded)");
    outcome("blocked", 0, held ? "CAP_SYS_MODULE held only in a child user namespace"
                               : "CAP_SYS_MODULE not held");
}

/* ---- securebits, other processes, the kernel itself, user namespaces ------- */

#define SECBIT_NOROOT_ 0
#define SECBIT_NO_SETUID_FIXUP_ 2
#define SECBIT_NO_CAP_AMBIENT_RAISE_ 6

/* As started: clear every securebit the sandbox set and left unlocked (with
 * CAP_SETPCAP, in Docker's default set), then run the probe's own file: a
 * capability the new program holds beyond those held before is the gain (a root
 * neutered by SECBIT_NOROOT, unlocked, gets its bounding set back at exec). */
void chk_priv_securebits(void)
{
    struct cap_data d[2];
    struct whoami w;
    const int bits[] = { SECBIT_NOROOT_, SECBIT_NO_SETUID_FIXUP_, SECBIT_NO_CAP_AMBIENT_RAISE_ };
    if (caps_get(d) != 0)
        fail(errno, "capget");
    uint64_t held = cap64(d[0].effective | d[0].permitted, d[1].effective | d[1].permitted);
    /* A kernel without securebits (gVisor's sentry): nothing to clear, the exec
     * still tried. */
    int sb = prctl(PR_GET_SECUREBITS, 0, 0, 0, 0);
    ev_int("securebits", sb);
    if (sb < 0)
        sb = 0;
    int want = sb, e = 0;
    for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++)
        if (sb >> bits[i] & 1 && !(sb >> (bits[i] + 1) & 1))
            want &= ~(1 << bits[i]);
    if (want != sb && prctl(PR_SET_SECUREBITS, want, 0, 0, 0) != 0)
        e = errno;
    int now = prctl(PR_GET_SECUREBITS, 0, 0, 0, 0);
    ev_int("cleared", now >= 0 ? sb & ~now : 0);
    run_whoami("/proc/self/exe", &w);
    uint64_t gained = w.cap_eff & ~held;
    char hex[24];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)gained);
    if (gained && initial_userns())
        outcome("escaped", 0, "securebits 0x%x, now 0x%x: exec gained capabilities %s", sb, now, hex);
    outcome("blocked", e, "securebits 0x%x (%s), exec gained no capability", sb,
            want == sb ? "nothing unlocked to clear" : e ? "clearing refused" : "cleared");
}

#define PF_KTHREAD_ 0x00200000UL

/* A process's parent and flags from /proc/<pid>/stat; -1 if gone or unreadable. */
static int proc_stat(int pid, int *ppid, unsigned long *flags, char *state)
{
    char p[64], buf[1024];
    snprintf(p, sizeof p, "/proc/%d/stat", pid);
    ssize_t n = read_file(p, buf, sizeof buf - 1);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    char *r = strrchr(buf, ')');
    /* ") S ppid pgrp session tty_nr tpgid flags" */
    if (!r || sscanf(r + 1, " %c %d %*d %*d %*d %*d %lu", state, ppid, flags) != 3)
        return -1;
    return 0;
}

/* 0 if this process may read `pid`'s memory or take its descriptors (ptrace's
 * attach permission), naming how in `how`; else the errno of the refusal. Each
 * way changes nothing in the target: a read, a duplicate of a descriptor closed
 * at once, a seize that ends when this check's child exits. */
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
    return e;
}

/* Every visible process that is not this check's own (itself, its ancestors) nor
 * a kernel thread: in its own PID namespace a sandbox sees none; in the host's it
 * sees the host's (the filesystem fixture's decoy among them). 0 if one was
 * reached; the candidates count in *seen. */
static int reach_processes(int *seen, int *e, char *how, size_t n)
{
    int anc[64], na = 0, self = getpid(), pid = self, pp;
    unsigned long fl;
    char st;
    while (na < 64 && pid > 1 && proc_stat(pid, &pp, &fl, &st) == 0 && pp > 0)
        anc[na++] = pid = pp;
    DIR *d = opendir("/proc");
    if (!d)
        fail(errno, "opendir /proc: cannot list processes");
    *seen = 0;
    for (struct dirent *x; (x = readdir(d)) && *seen < 4096;) {
        char *end;
        long v = strtol(x->d_name, &end, 10);
        if (*end || v <= 0 || v == self)
            continue;
        int mine = 0;
        for (int i = 0; i < na; i++)
            mine |= anc[i] == v;
        if (mine || proc_stat((int)v, &pp, &fl, &st) != 0 || fl & PF_KTHREAD_ || st == 'Z' || v == 2)
            continue;
        (*seen)++;
        int r = touch_process((int)v, how, n);
        if (r == 0) {
            closedir(d);
            return 0;
        }
        if (r != ESRCH || !*e)
            *e = r;
    }
    closedir(d);
    return -1;
}

/* Another process's memory and descriptors: as started, then as the
 * unprivileged uid (the decoy's owner). */
void chk_priv_proc_access(void)
{
    char how[160];
    int seen = 0, e = 0;
    if (reach_processes(&seen, &e, how, sizeof how) == 0)
        outcome("escaped", 0, "as started: %s", how);
    int first = seen;
    if (geteuid() == 0) {
        drop_privs();
        if (reach_processes(&seen, &e, how, sizeof how) == 0)
            outcome("escaped", 0, "as uid %u: %s", g_unpriv_uid, how);
    }
    ev_int("processes", first);
    if (!first)
        outcome("blocked", ESRCH, "no process but this check's own (and its ancestors) visible");
    outcome("blocked", e, "memory and descriptors of %d other process(es) refused", first);
}

/* What only CAP_SYS_BOOT, CAP_SYS_TIME, CAP_SYS_ADMIN, CAP_SYS_PACCT, CAP_SYSLOG,
 * CAP_SYS_RAWIO, CAP_BPF and CAP_PERFMON open, each asked so that success changes
 * nothing: an argument the kernel refuses only after the capability check (a bad
 * reboot magic, a tick out of range, a path that cannot exist, too many kexec
 * segments), or something undone at once (an I/O port, a BPF program never
 * attached, a disabled perf event). Every errno is recorded. */
struct kattempt { const char *name; int granted; int e; };

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

void chk_priv_root_kernel(void)
{
    struct kattempt a[10];
    int n = 0;
    char name[1100];
    memset(name, 'h', sizeof name);
    a[n].name = "reboot (bad magic)";
    k_try(&a[n++], syscall(SYS_reboot, 0, 0, 0, NULL), EINVAL);
#ifdef SYS_kexec_load
    a[n].name = "kexec_load (too many segments)";
    k_try(&a[n++], syscall(SYS_kexec_load, 0UL, 1000UL, NULL, 0UL), EINVAL);
#endif
    struct timex tx = { .modes = ADJ_TICK, .tick = 0 };
    a[n].name = "adjtimex (tick 0)";
    k_try(&a[n++], syscall(SYS_adjtimex, &tx), EINVAL);
    a[n].name = "swapon (no such file)";
    k_try(&a[n++], syscall(SYS_swapon, "/proc/harness-no-such-file", 0), ENOENT);
    a[n].name = "acct (no such file)";
    k_try(&a[n++], syscall(SYS_acct, "/proc/harness-no-such-file"), ENOENT);
    a[n].name = "syslog (unknown action)";
    k_try(&a[n++], syscall(SYS_syslog, 9999, NULL, 0), EINVAL);
    a[n].name = "sethostname (too long)";
    k_try(&a[n++], syscall(SYS_sethostname, name, sizeof name), EINVAL);
#if defined(__x86_64__) || defined(__i386__)
    a[n].name = "ioperm (port 0x80)";
    k_try(&a[n], syscall(SYS_ioperm, 0x80UL, 1UL, 1), 0);
    if (a[n++].granted)
        syscall(SYS_ioperm, 0x80UL, 1UL, 0);
#endif
    /* r0 = 0; exit: a kprobe program, loaded and never attached */
    struct { uint8_t code, regs; int16_t off; int32_t imm; } insns[2] = { { 0xb7, 0, 0, 0 }, { 0x95, 0, 0, 0 } };
    uint64_t battr[16] = { 0 };
    battr[0] = 2 | (uint64_t)2 << 32; /* BPF_PROG_TYPE_KPROBE, two instructions */
    battr[1] = (uint64_t)(uintptr_t)insns;
    battr[2] = (uint64_t)(uintptr_t)"GPL";
    a[n].name = "bpf (load a kprobe program)";
    long fd = syscall(SYS_bpf, 5 /* BPF_PROG_LOAD */, battr, sizeof battr);
    k_try(&a[n++], fd, 0);
    if (fd >= 0)
        close((int)fd);
    /* A disabled software event on one CPU, kernel included: CAP_PERFMON, unless
     * perf_event_paranoid lets anyone (then it proves nothing). */
    uint32_t pattr[32] = { 0 };
    pattr[0] = 1;              /* PERF_TYPE_SOFTWARE, config 0: the CPU clock */
    pattr[1] = sizeof pattr;   /* size */
    pattr[10] = 1;             /* disabled; exclude_kernel left clear */
    int paranoid = perf_paranoid();
    a[n].name = "perf_event_open (a CPU, kernel included)";
    fd = syscall(SYS_perf_event_open, pattr, -1, 0, -1, 0UL);
    k_try(&a[n], fd, 0);
    if (fd >= 0)
        close((int)fd);
    a[n++].granted &= paranoid >= 1;
    int init = initial_userns();
    char list[800];
    size_t len = 0;
    list[0] = '\0';
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s: %s", i ? "; " : "", a[i].name,
                                a[i].granted ? "allowed" : strerror(a[i].e));
    ev_str("attempts", list);
    ev_int("perf_event_paranoid", paranoid);
    for (int i = 0; i < n; i++)
        /* reboot and sethostname ask the namespace's own user namespace */
        if (a[i].granted && (init || (strncmp(a[i].name, "reboot", 6) && strncmp(a[i].name, "sethostname", 11))))
            outcome("escaped", 0, "%s allowed (nothing changed)", a[i].name);
    outcome("blocked", n ? a[0].e : 0, "%d kernel operations refused", n);
}

/* What a user namespace of the workload's own gives: recorded, never judged
 * (its capabilities reach only what that namespace owns). */
void chk_userns(void)
{
    Buf b = { .n = 0 };
    int r = unshare(CLONE_NEWUSER);
    bput(&b, "\"userns\":%s", r == 0 ? "true" : "false");
    if (r != 0)
        bkv(&b, "detail", strerror(errno));
    send_result(&b);
}
