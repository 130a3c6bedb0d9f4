/* Scenario "egress": attempts to reach the denied canary, and the sweep of
 * every port, protocol, resolver and unix socket the sandbox can try. */

#include "probe.h"

void chk_tcp_denied_name(void)
{
    Addr srv, dst;
    struct dns_ans r;
    char name[300], where[80];
    int step;
    need_addr(&o.resolver, &srv);
    need_addr(&o.canary_tcp, &dst);
    need(&o.nonce);
    snprintf(name, sizeof name, "t-%s.%s", need(&o.tag), need(&o.denied_name));
    fmt_addr(&srv, where, sizeof where);
    ev_str("qname", name);
    if (dns_query(&srv, 0, name, DNS_A, &r, &step) != 0)
        outcome(step == DQ_ENCODE ? "error" : "blocked", errno, "DNS A %s via %s: %s",
                name, where, dq_step[step]);
    if (r.rcode || !r.has_a)
        outcome("blocked", 0, "DNS A %s via %s: rcode %d, no A record", name, where, r.rcode);
    char ip[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &r.a, ip, sizeof ip);
    ev_str("resolved", ip);
    /* The answer, on the canary's port. */
    unsigned port = addr_port(&dst);
    struct sockaddr_in *s4 = (void *)&dst;
    memset(&dst, 0, sizeof dst);
    s4->sin_family = AF_INET;
    s4->sin_port = htons((uint16_t)port);
    s4->sin_addr = r.a;
    tcp_check(&dst);
}

/* The TCP exchange with the address in an option. */
__attribute__((noreturn))
void tcp_to(const char **opt)
{
    Addr a;
    need_addr(opt, &a);
    tcp_check(&a);
}

void chk_tcp_raw_ip(void) { tcp_to(&o.canary_tcp); }
void chk_doh_port(void) { tcp_to(&o.doh); }

/* TXT <check-id>.<tag>.<denied-name> to the alternate resolver. */
static void dns_alt(int tcp)
{
    Addr srv;
    struct dns_ans r;
    char name[300], want[300], where[80];
    int step;
    need_addr(&o.alt_dns, &srv);
    snprintf(name, sizeof name, "%s.%s.%s", g_cur->id, need(&o.tag), need(&o.denied_name));
    snprintf(want, sizeof want, "nonce=%s", need(&o.nonce));
    fmt_addr(&srv, where, sizeof where);
    ev_str("dst", where);
    ev_str("qname", name);
    if (dns_query(&srv, tcp, name, DNS_TXT, &r, &step) != 0) {
        if (step == DQ_ENCODE)
            fail(0, "cannot encode DNS name %s", name);
        if (!tcp || step == DQ_CONNECT)
            outcome("blocked", errno, "DNS TXT %s via %s/%s: %s", name, where, tcp ? "tcp" : "udp",
                    dq_step[step]);
        /* Over TCP, a completed connect already crossed the boundary. */
        outcome("succeeded", 0, "connected to %s, but no DNS answer: %s: %s", where, dq_step[step],
                strerror(errno));
    }
    if (!strcmp(r.txt, want))
        outcome("escaped", 0, "TXT answer from %s carries the nonce", where);
    outcome("succeeded", 0, "answer from %s without the nonce (rcode %d, %d answers)",
            where, r.rcode, r.ancount);
}

void chk_dns_alt_udp(void) { dns_alt(0); }
void chk_dns_alt_tcp(void) { dns_alt(1); }

/* ---- scenario "egress": the sweep ------------------------------------------
 * Every channel a real network leaves open, for IPv4 and IPv6 at once: TCP to a
 * spread of ports, UDP, ICMP echo, DNS through the sandbox's own resolver, and
 * HTTP CONNECT / SOCKS5 through every unix socket the sandbox can reach. All
 * attempts run concurrently on nonblocking sockets in one child, so the sweep
 * fits in one check's time limit; each attempt is reported as a check line of
 * its own ("kind":"attempt"). A packet that leaves proves nothing by itself
 * here: the canary's nonce coming back does, and so does the canary's log. */

static const int sweep_tcp_ports[] = { 22, 25, 53, 80, 443, 853, 8080, 8443, 0 /* high */ };
static const int sweep_udp_ports[] = { 53, 123, 443, 0 /* high */ };

