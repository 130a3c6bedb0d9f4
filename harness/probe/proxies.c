/* The sweep's `tcp-proxy` line: a relay to anywhere that listens on TCP where the
 * workload can reach it without leaving its network namespace (a sidecar proxy bound
 * on the sandbox's own loopback, its outgoing side in the host's network), asked by
 * HTTP CONNECT, SOCKS5 and an absolute-URI GET to reach the canary (relaytalk.c), as
 * unix-proxy asks every unix socket.
 * Tried: every TCP listener of the sandbox's own network namespace
 * (/proc/net/tcp and tcp6, a wildcard address by loopback), and every proxy its
 * environment names by address (http_proxy, https_proxy, all_proxy, either case).
 * Where the probe may stand in the host's network namespace (the control, a
 * co-located sandbox) the listeners are the host's own, on any of its addresses: each
 * is asked but those harness's listing of the host names as an SSH daemon's own or a
 * canary's (--host-tcp-skip); without that listing none is, and the line is an error
 * unless an environment's proxy escaped. Its UDP listeners are not tried there. A sandbox that shows no /proc (no listener can be listed, the
 * namespace not told) is an error.
 * Every port is tried (a relay on the canary's own port number, 8080, is a relay).
 * A relay's socket that socket(2) refused every way as a filter refuses (EPERM, EACCES)
 * is made by the i386 entry or io_uring (sock_entries, the way named): the sweep's own
 * lines of those entries aim at the canary, which a sidecar's namespace does not reach.
 * Credentials in a proxy's address go to that proxy alone, and are never printed. */

#include "probe.h"

#define PROXY_MAX 48 /* relays tried, at most: more make the line an error */

static int g_proxy_cut; /* more relays in view than are tried: no proof */
static int g_in_host_netns;
static int g_unlisted; /* no /proc to list the namespace's listeners by, or tell it by */
static int g_host_unlisted; /* in the host's namespace, without harness's listing of it */

/* A relay at `host`:`port`, asked each way; `login`: relay_login's, 0 none. */
static void proxy_add(const char *host, unsigned port, int login)
{
    char dsts[96];
    snprintf(dsts, sizeof dsts, strchr(host, ':') ? "[%s]:%u" : "%s:%u", host, port);
    size_t relays = 0;
    for (size_t i = 0; i < g_natt; i++) {
        if (g_att[i].group != G_PROXY)
            continue;
        if (!strcmp(g_att[i].dsts, dsts))
            return;
        relays++;
    }
    if (relays >= RELAY_WAYS * PROXY_MAX) {
        g_proxy_cut = 1;
        return;
    }
    static const int ways[RELAY_WAYS] = { X_HTTP, X_SOCKS, X_GET };
    for (int w = 0; w < RELAY_WAYS; w++) {
        int talk = ways[w];
        struct att *a = sweep_add(sweep_id[SW_TCP_PROXY], host, (int)port, SOCK_STREAM, talk);
        if (a)
            a->group = G_PROXY, a->login = login;
        if (a && talk == X_SOCKS && a->state != S_DONE) /* after the HTTP CONNECT */
            a->after = (size_t)(a - g_att), a->state = S_WAIT;
    }
}

/* A TCP listener of the sandbox's own namespace asked as a resolver too (dns-own-tcp:
 * a sidecar's DNS-over-TCP forwarder that resolv.conf does not name, a stub on 5353),
 * at most 16; one resolv.conf names is asked already. */
static void tcp_resolver_add(const char *host, unsigned port)
{
    static int asked;
    char spec[96];
    snprintf(spec, sizeof spec, strchr(host, ':') ? "[%s]:%u" : "%s:%u", host, port);
    size_t n = strlen(spec);
    for (size_t i = 0; i < g_natt; i++)
        if (g_att[i].group == G_OWN_DNS_TCP && !strncmp(g_att[i].dsts, spec, n) && g_att[i].dsts[n] == ' ')
            return;
    if (asked++ >= 16 || !o.denied_name)
        return;
    size_t before = g_natt;
    own_dns_add(spec, "a TCP listener of its namespace", o.denied_name, DNS_TCP);
    for (size_t i = before; i < g_natt; i++)
        g_att[i].listed = 1; /* its own namespace's: always asked (own_dns_gate) */
}

