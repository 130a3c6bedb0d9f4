/* io_uring, what a seccomp filter on the syscalls never sees: one ring helper (raw
 * syscalls, no liburing in a static probe), and what is done through it: the egress
 * sweep's TCP exchange and the filesystem scenario's file operations. */

#include "probe.h"

#include <linux/io_uring.h>
#include <limits.h>
#include <sys/mman.h>

struct uring {
    int fd, sqpoll, i386; /* i386: set up, and entered, through the i386 entry */
    unsigned *sq_tail, *sq_mask, *sq_array, *sq_flags, *cq_head, *cq_tail, *cq_mask, *sq_head;
    struct io_uring_sqe *sqes;
    struct io_uring_cqe *cqes;
};

/* Whether io_uring_enter is refused (or kills) where io_uring_setup is not: then every
 * ring is made with a kernel thread that polls its submissions (IORING_SETUP_SQPOLL,
 * unprivileged since 5.11), and nothing calls io_uring_enter at all. Asked once, in a
 * child: a filter that kills on the call kills the child. */
static int enter_refused(void)
{
    static int refused = -1;
    if (refused >= 0)
        return refused;
    pid_t pid = fork();
    if (pid == 0) {
        struct io_uring_params p;
        memset(&p, 0, sizeof p);
        int fd = (int)syscall(__NR_io_uring_setup, 1, &p);
        _exit(fd < 0 ? 0 : syscall(__NR_io_uring_enter, fd, 0, 0, 0, NULL, 0) < 0 ? 1 : 0);
    }
    int st = 0, got = -1;
    while (pid > 0 && (got = (int)waitpid(pid, &st, 0)) < 0 && errno == EINTR)
        ;
    refused = got == pid && !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    return refused;
}

const char *uring_way(void)
{
    return enter_refused() ? "by its SQPOLL thread: io_uring_enter refused" : "";
}

static int g_ring_i386;     /* the last ring was set up through the i386 entry */
int g_ring_i386_may; /* this process's rings may be (fs-io-uring, the sweep's exchange) */

/* The way the last ring was set up, where through the i386 entry: or "". */
const char *uring_i386_way(void)
{
    return g_ring_i386 ? " (its ring set up and entered through the i386 entry, int $0x80: x86_64's"
                         " io_uring_setup refused)"
                       : "";
}

/* io_uring_setup, with a polling thread where io_uring_enter is refused (its idle
 * time far longer than any wait for a ring's next submission); where x86_64's
 * io_uring_setup is refused, the i386 entry's (a filter on x86_64's calls alone), for
 * the file operations and the sweep's exchange (each in a child of its own). */
/* Whether a filter kills on x86_64's io_uring_setup (then the i386 entry's is tried). */
static int setup_killed(void)
{
    static int killed = -1;
    static struct io_uring_params p;
    return killed < 0 ? (killed = killed_on_call(__NR_io_uring_setup, 1, (long)&p, 0)) : killed;
}

static int ring_setup(unsigned entries, struct io_uring_params *p, int *sqpoll, int *i386)
{
    memset(p, 0, sizeof *p);
    if (setup_killed()) {
        *sqpoll = 0;
        int fd = g_ring_i386_may ? i386_ring_setup(entries, p, sizeof *p) : -1;
        *i386 = g_ring_i386 = fd >= 0;
        if (fd < 0)
            errno = EPERM; /* killed on x86_64's call: refused */
        return fd;
    }
    *sqpoll = enter_refused();
    if (*sqpoll) {
        p->flags = IORING_SETUP_SQPOLL;
        p->sq_thread_idle = 1000; /* it spins until then: rings are short-lived */
    }
    int fd = (int)syscall(__NR_io_uring_setup, entries, p), e = errno;
    *i386 = fd < 0 && !*sqpoll && g_ring_i386_may && (fd = i386_ring_setup(entries, p, sizeof *p)) >= 0;
    g_ring_i386 = *i386;
    if (fd < 0)
        errno = e; /* x86_64's refusal is the one reported */
    return fd;
}

