/* The sweep's packet4 line: a packet socket of the probe's own (AF_PACKET, CAP_NET_RAW;
 * made by socket(2), io_uring or the i386 entry, whichever answers first) sends an
 * IPv4 packet it builds itself, the HARNESS line in a UDP datagram to the
 * canary's high port, to each next hop in view by its link address (asked by ARP where
 * the kernel knows none). No socket(AF_INET) and no route of the sandbox's is needed:
 * a filter on IP sockets, or a route that refuses the canary, leaves it open wherever
 * the workload keeps CAP_NET_RAW. Where the probe may stand in the host's network
 * namespace, only the hop of the kernel's own route to the canary is sent to (never a
 * frame to the host's other neighbours). One line for all; the canary's log decides. */

#include "probe.h"

#include <ifaddrs.h>
#include <linux/if_ether.h>
#include <net/if_arp.h>

#define PACKET_HOPS 8

/* Every kind of packet socket, in turn, until one is made: link headers written by the
 * probe (SOCK_RAW: first, as its frame may also go by write(2)) or by the kernel
 * (SOCK_DGRAM), for no protocol (first: its later bind to ARP waits out no grace
 * period) or for IPv4; last the oldest kind (SOCK_PACKET, for every protocol: its
 * header the probe's). A filter that refuses one kind leaves the others open. */
static const struct { int type, proto; } kinds[] = {
    { SOCK_RAW, 0 }, { SOCK_DGRAM, 0 }, { SOCK_RAW, ETH_P_IP }, { SOCK_DGRAM, ETH_P_IP },
    { SOCK_PACKET, ETH_P_ALL },
};
static int g_kind; /* the one made */
static const char *g_way = "socket"; /* the way it was made */

static int packet_socket(void)
{
    return packet_make(kinds[g_kind].type, kinds[g_kind].proto, &g_way);
}

struct hop_link {
    uint32_t addr;       /* the next hop (host byte order) */
    int ifindex;
    unsigned char mac[6];
    int known;           /* its link address is known (or it needs none) */
    int tun;             /* a TUN link: the packet goes as it is, with no link header */
    uint32_t self;       /* this namespace's address on that link (network order), or 0 */
    unsigned char own[6];
};

/* The sources a packet on a link where this namespace holds no IPv4 address is sent
 * from: the hop's neighbours on either side (in a /30 or a /24 one of them is the
 * sandbox's end of the link, so a host's strict reverse-path filter takes it), the
 * subnet's own and broadcast addresses passed over. At most two. */
static int made_up(uint32_t hop, uint32_t src[2])
{
    int n = 0;
    for (int k = 0; k < 2; k++) {
        uint32_t s = k ? hop - 1 : hop + 1;
        if ((s & 3) != 0 && (s & 3) != 3 && (s & 0xff) != 0 && (s & 0xff) != 255)
            src[n++] = htonl(s);
    }
    return n;
}

/* The link address the kernel's neighbour table holds for `addr` on `dev`, if any. */
static int arp_known(uint32_t addr, const char *dev, unsigned char mac[6])
{
    char line[256], ip[64], hw[64], name[64];
    unsigned flags;
    int found = 0;
    FILE *f = proc_net_fopen("arp");
    while (f && !found && fgets(line, sizeof line, f)) {
        struct in_addr a;
        unsigned m[6];
        if (sscanf(line, "%63s %*s %x %63s %*s %63s", ip, &flags, hw, name) != 4 ||
            inet_pton(AF_INET, ip, &a) != 1 || ntohl(a.s_addr) != addr || strcmp(name, dev) ||
            !(flags & ATF_COM) ||
            sscanf(hw, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]) != 6)
            continue;
        for (int i = 0; i < 6; i++)
            mac[i] = (unsigned char)m[i];
        found = 1;
    }
    if (f)
        fclose(f);
    return found;
}

/* Ask each hop whose link address is unknown by ARP (a request from this namespace's
 * address on the link, or from 0.0.0.0 where it has none: a probe, RFC 5227, which the
 * hop answers for its own address and learns nothing from; to the broadcast address), on the line's one packet socket `fd`
 * (bound to ARP on every link: every packet socket closed costs the closer an RCU grace
 * period, tens of milliseconds), answers read for at most `wait_ms` in all. */
