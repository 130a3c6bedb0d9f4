/* udp-relay's other half: from a network namespace of the sandbox's own, the host's
 * UDP listeners bound beyond loopback (--host-udp, "ADDR:PORT" per line, those the host
 * names: hostside/listeners.py): at the host's end of the canary's link and at the
 * first next hop of its family where bound to every address (IPv4's; IPv6's, routes6.c's,
 * a link-local one with its link), at one of the first two next hops where bound to
 * its address, at its own address where bound to the host's address on another link
 * (a host takes packets for any address it holds, from whichever link they come); and
 * the ports datagram shippers listen at by default (statsd, syslog,
 * GELF, collectd) at the first two next hops of each family. A shipper on the host
 * aimed anywhere (a statsd bound to 0.0.0.0, the one port a host firewall lets in from
 * the sandbox's link) takes the marked datagram out; nothing answers, the canary's log
 * decides. */

#include "probe.h"

#define HOST_UDP_MAX 24

static int g_host_udp_over;

static int own_address(const char *host)
{
    const char *const mine[] = { o.canary4, o.canary6, o.meta4, o.meta6 };
    for (size_t i = 0; i < sizeof mine / sizeof mine[0]; i++)
        if (mine[i] && *mine[i] && !strcmp(host, mine[i]))
            return 1; /* the canary's own: it answers there itself */
    return elsewhere_has(host);
}

static void udp_relay_add(const char *host, unsigned port)
{
    char spec[80];
    long high = o.high_port ? strtol(o.high_port, NULL, 10) : 0;
    if (!*host || own_address(host) || (long)port == high)
        return; /* (the canary's high port at the host's end is host4-udp's) */
    snprintf(spec, sizeof spec, strchr(host, ':') ? "[%s]:%u" : "%s:%u", host, port);
    int n = 0;
    for (size_t i = 0; i < g_natt; i++) {
        if (g_att[i].group == G_UDP_RELAY && dsts_is(g_att[i].dsts, spec))
            return;
        n += g_att[i].group == G_UDP_RELAY && g_att[i].listed == 2;
    }
    if (n >= HOST_UDP_MAX) {
        g_host_udp_over = 1;
        return;
    }
    struct att *a = sweep_add(sweep_id[SW_UDP_RELAY], host, (int)port, SOCK_DGRAM, X_LINE);
    if (a)
        a->group = G_UDP_RELAY, a->listed = 2;
}

int host_udp_relays(void)
{
    static const unsigned usual[] = { 8125, 514, 12201, 25826 };
    uint32_t hops[ROUTE_HOPS];
    char devs[ROUTE_HOPS][IFNAMSIZ], copy[4096], hs[2][INET_ADDRSTRLEN] = { "", "" };
    int more = 0, n = route_hops(hops, devs, &more);
    for (int i = 0; i < n && i < 2; i++) {
        struct in_addr h = { htonl(hops[i]) };
        inet_ntop(AF_INET, &h, hs[i], sizeof hs[i]);
        for (size_t k = 0; k < sizeof usual / sizeof usual[0]; k++)
            udp_relay_add(hs[i], usual[k]);
    }
    static struct nexthop6 hops6[ROUTE_HOPS];
    int n6 = route6_hops(hops6, ROUTE_HOPS);
    for (int i = 0; i < n6 && i < 2; i++) /* the same at the first two IPv6 next hops */
        for (size_t k = 0; k < sizeof usual / sizeof usual[0]; k++)
            udp_relay_add(hops6[i].name, usual[k]);
    snprintf(copy, sizeof copy, "%s", o.host_udp ? o.host_udp : "");
    for (char *save = NULL, *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        char *colon = strrchr(l, ':'), host[INET6_ADDRSTRLEN];
        unsigned port = colon ? (unsigned)strtoul(colon + 1, NULL, 10) : 0;
        if (!strcmp(l, "...")) /* the host listed more than it hands over */
            g_host_udp_over = 1;
        if (!colon || !port || port > 65535)
            continue;
        *colon = '\0';
        int six = *l == '[';
        snprintf(host, sizeof host, "%.*s", (int)(six ? strlen(l) - 2 : strlen(l)), l + six);
        const char *end = six ? o.host6 : o.host4; /* the host's end of the canary's link */
        if ((six && !strcmp(host, "::")) || !strcmp(host, "0.0.0.0")) {
            udp_relay_add(end ? end : "", port);
            if (six && o.host4) /* dual-stack as often as not */
                udp_relay_add(o.host4, port);
            udp_relay_add(hs[0], port);
            if (six && n6) /* and the first IPv6 hop */
                udp_relay_add(hops6[0].name, port);
        } else if ((end && !strcmp(host, end)) || !strcmp(host, hs[0]) || !strcmp(host, hs[1])) {
            udp_relay_add(host, port);
        } else {
            struct in6_addr a6;
            int hop = 0;
            for (int i = 0; i < n6 && i < 2 && six && inet_pton(AF_INET6, host, &a6) == 1 && !hop; i++)
                if ((hop = !memcmp(&a6, &hops6[i].a, sizeof a6))) /* by the hop's name: its link */
                    udp_relay_add(hops6[i].name, port);
            if (!hop && !link_local6(host)) /* the host's address on another link: weak host */
                udp_relay_add(host, port);
        }
    }
    return g_host_udp_over;
}