/* Wake a polling ring's thread without io_uring_enter: a ring set up to share it
 * (IORING_SETUP_ATTACH_WQ) parks and unparks it, and it takes every ring's submissions
 * again (it goes to sleep at once where it found none when it started). 0, or -1. */
static int ring_kick(const struct uring *u)
{
    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    p.flags = IORING_SETUP_SQPOLL | IORING_SETUP_ATTACH_WQ;
    p.wq_fd = (unsigned)u->fd;
    int fd = (int)syscall(__NR_io_uring_setup, 1, &p);
    if (fd < 0)
        return -1;
    close(fd);
    return 0;
}

/* Submit what the SQ tail holds and wait for `wait` completions: by io_uring_enter, or
 * on a polling ring by watching the CQ tail, its thread woken as it sleeps (10 s at
 * most). 0, or -1 with errno. */
static int ring_enter(const struct uring *u, unsigned n, unsigned wait)
{
    if (!u->sqpoll) {
        long r;
        do
            r = u->i386 ? i386_ring_enter(u->fd, n, wait, IORING_ENTER_GETEVENTS)
                        : syscall(__NR_io_uring_enter, u->fd, n, wait, IORING_ENTER_GETEVENTS, NULL, 0);
        while (r < 0 && errno == EINTR);
        return r < 0 ? -1 : 0;
    }
    for (double end = now_ms() + 10000;
         __atomic_load_n(u->cq_tail, __ATOMIC_ACQUIRE) - *u->cq_head < wait;) {
        if (now_ms() > end)
            return errno = ETIMEDOUT, -1;
        if (__atomic_load_n(u->sq_flags, __ATOMIC_ACQUIRE) & IORING_SQ_NEED_WAKEUP && ring_kick(u) != 0)
            return errno = EAGAIN, -1; /* its thread asleep, and nothing wakes it */
        struct timespec ts = { 0, 200000 };
        nanosleep(&ts, NULL);
    }
    return 0;
}

/* A ring of 4 entries, mapped (the CQ ring in the SQ ring's mapping when the kernel
 * has IORING_FEAT_SINGLE_MMAP). 0, or -1 with errno and *step the call that failed. */
static int uring_open(struct uring *u, const char **step)
{
    struct io_uring_params p;
    *step = "io_uring_setup";
    u->fd = ring_setup(4, &p, &u->sqpoll, &u->i386);
    if (u->fd < 0)
        return -1;
    size_t sqsz = p.sq_off.array + p.sq_entries * sizeof(unsigned);
    size_t cqsz = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
    int single = (p.features & IORING_FEAT_SINGLE_MMAP) != 0;
    if (single && cqsz > sqsz)
        sqsz = cqsz;
    *step = "mmap of the rings";
    unsigned char *sq = mmap(NULL, sqsz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, u->fd,
                             IORING_OFF_SQ_RING);
    if (sq == MAP_FAILED)
        return -1;
    unsigned char *cq = single ? sq
                               : mmap(NULL, cqsz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
                                      u->fd, IORING_OFF_CQ_RING);
    struct io_uring_sqe *sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe),
                                     PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, u->fd,
                                     IORING_OFF_SQES);
    if (cq == MAP_FAILED || sqes == MAP_FAILED)
        return -1;
    u->sq_tail = (unsigned *)(sq + p.sq_off.tail);
    u->sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
    u->sq_array = (unsigned *)(sq + p.sq_off.array);
    u->sq_flags = (unsigned *)(sq + p.sq_off.flags);
    u->cq_head = (unsigned *)(cq + p.cq_off.head);
    u->cq_tail = (unsigned *)(cq + p.cq_off.tail);
    u->cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
    u->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
    u->sqes = sqes;
    return 0;
}

