/* Every way a socket of one kind is asked for (issue 38). A seccomp filter on socket(2)
 * judges its three arguments as numbers, not as the kernel reads them, so a socket it
 * refuses may be made all the same by a call that asks for the very same kind:
 *  - each argument with its upper 32 bits set: the kernel reads the low 32, a filter
 *    that compares all 64 (libseccomp's SCMP_CMP_EQ) matches no rule of its;
 *  - the type with another set of SOCK_NONBLOCK and SOCK_CLOEXEC (none, either, both),
 *    the rest then set by fcntl: a filter that compares the type whole (SOCK_DGRAM, or
 *    the SOCK_DGRAM|SOCK_CLOEXEC strace showed) lets only its own through;
 *  - the protocol named (IPPROTO_TCP for an IP stream, IPPROTO_UDP for an IP datagram)
 *    where 0 was asked for, with each set of flags: an allow-list written from strace
 *    of curl (socket(AF_INET, SOCK_STREAM, IPPROTO_TCP)) refuses protocol 0.
 * Each socket the egress checks make goes through here, so that no site is left with
 * one kind of call alone: the way taken, where not the call as given, is named in
 * sock_way() until the next socket is made, and each site puts it in its line. */

#include "probe.h"

static char g_way[200];

/* The way the last socket made here took, as words for a line (empty: as given). */
const char *sock_way(void)
{
    return g_way;
}

static const char *flags_name(int f)
{
    return f == 0                ? "no flag"
           : f == SOCK_CLOEXEC   ? "SOCK_CLOEXEC alone"
           : f == SOCK_NONBLOCK  ? "SOCK_NONBLOCK alone"
                                 : "SOCK_NONBLOCK and SOCK_CLOEXEC";
}

/* The protocol a family and plain type's 0 stands for, and its name; 0 where none. */
static int named_proto(int family, int plain, const char **name)
{
    if (family != AF_INET && family != AF_INET6)
        return 0;
    if (plain == SOCK_STREAM)
        return *name = "IPPROTO_TCP", IPPROTO_TCP;
    if (plain == SOCK_DGRAM)
        return *name = "IPPROTO_UDP", IPPROTO_UDP;
    return 0;
}

/* The descriptor's flags made those `type` asked for. */
static int settle(int fd, int type)
{
    fcntl(fd, F_SETFD, type & SOCK_CLOEXEC ? FD_CLOEXEC : 0);
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, type & SOCK_NONBLOCK ? fl | O_NONBLOCK : fl & ~O_NONBLOCK);
    return fd;
}

/* The socket made again by `ways` (SW_WIDE, SW_FLAGS, SW_PROTO), once socket(2) as
 * given has been refused (errno its answer): the descriptor, its way in sock_way();
 * -1 with errno kept where each is refused too (and at once where out of descriptors,
 * which proves nothing). */
int sock_retry(int family, int type, int proto, int ways)
{
    int e = errno, fd;
    g_way[0] = 0;
    if (e == EMFILE || e == ENFILE)
        return -1;
    int flags = type & (SOCK_NONBLOCK | SOCK_CLOEXEC), plain = type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC);
#if __SIZEOF_LONG__ == 8
    const unsigned long hi = 1UL << 32;
    if ((ways & SW_WIDE) &&
        (fd = (int)syscall(SYS_socket, (unsigned long)(unsigned)family | hi, (unsigned long)(unsigned)type | hi,
                           (unsigned long)(unsigned)proto | hi)) >= 0) {
        snprintf(g_way, sizeof g_way, " (its socket made with each argument's upper 32 bits set: socket(2)"
                 " refused it as given)");
        return fd;
    }
#endif
    static const int sets[] = { 0, SOCK_CLOEXEC, SOCK_NONBLOCK, SOCK_NONBLOCK | SOCK_CLOEXEC };
    const char *pname = "";
    int named = proto || !(ways & SW_PROTO) ? 0 : named_proto(family, plain, &pname);
    for (int with = 0; with <= (named != 0); with++) {
        for (size_t k = 0; k < sizeof sets / sizeof sets[0]; k++) {
            if (sets[k] != flags && !(ways & SW_FLAGS))
                continue;
            if (!with && sets[k] == flags) /* the call as given */
                continue;
            if ((fd = socket(family, plain | sets[k], with ? named : proto)) < 0)
                continue;
            if (!with)
                snprintf(g_way, sizeof g_way, " (its socket made with %s in its type: refused with %s)",
                         flags_name(sets[k]), flags_name(flags));
            else if (sets[k] == flags)
                snprintf(g_way, sizeof g_way, " (its socket made with protocol %s, not 0: refused as given)",
                         pname);
            else
                snprintf(g_way, sizeof g_way, " (its socket made with protocol %s, not 0, and %s in its type:"
                         " refused as given)", pname, flags_name(sets[k]));
            return settle(fd, type);
        }
    }
    errno = e;
    return -1;
}

/* socket(2) as given, and where it is refused, every other way (sock_retry). */
int sock_make(int family, int type, int proto)
{
    int fd = socket(family, type, proto);
    if (fd >= 0) {
        g_way[0] = 0;
        return fd;
    }
    return sock_retry(family, type, proto, SW_WIDE | SW_FLAGS | SW_PROTO);
}

