/* Packet sockets and the packets the probe builds itself (packet4, packet6, a held
 * packet socket or TUN/TAP device): a packet socket made by every way the kernel makes
 * one, a frame sent by every call that sends one, and the frames: the HARNESS line in a
 * UDP datagram over IPv4 or IPv6, and an IPv6 neighbour solicitation. */

#include "probe.h"

#include <sys/wait.h>

/* Attempt `a` as a frame on a duplicate of the line's packet socket `fd` (one socket, one
 * grace period), of `type` (SOCK_RAW: the probe writes the link header), to `mac` on
 * interface `ifindex`, carrying `proto`. 0, or -1 with `a` ended (no duplicate). */
int frame_att(struct att *a, int fd, int type, int proto, int ifindex, const unsigned char mac[6])
{
    a->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    a->type = type;
    if (a->fd < 0) {
        att_end(a, OC_ERROR, errno, "dup of the packet socket");
        return -1;
    }
    a->family = AF_PACKET;
    a->held = 1;
    a->how = H_SENDTO;
    a->ll = (struct sockaddr_ll){ .sll_family = AF_PACKET, .sll_protocol = htons((uint16_t)proto),
                                  .sll_ifindex = ifindex, .sll_halen = 6 };
    memcpy(a->ll.sll_addr, mac, 6);
    a->src_port = 40000; /* the packet's own (att_frame_msg), not the socket's protocol */
    return 0;
}

/* struct sockaddr_pkt (linux/if_packet.h, whose other names clash with libc's): a
 * SOCK_PACKET socket's address, its link by name. */
struct spkt_addr {
    unsigned short family;
    unsigned char device[14];
    uint16_t protocol;
};

/* A frame on a packet socket by every call that sends one: sendto to the link address,
 * sendmsg, sendmmsg, io_uring's IORING_OP_SENDMSG, then, on a SOCK_RAW socket (its frame
 * carries its own link header), bound to the link and written (write(2) takes no
 * address). A filter that refuses some send calls leaves the others. The call that sent
 * it in *by ("" for sendto). */
ssize_t frame_out(int fd, int raw, const void *p, size_t n, const struct sockaddr_ll *ll, const char **by)
{
    *by = "";
    if (xsk_is(fd)) /* an XDP socket: its ring, bound to the link already */
        return xsk_send(fd, p, n);
    struct spkt_addr spkt; /* a SOCK_PACKET socket's link, by name; no write's way */
    const struct sockaddr *to = (const struct sockaddr *)ll;
    socklen_t tolen = sizeof *ll;
    if (packet_spkt(fd)) {
        memset(&spkt, 0, sizeof spkt);
        spkt.family = AF_PACKET;
        spkt.protocol = ll->sll_protocol;
        char name[IF_NAMESIZE] = "";
        if_indextoname((unsigned)ll->sll_ifindex, name);
        memcpy(spkt.device, name, sizeof spkt.device - 1);
        to = (const struct sockaddr *)&spkt;
        tolen = sizeof spkt;
        raw = 0;
    }
    ssize_t r = sendto(fd, p, n, MSG_DONTWAIT, to, tolen);
    if (r >= 0 || errno == EAGAIN || errno == EINTR || errno == ENOBUFS)
        return r;
    int refused = errno;
    struct iovec iov = { .iov_base = (void *)p, .iov_len = n };
    struct msghdr m = { .msg_name = (void *)to, .msg_namelen = tolen, .msg_iov = &iov, .msg_iovlen = 1 };
    *by = " (sent by sendmsg: sendto refused)";
    if ((r = sendmsg(fd, &m, MSG_DONTWAIT)) >= 0 || errno == EAGAIN || errno == EINTR || errno == ENOBUFS)
        return r;
    *by = " (sent by sendmmsg: sendto and sendmsg refused)";
    struct mmsghdr mm = { .msg_hdr = m };
    int k = (int)syscall(SYS_sendmmsg, fd, &mm, 1, MSG_DONTWAIT);
    if (k == 1)
        return (ssize_t)mm.msg_len;
    if (k < 0 && (errno == EAGAIN || errno == EINTR || errno == ENOBUFS))
        return -1;
    const char *step;
    *by = " (sent by io_uring's IORING_OP_SENDMSG: the send calls refused)";
    if (uring_alive() && ((r = uring_sendmsg(fd, &m, &step)) >= 0 || errno == EAGAIN || errno == ENOBUFS))
        return r;
    *by = " (sent by write after bind: the send calls and the ring refused)";
    if (raw && bind(fd, (const struct sockaddr *)ll, sizeof *ll) == 0 &&
        ((r = write(fd, p, n)) >= 0 || errno == EAGAIN || errno == EINTR || errno == ENOBUFS))
        return r;
    *by = "";
    return errno = refused, -1;
}

