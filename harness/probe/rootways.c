/* The i386 entry's ways into root.c's attempts (int $0x80, numbers of its own), each
 * tried where x86_64's call was refused as a filter refuses (EPERM, ENOSYS): the
 * kernel's operations (priv-root-kernel; the clock's, by its other setters there too), a file handle made and opened
 * (priv-root-handle), a device node made (priv-root-mknod). A filter that matches
 * x86_64's numbers without checking seccomp_data.arch lets each through. Every call
 * runs in a child (a filter may kill on it), its arguments copied below 4 GiB; each
 * asks what the native attempt asks and changes nothing more. */

#include "probe.h"
#include <sys/timex.h>

#if defined(__x86_64__)
#include <sys/mman.h>

static int entry_here(void)
{
    static int here = -1;
    if (here < 0)
        here = i386_here();
    return here;
}

/* Up to two calls through the entry in a child, the second given the first's buffer
 * (a handle): its last answer, -errno; -EPERM where a filter killed the child,
 * -ENOSYS where the entry is not there. `fd_arg`: the second call's first argument,
 * a descriptor opened here. */
static long through_entry(const struct compat_call *c, int n, int fd_arg)
{
    int p[2];
    if (!entry_here())
        return -ENOSYS;
    if (pipe2(p, O_CLOEXEC) != 0)
        return -errno;
    pid_t pid = fork();
    if (pid == 0) {
        char *low = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
        long r = -ENOMEM, first[6] = { 0 };
        for (int i = 0; i < n && low != MAP_FAILED; i++) {
            long v[6] = { 0 };
            size_t used = 0;
            for (int k = 0; k < 6; k++) {
                const struct compat_arg *a = &c[i].a[k];
                v[k] = a->v;
                if (a->p && used + a->len <= (1 << 16)) {
                    memcpy(low + used, a->p, a->len);
                    v[k] = (long)(uintptr_t)(low + used);
                    used += (a->len + 15) & ~(size_t)15;
                }
            }
            if (i) { /* the handle the first call filled: its second argument */
                v[0] = fd_arg;
                v[1] = first[2];
            } else {
                memcpy(first, v, sizeof first);
            }
            if ((r = int80(c[i].nr, v)) < 0)
                break;
        }
        _exit(write(p[1], &r, sizeof r) == sizeof r ? 0 : 1);
    }
    close(p[1]);
    long r = -EPERM;
    if (pid < 0 || read(p[0], &r, sizeof r) != sizeof r)
        r = pid < 0 ? -errno : -EPERM;
    close(p[0]);
    while (pid > 0 && waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    return r;
}

/* The clock's other setters there, tried where its adjtimex (124) is refused: a list of
 * the clock's calls written from x86_64's names lacks the i386 entry's time64 ones
 * (clock_adjtime64, 405, takes x86_64's struct timex), and one copied from older tables
 * its clock_adjtime (343) or settimeofday (79). Each asks what the native attempt asks:
 * a tick of 0 refused after CAP_SYS_TIME is checked, or neither time nor zone. */
static const char *clock_i386(int32_t *tx32)
{
    struct timex tx64 = { .modes = ADJ_TICK, .tick = 0 };
    const struct compat_call ways[] = {
        { "clock_adjtime(CLOCK_REALTIME) (tick 0)", I386_NR_clock_adjtime, { CV(CLOCK_REALTIME), CP(tx32, 128) } },
        { "clock_adjtime64(CLOCK_REALTIME) (tick 0)", I386_NR_clock_adjtime64,
          { CV(CLOCK_REALTIME), CP(&tx64, sizeof tx64) } },
        { "settimeofday(NULL, NULL)", I386_NR_settimeofday, { CV(0), CV(0) } },
    };
    for (size_t i = 0; i < sizeof ways / sizeof ways[0]; i++) {
        long r = through_entry(&ways[i], 1, -1);
        if (r >= 0 || (r == -EINVAL && i < 2))
            return ways[i].name;
    }
    return NULL;
}

int kernel_i386(const char *name, const char **via)
{
    static const char none[] = "/proc/harness-no-such-file";
    static char host[1100];
    /* bpf's: as root.c's, a two-instruction kprobe program (r0 = 0; exit), its
     * instructions and licence where the child still sees them (the attribute's
     * pointers are 64 bits wide on both entries) */
    static const struct { uint8_t code, regs; int16_t off; int32_t imm; } insns[2] = { { 0xb7, 0, 0, 0 },
                                                                                     { 0x95, 0, 0, 0 } };
    static const char licence[] = "GPL";
    uint64_t battr[16] = { 0 };
    battr[0] = 2 | (uint64_t)2 << 32; /* BPF_PROG_TYPE_KPROBE, two instructions */
    battr[1] = (uint64_t)(uintptr_t)insns;
    battr[2] = (uint64_t)(uintptr_t)licence;
    int32_t tx[32] = { 0 }; /* struct old_timex32: modes, ..., tick at word 11 */
    uint32_t pattr[32] = { 0 };
    tx[0] = ADJ_TICK;
    pattr[0] = 1, pattr[1] = sizeof pattr, pattr[10] = 1; /* as root.c's: disabled, a CPU's clock */
    memset(host, 'h', sizeof host);
    const struct { const char *name; struct compat_call c; int ok; } ops[] = {
        { "reboot", { "reboot", I386_NR_reboot, { CV(0), CV(0), CV(0), CV(0) } }, EINVAL },
        { "kexec_load", { "kexec_load", I386_NR_kexec_load, { CV(0), CV(1000), CV(0), CV(0) } }, EINVAL },
        { "adjtimex", { "adjtimex", I386_NR_adjtimex, { CP(tx, sizeof tx) } }, EINVAL },
        { "swapon", { "swapon", I386_NR_swapon, { CP(none, sizeof none), CV(0) } }, ENOENT },
        { "acct", { "acct", I386_NR_acct, { CP(none, sizeof none) } }, ENOENT },
        { "syslog", { "syslog", I386_NR_syslog, { CV(9999), CV(0), CV(0) } }, EINVAL },
        { "sethostname", { "sethostname", I386_NR_sethostname, { CP(host, sizeof host), CV(sizeof host) } }, EINVAL },
        { "ioperm", { "ioperm", I386_NR_ioperm, { CV(0x80), CV(1), CV(1) } }, 0 }, /* gone with the child */
        { "bpf", { "bpf", I386_NR_bpf, { CV(5 /* BPF_PROG_LOAD */), CP(battr, sizeof battr), CV(sizeof battr) } },
          0 }, /* closed with the child, never attached */
        { "perf_event_open", { "perf_event_open", I386_NR_perf_event_open,
                               { CP(pattr, sizeof pattr), CV(-1), CV(0), CV(-1), CV(0) } }, 0 },
    };
    *via = NULL;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        if (strncmp(name, ops[i].name, strlen(ops[i].name)) || name[strlen(ops[i].name)] != ' ')
            continue;
        long r = through_entry(&ops[i].c, 1, -1);
        if (r >= 0 || (ops[i].ok && r == -ops[i].ok))
            return 1;
        if (!strcmp(ops[i].name, "adjtimex") && (r == -EPERM || r == -ENOSYS) && entry_here())
            return (*via = clock_i386(tx)) != NULL;
        return 0;
    }
    return -1;
}