enum { X_LINE, X_DNS, X_HTTP, X_SOCKS, X_ICMP };
enum { S_CONNECT, S_SEND, S_RECV, S_DONE };
enum { G_SELF, G_OWN_DNS, G_UNIX };
#define MAX_ATT 192
#define UNIX_MAX 48

struct att {
    char id[48], dsts[120];
    int family, type, talk, group, raw, fd, state, step, err, src_port;
    Addr dst;
    struct sockaddr_un un;
    double t0, end;
    unsigned char out[700], in[1500];
    size_t outn, outoff, inn;
    uint16_t qid;
    char oc[12], detail[300], qname[300];
};
static struct att g_att[MAX_ATT];
static size_t g_natt;

static struct att *att_new(const char *id, int group)
{
    if (g_natt == MAX_ATT)
        return NULL;
    struct att *a = &g_att[g_natt++];
    memset(a, 0, sizeof *a);
    snprintf(a->id, sizeof a->id, "%s", id);
    a->group = group;
    a->fd = -1;
    return a;
}

__attribute__((format(printf, 4, 5)))
static void att_end(struct att *a, const char *oc, int e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->detail, sizeof a->detail, fmt, ap);
    va_end(ap);
    snprintf(a->oc, sizeof a->oc, "%s", oc);
    a->err = e;
    a->state = S_DONE;
    if (a->fd >= 0)
        close(a->fd);
    a->fd = -1;
}

/* One check line's fragment for the parent: "id":..,"kind":"attempt",... */
static void att_line(const char *id, const char *oc, int e, const char *detail, double t0,
                     const char *dst, int src_port, const char *qname)
{
    Buf b = { .n = 0 };
    bput(&b, "\"id\":");
    bstr(&b, id);
    bput(&b, ",\"kind\":\"attempt\",\"outcome\":");
    bstr(&b, oc);
    if (e)
        frag_errno(&b, e);
    bput(&b, ",\"detail\":");
    bstr(&b, detail);
    bput(&b, ",\"elapsed_ms\":%.3f,\"evidence\":{", now_ms() - t0);
    bput(&b, "\"dst\":");
    bstr(&b, dst ? dst : "");
    if (src_port > 0)
        bput(&b, ",\"src_port\":%d", src_port);
    if (qname && *qname) {
        bput(&b, ",\"qname\":");
        bstr(&b, qname);
    }
    bput(&b, "}\n");
    write_all(g_resfd, b.s, b.n);
}

static void att_report(const struct att *a)
{
    char detail[400];
    snprintf(detail, sizeof detail, "%s%s%s", a->detail, a->err ? ": " : "", a->err ? strerror(a->err) : "");
    att_line(a->id, a->oc, a->err, detail, a->t0, a->dsts, a->src_port, a->qname);
}

static void att_line_msg(struct att *a)
{
    a->outn = (size_t)snprintf((char *)a->out, sizeof a->out, "HARNESS %s %s\n", o.tag, a->id);
}

static void att_dns_msg(struct att *a, int tcp)
{
    unsigned char *q = a->out + (tcp ? 2 : 0);
    a->qid = (uint16_t)((unsigned)getpid() * 31u + (unsigned)g_natt * 977u + (unsigned)now_ms());
    int n = dns_build(q, sizeof a->out - 2, a->qid, a->qname, DNS_TXT);
    if (n < 0) {
        att_end(a, "error", 0, "cannot encode DNS name %s", a->qname);
        return;
    }
    if (tcp) {
        a->out[0] = (unsigned char)(n >> 8);
        a->out[1] = (unsigned char)n;
    }
    a->outn = (size_t)n + (tcp ? 2 : 0);
}

static void att_src_port(struct att *a)
{
    Addr me;
    socklen_t ml = sizeof me;
    if (a->family != AF_UNIX && getsockname(a->fd, (struct sockaddr *)&me, &ml) == 0)
        a->src_port = (int)addr_port(&me);
}

