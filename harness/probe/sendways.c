/* The ways an egress attempt puts its bytes on a socket (attempt.c runs the attempts):
 * each send call, connected or not (and with the longest address length), TCP Fast
 * Open's first send, which makes the connection itself, and the io_uring and i386
 * exchanges, each in a child. A filter that closes some of them leaves the rest: each is a
 * sweep line of its own (sweep.def). */

#include "probe.h"
#include <linux/aio_abi.h>
#include <sys/mman.h>
#include <sys/sendfile.h>

/* Whether a call that failed at once with the address's own length is made again with
 * the longest (sizeof(struct sockaddr_storage), of which the kernel reads only its
 * family's bytes): a filter that judges IP addresses by their length (16 or 28 bytes)
 * lets that through, whatever errno it answers with. Not where nothing was refused. */
int long_addr_retry(int e)
{
    return e != EINPROGRESS && e != EINTR && e != EALREADY && e != EISCONN && e != EAGAIN &&
           e != EWOULDBLOCK && e != ENOBUFS;
}

/* The way a socket made again took (sockways.c), named in the attempt. */
static int way_noted(struct att *a, int fd)
{
    if (fd >= 0) {
        size_t l = strlen(a->dsts);
        snprintf(a->dsts + l, sizeof a->dsts - l, "%s", sock_way());
    }
    return fd;
}

/* A socket made again, where socket(2) refused one, with each argument's upper 32 bits
 * set (sock_retry's SW_WIDE); -1 (errno kept) where it is refused too. */
int socket_wide(struct att *a, int type)
{
    return way_noted(a, sock_retry(a->family, type, a->proto, SW_WIDE));
}

/* A socket made again, where socket(2) refused it as given and widened, with each other
 * set of SOCK_NONBLOCK and SOCK_CLOEXEC, and with its protocol named where it was 0
 * (sock_retry's SW_FLAGS and SW_PROTO); -1 (errno kept) where each is refused too. */
int socket_plain(struct att *a, int type)
{
    return way_noted(a, sock_retry(a->family, type, a->proto, SW_FLAGS | SW_PROTO));
}

/* A socket made by the other entries (sockways.c's sock_entries: the i386 entry's socket
 * or socketcall, io_uring's IORING_OP_SOCKET), where socket(2) refused it every way as a
 * filter refuses: a relay or resolver listening in the sandbox's own namespace (a
 * sidecar's proxy, relay or forwarding resolver: tcp-proxy, udp-relay, dns-own and
 * dns-own-tcp) is reached by a socket of any entry's, where the i386 and ring lines'
 * own aim at the canary alone. */
int socket_entries(struct att *a, int type)
{
    return way_noted(a, sock_entries(a->family, type, a->proto));
}

static ssize_t send_by(struct att *a, const void *p, size_t n, int flags, const struct sockaddr *to,
                       socklen_t tolen);

/* Refused as a filter refuses. */
static int refused(int e)
{
    return e == EPERM || e == EACCES || e == ENOSYS;
}

/* The way each call that carries an address took, where connect(2) was refused every
 * way (connect_other), and those refused before it: a TCP connection made by its first
 * bytes, or a datagram with its destination. */
static const char *const tfo_way[] = {
    " (its connection made by sendto with MSG_FASTOPEN: connect(2) refused every way)",
    " (its connection made by sendmsg with MSG_FASTOPEN: connect(2) and sendto refused every way)",
    " (its connection made by sendmmsg with MSG_FASTOPEN: connect(2), sendto and sendmsg refused every way)",
};
static const char *const unconn_way[] = {
    " (sent by sendto(2), unconnected: connect(2) refused every way)",
    " (sent by sendmsg(2) with its address, unconnected: connect(2) and sendto(2) refused every way)",
    " (sent by sendmmsg(2) with its address, unconnected: connect(2), sendto(2) and sendmsg(2) refused"
    " every way)",
};

