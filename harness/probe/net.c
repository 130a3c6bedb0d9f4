/* Network helpers: addresses, sockets with deadlines, the TCP exchange with the
 * canary, and the interface set-up that the canary and init share. */

#include "probe.h"

#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>

socklen_t addr_len(const Addr *a)
{
    return a->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

/* The port of --allowed-tcp (the destination a policy lets out), or 0. */
int allowed_port(void)
{
    const char *at = o.allowed_tcp ? strrchr(o.allowed_tcp, ':') : NULL;
    return at ? atoi(at + 1) : 0;
}

void addr_set_port(Addr *a, uint16_t port)
{
    if (a->ss_family == AF_INET6)
        ((struct sockaddr_in6 *)(void *)a)->sin6_port = htons(port);
    else
        ((struct sockaddr_in *)(void *)a)->sin_port = htons(port);
}

unsigned addr_port(const Addr *a)
{
    const struct sockaddr_in *s4 = (const void *)a;
    const struct sockaddr_in6 *s6 = (const void *)a;
    return ntohs(a->ss_family == AF_INET6 ? s6->sin6_port : s4->sin_port);
}

/* "IP:PORT" or "[IPv6]:PORT", "[IPv6%zone]:PORT" with a scope (an interface's name or
 * number: a link-local address's); no names: nothing here may use a resolver. */
int parse_addr(const char *s, Addr *a)
{
    char host[64], *end;
    const char *colon = strrchr(s, ':');
    if (!colon || colon == s || (size_t)(colon - s) >= sizeof host)
        return -1;
    memcpy(host, s, (size_t)(colon - s));
    host[colon - s] = '\0';
    long port = strtol(colon + 1, &end, 10);
    if (end == colon + 1 || *end || port < 0 || port > 65535)
        return -1;
    memset(a, 0, sizeof *a);
    size_t hl = strlen(host);
    if (host[0] == '[' && hl > 2 && host[hl - 1] == ']') {
        struct sockaddr_in6 *s6 = (void *)a;
        host[hl - 1] = '\0';
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons((uint16_t)port);
        char *zone = strchr(host, '%');
        if (zone) { /* a scope: an interface's name, or its number */
            *zone++ = '\0';
            unsigned long long id = strtoull(zone, &end, 10);
            s6->sin6_scope_id = *zone && !*end ? (uint32_t)id : if_nametoindex(zone);
            if (!s6->sin6_scope_id || id > 0xffffffffULL)
                return -1;
        }
        return inet_pton(AF_INET6, host + 1, &s6->sin6_addr) == 1 ? 0 : -1;
    }
    struct sockaddr_in *s4 = (void *)a;
    s4->sin_family = AF_INET;
    s4->sin_port = htons((uint16_t)port);
    return inet_pton(AF_INET, host, &s4->sin_addr) == 1 ? 0 : -1;
}

void fmt_addr(const Addr *a, char *out, size_t cap)
{
    char ip[INET6_ADDRSTRLEN] = "?";
    if (a->ss_family == AF_INET6) {
        const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)(const void *)a;
        char zone[IF_NAMESIZE + 2] = "";
        inet_ntop(AF_INET6, &s6->sin6_addr, ip, sizeof ip);
        if (s6->sin6_scope_id && !if_indextoname(s6->sin6_scope_id, zone + 1))
            snprintf(zone + 1, sizeof zone - 1, "%u", (unsigned)s6->sin6_scope_id);
        if (s6->sin6_scope_id)
            zone[0] = '%';
        snprintf(out, cap, "[%s%s]:%u", ip, zone, addr_port(a));
    } else {
        inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)a)->sin_addr, ip, sizeof ip);
        snprintf(out, cap, "%s:%u", ip, addr_port(a));
    }
}

/* One network step (connect, or a read) gives up after at most 2 s. */
double net_end(void)
{
    double end = now_ms() + 2000.0;
    return end < check_end() ? end : check_end();
}

/* A nonblocking socket of `type` connected to a (made every way, sock_make: the way
 * it took in sock_way()); -1 with errno. */
int connect_to(const Addr *a, int type, double end)
{
    int fd = sock_make(a->ss_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    return fd < 0 ? -1 : connect_fd(fd, a, end);
}

/* A socket it holds connected to a, made nonblocking: fd, or -1 with errno (closed). */
int connect_fd(int fd, const Addr *a, double end)
{
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    if (connect(fd, (const struct sockaddr *)a, addr_len(a)) != 0) {
        int e = errno;
        socklen_t len = sizeof e;
        if (e == EINPROGRESS && wait_io(fd, POLLOUT, end) != 0)
            e = errno;
        else if (e == EINPROGRESS && getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) != 0)
            e = errno;
        if (e) {
            close(fd);
            errno = e;
            return -1;
        }
    }
    return fd;
}