ssize_t att_frame_send(struct att *a, const void *p, size_t n)
{
    const char *by;
    ssize_t r = frame_out(a->fd, a->type == SOCK_RAW, p, n, &a->ll, &by);
    size_t l = strlen(a->dsts);
    if (*by && !strstr(a->dsts, by))
        snprintf(a->dsts + l, sizeof a->dsts - l, "%s", by);
    return r;
}

/* CAP_NET_RAW in the effective set. Without it no way makes a packet socket: the kernel
 * asks the same capability of socket(2), the ring and the i386 entry (the one exception,
 * a network namespace owned by a user namespace whose owner the workload is but does
 * not stand in, leaves socket(2) open too). Asked once: a sandbox without it (most)
 * pays no ring or i386 attempt. */
int net_raw_held(void)
{
    static int held = -1;
    struct cap_data d[2];
    if (held < 0)
        held = caps_get(d) != 0 || (cap64(d[0].effective, d[1].effective) >> PROBE_CAP_NET_RAW & 1);
    return held;
}

/* Whether `fd` is a packet socket of the oldest kind (SOCK_PACKET): its link named
 * in a struct sockaddr_pkt, its frames whole, link header included. */
int packet_spkt(int fd)
{
    int type = 0;
    socklen_t len = sizeof type;
    return getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 && type == SOCK_PACKET;
}

/* Bound to receive `proto` on every link (a SOCK_PACKET socket, made for every
 * protocol, needs no bind: its bind names one link). 0, or -1 with errno. */
int packet_listen(int fd, int proto)
{
    struct sockaddr_ll any = { .sll_family = AF_PACKET, .sll_protocol = htons((uint16_t)proto) };
    return packet_spkt(fd) ? 0 : bind(fd, (struct sockaddr *)&any, sizeof any);
}

/* Whether a frame received from `from` (a sockaddr_ll, or a SOCK_PACKET socket's
 * sockaddr_pkt) came in on link `ifindex`. */
int packet_on_link(int fd, const struct sockaddr_storage *from, int ifindex)
{
    if (!packet_spkt(fd))
        return ((const struct sockaddr_ll *)(const void *)from)->sll_ifindex == ifindex;
    char name[IF_NAMESIZE] = "";
    const struct spkt_addr *pk = (const struct spkt_addr *)(const void *)from;
    return if_indextoname((unsigned)ifindex, name) && !strncmp(name, (const char *)pk->device, sizeof pk->device);
}

/* A packet socket by every way the kernel makes one: socket(2) (its type with
 * SOCK_CLOEXEC, then without), io_uring's IORING_OP_SOCKET, then the i386 entry (socket's own number, then socketcall); the
 * oldest kind (SOCK_PACKET) by AF_INET's spelling too, which the kernel turns into
 * AF_PACKET (net/socket.c): a filter on the family alone misses it. A filter that
 * refuses socket(2) its arguments, and forgets the ring, the entry or the spelling,
 * leaves that way open. -1 with socket(2)'s own refusal where no way makes one. */
int packet_make(int type, int proto, const char **way)
{
    int fd = socket(AF_PACKET, type | SOCK_CLOEXEC, htons(proto));
    *way = "socket";
    if (fd >= 0 || errno == EMFILE || errno == ENFILE)
        return fd;
    int refused = errno;
    if (!net_raw_held()) /* each way asks the same capability: none would answer */
        return errno = refused, -1;
    /* The type without SOCK_CLOEXEC (set by fcntl after), as a capture tool makes it: a
     * filter comparing the type whole (libseccomp's SCMP_CMP_EQ SOCK_RAW) lets only it. */
    *way = "socket without SOCK_CLOEXEC";
    if ((fd = socket(AF_PACKET, type, htons(proto))) >= 0) {
        fcntl(fd, F_SETFD, FD_CLOEXEC);
        return fd;
    }
    *way = "socket";
    if ((uring_alive() && (fd = uring_socket(AF_PACKET, type | SOCK_CLOEXEC, htons(proto), way)) >= 0) ||
        (fd = i386_socket(AF_PACKET, type, htons(proto), way)) >= 0)
        return fd;
    *way = "socket(AF_INET, SOCK_PACKET)";
    if (type == SOCK_PACKET && (fd = socket(AF_INET, SOCK_PACKET | SOCK_CLOEXEC, htons(proto))) >= 0)
        return fd;
    *way = "socket";
    return errno = refused, -1;
}

