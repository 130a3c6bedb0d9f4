/*
 * harness-probe: a small static binary that checks which sandbox security
 * mechanisms work where it runs, by really exercising each one.
 *
 * Protocol 1: JSON lines on stdout, each line written with a single write(2).
 *   {"type":"start","probe":"harness-probe","protocol":1,"pid":N,"uid":N,"euid":N,"gid":N}
 *   {"type":"fact","scenario":S,"id":ID,"status":ST,...,"elapsed_ms":F}   one per check
 *   {"type":"done","count":N}     only once every check has finished
 *   {"type":"fatal","detail":D}   bad usage (exit 2) or overall deadline (exit 3)
 * status: "ok" (with "value"), "unavailable" (the kernel refused: "errno",
 * "errno_num", "detail"), "error" (the measurement itself failed: "detail",
 * maybe "errno"), "timeout" (the check overran and was SIGKILLed).
 *
 * Every check runs in its own forked child, in its own process group, and
 * writes one JSON fragment ("status":...) into a pipe. A check may thus
 * restrict itself irreversibly (no_new_privs, Landlock, seccomp), crash or
 * hang without affecting the parent or later checks: the parent only waits
 * with a timeout, kills the whole group and prints the line. The parent never
 * restricts itself.
 *
 * Usage: probe run [--check-timeout-ms N] [--deadline-ms N] SCENARIO...
 *        probe version
 * New scenarios: write chk_* functions and add rows to `checks` below.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <linux/filter.h>
#include <linux/ioctl.h>
#include <linux/seccomp.h>

#define PROBE_NAME "harness-probe"
#define PROTOCOL 1
#define MAGIC_RET 424242

/* Landlock: musl's include path has no linux/landlock.h, so define what we use. */
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_landlock_add_rule
#define __NR_landlock_add_rule 445
#endif
#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif
#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif
#ifndef LANDLOCK_ACCESS_FS_READ_FILE
#define LANDLOCK_ACCESS_FS_READ_FILE (1ULL << 2)
#endif
/* ABI 1 layout; newer kernels accept it (missing fields mean "handle nothing"). */
struct probe_ruleset_attr { uint64_t handled_access_fs; };

/* Seccomp constants newer than some UAPI headers. */
#ifndef SECCOMP_FILTER_FLAG_NEW_LISTENER
#define SECCOMP_FILTER_FLAG_NEW_LISTENER (1UL << 3)
#endif
#ifndef SECCOMP_RET_USER_NOTIF
#define SECCOMP_RET_USER_NOTIF 0x7fc00000U
#endif
#ifndef SECCOMP_ADDFD_FLAG_SEND
#define SECCOMP_ADDFD_FLAG_SEND (1UL << 1)
#endif
#ifndef SECCOMP_IOCTL_NOTIF_ADDFD
struct seccomp_notif_addfd { uint64_t id; uint32_t flags, srcfd, newfd, newfd_flags; };
#define SECCOMP_IOCTL_NOTIF_ADDFD _IOW('!', 3, struct seccomp_notif_addfd)
#endif

#if defined(__x86_64__)
#define PROBE_AUDIT_ARCH 0xc000003eU /* AUDIT_ARCH_X86_64 */
#elif defined(__aarch64__)
#define PROBE_AUDIT_ARCH 0xc00000b7U /* AUDIT_ARCH_AARCH64 */
#else
#error "unsupported architecture (add its AUDIT_ARCH_* value)"
#endif

static int g_check_timeout_ms = 5000;
static long g_deadline_ms = 60000;
static const char *g_argv0 = "probe";
static int g_resfd = -1;                 /* in a check child: write end of the result pipe */
static pid_t g_target;                   /* in a supervisor child: the target grandchild */
static volatile sig_atomic_t g_child;    /* in the parent: the check child now running */

/* ---- output helpers ---------------------------------------------------- */

/* Big enough for any line we build; <= PIPE_BUF so a result is written atomically. */
typedef struct { char s[4096]; size_t n; } Buf;

