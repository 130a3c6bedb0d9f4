/* DNS, built by hand: queries, answers, names (no resolver library: the probe
 * asks the servers it is told, over UDP or TCP). */

#include "probe.h"

/* The name at off in a message (following compression pointers), dotted into
 * out (if not NULL). Returns the offset just past the name where it starts, or -1. */
long dns_get_name(const unsigned char *m, size_t len, size_t off, char *out, size_t cap)
{
    size_t pos = off, next = 0, n = 0;
    int jumps = 0;
    if (out)
        out[0] = '\0';
    for (;;) {
        if (pos >= len)
            return -1;
        unsigned c = m[pos];
        if ((c & 0xc0) == 0xc0) {
            if (pos + 1 >= len || ++jumps > 32)
                return -1;
            if (jumps == 1)
                next = pos + 2;
            pos = (c & 0x3f) << 8 | m[pos + 1];
            continue;
        }
        if (c & 0xc0 || pos + 1 + c > len)
            return -1;
        if (c == 0)
            return (long)(jumps ? next : pos + 1);
        if (out && n + c + 2 < cap) {
            if (n)
                out[n++] = '.';
            memcpy(out + n, m + pos + 1, c);
            out[n += c] = '\0';
        }
        pos += 1 + c;
    }
}

/* A query with recursion desired; returns its length or -1. */
int dns_build(unsigned char *q, size_t cap, uint16_t id, const char *name, int qtype)
{
    size_t p = 12, nl = strlen(name);
    if (cap < 12 + nl + 6 || nl == 0 || nl > 253)
        return -1;
    memset(q, 0, 12);
    q[0] = (unsigned char)(id >> 8);
    q[1] = (unsigned char)id;
    q[2] = 0x01; /* RD */
    q[5] = 1;    /* QDCOUNT */
    for (const char *s = name; *s;) {
        size_t l = strcspn(s, ".");
        if (l == 0 || l > 63)
            return -1;
        q[p++] = (unsigned char)l;
        memcpy(q + p, s, l);
        p += l;
        s += l + (s[l] == '.');
    }
    q[p++] = 0;
    q[p++] = (unsigned char)(qtype >> 8);
    q[p++] = (unsigned char)qtype;
    q[p++] = 0;
    q[p++] = 1; /* class IN */
    return (int)p;
}

/* Parse the response to query id: rcode, the first A and the first TXT string. */
int dns_parse(const unsigned char *m, size_t len, uint16_t id, struct dns_ans *r)
{
    memset(r, 0, sizeof *r);
    if (len < 12 || (m[0] << 8 | m[1]) != id || !(m[2] & 0x80))
        return -1;
    r->rcode = m[3] & 0x0f;
    r->ancount = m[6] << 8 | m[7];
    long off = 12;
    for (int i = 0; i < (m[4] << 8 | m[5]); i++) {
        if ((off = dns_get_name(m, len, (size_t)off, NULL, 0)) < 0 || (size_t)off + 4 > len)
            return -1;
        off += 4;
    }
    for (int i = 0; i < r->ancount; i++) {
        if ((off = dns_get_name(m, len, (size_t)off, NULL, 0)) < 0 || (size_t)off + 10 > len)
            return -1;
        const unsigned char *rr = m + off, *rd = rr + 10;
        size_t type = (size_t)(rr[0] << 8 | rr[1]), rdlen = (size_t)(rr[8] << 8 | rr[9]);
        if ((size_t)off + 10 + rdlen > len)
            return -1;
        if (type == DNS_A && rdlen == 4 && !r->has_a) {
            memcpy(&r->a, rd, 4);
            r->has_a = 1;
        }
        if (type == DNS_TXT && rdlen >= 1 && rd[0] < rdlen && !r->txt[0]) {
            memcpy(r->txt, rd + 1, rd[0]);
            r->txt[rd[0]] = '\0';
        }
        off += 10 + (long)rdlen;
    }
    return 0;
}

const char *const dq_step[] = { "encode", "connect", "send", "receive", "parse" };

