/* The sweep's exchanges through the i386 entry (int $0x80) alone: TCP, UDP and TCP
 * Fast Open, IPv4 and IPv6. Each socket call is tried by its own number and by the
 * socketcall multiplexer, each sending call by every call that sends, each way in a
 * child of its own, so that a filter which kills on one way (SECCOMP_RET_KILL, TRAP)
 * does not hide the next. A filter that checks x86_64's numbers and forgets the
 * entry, or closes one of its ways, one family or one kind and not the others,
 * leaves one of these open. */

#include "probe.h"

#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#if defined(__x86_64__)
/* The low page every pointer argument lives in (the entry takes 32-bit pointers). */
enum {
    LOW_ADDR = 0,        /* the destination */
    LOW_ARRAY = 128,     /* socketcall's argument array */
    LOW_MSG = 256,       /* the bytes sent */
    LOW_HDR = 4096,      /* a 32-bit struct msghdr, then its one iovec */
    LOW_REPLY = 8192,    /* what came back */
    LOW_SIZE = 1 << 16,
};
enum { KILLED = 4096 }; /* -(KILLED + signal): a way whose call killed its child */

static char trail[400]; /* the ways that answered, in order */

static void trail_add(const char *way)
{
    size_t n = strlen(trail);
    snprintf(trail + n, sizeof trail - n, "%s%s", n ? ", " : "", way);
}

/* nr with v in a child: 0 if it answered (a descriptor, a count), -errno if
 * refused, -(KILLED + signal) if the call killed the child. The call's effect on a
 * shared socket (connected, bytes sent) stays; a descriptor it made does not. */
static long in_child(long nr, const long v[6])
{
    pid_t pid = fork();
    if (pid < 0)
        return -errno;
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        long r = int80(nr, v);
        _exit(r >= 0 ? 0 : r > -255 ? (int)-r : 255);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -errno;
    if (WIFSIGNALED(st))
        return -(KILLED + WTERMSIG(st));
    return WEXITSTATUS(st) ? -WEXITSTATUS(st) : 0;
}

/* One socket call: by its own number, then (where that did not answer) socketcall
 * with the same arguments as a 32-bit array, each in a child; `keep` (socket)
 * makes the call that answered once more here, for the descriptor. Its answer, or
 * the last way's refusal, with `*step` naming that way. */
static long socket_call(long nr, long mux, const char *name, const long v[6], int nargs, int keep,
                        char *low, const char **step)
{
    static char way[96];
    uint32_t *array = (uint32_t *)(low + LOW_ARRAY);
    for (int i = 0; i < nargs; i++)
        array[i] = (uint32_t)v[i];
    const long m[6] = { mux, (long)(uintptr_t)array };
    long r = 0;
    for (int by = 0; by < 2; by++) {
        snprintf(way, sizeof way, by ? "socketcall %s (i386)" : "%s (i386)", name);
        *step = way;
        r = in_child(by ? I386_NR_socketcall : nr, by ? m : v);
        if (r == 0 || r == -EINPROGRESS) { /* EINPROGRESS: a nonblocking connect under way */
            trail_add(way);
            return keep && !r ? int80(by ? I386_NR_socketcall : nr, by ? m : v) : r;
        }
        if (r <= -KILLED) {
            snprintf(way + strlen(way), sizeof way - strlen(way), ": killed by signal %ld", -r - KILLED);
            r = -EPERM;
        }
    }
    return r;
}

/* A 32-bit struct msghdr (name, namelen, iov, iovlen, control, controllen, flags)
 * and its one iovec (base, len) at LOW_HDR: the message, to `alen` bytes of
 * destination (0: none). */
static uint32_t msghdr32(char *low, size_t n, socklen_t alen)
{
    uint32_t *h = (uint32_t *)(low + LOW_HDR);
    memset(h, 0, 9 * sizeof *h);
    if (alen)
        h[0] = (uint32_t)(uintptr_t)(low + LOW_ADDR), h[1] = alen;
    h[2] = (uint32_t)(uintptr_t)(h + 7), h[3] = 1;
    h[7] = (uint32_t)(uintptr_t)(low + LOW_MSG), h[8] = (uint32_t)n;
    return (uint32_t)(uintptr_t)h;
}

/* A 32-bit struct mmsghdr (a msghdr, then msg_len) and its one iovec, past msghdr32's:
 * the one message of a sendmmsg. */
