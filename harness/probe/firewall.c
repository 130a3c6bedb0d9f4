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
 * opened: the line is then an error, never blocked. Its netlink socket, where socket(2)
 * refused it every way as a filter refuses, is made by the i386 entry or the ring
 * (sock_entries: "no firewall changes" by x86_64's call alone). Not tried: tc filters, cgroup
 * BPF programs, policy routing rules; a table flagged as another process's own
 * (NFT_TABLE_F_OWNER) refuses the rule, and that refusal holds. */

#include "probe.h"
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter_arp.h>
#include <linux/netfilter_ipv4/ip_tables.h>
#include <linux/netlink.h>

#define FW_CHAINS 256
#define FW_RULES (FW_CHAINS * 2) /* an IPv4 and an IPv6 rule a chain at most */
#define FW_NAME 256              /* nftables allows table and chain names of 255 bytes */
#define FW_MSG 1536              /* the largest message: two names and a rule's expressions */
#define FW_BUF 65536

struct fw_chain {
    int family; /* NFPROTO_IPV4, _IPV6, _INET, _NETDEV, _BRIDGE, _ARP */
    int hook;
    char table[FW_NAME], chain[FW_NAME];
};

struct fw_rule {
    int chain; /* index in g_fw */
    int v6;    /* the rule's address family; -1: an ARP chain's, which accepts every ARP */
    uint64_t handle; /* as the kernel gives it back (big-endian), 0: not put in */
};

static struct fw_chain g_fw[FW_CHAINS];
static int g_nfw, g_fw_lost; /* lost: chains the table could not hold or parse */
static struct fw_rule g_rules[FW_RULES];
static int g_nrules;
static char g_owned[FW_CHAINS][FW_NAME]; /* tables another process owns (NFT_TABLE_F_OWNER) */
static int g_nowned, g_owned_chains;

/* ---- a netlink message, attribute by attribute ---- */

struct nlbuf {
    char *b;
    size_t len, cap;
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

/* Whether a chain's hook sees packets on their way out (else on their way in). */
static int outward(const struct fw_chain *c)
{
    if (c->family == NFPROTO_NETDEV)
        return c->hook == NF_NETDEV_EGRESS;
    return c->hook == NF_INET_LOCAL_OUT || c->hook == NF_INET_POST_ROUTING; /* bridge's too */
}

/* The rule: [its protocol is the address's], its address at the header's destination
 * (on the way out) or source (on the way in) is the canary's, accept. An ARP chain's
 * accepts every ARP packet: resolving the next hop is no egress of its own. */
static void rule_accept(struct nlmsghdr *h, const struct fw_chain *c, int v6, const void *canary)
{
    struct nlattr *data, *e, *list = nl_nest(h, NFTA_RULE_EXPRESSIONS);
    if (v6 >= 0) {
        int layer2 = c->family == NFPROTO_NETDEV || c->family == NFPROTO_BRIDGE;
        if (layer2 || c->family == NFPROTO_INET) { /* the ethertype, or the layer 3 family */
            e = expr_open(h, "meta", &data);
            nl_u32(h, NFTA_META_DREG, NFT_REG_1);
            nl_u32(h, NFTA_META_KEY, layer2 ? NFT_META_PROTOCOL : NFT_META_NFPROTO);
            expr_close(h, e, data);
            uint16_t proto = htons(v6 ? 0x86dd : 0x0800);
            uint8_t l3 = v6 ? NFPROTO_IPV6 : NFPROTO_IPV4;
            if (layer2)
                expr_cmp(h, &proto, sizeof proto);
            else
                expr_cmp(h, &l3, sizeof l3);
        }
        int out = outward(c);
        e = expr_open(h, "payload", &data);
        nl_u32(h, NFTA_PAYLOAD_DREG, NFT_REG_1);
        nl_u32(h, NFTA_PAYLOAD_BASE, NFT_PAYLOAD_NETWORK_HEADER);
        nl_u32(h, NFTA_PAYLOAD_OFFSET, v6 ? (out ? 24 : 8) : (out ? 16 : 12));
        nl_u32(h, NFTA_PAYLOAD_LEN, v6 ? 16 : 4);
        expr_close(h, e, data);
        expr_cmp(h, canary, v6 ? 16 : 4);
    }
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

static void table_seen(struct nlmsghdr *h)
{
    struct nfgenmsg *g = NLMSG_DATA(h);
    char name[FW_NAME] = "";
    uint32_t flags = 0;
    char *start = (char *)g + NLMSG_ALIGN(sizeof *g);
    NLA_FOR(a, start, h->nlmsg_len - (start - (char *)h)) {
        int t = a->nla_type & NLA_TYPE_MASK;
        if (t == NFTA_TABLE_NAME)
            attr_str(a, name, sizeof name);
        else if (t == NFTA_TABLE_FLAGS && a->nla_len >= NLA_HDRLEN + 4)
            flags = ntohl(*(uint32_t *)((char *)a + NLA_HDRLEN));
    }
    if ((flags & NFT_TABLE_F_OWNER) && g_nowned < FW_CHAINS)
        snprintf(g_owned[g_nowned++], FW_NAME, "%d:%.240s", g->nfgen_family, name);
}

static int owned(const struct fw_chain *c)
{
    char key[FW_NAME + 8];
    snprintf(key, sizeof key, "%d:%.240s", c->family, c->table);
    for (int i = 0; i < g_nowned; i++)
        if (!strcmp(g_owned[i], key))
            return 1;
    return 0;
}

/* A base chain that could drop the exchange: ip, ip6, inet and bridge at every hook
 * but forward; netdev at ingress and egress; arp at input and output. */
static void chain_seen(struct nlmsghdr *h)
{
    struct nfgenmsg *g = NLMSG_DATA(h);
    struct fw_chain c = { .family = g->nfgen_family, .hook = -1 };
    int bad = 0;
    char *start = (char *)g + NLMSG_ALIGN(sizeof *g);
    NLA_FOR(a, start, h->nlmsg_len - (start - (char *)h)) {
        int t = a->nla_type & NLA_TYPE_MASK;
        if (t == NFTA_CHAIN_TABLE)
            bad |= attr_str(a, c.table, sizeof c.table);
        else if (t == NFTA_CHAIN_NAME)
            bad |= attr_str(a, c.chain, sizeof c.chain);
        else if (t == NFTA_CHAIN_HOOK)
            NLA_FOR(k, (char *)a + NLA_HDRLEN, a->nla_len - NLA_HDRLEN)
                if ((k->nla_type & NLA_TYPE_MASK) == NFTA_HOOK_HOOKNUM)
                    c.hook = (int)ntohl(*(uint32_t *)((char *)k + NLA_HDRLEN));
    }
    if (c.hook < 0)
        return; /* a regular chain: reached only through a base chain's jump */
    int layer3 = c.family == NFPROTO_IPV4 || c.family == NFPROTO_IPV6 || c.family == NFPROTO_INET ||
                 c.family == NFPROTO_BRIDGE;
    int drops = layer3 ? c.hook != NF_INET_FORWARD
                       : c.family == NFPROTO_NETDEV ||
                             (c.family == NFPROTO_ARP && (c.hook == NF_ARP_IN || c.hook == NF_ARP_OUT));
    if (!drops)
        return;
    if (bad || !c.table[0] || !c.chain[0] || g_nfw >= FW_CHAINS)
        g_fw_lost++;
    else
        g_fw[g_nfw++] = c;
}

static void rule_made(struct nlmsghdr *h)
{
    struct nfgenmsg *g = NLMSG_DATA(h);
    char table[FW_NAME] = "", chain[FW_NAME] = "";
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
    for (int i = 0; i < g_nrules; i++) { /* echoes come in the order the rules were sent */
        struct fw_chain *c = &g_fw[g_rules[i].chain];
        if (!g_rules[i].handle && c->family == g->nfgen_family && !strcmp(c->table, table) &&
            !strcmp(c->chain, chain)) {
            g_rules[i].handle = handle;
            break;
        }
    }
}

static int nl_send(int fd, const struct nlbuf *m)
{
    return send(fd, m->b, m->len, 0) == (ssize_t)m->len ? 0 : errno ? errno : EIO;
}

/* A dump of `what` (NFT_MSG_GETTABLE, NFT_MSG_GETCHAIN), each answer to `each`. */
static int fw_dump(int fd, int what, int answer, void (*each)(struct nlmsghdr *), double end)
{
    static char b[256];
    struct nlbuf m = { b, 0, sizeof b };
    nl_end(&m, nl_msg(&m, (NFNL_SUBSYS_NFTABLES << 8) | what, NLM_F_DUMP, NFPROTO_UNSPEC, 0));
    int e = nl_send(fd, &m);
    return e ? e : nl_read(fd, 0, answer, each, end);
}

/* One transaction putting every rule at the head of its chain (no position and no
 * NLM_F_APPEND: the head), all or none; the first error's errno. */
static int fw_add(int fd, const void *v4, const void *v6, double end)
{
    static char b[FW_RULES * FW_MSG + 512];
    struct nlbuf m = { b, 0, sizeof b };
    nl_end(&m, nl_msg(&m, NFNL_MSG_BATCH_BEGIN, 0, AF_UNSPEC, NFNL_SUBSYS_NFTABLES));
    for (int i = 0; i < g_nrules; i++) {
        const struct fw_chain *c = &g_fw[g_rules[i].chain];
        struct nlmsghdr *h = nl_msg(&m, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWRULE,
                                    NLM_F_ACK | NLM_F_CREATE | NLM_F_ECHO, c->family, 0);
        nl_str(h, NFTA_RULE_TABLE, c->table);
        nl_str(h, NFTA_RULE_CHAIN, c->chain);
        rule_accept(h, c, g_rules[i].v6, g_rules[i].v6 == 1 ? v6 : v4);
        nl_end(&m, h);
    }
    nl_end(&m, nl_msg(&m, NFNL_MSG_BATCH_END, 0, AF_UNSPEC, NFNL_SUBSYS_NFTABLES));
    int e = nl_send(fd, &m);
    return e ? e : nl_read(fd, g_nrules, NFT_MSG_NEWRULE, rule_made, end);
}

/* Each rule put in, deleted by its handle in a transaction of its own (one that cannot
 * be deleted leaves the others deleted): how many are still in. */
static int fw_take_back(int fd, double end)
{
    static char b[FW_MSG + 512];
    int left = 0;
    for (int i = 0; i < g_nrules; i++) {
        if (!g_rules[i].handle)
            continue;
        const struct fw_chain *c = &g_fw[g_rules[i].chain];
        struct nlbuf m = { b, 0, sizeof b };
        nl_end(&m, nl_msg(&m, NFNL_MSG_BATCH_BEGIN, 0, AF_UNSPEC, NFNL_SUBSYS_NFTABLES));
        struct nlmsghdr *h = nl_msg(&m, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_DELRULE, NLM_F_ACK,
                                    c->family, 0);
        nl_str(h, NFTA_RULE_TABLE, c->table);
        nl_str(h, NFTA_RULE_CHAIN, c->chain);
        nl_put(h, NFTA_RULE_HANDLE, &g_rules[i].handle, sizeof g_rules[i].handle);
        nl_end(&m, h);
        nl_end(&m, nl_msg(&m, NFNL_MSG_BATCH_END, 0, AF_UNSPEC, NFNL_SUBSYS_NFTABLES));
        int e = nl_send(fd, &m);
        if (e || nl_read(fd, 1, 0, NULL, end + 1000) != 0)
            left++;
        else
            g_rules[i].handle = 0;
    }
    return left;
}

/* The iptables-legacy tables of this namespace (x_tables) that may drop: any rule
 * beyond each hook's policy, or a policy of DROP. Read with IPT_SO_GET_INFO and
 * IPT_SO_GET_ENTRIES, which need CAP_NET_ADMIN over the namespace as changing them
 * does: a refusal means the workload cannot open them either. Not opened (a whole
 * table is replaced to change one): where one may drop, the line is an error. */
static void legacy_closing(char *out, size_t size)
{
    char name[XT_TABLE_MAXNAMELEN + 2];
    FILE *f = proc_net_fopen("ip_tables_names");
    int s = sock_make(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    out[0] = 0;
    while (f && s >= 0 && fgets(name, sizeof name, f)) {
        name[strcspn(name, "\n")] = 0;
        struct ipt_getinfo info = { 0 };
        snprintf(info.name, sizeof info.name, "%.*s", (int)sizeof info.name - 1, name);
        socklen_t len = sizeof info;
        if (getsockopt(s, IPPROTO_IP, IPT_SO_GET_INFO, &info, &len) != 0)
            continue;
        int closing = info.num_entries > (unsigned)__builtin_popcount(info.valid_hooks) + 1;
        size_t sz = sizeof(struct ipt_get_entries) + info.size;
        struct ipt_get_entries *e = closing ? NULL : calloc(1, sz);
        if (e) {
            snprintf(e->name, sizeof e->name, "%.*s", (int)sizeof e->name - 1, name);
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

/* The canary's address of one family ("" and 0 where it has none): the TCP port is
 * the canary's; the IPv6 address is --canary6's. */
static int canary_of(int v6, Addr *a)
{
    Addr tcp;
    need_addr(&o.canary_tcp, &tcp);
    memset(a, 0, sizeof *a);
    if (!v6) {
        *a = tcp;
        return tcp.ss_family == AF_INET;
    }
    struct sockaddr_in6 *s6 = (void *)a;
    if (!o.canary6 || inet_pton(AF_INET6, o.canary6, &s6->sin6_addr) != 1)
        return 0;
    s6->sin6_family = AF_INET6;
    s6->sin6_port = htons((uint16_t)addr_port(&tcp));
    return 1;
}

void chk_firewall_opened(void)
{
    need(&o.nonce);
    Addr to[2];
    int has[2] = { canary_of(0, &to[0]), canary_of(1, &to[1]) };
    if (!has[0] && !has[1])
        outcome(OC_ERROR, 0, "the canary has no address to open a firewall to");
    if (maybe_host_netns())
        outcome(OC_BLOCKED, 0, "may stand in the host's network namespace: its firewall is not touched");
    char legacy[256], why[512];
    legacy_closing(legacy, sizeof legacy);
    int fd = sock_make(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
    if (fd < 0 && (errno == EPERM || errno == EACCES)) /* refused as a filter refuses: a filter
                                                       * of x86_64's socket(2) alone leaves the
                                                       * i386 entry's and the ring's */
        fd = sock_entries(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
    if (fd < 0)
        fw_blocked(legacy, errno, "no nftables here (a netfilter netlink socket)");
    char nl_way[200]; /* the way its netlink socket took (sock_way), before the exchange's */
    snprintf(nl_way, sizeof nl_way, "%s", sock_way());
    double end = check_end();
    int e = fw_dump(fd, NFT_MSG_GETTABLE, NFT_MSG_NEWTABLE, table_seen, end);
    if (!e)
        e = fw_dump(fd, NFT_MSG_GETCHAIN, NFT_MSG_NEWCHAIN, chain_seen, end);
    if (e)
        fw_blocked(legacy, e, "the namespace's nftables chains cannot be listed (CAP_NET_ADMIN over it)");
    ev_int("chains", g_nfw);
    if (g_fw_lost)
        outcome(OC_ERROR, 0, "%d nftables base chains of the namespace could not be held (more than %d,"
                " or unreadable): not all of its firewall would be opened", g_fw_lost, FW_CHAINS);
    for (int i = 0; i < g_nfw; i++) {
        const struct fw_chain *c = &g_fw[i];
        if (owned(c)) { /* another process's own table refuses every change: left out */
            g_owned_chains++;
            continue;
        }
        if (c->family == NFPROTO_ARP) {
            g_rules[g_nrules++] = (struct fw_rule){ i, -1, 0 };
            continue;
        }
        if (has[0] && c->family != NFPROTO_IPV6)
            g_rules[g_nrules++] = (struct fw_rule){ i, 0, 0 };
        if (has[1] && c->family != NFPROTO_IPV4)
            g_rules[g_nrules++] = (struct fw_rule){ i, 1, 0 };
    }
    ev_int("owned_chains", g_owned_chains);
    if (!g_nrules && !g_owned_chains)
        fw_blocked(legacy, 0, "no nftables base chain in the sandbox's network namespace");
    struct in6_addr v6 = ((struct sockaddr_in6 *)(void *)&to[1])->sin6_addr;
    uint32_t v4 = ((struct sockaddr_in *)(void *)&to[0])->sin_addr.s_addr;
    e = g_nrules ? fw_add(fd, &v4, &v6, end) : 0;
    int opened = 0;
    for (int i = 0; i < g_nrules; i++)
        opened += g_rules[i].handle != 0;
    if (e || opened != g_nrules) {
        int left = fw_take_back(fd, end);
        close(fd);
        if (left)
            outcome(OC_ERROR, e, "%d accept rules it put in could not be taken back", left);
        snprintf(why, sizeof why, "rules accepting the canary at the head of %d base chains (%d of %d"
                 " put in)", g_nfw, opened, g_nrules);
        if (e == EPERM || e == EACCES)
            fw_blocked(legacy, e, why);
        outcome(OC_ERROR, e ? e : EIO, "%s", why);
    }
    char where[2][80] = { "", "" };
    int back = 0, via = -1;
    for (int f = 0; f < 2 && !back; f++) {
        if (!has[f])
            continue;
        fmt_addr(&to[f], where[f], sizeof where[f]);
        double tend = now_ms() + 2000.0, limit = end - 1500;
        back = canary_exchange(&to[f], tend < limit ? tend : limit);
        via = back ? f : via;
    }
    int left = fw_take_back(fd, end);
    ev_int("rules_taken_back", opened - left);
    close(fd);
    if (back)
        outcome(OC_ESCAPED, 0, "opened the firewall of its own network namespace (CAP_NET_ADMIN)%s:"
                " rules accepting %s at the head of %d base chains, and the nonce came back%s",
                nl_way, where[via], g_nfw - g_owned_chains, g_cx_way);
    if (left)
        outcome(OC_ERROR, 0, "%d accept rules it put in could not be taken back", left);
    if (g_owned_chains)
        outcome(OC_ERROR, 0, "%d base chains are in tables another process owns (NFT_TABLE_F_OWNER),"
                " which refuse every change but the owner's: not opened", g_owned_chains);
    snprintf(why, sizeof why, "rules accepting %s%s%s at the head of %d base chains of its namespace",
             where[0], where[0][0] && where[1][0] ? " and " : "", where[1], g_nfw);
    fw_blocked(legacy, 0, why);
}
