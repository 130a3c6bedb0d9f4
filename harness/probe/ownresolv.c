/* dns-own's resolvers: those the sandbox's /etc/resolv.conf names (libc's default,
 * 127.0.0.1, where it names none), each asked by own_dns_add (dns.c), and the gate
 * that keeps harness's queries within --resolver-ranges.
 * A nameserver is taken as libc takes it: an IPv4 or IPv6 address, the IPv6 one with
 * a scope where it is link-local (`fe80::1%eth0`, as router-advertised DNS writes it:
 * an interface's name or number). A nameserver line the probe cannot parse is an
 * error on dns-own's line, never a silent fall back to libc's default: the resolver
 * it names is one libc may ask, and it was not asked.
 * A query's socket that socket(2) refused every way as a filter refuses (EPERM, EACCES)
 * is made by the i386 entry or io_uring (sock_entries, the way named: att_start), and
 * so is the gate's: a sidecar's resolver answers a socket of any entry's. */

#include "probe.h"

static int in_ranges(const Addr *a, const char *ranges)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", ranges ? ranges : "");
    for (char *save = NULL, *r = strtok_r(buf, ",", &save); r; r = strtok_r(NULL, ",", &save)) {
        char *slash = strchr(r, '/');
        int bits = slash ? atoi(slash + 1) : -1;
        if (slash)
            *slash = '\0';
        unsigned char net[16], *ip;
        int len;
        if (a->ss_family == AF_INET && inet_pton(AF_INET, r, net) == 1) {
            ip = (unsigned char *)&((struct sockaddr_in *)(void *)a)->sin_addr;
            len = 4;
        } else if (a->ss_family == AF_INET6 && inet_pton(AF_INET6, r, net) == 1) {
            ip = (unsigned char *)&((struct sockaddr_in6 *)(void *)a)->sin6_addr;
            len = 16;
        } else {
            continue;
        }
        if (bits < 0 || bits > len * 8)
            bits = len * 8;
        int ok = 1;
        for (int i = 0; i < bits && ok; i++)
            ok = ((ip[i / 8] ^ net[i / 8]) & (0x80 >> (i % 8))) == 0;
        if (ok)
            return 1;
    }
    return 0;
}

/* The sandbox's own resolvers (/etc/resolv.conf; libc's default where it names none):
 * its first three nameserver lines, as libc's. */
void sweep_own_dns(const char *denied)
{
    char conf[4096];
    ssize_t n = read_file("/etc/resolv.conf", conf, sizeof conf - 1);
    int found = 0;
    conf[n > 0 ? n : 0] = '\0';
    for (char *save = NULL, *l = strtok_r(conf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        char ip[128], spec[144];
        Addr check;
        if (sscanf(l, " nameserver %127s", ip) != 1 || found == 3)
            continue;
        found++;
        snprintf(spec, sizeof spec, strchr(ip, ':') ? "[%s]:53" : "%s:53", ip);
        if (parse_addr(spec, &check) == 0) {
            own_dns_add(spec, "own resolver", denied, DNS_BOTH);
            continue;
        }
        struct att *a = att_new(sweep_id[SW_DNS_OWN], G_OWN_DNS);
        if (a) { /* libc may ask it (a scope by a name this probe does not know): no proof */
            snprintf(a->dsts, sizeof a->dsts, "%.100s (own resolver)", ip);
            att_end(a, OC_ERROR, 0, "cannot parse resolv.conf's nameserver %.100s: the resolver it names"
                    " was not asked", ip);
        }
    }
    if (!found) /* no nameserver named: libc asks the local host */
        own_dns_add("127.0.0.1:53", "libc default, no resolv.conf", denied, DNS_BOTH);
}

/* A resolver outside --resolver-ranges is asked only if no packet could leave:
 * connecting a UDP socket sends nothing, and tells whether there is a route. A
 * listener bound in the sandbox's own network namespace is asked: the query is
 * delivered there, and what that listener does with it is what is tested. So is a
 * link-local address (fe80::/10, with its scope) where the probe stands in a network
 * namespace not the host's: link-local is never routed, the query goes no further than
 * the far end of one of the sandbox's own links (the host's end of a veth its launcher
 * made), which is what a resolv.conf written by router-advertised DNS names; where the
 * probe may stand in the host's namespace, that far end is the host's own network's,
 * and it is gated as any other. */
void own_dns_gate(struct att *a)
{
    if (a->listed || in_ranges(&a->dst, o.resolver_ranges)) /* listed: bound in its own namespace */
        return;
    const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)(const void *)&a->dst;
    if (a->dst.ss_family == AF_INET6 && IN6_IS_ADDR_LINKLOCAL(&s6->sin6_addr) && s6->sin6_scope_id &&
        !maybe_host_netns())
        return;
    int fd = sock_make(a->family, SOCK_DGRAM | SOCK_CLOEXEC, 0); /* (every way: sockways.c) */
    if (fd < 0 && (errno == EPERM || errno == EACCES)) /* refused as a filter refuses: the other entries' */
        fd = sock_entries(a->family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        att_end(a, OC_BLOCKED, errno, "socket for %s", a->dsts);
        return;
    }
    char way[120] = ""; /* connect(2) refused as a filter refuses: the other entries' */
    if (connect(fd, (struct sockaddr *)&a->dst, addr_len(&a->dst)) != 0 &&
        ((errno != EPERM && errno != EACCES && errno != ENOSYS) ||
         connect_entries(fd, (struct sockaddr *)&a->dst, addr_len(&a->dst), way, sizeof way) != 0)) {
        int e = errno;
        close(fd);
        att_end(a, OC_BLOCKED, e, "no route to %s", a->dsts);
        return;
    }
    close(fd);
    /* Typically the host's /etc bound in: say what makes the attempt possible. */
    att_end(a, OC_ERROR, 0,
            "%s%s is outside the resolver ranges harness may query; not tried: bind a resolv.conf"
            " naming one inside them (the canary's) over the sandbox's /etc/resolv.conf",
            a->dsts, way);
}

