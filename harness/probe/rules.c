/* Policy routing in the sandbox's own network namespace, for route-made: rules ahead
 * of the main table (a `prohibit`, a `blackhole`, a lookup of a table that leads
 * nowhere, a rule letting out only the policy's destination) keep the canary's
 * traffic from the routes a workload can see and make. A workload that keeps
 * CAP_NET_ADMIN steps around them with a rule of its own ahead of theirs, sending the
 * canary's address to the main table; this is that rule, added for the time of the
 * attempts and taken back. The sandbox's own rules are never changed. */

#include "probe.h"

#include <linux/fib_rules.h>
#include <linux/rtnetlink.h>

#define RULE_BUF 16384

/* The kernel's own rules: local at 0, main at 32766, and for IPv4 default at 32767. */
static int kernel_rule(uint32_t pref, uint32_t table, int action)
{
    return action == FR_ACT_TO_TBL && ((pref == 0 && table == RT_TABLE_LOCAL) ||
                                       (pref == 32766 && table == RT_TABLE_MAIN) ||
                                       (pref == 32767 && table == RT_TABLE_DEFAULT));
}

/* The namespace's rules of `family` (AF_INET, AF_INET6) other than the kernel's,
 * counted, with the lowest priority among them in *low; -1 with errno where they
 * could not be listed. */
static int rules_ahead(int family, uint32_t *low)
{
    int fd = sock_make(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0)
        return -1;
    struct {
        struct nlmsghdr h;
        struct fib_rule_hdr r;
    } req = { .h = { .nlmsg_len = sizeof req, .nlmsg_type = RTM_GETRULE,
                     .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP, .nlmsg_seq = 1 },
              .r = { .family = (unsigned char)family } };
    if (send(fd, &req, sizeof req, 0) != (ssize_t)sizeof req) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    static char buf[RULE_BUF];
    int count = 0;
    *low = UINT32_MAX;
    for (;;) {
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int e = n < 0 ? errno : EIO;
            close(fd);
            errno = e;
            return -1;
        }
        for (struct nlmsghdr *h = (void *)buf; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
            if (h->nlmsg_type == NLMSG_DONE) {
                close(fd);
                return count;
            }
            if (h->nlmsg_type == NLMSG_ERROR) {
                int e = -((struct nlmsgerr *)NLMSG_DATA(h))->error;
                close(fd);
                errno = e ? e : EIO;
                return -1;
            }
            if (h->nlmsg_type != RTM_NEWRULE)
                continue;
            struct fib_rule_hdr *r = NLMSG_DATA(h);
            uint32_t pref = 0, table = r->table;
            int len = (int)h->nlmsg_len - (int)NLMSG_LENGTH(sizeof *r);
            for (struct rtattr *a = (void *)((char *)r + NLMSG_ALIGN(sizeof *r)); RTA_OK(a, len);
                 a = RTA_NEXT(a, len)) {
                if (a->rta_type == FRA_PRIORITY && RTA_PAYLOAD(a) >= 4)
                    memcpy(&pref, RTA_DATA(a), 4);
                else if (a->rta_type == FRA_TABLE && RTA_PAYLOAD(a) >= 4)
                    memcpy(&table, RTA_DATA(a), 4);
            }
            if (kernel_rule(pref, table, r->action))
                continue;
            count++;
            if (pref < *low)
                *low = pref;
        }
    }
}

static void rta_put(struct nlmsghdr *h, int type, const void *v, size_t len)
{
    struct rtattr *a = (void *)((char *)h + NLMSG_ALIGN(h->nlmsg_len));
    a->rta_type = (unsigned short)type;
    a->rta_len = (unsigned short)RTA_LENGTH(len);
    memcpy(RTA_DATA(a), v, len);
    h->nlmsg_len = NLMSG_ALIGN(h->nlmsg_len) + RTA_ALIGN(a->rta_len);
}

static void rta_u32(struct nlmsghdr *h, int type, uint32_t v)
{
    rta_put(h, type, &v, 4);
}