/* Open the socket and start the attempt; failures end it at once. */
static void att_start(struct att *a)
{
    a->t0 = now_ms();
    a->end = a->t0 + (a->family == AF_UNIX ? 1500.0 : 2000.0);
    if (a->end > check_end() - 150.0)
        a->end = check_end() - 150.0;
    if (a->state == S_DONE)
        return;
    if (a->talk == X_ICMP) {
        int proto = a->family == AF_INET6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP;
        a->fd = socket(a->family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, proto);
        if (a->fd < 0) {
            a->raw = 1;
            a->fd = socket(a->family, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, proto);
        }
        if (a->fd < 0) {
            att_end(a, "blocked", errno, "no ICMP socket (datagram or raw) could be made");
            return;
        }
        unsigned char *p = a->out;
        memset(p, 0, 8);
        p[0] = a->family == AF_INET6 ? 128 : 8; /* echo request */
        uint16_t ident = (uint16_t)getpid();
        p[4] = (unsigned char)(ident >> 8);
        p[5] = (unsigned char)ident;
        p[7] = 1;
        int n = snprintf((char *)p + 8, sizeof a->out - 8, "HARNESS %s %s", o.tag, a->id);
        a->outn = 8 + (size_t)n;
        if (a->family == AF_INET && a->raw) { /* the kernel fills in the ICMPv6 checksum, not this */
            uint32_t sum = 0;
            for (size_t i = 0; i + 1 < a->outn; i += 2)
                sum += (uint32_t)(p[i] << 8 | p[i + 1]);
            if (a->outn & 1)
                sum += (uint32_t)(p[a->outn - 1] << 8);
            while (sum >> 16)
                sum = (sum & 0xffff) + (sum >> 16);
            p[2] = (unsigned char)(~sum >> 8);
            p[3] = (unsigned char)~sum;
        }
        if (sendto(a->fd, p, a->outn, MSG_NOSIGNAL, (struct sockaddr *)&a->dst, addr_len(&a->dst)) < 0) {
            att_end(a, "blocked", errno, "ICMP echo to %s", a->dsts);
            return;
        }
        if (a->raw)
            a->src_port = ident;
        else
            att_src_port(a); /* a datagram ICMP socket's "port" is the echo id */
        a->state = S_RECV;
        return;
    }
    a->fd = socket(a->family, a->type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (a->fd < 0) {
        att_end(a, "blocked", errno, "socket for %s", a->dsts);
        return;
    }
    const struct sockaddr *sa = a->family == AF_UNIX ? (const struct sockaddr *)&a->un : (const struct sockaddr *)&a->dst;
    socklen_t sl = a->family == AF_UNIX ? (socklen_t)sizeof a->un : addr_len(&a->dst);
    if (connect(a->fd, sa, sl) != 0 && errno != EINPROGRESS) {
        att_end(a, "blocked", errno, "connect(%s)", a->dsts);
        return;
    }
    att_src_port(a);
    a->state = a->type == SOCK_STREAM ? S_CONNECT : S_SEND;
}

/* The reply so far: 0 want more, 1 finished (result set), 2 go on to the next step. */
static int att_judge(struct att *a, int eof)
{
    char want[256], *line = (char *)a->in;
    snprintf(want, sizeof want, "NONCE %s", o.nonce);
    a->in[a->inn] = '\0';
    /* The nonce anywhere in what came back, at any step: a proxy of another
     * dialect may hand the canary's answer back in place of its own. */
    if (memmem(a->in, a->inn, want, strlen(want))) {
        if (a->group == G_UNIX)
            att_end(a, "escaped", 0, "through unix socket %s: the nonce came back (%s, step %d)",
                    a->dsts, a->talk == X_HTTP ? "HTTP CONNECT" : "SOCKS5", a->step);
        else
            att_end(a, "escaped", 0, "the nonce came back from %s", a->dsts);
        return 1;
    }
    if (a->talk == X_LINE || (a->step == 2 && (a->talk == X_HTTP || a->talk == X_SOCKS))
        || (a->step == 1 && a->talk == X_HTTP)) {
        if (!memchr(a->in, '\n', a->inn) && !eof && a->type == SOCK_STREAM)
            return 0;
        line[strcspn(line, "\r\n")] = '\0';
        if (!strcmp(line, want)) {
            if (a->group == G_UNIX)
                att_end(a, "escaped", 0, "%s through unix socket %s: the nonce came back",
                        a->talk == X_HTTP ? "HTTP CONNECT" : "SOCKS5", a->dsts);
            else
                att_end(a, "escaped", 0, "the nonce came back from %s", a->dsts);
        } else {
            att_end(a, a->group == G_UNIX ? "blocked" : "succeeded", 0,
                    "connected to %s, but no nonce came back (reply \"%.80s\")", a->dsts, line);
        }
        return 1;
    }
    if (a->talk == X_DNS) {
        struct dns_ans r;
        size_t off = a->type == SOCK_STREAM ? 2 : 0;
        if (a->type == SOCK_STREAM && (a->inn < 2 || a->inn < 2 + (size_t)(a->in[0] << 8 | a->in[1])))
            return eof ? (att_end(a, "succeeded", 0, "connected to %s, but no whole DNS answer", a->dsts), 1) : 0;
        if (dns_parse(a->in + off, a->inn - off, a->qid, &r) != 0) {
            if (a->type == SOCK_DGRAM) {
                a->inn = 0; /* not the answer to this query: wait for another */
                return 0;
            }
            att_end(a, "succeeded", 0, "an answer from %s that is not DNS", a->dsts);
            return 1;
        }
        snprintf(want, sizeof want, "nonce=%s", o.nonce);
        if (!strcmp(r.txt, want))
            att_end(a, "escaped", 0, "TXT answer from %s carries the nonce", a->dsts);
        else
            att_end(a, "succeeded", 0, "answer from %s without the nonce (rcode %d, %d answers)",
                    a->dsts, r.rcode, r.ancount);
        return 1;
    }
    if (a->talk == X_ICMP) {
        size_t off = 0;
        if (a->raw && a->family == AF_INET && a->inn >= 20)
            off = (size_t)(a->in[0] & 15) * 4;
        if (a->inn >= off + 8 && (a->in[off] == 0 || a->in[off] == 129)) {
            att_end(a, "succeeded", 0, "echo reply from %s (a crossing is proved only by the canary)", a->dsts);
            return 1;
        }
        a->inn = 0;
        return 0;
    }
    if (a->talk == X_HTTP) { /* step 0: the proxy's answer to CONNECT */
        if (!strstr(line, "\r\n\r\n") && !eof && a->inn < sizeof a->in - 1)
            return 0;
        if (strncmp(line, "HTTP/1.", 7) || strncmp(line + 8, " 200", 4)) {
            line[strcspn(line, "\r\n")] = '\0';
            att_end(a, "blocked", 0, "%s refused HTTP CONNECT (\"%.60s\")", a->dsts, line);
            return 1;
        }
        return 2;
    }
    /* SOCKS5: step 0 the method reply, step 1 the connect reply */
    size_t need = a->step == 0 ? 2 : 10;
    if (a->inn < need)
        return eof ? (att_end(a, "blocked", 0, "%s: no SOCKS5 answer", a->dsts), 1) : 0;
    if (a->in[0] != 5 || a->in[1] != 0) {
        att_end(a, "blocked", 0, "%s refused SOCKS5 (%u %u)", a->dsts, a->in[0], a->in[1]);
        return 1;
    }
    return 2;
}

/* What to send at the attempt's current step. */
static void att_next_out(struct att *a, const Addr *target)
{
    a->inn = 0;
    a->outoff = 0;
    if (a->talk == X_HTTP && a->step == 0) {
        char t[80];
        fmt_addr(target, t, sizeof t);
        /* The marker in a header of its own: a proxy that forwards these bytes
         * (whatever its dialect) carries it to the canary. */
        a->outn = (size_t)snprintf((char *)a->out, sizeof a->out,
                                   "CONNECT %s HTTP/1.1\r\nHost: %s\r\nX-Harness: HARNESS %s %s\r\n\r\n",
                                   t, t, o.tag, a->id);
    } else if (a->talk == X_SOCKS && a->step == 0) {
        memcpy(a->out, "\x05\x01\x00", 3);
        a->outn = 3;
    } else if (a->talk == X_SOCKS && a->step == 1) {
        const struct sockaddr_in *s4 = (const void *)target;
        unsigned char *p = a->out;
        p[0] = 5; p[1] = 1; p[2] = 0; p[3] = 1;
        memcpy(p + 4, &s4->sin_addr, 4);
        memcpy(p + 8, &s4->sin_port, 2);
        a->outn = 10;
    } else {
        att_line_msg(a);
    }
}

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

/* The sandbox's own resolvers (/etc/resolv.conf; libc's default without one). */
static void sweep_own_dns(const char *denied)
{
    char conf[4096], name[300];
    ssize_t n = read_file("/etc/resolv.conf", conf, sizeof conf - 1);
    int found = 0;
    conf[n > 0 ? n : 0] = '\0';
    snprintf(name, sizeof name, "dns-own.%s.%s", o.tag, denied);
    for (char *save = NULL, *l = strtok_r(conf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        char ip[64], spec[80];
        if (sscanf(l, " nameserver %63s", ip) != 1 || found == 3)
            continue;
        snprintf(spec, sizeof spec, strchr(ip, ':') ? "[%s]:53" : "%s:53", ip);
        struct att *a = att_new("dns-own", G_OWN_DNS);
        if (!a || parse_addr(spec, &a->dst) != 0) {
            if (a)
                g_natt--;
            continue;
        }
        found++;
        a->family = a->dst.ss_family;
        a->type = SOCK_DGRAM;
        a->talk = X_DNS;
        snprintf(a->dsts, sizeof a->dsts, "%s (own resolver)", spec);
        snprintf(a->qname, sizeof a->qname, "%s", name);
    }
    if (!found) { /* no resolv.conf: libc asks the local host */
        struct att *a = att_new("dns-own", G_OWN_DNS);
        if (a) {
            parse_addr("127.0.0.1:53", &a->dst);
            a->family = AF_INET;
            a->type = SOCK_DGRAM;
            a->talk = X_DNS;
            snprintf(a->dsts, sizeof a->dsts, "127.0.0.1:53 (libc default, no resolv.conf)");
            snprintf(a->qname, sizeof a->qname, "%s", name);
        }
    }
}

/* A resolver outside --resolver-ranges is asked only if no packet could leave:
 * connecting a UDP socket sends nothing, and tells whether there is a route. */
static void own_dns_gate(struct att *a)
{
    if (in_ranges(&a->dst, o.resolver_ranges))
        return;
    int fd = socket(a->family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        att_end(a, "blocked", errno, "socket for %s", a->dsts);
        return;
    }
    if (connect(fd, (struct sockaddr *)&a->dst, addr_len(&a->dst)) != 0) {
        int e = errno;
        close(fd);
        att_end(a, "blocked", e, "no route to %s", a->dsts);
        return;
    }
    close(fd);
    /* Typically the host's /etc bound in: say what makes the attempt possible. */
    att_end(a, "error", 0,
            "%s is outside the resolver ranges harness may query; not tried: bind a resolv.conf"
            " naming one inside them (the canary's) over the sandbox's /etc/resolv.conf",
            a->dsts);
}

static void unix_add(const char *path, int abstract)
{
    for (size_t i = 0; i < g_natt; i++)
        if (g_att[i].group == G_UNIX && !strcmp(g_att[i].dsts, path) && (g_att[i].un.sun_path[0] == 0) == abstract)
            return;
    size_t len = strlen(path);
    if (len == 0 || len >= sizeof ((struct sockaddr_un *)0)->sun_path - 1)
        return;
    for (int talk = X_HTTP; talk <= X_SOCKS; talk++) {
        size_t units = 0;
        for (size_t i = 0; i < g_natt; i++)
            units += g_att[i].group == G_UNIX;
        if (units >= 2 * UNIX_MAX)
            return;
        struct att *a = att_new("unix-proxy", G_UNIX);
        if (!a)
            return;
        a->family = AF_UNIX;
        a->type = SOCK_STREAM;
        a->talk = talk;
        a->un.sun_family = AF_UNIX;
        memcpy(a->un.sun_path + abstract, path, len);
        snprintf(a->dsts, sizeof a->dsts, "%s%s", abstract ? "@" : "", path);
        if (abstract) /* dsts shows '@'; compare on the bare name above */
            snprintf(a->dsts, sizeof a->dsts, "%s", path);
    }
}

static void unix_walk(const char *dir, int depth)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        char p[512];
        struct stat st;
        if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
            continue;
        snprintf(p, sizeof p, "%s/%s", strcmp(dir, "/") ? dir : "", e->d_name);
        if (lstat(p, &st) != 0)
            continue;
        if (S_ISSOCK(st.st_mode))
            unix_add(p, 0);
        else if (S_ISDIR(st.st_mode) && depth > 0 && strcmp(p, "/proc") && strcmp(p, "/sys"))
            unix_walk(p, depth - 1);
    }
    closedir(d);
}

