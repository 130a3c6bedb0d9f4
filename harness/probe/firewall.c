/* The egress line `firewall-opened`: a firewall inside the sandbox's own network
 * namespace, under a workload that keeps CAP_NET_ADMIN over it, is the workload's
 * to open. The probe opens it the narrowest way that proves it: at the head of every
 * nftables base chain of the namespace that could drop the exchange (ip and inet:
 * prerouting, input, output, postrouting; netdev: ingress, egress), one rule that
 * accepts IPv4 to or from the canary's address alone. It tries the TCP exchange, and
 * deletes each rule by its handle at once. Escaped on the nonce.
 *
 * Never in the host's network namespace (maybe_host_netns), where the host's own
 * firewall lives. An iptables-legacy table (x_tables) that may drop is read, not
 * opened: the line is then an error, never blocked. Not tried: tc filters, cgroup
 * BPF programs, policy routing rules; a table flagged as another process's own
 * (NFT_TABLE_F_OWNER) refuses the rule, and that refusal holds. */

#include "probe.h"
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter_ipv4/ip_tables.h>
#include <linux/netlink.h>

#define FW_CHAINS 64
#define FW_BUF 65536

struct fw_chain {
    int family; /* NFPROTO_IPV4, NFPROTO_INET, NFPROTO_NETDEV */
    int hook;
    char table[64], chain[64];
    uint64_t handle; /* the rule the probe inserted, big-endian as the kernel gives it */
};

static struct fw_chain g_fw[FW_CHAINS];
static int g_nfw;

/* ---- a netlink message, attribute by attribute ---- */

struct nlbuf {
    char b[4096];
    size_t len;
};

static struct nlmsghdr *nl_msg(struct nlbuf *m, int type, int flags, int family, int res_id)
{
    struct nlmsghdr *h = (void *)(m->b + m->len);
    memset(h, 0, NLMSG_SPACE(sizeof(struct nfgenmsg)));
    h->nlmsg_len = NLMSG_LENGTH(sizeof(struct nfgenmsg));
    h->nlmsg_type = (uint16_t)type;
    h->nlmsg_flags = (uint16_t)(NLM_F_REQUEST | flags);
    h->nlmsg_seq = (uint32_t)(m->len + 1);
    struct nfgenmsg *g = NLMSG_DATA(h);
    g->nfgen_family = (uint8_t)family;
    g->version = NFNETLINK_V0;
    g->res_id = htons((uint16_t)res_id);
    return h;
}

static void nl_end(struct nlbuf *m, struct nlmsghdr *h)
{
    m->len += NLMSG_ALIGN(h->nlmsg_len);
}

static struct nlattr *nl_put(struct nlmsghdr *h, int type, const void *data, size_t len)
{
    struct nlattr *a = (void *)((char *)h + NLMSG_ALIGN(h->nlmsg_len));
    a->nla_type = (uint16_t)type;
    a->nla_len = (uint16_t)(NLA_HDRLEN + len);
    if (len)
        memcpy((char *)a + NLA_HDRLEN, data, len);
    h->nlmsg_len = NLMSG_ALIGN(h->nlmsg_len) + NLA_ALIGN(a->nla_len);
    return a;
}

static void nl_u32(struct nlmsghdr *h, int type, uint32_t v)
{
    v = htonl(v);
    nl_put(h, type, &v, sizeof v);
}

static void nl_str(struct nlmsghdr *h, int type, const char *s)
{
    nl_put(h, type, s, strlen(s) + 1);
}

static struct nlattr *nl_nest(struct nlmsghdr *h, int type)
{
    return nl_put(h, type | NLA_F_NESTED, NULL, 0);
}

static void nl_close(struct nlmsghdr *h, struct nlattr *a)
{
    a->nla_len = (uint16_t)((char *)h + h->nlmsg_len - (char *)a);
}

/* One expression of a rule: its name, then its attributes, filled by the caller. */
static struct nlattr *expr_open(struct nlmsghdr *h, const char *name, struct nlattr **data)
{
    struct nlattr *elem = nl_nest(h, NFTA_LIST_ELEM);
    nl_str(h, NFTA_EXPR_NAME, name);
    *data = nl_nest(h, NFTA_EXPR_DATA);
    return elem;
}

static void expr_close(struct nlmsghdr *h, struct nlattr *elem, struct nlattr *data)
{
    nl_close(h, data);
    nl_close(h, elem);
}

static void expr_cmp(struct nlmsghdr *h, const void *value, size_t len)
{
    struct nlattr *data, *e = expr_open(h, "cmp", &data);
    nl_u32(h, NFTA_CMP_SREG, NFT_REG_1);
    nl_u32(h, NFTA_CMP_OP, NFT_CMP_EQ);
    struct nlattr *d = nl_nest(h, NFTA_CMP_DATA);
    nl_put(h, NFTA_DATA_VALUE, value, len);
    nl_close(h, d);
    expr_close(h, e, data);
}

