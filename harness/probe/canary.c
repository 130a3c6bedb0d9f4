/* Mode "canary": TCP and DNS listeners on the host that answer with the nonce and
 * log what arrives, and the daemon that runs them; sandboxes send what they like, so
 * everything read is parsed with bounds. Its network is canary_net.c's, its packet
 * capture capture.c's. */

#include "probe.h"

#define MAX_LISTEN 96
#define MAX_CLIENTS 512
#define CLIENT_MS 2000 /* a client has this long to send its line or query */

/* L_UNIX_LINE: a line listener on an abstract unix name, bound in the namespace
 * the canary starts in (the host's), before it moves to its own; L_UNIX_DGRAM: a
 * datagram socket at another abstract name there (nothing answers: its log proves). */
enum { L_LINE, L_DNS_UDP, L_DNS_TCP, L_UDP_LINE, L_UNIX_LINE, L_UNIX_DGRAM };
/* optional: a sweep port that may be taken (listen mode); a failed bind is logged. */
/* early: bound in the namespace the canary starts in (the host's), before it moves.
 * seqpacket: an L_UNIX_LINE listener of unix SOCK_SEQPACKET (the same line, one
 * message each way). */
struct listener { int fd, type; const char *spec; int optional, early, seqpacket; };
struct client {
    int fd;
    const struct listener *l;
    char peer[80];
    double end;
    size_t n;
    unsigned char buf[2 + 2048]; /* room for a proxy's request head (its headers, and ours) */
};

static const char *g_canary_nonce;
static struct in_addr g_answer;
static int g_have_answer;

/* Answer a query (A: --answer, TXT: nonce=<nonce>, else NOERROR and no
 * answer) into r; the reply length or -1. The question goes to qname/qtype. */
static int dns_answer(const unsigned char *q, size_t n, unsigned char *r, size_t cap,
                      char *qname, size_t ncap, int *qtype)
{
    long off;
    if (n < 12 || q[2] & 0x80 || (q[4] << 8 | q[5]) < 1 ||
        (off = dns_get_name(q, n, 12, qname, ncap)) < 0 || (size_t)off + 4 > n)
        return -1;
    *qtype = q[off] << 8 | q[off + 1];
    size_t p = (size_t)off + 4, rdlen = 0;
    unsigned char rd[256];
    if (*qtype == DNS_A && g_have_answer) {
        memcpy(rd, &g_answer, 4);
        rdlen = 4;
    } else if (*qtype == DNS_TXT) {
        rdlen = (size_t)snprintf((char *)rd + 1, sizeof rd - 1, "nonce=%s", g_canary_nonce);
        rd[0] = (unsigned char)rdlen++;
    }
    if (p + 12 + rdlen > cap)
        return -1;
    memcpy(r, q, p);                                /* header and question */
    r[2] = (unsigned char)(0x80 | (q[2] & 0x79));    /* QR, opcode, RD */
    r[3] = 0x80;                                     /* RA, NOERROR */
    memset(r + 4, 0, 8);
    r[5] = 1;
    if (rdlen) {
        static const unsigned char rr[] = { 0xc0, 12, 0, 0, 0, 1, 0, 0, 0, 60, 0, 0 };
        memcpy(r + p, rr, sizeof rr);                /* name: pointer to the question */
        r[p + 3] = (unsigned char)*qtype;
        r[p + 11] = (unsigned char)rdlen;
        memcpy(r + p + 12, rd, rdlen);
        p += 12 + rdlen;
        r[7] = 1;                                    /* ANCOUNT */
    }
    return (int)p;
}

