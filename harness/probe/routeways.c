/* The ways route-made makes a host route (egress.c for IPv4, routes6.c for IPv6), each
 * tried where the one before was refused (EPERM, EACCES: a filter's answer, or the
 * kernel's without CAP_NET_ADMIN, which every way then hears too):
 *   - the route ioctl, SIOCADDRT, as given;
 *   - the same with its request's upper 32 bits set: the kernel reads the low 32 (ioctl's
 *     request is an unsigned int), but a filter that compares all 64, as libseccomp's
 *     SCMP_CMP_EQ does, matches none of its rules;
 *   - netlink's RTM_NEWROUTE, as ip(8) makes routes, which a filter of the ioctls alone
 *     never sees; its socket made every way where refused as given (sock_make: widened,
 *     another set of the type's flags, as a filter comparing the type whole that strace
 *     of ip(8) wrote leaves; then the i386 entry's and the ring's, sock_entries).
 * The way that made a route takes it back (SIOCDELRT, RTM_DELROUTE). */

#include "probe.h"

#include <linux/rtnetlink.h>

static int refused(int e)
{
    return e == EPERM || e == EACCES;
}

static void nl_put(struct nlmsghdr *h, int type, const void *v, size_t len)
{
    struct rtattr *a = (void *)((char *)h + NLMSG_ALIGN(h->nlmsg_len));
    a->rta_type = (unsigned short)type;
    a->rta_len = (unsigned short)RTA_LENGTH(len);
    memcpy(RTA_DATA(a), v, len);
    h->nlmsg_len = NLMSG_ALIGN(h->nlmsg_len) + RTA_ALIGN(a->rta_len);
}

/* RTM_NEWROUTE or RTM_DELROUTE of the host route to `dst` via `gw` on `dev` in the
 * main table (addresses in network order, 4 or 16 bytes by family); 0, or the errno. */
static char g_nl_way[200]; /* the way the netlink socket that made the route took */

static int nl_route(int type, int family, const void *dst, const void *gw, const char *dev, int *other)
{
    int fd = sock_make(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE), e = errno, dgram = 0;
    if (fd < 0 && refused(e)) { /* netlink takes SOCK_DGRAM alike: a filter on SOCK_RAW's */
        if ((fd = sock_make(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_ROUTE)) >= 0)
            dgram = 1;
        else /* every way of socket(2)'s refused: the other entries' */
            errno = e, fd = sock_entries(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    }
    if (fd < 0)
        return errno ? errno : EIO;
    /* The way, as words: sock_way()'s " (its socket made X: why)" less its why. */
    static const char made[] = " (its socket made ";
    const char *sw = strncmp(sock_way(), made, sizeof made - 1) ? "" : sock_way() + sizeof made - 1;
    char way[200];
    snprintf(way, sizeof way, "%s%s%s", dgram ? "as SOCK_DGRAM" : "", dgram && *sw ? ", " : "", sw);
    char *why = *sw ? strrchr(way, ':') : NULL;
    if (why)
        *why = '\0';
    *other = way[0] != '\0';
    if (*other && type == RTM_NEWROUTE)
        snprintf(g_nl_way, sizeof g_nl_way, "its socket made %.180s", way);
    struct {
        struct nlmsghdr h;
        struct rtmsg r;
        char attrs[96];
    } req;
    memset(&req, 0, sizeof req);
    size_t alen = family == AF_INET6 ? 16 : 4;
    uint32_t oif = if_nametoindex(dev), metric = 1;
    req.h.nlmsg_len = NLMSG_LENGTH(sizeof req.r);
    req.h.nlmsg_type = (unsigned short)type;
    req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | (type == RTM_NEWROUTE ? NLM_F_CREATE | NLM_F_EXCL : 0);
    req.h.nlmsg_seq = 3;
    req.r.rtm_family = (unsigned char)family;
    req.r.rtm_dst_len = (unsigned char)(alen * 8);
    req.r.rtm_table = RT_TABLE_MAIN;
    req.r.rtm_protocol = RTPROT_BOOT;
    req.r.rtm_scope = RT_SCOPE_UNIVERSE;
    req.r.rtm_type = RTN_UNICAST;
    nl_put(&req.h, RTA_DST, dst, alen);
    nl_put(&req.h, RTA_GATEWAY, gw, alen);
    if (oif)
        nl_put(&req.h, RTA_OIF, &oif, 4);
    nl_put(&req.h, RTA_PRIORITY, &metric, 4);
    int err = EIO;
    if (send(fd, &req, req.h.nlmsg_len, 0) != (ssize_t)req.h.nlmsg_len) {
        err = errno ? errno : EIO;
    } else {
        char buf[1024];
        struct pollfd p = { .fd = fd, .events = POLLIN };
        ssize_t n = poll(&p, 1, 1000) > 0 ? recv(fd, buf, sizeof buf, 0) : -1;
        struct nlmsghdr *h = (void *)buf;
        if (n < 0)
            err = errno ? errno : ETIMEDOUT;
        else if (NLMSG_OK(h, (size_t)n) && h->nlmsg_type == NLMSG_ERROR)
            err = -((struct nlmsgerr *)NLMSG_DATA(h))->error;
    }
    close(fd);
    return err;
}

int route_by(int sock, unsigned long op, void *req, int family, const void *dst, const void *gw,
             const char *dev, int *way)
{
    if (op == SIOCDELRT) { /* taken back the way it was made */
        int other = 0;
        if (*way == ROUTE_NETLINK || *way == ROUTE_NETLINK_WAY)
            return nl_route(RTM_DELROUTE, family, dst, gw, dev, &other) ? -1 : 0;
#if __SIZEOF_LONG__ == 8
        if (*way == ROUTE_WIDE)
            return (int)syscall(SYS_ioctl, sock, (unsigned long)SIOCDELRT | 1UL << 32, req);
#endif
        return ioctl(sock, SIOCDELRT, req);
    }
    *way = ROUTE_IOCTL;
    if (ioctl(sock, op, req) == 0)
        return 0;
    int first = errno;
    if (!refused(first))
        return -1;
#if __SIZEOF_LONG__ == 8
    if (syscall(SYS_ioctl, sock, (unsigned long)op | 1UL << 32, req) == 0) {
        *way = ROUTE_WIDE;
        return 0;
    }
    if (!refused(errno)) /* past the filter: the kernel's own answer for this hop */
        return -1;
#endif
    int other = 0, e = nl_route(RTM_NEWROUTE, family, dst, gw, dev, &other);
    if (e == 0) {
        *way = other ? ROUTE_NETLINK_WAY : ROUTE_NETLINK;
        return 0;
    }
    /* Netlink's own answer where it got as far as the route (this hop's), else the
     * ioctl's refusal: EPERM on every way ends the walk over the hops. */
    errno = refused(e) || e == EAFNOSUPPORT || e == EPROTONOSUPPORT ? first : e;
    return -1;
}

/* Words for the outcome: how the route was made, where not by the ioctl as given. */
const char *route_way_name(int way)
{
    static char name[300];
    if (way == ROUTE_NETLINK_WAY) {
        snprintf(name, sizeof name, " (by netlink, RTM_NEWROUTE, %s: the route ioctl refused, and netlink's"
                 " socket as given)", g_nl_way);
        return name;
    }
    return way == ROUTE_WIDE ? " (by ioctl(SIOCADDRT) with its request's upper 32 bits set: refused as given)"
           : way == ROUTE_NETLINK ? " (by netlink, RTM_NEWROUTE: the route ioctl refused)"
                                  : "";
}
