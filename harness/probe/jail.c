/* `probe jail`: a chroot jail, the oldest sandbox shape. A tmpfs root of its own (in
 * a private mount namespace, with its own network, IPC, UTS and PID namespaces),
 * the --bind (read-write) and --ro-bind folders and files in it, a read-only /proc,
 * a small /dev and a /tmp; chroot into it, chdir("/"), keep only CAP_SETUID and
 * CAP_SETGID, set no_new_privs and exec the command after "--". Unlike bwrap it
 * neither pivots nor unmounts the old root: the host's tree stays the mount
 * namespace's root, and the jail holds only as long as nothing climbs out of it.
 * harness uses it as a reference (matrices/local.toml) and for its mutants, each of
 * which leaves one thing open: `--keep-cwd` skips the chdir (the working folder
 * stays on the host, outside the root), `--keep-chroot` keeps CAP_SYS_CHROOT (a
 * second chroot climbs out). `--deny-chroot` refuses chroot(2) instead by a seccomp
 * filter installed last (every other architecture's entry refused), and `--any-arch`
 * (a mutant's mistake) makes that filter match chroot's number alone, whatever the
 * entry: the i386 entry's chroot (61) is no x86_64 chroot (161). It is not a check. */

#include "probe.h"
#include <sys/wait.h>

#define MAX_BINDS 16
#define PROBE_CAP_SETGID 6
#define PROBE_CAP_SETUID 7
#define PROBE_CAP_SYS_CHROOT 18

static struct { const char *src, *dst; int ro; } g_bind[MAX_BINDS];
static int g_nbind;

/* `root` + `rest` into `out` (PATH_MAX bytes): a path too long is a usage error. */
static char *jail_path(char *out, const char *root, const char *rest)
{
    if (snprintf(out, 4096, "%s%s", root, rest) >= 4096)
        fatal(2, "jail: path too long: %s%s", root, rest);
    return out;
}

static void jail_mount(const char *src, const char *dst, const char *type, unsigned long flags,
                       const char *data)
{
    if (mount(src, dst, type, flags, data) != 0)
        fatal(2, "jail: mount %s on %s: %s", src ? src : type, dst, strerror(errno));
}

/* The mount point for a bind: a folder for a folder, an empty file for the rest. */
static void make_point(const char *src, const char *path)
{
    struct stat st;
    if (stat(src, &st) != 0)
        fatal(2, "jail: %s: %s", src, strerror(errno));
    char parent[4096];
    jail_path(parent, path, "");
    for (char *p = parent + 1; (p = strchr(p, '/')) != NULL; p++) {
        *p = 0;
        mkdir(parent, 0755);
        *p = '/';
    }
    int made = S_ISDIR(st.st_mode) ? mkdir(path, 0755) : close(open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
    if (made != 0 && errno != EEXIST)
        fatal(2, "jail: make %s: %s", path, strerror(errno));
}

static void bind_in(const char *root, const char *src, const char *dst, int ro)
{
    char path[4096];
    jail_path(path, root, dst);
    make_point(src, path);
    jail_mount(src, path, NULL, MS_BIND | MS_REC, NULL);
    unsigned long flags = MS_BIND | MS_REMOUNT | MS_NOSUID | MS_NODEV | (ro ? MS_RDONLY : 0);
    jail_mount(NULL, path, NULL, flags, NULL);
}

/* The jail's tree under `root`: its binds, /proc (read-only), /dev, /tmp. */
static void build(const char *root)
{
    jail_mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
    jail_mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755");
    for (int i = 0; i < g_nbind; i++)
        bind_in(root, g_bind[i].src, g_bind[i].dst, g_bind[i].ro);
    char path[4096];
    jail_path(path, root, "/proc");
    mkdir(path, 0555);
    jail_mount("proc", path, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY, NULL);
    jail_path(path, root, "/tmp");
    mkdir(path, 01777);
    jail_mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777");
    jail_path(path, root, "/dev");
    mkdir(path, 0755);
    jail_mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755");
    static const char *const devices[] = { "null", "zero", "full", "random", "urandom", "tty" };
    for (size_t i = 0; i < sizeof devices / sizeof devices[0]; i++) {
        char dev[32];
        snprintf(dev, sizeof dev, "/dev/%s", devices[i]);
        if (access(dev, F_OK) == 0)
            bind_in(root, dev, dev, 0);
    }
    jail_path(path, root, "/dev/shm");
    mkdir(path, 01777);
    jail_mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777");
}

/* chroot(2) refused (EPERM) by a seccomp filter; another architecture's entry refused
 * whole, unless `any_arch` (then only the native number is matched, whatever the entry). */
static void deny_chroot(int any_arch)
{
    struct sock_filter f[8];
    unsigned n = 0;
    if (!any_arch) {
        f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
        f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PROBE_AUDIT_ARCH, 1, 0);
        f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
    }
    f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
    f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_chroot, 0, 1);
    f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
    f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    struct sock_fprog prog = { .len = (unsigned short)n, .filter = f };
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0)
        fatal(2, "jail: seccomp: %s", strerror(errno));
}

