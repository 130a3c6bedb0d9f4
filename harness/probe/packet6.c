/* The sweep's packet6 line: packet4 for IPv6. A packet socket of the probe's own (made
 * by every way frames.c knows) sends an IPv6 packet it builds itself, the HARNESS line
 * in a UDP datagram to the canary's IPv6 high port, to each IPv6 next hop in view by its
 * link address (asked by a neighbour solicitation of its own). No IP socket and no route
 * of the sandbox's is needed: a link with IPv6 alone behind a filter on IP sockets, or
 * a route that refuses the canary, leaves it open wherever the workload keeps
 * CAP_NET_RAW. Where the probe may stand in the host's network namespace, only the
 * kernel's own route to the canary is taken, and only where the canary is on its link.
 * One line for all; the canary's log decides. */

#include "probe.h"

#include <linux/if_ether.h>
#include <net/if_arp.h>

#define HOPS6 8

/* Every kind of packet socket, in turn, as packet4's (SOCK_RAW first: write's way; no
 * protocol first: its bind to IPv6 waits out no grace period). */
static const struct { int type, proto; } kinds6[] = {
    { SOCK_RAW, 0 }, { SOCK_DGRAM, 0 }, { SOCK_RAW, ETH_P_IPV6 }, { SOCK_DGRAM, ETH_P_IPV6 },
    { SOCK_PACKET, ETH_P_ALL },
};

struct hop6 {
    struct in6_addr addr, self, asker; /* the next hop; the packet's source; the asking's */
    char dev[IFNAMSIZ];
    int ifindex, known;
    unsigned char mac[6], own[6];
};

static int hex16(const char *s, struct in6_addr *a)
{
    for (int i = 0; i < 16; i++) {
        unsigned v;
        if (sscanf(s + 2 * i, "%2x", &v) != 1)
            return 0;
        a->s6_addr[i] = (unsigned char)v;
    }
    return 1;
}

static int prefix_has(const struct in6_addr *net, int plen, const struct in6_addr *a)
{
    for (int i = 0; i < 16 && plen > 0; i++, plen -= 8) {
        unsigned char m = plen >= 8 ? 0xff : (unsigned char)(0xff << (8 - plen));
        if ((net->s6_addr[i] & m) != (a->s6_addr[i] & m))
            return 0;
    }
    return 1;
}

static int hop_add6(struct hop6 *h, int n, int *more, const struct in6_addr *a, const char *dev)
{
    for (int i = 0; i < n; i++)
        if (!memcmp(&h[i].addr, a, 16) && !strcmp(h[i].dev, dev))
            return n;
    if (n == HOPS6) {
        (*more)++;
        return n;
    }
    memset(&h[n], 0, sizeof h[n]);
    h[n].addr = *a;
    snprintf(h[n].dev, IFNAMSIZ, "%.15s", dev);
    return n + 1;
}

/* The next hops: every IPv6 gateway of the routing table, and the canary itself where
 * the kernel's own route to it is on a link (in the host's namespace, that alone). */
static int hops6(const struct in6_addr *canary, struct hop6 *h, int *more, int host)
{
    char line[512], dst[40], nh[40], dev[64];
    unsigned plen, flags;
    int n = 0, best = -1;
    char best_dev[IFNAMSIZ] = "";
    struct in6_addr best_nh = IN6ADDR_ANY_INIT;
    FILE *f = proc_net_fopen("ipv6_route");
    while (f && fgets(line, sizeof line, f)) {
        struct in6_addr d, g;
        if (sscanf(line, "%32s %x %*s %*s %32s %*s %*s %*s %x %63s", dst, &plen, nh, &flags, dev) != 5 ||
            !hex16(dst, &d) || !hex16(nh, &g) || !strcmp(dev, "lo") || !(flags & 1 /* RTF_UP */))
            continue;
        if ((flags & 2 /* RTF_GATEWAY */) && !host)
            n = hop_add6(h, n, more, &g, dev);
        if (prefix_has(&d, (int)plen, canary) && (int)plen > best) {
            best = (int)plen, best_nh = g;
            snprintf(best_dev, sizeof best_dev, "%.15s", dev);
        }
    }
    if (f)
        fclose(f);
    if (best >= 0 && IN6_IS_ADDR_UNSPECIFIED(&best_nh))
        n = hop_add6(h, n, more, canary, best_dev); /* on the link: the canary itself */
    return n;
}