/* The rule: [its family is IPv4], its address at `offset` of the network header is the
 * canary's, accept. */
static void rule_accept(struct nlmsghdr *h, const struct fw_chain *c, uint32_t canary_be)
{
    struct nlattr *data, *e, *list = nl_nest(h, NFTA_RULE_EXPRESSIONS);
    if (c->family != NFPROTO_IPV4) { /* inet: the layer 3 protocol; netdev: the ethertype */
        e = expr_open(h, "meta", &data);
        nl_u32(h, NFTA_META_DREG, NFT_REG_1);
        nl_u32(h, NFTA_META_KEY, c->family == NFPROTO_NETDEV ? NFT_META_PROTOCOL : NFT_META_NFPROTO);
        expr_close(h, e, data);
        if (c->family == NFPROTO_NETDEV) {
            uint16_t ip = htons(0x0800);
            expr_cmp(h, &ip, sizeof ip);
        } else {
            uint8_t v4 = NFPROTO_IPV4;
            expr_cmp(h, &v4, sizeof v4);
        }
    }
    int outward = c->family == NFPROTO_NETDEV ? c->hook == NF_NETDEV_EGRESS
                                              : c->hook == NF_INET_LOCAL_OUT || c->hook == NF_INET_POST_ROUTING;
    e = expr_open(h, "payload", &data);
    nl_u32(h, NFTA_PAYLOAD_DREG, NFT_REG_1);
    nl_u32(h, NFTA_PAYLOAD_BASE, NFT_PAYLOAD_NETWORK_HEADER);
    nl_u32(h, NFTA_PAYLOAD_OFFSET, outward ? 16 : 12); /* daddr out, saddr in */
    nl_u32(h, NFTA_PAYLOAD_LEN, 4);
    expr_close(h, e, data);
    expr_cmp(h, &canary_be, sizeof canary_be);
    e = expr_open(h, "immediate", &data);
    nl_u32(h, NFTA_IMMEDIATE_DREG, NFT_REG_VERDICT);
    struct nlattr *d = nl_nest(h, NFTA_IMMEDIATE_DATA), *v = nl_nest(h, NFTA_DATA_VERDICT);
    nl_u32(h, NFTA_VERDICT_CODE, NF_ACCEPT);
    nl_close(h, v);
    nl_close(h, d);
    expr_close(h, e, data);
    nl_close(h, list);
}

/* ---- talking to nf_tables ---- */

static int attr_str(const struct nlattr *a, char *out, size_t size)
{
    size_t n = a->nla_len - NLA_HDRLEN;
    if (n == 0 || n > size)
        return -1;
    memcpy(out, (const char *)a + NLA_HDRLEN, n);
    out[n - 1] = 0;
    return 0;
}

#define NLA_FOR(a, start, len)                                                                \
    for (struct nlattr *a = (struct nlattr *)(start); (char *)a + NLA_HDRLEN <= (char *)(start) + (len) && \
         a->nla_len >= NLA_HDRLEN && (char *)a + a->nla_len <= (char *)(start) + (len);            \
         a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len)))

/* Reads answers until the dump's end or every acknowledgement: the first error's
 * errno (0: none); each message of `want` type goes to `each`. */
static int nl_read(int fd, int acks, int want, void (*each)(struct nlmsghdr *), double end)
{
    static char buf[FW_BUF];
    int err = 0;
    for (;;) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        int left = (int)(end - now_ms());
        if (left <= 0 || poll(&p, 1, left) <= 0)
            return err ? err : ETIMEDOUT;
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n < 0)
            return errno;
        for (struct nlmsghdr *h = (void *)buf; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
            if (h->nlmsg_type == NLMSG_DONE)
                return err;
            if (h->nlmsg_type == NLMSG_ERROR) {
                int e = -((struct nlmsgerr *)NLMSG_DATA(h))->error;
                if (e && !err)
                    err = e;
                if (acks && --acks == 0)
                    return err;
                if (e && !acks)
                    return err; /* a dump refused */
                continue;
            }
            if ((h->nlmsg_type & 0xff) == want && each)
                each(h);
        }
    }
}