/* connect(2) refused as a filter refuses (EPERM, EACCES, ENOSYS) on the way to a route
 * the sweep's own i386, ring and Fast Open lines do not take (a relay or resolver in the
 * sandbox's own namespace, a held socket of another's: RELAY_ROUTE): the same connect by
 * the i386 entry, then the ring (sockways.c's connect_entries); where each is refused
 * too, no connect at all: a TCP connection made with the first bytes by MSG_FASTOPEN of
 * sendto, or where a filter refuses that, of sendmsg, then sendmmsg (msg_name set); a
 * datagram's destination on each datagram (sendto, and where it is refused sendmsg,
 * then sendmmsg: att_send). Its way named in the attempt; 0 (done, or under way: errno
 * EINPROGRESS), or -1 with errno kept. */
int connect_other(struct att *a, const struct sockaddr *sa, socklen_t sl)
{
    char way[120] = "";
    int e = errno, r = connect_entries(a->fd, sa, sl, way, sizeof way), one = 1;
    if (r != 0 && errno != EINPROGRESS && errno != EAGAIN) {
        if (a->type == SOCK_STREAM && a->family != AF_UNIX) {
            static const int calls[] = { H_SENDTO, H_SENDMSG, H_SENDMMSG };
            int how = a->how, k = 0;
            ssize_t w = -1;
            for (; k < 3; k++) {
                a->how = calls[k];
                w = send_by(a, a->out + a->outoff, a->outn - a->outoff,
                            MSG_FASTOPEN | MSG_NOSIGNAL | MSG_DONTWAIT, sa, sl);
                if (w >= 0 || errno == EINPROGRESS || !refused(errno))
                    break;
            }
            a->how = how;
            if (k == 3 || (w < 0 && errno != EINPROGRESS))
                return errno = e, -1;
            a->outoff += w > 0 ? (size_t)w : 0; /* (none where no cookie is cached) */
            a->tfo_sent = 1; /* connected: the rest by send(2) */
            snprintf(way, sizeof way, "%s", tfo_way[k]);
        } else if (a->type == SOCK_DGRAM) {
            if (!a->unconn) /* (asked again: the call that went before) */
                a->how = H_SENDTO, a->unconn = 1;
            setsockopt(a->fd, a->family == AF_INET6 ? IPPROTO_IPV6 : IPPROTO_IP,
                       a->family == AF_INET6 ? IPV6_RECVERR : IP_RECVERR, &one, sizeof one);
            snprintf(way, sizeof way, "%s", unconn_way[a->how - H_SENDTO]);
        } else {
            return errno = e, -1;
        }
    }
    size_t l = strlen(a->dsts);
    if (!strstr(a->dsts, way)) /* asked again (att_reask): named once */
        snprintf(a->dsts + l, sizeof a->dsts - l, "%s", way);
    return errno = EINPROGRESS, 0;
}

/* The way a held unconnected socket's datagram, or a unix one's, took where sendto(2)
 * was refused. */
static const char *const held_way[] = {
    "",
    " (sent by sendmsg(2) with its address: sendto(2) refused)",
    " (sent by sendmmsg(2) with its address: sendto(2) and sendmsg(2) refused)",
};

/* A datagram connect_other left unconnected, a held unconnected socket's or a unix
 * one's, whose sendto a filter refused: sendmsg, then sendmmsg, with its address; the call that
 * took it kept for the rest, and named (in place of sendto). */
static ssize_t unconn_send(struct att *a, const void *p, size_t n, int flags, const struct sockaddr *to,
                           socklen_t tolen)
{
    int e = errno;
    for (int how = H_SENDMSG; how <= H_SENDMMSG; how++) {
        a->how = how;
        ssize_t r = send_by(a, p, n, flags, to, tolen);
        if (r >= 0 || errno == EINPROGRESS || !refused(errno)) {
            char *at = strstr(a->dsts, unconn_way[0]);
            if (at)
                *at = '\0';
            const char *way = at ? unconn_way[how - H_SENDTO] : held_way[how - H_SENDTO];
            size_t l = strlen(a->dsts);
            if (!strstr(a->dsts, way))
                snprintf(a->dsts + l, sizeof a->dsts - l, "%s", way);
            return r;
        }
    }
    a->how = H_SENDTO;
    return errno = e, -1;
}

/* A datagram whose every x86_64 call that carries an address (sendto, sendmsg,
 * sendmmsg: unconn_send) a filter refused: the same datagram with its destination
 * through the i386 entry (sendto, sendmsg, sendmmsg, each by its own number and by
 * socketcall), then by io_uring's IORING_OP_SENDMSG, msg_name set (where a ring answers
 * without killing: uring_alive). A filter of x86_64's numbers alone, or one that forgets
 * the ring, leaves them: a held unconnected socket's datagram leaves by them. The way
 * named; the bytes sent, or -1 with sendto's errno. */
