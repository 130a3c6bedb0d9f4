/* The egress sweep's engine (scenario "egress", its SWEEP row): every attempt one
 * nonblocking exchange, all run at once in one child, each judged and printed as a
 * check line of its own. What it tries is sweep.c's, its ids sweep.def's. */

#include "probe.h"
#include <sys/resource.h>

/*
 * Every channel a real network leaves open, for IPv4 and IPv6 at once: TCP to a
 * spread of ports, UDP, ICMP echo, DNS through the sandbox's own resolver, and
 * HTTP CONNECT / SOCKS5 through every unix socket the sandbox can reach. All
 * attempts run concurrently on nonblocking sockets in one child, so the sweep
 * fits in one check's time limit; each attempt is reported as a check line of
 * its own ("kind":"attempt"). A packet that leaves proves nothing by itself
 * here: the canary's nonce coming back does, and so does the canary's log. */

struct att g_att[MAX_ATT];
size_t g_natt, g_att_dropped; /* attempts made, and those there was no room for */

struct att *att_new(const char *id, int group)
{
    if (g_natt == MAX_ATT) {
        g_att_dropped++;
        return NULL;
    }
    struct att *a = &g_att[g_natt++];
    memset(a, 0, sizeof *a);
    snprintf(a->id, sizeof a->id, "%s", id);
    a->group = group;
    a->fd = -1;
    return a;
}

void att_end(struct att *a, enum outcome oc, int e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->detail, sizeof a->detail, fmt, ap);
    va_end(ap);
    a->oc = oc;
    a->err = e;
    a->state = S_DONE;
    if (a->fd >= 0)
        close(a->fd);
    a->fd = -1;
    if (a->kid > 0)
        kill(a->kid, SIGKILL);
    a->kid = 0;
}