static void arp_ask(struct hop_link *h, int n, int fd, int wait_ms)
{
    size_t eth = kinds[g_kind].type != SOCK_DGRAM ? 14 : 0;
    int asked = 0;
    if (packet_listen(fd, ETH_P_ARP) != 0)
        return;
    for (int i = 0; i < n; i++) {
        if (h[i].known)
            continue;
        struct sockaddr_ll ll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ARP),
                                  .sll_ifindex = h[i].ifindex, .sll_halen = 6 };
        memset(ll.sll_addr, 0xff, 6);
        unsigned char frame[14 + 28] = { 0 }, *req = frame + eth; /* SOCK_RAW: our own header */
        memset(frame, 0xff, 6);
        memcpy(frame + 6, h[i].own, 6);
        frame[12] = 0x08, frame[13] = 0x06; /* ETH_P_ARP */
        static const unsigned char head[8] = { 0, 1, 8, 0, 6, 4, 0, 1 }; /* Ethernet, IPv4, a request */
        memcpy(req, head, sizeof head);
        uint32_t tpa = htonl(h[i].addr);
        memcpy(req + 8, h[i].own, 6);
        memcpy(req + 14, &h[i].self, 4);
        memcpy(req + 24, &tpa, 4);
        const char *by;
        asked += frame_out(fd, eth != 0, req - eth, 28 + eth, &ll, &by) >= 0;
    }
    for (double end = now_ms() + wait_ms; asked;) {
        struct pollfd pf = { .fd = fd, .events = POLLIN };
        double left = end - now_ms();
        if (left <= 0 || poll(&pf, 1, (int)left + 1) <= 0)
            break;
        unsigned char buf[80], *rep = buf + eth;
        struct sockaddr_storage from;
        socklen_t fl = sizeof from;
        ssize_t r;
        while ((r = recvfrom(fd, buf, sizeof buf, MSG_DONTWAIT, (struct sockaddr *)&from, &fl)) >= 0) {
            uint32_t spa;
            memcpy(&spa, rep + 14, 4);
            for (int i = 0; i < n && r >= (ssize_t)(28 + eth) && rep[6] == 0 && rep[7] == 2; i++)
                if (!h[i].known && ntohl(spa) == h[i].addr && packet_on_link(fd, &from, h[i].ifindex)) {
                    memcpy(h[i].mac, rep + 8, 6); /* its reply */
                    h[i].known = 1;
                    asked--;
                }
            fl = sizeof from;
        }
    }
}

/* Whether a route of the main table leads off loopback (to a gateway, a link, a TUN
 * device): where none does, no frame has a next hop. */
static int off_loopback(void)
{
    char line[512], dev[64];
    int found = 0;
    FILE *f = proc_net_fopen("route");
    while (f && !found && fgets(line, sizeof line, f))
        found = sscanf(line, "%63s", dev) == 1 && strcmp(dev, "Iface") && strcmp(dev, "lo");
    if (f)
        fclose(f);
    return found;
}

/* On a link with a subnet wider than /29 and no hop found on it (no gateway, no
 * neighbour, no host route: a sandbox given a /16 to the host and no route), the
 * subnet's first and last host addresses, where a router most often stands. At most
 * `room`. */
static int wide_guesses(uint32_t *hops, char (*devs)[IFNAMSIZ], int n, int room)
{
    char line[512], dev[64];
    unsigned long dst, mask;
    int added = 0;
    FILE *f = proc_net_fopen("route");
    while (f && added + 2 <= room && fgets(line, sizeof line, f)) {
        if (sscanf(line, "%63s %lx %*x %*x %*d %*d %*d %lx", dev, &dst, &mask) != 3 || !strcmp(dev, "lo"))
            continue;
        uint32_t m = ntohl((uint32_t)mask), d = ntohl((uint32_t)dst) & m;
        int on_it = 0;
        for (int i = 0; i < n + added && !on_it; i++)
            on_it = !strcmp(devs[i], dev);
        if (on_it || m == 0 || m >= 0xfffffff8U)
            continue;
        for (int k = 0; k < 2; k++) {
            hops[n + added] = k ? (d | ~m) - 1 : d + 1;
            snprintf(devs[n + added++], IFNAMSIZ, "%.15s", dev);
        }
    }
    if (f)
        fclose(f);
    return added;
}