/* One request, waited for: its result (a negative errno on failure). */
static int g_brief; /* a nonblocking socket's connect: its answer waited for 300 ms at most */
static int uring_do(struct uring *u, const struct io_uring_sqe *sqe)
{
    unsigned tail = *u->sq_tail, idx = tail & *u->sq_mask;
    u->sqes[idx] = *sqe;
    u->sq_array[idx] = idx;
    __atomic_store_n(u->sq_tail, tail + 1, __ATOMIC_RELEASE);
    if (ring_enter(u, 1, !g_brief) < 0)
        return -errno;
    unsigned head = *u->cq_head;
    for (double end = now_ms() + 300; g_brief && head == __atomic_load_n(u->cq_tail, __ATOMIC_ACQUIRE) &&
                                      now_ms() < end;)
        nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
    if (head == __atomic_load_n(u->cq_tail, __ATOMIC_ACQUIRE)) /* brief: under way, the ring closed */
        return !g_brief ? -EAGAIN /* on it; never issued where a poller never took it (SQPOLL) */
               : __atomic_load_n(u->sq_head, __ATOMIC_ACQUIRE) == tail ? -ETIMEDOUT : -EINPROGRESS;
    int res = u->cqes[head & *u->cq_mask].res;
    __atomic_store_n(u->cq_head, head + 1, __ATOMIC_RELEASE);
    return res;
}

/* One request on a ring of its own, the ring closed after: its result, or -1 with
 * errno and *step the call that failed (`name`: the request's). */
int uring_one(const struct io_uring_sqe *req, const char *name, const char **step)
{
    struct uring u;
    struct io_uring_params p;
    *step = "io_uring_setup";
    u.fd = ring_setup(1, &p, &u.sqpoll, &u.i386);
    if (u.fd < 0)
        return -1;
    size_t sqsz = p.sq_off.array + p.sq_entries * sizeof(unsigned);
    size_t cqsz = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
    size_t sesz = p.sq_entries * sizeof(struct io_uring_sqe);
    int single = (p.features & IORING_FEAT_SINGLE_MMAP) != 0, fd = -1, e = 0;
    if (single && cqsz > sqsz)
        sqsz = cqsz;
    unsigned char *sq = mmap(NULL, sqsz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, u.fd,
                             IORING_OFF_SQ_RING);
    unsigned char *cq = sq == MAP_FAILED || single
                            ? sq
                            : mmap(NULL, cqsz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
                                   u.fd, IORING_OFF_CQ_RING);
    u.sqes = mmap(NULL, sesz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, u.fd, IORING_OFF_SQES);
    *step = "mmap of the rings";
    if (sq == MAP_FAILED || cq == MAP_FAILED || u.sqes == MAP_FAILED) {
        e = errno;
    } else {
        u.sq_tail = (unsigned *)(sq + p.sq_off.tail), u.sq_head = (unsigned *)(sq + p.sq_off.head);
        u.sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
        u.sq_array = (unsigned *)(sq + p.sq_off.array);
        u.sq_flags = (unsigned *)(sq + p.sq_off.flags);
        u.cq_head = (unsigned *)(cq + p.cq_off.head);
        u.cq_tail = (unsigned *)(cq + p.cq_off.tail);
        u.cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
        u.cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
        *step = name;
        fd = uring_do(&u, req);
        e = fd < 0 ? -fd : 0;
    }
    if (u.sqes != MAP_FAILED)
        munmap(u.sqes, sesz);
    if (cq != MAP_FAILED && cq != sq)
        munmap(cq, cqsz);
    if (sq != MAP_FAILED)
        munmap(sq, sqsz);
    close(u.fd);
    return fd >= 0 ? fd : (errno = e, -1);
}

/* A socket made by the ring (IORING_OP_SOCKET, 5.19+): the way a filter on socket(2)'s
 * arguments never sees. The descriptor, or -1 with errno (EINVAL where the kernel has
 * no such operation). */