/* This namespace's address of `scope` on `dev` (0 global, 0x20 link-local; none
 * tentative or failed). 0 where it has none. */
static int own6(const char *dev, unsigned want, struct in6_addr *self)
{
    char line[256], hex[40], name[64];
    unsigned scope, flags;
    int found = 0;
    FILE *f = proc_net_fopen("if_inet6");
    while (f && !found && fgets(line, sizeof line, f))
        found = sscanf(line, "%32s %*x %*x %x %x %63s", hex, &scope, &flags, name) == 4 && scope == want &&
                !(flags & 0x48) /* tentative, DAD failed */ && !strcmp(name, dev) && hex16(hex, self);
    if (f)
        fclose(f);
    return found;
}

/* Each unknown hop asked by a neighbour solicitation, on the line's one packet socket
 * `fd` (bound to IPv6 on every link: each packet socket closed costs an RCU grace
 * period), the advertisements read for at most `wait_ms` in all. */
static void ns_ask(struct hop6 *h, int n, int fd, int kind, int wait_ms)
{
    int eth = kinds6[kind].type != SOCK_DGRAM, asked = 0;
    if (packet_listen(fd, ETH_P_IPV6) != 0)
        return;
    for (int i = 0; i < n; i++) {
        const char *by;
        unsigned char frame[14 + 72];
        struct sockaddr_ll ll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_IPV6),
                                  .sll_ifindex = h[i].ifindex, .sll_halen = 6 };
        if (h[i].known)
            continue;
        size_t len = ns_frame(frame, eth, h[i].own, &h[i].asker, &h[i].addr);
        const unsigned char group[6] = { 0x33, 0x33, 0xff, h[i].addr.s6_addr[13], h[i].addr.s6_addr[14],
                                         h[i].addr.s6_addr[15] };
        memcpy(ll.sll_addr, group, 6);
        asked += frame_out(fd, eth, frame, len, &ll, &by) >= 0;
    }
    for (double end = now_ms() + wait_ms; asked;) {
        struct pollfd pf = { .fd = fd, .events = POLLIN };
        double left = end - now_ms();
        if (left <= 0 || poll(&pf, 1, (int)left + 1) <= 0)
            break;
        unsigned char buf[256], *ip6 = buf + (eth ? 14 : 0), *icmp = ip6 + 40;
        struct sockaddr_storage from;
        socklen_t fl = sizeof from;
        ssize_t r;
        while ((r = recvfrom(fd, buf, sizeof buf, MSG_DONTWAIT, (struct sockaddr *)&from, &fl)) >= 0) {
            fl = sizeof from;
            if (r < (ssize_t)(icmp - buf + 24) || ip6[6] != IPPROTO_ICMPV6 || icmp[0] != 136)
                continue; /* not an advertisement */
            for (int i = 0; i < n; i++) {
                if (h[i].known || !packet_on_link(fd, &from, h[i].ifindex) || memcmp(icmp + 8, &h[i].addr, 16))
                    continue;
                for (unsigned char *opt = icmp + 24; opt + 8 <= buf + r && opt[1]; opt += opt[1] * 8)
                    if (opt[0] == 2 && opt[1] == 1 && !h[i].known) { /* the target's link address */
                        memcpy(h[i].mac, opt + 2, 6);
                        h[i].known = 1;
                        asked--;
                    }
            }
        }
    }
}

static struct att *line6(const char *canary6, int high)
{
    struct att *a = sweep_add(sweep_id[SW_PACKET6], canary6, high, SOCK_DGRAM, X_FRAME);
    if (a)
        a->group = G_PACKET6;
    return a;
}

