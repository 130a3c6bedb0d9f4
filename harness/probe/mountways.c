/* priv-root-mount by every way into a mount: mount(2) in a mount namespace of the
 * check's own; where that is refused, the new mount API (Linux 5.2 on: fsopen,
 * fsconfig and fsmount make a detached mount, open_tree clones a tree, fspick opens a
 * superblock for reconfiguring), which a deny-list of "the mount calls" written
 * before it leaves open; and mount(2) with the calls around it through the i386 entry
 * (int $0x80), which a filter of x86_64's numbers alone leaves open. Nothing is
 * attached to any tree but the check's own namespace's: a detached mount is closed,
 * a kernel setting gets its own value back. */

#include "probe.h"

/* The new mount API's numbers and flags (linux/mount.h), alike on every architecture. */
#define NR_open_tree 428
#define NR_fsopen 430
#define NR_fsconfig 431
#define NR_fsmount 432
#define NR_fspick 433
#define NR_mount_setattr 442
#define OPEN_TREE_CLONE_ 1
#define FSCONFIG_SET_FLAG_ 0
#define FSCONFIG_SET_STRING_ 1
#define FSCONFIG_CMD_CREATE_ 6
#define MOUNT_ATTR_RDONLY_ 0x1
#define MOUNT_ATTR_SAFE_ 0xe /* nosuid, nodev, noexec */

/* One way into mount(2) and the calls around it; `way` is appended to what it did. */
struct mway {
    const char *way;
    int (*unshare)(int);
    int (*mount)(const char *, const char *, const char *, unsigned long, const void *);
    int (*umount2)(const char *, int);
};

struct mres { int oc, e, proc; char detail[400]; };

__attribute__((format(printf, 4, 5)))
static void mset(struct mres *r, int oc, int e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    r->oc = oc, r->e = e;
    vsnprintf(r->detail, sizeof r->detail, fmt, ap);
    va_end(ap);
}

static int native_mount(const char *s, const char *t, const char *y, unsigned long f, const void *d)
{
    return mount(s, t, y, f, d);
}

static const struct mway native = { "", unshare, native_mount, umount2 };

/* The kernel's settings written through what the check's own mounts in `dir` show (a
 * proc, a sysfs), then with the sandbox's own mounts over /proc and /sys undone (its
 * /proc/sys bound over, /proc and /sys read-only). What was written, or NULL. */