__attribute__((format(printf, 2, 3)))
static void bput(Buf *b, const char *fmt, ...)
{
    size_t room = sizeof b->s - b->n;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b->s + b->n, room, fmt, ap);
    va_end(ap);
    if (k > 0)
        b->n += (size_t)k < room ? (size_t)k : room - 1;
}

/* A JSON string literal. Bytes outside printable ASCII become \u00XX, so the
 * line is always valid (ASCII) JSON whatever the input. */
static void bstr(Buf *b, const char *str)
{
    bput(b, "\"");
    for (const unsigned char *p = (const unsigned char *)str; *p; p++) {
        if (*p == '"' || *p == '\\')
            bput(b, "\\%c", *p);
        else if (*p < 0x20 || *p >= 0x7f)
            bput(b, "\\u%04x", *p);
        else
            bput(b, "%c", *p);
    }
    bput(b, "\"");
}

static void write_all(int fd, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t k = write(fd, s, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return;
        s += k;
        n -= (size_t)k;
    }
}

/* Print a line; SIGALRM (deadline) is blocked so it cannot cut a line in half. */
static void emit(Buf *b)
{
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGALRM);
    sigprocmask(SIG_BLOCK, &set, &old);
    bput(b, "\n");
    write_all(STDOUT_FILENO, b->s, b->n);
    sigprocmask(SIG_SETMASK, &old, NULL);
}