static void sweep_unix(void)
{
    char buf[65536];
    ssize_t n = read_file("/proc/net/unix", buf, sizeof buf - 1);
    buf[n > 0 ? n : 0] = '\0';
    for (char *save = NULL, *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        char flags[16], path[256] = "";
        unsigned type;
        /* Num RefCount Protocol Flags Type St Inode Path */
        if (sscanf(l, "%*s %*s %*s %15s %x %*s %*s %255s", flags, &type, path) != 3)
            continue;
        if (type != 1 || strtoul(flags, NULL, 16) != 0x10000) /* stream, listening */
            continue;
        unix_add(path[0] == '@' ? path + 1 : path, path[0] == '@');
    }
    static const char *const dirs[] = { "/run", "/var/run", "/tmp", "/var/tmp", "/dev/shm", "/" };
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
        unix_walk(dirs[i], strcmp(dirs[i], "/") ? 3 : 1);
}

/* The line for a group (own resolver, unix sockets): escaped if any attempt
 * escaped; else what leaves most doubt; with what was tried. */
static void group_report(int group, const char *id, double t0)
{
    static const char *const rank[] = { "escaped", "succeeded", "error", "blocked" };
    const struct att *pick = NULL;
    size_t tried = 0;
    char list[300] = "";
    for (size_t i = 0; i < g_natt; i++) {
        const struct att *a = &g_att[i];
        if (a->group != group)
            continue;
        tried++;
        size_t l = strlen(list);
        if (!strstr(list, a->dsts) && l + strlen(a->dsts) + 3 < sizeof list)
            snprintf(list + l, sizeof list - l, "%s%s", l ? ", " : "", a->dsts);
        for (size_t r = 0; r < 4; r++) {
            if (strcmp(a->oc, rank[r]))
                continue;
            size_t cur = 4;
            for (size_t k = 0; pick && k < 4; k++)
                if (!strcmp(pick->oc, rank[k]))
                    cur = k;
            if (r < cur)
                pick = a;
        }
    }
    if (!tried) {
        att_line(id, "blocked", 0, "no unix socket is visible in the sandbox", t0, "", 0, NULL);
        return;
    }
    char detail[700];
    snprintf(detail, sizeof detail, "%s (%zu attempt%s: %s)", pick ? pick->detail : "?", tried,
             tried == 1 ? "" : "s", list);
    att_line(id, pick ? pick->oc : "error", pick ? pick->err : 0, detail, t0, pick ? pick->dsts : "",
             pick ? pick->src_port : 0, pick ? pick->qname : NULL);
}

