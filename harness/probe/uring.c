/* io_uring, what a seccomp filter on the syscalls never sees: one ring helper (raw
 * syscalls, no liburing in a static probe), and what is done through it: the egress
 * sweep's TCP exchange and the filesystem scenario's file operations. */

#include "probe.h"

#include <linux/io_uring.h>
#include <sys/mman.h>

struct uring {
    int fd;
    unsigned *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
    struct io_uring_sqe *sqes;
    struct io_uring_cqe *cqes;
};

/* A ring of 4 entries, mapped (the CQ ring in the SQ ring's mapping when the kernel
 * has IORING_FEAT_SINGLE_MMAP). 0, or -1 with errno and *step the call that failed. */
static int uring_open(struct uring *u, const char **step)
{
    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    *step = "io_uring_setup";
    u->fd = (int)syscall(__NR_io_uring_setup, 4, &p);
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
    u->cq_head = (unsigned *)(cq + p.cq_off.head);
    u->cq_tail = (unsigned *)(cq + p.cq_off.tail);
    u->cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
    u->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
    u->sqes = sqes;
    return 0;
}

/* One request, waited for: its result (a negative errno on failure). */
static int uring_do(struct uring *u, const struct io_uring_sqe *sqe)
{
    unsigned tail = *u->sq_tail, idx = tail & *u->sq_mask;
    u->sqes[idx] = *sqe;
    u->sq_array[idx] = idx;
    __atomic_store_n(u->sq_tail, tail + 1, __ATOMIC_RELEASE);
    if (syscall(__NR_io_uring_enter, u->fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
        return -errno;
    unsigned head = *u->cq_head;
    if (head == __atomic_load_n(u->cq_tail, __ATOMIC_ACQUIRE))
        return -EAGAIN;
    int res = u->cqes[head & *u->cq_mask].res;
    __atomic_store_n(u->cq_head, head + 1, __ATOMIC_RELEASE);
    return res;
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
        fd = socket(dst->ss_family, type | SOCK_CLOEXEC, proto);
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
    long n;
    do
        n = syscall(__NR_io_uring_enter, u.fd, 3, 3, IORING_ENTER_GETEVENTS, NULL, 0);
    while (n < 0 && errno == EINTR);
    if (n < 0)
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

static char g_uring_buf[65536]; /* what the read brought */

/* Through io_uring: open and read the sentinel (escaped on the token), and set an
 * extended attribute of <outside>/uring-me (Landlock governs none; the host's state
 * shows it). */
void chk_fs_io_uring(void)
{
    const char *sentinel = need(&o.sentinel), *path = outside(T_uring_me), *v = need(&o.tag);
    need(&o.token);
    struct uring u;
    const char *step;
    if (uring_open(&u, &step) < 0)
        outcome(OC_BLOCKED, errno, "io_uring_setup");
    struct io_uring_sqe sqe;
    memset(&sqe, 0, sizeof sqe);
    sqe.opcode = IORING_OP_OPENAT;
    sqe.fd = AT_FDCWD;
    sqe.addr = (uint64_t)(uintptr_t)sentinel;
    sqe.open_flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
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
            outcome(OC_ESCAPED, 0, "read the token of %s through io_uring (IORING_OP_OPENAT, READ)",
                    sentinel);
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
        outcome(OC_SUCCEEDED, 0, "IORING_OP_SETXATTR on %s", path);
    ev_str("openat", opened < 0 ? errname(-opened) : "ok");
    outcome(OC_BLOCKED, -set, "IORING_OP_SETXATTR on %s (IORING_OP_OPENAT of the sentinel: %s)",
            path, opened < 0 ? errname(-opened) : "opened, no token");
}