/* Log a query and build its reply; the reply length (0: none). */
static size_t canary_dns(const char *proto, const char *listen, const char *peer,
                         const unsigned char *q, size_t n, unsigned char *r, size_t cap)
{
    char qname[256];
    int qtype = -1, len = dns_answer(q, n, r, cap, qname, sizeof qname, &qtype);
    Buf b = { .n = 0 };
    bput(&b, "{\"event\":\"dns\"");
    bkv(&b, "proto", proto);
    bkv(&b, "listen", listen);
    bkv(&b, "peer", peer);
    if (len < 0)
        bkv(&b, "error", "malformed query");
    else {
        bkv(&b, "qname", qname);
        bput(&b, ",\"qtype\":%d", qtype);
    }
    bput(&b, "}");
    emit(&b);
    return len > 0 ? (size_t)len : 0;
}

static void serve_udp(const struct listener *l)
{
    for (int k = 0; k < 64; k++) { /* a bounded batch, then the other sockets */
        unsigned char q[1500], r[600];
        Addr from;
        socklen_t fl = sizeof from;
        char peer[80];
        ssize_t n = recvfrom(l->fd, q, sizeof q, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return;
        fmt_addr(&from, peer, sizeof peer);
        size_t len = canary_dns("udp", l->spec, peer, q, (size_t)n, r, sizeof r);
        if (len)
            sendto(l->fd, r, len, MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *)&from, fl);
    }
}

/* Bytes as text for the log: printable ASCII kept, anything else '.'. */
static void printable(const unsigned char *p, size_t n, char *out, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k + 1 < cap; i++)
        out[k++] = p[i] >= 0x20 && p[i] < 0x7f ? (char)p[i] : '.';
    out[k] = '\0';
}

/* "data": every byte that came, when there is more than the first line; a marker
 * anywhere in it (after a proxy's own request line) names the attempt. A login a relay
 * passed on as it came (Proxy-Authorization: the environment's) is withheld. */
static void log_data(Buf *b, const unsigned char *p, size_t n, size_t first)
{
    char text[600];
    if (n <= first + 1)
        return;
    printable(p, n, text, sizeof text); /* byte for byte: text[i] is p[i]'s */
    for (char *h = text; (h = strcasestr(h, "proxy-authorization:")); )
        for (h += 20; *h && p[h - text] != '\r' && p[h - text] != '\n'; h++)
            *h = '*';
    bkv(b, "data", text);
}

/* A datagram on a sweep port: log its first line (and all of it, if there is
 * more), answer with the nonce. */
static void serve_udp_line(const struct listener *l)
{
    for (int k = 0; k < 64; k++) {
        char q[1500], peer[80];
        Addr from;
        socklen_t fl = sizeof from;
        /* A unix datagram's sender by its credentials (SO_PASSCRED): each arrival a
         * flow of its own, like the stream listener's "pid N". */
        union { struct cmsghdr h; char b[CMSG_SPACE(sizeof(struct ucred))]; } ctl;
        struct iovec iov = { q, sizeof q - 1 };
        struct msghdr mh = { .msg_name = &from, .msg_namelen = fl, .msg_iov = &iov, .msg_iovlen = 1,
                             .msg_control = ctl.b, .msg_controllen = sizeof ctl.b };
        ssize_t n = recvmsg(l->fd, &mh, MSG_DONTWAIT);
        fl = mh.msg_namelen;
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return;
        q[n] = '\0';
        size_t first = strcspn(q, "\r\n");
        int unix_dgram = l->type == L_UNIX_DGRAM;
        struct cmsghdr *c = unix_dgram ? CMSG_FIRSTHDR(&mh) : NULL;
        if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
            struct ucred cr;
            memcpy(&cr, CMSG_DATA(c), sizeof cr);
            snprintf(peer, sizeof peer, "pid %d", (int)cr.pid);
        } else if (unix_dgram)
            snprintf(peer, sizeof peer, "unix");
        else
            fmt_addr(&from, peer, sizeof peer);
        Buf b = { .n = 0 };
        bput(&b, "{\"event\":\"%s\"", unix_dgram ? "unix" : "udp");
        bkv(&b, "listen", l->spec);
        bkv(&b, "peer", peer);
        log_data(&b, (const unsigned char *)q, (size_t)n, first);
        q[first] = '\0';
        bkv(&b, "line", q);
        bput(&b, "}");
        emit(&b);
        if (unix_dgram)
            continue; /* an unbound sender has no address to answer */
        const struct sockaddr_in *f4 = (const void *)&from;
        char me[INET_ADDRSTRLEN] = "";
        if (g_have_answer)
            inet_ntop(AF_INET, &g_answer, me, sizeof me);
        size_t ml = strlen(me);
        if (ml && from.ss_family == AF_INET && f4->sin_addr.s_addr == g_answer.s_addr &&
            !(strncmp(l->spec, me, ml) == 0 && l->spec[ml] == ':'))
            continue; /* at another address (the host's), a packet that claims the canary's own
                       * (written into a held TUN device): logged, never answered, or the answer
                       * would reach the canary as an arrival no attempt explains */
        b.n = 0;
        bput(&b, "NONCE %s\n", g_canary_nonce);
        sendto(l->fd, b.s, b.n, MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *)&from, fl);
    }
}

