/* Processes outside the sandbox that read what the workload writes, through what it
 * holds at start (fs-inherited-fds, held.c): the write end of a pipe no process of
 * the sandbox reads, and a controlling terminal of a host session (TIOCSTI pushes
 * bytes into its input). Nothing is ever written into either, nothing typed. */

#include "probe.h"

#define INIT_PID_NS "pid:[4026531836]" /* PROC_PID_INIT_INO, fixed by the kernel */
#define CAP_SYS_ADMIN_BIT 21

/* The probe's PID namespace: 1 where it is the sandbox's own (not the kernel's
 * initial one), `name` its /proc/self/ns/pid link. */
static int own_pidns(char *name, size_t n)
{
    ssize_t k = readlink("/proc/self/ns/pid", name, n - 1);
    name[k > 0 ? k : 0] = 0;
    return k > 0 && strcmp(name, INIT_PID_NS) != 0;
}

/* Whether process `pid` (a /proc entry) holds `pipe` ("pipe:[ino]") open for reading. */
static int reads_pipe(const char *pid, const char *pipe)
{
    char path[96], link[64], info[256];
    snprintf(path, sizeof path, "/proc/%s/fd", pid);
    DIR *dir = opendir(path);
    struct dirent *e;
    int found = 0;
    while (dir && !found && (e = readdir(dir)) != NULL) {
        snprintf(path, sizeof path, "/proc/%s/fd/%.32s", pid, e->d_name);
        ssize_t k = readlink(path, link, sizeof link - 1);
        if (k <= 0 || (size_t)k != strlen(pipe) || memcmp(link, pipe, (size_t)k))
            continue;
        snprintf(path, sizeof path, "/proc/%s/fdinfo/%.32s", pid, e->d_name);
        ssize_t n = read_file(path, info, sizeof info - 1);
        unsigned flags;
        info[n > 0 ? n : 0] = 0;
        const char *f = strstr(info, "flags:");
        found = f && sscanf(f + 6, "%o", &flags) == 1 && (flags & O_ACCMODE) != O_WRONLY;
    }
    if (dir)
        closedir(dir);
    return found;
}

/* Whether held descriptor `fd` is the write end of a pipe (or FIFO) that something
 * reads (poll: a pipe nobody reads shows POLLERR; nothing is written) and that no
 * process of the sandbox holds open for reading: whatever reads it is outside, and
 * what it does with the bytes (a host shell running them as commands) harness cannot
 * tell. The sandbox's processes are those of the probe's PID namespace where that is
 * its own; in the kernel's initial one every host process is visible and none can be
 * told inside from outside: the probe itself only. */
int held_pipe_outside(int fd)
{
    int flags = fcntl(fd, F_GETFL);
    struct pollfd p = { .fd = fd, .events = POLLOUT };
    if (flags < 0 || (flags & O_PATH) || (flags & O_ACCMODE) == O_RDONLY || poll(&p, 1, 0) < 0 ||
        (p.revents & (POLLERR | POLLNVAL)))
        return 0;
    char proc[64], pipe[64], mine[64], theirs[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    ssize_t k = readlink(proc, pipe, sizeof pipe - 1);
    pipe[k > 0 ? k : 0] = 0;
    if (reads_pipe("self", pipe))
        return 0;
    if (!own_pidns(mine, sizeof mine))
        return 1; /* the kernel's initial one: only the probe itself is told inside */
    DIR *dir = opendir("/proc");
    struct dirent *e;
    int inside = 0;
    while (dir && !inside && (e = readdir(dir)) != NULL) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        snprintf(proc, sizeof proc, "/proc/%.32s/ns/pid", e->d_name);
        k = readlink(proc, theirs, sizeof theirs - 1);
        theirs[k > 0 ? k : 0] = 0;
        inside = k > 0 && !strcmp(theirs, mine) && reads_pipe(e->d_name, pipe);
    }
    if (dir)
        closedir(dir);
    return !inside;
}