static ssize_t unconn_entries(struct att *a, const void *p, size_t n, const struct sockaddr *to,
                              socklen_t tolen)
{
    int e = errno;
    const char *step = "";
    char way[160] = "";
    ssize_t r = i386_send_to(a->fd, p, n, to, tolen, &step);
    if (r >= 0 || !refused(errno)) {
        snprintf(way, sizeof way, " (sent by %s with its address: every x86_64 call that carries one refused)",
                 step);
    } else if (a->held && uring_alive()) { /* (the sweep's own: a ring left open is the uring rows') */
        struct iovec iov = { .iov_base = (void *)p, .iov_len = n };
        struct msghdr m = { .msg_name = (void *)to, .msg_namelen = tolen, .msg_iov = &iov, .msg_iovlen = 1 };
        r = uring_sendmsg(a->fd, &m, &step);
        snprintf(way, sizeof way, " (sent by io_uring's IORING_OP_SENDMSG with its address: every call"
                 " that carries one refused, the i386 entry's too)");
    }
    if (r < 0 && (refused(errno) || !*way))
        return errno = e, -1;
    char *at = strstr(a->dsts, unconn_way[0]); /* (connect_other's sendto, named in its place) */
    if (at)
        *at = '\0';
    size_t l = strlen(a->dsts);
    if (!strstr(a->dsts, way))
        snprintf(a->dsts + l, sizeof a->dsts - l, "%s", way);
    return r;
}

/* Linux AIO's write (io_submit's IOCB_CMD_PWRITE, at offset 0, which a socket takes as
 * its stream): its descriptor is in the iocb, where no filter looks, and a socket's
 * write is done within io_submit. The bytes sent, or -1 with errno. */
static ssize_t aio_send(int fd, const void *p, size_t n)
{
    aio_context_t ctx = 0;
    if (syscall(SYS_io_setup, 1, &ctx) != 0)
        return -1;
    struct iocb cb, *list[1] = { &cb };
    memset(&cb, 0, sizeof cb);
    cb.aio_lio_opcode = IOCB_CMD_PWRITE;
    cb.aio_fildes = (uint32_t)fd;
    cb.aio_buf = (uint64_t)(uintptr_t)p;
    cb.aio_nbytes = n;
    struct io_event ev;
    struct timespec wait = { 1, 0 };
    ssize_t r = -1;
    if (syscall(SYS_io_submit, ctx, 1, list) == 1) {
        long got = syscall(SYS_io_getevents, ctx, 1, 1, &ev, &wait);
        r = got != 1 ? (got == 0 ? (errno = ETIMEDOUT, -1) : -1)
            : ev.res < 0 ? (errno = (int)-ev.res, -1) : (ssize_t)ev.res;
    }
    int e = errno;
    syscall(SYS_io_destroy, ctx);
    errno = e;
    return r;
}

/* The held socket at another number, where every way was refused at its own: a filter
 * keyed to that number sees none of a copy's calls. The copy made by fcntl's
 * F_DUPFD_CLOEXEC, F_DUPFD, dup, then dup3 (each where the one before was refused as a
 * filter refuses), written by send(2), then write(2), and closed; the way in `how`. The
 * bytes sent, or -1 with errno. */
static ssize_t renumbered(int fd, const void *p, size_t n, char *how, size_t cap)
{
    static const char *const names[] = { "fcntl's F_DUPFD_CLOEXEC", "fcntl's F_DUPFD", "dup", "dup3" };
    int free_at = 3;
    while (free_at == fd || fcntl(free_at, F_GETFD) != -1) /* dup3's target: a free number */
        free_at++;
    for (int k = 0; k < 4; k++) {
        int c = k == 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 3)
                : k == 1 ? fcntl(fd, F_DUPFD, 3)
                : k == 2 ? dup(fd)
                         : dup3(fd, free_at, O_CLOEXEC);
        if (c < 0 && refused(errno))
            continue;
        if (c < 0)
            return -1;
        const char *call = "send(2)";
        ssize_t r = send(c, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (r < 0 && refused(errno))
            call = "write(2)", r = write(c, p, n);
        int e = errno;
        close(c);
        snprintf(how, cap, " (by %s on a copy at descriptor %d, made by %s: every way refused at its own number)",
                 call, c, names[k]);
        return errno = e, r;
    }
    return -1;
}