/* Whether the first line is an HTTP request's ("GET /harness/TAG/ID HTTP/1.1": a
 * forward proxy's, asked for the canary by an absolute URI; or a CONNECT a relay passed
 * on as it came): answered in HTTP, once its head is in, as a proxy relays nothing else. */
static int http_request(const struct client *c)
{
    const unsigned char *nl = memchr(c->buf, '\n', c->n);
    size_t len = nl ? (size_t)(nl - c->buf) : 0;
    len -= len && c->buf[len - 1] == '\r';
    return len > 9 && !memcmp(c->buf + len - 9, " HTTP/1.", 8);
}

/* 1: the client's line or query is complete (an HTTP request's head); 0: not yet; -1:
 * it never will be. */
static int client_ready(const struct client *c)
{
    if (c->l->type == L_LINE || c->l->type == L_UNIX_LINE) {
        int head = !http_request(c) || memmem(c->buf, c->n, "\r\n\r\n", 4) || memmem(c->buf, c->n, "\n\n", 2);
        return memchr(c->buf, '\n', c->n) && head ? 1 : c->n >= sizeof c->buf - 1 ? -1 : 0;
    }
    if (c->n < 2)
        return 0;
    size_t want = (size_t)(c->buf[0] << 8 | c->buf[1]);
    return want + 3 > sizeof c->buf ? -1 : c->n >= 2 + want;
}

/* Log the client's line or query, answer it, and close. */
static void client_finish(struct client *c, int complete)
{
    if (c->l->type == L_LINE || c->l->type == L_UNIX_LINE) {
        char line[sizeof c->buf];
        /* What else is already there: the rest of a request after its first line. */
        ssize_t k = c->fd >= 0 ? read(c->fd, c->buf + c->n, sizeof c->buf - 1 - c->n) : -1;
        if (k > 0)
            c->n += (size_t)k;
        memcpy(line, c->buf, c->n);
        line[c->n] = '\0';
        size_t first = strcspn(line, "\r\n");
        line[first] = '\0';
        Buf b = { .n = 0 };
        bput(&b, "{\"event\":\"%s\"", c->l->type == L_UNIX_LINE ? "unix" : "tcp");
        bkv(&b, "listen", c->l->spec);
        bkv(&b, "peer", c->peer);
        bkv(&b, "line", line);
        log_data(&b, c->buf, c->n, first);
        if (!complete)
            bput(&b, ",\"complete\":false");
        bput(&b, "}");
        emit(&b);
        b.n = 0;
        if (http_request(c))
            bput(&b, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n"
                 "Connection: close\r\n\r\n", strlen("NONCE \n") + strlen(g_canary_nonce));
        bput(&b, "NONCE %s\n", g_canary_nonce);
        send(c->fd, b.s, b.n, MSG_DONTWAIT | MSG_NOSIGNAL);
    } else if (complete) {
        unsigned char r[2 + 600];
        size_t len = canary_dns("tcp", c->l->spec, c->peer, c->buf + 2, c->n - 2, r + 2, sizeof r - 2);
        r[0] = (unsigned char)(len >> 8);
        r[1] = (unsigned char)len;
        if (len)
            send(c->fd, r, len + 2, MSG_DONTWAIT | MSG_NOSIGNAL);
    } else {
        Buf b = { .n = 0 };
        bput(&b, "{\"event\":\"dns\",\"proto\":\"tcp\"");
        bkv(&b, "listen", c->l->spec);
        bkv(&b, "peer", c->peer);
        bput(&b, ",\"error\":\"incomplete query\"");
        log_data(&b, c->buf, c->n, 0); /* a relay's request, its marker, where no query came */
        bput(&b, "}");
        emit(&b);
    }
    shutdown(c->fd, SHUT_WR);
    close(c->fd);
    c->fd = -1;
}