static void sweep_add(const char *id, const char *ip, int port, int type, int talk)
{
    char spec[96];
    struct att *a = att_new(id, G_SELF);
    if (!a)
        return;
    snprintf(spec, sizeof spec, strchr(ip, ':') ? "[%s]:%d" : "%s:%d", ip, port);
    snprintf(a->dsts, sizeof a->dsts, "%s", spec);
    if (parse_addr(spec, &a->dst) != 0) {
        att_end(a, "error", 0, "bad canary address %s", spec);
        return;
    }
    a->family = a->dst.ss_family;
    a->type = type;
    a->talk = talk;
    if (talk == X_DNS)
        snprintf(a->qname, sizeof a->qname, "%s.%s.%s", id, o.tag, o.denied_name);
}

void chk_egress_sweep(void)
{
    double t0 = now_ms();
    const char *fams[2] = { o.canary4, o.canary6 };
    long high = o.high_port ? strtol(o.high_port, NULL, 10) : 0;
    Addr target;
    need(&o.tag);
    need(&o.nonce);
    need(&o.denied_name);
    need_addr(&o.canary_tcp, &target);
    if (high <= 0 || high > 65535)
        fail(0, "--high-port not given");
    for (int f = 0; f < 2; f++) {
        if (!fams[f] || !*fams[f])
            continue; /* a canary without that family: its checks are not asked for */
        char id[48];
        for (size_t i = 0; i < sizeof sweep_tcp_ports / sizeof sweep_tcp_ports[0]; i++) {
            int port = sweep_tcp_ports[i] ? sweep_tcp_ports[i] : (int)high;
            snprintf(id, sizeof id, "tcp%d-%s", f ? 6 : 4, sweep_tcp_ports[i] ? "" : "high");
            if (sweep_tcp_ports[i])
                snprintf(id, sizeof id, "tcp%d-%d", f ? 6 : 4, port);
            sweep_add(id, fams[f], port, SOCK_STREAM, port == 53 ? X_DNS : X_LINE);
        }
        for (size_t i = 0; i < sizeof sweep_udp_ports / sizeof sweep_udp_ports[0]; i++) {
            int port = sweep_udp_ports[i] ? sweep_udp_ports[i] : (int)high;
            snprintf(id, sizeof id, "udp%d-high", f ? 6 : 4);
            if (sweep_udp_ports[i])
                snprintf(id, sizeof id, "udp%d-%d", f ? 6 : 4, port);
            sweep_add(id, fams[f], port, SOCK_DGRAM, port == 53 ? X_DNS : X_LINE);
        }
        snprintf(id, sizeof id, "icmp%d", f ? 6 : 4);
        sweep_add(id, fams[f], 0, 0, X_ICMP);
    }
    sweep_own_dns(o.denied_name);
    sweep_unix();

    for (size_t i = 0; i < g_natt; i++) {
        struct att *a = &g_att[i];
        if (a->group == G_OWN_DNS)
            own_dns_gate(a);
        if (a->state != S_DONE && a->talk != X_ICMP) {
            if (a->talk == X_DNS)
                att_dns_msg(a, a->type == SOCK_STREAM);
            else
                att_next_out(a, &target);
        }
        att_start(a);
        if (a->state == S_DONE && a->group == G_SELF)
            att_report(a);
    }
    static struct pollfd pf[MAX_ATT];
    static size_t idx[MAX_ATT];
    for (;;) {
        size_t np = 0;
        double now = now_ms(), next = -1;
        for (size_t i = 0; i < g_natt; i++) {
            struct att *a = &g_att[i];
            if (a->state == S_DONE)
                continue;
            if (now >= a->end) {
                if (a->state == S_CONNECT)
                    att_end(a, "blocked", ETIMEDOUT, "connect(%s)", a->dsts);
                else if (a->type == SOCK_STREAM && a->group == G_SELF)
                    att_judge(a, 1);
                else if (a->group == G_UNIX)
                    att_end(a, "blocked", 0, "%s: no proxy answer", a->dsts);
                else
                    att_end(a, "blocked", ETIMEDOUT, "no answer from %s", a->dsts);
                if (a->group == G_SELF)
                    att_report(a);
                continue;
            }
            pf[np] = (struct pollfd){ .fd = a->fd, .events = a->state == S_RECV ? POLLIN : POLLOUT };
            idx[np++] = i;
            if (next < 0 || a->end < next)
                next = a->end;
        }
        if (!np)
            break;
        int wait = (int)(next - now + 1);
        if (poll(pf, np, wait < 1 ? 1 : wait) < 0 && errno != EINTR)
            break;
        for (size_t k = 0; k < np; k++) {
            struct att *a = &g_att[idx[k]];
            if (!pf[k].revents)
                continue;
            if (a->state == S_CONNECT) {
                int e = 0;
                socklen_t len = sizeof e;
                getsockopt(a->fd, SOL_SOCKET, SO_ERROR, &e, &len);
                if (e) {
                    att_end(a, "blocked", e, "connect(%s)", a->dsts);
                } else {
                    att_src_port(a);
                    a->state = S_SEND;
                }
            } else if (a->state == S_SEND) {
                ssize_t w = send(a->fd, a->out + a->outoff, a->outn - a->outoff, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (w < 0 && errno != EAGAIN && errno != EINTR)
                    att_end(a, a->type == SOCK_STREAM && a->group == G_SELF ? "succeeded" : "blocked", errno,
                            "send to %s", a->dsts);
                else if (w > 0 && (a->outoff += (size_t)w) == a->outn)
                    a->state = S_RECV;
            } else {
                ssize_t r = recv(a->fd, a->in + a->inn, sizeof a->in - 1 - a->inn, MSG_DONTWAIT);
                if (r < 0 && (errno == EAGAIN || errno == EINTR))
                    continue;
                if (r < 0 && a->type == SOCK_DGRAM) {
                    att_end(a, "blocked", errno, "no answer from %s", a->dsts);
                } else if (r < 0 || (r == 0 && a->type == SOCK_STREAM)) {
                    att_judge(a, 1);
                    if (a->state != S_DONE)
                        att_end(a, "blocked", 0, "%s closed", a->dsts);
                } else {
                    a->inn += (size_t)r;
                    if (a->inn >= sizeof a->in - 1)
                        a->inn = sizeof a->in - 2;
                    if (att_judge(a, 0) == 2) {
                        a->step++;
                        att_next_out(a, &target);
                        a->state = S_SEND;
                    }
                }
            }
            if (a->state == S_DONE && a->group == G_SELF)
                att_report(a);
        }
    }
    group_report(G_OWN_DNS, "dns-own", t0);
    group_report(G_UNIX, "unix-proxy", t0);
    _exit(0);
}