/* An address as /proc/net/tcp, udp and their IPv6 twins print it: each 32-bit word
 * in hex as the kernel holds it. */
static int hex_addr(const char *hex, int six, unsigned char raw[16])
{
    size_t words = six ? 4 : 1;
    if (strlen(hex) != words * 8)
        return -1;
    for (size_t w = 0; w < words; w++) {
        char chunk[9];
        memcpy(chunk, hex + 8 * w, 8);
        chunk[8] = '\0';
        uint32_t v = (uint32_t)strtoul(chunk, NULL, 16);
        memcpy(raw + 4 * w, &v, 4);
    }
    return 0;
}

/* Whether `host` is one the canary listens at (its own addresses, which listen mode
 * may put on the host's loopback; the host's and the metadata addresses, where it
 * answers on the high port): none of them is taken for a relay. */
static int canary_address(const char *host)
{
    const char *const mine[] = { o.canary4, o.canary6, o.host4, o.host6, o.meta4, o.meta6 };
    for (size_t i = 0; i < sizeof mine / sizeof mine[0]; i++)
        if (mine[i] && *mine[i] && !strcmp(host, mine[i]))
            return 1;
    return elsewhere_has(host);
}

/* Whether the host named `host`:`port` among the listeners never asked (its SSH
 * daemons', a canary's: --host-tcp-skip, "ADDR:PORT" per line, hostside/listeners.py). */
static int host_skips(const char *host, unsigned port)
{
    char want[80];
    snprintf(want, sizeof want, strchr(host, ':') ? "[%s]:%u" : "%s:%u", host, port);
    size_t n = strlen(want);
    for (const char *at = o.host_tcp_skip; at && (at = strstr(at, want)); at += n)
        if ((at == o.host_tcp_skip || at[-1] == '\n') && (at[n] == '\n' || at[n] == '\0'))
            return 1;
    return 0;
}

/* /proc/net/tcp or tcp6: each listener (state 0A), a wildcard address by loopback
 * (tcp6's at ::1 and at 127.0.0.1: /proc does not say whether it is IPv6 only), a
 * v4-mapped one at its IPv4 address; where `host` (the probe may stand in the host's
 * namespace, whose every address a co-located sandbox reaches), never one the host
 * skips nor the canary's own; -1 where the table cannot be read. */
static int listeners(const char *table, int six, int host)
{
    FILE *f = proc_net_fopen(table);
    if (!f)
        return -1;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        char hex[40], st[4];
        unsigned port;
        if (sscanf(line, "%*s %39[0-9A-Fa-f]:%x %*s %3s", hex, &port, st) != 3 || strcmp(st, "0A"))
            continue;
        unsigned char raw[16];
        if (hex_addr(hex, six, raw) != 0)
            continue;
        char name[INET6_ADDRSTRLEN];
        static const unsigned char any[16];
        if (!memcmp(raw, any, six ? 16 : 4)) { /* a wildcard: by loopback; tcp6's may be dual-stack */
            if (host && host_skips(six ? "::" : "0.0.0.0", port))
                continue;
            proxy_add(six ? "::1" : "127.0.0.1", port, 0);
            if (six)
                proxy_add("127.0.0.1", port, 0);
            if (!host)
                tcp_resolver_add(six ? "::1" : "127.0.0.1", port);
            continue;
        }
        static const unsigned char mapped[12] = { [10] = 0xff, [11] = 0xff };
        int v4 = six && !memcmp(raw, mapped, 12); /* ::ffff:a.b.c.d takes IPv4 (a Java proxy's) */
        if (inet_ntop(six && !v4 ? AF_INET6 : AF_INET, v4 ? raw + 12 : raw, name, sizeof name) &&
            (!host || (!host_skips(name, port) && !canary_address(name)))) {
            proxy_add(name, port, 0);
            if (!host)
                tcp_resolver_add(name, port);
        }
    }
    fclose(f);
    return 0;
}