static void client_read(struct client *c)
{
    ssize_t k = read(c->fd, c->buf + c->n, sizeof c->buf - 1 - c->n);
    if (k < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (k > 0)
        c->n += (size_t)k;
    int ready = client_ready(c);
    if (ready || k <= 0)
        client_finish(c, ready > 0);
}

static void accept_all(const struct listener *l, struct client *cl, size_t *nc)
{
    for (int k = 0; k < 64; k++) {
        Addr from;
        socklen_t fl = sizeof from;
        int fd = accept4(l->fd, (struct sockaddr *)&from, &fl, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0 && (errno == EINTR || errno == ECONNABORTED))
            continue;
        if (fd < 0)
            return;
        struct client *c = &cl[*nc];
        if (*nc == MAX_CLIENTS) { /* full: the oldest client makes room */
            c = cl;
            for (size_t i = 1; i < MAX_CLIENTS; i++)
                if (cl[i].end < c->end)
                    c = &cl[i];
            client_finish(c, 0);
        } else {
            (*nc)++;
        }
        memset(c, 0, sizeof *c);
        c->fd = fd;
        c->l = l;
        c->end = now_ms() + CLIENT_MS;
        if (l->type == L_UNIX_LINE) { /* no address: the peer's pid, as this namespace sees it */
            struct ucred cr = { 0 };
            socklen_t cl = sizeof cr;
            getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl);
            snprintf(c->peer, sizeof c->peer, "pid %d", (int)cr.pid);
        } else {
            fmt_addr(&from, c->peer, sizeof c->peer);
        }
    }
}

/* --unix-abstract NAME: a stream listener at "@NAME"; --unix-abstract-seqpacket NAME
 * a seqpacket one; --unix-abstract-dgram NAME a datagram socket there; fatal if it
 * cannot bind. */
static int canary_bind_unix(const char *name, int type)
{
    struct sockaddr_un un = { .sun_family = AF_UNIX };
    size_t len = strlen(name);
    if (len == 0 || len >= sizeof un.sun_path - 1)
        fatal(2, "bad --unix-abstract (1 to %zu bytes): %s", sizeof un.sun_path - 2, name);
    memcpy(un.sun_path + 1, name, len);
    int fd = socket(AF_UNIX, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&un, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len)) != 0
        || (type != SOCK_DGRAM && listen(fd, 512) != 0))
        fatal(2, "bind(unix @%s): %s", name, strerror(errno));
    int one = 1;
    if (type == SOCK_DGRAM)
        setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof one);
    return fd;
}