/* The Internet checksum of `n` bytes, from `sum` (a pseudo-header's words, for UDP over
 * IPv6 and ICMPv6). */
uint16_t ip_checksum(const unsigned char *p, size_t n, uint32_t sum)
{
    for (size_t i = 0; i + 1 < n; i += 2)
        sum += (uint32_t)(p[i] << 8 | p[i + 1]);
    if (n & 1)
        sum += (uint32_t)p[n - 1] << 8;
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)~sum;
}

/* The sum of an IPv6 pseudo-header (source, destination, length, next header). */
static uint32_t pseudo6(const unsigned char *ip6, uint32_t len, unsigned char next)
{
    uint32_t sum = 0;
    for (int i = 8; i < 40; i += 2)
        sum += (uint32_t)(ip6[i] << 8 | ip6[i + 1]);
    return sum + (len >> 16) + (len & 0xffff) + next;
}

/* An IPv6 header at `ip6`: `len` bytes of payload of protocol `next`, from `src`, to `dst`. */
static void ip6_head(unsigned char *ip6, size_t len, unsigned char next, unsigned char hops,
                     const struct in6_addr *src, const struct in6_addr *dst)
{
    ip6[0] = 0x60;
    ip6[4] = (unsigned char)(len >> 8), ip6[5] = (unsigned char)len;
    ip6[6] = next, ip6[7] = hops;
    memcpy(ip6 + 8, src, 16);
    memcpy(ip6 + 24, dst, 16);
}

/* att_frame_msg's IPv6 datagram: from `alt`'s address (else ::), its UDP checksum
 * (which IPv6 requires) over the pseudo-header. */
static void frame6_msg(struct att *a)
{
    const struct sockaddr_in6 *to = (const void *)&a->dst;
    struct in6_addr from = IN6ADDR_ANY_INIT;
    if (a->has_alt && a->alt.ss_family == AF_INET6)
        from = ((const struct sockaddr_in6 *)(const void *)&a->alt)->sin6_addr;
    unsigned char *p = a->out;
    size_t eth = a->type == SOCK_RAW ? 14 : 0;
    char line[120];
    size_t n = (size_t)snprintf(line, sizeof line, "HARNESS %s %s\n", o.tag, a->id);
    memset(p, 0, eth + 40 + 8 + n);
    if (eth) {
        if (a->ll.sll_halen == 6)
            memcpy(p, a->ll.sll_addr, 6);
        else
            memset(p, 0xff, 6);
        p[12] = 0x86, p[13] = 0xdd; /* ETH_P_IPV6 */
    }
    unsigned char *ip6 = p + eth, *udp = ip6 + 40;
    ip6_head(ip6, 8 + n, IPPROTO_UDP, 64, &from, &to->sin6_addr);
    udp[0] = 0x9c, udp[1] = 0x40; /* source port 40000 */
    memcpy(udp + 2, &to->sin6_port, 2);
    udp[4] = (unsigned char)((8 + n) >> 8), udp[5] = (unsigned char)(8 + n);
    memcpy(udp + 8, line, n);
    uint16_t c = ip_checksum(udp, 8 + n, pseudo6(ip6, (uint32_t)(8 + n), IPPROTO_UDP));
    c = c ? c : 0xffff;
    udp[6] = (unsigned char)(c >> 8), udp[7] = (unsigned char)c;
    a->outn = eth + 40 + 8 + n;
}

/* A neighbour solicitation for `target` (ICMPv6 135, to its solicited-node address and
 * that address's link address 33:33:ff:..), from `src` with this link's address `own`
 * as its option (none from ::, a duplicate address probe, which the target answers to
 * every node): into `buf`, with an Ethernet header where `eth` (a SOCK_RAW socket).
 * Its length. */