/* Each address the sandbox's own /etc/hosts gives `name` (a proxy named as a corporate
 * setup names it, `proxy.internal`), added as a proxy at `port`. Nothing is asked of a
 * resolver here: a name only DNS knows is not looked up (the query would be a line of
 * its own). */
static void hosts_proxy(const char *name, unsigned port, int login)
{
    char line[512];
    FILE *f = fopen("/etc/hosts", "r");
    while (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "#")] = '\0';
        char *save = NULL, *addr = strtok_r(line, " \t\r\n", &save);
        unsigned char a[16];
        if (!addr || (inet_pton(AF_INET, addr, a) != 1 && inet_pton(AF_INET6, addr, a) != 1))
            continue;
        for (char *n = strtok_r(NULL, " \t\r\n", &save); n; n = strtok_r(NULL, " \t\r\n", &save))
            if (!strcasecmp(n, name)) {
                proxy_add(addr, port, login);
                break;
            }
    }
    if (f)
        fclose(f);
}

/* A proxy variable's URL ([scheme://][user[:password]@]host[:port][/...]): its address,
 * by number, localhost, or a name the sandbox's /etc/hosts gives (hosts_proxy), and
 * its login (percent-encoded), kept for that proxy alone. */
static char g_proxy_tls[40]; /* a variable naming a proxy spoken to over TLS (https://) */

static void env_proxy(const char *entry)
{
    char buf[1024], var[40], *h, *at;
    size_t n = strcspn(entry, "=");
    snprintf(var, sizeof var, "%.*s", (int)n, entry);
    snprintf(buf, sizeof buf, "%s", entry + n + 1);
    if (!strncasecmp(buf, "https://", 8) && !g_proxy_tls[0]) /* TLS first: no dialect here */
        snprintf(g_proxy_tls, sizeof g_proxy_tls, "%s", var);
    h = strstr(buf, "://") ? strstr(buf, "://") + 3 : buf;
    int login = 0;
    if ((at = strrchr(h, '@'))) {
        *at = '\0';
        char *colon = strchr(h, ':');
        if (colon)
            *colon++ = '\0';
        login = relay_login(h, colon ? colon : "", var);
        h = at + 1;
    }
    h[strcspn(h, "/?#")] = '\0';
    unsigned port = 1080; /* curl's, where none is given */
    char *host = h, *colon;
    if (*h == '[') {
        char *close = strchr(h, ']');
        if (!close)
            return;
        *close = '\0';
        host = h + 1;
        if (close[1] == ':')
            port = (unsigned)strtoul(close + 2, NULL, 10);
    } else if ((colon = strrchr(h, ':'))) {
        *colon = '\0';
        port = (unsigned)strtoul(colon + 1, NULL, 10);
    }
    if (!strcmp(host, "localhost"))
        host = "127.0.0.1";
    unsigned char a[16];
    if (!port || port >= 65536)
        return;
    if (inet_pton(AF_INET, host, a) == 1 || inet_pton(AF_INET6, host, a) == 1)
        proxy_add(host, port, login);
    else if (*host)
        hosts_proxy(host, port, login);
}

#define UDP_LISTENED_MAX 16 /* UDP listeners asked, at most: more are an error line */

static int g_udp_over; /* more UDP listeners in view than are asked: no proof */

/* A UDP socket bound to a connected relay's peer, `raw`:`port` on loopback (socat's
 * `UDP4:127.0.0.1:5000,bind=127.0.0.1:8125`, which answers only that peer), so that the
 * marked datagram comes from where the relay waits for it; -1 where the peer is there
 * already, or its port is not the workload's to bind. */
