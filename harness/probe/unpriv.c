/* Scenario "privilege": becoming the unprivileged uid for the attempts made as one,
 * also where the sandbox is a user namespace an unprivileged user made (rootless);
 * and one of those attempts, `priv-inh-exec`. */

#include "probe.h"

#define INIT_USER_NS "user:[4026531837]" /* PROC_USER_INIT_INO, fixed by the kernel */

/* 1 in the initial user namespace, 0 in another; unknown counts as initial. */
int initial_userns(void)
{
    char l[64];
    ssize_t k = readlink("/proc/self/ns/user", l, sizeof l - 1);
    if (k <= 0)
        return 1;
    l[k] = '\0';
    return !strcmp(l, INIT_USER_NS);
}

/* Write a /proc/self file (a user namespace's maps); 0, or -1 with errno. */
static int write_proc(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = write(fd, text, strlen(text));
    int e = errno;
    close(fd);
    errno = e;
    return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* Rootless: root of a user namespace that maps no other id (setgroups denied, only
 * its maker's id mapped). A user namespace of its own maps `u` to this one id, and
 * every capability is dropped: the workload is then the unprivileged user it already
 * is on the host, as a uid other than root. -1 with errno where it cannot (nested
 * user namespaces refused). */
static int drop_into_own_userns(uid_t u)
{
    uid_t eu = geteuid();
    gid_t eg = getegid();
    char map[64];
    /* A read-only /proc (bwrap's --remount-ro /proc) takes no map: with the
     * capability to, this check's own mount namespace gets it read-write, else a
     * proc of its own (nothing the sandbox sees changes). */
    if (access("/proc/self/uid_map", W_OK) != 0 && errno == EROFS) {
        if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
            (mount(NULL, "/proc", NULL, MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0 &&
             mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)) {
            errno = EROFS;
            return -1;
        }
    }
    if (unshare(CLONE_NEWUSER) != 0)
        return -1;
    write_proc("/proc/self/setgroups", "deny");
    snprintf(map, sizeof map, "%u %u 1\n", u, eu);
    if (write_proc("/proc/self/uid_map", map) != 0)
        return -1;
    snprintf(map, sizeof map, "%u %u 1\n", u, eg);
    if (write_proc("/proc/self/gid_map", map) != 0)
        return -1;
    struct cap_header h = { PROBE_CAP_VERSION_3, 0 };
    struct cap_data none[2];
    memset(none, 0, sizeof none);
    if (setresgid(u, u, u) != 0 || setresuid(u, u, u) != 0 ||
        syscall(SYS_capset, &h, none) != 0)
        return -1;
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    return 0;
}

int g_own_userns;

/* Attempts run unprivileged: as root, become --unpriv-uid (gid the same),
 * deliberately without no_new_privs. */
void drop_privs(void)
{
    uid_t u = g_unpriv_uid;
    if (geteuid() != 0)
        return;
    char deny[16] = "";
    int denied = read_file("/proc/self/setgroups", deny, sizeof deny - 1) > 0 &&
                 !strncmp(deny, "deny", 4);
    if (setgroups(0, NULL) != 0 && !(errno == EPERM && denied))
        fail(errno, "setgroups(0, NULL)");
    if (setresgid(u, u, u) != 0 || setresuid(u, u, u) != 0) {
        int e = errno;
        if (e != EINVAL || initial_userns())
            fail(e, "setresgid/setresuid(%u)", u);
        if (drop_into_own_userns(u) != 0)
            fail(errno, "id %u is not mapped in this user namespace, and no user namespace"
                 " of its own could map it%s (map --unpriv-uid's id into the sandbox's, or start"
                 " the workload as a non-root uid)", u,
                 errno == EROFS ? " (/proc is read-only, and could not be made writable here)" : "");
        g_own_userns = 1;
        ev_int("own_userns", 1);
    }
    ev_int("uid", u);
}

/* As the unprivileged uid: the inheritable set it was handed (less what the bounding
 * set drops), without no_new_privs, in the host's user namespace, is a capability any
 * program carrying it as an inheritable file capability runs with (CVE-2022-24769's
 * shape: Docker before 20.10.14 left a container's set inheritable). The inh helper
 * (every capability `=ei`) shows it where the helpers' mount honours file
 * capabilities; where it does not (nosuid), an image's own such program still would. */
void chk_priv_inh_exec(void)
{
    char hex[24];
    drop_privs();
    struct cap_header h = { PROBE_CAP_VERSION_3, 0 };
    struct cap_data d[2];
    memset(d, 0, sizeof d);
    if (syscall(SYS_capget, &h, d) != 0)
        fail(errno, "capget");
    uint64_t inh = (uint64_t)d[1].inheritable << 32 | d[0].inheritable, bnd = 0;
    for (unsigned long c = 0; c < 64; c++) {
        int r = prctl(PR_CAPBSET_READ, c, 0, 0, 0);
        if (r < 0)
            break;
        if (r > 0)
            bnd |= 1ULL << c;
    }
    inh &= bnd;
    int nnp = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)inh);
    ev_str("cap_inh", hex);
    ev_int("nnp", nnp);
    if (!inh)
        outcome(OC_BLOCKED, 0, "nothing inheritable as uid %u", (unsigned)geteuid());
    if (nnp)
        outcome(OC_BLOCKED, 0, "%s inheritable, but no_new_privs: no program gains from it", hex);
    if (g_own_userns || !initial_userns())
        outcome(OC_BLOCKED, 0, "%s inheritable, in a child user namespace only", hex);
    if (o.inh_helper && getxattr(o.inh_helper, "security.capability", NULL, 0) > 0) {
        struct whoami w;
        run_whoami(o.inh_helper, &w);
        if (w.cap_eff) {
            snprintf(hex, sizeof hex, "%016llx", (unsigned long long)w.cap_eff);
            outcome(OC_ESCAPED, 0, "the inh helper (every capability =ei) ran with CapEff %s: the"
                    " inheritable set the workload was handed", hex);
        }
    }
    outcome(OC_ESCAPED, 0, "holds %s inheritable as uid %u without no_new_privs: a program"
            " carrying those as inheritable file capabilities runs with them", hex,
            (unsigned)geteuid());
}