static uint32_t mmsghdr32(char *low, size_t n, socklen_t alen)
{
    uint32_t *h = (uint32_t *)(low + LOW_HDR + 64);
    memset(h, 0, 10 * sizeof *h);
    if (alen)
        h[0] = (uint32_t)(uintptr_t)(low + LOW_ADDR), h[1] = alen;
    h[2] = (uint32_t)(uintptr_t)(h + 8), h[3] = 1;
    h[8] = (uint32_t)(uintptr_t)(low + LOW_MSG), h[9] = (uint32_t)n;
    return (uint32_t)(uintptr_t)h;
}

/* Refused as a filter refuses (a kill, which socket_call and one_call count as EPERM,
 * too): the next way is tried. */
static int refusal(long r)
{
    return r == -EPERM || r == -EACCES || r == -ENOSYS;
}

/* One call with no other number, in a child, named: 0 if it answered, else its
 * refusal (a kill counted as EPERM). */
static long one_call(long nr, const long v[6], const char *name, const char **step)
{
    *step = name;
    long r = in_child(nr, v);
    if (r == 0)
        trail_add(name);
    return r <= -KILLED ? -EPERM : r;
}

/* The kernel's copies into a connected socket: sendfile64, then sendfile, from a memfd,
 * and splice from a pipe (each filled by x86_64's write, which a filter keyed to the
 * socket's number lets through). 0, or the last refusal. */
static long send_copied(long fd, size_t n, char *low, const char **step)
{
    long r = -EPERM;
    int m = memfd_create("harness-send", MFD_CLOEXEC), pp[2];
    if (m >= 0 && write(m, low + LOW_MSG, n) == (ssize_t)n) {
        uint64_t *off = (uint64_t *)(void *)(low + LOW_HDR + 160); /* from the memfd's start */
        *off = 0;
        const long sf[6] = { fd, m, (long)(uintptr_t)off, (long)n };
        if (refusal(r = one_call(I386_NR_sendfile64, sf, "sendfile64 (i386)", step)))
            r = one_call(I386_NR_sendfile, sf, "sendfile (i386)", step);
    }
    if (m >= 0)
        close(m);
    if (refusal(r) && pipe2(pp, O_CLOEXEC) == 0) {
        const long sp[6] = { pp[0], 0, fd, 0, (long)n, SPLICE_F_NONBLOCK };
        if (write(pp[1], low + LOW_MSG, n) == (ssize_t)n)
            r = one_call(I386_NR_splice, sp, "splice (i386)", step);
        close(pp[0]);
        close(pp[1]);
    }
    return r;
}

/* The bytes on a connected socket by each call of the entry's that sends them, in turn
 * while each is refused as a filter refuses: write, writev, socketcall's send (which
 * has no number of its own), sendto, sendmsg and sendmmsg (each by its own number,
 * then socketcall), pwritev2 at the current position, then the kernel's copies
 * (send_copied). A filter of the entry's socket calls alone, or of write and the send
 * calls alone, leaves the rest. 0, or the last refusal; *step the way. */
static long send_connected(long fd, size_t n, char *low, const char **step)
{
    long msg = (long)(uintptr_t)(low + LOW_MSG), r;
    uint32_t *iov = (uint32_t *)(low + LOW_HDR + 128), *array = (uint32_t *)(low + LOW_ARRAY);
    iov[0] = (uint32_t)msg, iov[1] = (uint32_t)n;
    const long w[6] = { fd, msg, (long)n }, wv[6] = { fd, (long)(uintptr_t)iov, 1 };
    if (!refusal(r = one_call(I386_NR_write, w, "write (i386)", step)) ||
        !refusal(r = one_call(I386_NR_writev, wv, "writev (i386)", step)))
        return r;
    array[0] = (uint32_t)fd, array[1] = (uint32_t)msg, array[2] = (uint32_t)n, array[3] = 0;
    const long sc[6] = { I386_SYS_SEND, (long)(uintptr_t)array };
    if (!refusal(r = one_call(I386_NR_socketcall, sc, "socketcall send (i386)", step)))
        return r;
    const long st[6] = { fd, msg, (long)n }, sm[6] = { fd, msghdr32(low, n, 0) };
    const long smm[6] = { fd, mmsghdr32(low, n, 0), 1 };
    if (!refusal(r = socket_call(I386_NR_sendto, I386_SYS_SENDTO, "sendto", st, 6, 0, low, step)) ||
        !refusal(r = socket_call(I386_NR_sendmsg, I386_SYS_SENDMSG, "sendmsg", sm, 3, 0, low, step)) ||
        !refusal(r = socket_call(I386_NR_sendmmsg, I386_SYS_SENDMMSG, "sendmmsg", smm, 4, 0, low, step)))
        return r;
    const long pw[6] = { fd, (long)(uintptr_t)iov, 1, -1L, -1L, 0 }; /* position -1: the current one */
    if (!refusal(r = one_call(I386_NR_pwritev2, pw, "pwritev2 (i386)", step)))
        return r;
    return send_copied(fd, n, low, step);
}