int uring_socket(int family, int type, int proto, const char **step)
{
    /* the flags go with the type; rw_flags must be 0 */
    struct io_uring_sqe mk = { .opcode = IORING_OP_SOCKET, .fd = family, .off = (unsigned)type, .len = (unsigned)proto };
    return uring_one(&mk, "IORING_OP_SOCKET", step);
}

/* A connect by the ring (IORING_OP_CONNECT), on a socket made anyhow: the way a filter
 * on connect(2) never sees. 0, or -1 with errno (EINPROGRESS: a nonblocking socket's,
 * not done within 300 ms, goes on as connect(2)'s would). */
int uring_connect(int fd, const struct sockaddr *sa, socklen_t len, const char **step)
{
    struct io_uring_sqe c = { .opcode = IORING_OP_CONNECT, .fd = fd, .addr = (unsigned long long)(uintptr_t)sa,
                              .off = len };
    g_brief = (fcntl(fd, F_GETFL) & O_NONBLOCK) != 0;
    int r = uring_one(&c, "IORING_OP_CONNECT", step);
    g_brief = 0;
    return r < 0 ? -1 : 0;
}

/* A NOP on a ring of its own: 0 where io_uring answers here. */
int uring_nop(const char **step)
{
    struct io_uring_sqe nop = { .opcode = IORING_OP_NOP };
    return uring_one(&nop, "IORING_OP_NOP", step);
}

/* A message sent on `fd` by the ring (IORING_OP_SENDMSG): the way a filter on the send
 * calls never sees. The bytes sent, or -1 with errno. */
ssize_t uring_sendmsg(int fd, const struct msghdr *m, const char **step)
{
    struct io_uring_sqe s = { .opcode = IORING_OP_SENDMSG, .fd = fd, .addr = (unsigned long long)(uintptr_t)m,
                              .len = 1, .msg_flags = MSG_DONTWAIT };
    return uring_one(&s, "IORING_OP_SENDMSG", step);
}

/* ---- the egress sweep's uring4: connect, send, recv by io_uring alone --------
 * The socket made by the ring, then a TCP connect, a send and a receive submitted as
 * one linked chain, so that no socket(2), connect(2), send(2) or recv(2) is made. A filter that stops the socket API's
 * calls but not io_uring's leaves this way open. */

static void sqe_set(struct io_uring_sqe *s, int op, int fd, const void *addr, unsigned len,
                    unsigned long long off, int link, unsigned long long data)
{
    memset(s, 0, sizeof *s);
    s->opcode = (unsigned char)op;
    s->fd = fd;
    s->addr = (unsigned long long)(uintptr_t)addr;
    s->len = len;
    s->off = off;
    s->flags = link ? IOSQE_IO_LINK : 0;
    s->user_data = data;
}

/* Connect to dst, send msg, receive into reply (NUL-ended), by io_uring alone, on a
 * socket of `type` and `proto` (TCP, UDP, Multipath TCP: the ring makes any kind a
 * filter on socket(2)'s arguments refuses). 0 when the chain ran (reply may be
 * empty); else -1 with errno, and *step the operation that failed. Blocks: the
 * caller runs it in a child it can kill. */