__attribute__((format(printf, 2, 3), noreturn))
static void fatal(int code, const char *fmt, ...)
{
    char detail[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    Buf b = { .n = 0 };
    bput(&b, "{\"type\":\"fatal\",\"detail\":");
    bstr(&b, detail);
    bput(&b, "}");
    emit(&b);
    exit(code);
}

static const char *errname(int e)
{
#define E(x) { x, #x }
    static const struct { int num; const char *name; } t[] = {
        E(EPERM), E(ENOENT), E(ESRCH), E(EINTR), E(EIO), E(ENXIO), E(E2BIG),
        E(ENOEXEC), E(EBADF), E(ECHILD), E(EAGAIN), E(ENOMEM), E(EACCES),
        E(EFAULT), E(ENOTBLK), E(EBUSY), E(EEXIST), E(EXDEV), E(ENODEV),
        E(ENOTDIR), E(EISDIR), E(EINVAL), E(ENFILE), E(EMFILE), E(ENOTTY),
        E(ETXTBSY), E(EFBIG), E(ENOSPC), E(ESPIPE), E(EROFS), E(EMLINK),
        E(EPIPE), E(EDOM), E(ERANGE), E(EDEADLK), E(ENAMETOOLONG), E(ENOLCK),
        E(ENOSYS), E(ENOTEMPTY), E(ELOOP), E(ENOMSG), E(EIDRM), E(ENODATA),
        E(ETIME), E(EPROTO), E(EBADMSG), E(EOVERFLOW), E(EBADFD), E(ENOTSOCK),
        E(EDESTADDRREQ), E(EMSGSIZE), E(EPROTOTYPE), E(ENOPROTOOPT),
        E(EPROTONOSUPPORT), E(ESOCKTNOSUPPORT), E(EOPNOTSUPP), E(EPFNOSUPPORT),
        E(EAFNOSUPPORT), E(EADDRINUSE), E(EADDRNOTAVAIL), E(ENETDOWN),
        E(ENETUNREACH), E(ENETRESET), E(ECONNABORTED), E(ECONNRESET),
        E(ENOBUFS), E(EISCONN), E(ENOTCONN), E(ESHUTDOWN), E(ETIMEDOUT),
        E(ECONNREFUSED), E(EHOSTDOWN), E(EHOSTUNREACH), E(EALREADY),
        E(EINPROGRESS), E(ESTALE), E(EDQUOT), E(ECANCELED), E(EOWNERDEAD),
        E(ENOTRECOVERABLE), E(ENOMEDIUM), E(EREMOTEIO),
    };
#undef E
    static char unknown[24];
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (t[i].num == e)
            return t[i].name;
    snprintf(unknown, sizeof unknown, "E%d", e);
    return unknown;
}

static void frag_errno(Buf *b, int e)
{
    bput(b, ",\"errno\":");
    bstr(b, errname(e));
    bput(b, ",\"errno_num\":%d", e);
}

static void frag_status(Buf *b, const char *status, int e, const char *detail)
{
    bput(b, "\"status\":");
    bstr(b, status);
    if (e)
        frag_errno(b, e);
    bput(b, ",\"detail\":");
    bstr(b, detail);
}

/* ---- results, as written by a check child (each ends the child) ------- */

__attribute__((noreturn))
static void send_result(Buf *b)
{
    if (g_target > 0)
        kill(g_target, SIGKILL);
    bput(b, "\n");
    write_all(g_resfd, b->s, b->n); /* < PIPE_BUF, so atomic */
    _exit(0);
}

__attribute__((noreturn))
static void ok_int(long long v)
{
    Buf b = { .n = 0 };
    bput(&b, "\"status\":\"ok\",\"value\":%lld", v);
    send_result(&b);
}

__attribute__((noreturn))
static void ok_bool(int v, const char *detail)
{
    Buf b = { .n = 0 };
    bput(&b, "\"status\":\"ok\",\"value\":%s", v ? "true" : "false");
    if (detail) {
        bput(&b, ",\"detail\":");
        bstr(&b, detail);
    }
    send_result(&b);
}

__attribute__((noreturn))
static void ok_str(const char *v)
{
    Buf b = { .n = 0 };
    bput(&b, "\"status\":\"ok\",\"value\":");
    bstr(&b, v);
    send_result(&b);
}

/* The kernel refused `call` with errno e. */
__attribute__((noreturn))
static void unavail(const char *call, int e)
{
    char detail[256];
    snprintf(detail, sizeof detail, "%s: %s", call, strerror(e));
    Buf b = { .n = 0 };
    frag_status(&b, "unavailable", e, detail);
    send_result(&b);
}

/* The measurement failed; e (if nonzero) is the errno behind it. */
__attribute__((format(printf, 2, 3), noreturn))
static void fail(int e, const char *fmt, ...)
{
    char detail[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    if (e && n >= 0 && (size_t)n < sizeof detail)
        snprintf(detail + n, sizeof detail - (size_t)n, ": %s", strerror(e));
    Buf b = { .n = 0 };
    frag_status(&b, "error", e, detail);
    send_result(&b);
}

/* ---- scenario "mechanisms" --------------------------------------------- */

static void chk_landlock_abi(void)
{
    long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    if (abi < 0)
        unavail("landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)", errno);
    ok_int(abi);
}

/* The probe's own executable: surely a readable regular file. */
static void self_path(char *out, size_t cap)
{
    ssize_t n = readlink("/proc/self/exe", out, cap - 1);
    if (n > 0) {
        out[n] = '\0';
        return;
    }
    char cwd[512];
    if (g_argv0[0] == '/' || !getcwd(cwd, sizeof cwd))
        snprintf(out, cap, "%s", g_argv0);
    else
        snprintf(out, cap, "%s/%s", cwd, g_argv0);
}

static void set_nnp(void)
{
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        unavail("prctl(PR_SET_NO_NEW_PRIVS)", errno);
}

static void chk_landlock_enforces(void)
{
    char path[1024];
    struct stat st;
    self_path(path, sizeof path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        fail(errno, "open(%s) before restricting", path);
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        fail(0, "%s is not a regular file", path);
    close(fd);

    struct probe_ruleset_attr attr = { .handled_access_fs = LANDLOCK_ACCESS_FS_READ_FILE };
    long rs = syscall(__NR_landlock_create_ruleset, &attr, sizeof attr, 0);
    if (rs < 0)
        unavail("landlock_create_ruleset(READ_FILE)", errno);
    set_nnp();
    if (syscall(__NR_landlock_restrict_self, rs, 0) != 0)
        unavail("landlock_restrict_self", errno);

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0)
        ok_bool(0, "file still readable after landlock_restrict_self");
    if (errno == EACCES)
        ok_bool(1, NULL);
    fail(errno, "open(%s) after restricting", path);
}

/* Install either an allow-all filter or one that sends getppid() to a
 * user-space listener. Returns the seccomp() result (listener fd if asked). */
static long install_filter(unsigned long flags, int notify_getppid)
{
    static struct sock_filter allow_all[] = {
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    static struct sock_filter notify[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PROBE_AUDIT_ARCH, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_getppid, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = { .len = 1, .filter = allow_all };
    if (notify_getppid) {
        prog.len = sizeof notify / sizeof notify[0];
        prog.filter = notify;
    }
    return syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
}

static void chk_seccomp_filter(void)
{
    set_nnp();
    if (install_filter(0, 0) != 0)
        unavail("seccomp(SET_MODE_FILTER)", errno);
    ok_bool(1, NULL);
}

static void chk_seccomp_new_listener(void)
{
    set_nnp();
    if (install_filter(SECCOMP_FILTER_FLAG_NEW_LISTENER, 1) < 0)
        unavail("seccomp(SET_MODE_FILTER, NEW_LISTENER)", errno);
    ok_bool(1, NULL);
}

/* ioctl via syscall(): musl's ioctl() takes an int request, which these
 * request numbers overflow (a warning), glibc's an unsigned long. */
static long notif_ioctl(int fd, unsigned long req, void *arg)
{
    return syscall(SYS_ioctl, fd, req, arg);
}

enum { NOTIF_REPLY, NOTIF_ADDFD };
struct setup_msg { int stage, err; }; /* stage 0: fd attached; 1: prctl failed; 2: seccomp failed */

/* Target (grandchild): install the notifying filter, hand the listener to the
 * supervisor, then call getppid() and check what the supervisor made of it. */
__attribute__((noreturn))
static void notif_target(int sock, int mode)
{
    struct setup_msg m = { 0, 0 };
    long lfd = -1;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        m = (struct setup_msg){ 1, errno };
    else if ((lfd = install_filter(SECCOMP_FILTER_FLAG_NEW_LISTENER, 1)) < 0)
        m = (struct setup_msg){ 2, errno };

    union { char buf[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } ctl;
    struct iovec iov = { .iov_base = &m, .iov_len = sizeof m };
    struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
    if (lfd >= 0) {
        int fd = (int)lfd;
        memset(&ctl, 0, sizeof ctl);
        mh.msg_control = ctl.buf;
        mh.msg_controllen = sizeof ctl.buf;
        struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof fd);
        memcpy(CMSG_DATA(cm), &fd, sizeof fd);
    }
    if (sendmsg(sock, &mh, 0) < 0 || lfd < 0)
        _exit(2);
    /* Only the supervisor holds the listener now: should it die, getppid()
     * fails with ENOSYS instead of blocking forever. */
    close((int)lfd);
    close(sock);
    long r = syscall(__NR_getppid);
    if (mode == NOTIF_REPLY)
        _exit(r == MAGIC_RET ? 0 : 1);
    struct stat st;
    _exit(r >= 0 && fstat((int)r, &st) == 0 && S_ISFIFO(st.st_mode) ? 0 : 1);
}

/* Supervisor (the check child): answer the target's getppid() either with a
 * plain return value or by installing a pipe fd into it (ADDFD_FLAG_SEND). */
static void notif_supervisor(int mode)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        fail(errno, "socketpair");
    g_target = fork();
    if (g_target < 0)
        fail(errno, "fork(target)");
    if (g_target == 0) {
        close(g_resfd);
        close(sv[0]);
        notif_target(sv[1], mode);
    }
    close(sv[1]);

    struct setup_msg m = { 0, 0 };
    union { char buf[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } ctl;
    struct iovec iov = { .iov_base = &m, .iov_len = sizeof m };
    struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
                         .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf };
    ssize_t n = recvmsg(sv[0], &mh, MSG_CMSG_CLOEXEC);
    if (n != (ssize_t)sizeof m)
        fail(n < 0 ? errno : 0, "no setup message from the target (got %zd bytes)", n);
    if (m.stage == 1)
        unavail("prctl(PR_SET_NO_NEW_PRIVS)", m.err);
    if (m.stage == 2)
        unavail("seccomp(SET_MODE_FILTER, NEW_LISTENER)", m.err);
    struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
    if (!cm || cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
        fail(0, "the target sent no listener fd");
    int lfd;
    memcpy(&lfd, CMSG_DATA(cm), sizeof lfd);

    struct pollfd pfd = { .fd = lfd, .events = POLLIN };
    int pr = poll(&pfd, 1, g_check_timeout_ms);
    if (pr < 0)
        fail(errno, "poll(listener)");
    if (!(pfd.revents & POLLIN))
        fail(0, "no notification from the target (poll revents 0x%x)", (unsigned)pfd.revents);

    struct seccomp_notif notif;
    memset(&notif, 0, sizeof notif);
    if (notif_ioctl(lfd, SECCOMP_IOCTL_NOTIF_RECV, &notif) != 0)
        unavail("ioctl(SECCOMP_IOCTL_NOTIF_RECV)", errno);
    if (notif.data.nr != __NR_getppid)
        fail(0, "notification for syscall %d, expected getppid (%d)", notif.data.nr, __NR_getppid);

    if (mode == NOTIF_REPLY) {
        struct seccomp_notif_resp resp;
        memset(&resp, 0, sizeof resp);
        resp.id = notif.id;
        resp.val = MAGIC_RET;
        if (notif_ioctl(lfd, SECCOMP_IOCTL_NOTIF_SEND, &resp) != 0)
            unavail("ioctl(SECCOMP_IOCTL_NOTIF_SEND)", errno);
    } else {
        int p[2];
        if (pipe(p) != 0)
            fail(errno, "pipe");
        struct seccomp_notif_addfd add;
        memset(&add, 0, sizeof add);
        add.id = notif.id;
        add.flags = SECCOMP_ADDFD_FLAG_SEND;
        add.srcfd = (uint32_t)p[0];
        if (notif_ioctl(lfd, SECCOMP_IOCTL_NOTIF_ADDFD, &add) < 0)
            unavail("ioctl(SECCOMP_IOCTL_NOTIF_ADDFD, ADDFD_FLAG_SEND)", errno);
    }

    int st;
    while (waitpid(g_target, &st, 0) < 0)
        if (errno != EINTR)
            fail(errno, "waitpid(target)");
    g_target = 0;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
        ok_bool(1, NULL);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 1)
        ok_bool(0, mode == NOTIF_REPLY ? "target's getppid() did not return the supervisor's value"
                                       : "target's getppid() did not return a pipe fd");
    if (WIFSIGNALED(st))
        fail(0, "target killed by signal %d", WTERMSIG(st));
    fail(0, "target exited %d", WEXITSTATUS(st));
}

static void chk_seccomp_notif_round_trip(void) { notif_supervisor(NOTIF_REPLY); }
static void chk_seccomp_addfd(void) { notif_supervisor(NOTIF_ADDFD); }

static void chk_kernel_release(void)
{
    struct utsname u;
    if (uname(&u) != 0)
        fail(errno, "uname");
    ok_str(u.release);
}

static void chk_kernel_machine(void)
{
    struct utsname u;
    if (uname(&u) != 0)
        fail(errno, "uname");
    ok_str(u.machine);
}

/* ---- the check table: add scenarios here -------------------------------- */

struct check { const char *scenario, *id; void (*fn)(void); };

/* selftest: only for testing the harness's own fault handling. */
static void chk_selftest_hang(void)
{
    for (;;)
        pause();
}

static const struct check checks[] = {
    { "mechanisms", "landlock_abi", chk_landlock_abi },
    { "mechanisms", "landlock_enforces", chk_landlock_enforces },
    { "mechanisms", "seccomp_filter", chk_seccomp_filter },
    { "mechanisms", "seccomp_new_listener", chk_seccomp_new_listener },
    { "mechanisms", "seccomp_notif_round_trip", chk_seccomp_notif_round_trip },
    { "mechanisms", "seccomp_addfd", chk_seccomp_addfd },
    { "mechanisms", "kernel_release", chk_kernel_release },
    { "mechanisms", "kernel_machine", chk_kernel_machine },
    { "selftest", "selftest_hang", chk_selftest_hang },
};
#define NCHECKS (sizeof checks / sizeof checks[0])

/* ---- the parent: run one check in a child ------------------------------- */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void run_check(const struct check *c)
{
    Buf frag = { .n = 0 };
    char buf[sizeof frag.s];
    size_t n = 0;
    int got = 0, timed_out = 0, st = 0, p[2];
    double t0 = now_ms(), end = t0 + g_check_timeout_ms;
    pid_t pid;

    if (pipe(p) != 0) {
        frag_status(&frag, "error", errno, "pipe() for the check child failed");
        goto report;
    }
    pid_t parent = getpid();
    if ((pid = fork()) < 0) {
        frag_status(&frag, "error", errno, "fork() of the check child failed");
        close(p[0]);
        close(p[1]);
        goto report;
    }
    if (pid == 0) {
        setpgid(0, 0);
        /* Die with the parent: a probe killed at the cell timeout must not
         * leave a check child behind in its own process group. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(1); /* the parent died before PDEATHSIG was armed */
        close(p[0]);
        g_resfd = p[1];
        c->fn();
        fail(0, "check returned without a result");
    }
    setpgid(pid, pid); /* also here, so the group exists before we may kill it */
    g_child = pid;
    close(p[1]);

    /* Read the result until EOF (the child exited: the target grandchild
     * closes its copy of the pipe) or the check timeout. */
    for (;;) {
        int left = (int)(end - now_ms() + 0.999);
        if (left <= 0) {
            timed_out = 1;
            break;
        }
        struct pollfd pfd = { .fd = p[0], .events = POLLIN };
        int r = poll(&pfd, 1, left);
        if (r < 0 && errno == EINTR)
            continue;
        if (r == 0)
            timed_out = 1;
        if (r <= 0)
            break;
        char scratch[256], *dst = n < sizeof buf - 1 ? buf + n : scratch;
        size_t room = n < sizeof buf - 1 ? sizeof buf - 1 - n : sizeof scratch;
        ssize_t k = read(p[0], dst, room);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        if (dst != scratch)
            n += (size_t)k;
    }
    got = memchr(buf, '\n', n) != NULL;
    timed_out &= !got;
    close(p[0]);

    /* Wait for the child to end, without reaping it, so its pid (= the group
     * id) cannot be reused before we kill the group's stragglers. */
    while (!timed_out) {
        siginfo_t si;
        memset(&si, 0, sizeof si);
        if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0 && errno != EINTR)
            break;
        if (si.si_pid == pid)
            break;
        if (now_ms() >= end) {
            timed_out = !got;
            break;
        }
        usleep(200);
    }
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    g_child = 0;
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ; /* orphaned grandchildren are ours when we are pid 1 (e.g. in runsc) */

    if (got && n > 9 && !memcmp(buf, "\"status\":", 9)) {
        n = (size_t)((char *)memchr(buf, '\n', n) - buf);
        memcpy(frag.s, buf, n);
        frag.s[n] = '\0';
        frag.n = n;
    } else {
        char detail[128];
        if (got)
            snprintf(detail, sizeof detail, "child wrote a malformed result");
        else if (timed_out)
            snprintf(detail, sizeof detail, "check exceeded %d ms; child killed", g_check_timeout_ms);
        else if (WIFSIGNALED(st))
            snprintf(detail, sizeof detail, "child killed by signal %d", WTERMSIG(st));
        else
            snprintf(detail, sizeof detail, "child exited %d without a result", WEXITSTATUS(st));
        frag_status(&frag, timed_out ? "timeout" : "error", 0, detail);
    }

report:;
    Buf line = { .n = 0 };
    bput(&line, "{\"type\":\"fact\",\"scenario\":");
    bstr(&line, c->scenario);
    bput(&line, ",\"id\":");
    bstr(&line, c->id);
    bput(&line, ",%s,\"elapsed_ms\":%.3f}", frag.s, now_ms() - t0);
    emit(&line);
}

/* ---- main ---------------------------------------------------------------- */

static void on_deadline(int sig)
{
    static const char msg[] = "{\"type\":\"fatal\",\"detail\":\"deadline\"}\n";
    pid_t c = g_child;
    (void)sig;
    if (c > 0) {
        kill(-c, SIGKILL);
        kill(c, SIGKILL);
    }
    write_all(STDOUT_FILENO, msg, sizeof msg - 1);
    _exit(3);
}

/* SIGTERM/SIGINT/SIGHUP (e.g. from `timeout` at the cell deadline): take the
 * running check's process group down too, then go. */
static void on_term(int sig)
{
    pid_t c = g_child;
    if (c > 0) {
        kill(-c, SIGKILL);
        kill(c, SIGKILL);
    }
    _exit(128 + sig);
}

static long parse_ms(const char *opt, const char *s)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v <= 0 || v > 86400000L)
        fatal(2, "bad value for %s: %s", opt, s);
    return v;
}