int handle_i386(const char *mp)
{
    struct { uint32_t bytes; int32_t type; unsigned char f[128]; } h = { 128, 0, { 0 } };
    int mid = 0, mfd = open(mp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (mfd < 0)
        return -1;
    const struct compat_call c[2] = {
        { "name_to_handle_at", I386_NR_name_to_handle_at,
          { CV(AT_FDCWD), CP(mp, strlen(mp) + 1), CP(&h, sizeof h), CP(&mid, sizeof mid), CV(0) } },
        { "open_by_handle_at", I386_NR_open_by_handle_at, { CV(0), CV(0), CV(O_RDONLY | O_DIRECTORY) } },
    };
    long r = through_entry(c, 2, mfd);
    close(mfd);
    return r >= 0 ? 0 : (errno = (int)-r, -1);
}

/* Its answer handed back: a descriptor the child opened, by SCM_RIGHTS. */
static void send_fd(int sock, int fd)
{
    char c = 0, ctl[CMSG_SPACE(sizeof(int))];
    struct iovec iov = { &c, 1 };
    struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl };
    struct cmsghdr *h = CMSG_FIRSTHDR(&m);
    h->cmsg_level = SOL_SOCKET, h->cmsg_type = SCM_RIGHTS, h->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(h), &fd, sizeof fd);
    sendmsg(sock, &m, 0);
}