static const char *undone_ro_kernel_settings(const struct mway *w, const char *dir, int proc_mounted)
{
    static char how[160];
    static const char *const own[] = { "proc/sys/kernel/printk_ratelimit", "sys/kernel/uevent_helper",
                                       "sys/module/printk/parameters/time" };
    char p[96];
    snprintf(p, sizeof p, "%s/sys", dir);
    mkdir(p, 0755);
    int sys = w->mount("sysfs", p, "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == 0;
    for (int undone = 0; undone < 2; undone++) {
        if (undone) {
            w->umount2("/proc/sys", MNT_DETACH);
            w->mount(NULL, "/proc", NULL, MS_REMOUNT | MS_BIND, NULL);
            w->mount(NULL, "/sys", NULL, MS_REMOUNT | MS_BIND, NULL);
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

/* mount(2) by way w: a private mount namespace of the check's own, a tmpfs and a proc
 * in it. A mount namespace made from a child user namespace is that namespace's: what
 * is mounted there reaches nothing the workload could not reach before (any user may
 * `unshare -rm` where user namespaces are allowed), unless the sandbox's read-only
 * /proc or /sys was all that kept a uid the host's kernel settings obey (its root,
 * mapped in) from writing them. r->e set, r->oc OC_BLOCKED, where a step is refused. */
static void by_mount(const struct mway *w, struct mres *r)
{
    struct stat st;
    char p[64];
    if (w->unshare(CLONE_NEWNS) != 0)
        return mset(r, OC_BLOCKED, errno, "unshare(CLONE_NEWNS)");
    if (w->mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        return mset(r, OC_BLOCKED, errno, "make the new mount namespace private");
    const char *dir = stat("/tmp", &st) == 0 && S_ISDIR(st.st_mode) ? "/tmp" : "/dev";
    if (w->mount("harness", dir, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=64k") != 0)
        return mset(r, OC_BLOCKED, errno, "mount a tmpfs on %s", dir);
    snprintf(p, sizeof p, "%s/proc", dir);
    mkdir(p, 0755);
    r->proc = w->mount("proc", p, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == 0;
    const char *in = r->proc ? " and a proc in it" : "";
    if (!initial_userns()) {
        const char *how = undone_ro_kernel_settings(w, dir, r->proc);
        if (how)
            return mset(r, OC_ESCAPED, 0, "in a child user namespace, %s (its own value back)%s: a"
                        " read-only /proc or /sys undone by the namespace's own mounts", how, w->way);
        return mset(r, OC_BLOCKED, 0, "mounted a tmpfs on %s%s%s, only in a mount namespace of a child"
                    " user namespace", dir, in, w->way);
    }
    mset(r, OC_ESCAPED, 0, "mounted a tmpfs on %s%s%s", dir, in, w->way);
}

#if defined(__x86_64__)
#include <sys/mman.h>

static char *g_low; /* below 4 GiB, where the i386 entry reads its strings */

static long low_str(const char *s, size_t *used)
{
    size_t n = s ? strlen(s) + 1 : 0;
    if (!s || !g_low || *used + n > 4096)
        return 0;
    memcpy(g_low + *used, s, n);
    *used += n;
    return (long)(uintptr_t)(g_low + *used - n);
}

static int i386_ret(long r)
{
    return r < 0 ? (errno = (int)-r, -1) : 0;
}

static int i386_unshare(int flags)
{
    long v[6] = { flags };
    return i386_ret(int80(I386_NR_unshare, v));
}

static int i386_mount(const char *s, const char *t, const char *y, unsigned long f, const void *d)
{
    size_t u = 0;
    long v[6] = { low_str(s, &u), low_str(t, &u), low_str(y, &u), (long)f, low_str(d, &u) };
    return i386_ret(int80(I386_NR_mount, v));
}

static int i386_umount2(const char *t, int flags)
{
    size_t u = 0;
    long v[6] = { low_str(t, &u), flags };
    return i386_ret(int80(I386_NR_umount2, v));
}

/* by_mount through the i386 entry, in a child (a filter may kill on a call there):
 * its result, or 0 where the entry is not there or the child said nothing. */
static int through_i386(struct mres *r)
{
    static const struct mway i386 = { " (mount through the i386 entry, int $0x80: x86_64's refused)",
                                      i386_unshare, i386_mount, i386_umount2 };
    int p[2];
    if (!i386_here() || pipe2(p, O_CLOEXEC) != 0)
        return 0;
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        g_low = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
        struct mres c = { 0 };
        if (g_low == MAP_FAILED)
            _exit(1);
        by_mount(&i386, &c);
        _exit(write(p[1], &c, sizeof c) == sizeof c ? 0 : 1);
    }
    close(p[1]);
    int got = pid > 0 && read(p[0], r, sizeof *r) == (ssize_t)sizeof *r;
    close(p[0]);
    while (pid > 0 && waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    return got;
}
#else
static int through_i386(struct mres *r)
{
    (void)r;
    return 0; /* aarch64: no entry the probe can take (i386.c) */
}
#endif

/* A detached mount of `type` made by fsopen, fsconfig and fsmount (nosuid, nodev,
 * noexec, attached nowhere): its descriptor, or -1. */
static int fs_made(const char *type, const char *size)
{
    int fs = (int)syscall(NR_fsopen, type, 1 /* FSOPEN_CLOEXEC */);
    if (fs < 0)
        return -1;
    if (size)
        syscall(NR_fsconfig, fs, FSCONFIG_SET_STRING_, "size", size, 0);
    int m = syscall(NR_fsconfig, fs, FSCONFIG_CMD_CREATE_, NULL, NULL, 0) == 0
                ? (int)syscall(NR_fsmount, fs, 1 /* FSMOUNT_CLOEXEC */, MOUNT_ATTR_SAFE_)
                : -1;
    close(fs);
    return m;
}

/* priv-root-release-agent where mount(2) is refused: a cgroup v1 hierarchy made by
 * fsopen("cgroup"), fsconfig (`opts`: a controller's flag, or "none" and name=...) and
 * fsmount (detached, attached nowhere), its release_agent written its own value back
 * through openat of that mount (the kernel checks CAP_SYS_ADMIN in the initial
 * namespace at write time; nothing changes, nothing runs). 0, or the errno of the
 * refusal (ENOSYS: no such API). */
int agent_by_fsmount(const char *opts)
{
    int fs = (int)syscall(NR_fsopen, "cgroup", 1 /* FSOPEN_CLOEXEC */), e = 0;
    if (fs < 0)
        return errno;
    char copy[64], *save = NULL;
    snprintf(copy, sizeof copy, "%s", opts);
    for (char *o = strtok_r(copy, ",", &save); o && !e; o = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(o, '=');
        if (eq)
            *eq++ = '\0';
        if (syscall(NR_fsconfig, fs, eq ? FSCONFIG_SET_STRING_ : FSCONFIG_SET_FLAG_, o, eq, 0) != 0)
            e = errno;
    }
    int m = -1;
    if (!e && syscall(NR_fsconfig, fs, FSCONFIG_CMD_CREATE_, NULL, NULL, 0) != 0)
        e = errno;
    if (!e && (m = (int)syscall(NR_fsmount, fs, 1 /* FSMOUNT_CLOEXEC */, MOUNT_ATTR_SAFE_)) < 0)
        e = errno;
    close(fs);
    if (e)
        return e;
    char v[4096];
    int fd = openat(m, "release_agent", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, v, sizeof v) : -1;
    e = n < 0 ? errno : 0;
    if (fd >= 0)
        close(fd);
    if (n == 0)
        v[n++] = '\n';
    if (!e && (fd = openat(m, "release_agent", O_WRONLY | O_CLOEXEC)) < 0)
        e = errno;
    if (!e) {
        ssize_t k = write(fd, v, (size_t)n);
        e = k == n ? 0 : k < 0 ? errno : EIO;
        close(fd);
    }
    close(m);
    return e;
}

/* A kernel setting written back through detached mount `m` (at `rel` below it). */
static int written_at(int m, const char *rel)
{
    char p[96];
    snprintf(p, sizeof p, "/proc/self/fd/%d/%s", m, rel);
    return write_back(p) == 0;
}

/* The new mount API, mount(2) refused: in the initial user namespace, any of its calls
 * that asks CAP_SYS_ADMIN there answering is mount(2)'s capability; in a child one,
 * the host's kernel settings written through a proc or sysfs it makes, or through the
 * sandbox's own /proc or /sys cloned by open_tree and made read-write by
 * mount_setattr. Its result, or 0 where it did nothing mount(2) would be judged by. */
static int by_new_api(struct mres *r, int *tmpfs)
{
    static const struct { const char *type, *rel, *at; } own[] = {
        { "proc", "sys/kernel/printk_ratelimit", "/proc" },
        { "sysfs", "kernel/uevent_helper", "/sys" },
        { "sysfs", "module/printk/parameters/time", "/sys" },
    };
    int m = fs_made("tmpfs", "64k");
    *tmpfs = m >= 0;
    if (m >= 0)
        close(m);
    if (initial_userns()) {
        if (*tmpfs)
            return mset(r, OC_ESCAPED, 0, "made a tmpfs by fsmount: the new mount API (detached, attached"
                        " nowhere; closed)"), 1;
        int t = (int)syscall(NR_open_tree, AT_FDCWD, "/", OPEN_TREE_CLONE_ | O_CLOEXEC);
        if (t >= 0)
            return close(t), mset(r, OC_ESCAPED, 0, "cloned / by open_tree: the new mount API (detached,"
                                  " attached nowhere; closed)"), 1;
        int f = (int)syscall(NR_fspick, AT_FDCWD, "/", 1 /* FSPICK_CLOEXEC */);
        if (f >= 0)
            return close(f), mset(r, OC_ESCAPED, 0, "opened /'s superblock for reconfiguring by fspick:"
                                  " the new mount API (nothing reconfigured)"), 1;
        return 0;
    }
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++) {
        if ((m = fs_made(own[i].type, NULL)) < 0)
            continue;
        int w = written_at(m, own[i].rel);
        close(m);
        if (w)
            return mset(r, OC_ESCAPED, 0, "in a child user namespace, wrote %s/%s through a %s made by"
                        " fsmount: the new mount API (detached; its own value back)", own[i].at, own[i].rel,
                        own[i].type), 1;
    }
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++) {
        int t = (int)syscall(NR_open_tree, AT_FDCWD, own[i].at, OPEN_TREE_CLONE_ | O_CLOEXEC);
        if (t < 0)
            continue;
        uint64_t attr[4] = { 0, MOUNT_ATTR_RDONLY_, 0, 0 }; /* attr_set, attr_clr, propagation, userns */
        syscall(NR_mount_setattr, t, "", AT_EMPTY_PATH, attr, sizeof attr);
        int w = written_at(t, own[i].rel);
        close(t);
        if (w)
            return mset(r, OC_ESCAPED, 0, "in a child user namespace, wrote %s/%s through %s cloned by"
                        " open_tree: the new mount API (detached, the sandbox's mounts over it left"
                        " behind; its own value back)", own[i].at, own[i].rel, own[i].at), 1;
    }
    return 0;
}

/* A way run in a child, its result handed back: a filter that kills the process on one
 * of its calls (SIGSYS, as systemd's SystemCallFilter= does) refuses that way, and the
 * next is still tried; the child's mount namespace ends with it. */
static void in_child(void (*way)(struct mres *), struct mres *r, const char *what)
{
    int p[2], st = 0;
    if (pipe2(p, O_CLOEXEC) != 0)
        fail(errno, "pipe");
    pid_t pid = fork();
    if (pid < 0)
        fail(errno, "fork");
    if (pid == 0) {
        struct mres c = { 0 };
        close(p[0]);
        way(&c);
        _exit(write(p[1], &c, sizeof c) == sizeof c ? 0 : 1);
    }
    close(p[1]);
    int got = read(p[0], r, sizeof *r) == (ssize_t)sizeof *r;
    close(p[0]);
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (!got && WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS)
        mset(r, OC_BLOCKED, EPERM, "%s: the process killed (SIGSYS, a seccomp filter)", what);
    else if (!got)
        fail(0, "%s: its child ended without a result (status %d)", what, st);
}

static void native_way(struct mres *r)
{
    by_mount(&native, r);
}

/* by_new_api in in_child's shape: oc 0 where it did nothing, `proc` the tmpfs made. */
static void new_api_way(struct mres *r)
{
    int tmpfs = 0;
    if (!by_new_api(r, &tmpfs))
        r->oc = 0;
    r->proc = tmpfs;
}

void chk_priv_root_mount(void)
{
    struct mres r = { 0 }, w = { 0 };
    in_child(native_way, &r, "mount(2)");
    ev_int("proc_mounted", r.proc);
    if (r.oc == OC_ESCAPED || !r.e)
        outcome(r.oc, r.e, "%s", r.detail);
    /* mount(2) refused: each other way into it */
    in_child(new_api_way, &w, "the new mount API");
    int tmpfs = w.oc != OC_BLOCKED && w.proc;
    if (w.oc == OC_ESCAPED || ((r.e == EPERM || r.e == ENOSYS) && through_i386(&w) && w.oc == OC_ESCAPED))
        outcome(w.oc, w.e, "%s", w.detail);
    if (tmpfs)
        ev_int("fsmount_tmpfs", 1); /* in a child user namespace: that namespace's own */
    outcome(OC_BLOCKED, r.e, "%s", r.detail);
}