/* The bytes: on a connected socket (alen 0) by send_connected; with the destination on
 * the call (UDP, or Fast Open's first send, whose MSG_FASTOPEN makes the connection)
 * sendto, then sendmsg, then, where sendmsg was refused as a filter refuses, sendmmsg
 * (345: a list of the socket calls' own block, 359 to 373, and socketcall leaves it
 * out). */
static long send_bytes(long fd, size_t n, socklen_t alen, int flags, char *low, const char **step)
{
    static char way[48];
    long r = -ENOTCONN;
    if (!alen)
        return send_connected(fd, n, low, step);
    const char *fo = flags ? " with MSG_FASTOPEN" : "";
    const long st[6] = { fd, (long)(uintptr_t)(low + LOW_MSG), (long)n, flags,
                         alen ? (long)(uintptr_t)(low + LOW_ADDR) : 0, alen };
    snprintf(way, sizeof way, "sendto%s", fo);
    if ((r = socket_call(I386_NR_sendto, I386_SYS_SENDTO, way, st, 6, 0, low, step)) == 0)
        return 0;
    const long sm[6] = { fd, msghdr32(low, n, alen), flags };
    snprintf(way, sizeof way, "sendmsg%s", fo);
    if ((r = socket_call(I386_NR_sendmsg, I386_SYS_SENDMSG, way, sm, 3, 0, low, step)) == 0 ||
        (r != -EPERM && r != -EACCES && r != -ENOSYS)) /* sendmmsg only where refused as a filter refuses */
        return r;
    const long smm[6] = { fd, mmsghdr32(low, n, alen), 1, flags };
    snprintf(way, sizeof way, "sendmmsg%s", fo);
    return socket_call(I386_NR_sendmmsg, I386_SYS_SENDMMSG, way, smm, 4, 0, low, step);
}

int i386_socket(int family, int type, int proto, const char **step)
{
    *step = "the i386 entry";
    trail[0] = '\0';
    if (!i386_here())
        return errno = ENOSYS, -1;
    char *low = mmap(NULL, LOW_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT,
                     -1, 0);
    if (low == MAP_FAILED)
        return -1;
    const long v[6] = { family, type, proto };
    long fd = socket_call(I386_NR_socket, I386_SYS_SOCKET, "socket", v, 3, 1, low, step);
    munmap(low, LOW_SIZE);
    if (fd < 0)
        return errno = (int)-fd, -1;
    fcntl((int)fd, F_SETFD, FD_CLOEXEC);
    return (int)fd;
}

/* A call of an address (connect, bind) through the entry on a socket made anyhow: by
 * its own number, then by socketcall, each in a child (the socket, shared, keeps what
 * it did). 0, or -1 with errno (ENOSYS where there is no entry); *step the way. */
static int address_call(long nr, int sys, const char *name, int fd, const struct sockaddr *sa, socklen_t len,
                        const char **step)
{
    *step = "the i386 entry";
    if (!i386_here())
        return errno = ENOSYS, -1;
    char *low = mmap(NULL, LOW_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT,
                     -1, 0);
    if (low == MAP_FAILED)
        return -1;
    long r = -EINVAL;
    if (len <= LOW_ARRAY) {
        memcpy(low + LOW_ADDR, sa, len);
        const long v[6] = { fd, (long)(uintptr_t)(low + LOW_ADDR), (long)len };
        r = socket_call(nr, sys, name, v, 3, 0, low, step);
    }
    munmap(low, LOW_SIZE);
    return r < 0 ? (errno = (int)-r, -1) : 0;
}