/* Whether io_uring may be used here without being killed for it (a filter that kills
 * on io_uring_setup or io_uring_enter: SECCOMP_RET_KILL): a ring's NOP, once, in a child. */
int uring_alive(void)
{
    static int alive = -1;
    if (alive >= 0)
        return alive;
    pid_t pid = fork();
    if (pid == 0) {
        const char *step;
        _exit(uring_nop(&step) >= 0 ? 0 : 1);
    }
    int st = 0, got = -1;
    while (pid > 0 && (got = (int)waitpid(pid, &st, 0)) < 0 && errno == EINTR)
        ;
    return alive = got == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* The socket made by another entry, once socket(2) refused it every way of sock_make's
 * (errno its answer): the i386 entry's socket or socketcall (each tried in a child
 * first: a filter may kill there), then io_uring's IORING_OP_SOCKET (where a ring
 * answers without killing). A filter keyed to x86_64's socket(2) alone sees neither.
 * The descriptor, its way in sock_way(); -1 with errno kept where each is refused too.
 * A kind every entry refused is not asked again: a correct sandbox pays once a kind. */
int sock_entries(int family, int type, int proto)
{
    static struct { int family, type, proto; } shut[16];
    static size_t nshut;
    int e = errno, fd = -1;
    if (e == EMFILE || e == ENFILE)
        return -1;
    for (size_t i = 0; i < nshut; i++)
        if (shut[i].family == family && shut[i].type == type && shut[i].proto == proto)
            return errno = e, -1;
    const char *step = "";
    if ((fd = i386_socket(family, type, proto, &step)) >= 0)
        snprintf(g_way, sizeof g_way, " (its socket made by %s, the i386 entry: socket(2) refused it every way)",
                 step);
    else if (uring_alive() && (fd = uring_socket(family, type, proto, &step)) >= 0)
        snprintf(g_way, sizeof g_way, " (its socket made by io_uring's IORING_OP_SOCKET: socket(2) refused it"
                 " every way)");
    if (fd >= 0)
        return settle(fd, type);
    if (nshut < sizeof shut / sizeof shut[0])
        shut[nshut].family = family, shut[nshut].type = type, shut[nshut++].proto = proto;
    return errno = e, -1;
}

/* The address lengths a way's connect was refused at, as a filter refuses: a filter on
 * connect sees no address, but it sees its length (an IPv4 address's 16 bytes, an IPv6
 * one's 28, a unix name's own), so a refusal stands for every address of that length and
 * for no other (a filter that keeps the i386 entry's connect from IP addresses alone
 * leaves it to a unix listener). A length of 0 stands for all: the way itself refused (no
 * i386 entry, no ring). SHUT_MAX is more than a unix name has (2 to 110 bytes). */
#define SHUT_MAX 128
struct shut {
    socklen_t len[SHUT_MAX];
    size_t n;
};

static int is_shut(const struct shut *s, socklen_t len)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->len[i] == 0 || s->len[i] == len)
            return 1;
    return 0;
}

static void shut_at(struct shut *s, socklen_t len)
{
    if (!is_shut(s, len) && s->n < SHUT_MAX)
        s->len[s->n++] = len;
}

/* connect(2) refused as a filter refuses (errno EPERM, EACCES, ENOSYS): the same connect
 * through the i386 entry (its own number, then socketcall's), then by the ring
 * (IORING_OP_CONNECT), each given up for this address length once refused there as a
 * filter refuses (EPERM, a kill, no such call or operation: struct shut), and for every
 * length where the way itself is refused (no i386 entry, a ring refused at its setup);
 * EACCES may be a file's own mode or an LSM's word on this address, and is asked again.
 * 0 with its way in `way`; -1 with errno: EINPROGRESS where a nonblocking socket's
 * connect is under way by one of them (its way in `way`), EAGAIN where a unix listener's
 * backlog is full (reached), else connect(2)'s own. */
int connect_entries(int fd, const struct sockaddr *sa, socklen_t len, char *way, size_t cap)
{
    static struct shut i386_shut, ring_shut;
    int e = errno;
    const char *step = "";
    if (!is_shut(&i386_shut, len)) {
        int r = i386_connect(fd, sa, len, &step);
        if (r == 0 || errno == EAGAIN || errno == EINPROGRESS) {
            snprintf(way, cap, " (its connect through the i386 entry, by %s: connect(2) refused)", step);
            return r;
        }
        if (errno == EPERM || errno == ENOSYS) /* the entry itself, or its connect at this length */
            shut_at(&i386_shut, strcmp(step, "the i386 entry") == 0 ? 0 : len);
    }
    if (!is_shut(&ring_shut, len) && uring_alive()) {
        int r = uring_connect(fd, sa, len, &step);
        if (r == 0 || errno == EAGAIN || errno == EINPROGRESS) {
            snprintf(way, cap, " (its connect by io_uring's IORING_OP_CONNECT: connect(2) refused)");
            return r;
        }
        if (strcmp(step, "IORING_OP_CONNECT") != 0) /* the ring itself refused */
            shut_at(&ring_shut, 0);
        else if (errno == EPERM || errno == ENOSYS || errno == EINVAL)
            shut_at(&ring_shut, len);
    }
    return errno = e, -1;
}