/* Whether TIOCSTI works for the workload, in words: the sysctl that allows it
 * (dev.tty.legacy_tiocsti, 6.2 on) as read, "absent" where the kernel predates it
 * (always allowed), or why it could not be read. */
static const char *tiocsti_sysctl(char *buf, size_t n)
{
    ssize_t k = read_file("/proc/sys/dev/tty/legacy_tiocsti", buf, n - 1);
    if (k > 0) {
        buf[k] = 0;
        buf[strcspn(buf, "\n")] = 0;
        return buf;
    }
    int e = k == 0 ? EIO : errno;
    struct stat st;
    return e == ENOENT && stat("/proc/sys/dev/tty", &st) == 0 ? "absent" : errname(e);
}

/* CAP_SYS_ADMIN effective in the initial user namespace (where TIOCSTI checks it):
 * "1", "0", or "" where /proc/self/status is not read. */
static const char *sys_admin(void)
{
    char status[4096];
    unsigned long long eff;
    ssize_t n = read_file("/proc/self/status", status, sizeof status - 1);
    status[n > 0 ? n : 0] = 0;
    const char *at = strstr(status, "\nCapEff:");
    if (at == NULL || sscanf(at + 8, "%llx", &eff) != 1)
        return "";
    return (eff >> CAP_SYS_ADMIN_BIT & 1) && initial_userns() ? "1" : "0";
}

/* The workload's controlling terminal, where it has one (/dev/tty opens, nothing read
 * or written; or TIOCGSID answers on a descriptor of 0-2, the probe's own channel; or
 * /proc/self/stat names one): evidence.ctty, one row [found by, its session as
 * getsid(0) sees it ("0": the leader is outside the PID namespace), "own" or
 * "initial" PID namespace, the terminal's device (its devpts), path, mount point in
 * the sandbox's table (`mount`, held.c's lookup: NULL where the table is not read),
 * dev.tty.legacy_tiocsti, CAP_SYS_ADMIN].
 * The judge places it: a host session's terminal takes what TIOCSTI types. */
void held_ctty(int (*mount)(int fd))
{
    char how[16] = "", stat_line[512], dev[24] = "", path[256] = "", tiocsti[16], ns[64];
    const char *point = "";
    int tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
    if (tty >= 0) {
        snprintf(how, sizeof how, "/dev/tty");
        close(tty);
    }
    ssize_t n = read_file("/proc/self/stat", stat_line, sizeof stat_line - 1);
    stat_line[n > 0 ? n : 0] = 0;
    const char *r = strrchr(stat_line, ')');
    int tty_nr = 0;
    if (r && sscanf(r + 1, " %*c %*d %*d %*d %d", &tty_nr) == 1 && tty_nr && !how[0])
        snprintf(how, sizeof how, "tty_nr");
    for (int fd = 0; fd <= 2; fd++) {
        pid_t sid;
        struct stat st;
        if (ioctl(fd, TIOCGSID, &sid) != 0 || fstat(fd, &st) != 0)
            continue;
        snprintf(how, sizeof how, "fd %d", fd);
        snprintf(dev, sizeof dev, "%u:%u", major(st.st_dev), minor(st.st_dev));
        char proc[32];
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
        ssize_t k = readlink(proc, path, sizeof path - 1);
        path[k > 0 ? k : 0] = 0;
        int m = mount ? mount(fd) : -1;
        point = m >= 0 ? g_mnt[m].mp : "";
        break;
    }
    if (!how[0])
        return; /* no controlling terminal */
    bput(&g_ev, ",\"ctty\":[[");
    bstr(&g_ev, how);
    bput(&g_ev, ",\"%d\",\"%s\",\"%s\",", (int)getsid(0), own_pidns(ns, sizeof ns) ? "own" : "initial",
         dev);
    bstr(&g_ev, path);
    bput(&g_ev, ",");
    bstr(&g_ev, point);
    bput(&g_ev, ",");
    bstr(&g_ev, tiocsti_sysctl(tiocsti, sizeof tiocsti));
    bput(&g_ev, ",\"%s\"]]", sys_admin());
}
