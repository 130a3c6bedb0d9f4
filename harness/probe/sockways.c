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