size_t ns_frame(unsigned char *buf, int eth, const unsigned char own[6], const struct in6_addr *src,
                const struct in6_addr *target)
{
    size_t off = eth ? 14 : 0;
    struct in6_addr group = { .s6_addr = { 0xff, 2, [11] = 1, [12] = 0xff } };
    memcpy(group.s6_addr + 13, target->s6_addr + 13, 3);
    memset(buf, 0, off + 40 + 32);
    if (eth) {
        buf[0] = 0x33, buf[1] = 0x33;
        memcpy(buf + 2, group.s6_addr + 12, 4);
        memcpy(buf + 6, own, 6);
        buf[12] = 0x86, buf[13] = 0xdd;
    }
    unsigned char *ip6 = buf + off, *icmp = ip6 + 40;
    size_t len = IN6_IS_ADDR_UNSPECIFIED(src) ? 24 : 32;
    ip6_head(ip6, len, IPPROTO_ICMPV6, 255, src, &group);
    icmp[0] = 135; /* neighbour solicitation; code 0, checksum below, 4 reserved bytes */
    memcpy(icmp + 8, target, 16);
    if (len == 32) {
        icmp[24] = 1, icmp[25] = 1; /* the source link-layer address option */
        memcpy(icmp + 26, own, 6);
    }
    uint16_t c = ip_checksum(icmp, len, pseudo6(ip6, (uint32_t)len, IPPROTO_ICMPV6));
    icmp[2] = (unsigned char)(c >> 8), icmp[3] = (unsigned char)c;
    return off + 40 + len;
}

/* X_FRAME: the HARNESS line in a UDP datagram to the canary's IPv4 address and port,
 * its IPv4 header (and, for a SOCK_RAW packet socket or a TAP device, an Ethernet
 * header to the broadcast address; for a TUN device without IFF_NO_PI, its packet
 * header) built here: a packet socket takes frames, not connections. From 0.0.0.0,
 * or from `alt`'s address where set (a packet a stack receives must come from
 * somewhere: a TUN device's arrive as if from outside). */
void att_frame_msg(struct att *a)
{
    if (a->dst.ss_family == AF_INET6) {
        frame6_msg(a);
        return;
    }
    const struct sockaddr_in *to = (const void *)&a->dst;
    unsigned char *p = a->out;
    if (a->pi) { /* struct tun_pi: no flags, IPv4 */
        memset(p, 0, 4);
        p[2] = 0x08;
        p += 4;
    }
    size_t eth = a->type == SOCK_RAW ? 14 : 0;
    char line[120];
    size_t n = (size_t)snprintf(line, sizeof line, "HARNESS %s %s\n", o.tag, a->id);
    size_t total = 20 + 8 + n;
    memset(p, 0, eth + total);
    if (eth) { /* to the link address named (a next hop's), else to the broadcast address */
        if (a->ll.sll_halen == 6)
            memcpy(p, a->ll.sll_addr, 6);
        else
            memset(p, 0xff, 6);
        p[12] = 0x08; /* ETH_P_IP */
    }
    unsigned char *ip = p + eth, *udp = ip + 20;
    ip[0] = 0x45;
    ip[2] = (unsigned char)(total >> 8), ip[3] = (unsigned char)total;
    ip[8] = 64, ip[9] = IPPROTO_UDP;
    memcpy(ip + 16, &to->sin_addr, 4); /* from 0.0.0.0: only the capture need see it */
    if (a->has_alt && a->alt.ss_family == AF_INET)
        memcpy(ip + 12, &((const struct sockaddr_in *)(const void *)&a->alt)->sin_addr, 4);
    uint16_t c = ip_checksum(ip, 20, 0);
    ip[10] = (unsigned char)(c >> 8), ip[11] = (unsigned char)c;
    udp[0] = 0x9c, udp[1] = 0x40; /* source port 40000 */
    memcpy(udp + 2, &to->sin_port, 2);
    udp[4] = (unsigned char)((8 + n) >> 8), udp[5] = (unsigned char)(8 + n);
    memcpy(udp + 8, line, n);
    a->outn = (a->pi ? 4 : 0) + eth + total;
}