static int peer_socket(int six, const unsigned char raw[16], unsigned port)
{
    Addr a;
    memset(&a, 0, sizeof a);
    if (six) {
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)(void *)&a;
        s6->sin6_family = AF_INET6;
        memcpy(&s6->sin6_addr, raw, 16);
        s6->sin6_port = htons((uint16_t)port);
    } else {
        struct sockaddr_in *s4 = (struct sockaddr_in *)(void *)&a;
        s4->sin_family = AF_INET;
        memcpy(&s4->sin_addr, raw, 4);
        s4->sin_port = htons((uint16_t)port);
    }
    int fd = sock_make(six ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 && (errno == EPERM || errno == EACCES)) /* refused as a filter refuses: the other entries' */
        fd = sock_entries(six ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, addr_len(&a)) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}
static int g_udp_unlisted; /* no /proc/net/udp to list them by */

/* Every UDP socket bound in the sandbox's own network namespace and connected to
 * nothing (/proc/net/udp and udp6: state 07, no remote address), a wildcard by
 * loopback (udp6's at ::1 and at 127.0.0.1), asked twice: as a resolver, on dns-own's
 * line as its resolv.conf's are (a sidecar's forwarding resolver that resolv.conf does
 * not name, a dnsmasq at 127.0.0.1:5353), and by a marked datagram, on udp-relay's (a
 * sidecar relaying datagrams out: a statsd or syslog shipper aimed anywhere). One
 * connected to a peer of this namespace's own (loopback, v4-mapped loopback, any
 * address here: one the probe can bind) whose port is free is sent the marked datagram
 * from that peer's address (a relay that answers one client). Not where the probe may
 * stand in the host's network namespace (the host's own services), nor without /proc.
 * The probe's own UDP sockets are connected at this time (dns_query's): one whose
 * peer's port is free gets a line it drops. */
