/* Scenario "egress", its named attempts: the denied canary by name, by raw IP and
 * on the DoH port, and the alternate resolver over UDP and TCP. The sweep is
 * attempt.c's (how) and sweep.c's (what). */

#include "probe.h"
#include <ifaddrs.h>

#include <linux/rtnetlink.h>

void chk_tcp_denied_name(void)
{
    Addr srv, dst;
    struct dns_ans r;
    char name[300], where[80];
    int step;
    need_addr(&o.resolver, &srv);
    need_addr(&o.canary_tcp, &dst);
    need(&o.nonce);
    snprintf(name, sizeof name, "t-%s.%s", need(&o.tag), need(&o.denied_name));
    fmt_addr(&srv, where, sizeof where);
    ev_str("qname", name);
    if (dns_query(&srv, 0, name, DNS_A, &r, &step) != 0)
        outcome(step == DQ_ENCODE ? OC_ERROR : OC_BLOCKED, errno, "DNS A %s via %s: %s",
                name, where, dq_step[step]);
    if (r.rcode || !r.has_a)
        outcome(OC_BLOCKED, 0, "DNS A %s via %s: rcode %d, no A record", name, where, r.rcode);
    char ip[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &r.a, ip, sizeof ip);
    ev_str("resolved", ip);
    /* The answer, on the canary's port. */
    unsigned port = addr_port(&dst);
    struct sockaddr_in *s4 = (void *)&dst;
    memset(&dst, 0, sizeof dst);
    s4->sin_family = AF_INET;
    s4->sin_port = htons((uint16_t)port);
    s4->sin_addr = r.a;
    tcp_check(&dst);
}

/* The TCP exchange with the address in an option. */
__attribute__((noreturn))
void tcp_to(const char **opt)
{
    Addr a;
    need_addr(opt, &a);
    tcp_check(&a);
}

void chk_tcp_raw_ip(void) { tcp_to(&o.canary_tcp); }
void chk_doh_port(void) { tcp_to(&o.doh); }

/* TXT <check-id>.<tag>.<denied-name> to the alternate resolver. */
static void dns_alt(int tcp)
{
    Addr srv;
    struct dns_ans r;
    char name[300], want[300], where[80];
    int step;
    need_addr(&o.alt_dns, &srv);
    snprintf(name, sizeof name, "%s.%s.%s", g_cur->id, need(&o.tag), need(&o.denied_name));
    snprintf(want, sizeof want, "nonce=%s", need(&o.nonce));
    fmt_addr(&srv, where, sizeof where);
    ev_str("dst", where);
    ev_str("qname", name);
    if (dns_query(&srv, tcp, name, DNS_TXT, &r, &step) != 0) {
        if (step == DQ_ENCODE)
            fail(0, "cannot encode DNS name %s", name);
        if (!tcp || step == DQ_CONNECT)
            outcome(OC_BLOCKED, errno, "DNS TXT %s via %s/%s: %s", name, where, tcp ? "tcp" : "udp",
                    dq_step[step]);
        /* Over TCP, a completed connect already crossed the boundary. */
        outcome(OC_SUCCEEDED, 0, "connected to %s, but no DNS answer: %s: %s", where, dq_step[step],
                strerror(errno));
    }
    if (!strcmp(r.txt, want))
        outcome(OC_ESCAPED, 0, "TXT answer from %s%s carries the nonce", where, sock_way());
    outcome(OC_SUCCEEDED, 0, "answer from %s without the nonce (rcode %d, %d answers)",
            where, r.rcode, r.ancount);
}

void chk_dns_alt_udp(void) { dns_alt(0); }
void chk_dns_alt_tcp(void) { dns_alt(1); }

/* ---- a route of its own: CAP_NET_ADMIN kept in the sandbox's network namespace ---- */

#define ROUTE_SEEN 256 /* candidates read before each is kept once */

/* Whether `a` is one of this namespace's own addresses: a bind to it succeeds. */
static int own_address(uint32_t a)
{
    struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(a) };
    int fd = sock_make(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    int own = fd >= 0 && bind(fd, (struct sockaddr *)&sin, sizeof sin) == 0;
    if (fd >= 0)
        close(fd);
    return own;
}