void sweep_packet6(const char *canary6, int high)
{
    struct in6_addr canary;
    if (!canary6 || !*canary6 || inet_pton(AF_INET6, canary6, &canary) != 1)
        return;
    struct att *a;
    if (!o.host6 || !*o.host6) { /* a listen canary: no link of its own a frame could reach */
        if ((a = line6(canary6, high)))
            att_end(a, OC_BLOCKED, 0, "not tried: the canary stands behind no veth of its own");
        return;
    }
    struct hop6 h[HOPS6];
    int more = 0, n = hops6(&canary, h, &more, maybe_host_netns()), kept = 0;
    if (!n) { /* asked first: a packet socket costs its closer an RCU grace period */
        if ((a = line6(canary6, high)))
            att_end(a, OC_BLOCKED, ENETUNREACH,
                    "no IPv6 next hop in view: no route of this namespace's leaves it");
        return;
    }
    int fd = -1, refused = 0, kind = 0;
    const char *way = "socket";
    for (; fd < 0 && kind < (int)(sizeof kinds6 / sizeof kinds6[0]); kind++)
        if ((fd = packet_make(kinds6[kind].type, kinds6[kind].proto, &way)) < 0 && !refused)
            refused = errno;
    kind--;
    if (fd < 0) {
        if ((a = line6(canary6, high)))
            att_end(a, OC_BLOCKED, refused, net_raw_held()
                                                ? "socket(AF_PACKET), by socket, IORING_OP_SOCKET and the i386 entry"
                                                : "socket(AF_PACKET), without CAP_NET_RAW (which every way asks)");
        return;
    }
    for (int i = 0; i < n; i++) {
        struct ifreq ifr;
        memset(&ifr, 0, sizeof ifr);
        snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%.15s", h[i].dev);
        if (ioctl(fd, SIOCGIFINDEX, &ifr) != 0)
            continue;
        h[i].ifindex = ifr.ifr_ifindex;
        if (ioctl(fd, SIOCGIFHWADDR, &ifr) != 0 || ifr.ifr_hwaddr.sa_family != ARPHRD_ETHER)
            continue; /* another kind of link */
        memcpy(h[i].own, ifr.ifr_hwaddr.sa_data, 6);
        if (own6(h[i].dev, 0, &h[i].self)) {
            h[i].asker = h[i].self;
        } else { /* no global address of its own: the hop asked from its link-local one (or
                  * ::), the packet sent from one made up (a link-local source is not
                  * forwarded; the packet's builder picks its source) */
            if (!own6(h[i].dev, 0x20, &h[i].asker))
                h[i].asker = (struct in6_addr)IN6ADDR_ANY_INIT;
            static const unsigned char ula[8] = { 0xfd, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
            memcpy(h[i].self.s6_addr, ula, 8);
            memcpy(h[i].self.s6_addr + 8, h[i].own, 6); /* its link address: this sandbox's */
            h[i].self.s6_addr[14] = 0, h[i].self.s6_addr[15] = 2;
        }
        if (!memcmp(&h[i].self, &h[i].addr, 16))
            continue; /* its own address */
        h[kept++] = h[i];
    }
    ns_ask(h, kept, fd, kind, 1000);
    int tried = 0;
    for (int i = 0; i < kept; i++) {
        if (!h[i].known || !(a = line6(canary6, high)))
            continue;
        tried++;
        if (frame_att(a, fd, kinds6[kind].type != SOCK_DGRAM ? SOCK_RAW : SOCK_DGRAM, ETH_P_IPV6,
                      h[i].ifindex, h[i].mac) != 0)
            continue;
        struct sockaddr_in6 *from = (struct sockaddr_in6 *)(void *)&a->alt;
        from->sin6_family = AF_INET6;
        from->sin6_addr = h[i].self;
        a->has_alt = 1;
        char hs[INET6_ADDRSTRLEN], made[48] = "";
        inet_ntop(AF_INET6, &h[i].addr, hs, sizeof hs);
        if (strcmp(way, "socket"))
            snprintf(made, sizeof made, " (made by %.32s)", way);
        snprintf(a->dsts, sizeof a->dsts, "[%.39s]:%d by a packet socket%s, through %.39s on interface %d",
                 canary6, high, made, hs, h[i].ifindex);
    }
    close(fd);
    if ((!tried || more) && (a = line6(canary6, high))) {
        if (more)
            att_end(a, OC_ERROR, 0, "more IPv6 next hops in view than the %d tried: no proof", HOPS6);
        else
            att_end(a, OC_BLOCKED, 0, "no IPv6 next hop answers on a link of this namespace");
    }
}

void packet6_report(double t0)
{
    if (o.canary6 && *o.canary6)
        group_report(G_PACKET6, sweep_id[SW_PACKET6], t0, "nothing tried");
}
