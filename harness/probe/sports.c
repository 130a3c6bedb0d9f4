/* TCP to the canary's high port from the source ports servers listen at (sweep lines
 * tcp4-sport and tcp6-sport): a stateless rule written for a server's replies ("sport
 * 8080 accept", a policy route keyed on the source port) lets out any connection
 * made from that port. Each port its own connection, one line for the family; a
 * privileged port binds only with CAP_NET_BIND_SERVICE, a taken one not at all
 * (each such attempt blocked with its errno). */

#include "probe.h"
#include <linux/io_uring.h>

static const int g_sports[] = { 22, 53, 80, 443, 8080, 8443 };
static int g_sport_asked[2]; /* the families whose canary answers: their lines are owed */

#ifndef IORING_OP_BIND
#define IORING_OP_BIND 56 /* 6.11 */
#endif

/* bind(2) refused as a filter refuses (EPERM, EACCES, ENOSYS: a "no servers" filter
 * keeps every source port ephemeral): the same bind through the i386 entry (its own
 * number, then socketcall's, each in a child), then by the ring (IORING_OP_BIND, 6.11+),
 * each given up for the run once it refuses too, so that a correct sandbox pays once
 * (EACCES, the kernel's own answer for a port below 1024 without CAP_NET_BIND_SERVICE,
 * gives a way up as well: every way would answer alike). 0 with the way named after the
 * attempt's destination; -1 with errno EADDRINUSE where a way found the port taken, else
 * bind(2)'s own. */
int bind_other(struct att *a, const Addr *me)
{
    static int i386_shut, ring_shut;
    int e = errno;
    const char *step = "";
    socklen_t len = addr_len(me);
    char way[120] = "";
    if (!i386_shut) {
        if (i386_bind(a->fd, (const struct sockaddr *)me, len, &step) == 0)
            snprintf(way, sizeof way, " (its source port bound by %s, the i386 entry: bind(2) refused)", step);
        else if (errno == EADDRINUSE)
            return -1;
        else
            i386_shut = 1;
    }
    if (!way[0] && !ring_shut && uring_alive()) {
        struct io_uring_sqe b = { .opcode = IORING_OP_BIND, .fd = a->fd };
        b.addr = (unsigned long long)(uintptr_t)me;
        b.addr2 = len;
        if (uring_one(&b, "IORING_OP_BIND", &step) == 0)
            snprintf(way, sizeof way, " (its source port bound by io_uring's IORING_OP_BIND: bind(2) refused)");
        else if (errno == EADDRINUSE)
            return -1;
        else
            ring_shut = 1;
    }
    if (!way[0])
        return errno = e, -1;
    size_t l = strlen(a->dsts);
    snprintf(a->dsts + l, sizeof a->dsts - l, "%s", way);
    return 0;
}

/* Bind the source port a stateless rule may let through: `bind_port` itself, or for 1
 * the first privileged port of UDP's (udp4-privport: "sport 53") that binds, with the
 * workload's own credentials. 0 when bound; else the attempt is blocked. */
int bind_source(struct att *a)
{
    static const int ports[] = { 53, 123, 67, 88, 500 };
    int one = 1, e = 0, given = a->bind_port > 1;
    setsockopt(a->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    for (size_t i = 0; i < (given ? 1 : sizeof ports / sizeof ports[0]); i++) {
        int port = given ? a->bind_port : ports[i];
        Addr me;
        memset(&me, 0, sizeof me);
        me.ss_family = (sa_family_t)a->family;
        if (a->family == AF_INET6)
            ((struct sockaddr_in6 *)(void *)&me)->sin6_port = htons((uint16_t)port);
        else
            ((struct sockaddr_in *)(void *)&me)->sin_port = htons((uint16_t)port);
        int r = bind(a->fd, (struct sockaddr *)&me, addr_len(&me));
        if (r != 0 && (errno == EPERM || errno == EACCES || errno == ENOSYS))
            r = bind_other(a, &me); /* a filter of x86_64's bind alone leaves these */
        if (r == 0) {
            a->bind_port = port;
            return 0;
        }
        e = errno;
        if (e != EADDRINUSE)
            break;
    }
    if (given)
        att_end(a, OC_BLOCKED, e, "bind the source port for %s", a->dsts);
    else
        att_end(a, OC_BLOCKED, e, "bind a privileged source port (53, 123, 67, 88, 500) for %s", a->dsts);
    return -1;
}

void sweep_sports(int f, const char *ip, int high)
{
    g_sport_asked[f] = 1;
    for (size_t i = 0; i < sizeof g_sports / sizeof g_sports[0]; i++) {
        char spec[96];
        struct att *a = att_new(sweep_id[f ? SW_TCP6_SPORT : SW_TCP4_SPORT], f ? G_SPORT6 : G_SPORT4);
        if (!a)
            return;
        snprintf(spec, sizeof spec, f ? "[%s]:%d" : "%s:%d", ip, high);
        snprintf(a->dsts, sizeof a->dsts, "%s from source port %d", spec, g_sports[i]);
        if (parse_addr(spec, &a->dst) != 0) {
            att_end(a, OC_ERROR, 0, "bad canary address %s", spec);
            continue;
        }
        a->family = a->dst.ss_family;
        a->type = SOCK_STREAM;
        a->talk = X_LINE;
        a->bind_port = g_sports[i]; /* exactly this one (bind_source) */
    }
}

void sport_report(double t0)
{
    for (int f = 0; f < 2; f++)
        if (g_sport_asked[f])
            group_report(f ? G_SPORT6 : G_SPORT4, sweep_id[f ? SW_TCP6_SPORT : SW_TCP4_SPORT], t0,
                         "nothing tried");
}