int send_all(int fd, const void *p, size_t n, double end)
{
    const char *s = p;
    while (n > 0) {
        ssize_t k = send(fd, s, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && (errno != EAGAIN || wait_io(fd, POLLOUT, end) != 0))
            return -1;
        if (k > 0) {
            s += k;
            n -= (size_t)k;
        }
    }
    return 0;
}

/* Read until `want` bytes, a newline (if `line`), EOF, an error or `end`.
 * Returns the byte count; errno is 0 unless an error or the deadline stopped it. */
size_t recv_until(int fd, void *buf, size_t want, int line, double end)
{
    char *b = buf;
    size_t n = 0;
    while (n < want && !(line && memchr(b, '\n', n))) {
        if (wait_io(fd, POLLIN, end) != 0)
            return n;
        ssize_t k = read(fd, b + n, want - n);
        if (k < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (k < 0)
            return n;
        if (k == 0)
            break;
        n += (size_t)k;
    }
    errno = 0;
    return n;
}

/* The TCP exchange: connect to a, send "HARNESS <tag> <check-id>\n", read
 * one line back (newline stripped) into reply. -1 (errno set) when the
 * connect failed; else 0, with *rerr the errno of a failed send or read. */
static char way[200]; /* the way tcp_exchange's socket took (sock_way) */
static int tcp_exchange(const Addr *a, char *reply, size_t cap, int *rerr)
{
    char msg[256];
    Addr me;
    socklen_t ml = sizeof me;
    int fd = connect_to(a, SOCK_STREAM, net_end());
    if (fd < 0)
        return -1;
    snprintf(way, sizeof way, "%s", sock_way());
    if (getsockname(fd, (struct sockaddr *)&me, &ml) == 0)
        ev_int("src_port", addr_port(&me));
    int n = snprintf(msg, sizeof msg, "HARNESS %s %s\n", o.tag, g_cur->id);
    size_t got = 0;
    if (send_all(fd, msg, (size_t)n, net_end()) == 0)
        got = recv_until(fd, reply, cap - 1, 1, net_end());
    *rerr = errno;
    reply[got] = '\0';
    reply[strcspn(reply, "\r\n")] = '\0';
    close(fd);
    return 0;
}

/* A TCP attempt (or control): escaped (ok) when "NONCE <nonce>" comes back;
 * succeeded (failed) when the connection worked but the nonce did not. */
__attribute__((noreturn))
void tcp_check(const Addr *a)
{
    int ctl = g_cur->kind == K_CONTROL, rerr;
    char dst[80], reply[256], want[256];
    need(&o.tag);
    snprintf(want, sizeof want, "NONCE %s", need(&o.nonce));
    fmt_addr(a, dst, sizeof dst);
    ev_str("dst", dst);
    if (tcp_exchange(a, reply, sizeof reply, &rerr) != 0)
        outcome(ctl ? OC_FAILED : OC_BLOCKED, errno, "connect(%s)", dst);
    if (!strcmp(reply, want))
        outcome(ctl ? OC_OK : OC_ESCAPED, 0, "the nonce came back from %s%s", dst, way);
    /* A control only needs the connection: the allowed destination may be any
     * service, not necessarily a canary that knows the nonce. */
    outcome(ctl ? OC_OK : OC_SUCCEEDED, 0, "connected to %s, but no nonce came back (%s, reply \"%.100s\")",
            dst, rerr ? strerror(rerr) : "no error", reply);
}

/* An IPv4 address (or INADDR_ANY for NULL) as a sockaddr: 0, or -1. */
static int net_inet4(struct sockaddr *out, const char *text)
{
    struct sockaddr_in sin = { .sin_family = AF_INET };
    if (text && inet_pton(AF_INET, text, &sin.sin_addr) != 1)
        return -1;
    memcpy(out, &sin, sizeof sin);
    return 0;
}

/* Bring an interface up, with an IPv4 address if one is given. */
int net_ifup(int sock, const char *ifname, const char *addr, int prefix)
{
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", ifname);
    if (addr) {
        if (net_inet4(&ifr.ifr_addr, addr))
            return errno = EINVAL, -1;
        /* A driver may still be registering the device: retry for a second. */
        int tries = 0;
        while (ioctl(sock, SIOCSIFADDR, &ifr) && errno == ENODEV && ++tries < 20)
            usleep(50000);
        if (tries == 20)
            return -1;
        struct sockaddr_in mask = { .sin_family = AF_INET };
        mask.sin_addr.s_addr = htonl(prefix > 0 ? 0xffffffffU << (32 - prefix) : 0);
        memcpy(&ifr.ifr_netmask, &mask, sizeof mask);
        if (ioctl(sock, SIOCSIFNETMASK, &ifr))
            return -1;
    }
    if (ioctl(sock, SIOCGIFFLAGS, &ifr))
        return -1;
    ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
    return ioctl(sock, SIOCSIFFLAGS, &ifr);
}

/* A default route via `gw` (IPv4). */
int net_default_route(int sock, const char *gw)
{
    struct rtentry rt;
    memset(&rt, 0, sizeof rt);
    rt.rt_flags = RTF_UP | RTF_GATEWAY;
    if (net_inet4(&rt.rt_dst, "0.0.0.0") || net_inet4(&rt.rt_genmask, "0.0.0.0")
        || net_inet4(&rt.rt_gateway, gw))
        return errno = EINVAL, -1;
    return ioctl(sock, SIOCADDRT, &rt);
}

/* The network namespace this process stands in (its nsfs inode): /proc/self/ns/net,
 * or where the sandbox shows no /proc, through a pidfd of its own
 * (PIDFD_GET_NET_NAMESPACE, 6.11: no capability needed). 0, or -1 with errno. */
int netns_stat(struct stat *st)
{
    if (stat("/proc/self/ns/net", st) == 0 || access("/proc/self", F_OK) == 0)
        return stat("/proc/self/ns/net", st);
    int pidfd = (int)syscall(434 /* pidfd_open */, getpid(), 0);
    if (pidfd < 0)
        return -1;
    int ns = ioctl(pidfd, 0xFF04 /* PIDFD_GET_NET_NAMESPACE */, 0), r = ns < 0 ? -1 : fstat(ns, st);
    close(pidfd);
    if (ns >= 0)
        close(ns);
    return r;
}

/* /proc/net/tcp, tcp6, udp or udp6 as the kernel prints their columns the probe reads
 * (local address and port, remote address and port, state), from sock_diag: where
 * the sandbox shows no /proc. A stream of that text, or NULL with errno (a table cut
 * short is no table). */
FILE *proc_net_diag(const char *name)
{
    int six = strchr(name, '6') != NULL;
    int proto = !strncmp(name, "tcp", 3) ? IPPROTO_TCP : !strncmp(name, "udp", 3) ? IPPROTO_UDP : -1;
    if (proto < 0)
        return errno = ENOENT, NULL;
    int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (fd < 0)
        return NULL;
    struct {
        struct nlmsghdr h;
        struct inet_diag_req_v2 r;
    } req = {
        .h = { .nlmsg_len = sizeof req, .nlmsg_type = SOCK_DIAG_BY_FAMILY,
               .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
        .r = { .sdiag_family = six ? AF_INET6 : AF_INET, .sdiag_protocol = (uint8_t)proto,
               .idiag_states = ~0U },
    };
    static char text[1 << 18], buf[32768];
    size_t len = (size_t)snprintf(text, sizeof text, "  sl  local_address rem_address   st\n");
    int done = 0, k = 0;
    if (send(fd, &req, sizeof req, 0) == (ssize_t)sizeof req)
        for (double end = now_ms() + 2000; !done && now_ms() < end;) {
            ssize_t n = recv(fd, buf, sizeof buf, 0);
            if (n <= 0)
                break;
            for (struct nlmsghdr *h = (void *)buf; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
                if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR) {
                    done = h->nlmsg_type == NLMSG_DONE ? 1 : -1;
                    break;
                }
                const struct inet_diag_msg *m = NLMSG_DATA(h);
                const uint32_t *a[2] = { m->id.idiag_src, m->id.idiag_dst };
                char hex[2][40];
                for (int w = 0; w < 2; w++) /* each 32-bit word as /proc prints it */
                    if (six)
                        snprintf(hex[w], sizeof hex[w], "%08X%08X%08X%08X", a[w][0], a[w][1], a[w][2], a[w][3]);
                    else
                        snprintf(hex[w], sizeof hex[w], "%08X", a[w][0]);
                len += (size_t)snprintf(text + len, sizeof text - len, "%4d: %s:%04X %s:%04X %02X\n", k++,
                                        hex[0], ntohs(m->id.idiag_sport), hex[1], ntohs(m->id.idiag_dport),
                                        m->idiag_state);
                if (len >= sizeof text - 1) {
                    done = -1;
                    break;
                }
            }
        }
    close(fd);
    if (done != 1)
        return errno = EIO, NULL;
    return fmemopen(text, len, "r");
}
