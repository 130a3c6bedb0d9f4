/* priv-setid-view: set-id files in the sandbox's own view (issue 37: every way into
 * an operation). priv-setuid-exec and priv-setgid-exec run harness's helpers; a
 * sandbox whose workload keeps no_new_privs off may have put them on a nosuid mount and
 * left its image's own set-id programs (passwd, mount, su...) where set-id bits are
 * honoured. As the unprivileged uid, with no_new_privs off, the view is walked (never
 * through a symlink, /proc or /sys) for regular files setuid to a uid not its own,
 * setgid (group-executable) to a group it does not hold (root's first, then the
 * service users': a setgid-shadow program reads /etc/shadow), or (in the host's user
 * namespace) carrying file capabilities, that it may execute on a mount without
 * nosuid (a folder it may pass through but not list cuts the walk only where set-id
 * bits may be honoured below it), with every descriptor it holds of such a file (its
 * folder may be hidden since: started by execveat), and each (at most SETID_TRIED,
 * held ones first) is started and its ids read before it runs a single
 * instruction: the child waits on the parent's CPU at the lowest priority, the parent
 * stops it (SIGSTOP) as soon as its exec is done (its close-on-exec pipe closed),
 * before its return to user space, and reads /proc/<pid>/status. It is started with
 * `--version`, /dev/null for stdin, stdout and stderr, and no environment, and killed
 * there. No control: the host's own set-id programs are not the helpers'. */

#include "probe.h"

#include <limits.h>
#include <sched.h>
#include <sys/statvfs.h>
#include <sys/wait.h>

#define SETID_ENTRIES 2000000
#define SETID_MS 4000.0
#define SETID_TRIED 8

#define SETID_PATH 4096

static char g_cut_why[200]; /* why the walk left something unseen */

/* Whether the workload holds group `gid` (real, effective or supplementary). */
static int holds_gid(gid_t gid)
{
    gid_t groups[256];
    int n = getgroups(256, groups);
    for (int i = 0; i < n; i++)
        if (groups[i] == gid)
            return 1;
    return getgid() == gid || getegid() == gid;
}

/* Whether `id` has a mapping in this user namespace's `map` (uid_map or gid_map);
 * 1 where the map cannot be read (then the exec tells). */