int i386_connect(int fd, const struct sockaddr *sa, socklen_t len, const char **step)
{
    return address_call(I386_NR_connect, I386_SYS_CONNECT, "connect", fd, sa, len, step);
}

/* makeways.c: a unix socket's name made there, where x86_64's bind is refused */
int i386_bind(int fd, const struct sockaddr *sa, socklen_t len, const char **step)
{
    return address_call(I386_NR_bind, I386_SYS_BIND, "bind", fd, sa, len, step);
}

ssize_t i386_send_to(int fd, const void *p, size_t n, const struct sockaddr *to, socklen_t tolen,
                     const char **step)
{
    *step = "the i386 entry";
    trail[0] = '\0';
    if (!i386_here())
        return errno = ENOSYS, -1;
    if (n > LOW_HDR - LOW_MSG || (to && tolen > LOW_ARRAY))
        return errno = EMSGSIZE, -1;
    char *low = mmap(NULL, LOW_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT,
                     -1, 0);
    if (low == MAP_FAILED)
        return -1;
    memcpy(low + LOW_MSG, p, n);
    if (to)
        memcpy(low + LOW_ADDR, to, tolen);
    /* with an address: sendto, sendmsg, sendmmsg (send_bytes); without: send_connected */
    long r = send_bytes(fd, n, to ? tolen : 0, 0, low, step);
    munmap(low, LOW_SIZE);
    return r < 0 ? (errno = (int)-r, -1) : (ssize_t)n; /* (a short line: sent whole) */
}

ssize_t i386_send(int fd, const void *p, size_t n, const char **step)
{
    return i386_send_to(fd, p, n, NULL, 0, step);
}

/* x86_64's calls on the socket the entry made, where the entry's own connect or send
 * calls were each refused as a filter refuses: a filter that keeps x86_64's socket(2)
 * from making one, and the entry's calls from using one, leaves x86_64's connect and
 * send calls to whichever socket the entry makes (none can refuse write(2) and let a
 * program write its output). `how`: NC_CONNECT (connect to dst, then send), NC_SEND (on
 * the entry's connection), NC_TO (dst on each call: a datagram, or Fast Open's first
 * send with `flags`). Each call named in the trail. 0, or -errno. */
enum { NC_CONNECT, NC_SEND, NC_TO };
static long native_calls(long fd, const char *msg, size_t n, const Addr *dst, int how, int flags,
                         const char **step)
{
    int s = (int)fd;
    const struct sockaddr *sa = how == NC_TO ? (const struct sockaddr *)dst : NULL;
    socklen_t alen = sa ? addr_len(dst) : 0;
    if (how == NC_CONNECT) {
        *step = "connect (x86_64)";
        if (connect(s, (const struct sockaddr *)dst, addr_len(dst)) != 0)
            return -errno;
        trail_add(*step);
    }
    struct iovec iov = { .iov_base = (void *)msg, .iov_len = n };
    struct mmsghdr mm = { .msg_hdr = { .msg_name = (void *)sa, .msg_namelen = alen, .msg_iov = &iov,
                                       .msg_iovlen = 1 } };
    static const char *const names[2][4] = {
        { "write (x86_64)", "sendto (x86_64)", "sendmsg (x86_64)", "sendmmsg (x86_64)" },
        { "", "sendto with MSG_FASTOPEN (x86_64)", "sendmsg with MSG_FASTOPEN (x86_64)",
          "sendmmsg with MSG_FASTOPEN (x86_64)" },
    };
    long r = -EPERM;
    for (int k = sa ? 1 : 0; k < 4 && refusal(r); k++) {
        *step = names[flags != 0][k];
        r = k == 0   ? write(s, msg, n)
            : k == 1 ? sendto(s, msg, n, flags | MSG_NOSIGNAL, sa, alen)
            : k == 2 ? sendmsg(s, &mm.msg_hdr, flags | MSG_NOSIGNAL)
                     : syscall(SYS_sendmmsg, s, &mm, 1, flags | MSG_NOSIGNAL);
        r = r < 0 ? -errno : 0;
    }
    if (r == 0)
        trail_add(*step);
    return r;
}

/* native_calls after the entry's own were refused: where x86_64's are refused too, *step
 * names the entry's last refusal and then x86_64's. */
