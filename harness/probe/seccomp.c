/* Seccomp, scenario "mechanisms" (facts, for audit only): a filter installs, and
 * user notification does each part a supervisor relies on (a listener, a round
 * trip, ADDFD, id validation, a retained socket, /proc/<pid>/fd, the target's
 * memory, cancellation). */

#include "probe.h"

#define MAGIC_RET 424242 /* what a supervisor makes the trapped getppid() return */

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

void chk_seccomp_filter(void)
{
    set_nnp();
    if (install_filter(0, 0) != 0)
        unavail("seccomp(SET_MODE_FILTER)", errno);
    ok_bool(1, NULL);
}

void chk_seccomp_new_listener(void)
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

/*
 * User notification. Each of these facts forks a target (a grandchild) that
 * installs a filter sending getppid() to a listener, hands the listener to the
 * supervisor (the check child) and calls getppid(a0, a1): getppid ignores its
 * arguments, but seccomp_data.args carries them to the supervisor. The mode
 * decides what the target prepares, what the supervisor does with the
 * notification and what the target checks afterwards:
 *
 *   REPLY      answer MAGIC_RET; the target's getppid() must return it
 *   ADDFD      answer by installing a pipe fd (ADDFD_FLAG_SEND); the target fstat()s it
 *   ID_VALID   NOTIF_ID_VALID succeeds while pending, fails ENOENT once answered
 *   SOCKET     a0 = one end of a socketpair: the supervisor takes it with
 *              pidfd_getfd, checks its type and sends a byte that the target reads
 *   PROC_FD    a0 = an fd on the probe's executable: /proc/<pid>/fd/<a0> must name it
 *   MEM_READ   a0, a1 = a buffer holding a marker: the supervisor reads it
 *   MEM_WRITE  a0, a1 = a buffer: the supervisor overwrites it, the target checks
 *   CANCEL     the supervisor signals the target (a handler without SA_RESTART):
 *              getppid() fails EINTR, and NOTIF_SEND on its id fails ENOENT
 *
 * Every mode but CANCEL answers MAGIC_RET when its own part went well. The
 * target exits 0 when its check holds, 1 when not, 2 when it could not run.
 */
enum notif_mode {
    NOTIF_REPLY, NOTIF_ADDFD, NOTIF_ID_VALID, NOTIF_SOCKET, NOTIF_PROC_FD,
    NOTIF_MEM_READ, NOTIF_MEM_WRITE, NOTIF_CANCEL,
};
#define NOT_MAGIC "the target's getppid() did not return the supervisor's value"
static const struct {
    const char *prep;     /* the target's preparation, named when it fails */
    const char *mismatch; /* the detail of value false when the target exits 1 */
} notif_modes[] = {
    [NOTIF_REPLY] = { "", NOT_MAGIC },
    [NOTIF_ADDFD] = { "", "the target's getppid() did not return a pipe fd" },
    [NOTIF_ID_VALID] = { "", NOT_MAGIC },
    [NOTIF_SOCKET] = { "socketpair(AF_UNIX, SOCK_DGRAM)",
                       "the target did not receive the byte sent through its retained socket" },
    [NOTIF_PROC_FD] = { "open(the probe's executable)", NOT_MAGIC },
    [NOTIF_MEM_READ] = { "", NOT_MAGIC },
    [NOTIF_MEM_WRITE] = { "", "the target's buffer does not hold what the supervisor wrote" },
    [NOTIF_CANCEL] = { "sigaction(SIGUSR1)", "" },
};

/* Target to supervisor. stage 0: the listener is attached; 1: prctl failed;
 * 2: seccomp failed; 3: the mode's preparation failed. */
struct setup_msg { int stage, err; };
/* CANCEL, target to supervisor: what the interrupted getppid() returned. */
struct cancel_msg { long ret; int err; };

#define NOTIF_BUF 64
#define NOTIF_BYTE 'R'
static char g_notif_buf[NOTIF_BUF]; /* the target's buffer (MEM_READ, MEM_WRITE) */
static char g_notif_path[1024];     /* the file the target opens (PROC_FD) */

/* The marker a target with this pid holds in its buffer, before or after the write. */
static void notif_marker(char *out, const char *when, long pid)
{
    memset(out, 0, NOTIF_BUF);
    snprintf(out, NOTIF_BUF, "harness-probe %s %ld", when, pid);
}

static void on_signal(int sig) { (void)sig; }