/* The bounding set down to `keep` (root's exec takes its capabilities from it). */
static void keep_capabilities(uint64_t keep)
{
    for (int cap = 0; cap < 64; cap++)
        if (!(keep >> cap & 1) && prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 1 &&
            prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0)
            fatal(2, "jail: drop capability %d: %s", cap, strerror(errno));
    prctl(PR_CAP_AMBIENT, 4 /* PR_CAP_AMBIENT_CLEAR_ALL */, 0, 0, 0);
}

static int wait_for(pid_t child)
{
    int status = 0;
    for (;;) {
        pid_t got = waitpid(-1, &status, 0);
        if (got < 0 && errno != EINTR)
            return 1;
        if (got == child)
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
}

void jail_main(int argc, char **argv)
{
    int keep_cwd = 0, keep_chroot = 0, filter = 0, any_arch = 0, i = 2;
    for (; i < argc && strcmp(argv[i], "--"); i++) {
        int ro = !strcmp(argv[i], "--ro-bind");
        if (!strcmp(argv[i], "--keep-cwd"))
            keep_cwd = 1;
        else if (!strcmp(argv[i], "--keep-chroot"))
            keep_chroot = 1;
        else if (!strcmp(argv[i], "--deny-chroot"))
            filter = 1;
        else if (!strcmp(argv[i], "--any-arch"))
            any_arch = 1;
        else if ((ro || !strcmp(argv[i], "--bind")) && i + 2 < argc && g_nbind < MAX_BINDS &&
                 argv[i + 2][0] == '/') {
            g_bind[g_nbind].src = argv[i + 1];
            g_bind[g_nbind].dst = argv[i + 2];
            g_bind[g_nbind++].ro = ro;
            i += 2;
        } else
            fatal(2, "usage: probe jail [--bind SRC DST]... [--ro-bind SRC DST]... [--keep-cwd]"
                     " [--keep-chroot] [--deny-chroot [--any-arch]] -- COMMAND...");
    }
    if (i + 1 >= argc)
        fatal(2, "jail: no command after --");
    const char *tmp = getenv("TMPDIR");
    char root[4096];
    snprintf(root, sizeof root, "%s/harness-jail-XXXXXX", tmp && tmp[0] == '/' ? tmp : "/tmp");
    if (!mkdtemp(root))
        fatal(2, "jail: mkdtemp %s: %s", root, strerror(errno));
    if (unshare(CLONE_NEWPID) != 0)
        fatal(2, "jail: unshare(CLONE_NEWPID): %s", strerror(errno));
    pid_t init = fork();
    if (init < 0)
        fatal(2, "jail: fork: %s", strerror(errno));
    if (init > 0) { /* outside: wait, then remove the (on the host, empty) mount point */
        int code = wait_for(init);
        rmdir(root);
        exit(code);
    }
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS) != 0)
        fatal(2, "jail: unshare: %s", strerror(errno));
    build(root);
    pid_t child = fork();
    if (child < 0)
        fatal(2, "jail: fork: %s", strerror(errno));
    if (child > 0) /* the namespace's init: reap, and end with the command */
        exit(wait_for(child));
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (chroot(root) != 0)
        fatal(2, "jail: chroot %s: %s", root, strerror(errno));
    if (!keep_cwd && chdir("/") != 0)
        fatal(2, "jail: chdir /: %s", strerror(errno));
    uint64_t keep = 1ULL << PROBE_CAP_SETUID | 1ULL << PROBE_CAP_SETGID;
    keep_capabilities(keep | (keep_chroot ? 1ULL << PROBE_CAP_SYS_CHROOT : 0));
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        fatal(2, "jail: no_new_privs: %s", strerror(errno));
    if (filter)
        deny_chroot(any_arch);
    execv(argv[i + 1], &argv[i + 1]);
    fatal(127, "jail: exec %s: %s", argv[i + 1], strerror(errno));
}