/* One query to srv over UDP or TCP (2-byte length prefix). 0 with the parsed
 * answer, or -1 with errno and *step saying where it failed. */
int dns_query(const Addr *srv, int tcp, const char *name, int qtype, struct dns_ans *r, int *step)
{
    unsigned char q[2 + 512], m[4096];
    uint16_t id = (uint16_t)((unsigned)getpid() * 7919u + (unsigned)now_ms());
    int qn = dns_build(q + 2, sizeof q - 2, id, name, qtype), rc = -1;
    *step = DQ_ENCODE;
    if (qn < 0) {
        errno = EINVAL;
        return -1;
    }
    q[0] = (unsigned char)(qn >> 8);
    q[1] = (unsigned char)qn;
    *step = DQ_CONNECT;
    int fd = connect_to(srv, tcp ? SOCK_STREAM : SOCK_DGRAM, net_end());
    if (fd < 0)
        return -1;
    Addr me;
    socklen_t ml = sizeof me;
    if (getsockname(fd, (struct sockaddr *)&me, &ml) == 0)
        ev_int("src_port", addr_port(&me)); /* lets the harness match canary arrivals */
    double end = net_end();
    *step = DQ_SEND;
    if (send_all(fd, tcp ? q : q + 2, (size_t)qn + (tcp ? 2 : 0), end) == 0) {
        *step = DQ_RECV;
        if (tcp) {
            size_t len = recv_until(fd, m, 2, 0, end) == 2 ? (size_t)(m[0] << 8 | m[1]) : 0;
            if (len > sizeof m) {
                errno = EMSGSIZE;
            } else if (len && recv_until(fd, m, len, 0, end) == len) {
                *step = DQ_PARSE;
                if ((rc = dns_parse(m, len, id, r)) != 0)
                    errno = EBADMSG;
            } else if (!errno) {
                errno = ECONNRESET; /* closed before a whole answer came */
            }
        } else {
            /* Skip datagrams that are not the answer to this query. */
            while (rc != 0 && wait_io(fd, POLLIN, end) == 0) {
                ssize_t k = recv(fd, m, sizeof m, 0);
                if (k < 0 && errno != EINTR && errno != EAGAIN)
                    break;
                if (k > 0)
                    rc = dns_parse(m, (size_t)k, id, r);
            }
        }
    }
    int e = errno;
    close(fd);
    errno = e;
    return rc;
}

/* The queries to one resolver, over UDP (dns-own) and over TCP (dns-own-tcp), or by
 * `only` one of them (DNS_UDP, DNS_TCP): a stub that forwards what it is asked on
 * either is a way out. TXT,
 * whose answer brings the nonce back, then A and AAAA of the same name: a stub that
 * refuses TXT ("no tunnelling") still forwards those, and the canary logs the name. */
void own_dns_add(const char *spec, const char *label, const char *denied, int only)
{
    static const int types[] = { 0, DNS_A, DNS_AAAA };
    for (int k = only == DNS_TCP ? 3 : 0; k < (only == DNS_UDP ? 3 : 6); k++) {
        int tcp = k / 3;
        struct att *a = att_new(sweep_id[tcp ? SW_DNS_OWN_TCP : SW_DNS_OWN], tcp ? G_OWN_DNS_TCP : G_OWN_DNS);
        if (!a)
            return;
        if (parse_addr(spec, &a->dst) != 0) {
            g_natt--;
            return;
        }
        a->family = a->dst.ss_family;
        a->type = tcp ? SOCK_STREAM : SOCK_DGRAM;
        a->talk = X_DNS;
        a->qtype = types[k % 3];
        snprintf(a->dsts, sizeof a->dsts, "%s (%s%s%s)", spec, label, tcp ? ", over TCP" : "",
                 a->qtype == DNS_A ? ", an A query" : a->qtype ? ", an AAAA query" : "");
        snprintf(a->qname, sizeof a->qname, "%s.%s.%s", sweep_id[tcp ? SW_DNS_OWN_TCP : SW_DNS_OWN], o.tag,
                 denied);
    }
}