/* Every TUN link a route of this namespace leads into (a VPN client's shape), as a hop
 * of its own: a packet written there needs no next hop's address. At most `room`. */
static int tun_links(uint32_t *hops, char (*devs)[IFNAMSIZ], int room, int fd)
{
    char line[512], dev[64];
    int n = 0;
    FILE *f = proc_net_fopen("route");
    while (f && n < room && fgets(line, sizeof line, f)) {
        struct ifreq ifr;
        if (sscanf(line, "%63s", dev) != 1 || !strcmp(dev, "Iface") || !strcmp(dev, "lo"))
            continue;
        int seen = 0;
        for (int i = 0; i < n && !seen; i++)
            seen = !strcmp(devs[i], dev);
        memset(&ifr, 0, sizeof ifr);
        snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%.15s", dev);
        if (seen || ioctl(fd, SIOCGIFHWADDR, &ifr) != 0 || ifr.ifr_hwaddr.sa_family != ARPHRD_NONE)
            continue;
        hops[n] = 0; /* none needed */
        snprintf(devs[n++], IFNAMSIZ, "%.15s", dev);
    }
    if (f)
        fclose(f);
    return n;
}

/* What an attempt names: the canary, the way the socket was made, the hop or TUN link,
 * and the source where the link gives this namespace none of its own. */
static void packet_dsts(struct att *a, const char *canary4, int high, const struct hop_link *h, uint32_t src)
{
    char made[64] = "", hs[INET_ADDRSTRLEN], ss[INET_ADDRSTRLEN];
    struct in_addr hop = { htonl(h->addr) };
    inet_ntop(AF_INET, &hop, hs, sizeof hs);
    inet_ntop(AF_INET, &src, ss, sizeof ss);
    if (strcmp(g_way, "socket"))
        snprintf(made, sizeof made, " (made by %.40s)", g_way);
    if (h->tun)
        snprintf(a->dsts, sizeof a->dsts, "%.40s:%d by a packet socket%s, into the TUN link %d",
                 canary4, high, made, h->ifindex);
    else
        snprintf(a->dsts, sizeof a->dsts, "%.40s:%d by a packet socket%s, through %.40s on interface %d",
                 canary4, high, made, hs, h->ifindex);
    size_t len = strlen(a->dsts);
    if (!h->self) /* made up, where the link gives it no address of its own */
        snprintf(a->dsts + len, sizeof a->dsts - len, " (from %s, made up)", ss);
}

/* This namespace's IPv4 address on link `dev` (network order), or 0: by the socket's
 * ioctl (a packet socket's), else, where the socket's family has none (XDP's unix
 * socket), from the kernel's address list (netlink). */
