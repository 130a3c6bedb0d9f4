/* Scenario "egress", its named attempts: the denied canary by name, by raw IP and
 * on the DoH port, and the alternate resolver over UDP and TCP. The sweep is
 * attempt.c's (how) and sweep.c's (what). */

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
        outcome(step == DQ_ENCODE ? OC_ERROR : OC_BLOCKED, errno, "DNS A %s via %s: %s",
                name, where, dq_step[step]);
    if (r.rcode || !r.has_a)
        outcome(OC_BLOCKED, 0, "DNS A %s via %s: rcode %d, no A record", name, where, r.rcode);
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
            outcome(OC_BLOCKED, errno, "DNS TXT %s via %s/%s: %s", name, where, tcp ? "tcp" : "udp",
                    dq_step[step]);
        /* Over TCP, a completed connect already crossed the boundary. */
        outcome(OC_SUCCEEDED, 0, "connected to %s, but no DNS answer: %s: %s", where, dq_step[step],
                strerror(errno));
    }
    if (!strcmp(r.txt, want))
        outcome(OC_ESCAPED, 0, "TXT answer from %s carries the nonce", where);
    outcome(OC_SUCCEEDED, 0, "answer from %s without the nonce (rcode %d, %d answers)",
            where, r.rcode, r.ancount);
}

void chk_dns_alt_udp(void) { dns_alt(0); }
void chk_dns_alt_tcp(void) { dns_alt(1); }