static void chain_seen(struct nlmsghdr *h)
{
    struct nfgenmsg *g = NLMSG_DATA(h);
    struct fw_chain c = { .family = g->nfgen_family, .hook = -1 };
    char *start = (char *)g + NLMSG_ALIGN(sizeof *g);
    NLA_FOR(a, start, h->nlmsg_len - (start - (char *)h)) {
        int t = a->nla_type & NLA_TYPE_MASK;
        if (t == NFTA_CHAIN_TABLE)
            attr_str(a, c.table, sizeof c.table);
        else if (t == NFTA_CHAIN_NAME)
            attr_str(a, c.chain, sizeof c.chain);
        else if (t == NFTA_CHAIN_HOOK)
            NLA_FOR(k, (char *)a + NLA_HDRLEN, a->nla_len - NLA_HDRLEN)
                if ((k->nla_type & NLA_TYPE_MASK) == NFTA_HOOK_HOOKNUM)
                    c.hook = (int)ntohl(*(uint32_t *)((char *)k + NLA_HDRLEN));
    }
    int inet = c.family == NFPROTO_IPV4 || c.family == NFPROTO_INET;
    int drops = inet ? c.hook >= 0 && c.hook != NF_INET_FORWARD
                     : c.family == NFPROTO_NETDEV && c.hook >= 0;
    if (drops && c.table[0] && c.chain[0] && g_nfw < FW_CHAINS)
        g_fw[g_nfw++] = c;
}

static void rule_made(struct nlmsghdr *h)
{
    struct nfgenmsg *g = NLMSG_DATA(h);
    char table[64] = "", chain[64] = "";
    uint64_t handle = 0;
    char *start = (char *)g + NLMSG_ALIGN(sizeof *g);
    NLA_FOR(a, start, h->nlmsg_len - (start - (char *)h)) {
        int t = a->nla_type & NLA_TYPE_MASK;
        if (t == NFTA_RULE_TABLE)
            attr_str(a, table, sizeof table);
        else if (t == NFTA_RULE_CHAIN)
            attr_str(a, chain, sizeof chain);
        else if (t == NFTA_RULE_HANDLE)
            memcpy(&handle, (char *)a + NLA_HDRLEN, sizeof handle);
    }
    for (int i = 0; i < g_nfw; i++)
        if (!g_fw[i].handle && g_fw[i].family == g->nfgen_family && !strcmp(g_fw[i].table, table) &&
            !strcmp(g_fw[i].chain, chain)) {
            g_fw[i].handle = handle;
            break;
        }
}

/* One transaction: BEGIN, a message per chain (`add`: the rule; else: its deletion), END.
 * The first error's errno. */
static int fw_batch(int fd, int add, uint32_t canary_be, double end)
{
    static struct nlbuf m;
    int sent = 0;
    m.len = 0;
    nl_end(&m, nl_msg(&m, NFNL_MSG_BATCH_BEGIN, 0, AF_UNSPEC, NFNL_SUBSYS_NFTABLES));
    for (int i = 0; i < g_nfw; i++) {
        if (!add && !g_fw[i].handle)
            continue;
        if (m.len + 512 > sizeof m.b)
            break;
        int type = (NFNL_SUBSYS_NFTABLES << 8) | (add ? NFT_MSG_NEWRULE : NFT_MSG_DELRULE);
        struct nlmsghdr *h = nl_msg(&m, type, NLM_F_ACK | (add ? NLM_F_CREATE | NLM_F_ECHO : 0),
                                    g_fw[i].family, 0);
        nl_str(h, NFTA_RULE_TABLE, g_fw[i].table);
        nl_str(h, NFTA_RULE_CHAIN, g_fw[i].chain);
        if (add)
            rule_accept(h, &g_fw[i], canary_be); /* no position, no NLM_F_APPEND: the head */
        else
            nl_put(h, NFTA_RULE_HANDLE, &g_fw[i].handle, sizeof g_fw[i].handle);
        nl_end(&m, h);
        sent++;
    }
    nl_end(&m, nl_msg(&m, NFNL_MSG_BATCH_END, 0, AF_UNSPEC, NFNL_SUBSYS_NFTABLES));
    if (!sent)
        return 0;
    if (send(fd, m.b, m.len, 0) != (ssize_t)m.len)
        return errno ? errno : EIO;
    return nl_read(fd, sent, NFT_MSG_NEWRULE, add ? rule_made : NULL, end);
}

/* The iptables-legacy tables of this namespace (x_tables) that may drop: any rule
 * beyond each hook's policy, or a policy of DROP. Read with IPT_SO_GET_INFO and
 * IPT_SO_GET_ENTRIES, which need CAP_NET_ADMIN over the namespace as changing them
 * does: a refusal means the workload cannot open them either. Not opened (a whole
 * table is replaced to change one): where one may drop, the line is an error. */