static int recv_fd(int sock)
{
    char c, ctl[CMSG_SPACE(sizeof(int))];
    struct iovec iov = { &c, 1 };
    struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl };
    int fd = -1;
    if (recvmsg(sock, &m, MSG_CMSG_CLOEXEC) == 1) {
        struct cmsghdr *h = CMSG_FIRSTHDR(&m);
        if (h && h->cmsg_type == SCM_RIGHTS)
            memcpy(&fd, CMSG_DATA(h), sizeof fd);
    }
    return fd;
}

int handle_root_i386(const char *mp)
{
    int sv[2], mfd = open(mp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (mfd < 0 || !entry_here() || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        if (mfd >= 0)
            close(mfd);
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        struct handle { uint32_t bytes; int32_t type; uint32_t f[32]; } *h;
        char *low = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
        if (low == MAP_FAILED || strlen(mp) >= 2048)
            _exit(1);
        h = (struct handle *)(void *)low;
        h->bytes = sizeof h->f;
        strcpy(low + 1024, mp);
        long v[6] = { AT_FDCWD, (long)(uintptr_t)(low + 1024), (long)(uintptr_t)h, (long)(uintptr_t)(low + 512) };
        if (int80(I386_NR_name_to_handle_at, v) != 0 || h->type != 1 || h->bytes < 8)
            _exit(1);
        h->bytes = 8, h->f[0] = 2, h->f[1] = 0; /* FILEID_INO32_GEN: inode 2, generation 0 */
        long o[6] = { mfd, (long)(uintptr_t)h, O_RDONLY | O_DIRECTORY };
        long fd = int80(I386_NR_open_by_handle_at, o);
        if (fd >= 0)
            send_fd(sv[1], (int)fd);
        _exit(0);
    }
    close(sv[1]);
    close(mfd);
    int fd = pid > 0 ? recv_fd(sv[0]) : -1;
    close(sv[0]);
    while (pid > 0 && waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    return fd;
}

int mknod_i386(const char *path, unsigned mode, unsigned dev)
{
    const struct compat_call c = { "mknod", I386_NR_mknod, { CP(path, strlen(path) + 1), CV(mode), CV(dev) } };
    long r = through_entry(&c, 1, -1);
    if (r == -EPERM || r == -ENOSYS) {
        const struct compat_call at = { "mknodat", I386_NR_mknodat,
                                        { CV(AT_FDCWD), CP(path, strlen(path) + 1), CV(mode), CV(dev) } };
        r = through_entry(&at, 1, -1);
    }
    return r >= 0 ? 0 : (errno = (int)-r, -1);
}
#else
/* aarch64: no entry the probe can take (i386.c); nothing tried. */
int kernel_i386(const char *name, const char **via)
{
    (void)name;
    *via = NULL;
    return -1;
}

int handle_i386(const char *mp)
{
    (void)mp;
    return errno = ENOSYS, -1;
}

int mknod_i386(const char *path, unsigned mode, unsigned dev)
{
    (void)path, (void)mode, (void)dev;
    return errno = ENOSYS, -1;
}

int handle_root_i386(const char *mp)
{
    (void)mp;
    return -1;
}
#endif