struct hop {
    uint32_t addr;
    int rank; /* 0 a gateway, 1 a neighbour, 2 a direct host route, 3 a subnet's address */
    char dev[IFNAMSIZ];
};

static void hop_add(struct hop *h, int *n, uint32_t addr, int rank, const char *dev)
{
    if (*n < ROUTE_SEEN) {
        h[*n].addr = addr, h[*n].rank = rank;
        snprintf(h[(*n)++].dev, IFNAMSIZ, "%.15s", dev);
    }
}

/* The next hops a route to the canary could take from here, likeliest first: every
 * gateway of the routing table, every neighbour the kernel knows, the destination of
 * every direct host route, and every other address of each directly attached subnet
 * of eight addresses or fewer (a point-to-point link's far end), each with its
 * interface; each once, and none of the namespace's own. At most ROUTE_HOPS: *more
 * says how many were left out (a list cut short is no proof). */
int route_hops(uint32_t hops[ROUTE_HOPS], char devs[ROUTE_HOPS][IFNAMSIZ], int *more)
{
    static struct hop seen[ROUTE_SEEN];
    int n = 0;
    char line[512], dev[64], ip[64];
    unsigned long dst, gw, mask;
    unsigned flags;
    FILE *f = proc_net_fopen("route");
    while (f && fgets(line, sizeof line, f)) {
        if (sscanf(line, "%63s %lx %lx %x %*d %*d %*d %lx", dev, &dst, &gw, &flags, &mask) != 5)
            continue; /* the header */
        uint32_t m = ntohl((uint32_t)mask), d = ntohl((uint32_t)dst);
        if (!strcmp(dev, "lo"))
            continue;
        if (flags & RTF_GATEWAY)
            hop_add(seen, &n, ntohl((uint32_t)gw), 0, dev);
        else if (m == 0xffffffffU)
            hop_add(seen, &n, d, 2, dev);
        else if (m >= 0xfffffff8U) /* /29 and smaller: each address of it */
            for (uint32_t a = (d & m) + 1; a < (d | ~m); a++)
                hop_add(seen, &n, a, 3, dev);
    }
    if (f)
        fclose(f);
    f = proc_net_fopen("arp");
    while (f && fgets(line, sizeof line, f)) {
        struct in_addr a;
        if (sscanf(line, "%63s %*s %*s %*s %*s %63s", ip, dev) == 2 && inet_pton(AF_INET, ip, &a) == 1)
            hop_add(seen, &n, ntohl(a.s_addr), 1, dev);
    }
    if (f)
        fclose(f);
    int kept = 0;
    *more = 0;
    for (int rank = 0; rank < 4; rank++)
        for (int i = 0; i < n; i++) {
            if (seen[i].rank != rank)
                continue;
            int dup = 0; /* each (hop, link) once: a gateway is often a neighbour too */
            for (int j = 0; j < kept && !dup; j++)
                dup = hops[j] == seen[i].addr && !strcmp(devs[j], seen[i].dev);
            if (dup || own_address(seen[i].addr))
                continue;
            if (kept == ROUTE_HOPS) {
                (*more)++;
                continue;
            }
            hops[kept] = seen[i].addr;
            memcpy(devs[kept++], seen[i].dev, IFNAMSIZ);
        }
    if (n == ROUTE_SEEN)
        (*more)++;
    return kept;
}

/* The route the kernel takes to `dst` now, from the main table: the longest prefix,
 * then the lowest metric. Its next hop (0 where on-link) and link; 0 where none. */