static long native_after(long fd, const char *msg, size_t n, const Addr *dst, int how, int flags,
                         const char **step)
{
    static char both[200];
    const char *entry = *step;
    long r = native_calls(fd, msg, n, dst, how, flags, step);
    if (refusal(r)) {
        snprintf(both, sizeof both, "%s, then %s on its socket", entry, *step);
        *step = both;
    }
    return r;
}

int i386_exchange(const Addr *dst, int type, int fastopen, const char *msg, char *reply, size_t cap,
                  int *src_port, const char **step)
{
    *step = "the i386 entry";
    trail[0] = '\0';
    if (!i386_here())
        return -1;
    char *low = mmap(NULL, LOW_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT,
                     -1, 0);
    if (low == MAP_FAILED)
        return -1;
    size_t n = strlen(msg);
    socklen_t alen = addr_len(dst);
    if (n > LOW_HDR - LOW_MSG || cap > LOW_SIZE - LOW_REPLY || alen > LOW_ARRAY)
        return errno = EMSGSIZE, -1;
    memcpy(low + LOW_ADDR, dst, alen);
    memcpy(low + LOW_MSG, msg, n);
    const long sock[6] = { dst->ss_family, type, 0 };
    long fd = socket_call(I386_NR_socket, I386_SYS_SOCKET, "socket", sock, 3, 1, low, step);
    if (fd < 0)
        return errno = (int)-fd, -1;
    long r;
    if (fastopen || type == SOCK_DGRAM) {
        int flags = fastopen ? MSG_FASTOPEN : 0;
        if (refusal(r = send_bytes(fd, n, alen, flags, low, step)))
            r = native_after(fd, msg, n, dst, NC_TO, flags, step); /* x86_64's, on the entry's socket */
    } else {
        const long conn[6] = { fd, (long)(uintptr_t)(low + LOW_ADDR), alen };
        if (refusal(r = socket_call(I386_NR_connect, I386_SYS_CONNECT, "connect", conn, 3, 0, low, step)))
            r = native_after(fd, msg, n, dst, NC_CONNECT, 0, step);
        else if (r == 0 && refusal(r = send_bytes(fd, n, 0, 0, low, step)))
            r = native_after(fd, msg, n, dst, NC_SEND, 0, step);
    }
    if (r < 0)
        return errno = (int)-r, -1;
    Addr me;
    socklen_t ml = sizeof me;
    if (getsockname((int)fd, (struct sockaddr *)&me, &ml) == 0)
        *src_port = (int)addr_port(&me);
    const long rd[6] = { fd, (long)(uintptr_t)(low + LOW_REPLY), (long)cap - 1 };
    *step = "read (i386)";
    r = int80(I386_NR_read, rd);
    size_t got = r > 0 ? (size_t)r : 0;
    memcpy(reply, low + LOW_REPLY, got);
    reply[got] = '\0';
    *step = trail; /* the ways the bytes went */
    return 0;
}
#else
int i386_connect(int fd, const struct sockaddr *sa, socklen_t len, const char **step)
{
    (void)fd, (void)sa, (void)len;
    *step = "the i386 entry (none on this architecture)";
    return errno = ENOSYS, -1;
}

int i386_bind(int fd, const struct sockaddr *sa, socklen_t len, const char **step)
{
    return i386_connect(fd, sa, len, step);
}

int i386_socket(int family, int type, int proto, const char **step)
{
    (void)family, (void)type, (void)proto;
    *step = "the i386 entry (none on this architecture)";
    return errno = ENOSYS, -1;
}

ssize_t i386_send_to(int fd, const void *p, size_t n, const struct sockaddr *to, socklen_t tolen,
                     const char **step)
{
    (void)fd, (void)p, (void)n, (void)to, (void)tolen;
    *step = "the i386 entry (none on this architecture)";
    return errno = ENOSYS, -1;
}

ssize_t i386_send(int fd, const void *p, size_t n, const char **step)
{
    (void)fd, (void)p, (void)n;
    *step = "the i386 entry (none on this architecture)";
    return errno = ENOSYS, -1;
}

int i386_exchange(const Addr *dst, int type, int fastopen, const char *msg, char *reply, size_t cap,
                  int *src_port, const char **step)
{
    (void)dst, (void)type, (void)fastopen, (void)msg, (void)cap, (void)src_port;
    reply[0] = '\0';
    *step = "the i386 entry (none on this architecture)";
    return errno = ENOSYS, -1;
}
#endif