/* Add (RTM_NEWRULE) or take back (RTM_DELRULE) the rule `to dst lookup main` (a host
 * prefix: /32, /128; dst in network order) at priority `pref`; 0, or the kernel's
 * errno. */
static int rule_to_main(int type, int family, const void *dst, uint32_t pref)
{
    int fd = sock_make(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0)
        return errno;
    struct {
        struct nlmsghdr h;
        struct fib_rule_hdr r;
        char attrs[64];
    } req;
    memset(&req, 0, sizeof req);
    req.h.nlmsg_len = NLMSG_LENGTH(sizeof req.r);
    req.h.nlmsg_type = (unsigned short)type;
    req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | (type == RTM_NEWRULE ? NLM_F_CREATE | NLM_F_EXCL : 0);
    req.h.nlmsg_seq = 2;
    size_t alen = family == AF_INET6 ? 16 : 4;
    req.r.family = (unsigned char)family;
    req.r.dst_len = (unsigned char)(alen * 8);
    req.r.table = RT_TABLE_MAIN;
    req.r.action = FR_ACT_TO_TBL;
    rta_put(&req.h, FRA_DST, dst, alen);
    rta_u32(&req.h, FRA_PRIORITY, pref);
    rta_u32(&req.h, FRA_TABLE, RT_TABLE_MAIN);
    int err = 0;
    if (send(fd, &req, req.h.nlmsg_len, 0) != (ssize_t)req.h.nlmsg_len) {
        err = errno ? errno : EIO;
    } else {
        char buf[1024];
        struct pollfd p = { .fd = fd, .events = POLLIN };
        ssize_t n = poll(&p, 1, 2000) > 0 ? recv(fd, buf, sizeof buf, 0) : -1;
        struct nlmsghdr *h = (void *)buf;
        if (n < 0)
            err = errno ? errno : ETIMEDOUT;
        else if (NLMSG_OK(h, (size_t)n) && h->nlmsg_type == NLMSG_ERROR)
            err = -((struct nlmsgerr *)NLMSG_DATA(h))->error;
        else
            err = EIO;
    }
    close(fd);
    return err;
}

/* The rule of the workload's own that route-made puts ahead of the sandbox's, if any:
 * taken back before any outcome. */
static struct {
    int family, on;
    unsigned char dst[16];
    uint32_t pref;
} g_rule;

void rule_release(void)
{
    if (g_rule.on)
        rule_to_main(RTM_DELRULE, g_rule.family, g_rule.dst, g_rule.pref);
    g_rule.on = 0;
}

int rule_held(void)
{
    return g_rule.on;
}

/* Rules of the sandbox's of `family` ahead of the main table: one of the workload's
 * ahead of them sends the canary's address (`dst`, network order) to the main table
 * (CAP_NET_ADMIN). The first refusal's errno goes to *first; an error outcome where
 * one of theirs sits at priority 0, which no rule of the workload's can precede. */
void rule_step_around(int family, const void *dst, const char *where, int *first)
{
    uint32_t low = 0;
    int ahead = rules_ahead(family, &low);
    ev_int(family == AF_INET6 ? "rules_ahead6" : "rules_ahead", ahead);
    if (ahead <= 0)
        return;
    uint32_t pref = low > 1 ? 1 : 0;
    int e = rule_to_main(RTM_NEWRULE, family, dst, pref);
    if (e) {
        if (!*first)
            *first = e;
        return;
    }
    g_rule.family = family, g_rule.pref = pref, g_rule.on = 1;
    memcpy(g_rule.dst, dst, family == AF_INET6 ? 16 : 4);
    if (low == 0) {
        rule_release();
        outcome(OC_ERROR, 0, "%d %s rules of the sandbox's ahead of the main table, one at priority"
                " 0, which no rule of the workload's can precede (it may make rules: CAP_NET_ADMIN):"
                " no proof that none leads to %s", ahead, family == AF_INET6 ? "IPv6" : "IPv4", where);
    }
    ev_int(family == AF_INET6 ? "rule_pref6" : "rule_pref", (long long)pref);
}