static int id_mapped(const char *map, unsigned id)
{
    char path[32], buf[4096];
    snprintf(path, sizeof path, "/proc/self/%s", map);
    ssize_t got = read_file(path, buf, sizeof buf - 1);
    if (got <= 0)
        return 1;
    buf[got] = '\0';
    unsigned inside, outside, count;
    for (char *line = buf; line && sscanf(line, "%u %u %u", &inside, &outside, &count) == 3;
         line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
        if (id >= inside && id - inside < count)
            return 1;
    return 0;
}

static void walk_cut(int *cut, const char *why, const char *path)
{
    if (!*cut)
        snprintf(g_cut_why, sizeof g_cut_why, "%s (%.120s)", why, path);
    *cut = 1;
}

static unsigned g_ov_uid = 65534, g_ov_gid = 65534; /* the kernel's overflow ids */
static int g_roots; /* root's are kept ahead of the others in found[] */

/* The kind of a regular file's set-id gain for the workload: 'u' setuid to a uid not
 * its own, 'g' setgid (group-executable) to a group it does not hold, an owner the
 * user namespace maps; else 0 (file capabilities are asked apart: an xattr read). */
static char setid_kind(const struct stat *st)
{
    if ((st->st_mode & S_ISUID) && st->st_uid != getuid() &&
        (st->st_uid != g_ov_uid || id_mapped("uid_map", st->st_uid)))
        return 'u';
    if ((st->st_mode & S_ISGID) && (st->st_mode & S_IXGRP) && !holds_gid(st->st_gid) &&
        (st->st_gid != g_ov_gid || id_mapped("gid_map", st->st_gid)))
        return 'g';
    return 0;
}

/* found[n] = kind and path, root's ahead of the others. */
static void found_add(char (*found)[SETID_PATH + 2], int *n, char kind, const struct stat *st, const char *path)
{
    int root = (kind == 'u' && st->st_uid == 0) || (kind == 'g' && st->st_gid == 0);
    if (root && *n > g_roots) /* the first tried are the worst */
        memcpy(found[*n], found[g_roots], sizeof found[0]);
    snprintf(found[root ? g_roots : *n], sizeof found[0], "%c%s", kind, path);
    g_roots += root;
    (*n)++;
}

/* Whether a folder that can be passed through but not listed may hold a set-id file
 * that is honoured: its mount honours set-id bits, or another mount lies below it. */
static int may_hold_setid(const char *dir)
{
    struct statvfs vf;
    if (statvfs(dir, &vf) != 0 || !(vf.f_flag & ST_NOSUID))
        return 1;
    size_t n = strlen(dir);
    for (int i = 0; i < g_nmnt; i++)
        if (!strncmp(g_mnt[i].mp, dir, n) && g_mnt[i].mp[n] == '/')
            return 1;
    return 0;
}

/* Descriptors the workload holds (at any number) of a regular set-id or file-capability file
 * on a mount that honours them, as "/proc/self/fd/N" (started by execveat: its folder
 * may be hidden since, or not in view at all), harness's own helpers left out. */
static void setid_held(int fcaps, char (*found)[SETID_PATH + 2], int *n, int max)
{
    struct stat helper[2];
    int has[2] = { o.setuid_helper && stat(o.setuid_helper, &helper[0]) == 0,
                   o.setgid_helper && stat(o.setgid_helper, &helper[1]) == 0 };
    const int *at_start;
    int more, nstart = held_list(&at_start, &more);
    DIR *dir = opendir("/proc/self/fd"); /* every number, 1500 as well as 3 */
    for (int i = 0; *n < max; i++) {
        int fd;
        if (dir) {
            struct dirent *e = readdir(dir);
            char *end;
            if (!e)
                break;
            long v = strtol(e->d_name, &end, 10);
            if (e->d_name[0] == '.' || *end || v < 0 || v > INT_MAX || v == dirfd(dir))
                continue;
            fd = (int)v;
        } else if (i < nstart) { /* no /proc: those held at start, found by number */
            fd = at_start[i];
        } else {
            break;
        }
        struct stat st;
        struct statvfs vf;
        if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || fstatvfs(fd, &vf) != 0 || (vf.f_flag & ST_NOSUID))
            continue;
        char kind = setid_kind(&st);
        if (!kind && fcaps && (st.st_mode & 0111) && fgetxattr(fd, "security.capability", NULL, 0) > 0)
            kind = 'c';
        int mine = 0;
        for (int h = 0; h < 2; h++)
            mine |= has[h] && helper[h].st_dev == st.st_dev && helper[h].st_ino == st.st_ino;
        char path[64], target[512] = "";
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        ssize_t t = readlink(path, target, sizeof target - 1);
        target[t > 0 ? t : 0] = '\0';
        if (kind && !mine && !strstr(target, "/harness-helpers-"))
            found_add(found, n, kind, &st, path);
    }
    if (dir)
        closedir(dir);
}

/* The view's regular files of a set-id gain (setid_kind), or carrying file capabilities
 * where `fcaps` (the host's user namespace), that the workload may execute on a mount
 * that honours them, harness's own helpers left out; added to found[] after the `n`
 * there, up to `max` in all; the new count. *cut where the walk stopped short. */
static int setid_walk(int fcaps, char (*found)[SETID_PATH + 2], int n, int max, int *cut)
{
    struct item { char *path; };
    size_t cap = 1024, head = 0, tail = 0, read = 0;
    struct item *q = malloc(cap * sizeof *q);
    double end = now_ms() + SETID_MS;
    if (end > check_end() - 1000.0) /* room left to start what it finds */
        end = check_end() - 1000.0;
    *cut = 0;
    if (!q) {
        *cut = 1;
        return n;
    }
    q[tail++] = (struct item){ strdup("/") };
    int stop = 0;
    while (head < tail && n < max && !stop) {
        char *dir = q[head++].path;
        DIR *d = dir ? opendir(dir) : NULL;
        if (dir && !d && errno == EACCES && access(dir, X_OK) == 0 && may_hold_setid(dir))
            walk_cut(cut, "a folder it may pass through but not list", dir); /* run by path */
        for (struct dirent *e; d && (e = readdir(d)) && n < max;) {
            if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
                continue;
            if (++read > SETID_ENTRIES || ((read & 1023) == 0 && now_ms() > end)) {
                walk_cut(cut, read > SETID_ENTRIES ? "2,000,000 entries read" : "its time ran out", dir);
                stop = 1;
                break;
            }
            char p[SETID_PATH];
            struct stat st;
            if (snprintf(p, sizeof p, "%s/%s", strcmp(dir, "/") ? dir : "", e->d_name) >= (int)sizeof p) {
                walk_cut(cut, "a path longer than it can name", dir);
                continue;
            }
            unsigned char type = e->d_type;
            if (type == DT_UNKNOWN) /* a filesystem that does not say: ask */
                type = lstat(p, &st) != 0 ? DT_UNKNOWN : S_ISDIR(st.st_mode) ? DT_DIR
                       : S_ISREG(st.st_mode) ? DT_REG : DT_UNKNOWN;
            if (type == DT_DIR) {
                if (!strcmp(p, "/proc") || !strcmp(p, "/sys"))
                    continue;
                if (tail == cap) {
                    struct item *more = realloc(q, (cap *= 2) * sizeof *q);
                    if (!more) {
                        walk_cut(cut, "no memory", dir);
                        break;
                    }
                    q = more;
                }
                q[tail++] = (struct item){ strdup(p) };
                continue;
            }
            if (type != DT_REG || lstat(p, &st) != 0 || !S_ISREG(st.st_mode))
                continue;
            char kind = setid_kind(&st);
            if (!kind && fcaps && (st.st_mode & 0111) && getxattr(p, "security.capability", NULL, 0) > 0)
                kind = 'c';
            struct statvfs vf;
            if (!kind || statvfs(p, &vf) != 0 || (vf.f_flag & ST_NOSUID) || access(p, X_OK) != 0)
                continue;
            if (strstr(p, "/harness-helpers-") || (o.setuid_helper && !strcmp(p, o.setuid_helper)) ||
                (o.setgid_helper && !strcmp(p, o.setgid_helper)))
                continue; /* harness's own helpers, of any build: their checks are theirs */
            found_add(found, &n, kind, &st, p);
        }
        if (d)
            closedir(d);
        free(dir);
    }
    while (head < tail)
        free(q[head++].path);
    free(q);
    return n;
}