static int canary_bind(const struct listener *l)
{
    Addr a;
    const char *spec = l->spec;
    int one = 1, st = l->type == L_DNS_UDP || l->type == L_UDP_LINE ? SOCK_DGRAM : SOCK_STREAM;
    if (parse_addr(spec, &a) != 0)
        fatal(2, "bad address (want IP:PORT): %s", spec);
    int fd = socket(a.ss_family, st | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        fatal(2, "socket for %s: %s", spec, strerror(errno));
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (a.ss_family == AF_INET6)
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    if (bind(fd, (struct sockaddr *)&a, addr_len(&a)) != 0
        || (st == SOCK_STREAM && listen(fd, 512) != 0)) {
        if (!l->optional)
            fatal(2, "bind(%s %s): %s", st == SOCK_DGRAM ? "udp" : "tcp", spec, strerror(errno));
        Buf b = { .n = 0 };
        bput(&b, "{\"event\":\"unbound\",\"proto\":\"%s\"", st == SOCK_DGRAM ? "udp" : "tcp");
        bkv(&b, "listen", spec);
        bkv(&b, "error", strerror(errno));
        bput(&b, "}");
        emit(&b);
        close(fd);
        return -1;
    }
    return fd;
}

/* --daemon: the readiness pipe's write end, in the daemon; -1 otherwise. */
static int g_ready_fd = -1;

/*
 * Fork a daemon that logs to `log` in a session of its own; the caller's process
 * waits until the daemon says it is ready, then prints "pid=N" (and a line
 * "capture=on" when its listen-mode capture runs, `--capture-to`) and exits 0. If
 * the daemon fails first (or takes over 10 s), its log goes to stderr and the
 * exit status is 86. No polling: the daemon closes the pipe by writing a byte,
 * or by dying. Returns in the daemon only.
 */
static void canary_daemonize(const char *log)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC))
        fatal(2, "pipe: %s", strerror(errno));
    pid_t pid = fork();
    if (pid < 0)
        fatal(2, "fork: %s", strerror(errno));
    if (pid == 0) {
        close(p[0]);
        setsid();
        int out = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (out < 0 || in < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0)
            _exit(2); /* the caller reports the missing log */
        close(out);
        close(in);
        g_ready_fd = p[1];
        return;
    }
    close(p[1]);
    struct pollfd pf = { .fd = p[0], .events = POLLIN };
    char c;
    int waited = poll(&pf, 1, 10000);
    if (waited > 0 && read(p[0], &c, 1) == 1) {
        dprintf(1, "pid=%d\n%s", (int)pid, c == 'c' ? "capture=on\n" : "");
        _exit(0);
    }
    if (waited == 0) {
        kill(pid, SIGKILL);
        dprintf(2, "canary did not report ready within 10s\n");
    }
    char buf[4096];
    int fd = open(log, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf) : -1;
    if (n > 0)
        (void)!write(2, buf, (size_t)n);
    else
        dprintf(2, "canary failed before writing %s\n", log);
    _exit(86);
}

/* The run's lease (a file whose first line is the epoch second it ends at) is
 * still running: the file is there, readable, and its end is not past. A run that
 * was killed stops renewing it, and the canary then exits by itself. */
static int lease_alive(const char *path)
{
    char text[64] = { 0 };
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n <= 0)
        return 0;
    char *end = NULL;
    long long until = strtoll(text, &end, 10);
    if (end == text)
        return 0;
    return (long long)time(NULL) <= until;
}