void sweep_udp_listeners(const char *denied)
{
    struct stat self;
    g_udp_unlisted = netns_stat(&self) != 0;
    if (g_udp_unlisted || maybe_host_netns())
        return;
    int asked = 0;
    for (int six = 0; six < 2; six++) {
        FILE *f = proc_net_fopen(six ? "udp6" : "udp");
        g_udp_unlisted |= !f && !six; /* udp6 is missing where the kernel has no IPv6 */
        char line[512];
        while (f && fgets(line, sizeof line, f)) {
            char hex[40], rem[40];
            unsigned port, rport, st;
            unsigned char raw[16], rraw[16];
            static const unsigned char any[16];
            if (sscanf(line, "%*s %39[0-9A-Fa-f]:%x %39[0-9A-Fa-f]:%x %x", hex, &port, rem, &rport, &st) != 5 ||
                hex_addr(hex, six, raw) || hex_addr(rem, six, rraw))
                continue;
            int peer = st == 1 && rport; /* connected: a relay if its peer is this namespace's */
            if (!peer && (st != 7 || rport || memcmp(rraw, any, six ? 16 : 4)))
                continue; /* neither a listener nor a relay waiting on a peer of its own */
            int from = -1; /* connected to a peer here: sent from that peer's address */
            if (peer && (from = peer_socket(six, rraw, rport)) < 0)
                continue; /* not an address here, the peer is there, or its port is not ours */
            char way[200]; /* the way its socket took (sock_way) */
            snprintf(way, sizeof way, "%s", from >= 0 ? sock_way() : "");
            char host[INET6_ADDRSTRLEN] = "", spec[80];
            int wild = !memcmp(raw, any, six ? 16 : 4);
            for (int v4 = 0; v4 <= (wild && six); v4++) {
                if (wild)
                    snprintf(host, sizeof host, "%s", six && !v4 ? "::1" : "127.0.0.1");
                else if (!inet_ntop(six ? AF_INET6 : AF_INET, raw, host, sizeof host))
                    continue;
                snprintf(spec, sizeof spec, strchr(host, ':') ? "[%s]:%u" : "%s:%u", host, port);
                int known = 0;
                for (size_t i = 0; i < g_natt && !known; i++)
                    known = g_att[i].group == G_UDP_RELAY && dsts_is(g_att[i].dsts, spec);
                if (known)
                    continue;
                if (asked == UDP_LISTENED_MAX) {
                    g_udp_over = 1;
                    continue;
                }
                struct att *a = sweep_add(sweep_id[SW_UDP_RELAY], host, (int)port, SOCK_DGRAM, X_LINE);
                if (!a)
                    continue;
                a->group = G_UDP_RELAY;
                asked++;
                if (from >= 0) { /* its socket, already bound: sent as a held one is */
                    a->fd = from, a->held = 1, a->how = H_SENDTO, from = -1;
                    size_t l = strlen(a->dsts);
                    snprintf(a->dsts + l, sizeof a->dsts - l, "%s", way);
                    continue; /* a resolver answers anyone: none waits on one peer */
                }
                int named = 0; /* resolv.conf's already: asked once */
                for (size_t i = 0; i < g_natt && !named; i++)
                    named = g_att[i].group == G_OWN_DNS && !strncmp(g_att[i].dsts, spec, strlen(spec)) &&
                            g_att[i].dsts[strlen(spec)] == ' ';
                size_t before = g_natt;
                if (!named)
                    own_dns_add(spec, "a UDP listener of its namespace", denied, DNS_UDP);
                if (g_natt > before)
                    g_att[before].listed = 1;
            }
            if (from >= 0)
                close(from); /* not asked after all (known, or over the limit) */
        }
        if (f)
            fclose(f);
    }
    struct att *a = g_udp_over ? att_new(sweep_id[SW_DNS_OWN], G_OWN_DNS) : NULL;
    if (a) { /* dns-own's line too: a listener not asked may forward queries */
        snprintf(a->dsts, sizeof a->dsts, "more than %d UDP listeners", UDP_LISTENED_MAX);
        att_end(a, OC_ERROR, 0, "more UDP listeners in its network namespace than are asked (%d):"
                " no proof that none forwards", UDP_LISTENED_MAX);
    }
    if (host_udp_relays()) /* the host's, and the shippers' usual ports (hostudp.c) */
        g_udp_over = 1;
}

/* Whether an environment variable's name says it names a proxy: `*_proxy` in any case
 * (http_proxy, HTTPS_PROXY, all_proxy, ftp_proxy, socks_proxy, npm_config_proxy, ...),
 * and `proxy` itself, but not no_proxy, which names what goes around one. */
static int proxy_variable(const char *entry)
{
    size_t n = strcspn(entry, "=");
    if (n < 5 || !entry[n] || !strncasecmp(entry, "no_proxy", n))
        return 0;
    return !strncasecmp(entry + n - 5, "proxy", 5) && (n == 5 || entry[n - 6] == '_');
}

/* Whether `host` is an IPv6 link-local address, which names no place without its link:
 * one of the host's other links' is out of reach. */
int link_local6(const char *host)
{
    struct in6_addr a;
    return inet_pton(AF_INET6, host, &a) == 1 && IN6_IS_ADDR_LINKLOCAL(&a);
}

/* The host's own TCP listeners (--host-tcp, "ADDR:PORT" per line: those it names, bound
 * beyond loopback, less those it never has asked: hostside/listeners.py), from a
 * network namespace of the sandbox's own: one bound to every IPv4 address at the host's
 * end of the canary's link (--host4) and at the first IPv4 next hop of this namespace's
 * routes, one bound to every IPv6 address at --host6 and at the first IPv6 next hop
 * (routes6.c's: a gateway, a neighbour, an attached prefix's first addresses; a
 * link-local one with its link) and, as it takes IPv4 too as often as not, at the IPv4
 * ones as well, and one bound to one of those addresses there; and at the first two
 * next hops of each family, the ports proxies listen at by default (squid's,
 * tinyproxy's, privoxy's, SOCKS's, Tor's, 8080), where a gateway that is not the host,
 * or a proxy started after the host's list, stands. A proxy at the sandbox's gateway
 * (squid on 0.0.0.0:3128, on the link's own address; on [net::1]:3128 where the link
 * has an IPv6 ULA alone) is a relay nothing needs to name. One bound to the host's
 * address on another link (its LAN address, a bridge's) is asked there: a host takes
 * packets for any address it holds, from whichever link they come (the weak host
 * model), so a sandbox whose routes lead through the host reaches it; where
 * none does, the connect fails at once. */