/* The text after `key` in /proc/<pid>/status, in buf; NULL where there is none. */
static const char *status_field(pid_t pid, const char *key, char *buf, size_t n)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    ssize_t got = read_file(path, buf, n - 1);
    buf[got > 0 ? got : 0] = '\0';
    const char *at = strstr(buf, key);
    return at ? at + strlen(key) : NULL;
}

/* The id fields (real, effective, saved, fs) of a "Uid:" or "Gid:" line. */
static int status_ids(pid_t pid, const char *key, unsigned ids[4])
{
    char buf[4096];
    const char *at = status_field(pid, key, buf, sizeof buf);
    return at && sscanf(at, "%u %u %u %u", &ids[0], &ids[1], &ids[2], &ids[3]) == 4 ? 0 : -1;
}

/* The CapEff of a process (0 if unreadable). */
static uint64_t cap_eff_of(pid_t pid)
{
    char buf[4096];
    const char *at = status_field(pid, "CapEff:", buf, sizeof buf);
    return at ? strtoull(at, NULL, 16) : 0;
}

/* Start `path` and read its ids at its first instruction: 1 its effective or saved
 * uid (kind 'u') is not the workload's, or gid (kind 'g') is one it does not hold
 * (in *gained), or (kind 'c') it holds an effective capability the workload does not;
 * 0 not; -1 it could not be told (not run, or the parent was too late and it had
 * ended). */
static int starts_with_gain(const char *path, char kind, unsigned *gained)
{
    int p[2];
    cpu_set_t mine, one;
    int cpu = sched_getcpu();
    if (pipe2(p, O_CLOEXEC) != 0 || cpu < 0 || sched_getaffinity(0, sizeof mine, &mine) != 0)
        return -1;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    sched_setaffinity(0, sizeof one, &one); /* the parent on that CPU too, for the time */
    pid_t pid = fork();
    if (pid == 0) {
        struct sched_param sp = { 0 };
        sched_setscheduler(0, SCHED_IDLE, &sp);
        int null = open("/dev/null", O_RDWR);
        for (int fd = 0; fd < 3 && null >= 0; fd++)
            dup2(null, fd);
        char *argv[] = { (char *)path, "--version", NULL }, *envp[] = { NULL };
        if (!strncmp(path, "/proc/self/fd/", 14)) /* a held descriptor: /proc may not be there */
            syscall(SYS_execveat, atoi(path + 14), "", argv, envp, AT_EMPTY_PATH);
        else
            execve(path, argv, envp);
        int e = errno; /* never started: nothing gained (ENOEXEC, a missing loader, an LSM) */
        if (write(p[1], &e, sizeof e) < 0)
            _exit(126);
        _exit(127);
    }
    close(p[1]);
    int failed = 0;
    while (pid > 0 && read(p[0], &failed, sizeof failed) < 0 && errno == EINTR) {
    }
    if (pid > 0 && !failed)
        kill(pid, SIGSTOP);
    sched_setaffinity(0, sizeof mine, &mine);
    close(p[0]);
    if (pid < 0)
        return -1;
    if (failed) { /* its exec failed: it never ran with anything */
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
        }
        return 0;
    }
    siginfo_t si = { 0 };
    int told = -1;
    unsigned ids[4];
    if (waitid(P_PID, (id_t)pid, &si, WEXITED | WSTOPPED | WNOWAIT) == 0 &&
        !(si.si_code == CLD_EXITED && si.si_status == 127) &&
        (kind == 'c' || status_ids(pid, kind == 'g' ? "Gid:" : "Uid:", ids) == 0)) {
        unsigned other = kind == 'u' ? (ids[1] != getuid() ? ids[1] : ids[2])
                         : (!holds_gid(ids[1]) ? ids[1] : ids[2]);
        int gain = kind == 'c' ? (cap_eff_of(pid) & ~cap_eff_of(getpid())) != 0
                   : kind == 'u' ? other != getuid() : !holds_gid(other);
        if (gain) {
            *gained = other;
            told = 1;
        }
        else if (si.si_code == CLD_STOPPED)
            told = 0; /* stopped before it ran: what the exec gave */
    }
    kill(pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
    }
    return told;
}