/* The target's preparation, which sets the getppid() arguments: 0, or -1 with errno. */
static int notif_prepare(enum notif_mode mode, long a[2], int sp[2])
{
    struct sigaction sa;
    switch (mode) {
    case NOTIF_SOCKET:
        if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sp) != 0)
            return -1;
        a[0] = sp[0];
        return 0;
    case NOTIF_PROC_FD:
        a[0] = open(g_notif_path, O_RDONLY | O_CLOEXEC);
        return a[0] < 0 ? -1 : 0;
    case NOTIF_MEM_READ:
    case NOTIF_MEM_WRITE:
        notif_marker(g_notif_buf, "before", (long)getpid());
        a[0] = (long)(uintptr_t)g_notif_buf;
        a[1] = NOTIF_BUF;
        return 0;
    case NOTIF_CANCEL:
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal; /* no SA_RESTART: the trapped call must fail EINTR */
        return sigaction(SIGUSR1, &sa, NULL);
    default:
        return 0;
    }
}

/* Target (grandchild): prepare, install the notifying filter, hand the
 * listener to the supervisor, then call getppid(a0, a1) and check the outcome. */
__attribute__((noreturn))
static void notif_target(int sock, enum notif_mode mode)
{
    struct setup_msg m = { 0, 0 };
    long lfd = -1, a[2] = { 0, 0 };
    int sp[2] = { -1, -1 };
    if (notif_prepare(mode, a, sp) != 0)
        m = (struct setup_msg){ 3, errno };
    else if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
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
    if (mode != NOTIF_CANCEL)
        close(sock);

    errno = 0;
    long r = syscall(__NR_getppid, a[0], a[1]);
    struct cancel_msg cm = { r, errno };
    char want[NOTIF_BUF], c = 0;
    struct stat st;
    switch (mode) {
    case NOTIF_ADDFD:
        _exit(r >= 0 && fstat((int)r, &st) == 0 && S_ISFIFO(st.st_mode) ? 0 : 1);
    case NOTIF_SOCKET:
        _exit(r == MAGIC_RET && recv(sp[1], &c, 1, MSG_DONTWAIT) == 1 && c == NOTIF_BYTE ? 0 : 1);
    case NOTIF_MEM_WRITE:
        notif_marker(want, "after", (long)getpid());
        _exit(r == MAGIC_RET && !memcmp(g_notif_buf, want, NOTIF_BUF) ? 0 : 1);
    case NOTIF_CANCEL:
        /* Report, then stay alive while the supervisor tries the stale id. */
        write_all(sock, (const char *)&cm, sizeof cm);
        while (read(sock, &c, 1) < 0 && errno == EINTR)
            ;
        _exit(0);
    default:
        _exit(r == MAGIC_RET ? 0 : 1);
    }
}

/* Answer notification id with MAGIC_RET: 0, or the errno. */
static int notif_send(int lfd, uint64_t id)
{
    struct seccomp_notif_resp resp;
    memset(&resp, 0, sizeof resp);
    resp.id = id;
    resp.val = MAGIC_RET;
    return notif_ioctl(lfd, SECCOMP_IOCTL_NOTIF_SEND, &resp) == 0 ? 0 : errno;
}

/* The same, where a refusal means the mechanism is unavailable. */
static void notif_reply(int lfd, uint64_t id)
{
    int e = notif_send(lfd, id);
    if (e)
        unavail("ioctl(SECCOMP_IOCTL_NOTIF_SEND)", e);
}

/* SECCOMP_IOCTL_NOTIF_ID_VALID: 0, or the errno. */
static int notif_id_valid(int lfd, uint64_t id)
{
    uint64_t v = id;
    return notif_ioctl(lfd, SECCOMP_IOCTL_NOTIF_ID_VALID, &v) == 0 ? 0 : errno;
}

/* ADDFD: answer by installing a pipe's read end as the syscall's result. */
static const char *sup_addfd(int lfd, const struct seccomp_notif *n)
{
    int p[2];
    if (pipe(p) != 0)
        fail(errno, "pipe");
    struct seccomp_notif_addfd add;
    memset(&add, 0, sizeof add);
    add.id = n->id;
    add.flags = SECCOMP_ADDFD_FLAG_SEND;
    add.srcfd = (uint32_t)p[0];
    if (notif_ioctl(lfd, SECCOMP_IOCTL_NOTIF_ADDFD, &add) < 0)
        unavail("ioctl(SECCOMP_IOCTL_NOTIF_ADDFD, ADDFD_FLAG_SEND)", errno);
    return NULL;
}

/* ID_VALID: the id is valid while pending and gone (ENOENT) once answered. */
static const char *sup_id_valid(int lfd, const struct seccomp_notif *n)
{
    int e = notif_id_valid(lfd, n->id);
    if (e == ENOENT)
        ok_false("NOTIF_ID_VALID failed with ENOENT while the notification was pending");
    if (e)
        unavail("ioctl(SECCOMP_IOCTL_NOTIF_ID_VALID)", e);
    notif_reply(lfd, n->id);
    e = notif_id_valid(lfd, n->id);
    if (e != ENOENT)
        ok_false("NOTIF_ID_VALID after the answer: %s, expected ENOENT", e ? errname(e) : "succeeded");
    return NULL;
}

