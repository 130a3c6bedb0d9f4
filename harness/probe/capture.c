/* The canary's packet capture, mode "canary": every packet that arrives, logged as
 * a "packet" event (--capture, in the outside namespace), or only those sent to the
 * canary's addresses (--capture-to, in the host's own). */

#include "probe.h"

/* --capture: every packet arriving in the outside namespace, on any interface but
 * lo, on any port and protocol, is logged ("packet" events): TCP SYNs, every UDP
 * datagram and ICMP echo request, and any packet whose payload names harness (its
 * marker, with some context). Attempts to ports nobody listens on count too. */
int capture_open(void)
{
    int fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, htons(0x0003 /* ETH_P_ALL */));
    if (fd < 0)
        fatal(2, "packet capture: %s", strerror(errno));
    int size = 4 << 20;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
    return fd;
}

/* --capture-to IP (listen mode, up to four): the capture in the host's own namespace,
 * where the canary's addresses also get the host's ordinary traffic (an SSH session
 * to the host's address, its services). A classic BPF filter passes only packets sent
 * to one of these addresses, so the host's other traffic never reaches user space;
 * lo is watched too (a sandbox sharing the host's namespace reaches a local address
 * through it), and only a packet carrying a harness marker or of a protocol other
 * than TCP, UDP and ICMP is logged: an unmarked SYN or datagram to the host's
 * address is someone's ordinary traffic, and the listeners log harness's own. */
#define MAX_CAPTURE_TO 4
static struct { int family; unsigned char ip[16]; } g_cap_to[MAX_CAPTURE_TO];
size_t g_ncap_to;

void capture_to(const char *ip)
{
    const char *bare = ip;
    char buf[INET6_ADDRSTRLEN + 2];
    if (ip[0] == '[') { /* [IPv6], as the listeners spell it */
        snprintf(buf, sizeof buf, "%s", ip + 1);
        buf[strcspn(buf, "]")] = '\0';
        bare = buf;
    }
    if (g_ncap_to == MAX_CAPTURE_TO)
        fatal(2, "too many --capture-to (at most %d)", MAX_CAPTURE_TO);
    int f = strchr(bare, ':') ? AF_INET6 : AF_INET;
    if (inet_pton(f, bare, g_cap_to[g_ncap_to].ip) != 1)
        fatal(2, "bad --capture-to (want an IPv4 or IPv6 address): %s", ip);
    g_cap_to[g_ncap_to++].family = f;
}

/* The filter: the ethertype (SKF_AD_PROTOCOL), then the destination address, read
 * from the network header where a cooked (SOCK_DGRAM) packet socket's data starts
 * (each IPv4 address one comparison, each IPv6 address four, one per word), then
 * the protocol: TCP and UDP never pass. On the host's own address they are its
 * services' traffic, an allowed supervisor's included, whose first leg carries the
 * workload's marked bytes too; the canary's own listeners log what reaches them.
 * Only forward jumps: the two accepting blocks, then the drop, come last. */