/* Single-threaded poll loop; never waits on one client. */
__attribute__((noreturn))
void canary_main(int argc, char **argv)
{
    static struct listener ls[MAX_LISTEN];
    static struct client cl[MAX_CLIENTS];
    static struct pollfd pf[MAX_LISTEN + MAX_CLIENTS + 2];
    size_t nl = 0, nc = 0;
    const char *answer = NULL, *daemon_log = NULL, *netns = NULL, *iface = NULL, *cidr = NULL,
               *gw = NULL, *cidr6 = NULL, *gw6 = NULL, *lease = NULL, *sysv = NULL, *mqueue = NULL;
    int capture = 0, cap_fd = -1, mq_fd = -1;
    double lease_checked = 0;

    g_fatal_type = "event";
    signal(SIGPIPE, SIG_IGN);
    for (int i = 2; i < argc; i += 2) {
        const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        int dns = !strcmp(opt, "--dns");
        if (!strcmp(opt, "--capture-to") && val) {
            capture_to(val);
            continue;
        }
        if (!strcmp(opt, "--capture")) {
            capture = 1;
            i--; /* a flag: no value */
            continue;
        }
        if (!val)
            fatal(2, "bad argument: %s", opt);
        if ((dns || !strcmp(opt, "--tcp")) && nl + 2 <= MAX_LISTEN) {
            ls[nl++] = (struct listener){ -1, dns ? L_DNS_UDP : L_LINE, val, 0, 0, 0 };
            if (dns)
                ls[nl++] = (struct listener){ -1, L_DNS_TCP, val, 0, 0, 0 };
        } else if (!strcmp(opt, "--sweep-tcp") && nl + 1 <= MAX_LISTEN) {
            ls[nl++] = (struct listener){ -1, L_LINE, val, 1, 0, 0 };
        } else if (!strcmp(opt, "--sweep-dns") && nl + 2 <= MAX_LISTEN) {
            ls[nl++] = (struct listener){ -1, L_DNS_UDP, val, 1, 0, 0 };
            ls[nl++] = (struct listener){ -1, L_DNS_TCP, val, 1, 0, 0 };
        } else if (!strcmp(opt, "--sweep-udp") && nl + 1 <= MAX_LISTEN) {
            ls[nl++] = (struct listener){ -1, L_UDP_LINE, val, 1, 0, 0 };
        } else if (!strcmp(opt, "--unix-abstract") && nl + 1 <= MAX_LISTEN) {
            ls[nl++] = (struct listener){ -1, L_UNIX_LINE, val, 0, 1, 0 };
        } else if (!strcmp(opt, "--unix-abstract-seqpacket") && nl + 1 <= MAX_LISTEN) {
            ls[nl++] = (struct listener){ -1, L_UNIX_LINE, val, 0, 1, 1 };
        } else if (!strcmp(opt, "--unix-abstract-dgram") && nl + 1 <= MAX_LISTEN) {
            ls[nl++] = (struct listener){ -1, L_UNIX_DGRAM, val, 0, 1, 0 };
        } else if (!strcmp(opt, "--host-tcp") && nl + 1 <= MAX_LISTEN) {
            ls[nl++] = (struct listener){ -1, L_LINE, val, 1, 1, 0 };
        } else if (!strcmp(opt, "--host-udp") && nl + 1 <= MAX_LISTEN) {
            ls[nl++] = (struct listener){ -1, L_UDP_LINE, val, 1, 1, 0 };
        } else if (!strcmp(opt, "--iface-addr6"))
            cidr6 = val;
        else if (!strcmp(opt, "--gateway6"))
            gw6 = val;
        else if (!strcmp(opt, "--nonce"))
            g_canary_nonce = val;
        else if (!strcmp(opt, "--answer"))
            answer = val;
        else if (!strcmp(opt, "--daemon"))
            daemon_log = val;
        else if (!strcmp(opt, "--netns"))
            netns = val;
        else if (!strcmp(opt, "--iface"))
            iface = val;
        else if (!strcmp(opt, "--iface-addr"))
            cidr = val;
        else if (!strcmp(opt, "--gateway"))
            gw = val;
        else if (!strcmp(opt, "--lease"))
            lease = val;
        else if (!strcmp(opt, "--sysv"))
            sysv = val;
        else if (!strcmp(opt, "--mqueue"))
            mqueue = val;
        else
            fatal(2, "bad argument: %s", opt);
    }
    if (!g_canary_nonce || !*g_canary_nonce || strlen(g_canary_nonce) > 200)
        fatal(2, "--nonce not given (or longer than 200)");
    if (nl > MAX_LISTEN - 2)
        fatal(2, "too many listeners (at most %d)", MAX_LISTEN - 2);
    if (answer && inet_pton(AF_INET, answer, &g_answer) != 1)
        fatal(2, "bad --answer (want an IPv4 address): %s", answer);
    g_have_answer = answer != NULL;
    if (nl == 0)
        fatal(2, "no --tcp or --dns given");
    if (daemon_log)
        canary_daemonize(daemon_log);
    for (size_t k = 0; k < nl; k++) /* in the namespace it started in: the host's */
        if (ls[k].early)
            ls[k].fd = ls[k].type == L_UNIX_LINE
                           ? canary_bind_unix(ls[k].spec, ls[k].seqpacket ? SOCK_SEQPACKET : SOCK_STREAM)
                       : ls[k].type == L_UNIX_DGRAM ? canary_bind_unix(ls[k].spec, SOCK_DGRAM)
                                                    : canary_bind(&ls[k]);
    canary_network(netns, iface, cidr, gw);
    if (cidr6)
        canary_network6(iface, cidr6, gw6);
    if (capture)
        cap_fd = capture_open();
    else if (g_ncap_to)
        cap_fd = capture_open_to();
    for (size_t k = 0; k < nl; k++)
        if (!ls[k].early)
            ls[k].fd = canary_bind(&ls[k]);
    if (sysv || mqueue) /* last: nothing fatal comes after, which would leave them behind */
        mq_fd = ipc_canary_open(sysv, mqueue);

    Buf b = { .n = 0 };
    bput(&b, "{\"event\":\"ready\",\"pid\":%d}", (int)getpid());
    emit(&b);
    if (g_ready_fd >= 0) { /* "c": ready, and capturing in listen mode */
        (void)!write(g_ready_fd, g_ncap_to && cap_fd >= 0 ? "c" : "r", 1);
        close(g_ready_fd);
    }

    for (;;) {
        double now = now_ms(), next = -1;
        for (size_t k = 0; k < nl; k++)
            pf[k] = (struct pollfd){ .fd = ls[k].fd, .events = POLLIN };
        for (size_t k = 0; k < nc; k++) {
            pf[nl + k] = (struct pollfd){ .fd = cl[k].fd, .events = POLLIN };
            if (next < 0 || cl[k].end < next)
                next = cl[k].end;
        }
        int wait = next < 0 ? -1 : next <= now ? 0 : (int)(next - now + 1);
        if (lease && (wait < 0 || wait > 1000))
            wait = 1000;
        if (sysv && (wait < 0 || wait > 100)) /* SysV IPC cannot be polled: looked at 10 times a second */
            wait = 100;
        if (lease && now - lease_checked >= 1000) {
            lease_checked = now;
            if (!lease_alive(lease)) {
                b.n = 0;
                bput(&b, "{\"event\":\"lease-ended\",\"pid\":%d}", (int)getpid());
                emit(&b);
                ipc_canary_remove();
                _exit(0);
            }
        }
        pf[nl + nc] = (struct pollfd){ .fd = cap_fd, .events = POLLIN };
        pf[nl + nc + 1] = (struct pollfd){ .fd = mq_fd, .events = POLLIN };
        if (poll(pf, nl + nc + 2, wait) < 0 && errno != EINTR) {
            ipc_canary_remove();
            fatal(2, "poll: %s", strerror(errno));
        }
        if (pf[nl + nc].revents)
            capture_read(cap_fd);
        if (sysv || mqueue)
            ipc_canary_read();
        /* Clients first, then drop the finished ones, then take new ones. */
        for (size_t k = 0; k < nc; k++) {
            if (pf[nl + k].revents)
                client_read(&cl[k]);
            if (cl[k].fd >= 0 && now_ms() >= cl[k].end)
                client_finish(&cl[k], 0);
        }
        size_t kept = 0;
        for (size_t k = 0; k < nc; k++)
            if (cl[k].fd >= 0)
                cl[kept++] = cl[k];
        nc = kept;
        for (size_t k = 0; k < nl; k++)
            if (pf[k].revents) {
                if (ls[k].type == L_DNS_UDP)
                    serve_udp(&ls[k]);
                else if (ls[k].type == L_UDP_LINE || ls[k].type == L_UNIX_DGRAM)
                    serve_udp_line(&ls[k]);
                else
                    accept_all(&ls[k], cl, &nc);
            }
    }
}