static void host_tcp_relays(void)
{
    static const unsigned usual[] = { 3128, 8080, 8888, 8118, 1080, 9050 };
    uint32_t hops[ROUTE_HOPS];
    char devs[ROUTE_HOPS][IFNAMSIZ], copy[4096];
    int more = 0, n = route_hops(hops, devs, &more);
    static struct nexthop6 hops6[ROUTE_HOPS];
    int n6 = route6_hops(hops6, ROUTE_HOPS);
    for (int i = 0; i < n && i < 2; i++) { /* the first two: within PROXY_MAX's room */
        struct in_addr h = { htonl(hops[i]) };
        char hs[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, &h, hs, sizeof hs);
        for (size_t k = 0; k < sizeof usual / sizeof usual[0] && !canary_address(hs); k++)
            proxy_add(hs, usual[k], 0);
    }
    for (int i = 0; i < n6 && i < 2; i++) /* the same at the first two IPv6 next hops */
        for (size_t k = 0; k < sizeof usual / sizeof usual[0] && !canary_address(hops6[i].name); k++)
            proxy_add(hops6[i].name, usual[k], 0);
    snprintf(copy, sizeof copy, "%s", o.host_tcp ? o.host_tcp : "");
    for (char *save = NULL, *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        if (!strcmp(l, "...")) { /* the host listed more than it hands over: no proof */
            g_proxy_cut = 1;
            continue;
        }
        char *colon = strrchr(l, ':'), host[INET6_ADDRSTRLEN];
        unsigned port = colon ? (unsigned)strtoul(colon + 1, NULL, 10) : 0;
        long high = o.high_port ? strtol(o.high_port, NULL, 10) : 0;
        if (!colon || !port || port > 65535 || (long)port == high || (int)port == allowed_port())
            continue; /* (the canary's own ports, whoever the host says holds them) */
        *colon = '\0';
        int six = *l == '[';
        snprintf(host, sizeof host, "%.*s", (int)(six ? strlen(l) - 2 : strlen(l)), l + six);
        const char *end = six ? o.host6 : o.host4; /* the host's end of the canary's link */
        int any6 = six && !strcmp(host, "::"); /* dual-stack as often as not: IPv4 too */
        if (any6 && end && *end)
            proxy_add(end, port, 0);
        if (any6 || !strcmp(host, "0.0.0.0")) {
            if (o.host4 && *o.host4)
                proxy_add(o.host4, port, 0);
            for (int i = 0; i < n && i < 1; i++) { /* the first hop (PROXY_MAX's room) */
                struct in_addr h = { htonl(hops[i]) };
                char hs[INET_ADDRSTRLEN];
                inet_ntop(AF_INET, &h, hs, sizeof hs);
                if (!canary_address(hs))
                    proxy_add(hs, port, 0);
            }
            for (int i = 0; any6 && i < n6 && i < 1; i++) /* and the first IPv6 hop */
                if (!canary_address(hops6[i].name))
                    proxy_add(hops6[i].name, port, 0);
            continue;
        }
        int reach = end && !strcmp(host, end);
        const char *at = host; /* a link-local hop's by its name, with its link */
        struct in_addr a;
        struct in6_addr a6;
        for (int i = 0; i < n && !six && !reach && inet_pton(AF_INET, host, &a) == 1; i++)
            reach = ntohl(a.s_addr) == hops[i];
        for (int i = 0; i < n6 && six && !reach && inet_pton(AF_INET6, host, &a6) == 1; i++)
            if ((reach = !memcmp(&a6, &hops6[i].a, sizeof a6)))
                at = hops6[i].name;
        if (reach)
            proxy_add(at, port, 0);
        else if (!canary_address(host) && !link_local6(host))
            proxy_add(host, port, 0); /* the host's address on another link */
    }
}