static uint32_t own4(int fd, const char *dev)
{
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%.15s", dev);
    if (ioctl(fd, SIOCGIFADDR, &ifr) == 0)
        return ((struct sockaddr_in *)(void *)&ifr.ifr_addr)->sin_addr.s_addr;
    struct ifaddrs *all = NULL;
    uint32_t self = 0;
    if (errno == EADDRNOTAVAIL || getifaddrs(&all) != 0)
        return 0;
    for (struct ifaddrs *i = all; i && !self; i = i->ifa_next)
        if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && !strcmp(i->ifa_name, dev))
            self = ((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr.s_addr;
    freeifaddrs(all);
    return self;
}

/* Whether this kernel makes XDP sockets here (CAP_NET_RAW, and a filter that lets the
 * family through). The one made to tell is closed again (its release waits out an RCU
 * grace period: only where no packet socket could be made). */
static int xdp_family(void)
{
    int fd = socket(44 /* AF_XDP */, SOCK_RAW | SOCK_CLOEXEC, 0);
    if (fd >= 0)
        close(fd);
    return fd >= 0;
}

/* Each hop whose link address is unknown, by XDP: an echo request it answers after
 * asking this namespace by ARP (xsk_learn), the neighbour table read again for at most
 * `wait_ms`. Only from an address of this namespace's own on the link. */
static void xdp_ask(struct hop_link *h, int n, int wait_ms)
{
    int asked = 0;
    for (int i = 0; i < n; i++) {
        int fd = h[i].known || !h[i].self ? -1 : xsk_make(h[i].ifindex);
        if (fd >= 0)
            xsk_learn(fd, h[i].addr, h[i].self, h[i].own), asked++;
    }
    for (double end = now_ms() + wait_ms; asked && now_ms() < end;) {
        struct timespec ts = { 0, 20 * 1000000L };
        nanosleep(&ts, NULL);
        asked = 0;
        for (int i = 0; i < n; i++) {
            char dev[IF_NAMESIZE] = "";
            if (!h[i].known && h[i].self && if_indextoname((unsigned)h[i].ifindex, dev))
                asked += !(h[i].known = arp_known(h[i].addr, dev, h[i].mac));
        }
    }
}

/* One attempt per hop whose link address is known: the UDP packet built by
 * att_frame_msg (from this namespace's address), handed to the kernel with the hop's
 * link address (SOCK_DGRAM: the kernel writes the link header). */
void sweep_packet(const char *canary4, int high)
{
    if (!canary4 || !*canary4)
        return;
    struct in_addr canary;
    if (inet_pton(AF_INET, canary4, &canary) != 1)
        return;
    if (!o.host4 || !*o.host4) { /* a listen canary: no link of its own a frame could reach */
        struct att *a = sweep_add(sweep_id[SW_PACKET4], canary4, high, SOCK_DGRAM, X_FRAME);
        if (a) {
            a->group = G_PACKET;
            att_end(a, OC_BLOCKED, 0, "not tried: the canary stands behind no veth of its own");
        }
        return;
    }
    if (!off_loopback()) { /* asked first: a packet socket costs its closer an RCU grace period */
        struct att *a = sweep_add(sweep_id[SW_PACKET4], canary4, high, SOCK_DGRAM, X_FRAME);
        if (a) {
            a->group = G_PACKET;
            att_end(a, OC_BLOCKED, ENETUNREACH, "no next hop in view: no route of this namespace's leaves it");
        }
        return;
    }
    int probe_fd = -1, refused = 0;
    for (g_kind = 0; probe_fd < 0 && g_kind < (int)(sizeof kinds / sizeof kinds[0]); g_kind++)
        if ((probe_fd = packet_socket()) < 0 && !refused)
            refused = errno;
    g_kind--;
    int xdp = probe_fd < 0 && net_raw_held() && xdp_family(), tried = 0;
    if (xdp) { /* no packet socket, but XDP sockets: a unix or IP one for the links' ioctls */
        g_kind = 0, g_way = "an AF_XDP socket (copy mode)";
        if ((probe_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
            probe_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (probe_fd < 0) {
            struct att *a = sweep_add(sweep_id[SW_PACKET4], canary4, high, SOCK_DGRAM, X_FRAME);
            if (a) {
                a->group = G_PACKET;
                att_end(a, OC_ERROR, errno, "XDP sockets made, but no socket to ask the links' "
                        "addresses by: no proof");
            }
            return;
        }
    }
    if (probe_fd < 0) { /* no CAP_NET_RAW, or a filter on every kind: the line is refused */
        errno = refused;
        struct att *a = sweep_add(sweep_id[SW_PACKET4], canary4, high, SOCK_DGRAM, X_FRAME);
        if (a) {
            a->group = G_PACKET;
            att_end(a, OC_BLOCKED, errno, net_raw_held()
                                              ? "socket(AF_PACKET), by socket, IORING_OP_SOCKET, the i386 entry"
                                                " and AF_INET's SOCK_PACKET; socket(AF_XDP)"
                                              : "socket(AF_PACKET), without CAP_NET_RAW (which every way asks)");
        }
        return;
    }
    uint32_t hops[ROUTE_HOPS], via = 0;
    char devs[ROUTE_HOPS][IFNAMSIZ], dev[IFNAMSIZ];
    int more = 0, n = 0;
    if (maybe_host_netns()) { /* only the kernel's own way to the canary: its veth */
        if (route_now(ntohl(canary.s_addr), &via, dev) && !via && strcmp(dev, "lo") && strcmp(dev, "*")) {
            hops[0] = ntohl(canary.s_addr);
            memcpy(devs[0], dev, IFNAMSIZ);
            n = 1;
        }
    } else {
        n = route_hops(hops, devs, &more);
        n += tun_links(hops + n, devs + n, ROUTE_HOPS - n, probe_fd);
        n += wide_guesses(hops, devs, n, ROUTE_HOPS - n);
    }
    struct hop_link h[PACKET_HOPS];
    int kept = 0, cut = more > 0 || n > PACKET_HOPS;
    for (int i = 0; i < n && kept < PACKET_HOPS; i++) {
        struct ifreq ifr;
        struct hop_link *x = &h[kept];
        memset(x, 0, sizeof *x);
        memset(&ifr, 0, sizeof ifr);
        snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%.15s", devs[i]);
        if (ioctl(probe_fd, SIOCGIFINDEX, &ifr) != 0)
            continue;
        x->ifindex = ifr.ifr_ifindex;
        if (ioctl(probe_fd, SIOCGIFHWADDR, &ifr) != 0)
            continue;
        if (ifr.ifr_hwaddr.sa_family == ARPHRD_NONE && xdp)
            continue; /* a TUN link: not by XDP */
        if (ifr.ifr_hwaddr.sa_family == ARPHRD_NONE) /* a TUN link: no link address to ask */
            x->known = x->tun = 1;
        else if (ifr.ifr_hwaddr.sa_family != ARPHRD_ETHER)
            continue; /* a link of another kind: not tried here */
        memcpy(x->own, ifr.ifr_hwaddr.sa_data, 6);
        x->self = own4(probe_fd, devs[i]); /* else none of its own there: made up */
        if (x->self == htonl(hops[i]))
            continue; /* its own address on the link (no IP socket to tell it by before) */
        x->addr = hops[i];
        x->known = x->known || arp_known(hops[i], devs[i], x->mac);
        kept++;
    }
    if (xdp)
        xdp_ask(h, kept, 1000);
    else
        arp_ask(h, kept, probe_fd, 1000);
    for (int i = 0; i < kept; i++) {
        uint32_t src[2] = { h[i].self };
        /* a TUN link with no address: no hop to make one up beside; not tried */
        int srcs = !h[i].known ? 0 : h[i].self ? 1 : h[i].tun ? 0 : made_up(h[i].addr, src);
        for (int j = 0; j < srcs; j++) {
            struct att *a = sweep_add(sweep_id[SW_PACKET4], canary4, high, SOCK_DGRAM, X_FRAME);
            if (!a)
                break;
            tried++;
            a->group = G_PACKET;
            /* who writes the link header: the probe on a SOCK_RAW socket, but for a TUN link */
            int type = kinds[g_kind].type != SOCK_DGRAM && !h[i].tun ? SOCK_RAW : SOCK_DGRAM;
            int out = xdp ? xsk_make(h[i].ifindex) : probe_fd;
            if (out < 0) { /* refused, or (the queue taken, the link's driver) no proof */
                int e = errno;
                att_end(a, e == EPERM || e == EACCES || e == EAFNOSUPPORT ? OC_BLOCKED : OC_ERROR, e,
                        "an AF_XDP socket on interface %d (copy mode)", h[i].ifindex);
                continue;
            }
            if (frame_att(a, out, type, ETH_P_IP, h[i].ifindex, h[i].mac) != 0)
                continue;
            if (h[i].tun)
                a->ll.sll_halen = 0;
            struct sockaddr_in *from = (struct sockaddr_in *)(void *)&a->alt;
            from->sin_family = AF_INET;
            from->sin_addr.s_addr = src[j];
            a->has_alt = 1;
            packet_dsts(a, canary4, high, &h[i], src[j]);
        }
    }
    close(probe_fd);
    if (!tried || cut) {
        struct att *a = sweep_add(sweep_id[SW_PACKET4], canary4, high, SOCK_DGRAM, X_FRAME);
        if (a) {
            a->group = G_PACKET;
            if (cut)
                att_end(a, OC_ERROR, 0, "more next hops in view than the %d tried: no proof",
                        PACKET_HOPS);
            else
                att_end(a, OC_BLOCKED, 0, "no next hop answers on a link of this namespace");
        }
    }
}

void packet_report(double t0)
{
    if (o.canary4 && *o.canary4)
        group_report(G_PACKET, sweep_id[SW_PACKET4], t0, "nothing tried");
}