int uring_exchange(const Addr *dst, int type, int proto, const char *msg, char *reply, size_t cap,
                   int *src_port, const char **step)
{
    struct uring u;
    g_ring_i386_may = 1; /* in the exchange's own child: where x86_64's setup is refused */
    if (uring_open(&u, step) < 0)
        return -1;
    /* The socket by the ring too (IORING_OP_SOCKET, 5.19+); socket(2) only where the
     * kernel has no such operation. */
    struct io_uring_sqe mk;
    memset(&mk, 0, sizeof mk);
    mk.opcode = IORING_OP_SOCKET;
    mk.fd = dst->ss_family;
    mk.off = (unsigned)type | SOCK_CLOEXEC; /* the flags go with the type; rw_flags must be 0 */
    mk.len = (unsigned)proto;
    *step = "IORING_OP_SOCKET";
    int fd = uring_do(&u, &mk);
    if (fd == -EINVAL || fd == -EOPNOTSUPP) {
        *step = "socket";
        fd = sock_make(dst->ss_family, type | SOCK_CLOEXEC, proto);
    } else if (fd < 0) {
        return errno = -fd, -1;
    }
    if (fd < 0)
        return -1;
    unsigned mask = *u.sq_mask, *tail = u.sq_tail, *array = u.sq_array;
    struct io_uring_sqe *sqes = u.sqes;
    unsigned t = *tail;
    sqe_set(&sqes[0], IORING_OP_CONNECT, fd, dst, 0, addr_len(dst), 1, 1);
    sqe_set(&sqes[1], IORING_OP_SEND, fd, msg, (unsigned)strlen(msg), 0, 1, 2);
    sqes[1].msg_flags = MSG_NOSIGNAL;
    sqe_set(&sqes[2], IORING_OP_RECV, fd, reply, (unsigned)cap - 1, 0, 0, 3);
    for (unsigned i = 0; i < 3; i++)
        array[(t + i) & mask] = i;
    __atomic_store_n(tail, t + 3, __ATOMIC_RELEASE);
    *step = "io_uring_enter";
    if (ring_enter(&u, 3, 3) < 0)
        return -1;
    Addr me;
    socklen_t ml = sizeof me;
    if (getsockname(fd, (struct sockaddr *)&me, &ml) == 0)
        *src_port = (int)addr_port(&me);
    unsigned *head = u.cq_head;
    unsigned ctail = __atomic_load_n(u.cq_tail, __ATOMIC_ACQUIRE);
    unsigned cmask = *u.cq_mask;
    struct io_uring_cqe *cqes = u.cqes;
    static const char *const names[] = { "?", "IORING_OP_CONNECT", "IORING_OP_SEND", "IORING_OP_RECV" };
    int got = 0, err = 0; /* the reply buffer is the kernel's until here */
    for (unsigned h = *head; h != ctail; h++) {
        struct io_uring_cqe *c = &cqes[h & cmask];
        unsigned long long which = c->user_data;
        if (which == 3 && c->res > 0) {
            got = c->res < (int)cap ? c->res : (int)cap - 1;
            reply[got] = '\0';
        } else if (c->res < 0 && !err && which >= 1 && which <= 3) {
            err = -c->res;
            *step = names[which];
        }
    }
    if (!got)
        reply[0] = '\0';
    if (err && !got) /* a link broken later shows as ECANCELED: the first error is the cause */
        return errno = err, -1;
    return 0;
}

/* ---- the filesystem scenario's file operations -------------------------------- */

/* An IORING_OP_OPENAT of `path` for reading, as the check's own open would be. */
static void sqe_open_read(struct io_uring_sqe *s, const char *path)
{
    memset(s, 0, sizeof *s);
    s->opcode = IORING_OP_OPENAT;
    s->fd = AT_FDCWD;
    s->addr = (uint64_t)(uintptr_t)path;
    s->open_flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
}

static char g_uring_buf[65536]; /* what the read brought */
#define I386_RING ", the ring set up and entered through the i386 entry (int $0x80)"

/* Through io_uring: open and read the sentinel (escaped on the token), and set an
 * extended attribute of <outside>/uring-me (Landlock governs none; the host's state
 * shows it); where no ring can be set up, that attribute by each ring held at start. */