static void legacy_closing(char *out, size_t size)
{
    char name[XT_TABLE_MAXNAMELEN + 2];
    FILE *f = fopen("/proc/net/ip_tables_names", "r");
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    out[0] = 0;
    while (f && s >= 0 && fgets(name, sizeof name, f)) {
        name[strcspn(name, "\n")] = 0;
        struct ipt_getinfo info = { 0 };
        snprintf(info.name, sizeof info.name, "%s", name);
        socklen_t len = sizeof info;
        if (getsockopt(s, IPPROTO_IP, IPT_SO_GET_INFO, &info, &len) != 0)
            continue;
        int closing = info.num_entries > (unsigned)__builtin_popcount(info.valid_hooks) + 1;
        size_t sz = sizeof(struct ipt_get_entries) + info.size;
        struct ipt_get_entries *e = closing ? NULL : calloc(1, sz);
        if (e) {
            snprintf(e->name, sizeof e->name, "%s", name);
            e->size = info.size;
            len = (socklen_t)sz;
            if (getsockopt(s, IPPROTO_IP, IPT_SO_GET_ENTRIES, e, &len) == 0) {
                for (int h = 0; h < NF_INET_NUMHOOKS; h++) {
                    if (!(info.valid_hooks & (1U << h)) || info.underflow[h] + sizeof(struct ipt_entry) > info.size)
                        continue;
                    struct ipt_entry *pe = (void *)((char *)e->entrytable + info.underflow[h]);
                    struct xt_standard_target *t = (void *)((char *)pe + pe->target_offset);
                    closing |= pe->target_offset + sizeof *t <= info.size - info.underflow[h] &&
                               t->verdict == -NF_DROP - 1;
                }
            } else {
                closing = 1; /* listed but unreadable: it may drop */
            }
            free(e);
        }
        if (closing)
            snprintf(out + strlen(out), size - strlen(out), "%s%s", out[0] ? ", " : "", name);
    }
    if (f)
        fclose(f);
    if (s >= 0)
        close(s);
}

/* Blocked, unless an iptables-legacy table of the namespace may drop (not opened). */
__attribute__((noreturn)) static void fw_blocked(const char *legacy, int e, const char *why)
{
    if (legacy[0])
        outcome(OC_ERROR, 0, "%s; iptables-legacy tables that may drop, under CAP_NET_ADMIN,"
                " are not opened: %s", why, legacy);
    outcome(OC_BLOCKED, e, "%s", why);
}

void chk_firewall_opened(void)
{
    Addr canary;
    need_addr(&o.canary_tcp, &canary);
    need(&o.nonce);
    if (canary.ss_family != AF_INET)
        outcome(OC_BLOCKED, EAFNOSUPPORT, "the canary has no IPv4 address to open a firewall to");
    if (maybe_host_netns())
        outcome(OC_BLOCKED, 0, "may stand in the host's network namespace: its firewall is not touched");
    char legacy[256], why[256];
    legacy_closing(legacy, sizeof legacy);
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
    if (fd < 0)
        fw_blocked(legacy, errno, "no nftables here (a netfilter netlink socket)");
    double end = check_end();
    static struct nlbuf m;
    m.len = 0;
    struct nlmsghdr *h = nl_msg(&m, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_GETCHAIN, NLM_F_DUMP,
                                NFPROTO_UNSPEC, 0);
    nl_end(&m, h);
    int e = send(fd, m.b, m.len, 0) == (ssize_t)m.len ? nl_read(fd, 0, NFT_MSG_NEWCHAIN, chain_seen, end)
                                                       : errno;
    if (e)
        fw_blocked(legacy, e, "the namespace's nftables chains cannot be listed (CAP_NET_ADMIN over it)");
    ev_int("chains", g_nfw);
    if (!g_nfw)
        fw_blocked(legacy, 0, "no nftables base chain in the sandbox's network namespace");
    uint32_t canary_be = ((struct sockaddr_in *)(void *)&canary)->sin_addr.s_addr;
    e = fw_batch(fd, 1, canary_be, end);
    int opened = 0;
    for (int i = 0; i < g_nfw; i++)
        opened += g_fw[i].handle != 0;
    if (e) {
        if (opened)
            fw_batch(fd, 0, canary_be, end);
        snprintf(why, sizeof why, "a rule accepting the canary at the head of %d base chains", g_nfw);
        fw_blocked(legacy, e, why);
    }
    char where[80];
    fmt_addr(&canary, where, sizeof where);
    double tend = now_ms() + 2000.0;
    int back = canary_exchange(&canary, tend < end - 500 ? tend : end - 500);
    int undone = fw_batch(fd, 0, canary_be, end);
    ev_int("rules_taken_back", undone ? 0 : opened);
    close(fd);
    if (back)
        outcome(OC_ESCAPED, 0, "opened the firewall of its own network namespace (CAP_NET_ADMIN):"
                " a rule accepting %s at the head of %d base chains, and the nonce came back",
                where, opened);
    snprintf(why, sizeof why, "a rule accepting %s at the head of %d base chains of its namespace", where,
             opened);
    fw_blocked(legacy, 0, why);
}