int route_now(uint32_t dst, uint32_t *via, char dev_out[IFNAMSIZ])
{
    char line[512], dev[64];
    unsigned long d, gw, mask;
    unsigned flags;
    int metric, found = 0, best_len = -1, best_metric = 0;
    FILE *f = proc_net_fopen("route");
    while (f && fgets(line, sizeof line, f)) {
        if (sscanf(line, "%63s %lx %lx %x %*d %*d %d %lx", dev, &d, &gw, &flags, &metric, &mask) != 6)
            continue;
        uint32_t m = ntohl((uint32_t)mask);
        int len = __builtin_popcount(m);
        if (!(flags & RTF_UP) || (dst & m) != ntohl((uint32_t)d) || len < best_len ||
            (len == best_len && metric >= best_metric))
            continue;
        found = 1, best_len = len, best_metric = metric;
        *via = flags & RTF_GATEWAY ? ntohl((uint32_t)gw) : 0;
        snprintf(dev_out, IFNAMSIZ, "%.15s", dev);
    }
    if (f)
        fclose(f);
    return found;
}

/* A host route to `dst` via `hop` on `dev` (SIOCADDRT, or SIOCDELRT to take it back). */
static int route_host(int sock, unsigned long op, uint32_t dst, uint32_t hop, const char *dev, int *way)
{
    struct rtentry rt;
    struct sockaddr_in d = { .sin_family = AF_INET }, g = { .sin_family = AF_INET }, m = d;
    char name[IFNAMSIZ];
    memset(&rt, 0, sizeof rt);
    d.sin_addr.s_addr = htonl(dst);
    g.sin_addr.s_addr = htonl(hop);
    m.sin_addr.s_addr = 0xffffffffU;
    memcpy(&rt.rt_dst, &d, sizeof d);
    memcpy(&rt.rt_gateway, &g, sizeof g);
    memcpy(&rt.rt_genmask, &m, sizeof m);
    snprintf(name, sizeof name, "%s", dev);
    rt.rt_dev = name;
    rt.rt_flags = RTF_UP | RTF_HOST | RTF_GATEWAY;
    return route_by(sock, op, &rt, AF_INET, &d.sin_addr, &g.sin_addr, dev, way);
}

/* Whether an interface here holds the host's end of the canary's link (--host4,
 * --host6): then this network stack is the host's, whatever the namespace's inode says
 * (gVisor's --network=host: the sentry's namespace of its own over the host's stack,
 * its routing table the host's, with every other harness run's canary link in it).
 * Read from the interfaces' own list, never by a bind, which a namespace's
 * ip_nonlocal_bind would let through. */
static int host_end_here(void)
{
    struct in_addr h4;
    struct in6_addr h6;
    int has4 = o.host4 && inet_pton(AF_INET, o.host4, &h4) == 1;
    int has6 = o.host6 && inet_pton(AF_INET6, o.host6, &h6) == 1;
    struct ifaddrs *all = NULL;
    if ((!has4 && !has6) || getifaddrs(&all) != 0)
        return 0;
    int here = 0;
    for (struct ifaddrs *i = all; i && !here; i = i->ifa_next) {
        const struct sockaddr *a = i->ifa_addr;
        if (a && a->sa_family == AF_INET && has4)
            here = ((const struct sockaddr_in *)(const void *)a)->sin_addr.s_addr == h4.s_addr;
        else if (a && a->sa_family == AF_INET6 && has6)
            here = !memcmp(&((const struct sockaddr_in6 *)(const void *)a)->sin6_addr, &h6, sizeof h6);
    }
    freeifaddrs(all);
    return here;
}

/* Whether the probe may stand in the host's network namespace: by --host-ns's first
 * inode, or without it by pid 1's namespace, or by holding the host's end of the
 * canary's link (host_end_here); what cannot be told counts as the host's (no /proc),
 * since a route made there would change the host's. */
int maybe_host_netns(void)
{
    struct stat self, init;
    if (netns_stat(&self) != 0)
        return 1;
    static struct stat seen;
    static int known, shared;
    if (!known || seen.st_ino != self.st_ino || seen.st_dev != self.st_dev)
        seen = self, known = 1, shared = host_end_here(); /* once per namespace */
    if (shared)
        return 1;
    unsigned long host = o.host_ns ? strtoul(o.host_ns, NULL, 10) : 0;
    if (host)
        return host == (unsigned long)self.st_ino;
    return stat("/proc/1/ns/net", &init) != 0 || (init.st_ino == self.st_ino && init.st_dev == self.st_dev);
}

