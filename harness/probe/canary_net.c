/* The canary's network, mode "canary": move into the outside namespace (--netns)
 * and configure its end of the link, IPv4 and IPv6 (--iface, --cidr, --gw). */

#include "probe.h"

/* --netns/--iface: move into the outside namespace and configure its end. */
void canary_network(const char *netns, const char *iface, const char *cidr, const char *gw)
{
    if (netns) {
        int fd = open(netns, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || setns(fd, CLONE_NEWNET))
            fatal(2, "setns %s: %s", netns, strerror(errno));
        close(fd);
    }
    if (!iface)
        return;
    char addr[64];
    int prefix = 0;
    const char *slash = cidr ? strchr(cidr, '/') : NULL;
    if (!slash || (size_t)(slash - cidr) >= sizeof addr || sscanf(slash + 1, "%d", &prefix) != 1
        || prefix < 1 || prefix > 32)
        fatal(2, "bad --iface-addr (want IPV4/PREFIX): %s", cidr ? cidr : "(none)");
    memcpy(addr, cidr, (size_t)(slash - cidr));
    addr[slash - cidr] = '\0';
    int sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (sock < 0 || net_ifup(sock, "lo", NULL, 0))
        fatal(2, "lo: %s", strerror(errno));
    if (net_ifup(sock, iface, addr, prefix))
        fatal(2, "%s: %s", iface, strerror(errno));
    if (gw && net_default_route(sock, gw))
        fatal(2, "default route via %s: %s", gw, strerror(errno));
    close(sock);
}

/* struct in6_ifreq (linux/ipv6.h, which musl's headers cannot include). */
struct probe_in6_ifreq { struct in6_addr addr; uint32_t prefixlen; int ifindex; };

/* --iface-addr6/--gateway6: the outside end's IPv6 address (no duplicate address
 * detection: the address must be usable at once) and a default route back. */
void canary_network6(const char *iface, const char *cidr, const char *gw)
{
    char addr[64], path[128];
    int prefix = 0;
    const char *slash = cidr ? strchr(cidr, '/') : NULL;
    if (!iface)
        fatal(2, "--iface-addr6 needs --iface");
    if (!slash || (size_t)(slash - cidr) >= sizeof addr || sscanf(slash + 1, "%d", &prefix) != 1
        || prefix < 1 || prefix > 128)
        fatal(2, "bad --iface-addr6 (want IPV6/PREFIX): %s", cidr);
    memcpy(addr, cidr, (size_t)(slash - cidr));
    addr[slash - cidr] = '\0';
    snprintf(path, sizeof path, "/proc/sys/net/ipv6/conf/%s/accept_dad", iface);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
        (void)!write(fd, "0\n", 2);
        close(fd);
    }
    struct probe_in6_ifreq r = { .prefixlen = (uint32_t)prefix, .ifindex = (int)if_nametoindex(iface) };
    int sock = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (sock < 0)
        fatal(2, "IPv6 socket: %s", strerror(errno));
    if (!r.ifindex || inet_pton(AF_INET6, addr, &r.addr) != 1 || ioctl(sock, SIOCSIFADDR, &r))
        fatal(2, "%s: IPv6 address %s: %s", iface, addr, strerror(errno));
    /* Until the kernel has seen the link come up (its link watch may lag a second
     * under load), the address stays tentative and cannot be bound: wait for it. */
    char hex[33], table[8192];
    for (int i = 0; i < 16; i++)
        snprintf(hex + 2 * i, 3, "%02x", r.addr.s6_addr[i]);
    for (int tries = 0;; tries++) {
        ssize_t n = read_file("/proc/net/if_inet6", table, sizeof table - 1);
        table[n > 0 ? n : 0] = '\0';
        char *line = strstr(table, hex);
        unsigned flags = 0x40;
        if (line && sscanf(line, "%*32s %*x %*x %*x %x", &flags) != 1)
            flags = 0x40;
        if (!(flags & 0x40 /* IFA_F_TENTATIVE */))
            break;
        if (tries == 500)
            fatal(2, "%s: IPv6 address %s still tentative after 10 s", iface, addr);
        usleep(20000);
    }
    if (gw) {
        struct in6_rtmsg rt;
        memset(&rt, 0, sizeof rt);
        rt.rtmsg_flags = RTF_UP | RTF_GATEWAY;
        rt.rtmsg_metric = 1;
        rt.rtmsg_ifindex = r.ifindex;
        if (inet_pton(AF_INET6, gw, &rt.rtmsg_gateway) != 1 || ioctl(sock, SIOCADDRT, &rt))
            fatal(2, "IPv6 default route via %s: %s", gw, strerror(errno));
    }
    close(sock);
}