void chk_fs_io_uring(void)
{
    const char *sentinel = need(&o.sentinel), *path = outside(T_uring_me), *v = need(&o.tag), *step;
    need(&o.token);
    struct uring u;
    g_ring_i386_may = 1;
    if (uring_open(&u, &step) < 0) { /* a polling thread refused for a limit: no proof */
        held_rings_setxattr(path, v); /* by a ring held at start instead (errno kept) */
        outcome(*uring_way() && errno == EAGAIN ? OC_ERROR : OC_BLOCKED, errno, "%s", step);
    }
    struct io_uring_sqe sqe;
    sqe_open_read(&sqe, sentinel);
    int fd = uring_do(&u, &sqe), opened = fd;
    if (fd >= 0) {
        memset(&sqe, 0, sizeof sqe);
        sqe.opcode = IORING_OP_READ;
        sqe.fd = fd;
        sqe.addr = (uint64_t)(uintptr_t)g_uring_buf;
        sqe.len = sizeof g_uring_buf;
        int n = uring_do(&u, &sqe);
        close(fd);
        if (n > 0 && memmem(g_uring_buf, (size_t)n, o.token, strlen(o.token)))
            outcome(OC_ESCAPED, 0, "read the token of %s through io_uring (IORING_OP_OPENAT, READ%s%s%s)",
                    sentinel, *uring_way() ? "; " : "", uring_way(), g_ring_i386 ? I386_RING : "");
    }
    memset(&sqe, 0, sizeof sqe);
    sqe.opcode = IORING_OP_SETXATTR;
    sqe.addr = (uint64_t)(uintptr_t)"user.harness-uring";
    sqe.addr2 = (uint64_t)(uintptr_t)v;
    sqe.addr3 = (uint64_t)(uintptr_t)path;
    sqe.len = (uint32_t)strlen(v);
    int set = uring_do(&u, &sqe);
    close(u.fd);
    if (set == 0)
        outcome(OC_SUCCEEDED, 0, "IORING_OP_SETXATTR on %s%s%s%s", path, *uring_way() ? ", " : "",
                uring_way(), g_ring_i386 ? I386_RING : "");
    if (*uring_way() && (set == -EAGAIN || set == -ETIMEDOUT)) /* its thread never took it */
        outcome(OC_ERROR, -set, "IORING_OP_SETXATTR on %s, by a polling ring: not taken, no proof", path);
    ev_str("openat", opened < 0 ? errname(-opened) : "ok");
    outcome(OC_BLOCKED, -set, "IORING_OP_SETXATTR on %s (IORING_OP_OPENAT of the sentinel: %s)",
            path, opened < 0 ? errname(-opened) : "opened, no token");
}

/* ---- a ring the workload holds -------------------------------------------------- */

/* The value after `key` ("SqMask:") in the ring's /proc/self/fdinfo, or LONG_MIN.
 * Read whole: its pending completions come, a line each, before the later keys. */
