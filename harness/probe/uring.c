/* io_uring's network operations, for the egress sweep: a TCP connect, a send and
 * a receive submitted as one linked chain, so that no connect(2), send(2) or
 * recv(2) is made. A filter that stops the socket API's calls but not io_uring's
 * leaves this way open. Raw syscalls: no liburing in a static probe. */

#include "probe.h"

#include <linux/io_uring.h>
#include <sys/mman.h>
#include <sys/syscall.h>


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

/* Connect to dst, send msg, receive into reply (NUL-ended), by io_uring alone.
 * 0 when the chain ran (reply may be empty); else -1 with errno, and *step the
 * operation that failed. Blocks: the caller runs it in a child it can kill. */
int uring_exchange(const Addr *dst, const char *msg, char *reply, size_t cap, int *src_port,
                   const char **step)
{
    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    *step = "io_uring_setup";
    int ring = (int)syscall(__NR_io_uring_setup, 4, &p);
    if (ring < 0)
        return -1;
    size_t sqsz = p.sq_off.array + p.sq_entries * sizeof(unsigned);
    size_t cqsz = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
    int single = (p.features & IORING_FEAT_SINGLE_MMAP) != 0;
    if (single && cqsz > sqsz)
        sqsz = cqsz;
    *step = "mmap of the rings";
    unsigned char *sq = mmap(NULL, sqsz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring,
                             IORING_OFF_SQ_RING);
    if (sq == MAP_FAILED)
        return -1;
    unsigned char *cq = single ? sq
                               : mmap(NULL, cqsz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
                                      ring, IORING_OFF_CQ_RING);
    struct io_uring_sqe *sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe),
                                     PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring,
                                     IORING_OFF_SQES);
    if (cq == MAP_FAILED || sqes == MAP_FAILED)
        return -1;
    *step = "socket";
    int fd = socket(dst->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    unsigned mask = *(unsigned *)(sq + p.sq_off.ring_mask);
    unsigned *tail = (unsigned *)(sq + p.sq_off.tail), *array = (unsigned *)(sq + p.sq_off.array);
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
        n = syscall(__NR_io_uring_enter, ring, 3, 3, IORING_ENTER_GETEVENTS, NULL, 0);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return -1;
    Addr me;
    socklen_t ml = sizeof me;
    if (getsockname(fd, (struct sockaddr *)&me, &ml) == 0)
        *src_port = (int)addr_port(&me);
    unsigned *head = (unsigned *)(cq + p.cq_off.head);
    unsigned ctail = __atomic_load_n((unsigned *)(cq + p.cq_off.tail), __ATOMIC_ACQUIRE);
    unsigned cmask = *(unsigned *)(cq + p.cq_off.ring_mask);
    struct io_uring_cqe *cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
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