/* An attempt's line, its errno's words after its detail. */
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
    int n = dns_build(q, sizeof a->out - 2, a->qid, a->qname, a->qtype ? a->qtype : DNS_TXT);
    if (n < 0) {
        att_end(a, OC_ERROR, 0, "cannot encode DNS name %s", a->qname);
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

/* A held IPv6 stream socket whose IPv6 connect failed (at once, later, or by its
 * half of the time): dissolve the association (AF_UNSPEC) and connect to its
 * v4-mapped alternative with the time left. Where a filter refuses connect(2) (so
 * the IPv6 one went by another way: Fast Open's SYN, still under way, is undone by
 * shutdown(2), which disconnects a SYN_SENT socket), the v4-mapped address by those
 * ways too (connect_other), its way named after it. 0 when that connect is under way. */
static int att_try_alt(struct att *a, int why)
{
    if (!a->has_alt)
        return -1;
    a->has_alt = 0;
    struct sockaddr unspec = { .sa_family = AF_UNSPEC };
    int undone = connect(a->fd, &unspec, sizeof unspec) == 0;
    char t[80], *way = strstr(a->dsts, " (its conn");
    if (way) /* the IPv6 one's way: named again after the address it reaches */
        *way = '\0';
    fmt_addr(&a->alt, t, sizeof t);
    size_t l = strlen(a->dsts);
    snprintf(a->dsts + l, sizeof a->dsts - l, ", then (%s) %s", errname(why), t);
    a->dst = a->alt;
    const struct sockaddr *sa = (const struct sockaddr *)&a->dst;
    int rc = connect(a->fd, sa, addr_len(&a->dst));
    if (rc != 0 && (errno == EPERM || errno == EACCES || errno == ENOSYS)) {
        unsigned char state[8] = { 0 }; /* struct tcp_info's first bytes: tcpi_state */
        socklen_t tl = sizeof state;
        if (!undone && getsockopt(a->fd, IPPROTO_TCP, TCP_INFO, state, &tl) == 0 && state[0] == PROBE_TCP_SYN_SENT)
            shutdown(a->fd, SHUT_RDWR);
        a->tfo_sent = 0, a->outoff = 0; /* the bytes go again, to this address */
        /* twice: the first may only collect the IPv6 attempt's end (its error) */
        for (int k = 0; k < 2 && (rc = connect_other(a, sa, addr_len(&a->dst))) != 0 && errno != EINPROGRESS; k++)
            ;
    }
    if (rc != 0 && errno != EINPROGRESS)
        return -1;
    a->end = check_end() - 150.0 < now_ms() + 1000.0 ? check_end() - 150.0 : now_ms() + 1000.0;
    return 0;
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
    if (a->end <= a->t0) { /* the attempts before it took the check's time (a loaded host) */
        att_end(a, OC_ERROR, 0, "not started within the check's time: %s", a->dsts);
        return;
    }
    if (a->talk == X_ICMP) {
        int proto = a->family == AF_INET6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP;
        a->fd = socket(a->family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, proto);
        if (a->fd < 0) {
            a->raw = 1;
            a->fd = socket(a->family, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, proto);
        }
        if (a->fd < 0 && errno != EMFILE && errno != ENFILE) { /* a filter's whole-type compare */
            int was = a->proto;
            a->proto = proto, a->raw = 0;
            if ((a->fd = socket_plain(a, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC)) < 0) {
                a->raw = 1;
                a->fd = socket_plain(a, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC);
            }
            a->proto = was;
        }
        if (a->fd < 0) {
            att_end(a, OC_BLOCKED, errno, "no ICMP socket (datagram or raw) could be made");
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
            att_end(a, OC_BLOCKED, errno, "ICMP echo to %s", a->dsts);
            return;
        }
        if (a->raw)
            a->src_port = ident;
        else
            att_src_port(a); /* a datagram ICMP socket's "port" is the echo id */
        a->state = S_RECV;
        return;
    }
    if (a->talk == X_URING || a->talk == X_I386) {
        att_exchange_start(a);
        return;
    }
    if (!a->held && (a->fd = socket(a->family, a->type | SOCK_NONBLOCK | SOCK_CLOEXEC, a->proto)) < 0 &&
        errno != EMFILE && errno != ENFILE)
        a->fd = socket_wide(a, a->type | SOCK_NONBLOCK | SOCK_CLOEXEC); /* a filter's 64-bit compare */
    if (!a->held && a->fd < 0 && errno != EMFILE && errno != ENFILE)
        a->fd = socket_plain(a, a->type | SOCK_NONBLOCK | SOCK_CLOEXEC); /* a filter's whole-type compare */
    if (!a->held && a->fd < 0 && (errno == EPERM || errno == EACCES) &&
        (a->group == G_PROXY || a->group == G_UDP_RELAY || a->group == G_OWN_DNS ||
         a->group == G_OWN_DNS_TCP || a->group == G_UNIX || OTHER_PROTOCOL(a))) /* a relay or
                                     * resolver inside, a unix socket's relay (whose file a
                                     * granted folder may hold, which unix-host leaves to this
                                     * line), or a protocol no other line takes */
        a->fd = socket_entries(a, a->type | SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (a->fd < 0) { /* out of descriptors proves nothing: an error, never blocked */
        int e = errno;
        att_end(a, e == EMFILE || e == ENFILE ? OC_ERROR : OC_BLOCKED, e, "socket for %s", a->dsts);
        return;
    }
    if (a->held) {
        fcntl(a->fd, F_SETFL, fcntl(a->fd, F_GETFL) | O_NONBLOCK);
        if (a->held > 1 || a->how == H_SENDTO) {
            a->state = S_SEND; /* connected by whoever handed it over, or a datagram */
            return;
        }
    }
    if (a->bind_port && bind_source(a) != 0)
        return;
    if (elsewhere_bind(a) != 0)
        return;
    if (a->tfo == T_CONNECT) {
        int one = 1;
        if (setsockopt(a->fd, IPPROTO_TCP, TCP_FASTOPEN_CONNECT, &one, sizeof one) != 0) {
            att_end(a, OC_BLOCKED, errno, "setsockopt(TCP_FASTOPEN_CONNECT) for %s", a->dsts);
            return;
        }
    }
    if (a->tfo == T_SEND) {
        /* No connect(2): the first send call makes the connection (MSG_FASTOPEN); its
         * bytes ride on the SYN where a cookie is cached, else they are sent again
         * once the handshake is done. */
        ssize_t w = att_send(a);
        a->tfo_sent = 1;
        if (w < 0 && errno != EINPROGRESS) {
            att_end(a, OC_BLOCKED, errno, "%s with MSG_FASTOPEN to %s",
                    a->how == H_SENDTO ? "sendto" : a->how == H_SENDMSG ? "sendmsg" : "sendmmsg", a->dsts);
            return;
        }
        if (w > 0)
            a->outoff = (size_t)w;
        att_src_port(a);
        a->state = S_CONNECT;
        return;
    }
    if (a->how == H_SENDTO || a->how == H_SENDMSG || a->how == H_SENDMMSG) {
        /* Unconnected: the destination goes with each datagram, and an ICMP refusal
         * reaches the socket only if asked for (else the attempt waits it out). */
        int one = 1;
        if (a->family == AF_INET6)
            setsockopt(a->fd, IPPROTO_IPV6, IPV6_RECVERR, &one, sizeof one);
        else if (a->family == AF_INET)
            setsockopt(a->fd, IPPROTO_IP, IP_RECVERR, &one, sizeof one);
        a->state = S_SEND;
        return;
    }
    const struct sockaddr *sa = a->family == AF_UNIX ? (const struct sockaddr *)&a->un : (const struct sockaddr *)&a->dst;
    socklen_t sl = a->family == AF_UNIX ? (a->unlen ? a->unlen : (socklen_t)sizeof a->un) : addr_len(&a->dst);
    int rc = connect(a->fd, sa, sl);
    if (rc != 0 && a->family != AF_UNIX && long_addr_retry(errno)) { /* the longest length */
        int e = errno;
        if ((rc = connect(a->fd, sa, (socklen_t)sizeof a->dst)) == 0 || errno == EINPROGRESS)
            long_addr_way(a, "connected");
        else
            errno = e;
    }
    if (rc != 0 && (errno == EPERM || errno == EACCES || errno == ENOSYS) && RELAY_ROUTE(a))
        rc = connect_other(a, sa, sl); /* refused as a filter refuses: the other entries' */
    if (rc != 0 && errno != EINPROGRESS && a->has_alt) /* a held IPv6 socket: IPv4 by ::ffff: */
        rc = att_try_alt(a, errno) == 0 ? 0 : -1;
    else if (a->has_alt) /* IPv6 gets half the time; the v4-mapped address the rest */
        a->end = a->t0 + (a->end - a->t0) / 2;
    if (rc != 0 && errno != EINPROGRESS) {
        att_end(a, OC_BLOCKED, errno, "connect(%s)", a->dsts);
        return;
    }
    att_src_port(a);
    a->state = a->type == SOCK_STREAM ? S_CONNECT : S_SEND;
}

static void att_next_out(struct att *a, const Addr *at);

/* Where a relay refused the canary at its port: asked again, on a new connection, for
 * the next (proxy_port). 1 where it is, 0 where no port is left. */
/* A relay asked anew on a new connection, from its first step, within the first
 * asking's deadline. */
static void att_restart(struct att *a, const Addr *target)
{
    if (a->fd >= 0)
        close(a->fd);
    a->fd = -1;
    a->step = relay_first_step(a);
    a->state = S_CONNECT;
    double end = a->end; /* the first asking's deadline for all: one waiting starts in time */
    att_next_out(a, target), att_start(a);
    if (end > a->t0 + 500.0 && end < a->end) /* (half a second at least, within the check's) */
        a->end = end;
}

static int att_reask(struct att *a, const Addr *target)
{
    if (!proxy_port(a->port_try + 1, target))
        return 0;
    a->port_try++;
    att_restart(a, target);
    return 1;
}

/* A relay whose SOCKS5 greeting got no SOCKS5 answer, asked again by SOCKS4 (an older
 * relay's dialect), the canary's own port first. */
static void att_other_dialect(struct att *a, const Addr *target)
{
    a->socks4 = 1;
    att_restart(a, target);
}

/* The reply so far: 0 want more, 1 finished (result set), 2 go on to the next step, 3
 * refused by a relay at the canary's port (att_reask asks for another), 4 no SOCKS5
 * answer (att_other_dialect asks by SOCKS4). */
static int att_judge(struct att *a, int eof)
{
    char want[256], *line = (char *)a->in;
    snprintf(want, sizeof want, "NONCE %s", o.nonce);
    a->in[a->inn] = '\0';
    /* The nonce anywhere in what came back, at any step: a proxy of another
     * dialect may hand the canary's answer back in place of its own. */
    if (memmem(a->in, a->inn, want, strlen(want))) {
        if (PROXY_GROUP(a))
            relay_escaped(a);
        else
            att_end(a, OC_ESCAPED, 0, "the nonce came back from %s%s", a->dsts, att_way(a));
        return 1;
    }
    if (a->talk == X_LINE || relay_asked(a)) {
        if (!memchr(a->in, '\n', a->inn) && !eof && a->type == SOCK_STREAM)
            return 0;
        line[strcspn(line, "\r\n")] = '\0';
        att_end(a, PROXY_GROUP(a) ? OC_BLOCKED : OC_SUCCEEDED, 0,
                "connected to %s, but no nonce came back (reply \"%.80s\")", a->dsts, line);
        return 1;
    }
    if (a->talk == X_URING || a->talk == X_I386) {
        if (!eof && !memchr(a->in, '\n', a->inn))
            return 0;
        char step[440] = "";
        int oc = 0, e = 0, src = 0;
        if (sscanf(line, "%d %d %d %439[^\n]", &oc, &e, &src, step) < 3) {
            /* Its child died without a word: killed by a filter (SECCOMP_RET_KILL). */
            att_end(a, OC_BLOCKED, ETIMEDOUT, "%s: no answer from its child for %s",
                    a->talk == X_I386 ? "the i386 entry" : "io_uring", a->dsts);
            return 1;
        }
        a->src_port = src;
        if (a->talk == X_I386)
            att_end(a, (enum outcome)oc, e, "%s through the i386 entry (%s)", a->dsts, step);
        else
            att_end(a, (enum outcome)oc, e, "%s by io_uring (a %s socket: connect, send, recv; %s)", a->dsts,
                    a->type == SOCK_DGRAM ? "UDP" : a->proto == IPPROTO_MPTCP ? "Multipath TCP" : "TCP", step);
        return 1;
    }
    if (a->talk == X_DNS) {
        struct dns_ans r;
        size_t off = a->type == SOCK_STREAM ? 2 : 0;
        if (a->type == SOCK_STREAM && (a->inn < 2 || a->inn < 2 + (size_t)(a->in[0] << 8 | a->in[1])))
            return eof ? (att_end(a, OC_SUCCEEDED, 0, "connected to %s, but no whole DNS answer", a->dsts), 1) : 0;
        if (dns_parse(a->in + off, a->inn - off, a->qid, &r) != 0) {
            if (a->type == SOCK_DGRAM) {
                a->inn = 0; /* not the answer to this query: wait for another */
                return 0;
            }
            att_end(a, OC_SUCCEEDED, 0, "an answer from %s that is not DNS", a->dsts);
            return 1;
        }
        snprintf(want, sizeof want, "nonce=%s", o.nonce);
        if (a->qtype) /* an address query: the canary's log of its name is the proof */
            att_end(a, OC_SUCCEEDED, 0, "answer from %s (rcode %d, %d answers)", a->dsts, r.rcode, r.ancount);
        else if (!strcmp(r.txt, want))
            att_end(a, OC_ESCAPED, 0, "TXT answer from %s carries the nonce", a->dsts);
        else
            att_end(a, OC_SUCCEEDED, 0, "answer from %s without the nonce (rcode %d, %d answers)",
                    a->dsts, r.rcode, r.ancount);
        return 1;
    }
    if (a->talk == X_ICMP) {
        size_t off = 0;
        if (a->raw && a->family == AF_INET && a->inn >= 20)
            off = (size_t)(a->in[0] & 15) * 4;
        if (a->inn >= off + 8 && (a->in[off] == 0 || a->in[off] == 129)) {
            att_end(a, OC_SUCCEEDED, 0, "echo reply from %s (a crossing is proved only by the canary)", a->dsts);
            return 1;
        }
        a->inn = 0;
        return 0;
    }
    return relay_judge(a, eof); /* a relay's own answer, before the HARNESS line */
}

/* What to send at the attempt's current step (to the canary at the port a relay is
 * asked for: proxy_port). */
static void att_next_out(struct att *a, const Addr *at)
{
    Addr port_k = *at;
    const Addr *target = &port_k;
    if (a->port_try)
        addr_set_port(&port_k, (uint16_t)proxy_port(a->port_try, at));
    a->inn = 0;
    a->outoff = 0;
    if (a->talk == X_FRAME)
        att_frame_msg(a);
    else if (!relay_request(a, target)) /* a relay's own message at this step, if any */
        att_line_msg(a);
}

/* An attempt held back (S_WAIT) until the one it follows is done: a relay's SOCKS5
 * request after its HTTP CONNECT, so that a relay forwarding whatever comes (bytes
 * to the canary with no marker: unexplained) has first carried the marked request.
 * Started now, or ended at once where that one escaped or met silence (a SOCKS5 server
 * closes on an HTTP request; an interceptor that answers nothing would carry the bare
 * greeting on); 0 while it must wait. */
static int att_wait_over(struct att *a, const Addr *target)
{
    const struct att *first = &g_att[a->after - 1];
    if (first->state != S_DONE)
        return 0;
    a->state = S_CONNECT;
    if (first->oc == OC_ESCAPED) {
        att_end(a, OC_BLOCKED, 0, "%s: not asked again (it relayed the HTTP CONNECT)", a->dsts);
        return 1;
    }
    if (first->err == ETIMEDOUT) { /* silent: a SOCKS5 server closes on an HTTP request */
        att_end(a, OC_BLOCKED, ETIMEDOUT, "%s: no answer to an HTTP CONNECT, not asked by SOCKS5",
                a->dsts);
        return 1;
    }
    att_next_out(a, target);
    att_start(a);
    return 1;
}

void chk_egress_sweep(void)
{
    double t0 = now_ms();
    signal(SIGPIPE, SIG_IGN); /* write(2) to a peer that closed: an error, not the end */
    struct rlimit lim; /* every attempt holds a descriptor at once: as many as allowed */
    if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
        lim.rlim_cur = lim.rlim_max;
        setrlimit(RLIMIT_NOFILE, &lim);
    }
    const char *fams[2] = { o.canary4, o.canary6 };
    long high = o.high_port ? strtol(o.high_port, NULL, 10) : 0;
    Addr target;
    need(&o.tag);
    need(&o.nonce);
    need(&o.denied_name);
    need_addr(&o.canary_tcp, &target);
    g_relay_target = target;
    if (high <= 0 || high > 65535)
        fail(0, "--high-port not given");
    for (int f = 0; f < 2; f++) {
        if (!fams[f] || !*fams[f])
            continue; /* a canary without that family: its checks are not asked for */
        sweep_ports(f, fams[f], (int)high);
        sweep_protocols(f, fams[f], (int)high);
    }
    for (int f = 0; f < 2; f++)
        if (fams[f] && *fams[f])
            sweep_calls(f, fams[f], (int)high);
    const char *hosts[2] = { o.host4, o.host6 }, *metas[2] = { o.meta4, o.meta6 };
    for (int f = 0; f < 2; f++) {
        if (hosts[f] && *hosts[f])
            sweep_host(f, hosts[f], (int)high);
        if (metas[f] && *metas[f])
            sweep_meta(f, metas[f], (int)high);
        sweep_elsewhere(f, (int)high);
    }
    sweep_packet(o.canary4, (int)high);
    sweep_packet6(o.canary6, (int)high);
    sweep_held(o.canary4, o.canary6, (int)high);
    sweep_own_dns(o.denied_name);
    sweep_udp_listeners(o.denied_name);
    sweep_unix();
    sweep_tcp_proxy();
    if (o.canary_unix && *o.canary_unix)
        sweep_abstract();

    for (size_t i = 0; i < g_natt; i++) {
        struct att *a = &g_att[i];
        if (a->state == S_WAIT)
            continue; /* started once the attempt it waits for is done (below) */
        if ((a->group == G_OWN_DNS || a->group == G_OWN_DNS_TCP) && a->state != S_DONE)
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
            if (a->state == S_WAIT && !att_wait_over(a, &target))
                continue;
            if (a->state == S_DONE)
                continue;
            if (now >= a->end && a->state == S_CONNECT && att_try_alt(a, ETIMEDOUT) == 0) {
                /* connecting again, to the v4-mapped address, with the time left */
            } else if (now >= a->end) {
                if (a->state == S_CONNECT)
                    att_end(a, OC_BLOCKED, ETIMEDOUT, "connect(%s)", a->dsts);
                else if (a->type == SOCK_STREAM && AT_CANARY(a))
                    att_judge(a, 1);
                else if (PROXY_GROUP(a))
                    att_end(a, OC_BLOCKED, a->inn ? 0 : ETIMEDOUT, "%s: no proxy answer", a->dsts);
                else
                    att_end(a, OC_BLOCKED, ETIMEDOUT, "no answer from %s", a->dsts);
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
                if (e && att_try_alt(a, e) == 0) {
                    continue;
                } else if (e) {
                    att_end(a, OC_BLOCKED, e, "connect(%s)", a->dsts);
                } else {
                    att_src_port(a);
                    a->state = a->outoff >= a->outn ? S_RECV : S_SEND; /* sent with the SYN */
                }
            } else if (a->state == S_SEND) {
                ssize_t w = att_send(a);
                if (w > 0 && a->how != H_SEND && a->how != H_WRITE && !a->src_port)
                    att_src_port(a); /* bound by this first datagram */
                if (w > 0 && (a->talk == X_FIRE || a->talk == X_FRAME) &&
                    a->outoff + (size_t)w == a->outn)
                    att_end(a, OC_SUCCEEDED, 0,
                            "sent to %s; nothing answers it: only the canary's %s proves a crossing",
                            a->dsts, a->family == AF_UNIX ? "log" : "capture");
                else if (w < 0 && errno != EAGAIN && errno != EINTR)
                    att_end(a, a->type == SOCK_STREAM && AT_CANARY(a) ? OC_SUCCEEDED : OC_BLOCKED, errno,
                            "send to %s", a->dsts);
                else if (w > 0 && (a->outoff += (size_t)w) == a->outn)
                    a->state = S_RECV;
            } else {
                ssize_t r = a->talk == X_URING || a->talk == X_I386 /* a pipe from its child */
                                ? read(a->fd, a->in + a->inn, sizeof a->in - 1 - a->inn)
                                : recv(a->fd, a->in + a->inn, sizeof a->in - 1 - a->inn, MSG_DONTWAIT);
                if (r < 0 && (errno == EAGAIN || errno == EINTR))
                    continue;
                if (r < 0 && a->type == SOCK_DGRAM) {
                    att_end(a, OC_BLOCKED, errno, "no answer from %s", a->dsts);
                } else if (r < 0 || (r == 0 && (a->type != SOCK_DGRAM || a->talk == X_URING || a->talk == X_I386))) {
                    if (att_judge(a, 1) == 4)
                        att_other_dialect(a, &target);
                    else if (a->state != S_DONE)
                        att_end(a, OC_BLOCKED, 0, "%s closed", a->dsts);
                } else {
                    a->inn += (size_t)r;
                    if (a->inn >= sizeof a->in - 1)
                        a->inn = sizeof a->in - 2;
                    int next = att_judge(a, 0);
                    if (next == 2) {
                        a->step++;
                        att_next_out(a, &target);
                        a->state = S_SEND;
                    } else if (next == 3 && !att_reask(a, &target)) {
                        att_end(a, OC_BLOCKED, 0, "%s refused the canary at every port", a->dsts);
                    } else if (next == 4) {
                        att_other_dialect(a, &target);
                    }
                }
            }
            if (a->state == S_DONE && a->group == G_SELF)
                att_report(a);
        }
    }
    group_report(G_OWN_DNS, sweep_id[SW_DNS_OWN], t0, "no resolver");
    group_report(G_OWN_DNS_TCP, sweep_id[SW_DNS_OWN_TCP], t0, "no resolver");
    elsewhere_report(t0);
    sport_report(t0);
    packet_report(t0);
    packet6_report(t0);
    sweep_host_unix(t0);
    unix_report(sweep_id[SW_UNIX_PROXY], t0);
    relay_report(t0);
    held_report(t0);
    sweep_ipc();
    _exit(0);
}