static size_t capture_filter(struct sock_filter *f)
{
    size_t n4 = 0, n6 = 0, n = 0;
    for (size_t i = 0; i < g_ncap_to; i++)
        g_cap_to[i].family == AF_INET ? n4++ : n6++;
    size_t v6 = 3 + n4 + 1, accept4 = v6 + 2 + 8 * n6, accept6 = accept4 + 4, drop = accept6 + 4;
    f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_H | BPF_ABS, SKF_AD_OFF + SKF_AD_PROTOCOL);
    f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x0800, 0, (uint8_t)(v6 - 2));
    f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 16);
    for (size_t i = 0; i < g_ncap_to; i++) {
        if (g_cap_to[i].family != AF_INET)
            continue;
        uint32_t a;
        memcpy(&a, g_cap_to[i].ip, 4);
        f[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ntohl(a), (uint8_t)(accept4 - n - 1), 0);
        n++;
    }
    f[n] = (struct sock_filter)BPF_STMT(BPF_JMP | BPF_JA, (uint32_t)(drop - n - 1));
    n++;
    f[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x86dd, 0, (uint8_t)(drop - n - 1));
    n++;
    for (size_t i = 0; i < g_ncap_to; i++) {
        if (g_cap_to[i].family != AF_INET6)
            continue;
        size_t next = n + 8;
        for (int w = 0; w < 4; w++) {
            uint32_t a;
            memcpy(&a, g_cap_to[i].ip + 4 * w, 4);
            f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (uint32_t)(24 + 4 * w));
            f[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ntohl(a),
                                                (uint8_t)(w == 3 ? accept6 - n - 1 : 0),
                                                (uint8_t)(next - n - 1));
            n++;
        }
    }
    f[n] = (struct sock_filter)BPF_STMT(BPF_JMP | BPF_JA, (uint32_t)(drop - n - 1));
    n++;
    /* accept4, accept6: the protocol (IPv4's byte 9, IPv6's next header, byte 6) */
    for (uint32_t at = 9; at != 0; at = at == 9 ? 6 : 0) {
        f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_B | BPF_ABS, at);
        f[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 6, (uint8_t)(drop - n - 1), 0);
        n++;
        f[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 17, (uint8_t)(drop - n - 1), 0);
        n++;
        f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 0x40000);
    }
    f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 0);
    return n;
}

/* The listen-mode capture, or -1: a canary that cannot capture (not root, no packet
 * sockets) still runs, and says why in an "unbound" event; the checks that need the
 * capture are then not asked. The socket is made for no protocol and bound to every
 * one only once its filter is attached: nothing unfiltered is ever queued. */
int capture_open_to(void)
{
    struct sock_filter prog[16 + 8 * MAX_CAPTURE_TO];
    struct sock_fprog fp = { .len = (unsigned short)capture_filter(prog), .filter = prog };
    struct sockaddr_ll all = { .sll_family = AF_PACKET, .sll_protocol = htons(0x0003 /* ETH_P_ALL */) };
    int size = 4 << 20;
    int fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd >= 0 && (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &fp, sizeof fp) != 0
                    || bind(fd, (struct sockaddr *)&all, sizeof all) != 0)) {
        int e = errno;
        close(fd);
        fd = -1;
        errno = e;
    }
    if (fd < 0) {
        Buf b = { .n = 0 };
        bput(&b, "{\"event\":\"unbound\",\"proto\":\"capture\"");
        bkv(&b, "error", strerror(errno));
        bput(&b, "}");
        emit(&b);
        return -1;
    }
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
    return fd;
}

/* Whether p[j] starts a Proxy-Authorization line: a login a relay passed on as it
 * came (the environment's), never logged. */
static int login_line(const unsigned char *p, size_t n, size_t j)
{
    return (j == 0 || p[j - 1] == '\n') && j + 19 <= n && !strncasecmp((const char *)p + j, "proxy-authorization", 19);
}

/* The printable text around the first "harness" in p (case-insensitive), or "";
 * a login's line starred. */
static void capture_mark(const unsigned char *p, size_t n, char *out, size_t cap)
{
    out[0] = '\0';
    for (size_t i = 0; i + 7 <= n; i++) {
        if (strncasecmp((const char *)p + i, "harness", 7))
            continue;
        size_t from = i > 48 ? i - 48 : 0, k = 0, start = from;
        while (start > 0 && p[start - 1] != '\n')
            start--;
        int login = login_line(p, n, start);
        for (size_t j = from; j < n && k + 1 < cap && j < i + 120; j++) {
            login = (login || login_line(p, n, j)) && p[j] != '\n';
            out[k++] = login ? '*' : p[j] >= 0x21 && p[j] < 0x7f ? (char)p[j] : '.';
        }
        out[k] = '\0';
        return;
    }
}

