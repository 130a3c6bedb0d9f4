/* route-made over IPv6: with CAP_NET_ADMIN over its own network namespace a workload
 * makes the IPv6 route its sandbox left out (a link to a forwarding host, the link's
 * own /64 alone). A host route to the canary's IPv6 address through each next hop in
 * view but the one the route in place takes: the gateways of /proc/net/ipv6_route,
 * the neighbours (RTM_GETNEIGH), and the first two addresses of each attached prefix
 * of /64 to /126 (a link's far end is most often one of them); never the namespace's
 * own addresses, at most ROUTE_HOPS. Each route is tried with the TCP exchange on the
 * IPv4 canary's port (HOP6_MS) and taken back at once. IPv6 rules of the sandbox's
 * ahead of the main table (`ip -6 rule ... prohibit`) are stepped around first, as
 * over IPv4 (rules.c): the route in place is tried through a rule of the workload's
 * own, then each hop. */

#include "probe.h"

#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <net/if.h>

struct hop6 { struct in6_addr a; char dev[IFNAMSIZ]; };

/* The time a hop gets. More than IPv4's second: the first SYN through a route just made
 * is lost while the far end resolves this end's address (measured: one second never
 * brought the nonce back through a forwarding host; three did), and TCP sends it again
 * after a second. */
#define HOP6_MS 3000.0

static int hex16(const char *s, struct in6_addr *a)
{
    for (int i = 0; i < 16; i++) {
        unsigned v;
        if (sscanf(s + 2 * i, "%2x", &v) != 1)
            return -1;
        a->s6_addr[i] = (unsigned char)v;
    }
    return 0;
}

static int own6(const struct in6_addr *a)
{
    char line[256], hex[40];
    int own = 0;
    struct in6_addr mine;
    FILE *f = proc_net_fopen("if_inet6");
    while (f && !own && fgets(line, sizeof line, f))
        if (sscanf(line, "%32s", hex) == 1 && !hex16(hex, &mine))
            own = !memcmp(&mine, a, sizeof mine);
    if (f)
        fclose(f);
    return own;
}

static int add_hop(struct hop6 *hops, int n, int *more, const struct in6_addr *a, const char *dev)
{
    if (IN6_IS_ADDR_UNSPECIFIED(a) || IN6_IS_ADDR_LOOPBACK(a) || IN6_IS_ADDR_MULTICAST(a) ||
        !strcmp(dev, "lo") || own6(a))
        return n;
    for (int i = 0; i < n; i++)
        if (!memcmp(&hops[i].a, a, sizeof *a) && !strcmp(hops[i].dev, dev))
            return n;
    if (n == ROUTE_HOPS) {
        (*more)++;
        return n;
    }
    hops[n].a = *a;
    snprintf(hops[n].dev, IFNAMSIZ, "%.15s", dev);
    return n + 1;
}

/* The neighbours of the IPv6 table, by netlink; each to add_hop. */
static int neighbours6(struct hop6 *hops, int n, int *more)
{
    int fd = sock_make(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0)
        return n;
    struct { struct nlmsghdr h; struct ndmsg m; } req = {
        .h = { .nlmsg_len = sizeof req, .nlmsg_type = RTM_GETNEIGH,
               .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP, .nlmsg_seq = 1 },
        .m = { .ndm_family = AF_INET6 } };
    static char buf[16384];
    if (send(fd, &req, sizeof req, 0) == (ssize_t)sizeof req)
        for (int done = 0; !done;) {
            struct pollfd p = { .fd = fd, .events = POLLIN };
            ssize_t k = poll(&p, 1, 1000) > 0 ? recv(fd, buf, sizeof buf, 0) : -1;
            if (k <= 0)
                break;
            for (struct nlmsghdr *h = (void *)buf; NLMSG_OK(h, (size_t)k); h = NLMSG_NEXT(h, k)) {
                if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR) {
                    done = 1;
                    break;
                }
                struct ndmsg *m = NLMSG_DATA(h);
                if (m->ndm_state & (NUD_FAILED | NUD_NOARP | NUD_INCOMPLETE))
                    continue;
                char dev[IFNAMSIZ];
                if (!if_indextoname((unsigned)m->ndm_ifindex, dev))
                    continue;
                int len = (int)h->nlmsg_len - (int)NLMSG_LENGTH(sizeof *m);
                for (struct rtattr *a = (void *)((char *)m + NLMSG_ALIGN(sizeof *m)); RTA_OK(a, len);
                     a = RTA_NEXT(a, len))
                    if (a->rta_type == NDA_DST && RTA_PAYLOAD(a) == 16)
                        n = add_hop(hops, n, more, RTA_DATA(a), dev);
            }
        }
    close(fd);
    return n;
}