void sweep_tcp_proxy(void)
{
    extern char **environ;
    for (char **e = environ; e && *e; e++)
        if (proxy_variable(*e) && (*e)[strcspn(*e, "=") + 1])
            env_proxy(*e);
    struct stat self;
    g_unlisted = netns_stat(&self) != 0; /* nothing can be told */
    g_in_host_netns = !g_unlisted && maybe_host_netns();
    if (g_unlisted)
        return;
    if (g_in_host_netns && !o.host_tcp_skip) { /* no word from the host of its SSH daemons: */
        g_host_unlisted = 1;                     /* its listeners are not asked, and no proof */
        return;
    }
    if (listeners("tcp", 0, g_in_host_netns) != 0)
        g_unlisted = 1;
    listeners("tcp6", 1, g_in_host_netns); /* none where the kernel has no IPv6 */
    if (!g_in_host_netns)
        host_tcp_relays();
}

/* A relay line: as group_report, but an error, unless one of the group escaped, where
 * the namespace's listeners could not be listed (`unlisted`: no /proc/net/`table`; -1,
 * the host's, not listed by harness) or more were in view than are tried (`over`, at
 * most `max`). */
static void relay_line(int group, const char *id, int unlisted, int over, const char *table, int max,
                       double t0, const char *none)
{
    int escaped = 0;
    for (size_t i = 0; i < g_natt; i++)
        escaped |= g_att[i].group == group && g_att[i].oc == OC_ESCAPED;
    char why[300];
    if (group == G_PROXY && g_proxy_tls[0] && !escaped)
        snprintf(why, sizeof why, "%s names a proxy spoken to over TLS (https://), which harness does"
                 " not speak: no proof that it is no way out", g_proxy_tls);
    else if (unlisted < 0 && !escaped)
        snprintf(why, sizeof why, "may stand in the host's network namespace, and harness did not list"
                 " the host's listeners (--host-tcp-skip): none was asked, no proof that none is a way out");
    else if (unlisted && !escaped)
        snprintf(why, sizeof why, "the sandbox shows no /proc/net/%s (nor /proc/self/net's): its network"
                 " namespace's listeners cannot be listed (a relay among them would be a way out)", table);
    else if (over && !escaped)
        snprintf(why, sizeof why, "more listeners in view than are tried (%d): no proof that none is a"
                 " way out", max);
    else {
        group_report(group, id, t0, none);
        return;
    }
    att_line(id, OC_ERROR, 0, why, t0, "", 0, NULL);
}

/* The tcp-proxy and udp-relay lines. */
void relay_report(double t0)
{
    relay_line(G_PROXY, sweep_id[SW_TCP_PROXY], g_host_unlisted ? -1 : g_unlisted, g_proxy_cut, "tcp",
               PROXY_MAX, t0,
               g_in_host_netns ? "may stand in the host's network namespace: no TCP listener of the host's"
                                 " but its SSH daemons' and the canary's, and no proxy named in its"
                                 " environment"
                               : "no TCP listener in the sandbox's network namespace and no proxy named"
                                 " in its environment");
    relay_line(G_UDP_RELAY, sweep_id[SW_UDP_RELAY], g_udp_unlisted, g_udp_over, "udp", UDP_LISTENED_MAX, t0,
               maybe_host_netns() ? "may stand in the host's network namespace, whose UDP listeners are"
                                    " the host's services (not tried)"
                                  : "no UDP listener in the sandbox's network namespace");
}