char g_cx_way[200]; /* the way canary_exchange's last socket took (sock_way) */

/* The HARNESS exchange with the canary by TCP before `end`: whether its nonce came back. */
int canary_exchange(const Addr *canary, double end)
{
    char reply[256] = "", msg[256], want[256];
    snprintf(want, sizeof want, "NONCE %s", o.nonce);
    int fd = connect_to(canary, SOCK_STREAM, end);
    if (fd < 0)
        return 0;
    snprintf(g_cx_way, sizeof g_cx_way, "%s", sock_way());
    int len = snprintf(msg, sizeof msg, "HARNESS %s %s\n", o.tag, g_cur->id);
    size_t got = send_all(fd, msg, (size_t)len, end) == 0 ? recv_until(fd, reply, sizeof reply - 1, 1, end)
                                                          : 0;
    reply[got] = 0;
    reply[strcspn(reply, "\r\n")] = 0;
    close(fd);
    return !strcmp(reply, want);
}

/* The check's time ran out with hops untried: an error, never blocked. */
__attribute__((noreturn)) static void route_untried(int sock, const char *where, int tried, int left)
{
    rule_release();
    close(sock);
    outcome(OC_ERROR, ETIMEDOUT, "a route to %s through %d next hops in view, and the check's time"
            " ran out with %d untried (a second each): no proof that none leads there", where, tried,
            left);
}

/* route-made's IPv4 half: returns where no hop led out (escapes and errors end the
 * line); the canary as text in `where`, the counts for the line's last words. */