/* The ways a held connected socket's bytes (or a held unconnected one's, once connected)
 * go where send(2) and every call send_by
 * tries after it (the write calls, sendmsg) were refused as a filter refuses: a filter
 * keyed to its descriptor's number (a launcher's, for a socket the workload may read
 * alone) sees only the calls that name that number, so each other way is tried in turn
 * while the last was refused that way: sendmmsg, sendfile from a memfd, splice from a
 * pipe, Linux AIO (aio_send), io_uring's IORING_OP_SENDMSG (where a ring answers
 * without killing: uring_alive), the i386 entry's calls (i386_send, each in a child),
 * then a copy at another number (renumbered). The way in by_write (att_way names it; the
 * i386 entry's call and the copy's in dsts); -1 with send(2)'s errno where each is
 * refused too, that said in dsts. */
static ssize_t held_ways(struct att *a, const void *p, size_t n)
{
    static const int hows[] = { H_SENDMMSG, H_SENDFILE, H_SPLICE };
    struct iovec iov = { .iov_base = (void *)p, .iov_len = n };
    struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
    int e = errno, how = a->how;
    const char *step = "";
    ssize_t r = -1;
    char copy[160] = "";
    for (int way = 5; way <= 11; way++) {
        a->how = way < 8 ? hows[way - 5] : how;
        r = way < 8     ? send_by(a, p, n, MSG_NOSIGNAL | MSG_DONTWAIT, NULL, 0)
            : way == 8  ? aio_send(a->fd, p, n)
            : way == 9  ? (uring_alive() ? uring_sendmsg(a->fd, &m, &step) : (errno = EPERM, -1))
            : way == 10 ? i386_send(a->fd, p, n, &step)
                        : renumbered(a->fd, p, n, copy, sizeof copy);
        a->how = how;
        if (r >= 0 || !refused(errno)) {
            a->by_write = r >= 0 && way < 10 ? way : 0;
            size_t l = strlen(a->dsts);
            if (r >= 0 && way == 10)
                snprintf(a->dsts + l, sizeof a->dsts - l, " (by %s: every x86_64 way refused)", step);
            else if (r >= 0 && way == 11)
                snprintf(a->dsts + l, sizeof a->dsts - l, "%s", copy);
            return r;
        }
    }
    size_t l = strlen(a->dsts);
    snprintf(a->dsts + l, sizeof a->dsts - l, " (each way refused: the send, write and copy calls,"
             " Linux AIO, io_uring, the i386 entry, a copy at another number)");
    return errno = e, -1;
}

/* The way named where the longest length went through. */
void long_addr_way(struct att *a, const char *what)
{
    char way[96];
    size_t l = strlen(a->dsts);
    snprintf(way, sizeof way, " (%s with a %zu-byte address: its own length refused)", what, sizeof(Addr));
    if (!strstr(a->dsts, way))
        snprintf(a->dsts + l, sizeof a->dsts - l, "%s", way);
}

/* The bytes, by the call this attempt is about; where a call that carries the address is
 * refused, again with the longest length (long_addr_retry). */