static int scenario_known(const char *name)
{
    for (size_t i = 0; i < NCHECKS; i++)
        if (!strcmp(checks[i].scenario, name))
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 0 && argv[0] && argv[0][0])
        g_argv0 = argv[0];
    if (argc == 2 && !strcmp(argv[1], "version")) {
        Buf b = { .n = 0 };
        bput(&b, "{\"type\":\"version\",\"probe\":\"%s\",\"protocol\":%d}", PROBE_NAME, PROTOCOL);
        emit(&b);
        return 0;
    }
    if (argc < 2 || strcmp(argv[1], "run"))
        fatal(2, "usage: probe run [--check-timeout-ms N] [--deadline-ms N] [--tag T] SCENARIO... | probe version");

    int i = 2;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp(argv[i], "--check-timeout-ms") && i + 1 < argc)
            g_check_timeout_ms = (int)parse_ms(argv[i], argv[i + 1]), i++;
        else if (!strcmp(argv[i], "--deadline-ms") && i + 1 < argc)
            g_deadline_ms = parse_ms(argv[i], argv[i + 1]), i++;
        else if (!strcmp(argv[i], "--tag") && i + 1 < argc)
            i++; /* names the cell in the process list, so the harness can find it */
        else
            fatal(2, "bad argument: %s", argv[i]);
    }
    if (i == argc)
        fatal(2, "no scenario given");
    for (int j = i; j < argc; j++)
        if (!scenario_known(argv[j]))
            fatal(2, "unknown scenario: %s", argv[j]);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_deadline;
    sigaction(SIGALRM, &sa, NULL);
    sa.sa_handler = on_term;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    struct itimerval itv = { .it_value = { .tv_sec = g_deadline_ms / 1000,
                                           .tv_usec = (g_deadline_ms % 1000) * 1000 } };
    setitimer(ITIMER_REAL, &itv, NULL);

    Buf b = { .n = 0 };
    bput(&b, "{\"type\":\"start\",\"probe\":\"%s\",\"protocol\":%d,\"pid\":%d,\"uid\":%u,\"euid\":%u,\"gid\":%u}",
         PROBE_NAME, PROTOCOL, (int)getpid(), (unsigned)getuid(), (unsigned)geteuid(), (unsigned)getgid());
    emit(&b);

    int count = 0;
    for (int j = i; j < argc; j++)
        for (size_t k = 0; k < NCHECKS; k++)
            if (!strcmp(checks[k].scenario, argv[j])) {
                run_check(&checks[k]);
                count++;
            }

    b.n = 0;
    bput(&b, "{\"type\":\"done\",\"count\":%d}", count);
    emit(&b);
    return 0;
}