static void route4_made(const Addr *cp, char *where, size_t wn, int *firstp, int *triedp, int *morep,
                        int *in_placep)
{
    const Addr *canary = cp;
    uint32_t dst = ntohl(((const struct sockaddr_in *)(const void *)canary)->sin_addr.s_addr);
    uint32_t hops[ROUTE_HOPS];
    char devs[ROUTE_HOPS][IFNAMSIZ];
    int more = 0, n = route_hops(hops, devs, &more), first = 0;
    int sock = sock_make(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    uint32_t now_via = 0;
    char now_dev[IFNAMSIZ] = "";
    int in_place = route_now(dst, &now_via, now_dev), tried = 0;
    ev_int("hops", n);
    ev_int("route_in_place", in_place);
    if (sock < 0)
        outcome(OC_BLOCKED, errno, "socket for SIOCADDRT");
    char hop[INET_ADDRSTRLEN];
    fmt_addr(canary, where, wn);
    uint32_t dst_be = htonl(dst);
    rule_step_around(AF_INET, &dst_be, where, &first);
    if (rule_held() && in_place) { /* the route in place, with the sandbox's rules stepped around */
        double end = now_ms() + 1000.0;
        int back = canary_exchange(canary, end < check_end() ? end : check_end());
        rule_release();
        if (back)
            outcome(OC_ESCAPED, 0, "put a rule of its own ahead of the sandbox's, sending %s to the"
                    " main table (CAP_NET_ADMIN), and the nonce came back by the route in place%s", where,
                    g_cx_way);
        rule_step_around(AF_INET, &dst_be, where, &first); /* again, for the routes below */
    }
    for (int i = 0; i < n; i++) {
        struct in_addr a = { htonl(hops[i]) };
        inet_ntop(AF_INET, &a, hop, sizeof hop);
        if (in_place && now_via && hops[i] == now_via && !strcmp(devs[i], now_dev))
            continue; /* the way the route in place goes: the sweep's lines judged it */
        if (now_ms() + 1000.0 > check_end() - 200.0) /* hops untried are no proof */
            route_untried(sock, where, tried, n - i);
        tried++;
        int way = ROUTE_IOCTL;
        if (route_host(sock, SIOCADDRT, dst, hops[i], devs[i], &way) != 0) {
            if (!first)
                first = errno;
            if (errno == EPERM || errno == EACCES)
                break; /* no capability over this namespace: every hop would say the same */
            continue;
        }
        double end = now_ms() + 1000.0; /* a second a hop: a hop that drops costs no more */
        int back = canary_exchange(canary, end < check_end() ? end : check_end());
        route_host(sock, SIOCDELRT, dst, hops[i], devs[i], &way);
        if (back) {
            int ruled = rule_held();
            rule_release();
            ev_str("via", hop);
            outcome(OC_ESCAPED, 0, "made a route to %s via %s on %s%s%s (CAP_NET_ADMIN), and the nonce"
                    " came back%s", where, hop, devs[i], route_way_name(way),
                    ruled ? ", with a rule of its own ahead of the sandbox's" : "", g_cx_way);
        }
    }
    rule_release();
    close(sock);
    *firstp = first, *triedp = tried, *morep = more, *in_placep = in_place;
}

/* With CAP_NET_ADMIN over its own network namespace a workload makes the route its
 * sandbox left out, or one around the route it left in that leads nowhere (a default
 * route to a dead end beside a second link that leads out): a host route to the
 * canary through each next hop it can see (route_hops) but the one the route in
 * place takes, each tried with the TCP exchange and taken back at once. Escaped on
 * the nonce; blocked where no route can be made (EPERM without the capability) or
 * none leads there; then the same over IPv6 (routes6.c). Runs after the sweep, alone: a route made mid-sweep would let
 * other lines out. */
void chk_route_made(void)
{
    Addr canary;
    need_addr(&o.canary_tcp, &canary);
    need(&o.nonce);
    /* The host's own routes are never touched: where the probe stands in the host's
     * network namespace (the host control, a fleet host), none is made. */
    if (maybe_host_netns())
        outcome(OC_BLOCKED, 0, "may stand in the host's network namespace: no route is made there");
    int first = 0, tried = 0, more = 0, in_place = 0;
    char where[80] = "";
    if (canary.ss_family == AF_INET)
        route4_made(&canary, where, sizeof where, &first, &tried, &more, &in_place);
    /* The same over IPv6, to the canary's IPv6 address on the same port. */
    Addr c6;
    char text[120], how[120], where6[80] = "";
    int tried6 = 0, more6 = 0;
    snprintf(text, sizeof text, "[%s]:%u", o.canary6 ? o.canary6 : "", addr_port(&canary));
    if (o.canary6 && *o.canary6 && parse_addr(text, &c6) == 0) {
        fmt_addr(&c6, where6, sizeof where6);
        int r6 = route6_made(&c6, &tried6, &more6, &first, how, sizeof how);
        if (r6 == 2)
            outcome(OC_ESCAPED, 0, "put a rule of its own ahead of the sandbox's IPv6 rules, sending %s"
                    " to the main table (CAP_NET_ADMIN), and the nonce came back by the route in"
                    " place%s", where6, g_cx_way);
        if (r6 > 0) {
            ev_str("via", how);
            outcome(OC_ESCAPED, 0, "made an IPv6 route to %s via %s (CAP_NET_ADMIN), and the nonce"
                    " came back%s", where6, how, g_cx_way);
        }
        if (r6 < 0)
            outcome(OC_ERROR, ETIMEDOUT, "an IPv6 route to %s through next hops in view, and the"
                    " check's time ran out with some untried: no proof that none leads there", where6);
    }
    if (!where[0] && !where6[0])
        outcome(OC_BLOCKED, EAFNOSUPPORT, "the canary has no address to route to");
    char also[200] = "";
    if (where6[0])
        snprintf(also, sizeof also, "; to %s through each of %d IPv6 next hops in view", where6, tried6);
    if (more || more6)
        outcome(OC_ERROR, first, "a route to %s through each of %d next hops in view%s, and %d more"
                " left out (at most %d are tried): no proof that none leads there", where, tried, also,
                more + more6, ROUTE_HOPS);
    if (in_place && !tried && !tried6)
        outcome(OC_BLOCKED, 0, "the route to %s in place takes the only next hop in view%s", where, also);
    outcome(OC_BLOCKED, first, "a route to %s through each of %d next hops in view%s%s", where, tried,
            in_place ? " but the one the route in place takes" : "", also);
}