static long ring_fdinfo(int fd, const char *key)
{
    static char text[1 << 20];
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fdinfo/%d", fd);
    int f = open(path, O_RDONLY | O_CLOEXEC);
    if (f < 0)
        return LONG_MIN;
    size_t n = 0;
    for (ssize_t got; n < sizeof text - 1 && (got = read(f, text + n, sizeof text - 1 - n)) > 0;)
        n += (size_t)got;
    close(f);
    text[n] = 0;
    size_t klen = strlen(key);
    for (char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
        if (!strncmp(line, key, klen))
            return strtol(line + klen, NULL, 0);
    return LONG_MIN;
}

static struct uring g_held_ring = { .fd = -1 };
static int g_ring_refusal;

int uring_held_refusal(void) { return g_ring_refusal; }

#ifndef IORING_REGISTER_ENABLE_RINGS
#define IORING_REGISTER_ENABLE_RINGS 12
#endif

/* Map a ring set up by someone else. Only io_uring_setup tells its offsets (and a
 * filter may refuse that call to the holder), so they are found in the ring itself:
 * the words sq_ring_mask, cq_ring_mask, sq_ring_entries, cq_ring_entries (fdinfo gives
 * both masks) mark the middle of the kernel's struct io_rings, with the heads and
 * tails before them (packed, or a 64-byte line each in older kernels), the
 * completions after them on the next line, the submission array after those. A ring
 * whose poll thread (IORING_SETUP_SQPOLL) is another process's is not judged: its
 * requests read that process's memory, yet some (a splice between registered files)
 * need none, so it is never taken for a ring that reaches nothing. */
static int ring_map_held(int fd, struct uring *u, const char **why)
{
    long sqmask = ring_fdinfo(fd, "SqMask:"), cqmask = ring_fdinfo(fd, "CqMask:");
    long thread = ring_fdinfo(fd, "SqThread:");
    if (sqmask < 0 || cqmask < 0 || sqmask > 32767 || cqmask > 65535 || thread == LONG_MIN) {
        *why = "its fdinfo shows no ring sizes or poll thread";
        return -EBADE;
    }
    if (thread >= 0) {
        *why = "its poll thread (IORING_SETUP_SQPOLL) is another process's, which harness does"
               " not drive";
        return -EBADE;
    }
    size_t page = 4096;
    unsigned char *head = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, IORING_OFF_SQ_RING);
    if (head == MAP_FAILED) {
        *why = "mmap of its rings failed";
        return -EBADE;
    }
    long at = -1;
    for (size_t off = 0; off + 16 <= 512; off += 4) {
        const uint32_t *w = (const uint32_t *)(head + off);
        if (w[0] == (uint32_t)sqmask && w[1] == (uint32_t)cqmask && w[2] == (uint32_t)sqmask + 1 &&
            w[3] == (uint32_t)cqmask + 1) {
            at = (long)off;
            break;
        }
    }
    munmap(head, page);
    size_t line = at == 16 ? 4 : at == 256 ? 64 : 0; /* the heads' and tails' spacing */
    if (!line) {
        *why = "its ring has a layout harness does not know";
        return -EBADE;
    }
    size_t cqes = ((size_t)at + 32 + 63) & ~(size_t)63;
    size_t array = (cqes + ((size_t)cqmask + 1) * sizeof(struct io_uring_cqe) + 63) & ~(size_t)63;
    size_t size = array + ((size_t)sqmask + 1) * sizeof(unsigned);
    unsigned char *r = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, IORING_OFF_SQ_RING);
    struct io_uring_sqe *sqes = mmap(NULL, ((size_t)sqmask + 1) * sizeof(struct io_uring_sqe),
                                     PROT_READ | PROT_WRITE, MAP_SHARED, fd, IORING_OFF_SQES);
    if (r == MAP_FAILED || sqes == MAP_FAILED) {
        *why = "mmap of its rings at their full size failed";
        return -EBADE;
    }
    u->fd = fd;
    u->sq_tail = (unsigned *)(r + line);
    u->cq_head = (unsigned *)(r + 2 * line);
    u->cq_tail = (unsigned *)(r + 3 * line);
    u->sq_mask = (unsigned *)(r + at);
    u->cq_mask = (unsigned *)(r + at + 4);
    u->cqes = (struct io_uring_cqe *)(r + cqes);
    u->sq_array = (unsigned *)(r + array);
    u->sqes = sqes;
    return 0;
}

/* The completion of the request tagged `tag`, waited for up to a second. Every
 * completion before it (the ring's owner's, ours) is consumed with it, so that no
 * request of ours is lost to a full completion ring. -EBADE with *why when none came. */
