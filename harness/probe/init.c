/*
 * Mode "init": PID 1 of a microVM guest.
 * The harness boots a guest kernel with an initramfs whose /init is this binary,
 * started as `/init init` (the words after "--" on the kernel command line). It
 * prepares the guest from the files under /harness, runs `/init run ARGS...` as
 * its child with stdout on the serial console, then reboots, which ends the VMM
 * (reboot=t with -no-reboot; firecracker exits on reboot). Its own messages are
 * plain text on the console, never JSON, so the harness keeps only probe lines.
 *   /harness/args      the arguments of `probe run`, NUL-separated
 *   /harness/modules   kernel modules to load in order, one path per line; the
 *                      kernel command line's "NAME.param=value" words are passed on
 *   /harness/net       "IFACE ADDRESS PREFIX GATEWAY": configure the NIC
 *   /harness/nnp       present: the probe runs with no_new_privs
 *   /harness/nosuid    present: /helpers is remounted nosuid and read-only
 * /helpers/fcap gets CAP_NET_RAW as a file capability here: a cpio cannot carry one.
 */

#include "probe.h"

__attribute__((format(printf, 1, 2)))
static void init_say(const char *fmt, ...)
{
    char line[600];
    int n = snprintf(line, sizeof line, "harness-init: ");
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (k > 0)
        n += k < (int)(sizeof line - (size_t)n - 1) ? k : (int)(sizeof line - (size_t)n - 2);
    line[n++] = '\n';
    write_all(STDERR_FILENO, line, (size_t)n);
}

__attribute__((noreturn))
static void init_reboot(void)
{
    sync();
    reboot(RB_AUTOBOOT);
    for (;;)
        pause();
}

/* A small file, whole and NUL-terminated: its length, or -1. */
static ssize_t init_slurp(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t n = 0;
    ssize_t k;
    while (n < size - 1 && (k = read(fd, buf + n, size - 1 - n)) > 0)
        n += (size_t)k;
    close(fd);
    buf[n] = 0;
    return (ssize_t)n;
}

static void init_modules(void)
{
    static char list[8192], cmdline[4096], words[4096];
    if (init_slurp("/harness/modules", list, sizeof list) <= 0)
        return;
    if (init_slurp("/proc/cmdline", cmdline, sizeof cmdline) < 0)
        cmdline[0] = 0;
    char *save = NULL;
    for (char *path = strtok_r(list, "\n", &save); path; path = strtok_r(NULL, "\n", &save)) {
        /* The module's name: the file name up to ".ko", with '-' read as '_'. */
        const char *base = strrchr(path, '/');
        char name[64];
        snprintf(name, sizeof name, "%s", base ? base + 1 : path);
        char *ext = strstr(name, ".ko");
        if (ext)
            *ext = 0;
        for (char *c = name; *c; c++)
            if (*c == '-')
                *c = '_';
        char params[2048] = "";
        size_t len = strlen(name), used = 0;
        memcpy(words, cmdline, sizeof words);
        char *wsave = NULL;
        for (char *w = strtok_r(words, " \n", &wsave); w; w = strtok_r(NULL, " \n", &wsave)) {
            if (strncmp(w, name, len) || w[len] != '.')
                continue;
            int k = snprintf(params + used, sizeof params - used, "%s%s", used ? " " : "", w + len + 1);
            if (k > 0 && (size_t)k < sizeof params - used)
                used += (size_t)k;
        }
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || (syscall(SYS_finit_module, fd, params, 0) != 0 && errno != EEXIST))
            init_say("module %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
    }
}

/* Loopback, and the NIC /harness/net asks for: 0, or -1 (with `why`) if that failed. */
static int init_net(char *why, size_t size)
{
    char conf[256], ifname[IFNAMSIZ], addr[64], gw[64];
    int prefix = 0, asked = init_slurp("/harness/net", conf, sizeof conf) > 0;
    int sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (sock < 0)
        return snprintf(why, size, "socket: %s", strerror(errno)), asked ? -1 : 0;
    if (net_ifup(sock, "lo", NULL, 0))
        init_say("lo: %s", strerror(errno));
    int failed = 0;
    if (asked && sscanf(conf, "%15s %63s %d %63s", ifname, addr, &prefix, gw) != 4) {
        snprintf(why, size, "/harness/net: expected IFACE ADDRESS PREFIX GATEWAY");
        failed = 1;
    } else if (asked) {
        if (net_ifup(sock, ifname, addr, prefix)) {
            snprintf(why, size, "%s: %s", ifname, strerror(errno));
            failed = 1;
        } else if (net_default_route(sock, gw)) {
            snprintf(why, size, "default route via %s: %s", gw, strerror(errno));
            failed = 1;
        }
    }
    close(sock);
    return failed ? -1 : 0;
}

static void init_helpers(void)
{
    struct stat st;
    if (stat("/helpers", &st))
        return;
    /* struct vfs_cap_data, revision 2 (little-endian): CAP_NET_RAW permitted, effective. */
    uint32_t cap[5] = { 0x02000001U, 1U << PROBE_CAP_NET_RAW, 0, 0, 0 };
    if (!stat("/helpers/fcap", &st) && setxattr("/helpers/fcap", "security.capability", cap, sizeof cap, 0))
        init_say("setcap /helpers/fcap: %s", strerror(errno));
    if (!stat("/harness/nosuid", &st)
        && (mount("/helpers", "/helpers", NULL, MS_BIND, NULL)
            || mount(NULL, "/helpers", NULL, MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV | MS_RDONLY, NULL)))
        init_say("remount /helpers nosuid: %s", strerror(errno));
}

__attribute__((noreturn))
void init_main(void)
{
    static char args[16384];
    char *argv[256] = { "/init" };
    int argc = 1;
    if (getpid() != 1)
        fatal(2, "init: must be process 1 of a guest");
    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
    mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777");
    syscall(SYS_syslog, 8 /* SYSLOG_ACTION_CONSOLE_LEVEL */, NULL, 1); /* keep probe lines whole */
    init_modules();
    char why[300], detail[400];
    if (init_net(why, sizeof why)) {
        /* A network that was asked for and is missing must not pass for confinement. */
        snprintf(detail, sizeof detail, "init: the guest network could not be set up: %s", why);
        Buf b = { .n = 0 };
        bput(&b, "{\"type\":\"fatal\",\"detail\":");
        bstr(&b, detail);
        bput(&b, "}");
        emit(&b);
        init_reboot();
    }
    init_helpers();
    ssize_t n = init_slurp("/harness/args", args, sizeof args);
    for (ssize_t i = 0; n > 0 && i < n && argc < 255; i += (ssize_t)strlen(args + i) + 1)
        argv[argc++] = args + i;
    argv[argc] = NULL;
    struct stat st;
    int nnp = !stat("/harness/nnp", &st);
    pid_t pid = fork();
    if (pid == 0) {
        if (nnp && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
            _exit(126);
        execv("/init", argv);
        _exit(127);
    }
    int status = 0;
    for (;;) { /* reap orphans too: this is PID 1 */
        pid_t w = waitpid(-1, &status, 0);
        if (w == pid || (w < 0 && errno != EINTR))
            break;
    }
    if (pid < 0)
        init_say("fork: %s", strerror(errno));
    else if (WIFSIGNALED(status))
        init_say("probe killed by signal %d", WTERMSIG(status));
    else
        init_say("probe exited with status %d", WEXITSTATUS(status));
    init_reboot();
}