/* As the unprivileged uid: blocked with no_new_privs (no set-id bit is honoured at
 * exec); else escaped by the first set-id file in view that starts with an id or a
 * capability the workload lacks, blocked where none is in view or none does, an error
 * where the walk was cut, more are in view than are tried, or a start was not told. */
void chk_priv_setid_view(void)
{
    static char found[SETID_TRIED + 1][SETID_PATH + 2];
    drop_privs();
    if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1)
        outcome(OC_BLOCKED, 0, "no_new_privs is set: no set-id bit is honoured at exec");
    if (getuid() == 0 || geteuid() == 0)
        outcome(OC_BLOCKED, 0, "the workload's uid is 0 here (a user namespace of its own): no gain");
    int cut = 0, tried = 0, untold = 0, n = 0;
    char ov[32];
    if (read_file("/proc/sys/kernel/overflowuid", ov, sizeof ov - 1) > 0)
        g_ov_uid = (unsigned)strtoul(ov, NULL, 10);
    if (read_file("/proc/sys/kernel/overflowgid", ov, sizeof ov - 1) > 0)
        g_ov_gid = (unsigned)strtoul(ov, NULL, 10);
    if (read_mounts() != 0)
        g_nmnt = 0;
    setid_held(initial_userns(), found, &n, SETID_TRIED + 1);
    n = setid_walk(initial_userns(), found, n, SETID_TRIED + 1, &cut);
    ev_int("setid_in_view", n);
    for (int i = 0; i < n && tried < SETID_TRIED; i++, tried++) {
        unsigned id = 0;
        int r = starts_with_gain(found[i] + 1, found[i][0], &id);
        if (r == 1) {
            ev_str("via", found[i] + 1);
            char k = found[i][0], with[96] = "a capability the workload lacks, effective", at[SETID_PATH + 64];
            if (!strncmp(found[i] + 1, "/proc/self/fd/", 14))
                snprintf(at, sizeof at, "file it holds as descriptor %s", found[i] + 15);
            else
                snprintf(at, sizeof at, "%s in the sandbox's view", found[i] + 1);
            if (k != 'c')
                snprintf(with, sizeof with, "%s %u, %s", k == 'u' ? "euid" : "egid", id,
                         k == 'u' ? "not the workload's uid" : "a group the workload does not hold");
            outcome(OC_ESCAPED, 0, "no_new_privs is off, and the %s %s (a mount that honours them)"
                    " started with %s", k == 'u' ? "setuid" : k == 'g' ? "setgid" : "file-capability",
                    at, with);
        }
        untold += r < 0;
    }
    if (cut)
        outcome(OC_ERROR, 0, "no_new_privs is off, and the walk of the sandbox's view for set-id"
                " files left some unseen: %s (%d found): no proof that none gains", g_cut_why, n);
    if (untold)
        outcome(OC_ERROR, 0, "no_new_privs is off, and %d of the %d set-id files in view could not"
                " be caught at their start: no proof that none gains", untold, tried);
    if (n > SETID_TRIED)
        outcome(OC_ERROR, 0, "no_new_privs is off, and more than %d set-id files are in view: no"
                " proof that none gains", SETID_TRIED);
    outcome(OC_BLOCKED, 0, "no_new_privs is off, and %s", n ? "no set-id file in view started"
            " with an id or capability the workload lacks" : "no set-id file to an id the workload"
            " lacks, in view, may be run");
}