/* Hops in view (gateways, neighbours, attached prefixes' first two addresses), and
 * the route in place to `dst` (its next hop and link; 0 where none). */
static int hops6(const struct in6_addr *dst, struct hop6 *hops, int *more, struct hop6 *now, int *in_place)
{
    char line[512], d[40], nh[40], dev[64];
    unsigned dlen, flags;
    struct hop6 gw[ROUTE_HOPS], sub[ROUTE_HOPS];
    int ng = 0, ns = 0, n = 0, best = -1, skip = 0;
    *in_place = 0;
    FILE *f = proc_net_fopen("ipv6_route");
    while (f && fgets(line, sizeof line, f)) {
        if (sscanf(line, "%32s %x %*s %*x %32s %*x %*x %*x %x %63s", d, &dlen, nh, &flags, dev) != 5)
            continue;
        struct in6_addr dest, hop;
        if (hex16(d, &dest) || hex16(nh, &hop) || !(flags & RTF_UP) || !strcmp(dev, "lo"))
            continue;
        /* The route in place: the longest prefix holding dst. */
        int holds = 1;
        for (unsigned b = 0; b < dlen && b < 128 && holds; b++)
            holds = ((dst->s6_addr[b / 8] ^ dest.s6_addr[b / 8]) >> (7 - b % 8) & 1) == 0;
        if (holds && (int)dlen > best && !(flags & RTF_REJECT)) {
            best = (int)dlen, *in_place = 1;
            now->a = hop;
            snprintf(now->dev, IFNAMSIZ, "%.15s", dev);
        }
        if (flags & RTF_GATEWAY)
            ng = add_hop(gw, ng, &skip, &hop, dev);
        else if (dlen >= 64 && dlen <= 126 && !IN6_IS_ADDR_LINKLOCAL(&dest) && !IN6_IS_ADDR_MULTICAST(&dest))
            for (int k = 1; k <= 2; k++) {
                struct in6_addr a = dest;
                a.s6_addr[15] = (unsigned char)(a.s6_addr[15] + k);
                ns = add_hop(sub, ns, &skip, &a, dev);
            }
    }
    if (f)
        fclose(f);
    for (int i = 0; i < ng; i++)
        n = add_hop(hops, n, more, &gw[i].a, gw[i].dev);
    n = neighbours6(hops, n, more);
    for (int i = 0; i < ns; i++)
        n = add_hop(hops, n, more, &sub[i].a, sub[i].dev);
    *more += skip;
    return n;
}

/* The IPv6 next hops in view, likeliest first (hops6's: gateways, neighbours, the first
 * two addresses of attached prefixes; never the namespace's own), at most `max`: each
 * by address, and by name as an address is written, with its link where link-local
 * ("fe80::1%eth0"). For the sweep's relays (proxies.c, hostudp.c), which ask the
 * first of them. */