void capture_read(int fd)
{
    static unsigned char pkt[65536];
    static int lo;
    if (!lo)
        lo = (int)if_nametoindex("lo");
    for (int k = 0; k < 256; k++) {
        struct sockaddr_ll from;
        socklen_t fl = sizeof from;
        ssize_t n = recvfrom(fd, pkt, sizeof pkt, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return;
        if (from.sll_pkttype == PACKET_OUTGOING || (from.sll_ifindex == lo && !g_ncap_to))
            continue;
        unsigned proto_eth = ntohs(from.sll_protocol), l4 = 0;
        size_t hl = 0;
        char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];
        if (proto_eth == 0x0800 && n >= 20 && (pkt[0] >> 4) == 4) {
            hl = (size_t)(pkt[0] & 15) * 4;
            l4 = pkt[9];
            inet_ntop(AF_INET, pkt + 12, src, sizeof src);
            inet_ntop(AF_INET, pkt + 16, dst, sizeof dst);
        } else if (proto_eth == 0x86dd && n >= 40 && (pkt[0] >> 4) == 6) {
            hl = 40;
            l4 = pkt[6]; /* no extension headers expected here */
            inet_ntop(AF_INET6, pkt + 8, src, sizeof src);
            inet_ntop(AF_INET6, pkt + 24, dst, sizeof dst);
        } else {
            continue;
        }
        if (hl > (size_t)n)
            continue;
        const unsigned char *t = pkt + hl;
        size_t tn = (size_t)n - hl, off = 0;
        const char *name;
        int sport = -1, dport = -1, keep = 0;
        if (l4 == 6 && tn >= 20) {
            name = "tcp";
            sport = t[0] << 8 | t[1];
            dport = t[2] << 8 | t[3];
            off = (size_t)(t[12] >> 4) * 4;
            keep = (t[13] & 0x12) == 0x02; /* SYN without ACK: a new connection */
        } else if (l4 == 17 && tn >= 8) {
            name = "udp";
            sport = t[0] << 8 | t[1];
            dport = t[2] << 8 | t[3];
            off = 8;
            keep = 1;
        } else if ((l4 == 1 && tn >= 8 && t[0] == 8) || (l4 == 58 && tn >= 8 && t[0] == 128)) {
            name = l4 == 1 ? "icmp" : "icmp6";
            sport = t[4] << 8 | t[5]; /* the echo identifier */
            off = 8;
            keep = 1;
        } else if (l4 == 1 || l4 == 58 || l4 == 6 || l4 == 17) {
            name = l4 == 6 ? "tcp" : l4 == 17 ? "udp" : l4 == 1 ? "icmp" : "icmp6";
            keep = 0; /* an ICMP error or a short header: only a marker makes it news */
        } else {
            /* Any other IP protocol (SCTP, DCCP, UDP-Lite, raw): every packet is an
             * arrival. Those three carry their ports first, as UDP does. */
            static char other[12];
            snprintf(other, sizeof other, "ip%u", l4);
            name = l4 == 132 ? "sctp" : l4 == 33 ? "dccp" : l4 == 136 ? "udplite" : other;
            if ((l4 == 132 || l4 == 33 || l4 == 136) && tn >= 4) {
                sport = t[0] << 8 | t[1];
                dport = t[2] << 8 | t[3];
            }
            off = l4 == 136 ? 8 : l4 == 132 ? 12 : 0;
            keep = 1;
        }
        if (g_ncap_to && (l4 == 6 || l4 == 17))
            continue; /* listen mode: never TCP or UDP (the filter's rule, held here too) */
        if (g_ncap_to && (l4 == 1 || l4 == 58))
            keep = 0; /* listen mode: ICMP only when marked (the host's pings are not news) */
        if (g_ncap_to && proto_eth == 0x86dd && (l4 == 0 || l4 == 43 || l4 == 44 || l4 == 60))
            keep = 0; /* an IPv6 extension header: the host's TCP or UDP may be behind it */
        char mark[200] = "";
        if (off < tn)
            capture_mark(t + off, tn - off, mark, sizeof mark);
        if (!keep && !mark[0])
            continue;
        Buf b = { .n = 0 };
        bput(&b, "{\"event\":\"packet\"");
        bkv(&b, "proto", name);
        bkv(&b, "src", src);
        bkv(&b, "dst", dst);
        bput(&b, ",\"sport\":%d,\"dport\":%d", sport, dport);
        if (mark[0])
            bkv(&b, "mark", mark);
        bput(&b, "}");
        emit(&b);
    }
}