static int ring_result(struct uring *u, unsigned long long tag, const char **why)
{
    for (int tries = 0; tries < 100; tries++) {
        unsigned tail = __atomic_load_n(u->cq_tail, __ATOMIC_ACQUIRE);
        for (unsigned h = *u->cq_head; h != tail; h++) {
            struct io_uring_cqe *c = &u->cqes[h & *u->cq_mask];
            if (c->user_data == tag) {
                int res = c->res;
                __atomic_store_n(u->cq_head, h + 1, __ATOMIC_RELEASE);
                return res;
            }
        }
        struct timespec ts = { 0, 10 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    *why = "no completion came back (a ring whose entries harness cannot lay out: SQE128,"
           " CQE32; or its completions overflowed)";
    return -EBADE;
}

/* One request on a held ring (its user_data set here), waited for: its result, or
 * -EBADE with *why where the ring cannot be driven. A ring set up disabled
 * (IORING_SETUP_R_DISABLED) is enabled first, as its holder may. */
int uring_held_do(int ring, struct io_uring_sqe *req, const char **why)
{
    static int mapped = -EBADE;
    static const char *map_why = "";
    if (g_held_ring.fd != ring) {
        g_held_ring.fd = -1;
        mapped = ring_map_held(ring, &g_held_ring, &map_why);
    }
    if (mapped < 0) {
        *why = map_why;
        return mapped;
    }
    struct uring *u = &g_held_ring;
    static unsigned long long seq;
    req->user_data = 0x68617200000000ULL | ++seq; /* "har" and a count */
    unsigned tail = *u->sq_tail, idx = tail & *u->sq_mask;
    u->sqes[idx] = *req;
    u->sq_array[idx] = idx;
    __atomic_store_n(u->sq_tail, tail + 1, __ATOMIC_RELEASE);
    long n = syscall(__NR_io_uring_enter, ring, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0);
    if (n < 0 && errno == EBADFD) { /* disabled: enabled first, as its holder may */
        if (syscall(__NR_io_uring_register, ring, IORING_REGISTER_ENABLE_RINGS, NULL, 0) != 0) {
            *why = "it is disabled and could not be enabled";
            return -EBADE;
        }
        n = syscall(__NR_io_uring_enter, ring, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0);
    }
    if (n < 0) {
        int e = errno;
        if (e == EPERM || e == EACCES || e == ENOSYS) { /* refused: a filter, an LSM */
            g_ring_refusal = e;
            return RING_REFUSED;
        }
        *why = e == EBADFD  ? "it is disabled and could not be enabled"
               : e == EEXIST ? "only the task that set it up may submit (SINGLE_ISSUER)"
                             : "io_uring_enter failed on it";
        return -EBADE;
    }
    return ring_result(u, req->user_data, why);
}

int uring_held_open(int ring, const char *path, unsigned personality, const char **why)
{
    struct io_uring_sqe s;
    sqe_open_read(&s, path);
    s.personality = (uint16_t)personality;
    return uring_held_do(ring, &s, why);
}

int uring_held_personalities(int ring, unsigned *ids, int max, const char **why)
{
    int n = 0;
    for (unsigned id = 1; id <= 65535; id++) {
        struct io_uring_sqe s;
        memset(&s, 0, sizeof s);
        s.opcode = IORING_OP_NOP;
        s.personality = (uint16_t)id;
        int r = uring_held_do(ring, &s, why);
        if (r == -EBADE || r == RING_REFUSED)
            return r;
        if (r != 0 && r != -EINVAL) { /* a ring's restrictions refuse the NOP itself */
            *why = "its restrictions refuse a NOP, so its personalities cannot be told";
            return -EBADE;
        }
        if (r == 0) {
            if (n == max) {
                *why = "more personalities registered on it than harness tries";
                return -EBADE;
            }
            ids[n++] = id;
        }
    }
    return n;
}

#ifndef IORING_OP_FIXED_FD_INSTALL
#define IORING_OP_FIXED_FD_INSTALL 54 /* 6.8 */
#endif

int uring_held_files(int ring)
{
    long n = ring_fdinfo(ring, "UserFiles:");
    return n == LONG_MIN ? -1 : (int)n;
}

int uring_held_install(int ring, unsigned slot, const char **why)
{
    struct io_uring_sqe s;
    memset(&s, 0, sizeof s);
    s.opcode = IORING_OP_FIXED_FD_INSTALL;
    s.fd = (int)slot;
    s.flags = IOSQE_FIXED_FILE;
    return uring_held_do(ring, &s, why); /* O_CLOEXEC: install_fd_flags 0 */
}