ssize_t att_send(struct att *a)
{
    const void *p = a->out + a->outoff;
    size_t n = a->outn - a->outoff;
    const struct sockaddr *to = a->family == AF_UNIX ? (const struct sockaddr *)&a->un
                                                     : (const struct sockaddr *)&a->dst;
    socklen_t tolen = a->family == AF_UNIX ? a->unlen : addr_len(&a->dst);
    /* TCP Fast Open: the first call connects; once connected, no destination. */
    int flags = MSG_NOSIGNAL | MSG_DONTWAIT | (a->tfo == T_SEND && !a->tfo_sent ? MSG_FASTOPEN : 0);
    if (a->tfo_sent)
        to = NULL;
    ssize_t r = send_by(a, p, n, flags, to, tolen);
    int named = a->how == H_SENDTO || a->how == H_SENDMSG || a->how == H_SENDMMSG;
    if (r < 0 && to && named && a->talk != X_FRAME && a->family != AF_UNIX && long_addr_retry(errno)) {
        int e = errno;
        if ((r = send_by(a, p, n, flags, to, (socklen_t)sizeof(Addr))) >= 0 || errno == EINPROGRESS)
            long_addr_way(a, "sent");
        else
            errno = e;
    }
    /* unconnected by connect_other, held unconnected, or a unix datagram's (each
     * addressed, none with a line of its own for each call): the other calls that
     * carry an address, where a filter refused sendto */
    if (r < 0 && (a->unconn || (a->held == 1 && a->talk != X_FRAME) || a->family == AF_UNIX) &&
        a->how == H_SENDTO && refused(errno))
        r = unconn_send(a, p, n, flags, to, tolen);
    if (r < 0 && (a->unconn || (a->held == 1 && a->talk != X_FRAME) || a->family == AF_UNIX) &&
        a->how == H_SENDTO && refused(errno))
        r = unconn_entries(a, p, n, to, tolen);
    return r;
}