/* SOCKET: take the target's socket with pidfd_getfd and use it. */
static const char *sup_socket(int lfd, const struct seccomp_notif *n)
{
    int pidfd = (int)syscall(SYS_pidfd_open, (pid_t)n->pid, 0);
    if (pidfd < 0)
        unavail("pidfd_open(target)", errno);
    int fd = (int)syscall(SYS_pidfd_getfd, pidfd, (int)n->data.args[0], 0);
    if (fd < 0)
        unavail("pidfd_getfd(target's socket)", errno);
    close(pidfd);

    int type = -1;
    socklen_t len = sizeof type;
    struct sockaddr_storage ss;
    socklen_t slen = sizeof ss;
    char c = NOTIF_BYTE;
    memset(&ss, 0, sizeof ss);
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0)
        ok_false("getsockopt(SO_TYPE) on the retained fd: %s", strerror(errno));
    if (type != SOCK_DGRAM)
        ok_false("the retained fd's SO_TYPE is %d, expected SOCK_DGRAM (%d)", type, SOCK_DGRAM);
    if (getsockname(fd, (struct sockaddr *)&ss, &slen) != 0)
        ok_false("getsockname on the retained fd: %s", strerror(errno));
    if (ss.ss_family != AF_UNIX)
        ok_false("the retained fd's family is %d, expected AF_UNIX", ss.ss_family);
    if (send(fd, &c, 1, MSG_DONTWAIT) != 1)
        ok_false("send through the retained fd: %s", strerror(errno));
    close(fd);
    notif_reply(lfd, n->id);
    return NULL;
}

/* PROC_FD: /proc/<pid>/fd/<a0> names the file the target opened. */
static const char *sup_proc_fd(int lfd, const struct seccomp_notif *n)
{
    char link[64], call[96], got[sizeof g_notif_path];
    snprintf(link, sizeof link, "/proc/%u/fd/%llu", (unsigned)n->pid,
             (unsigned long long)n->data.args[0]);
    ssize_t k = readlink(link, got, sizeof got - 1);
    if (k < 0) {
        snprintf(call, sizeof call, "readlink(%s)", link);
        unavail(call, errno);
    }
    got[k] = '\0';
    if (strcmp(got, g_notif_path) != 0)
        ok_false("%s names %s, expected %s", link, got, g_notif_path);
    notif_reply(lfd, n->id);
    return NULL;
}

/* Copy len bytes between buf and the task's memory at addr: with
 * process_vm_readv/writev, else through /proc/<pid>/mem. Returns the method
 * that worked (for the detail); unavailable when both fail. */