int route6_hops(struct nexthop6 *out, int max)
{
    static struct hop6 hops[ROUTE_HOPS];
    struct hop6 now;
    int more = 0, in_place = 0, n = hops6(&in6addr_any, hops, &more, &now, &in_place);
    for (int i = 0; i < n && i < max; i++) {
        char a[INET6_ADDRSTRLEN] = "";
        inet_ntop(AF_INET6, &hops[i].a, a, sizeof a);
        out[i].a = hops[i].a;
        if (IN6_IS_ADDR_LINKLOCAL(&hops[i].a))
            snprintf(out[i].name, sizeof out[i].name, "%s%%%s", a, hops[i].dev);
        else
            snprintf(out[i].name, sizeof out[i].name, "%s", a);
    }
    return n < max ? n : max;
}

static int route6_host(int sock, unsigned long op, const struct in6_addr *dst, const struct hop6 *h, int *way)
{
    struct in6_rtmsg rt;
    memset(&rt, 0, sizeof rt);
    rt.rtmsg_dst = *dst;
    rt.rtmsg_dst_len = 128;
    rt.rtmsg_gateway = h->a;
    rt.rtmsg_metric = 1;
    rt.rtmsg_flags = RTF_UP | RTF_HOST | RTF_GATEWAY;
    rt.rtmsg_ifindex = (int)if_nametoindex(h->dev);
    return route_by(sock, op, &rt, AF_INET6, dst, &h->a, h->dev, way);
}

/* The IPv6 half of route-made: 1 where the nonce came back through a hop (how names
 * it), 2 where it came back by the route in place once a rule of the workload's own
 * stepped around the sandbox's IPv6 rules (rules.c), else 0 with the hops tried and in
 * view counted in *tried and *more, the first refusal's errno in *first; -1 where the
 * check's time ran out with hops untried. */
int route6_made(const Addr *canary, int *tried, int *more, int *first, char *how, size_t n)
{
    const struct in6_addr *dst = &((const struct sockaddr_in6 *)(const void *)canary)->sin6_addr;
    struct hop6 hops[ROUTE_HOPS], now;
    int in_place = 0, k = hops6(dst, hops, more, &now, &in_place);
    char where[80];
    fmt_addr(canary, where, sizeof where);
    ev_int("hops6", k);
    rule_step_around(AF_INET6, dst, where, first);
    if (rule_held() && in_place) { /* the route in place, the sandbox's rules stepped around */
        double end = now_ms() + HOP6_MS;
        int back = canary_exchange(canary, end < check_end() ? end : check_end());
        rule_release();
        if (back)
            return 2;
        rule_step_around(AF_INET6, dst, where, first); /* again, for the routes below */
    }
    int sock = sock_make(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (sock < 0) {
        if (!*first)
            *first = errno;
        rule_release();
        return 0;
    }
    char hop[INET6_ADDRSTRLEN];
    for (int i = 0; i < k; i++) {
        if (in_place && !memcmp(&hops[i].a, &now.a, sizeof now.a) && !strcmp(hops[i].dev, now.dev))
            continue; /* the way the route in place goes: the sweep's lines judged it */
        if (now_ms() + HOP6_MS > check_end() - 200.0) {
            rule_release();
            close(sock);
            return -1;
        }
        (*tried)++;
        int way = ROUTE_IOCTL;
        if (route6_host(sock, SIOCADDRT, dst, &hops[i], &way) != 0) {
            if (!*first)
                *first = errno;
            if (errno == EPERM || errno == EACCES)
                break;
            continue;
        }
        double end = now_ms() + HOP6_MS;
        int back = canary_exchange(canary, end < check_end() ? end : check_end());
        route6_host(sock, SIOCDELRT, dst, &hops[i], &way);
        if (back) {
            inet_ntop(AF_INET6, &hops[i].a, hop, sizeof hop);
            snprintf(how, n, "%s on %s%s%s", hop, hops[i].dev, route_way_name(way),
                     rule_held() ? ", with a rule of its own ahead of the sandbox's" : "");
            rule_release();
            close(sock);
            return 1;
        }
    }
    rule_release();
    close(sock);
    return 0;
}