static ssize_t send_by(struct att *a, const void *p, size_t n, int flags, const struct sockaddr *to,
                       socklen_t tolen)
{
    struct iovec iov = { .iov_base = (void *)p, .iov_len = n };
    struct mmsghdr mm;
    memset(&mm, 0, sizeof mm);
    mm.msg_hdr.msg_iov = &iov;
    mm.msg_hdr.msg_iovlen = 1;
    mm.msg_hdr.msg_name = (void *)to;
    mm.msg_hdr.msg_namelen = to ? tolen : 0;
    if (a->talk == X_FRAME) /* a packet socket's link, or a held TUN/TAP device's queue */
        return a->ll.sll_family == AF_PACKET ? att_frame_send(a, p, n) : write(a->fd, p, n);
    switch (a->how) {
    case H_SENDTO:
        return sendto(a->fd, p, n, flags, to, to ? tolen : 0);
    case H_SENDMSG:
        return sendmsg(a->fd, &mm.msg_hdr, flags);
    case H_SENDMMSG: { /* the syscall itself: musl's sendmmsg is a loop of sendmsg */
        int k = (int)syscall(SYS_sendmmsg, a->fd, &mm, 1, flags);
        return k == 1 ? (ssize_t)mm.msg_len : k < 0 ? -1 : 0;
    }
    case H_WRITE:
        return write(a->fd, p, n);
    case H_WRITEV:
        return writev(a->fd, &iov, 1);
    case H_PWRITEV2: /* offset -1: the current position, which a socket accepts */
        return syscall(SYS_pwritev2, a->fd, &iov, 1, -1L, 0L, 0);
    case H_SENDFILE:
    case H_SPLICE: {
        /* The bytes from a file (a memfd) or a pipe, into the socket by the kernel. */
        int src[2] = { -1, -1 }, e = 0;
        ssize_t r = -1;
        if (a->how == H_SENDFILE ? (src[0] = memfd_create("harness-send", MFD_CLOEXEC)) < 0
                                 : pipe2(src, O_CLOEXEC) != 0)
            return -1;
        if (write(a->how == H_SENDFILE ? src[0] : src[1], p, n) == (ssize_t)n) {
            off_t off = 0;
            r = a->how == H_SENDFILE ? sendfile(a->fd, src[0], &off, n)
                                     : splice(src[0], NULL, a->fd, NULL, n, SPLICE_F_NONBLOCK);
        }
        e = errno;
        close(src[0]);
        if (src[1] >= 0)
            close(src[1]);
        errno = e;
        return r;
    }
    default: {
        /* send(2), and where a filter refuses it (whatever errno it answers), the other
         * calls that send the same bytes on a connected socket, in turn. */
        ssize_t r = send(a->fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        for (int way = 1; r < 0 && errno != EAGAIN && errno != EINTR && way <= 4; way++) {
            mm.msg_hdr.msg_name = NULL;
            mm.msg_hdr.msg_namelen = 0;
            r = way == 1   ? write(a->fd, p, n)
                : way == 2 ? writev(a->fd, &iov, 1)
                : way == 3 ? syscall(SYS_pwritev2, a->fd, &iov, 1, -1L, 0L, 0)
                           : sendmsg(a->fd, &mm.msg_hdr, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (r >= 0)
                a->by_write = way;
        }
        /* a filter keyed to its number: a held connected socket's, or a held unconnected
         * one's once connected (by the i386 entry's or the ring's connect: connect_other) */
        if (r < 0 && a->held && refused(errno))
            r = held_ways(a, p, n);
        return r;
    }
    }
}

/* The way a TCP attempt took into its connection, where it is not connect(2)'s. */
const char *att_way(const struct att *a)
{
    if (a->tfo == T_CONNECT)
        return " (TCP_FASTOPEN_CONNECT, then connect)";
    if (a->tfo == T_SEND)
        return a->how == H_SENDTO    ? " (connected by sendto with MSG_FASTOPEN, no connect)"
               : a->how == H_SENDMSG ? " (connected by sendmsg with MSG_FASTOPEN, no connect)"
                                     : " (connected by sendmmsg with MSG_FASTOPEN, no connect)";
    static const char *const by[] = {
        "", " (by write(2): send(2) was refused)", " (by writev(2): send(2) and write(2) were refused)",
        " (by pwritev2(2): send(2), write(2), writev(2) were refused)",
        " (by sendmsg(2): send(2) and the write calls were refused)",
        " (by sendmmsg(2): send(2), the write calls and sendmsg(2) were refused)",
        " (by sendfile(2), from a memfd: the send and write calls were refused)",
        " (by splice(2), from a pipe: the send and write calls and sendfile(2) were refused)",
        " (by Linux AIO, io_submit's IOCB_CMD_PWRITE: the send, write and copy calls were refused)",
        " (by io_uring's IORING_OP_SENDMSG: the send, write and copy calls and Linux AIO were refused)",
        "" /* the i386 entry's call, named in dsts */
    };
    if (a->by_write > 0 && a->by_write < (int)(sizeof by / sizeof by[0]))
        return by[a->by_write];
    return a->proto == IPPROTO_MPTCP ? " (a Multipath TCP socket)" : "";
}

/* The io_uring (or i386) exchange, in a child the sweep can kill at the attempt's
 * end; it writes "OUTCOME ERRNO SRC_PORT DETAIL" to a pipe the sweep polls. */
void att_exchange_start(struct att *a)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0) {
        att_end(a, OC_ERROR, errno, "pipe");
        return;
    }
    if (a->talk == X_URING)
        uring_way(); /* asked once, here, not in each child */
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        att_end(a, OC_ERROR, errno, "fork");
        return;
    }
    if (pid == 0) {
        char reply[512], line[800], want[256];
        const char *step = "";
        int src = 0;
        close(p[0]);
        snprintf(want, sizeof want, "NONCE %s", o.nonce);
        enum outcome oc = OC_BLOCKED;
        int e = 0;
        int rc = a->talk == X_I386
                     ? i386_exchange(&a->dst, a->type, a->tfo == T_SEND, (const char *)a->out, reply,
                                     sizeof reply, &src, &step)
                     : uring_exchange(&a->dst, a->type, a->proto, (const char *)a->out, reply, sizeof reply,
                                      &src, &step);
        char ways[420];
        if (rc != 0 && (e = errno) == EAGAIN && *uring_way() && a->talk == X_URING)
            oc = OC_ERROR, step = "its SQPOLL thread slept before it took the request, and a"
                                  " ring attached to it did not wake it: no proof either way";
        else if (rc == 0) { /* the i386 exchange's step names the ways the bytes went */
            oc = strstr(reply, want) ? OC_ESCAPED : OC_SUCCEEDED;
            const char *way = a->talk == X_I386 ? step : uring_way();
            snprintf(ways, sizeof ways, "%s%s%s%s",
                     oc == OC_ESCAPED ? "the nonce came back" : "connected and sent, no nonce came back",
                     !*way ? "" : a->talk == X_I386 ? " by " : " ", way,
                     a->talk == X_URING ? uring_i386_way() : "");
            step = ways;
        }
        int n = snprintf(line, sizeof line, "%d %d %d %s\n", (int)oc, e, src, step);
        write_all(p[1], line, (size_t)n);
        _exit(0);
    }
    close(p[1]);
    a->kid = pid;
    a->fd = p[0];
    a->state = S_RECV;
}