static const char *task_mem(pid_t pid, uint64_t addr, void *buf, size_t len, int wr)
{
    static char how[192];
    const char *vm = wr ? "process_vm_writev" : "process_vm_readv";
    struct iovec local = { .iov_base = buf, .iov_len = len };
    struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };
    ssize_t k = wr ? process_vm_writev(pid, &local, 1, &remote, 1, 0)
                   : process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (k == (ssize_t)len)
        return vm;
    int e1 = k < 0 ? errno : EIO; /* EIO: a short transfer */

    char path[64];
    snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
    int fd = open(path, (wr ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
    k = -1;
    if (fd >= 0) {
        k = wr ? pwrite(fd, buf, len, (off_t)addr) : pread(fd, buf, len, (off_t)addr);
        if (k >= 0 && k != (ssize_t)len)
            errno = EIO;
        int e = errno;
        close(fd);
        errno = e;
    }
    if (k != (ssize_t)len) {
        snprintf(how, sizeof how, "%s (%s), then %s(%s)", vm, errname(e1),
                 fd < 0 ? "open" : wr ? "pwrite" : "pread", path);
        unavail(how, errno);
    }
    snprintf(how, sizeof how, "%s (%s failed: %s)", path, vm, errname(e1));
    return how;
}

static void notif_buf_arg(const struct seccomp_notif *n)
{
    if (n->data.args[1] != NOTIF_BUF)
        fail(0, "getppid() length argument %llu, expected %d",
             (unsigned long long)n->data.args[1], NOTIF_BUF);
}

/* MEM_READ: the target's buffer holds its marker. */
static const char *sup_mem_read(int lfd, const struct seccomp_notif *n)
{
    char got[NOTIF_BUF], want[NOTIF_BUF];
    notif_buf_arg(n);
    const char *how = task_mem((pid_t)n->pid, n->data.args[0], got, NOTIF_BUF, 0);
    notif_marker(want, "before", (long)n->pid);
    if (memcmp(got, want, NOTIF_BUF) != 0) {
        got[NOTIF_BUF - 1] = '\0';
        ok_false("read \"%s\" with %s, expected \"%s\"", got, how, want);
    }
    notif_reply(lfd, n->id);
    return how;
}

/* MEM_WRITE: overwrite the target's buffer; the target checks it. */
static const char *sup_mem_write(int lfd, const struct seccomp_notif *n)
{
    char buf[NOTIF_BUF];
    notif_buf_arg(n);
    notif_marker(buf, "after", (long)n->pid);
    const char *how = task_mem((pid_t)n->pid, n->data.args[0], buf, NOTIF_BUF, 1);
    notif_reply(lfd, n->id);
    return how;
}

/* CANCEL: a signal interrupts the trapped getppid(); its id is then gone. */
__attribute__((noreturn))
static void sup_cancel(int lfd, const struct seccomp_notif *n, int sock)
{
    struct cancel_msg cm;
    if (kill((pid_t)n->pid, SIGUSR1) != 0)
        fail(errno, "kill(target, SIGUSR1)");
    if (wait_io(sock, POLLIN, check_end()) != 0)
        ok_false("the target's getppid() did not return after SIGUSR1 (%s)", strerror(errno));
    ssize_t k = read(sock, &cm, sizeof cm);
    if (k != (ssize_t)sizeof cm)
        fail(k < 0 ? errno : 0, "no report from the target after SIGUSR1 (got %zd bytes)", k);
    if (cm.ret != -1 || cm.err != EINTR)
        ok_false("after SIGUSR1 the target's getppid() returned %ld (errno %s), expected -1 EINTR",
                 cm.ret, errname(cm.err));
    int e = notif_send(lfd, n->id);
    if (e != ENOENT)
        ok_false("NOTIF_SEND on the interrupted notification: %s, expected ENOENT",
                 e ? errname(e) : "succeeded");
    ok_bool(1, NULL);
}

/* Supervisor (the check child): fork the target, take its listener, receive
 * the getppid() notification and do the mode's part; then the target's exit
 * status says whether its side held. */
static void notif_supervisor(enum notif_mode mode)
{
    if (mode == NOTIF_PROC_FD) {
        char raw[sizeof g_notif_path];
        self_path(raw, sizeof raw);
        char *real = realpath(raw, NULL); /* what /proc/<pid>/fd/<n> will say */
        snprintf(g_notif_path, sizeof g_notif_path, "%s", real ? real : raw);
        free(real);
    }
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
    if (m.stage == 3)
        fail(m.err, "the target's preparation, %s", notif_modes[mode].prep);
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

    const char *detail = NULL; /* for value true: how it worked, where that varies */
    switch (mode) {
    case NOTIF_REPLY: notif_reply(lfd, notif.id); break;
    case NOTIF_ADDFD: detail = sup_addfd(lfd, &notif); break;
    case NOTIF_ID_VALID: detail = sup_id_valid(lfd, &notif); break;
    case NOTIF_SOCKET: detail = sup_socket(lfd, &notif); break;
    case NOTIF_PROC_FD: detail = sup_proc_fd(lfd, &notif); break;
    case NOTIF_MEM_READ: detail = sup_mem_read(lfd, &notif); break;
    case NOTIF_MEM_WRITE: detail = sup_mem_write(lfd, &notif); break;
    case NOTIF_CANCEL: sup_cancel(lfd, &notif, sv[0]);
    }

    int st;
    while (waitpid(g_target, &st, 0) < 0)
        if (errno != EINTR)
            fail(errno, "waitpid(target)");
    g_target = 0;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
        ok_bool(1, detail);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 1)
        ok_bool(0, notif_modes[mode].mismatch);
    if (WIFSIGNALED(st))
        fail(0, "target killed by signal %d", WTERMSIG(st));
    fail(0, "target exited %d", WEXITSTATUS(st));
}

void chk_seccomp_notif_round_trip(void) { notif_supervisor(NOTIF_REPLY); }
void chk_seccomp_addfd(void) { notif_supervisor(NOTIF_ADDFD); }
void chk_seccomp_id_validation(void) { notif_supervisor(NOTIF_ID_VALID); }
void chk_seccomp_retained_socket(void) { notif_supervisor(NOTIF_SOCKET); }
void chk_seccomp_proc_fd_identity(void) { notif_supervisor(NOTIF_PROC_FD); }
void chk_seccomp_task_memory_read(void) { notif_supervisor(NOTIF_MEM_READ); }
void chk_seccomp_task_memory_write(void) { notif_supervisor(NOTIF_MEM_WRITE); }
void chk_seccomp_cancellation(void) { notif_supervisor(NOTIF_CANCEL); }
