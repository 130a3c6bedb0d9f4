/* How the sweep asks a relay (tcp-proxy's, unix-proxy's) for the canary, three ways:
 * HTTP CONNECT, SOCKS5 (and SOCKS4, on a new connection, where the SOCKS5 greeting got
 * no SOCKS5 answer: an older relay's dialect), and a forward proxy's absolute-URI GET
 * (squid with CONNECT denied, tinyproxy's ConnectPort: plain HTTP to anywhere). Where the environment's
 * proxy URL carries a login (http://user:password@host:port), it goes to that proxy
 * alone: Basic Proxy-Authorization, SOCKS5 username/password (RFC 1929). A login is
 * never printed: no detail quotes it, and the canary withholds it from its log. A
 * proxy asking for a login nothing hands over is no proof either way: an error. */

#include "probe.h"
#include <ctype.h>

Addr g_relay_target;

#define LOGINS 16
static struct login {
    char user[128], pass[128], var[40]; /* var: the variable that named it (no secret) */
} g_logins[LOGINS];
static int g_nlogins;

/* SOCKS5's steps: the greeting, the login (passed over where the server asks none),
 * the connect request, then the HARNESS line; SOCKS4's, asked where the greeting got no
 * SOCKS5 answer: its connect request, then the HARNESS line. */
enum { S5_GREET, S5_LOGIN, S5_CONNECT, S5_LINE, S4_CONNECT, S4_LINE };

static void unpercent(const char *in, char *out, size_t cap)
{
    size_t k = 0;
    for (; *in && k + 1 < cap; in++) {
        unsigned v;
        if (in[0] == '%' && isxdigit((unsigned char)in[1]) && isxdigit((unsigned char)in[2]) &&
            sscanf(in + 1, "%2x", &v) == 1) {
            out[k++] = (char)v;
            in += 2;
        } else {
            out[k++] = *in;
        }
    }
    out[k] = '\0';
}

int relay_login(const char *user, const char *pass, const char *var)
{
    struct login l;
    unpercent(user, l.user, sizeof l.user);
    unpercent(pass, l.pass, sizeof l.pass);
    snprintf(l.var, sizeof l.var, "%s", var);
    if (!*l.user && !*l.pass)
        return 0;
    for (int i = 0; i < g_nlogins; i++)
        if (!strcmp(g_logins[i].user, l.user) && !strcmp(g_logins[i].pass, l.pass))
            return i + 1;
    if (g_nlogins == LOGINS)
        return 0;
    g_logins[g_nlogins] = l;
    return ++g_nlogins;
}

/* The canary's port a relay's `k`th asking names, after the first (canary_tcp's, 0):
 * the high port, then, where the canary stands in a namespace of its own (it answers
 * every swept port there), 443 and 80, never --allowed-tcp's (a proxy enforcing the
 * policy lets it out): a proxy that lets some ports out alone (squid's stock rule) is
 * asked again for each where it refuses. 0 past the last. */
int proxy_port(int k, const Addr *target)
{
    int first = (int)addr_port(target), high = o.high_port ? atoi(o.high_port) : 0, n = 0;
    int netns = (o.host4 && *o.host4) || (o.host6 && *o.host6), allow = allowed_port();
    const int ports[3] = { high, netns ? 443 : 0, netns ? 80 : 0 };
    for (int i = 0; i < 3; i++)
        if (ports[i] > 0 && ports[i] != first && ports[i] != allow && ++n == k)
            return ports[i];
    return 0;
}

/* "Proxy-Authorization: Basic ...\r\n" where the relay's login is known, else "". */
static void login_header(const struct att *a, char *out, size_t cap)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char plain[260], coded[352];
    out[0] = '\0';
    if (!a->login)
        return;
    const struct login *l = &g_logins[a->login - 1];
    int n = snprintf(plain, sizeof plain, "%s:%s", l->user, l->pass);
    size_t k = 0, len = n < 0 ? 0 : (size_t)n;
    for (size_t i = 0; i < len; i += 3) {
        const unsigned char *p = (const unsigned char *)plain + i;
        unsigned v = (unsigned)p[0] << 16 | (i + 1 < len ? (unsigned)p[1] << 8 : 0) | (i + 2 < len ? p[2] : 0);
        coded[k++] = abc[v >> 18 & 63];
        coded[k++] = abc[v >> 12 & 63];
        coded[k++] = i + 1 < len ? abc[v >> 6 & 63] : '=';
        coded[k++] = i + 2 < len ? abc[v & 63] : '=';
    }
    coded[k] = '\0';
    snprintf(out, cap, "Proxy-Authorization: Basic %s\r\n", coded);
}

/* A marker's word as a URL path's segment (a cell's tag is plain, but no space may
 * break the request line). */
static void path_part(const char *s, char *out, size_t cap)
{
    size_t k = 0;
    for (; *s && k + 4 < cap; s++)
        k += (size_t)(isalnum((unsigned char)*s) || strchr("-._~", *s)
                          ? snprintf(out + k, cap - k, "%c", *s)
                          : snprintf(out + k, cap - k, "%%%02X", (unsigned char)*s));
    out[k] = '\0';
}

int relay_request(struct att *a, const Addr *target)
{
    char t[80], login[400], tag[200], id[160];
    unsigned char *p = a->out;
    int n;
    fmt_addr(target, t, sizeof t);
    login_header(a, login, sizeof login);
    if (a->talk == X_HTTP && a->step == 0) {
        /* The marker in a header of its own: a proxy that forwards these bytes
         * (whatever its dialect) carries it to the canary. */
        n = snprintf((char *)p, sizeof a->out, "CONNECT %s HTTP/1.1\r\nHost: %s\r\nX-Harness: HARNESS %s %s\r\n%s\r\n",
                     t, t, o.tag, a->id, login);
    } else if (a->talk == X_GET) {
        /* The marker in the path too, where the canary logs the request line. */
        path_part(o.tag, tag, sizeof tag);
        path_part(a->id, id, sizeof id);
        n = snprintf((char *)p, sizeof a->out, "GET http://%s/harness/%s/%s HTTP/1.1\r\nHost: %s\r\n"
                     "X-Harness: HARNESS %s %s\r\n%sConnection: close\r\n\r\n", t, tag, id, t, o.tag, a->id, login);
    } else if (a->talk == X_SOCKS && a->step == S5_GREET) {
        /* "No authentication" (and username/password, where the login is known)
         * offered first, then the marker's bytes as methods of no meaning (0x20 and
         * up: unassigned), which a server passes over: a relay that forwards the
         * greeting carries the marker to the canary. */
        int k = a->login ? 2 : 1;
        int m = snprintf((char *)p + 2 + k, sizeof a->out - 2 - (size_t)k, "HARNESS %s %s", o.tag, a->id);
        m = m < 0 ? 0 : m > 255 - k ? 255 - k : m;
        p[0] = 5, p[1] = (unsigned char)(k + m), p[2] = 0;
        if (a->login)
            p[3] = 2;
        n = 2 + k + m;
    } else if (a->talk == X_SOCKS && a->step == S5_LOGIN) {
        const struct login *l = &g_logins[a->login - 1];
        size_t ul = strlen(l->user), pl = strlen(l->pass);
        p[0] = 1, p[1] = (unsigned char)ul, p[2 + ul] = (unsigned char)pl;
        memcpy(p + 2, l->user, ul);
        memcpy(p + 3 + ul, l->pass, pl);
        n = (int)(3 + ul + pl);
        a->login_used = 1;
    } else if (a->talk == X_SOCKS && a->step == S5_CONNECT) {
        const struct sockaddr_in *s4 = (const void *)target;
        p[0] = 5, p[1] = 1, p[2] = 0, p[3] = 1;
        memcpy(p + 4, &s4->sin_addr, 4);
        memcpy(p + 8, &s4->sin_port, 2);
        n = 10;
    } else if (a->talk == X_SOCKS && a->step == S4_CONNECT) {
        /* VN 4, CONNECT, the port, the address, and the marker as its user id (ended
         * by a NUL): a relay that forwards the request carries it to the canary. */
        const struct sockaddr_in *s4 = (const void *)target;
        p[0] = 4, p[1] = 1;
        memcpy(p + 2, &s4->sin_port, 2);
        memcpy(p + 4, &s4->sin_addr, 4);
        int m = snprintf((char *)p + 8, sizeof a->out - 8, "HARNESS %s %s", o.tag, a->id);
        m = m < 0 ? 0 : m > (int)sizeof a->out - 10 ? (int)sizeof a->out - 10 : m;
        p[8 + m] = 0;
        n = 9 + m;
    } else {
        return 0;
    }
    a->outn = n < 0 ? 0 : (size_t)n >= sizeof a->out ? sizeof a->out - 1 : (size_t)n;
    return 1;
}

int relay_asked(const struct att *a)
{
    return (a->talk == X_HTTP && a->step >= 1) ||
           (a->talk == X_SOCKS && (a->step == S5_LINE || a->step == S4_LINE));
}

/* The step a relay asked again (att_reask) starts from: SOCKS4's request where the
 * relay speaks that, else the first. */
int relay_first_step(const struct att *a)
{
    return a->socks4 ? S4_CONNECT : 0;
}

static const char *relay_way(const struct att *a)
{
    return a->talk == X_HTTP ? "HTTP CONNECT" : a->talk != X_SOCKS ? "an absolute-URI GET"
                                              : a->socks4 ? "SOCKS4" : "SOCKS5";
}

/* " with the credentials http_proxy names", where the relay was sent its login (or
 * offered it: SOCKS5's greeting). */
static void login_words(const struct att *a, char *out, size_t cap)
{
    out[0] = '\0';
    if (a->login && (a->talk != X_SOCKS || a->login_used || a->step == S5_GREET))
        snprintf(out, cap, " with the credentials %s names", g_logins[a->login - 1].var);
}

void relay_escaped(struct att *a)
{
    char port[80] = "", login[80];
    if (a->port_try)
        snprintf(port, sizeof port, " (asked for the canary at port %d: its own port refused)",
                 proxy_port(a->port_try, &g_relay_target));
    login_words(a, login, sizeof login);
    att_end(a, OC_ESCAPED, 0, "%s%s through %s %s: the nonce came back%s%s%s", relay_way(a), login,
            a->group == G_UNIX ? "unix socket" : "TCP proxy", a->dsts,
            a->talk != X_GET && !relay_asked(a) ? " in place of the proxy's answer" : "", att_way(a), port);
}

/* A proxy's refusal for want of a login (HTTP 407, SOCKS5 0xFF): blocked where the one
 * the environment gives was sent; else an error, as a login the workload may hold
 * elsewhere would let it out. */
static int login_wanted(struct att *a, const char *reply)
{
    char login[80];
    login_words(a, login, sizeof login);
    if (*login)
        att_end(a, OC_BLOCKED, 0, "%s refused %s%s (%s)", a->dsts, relay_way(a), login, reply);
    else
        att_end(a, OC_ERROR, 0, "%s asks %s for a login (%s) that no proxy variable of the environment"
                " gives: no proof that it is no way out", a->dsts, relay_way(a), reply);
    return 1;
}

int relay_judge(struct att *a, int eof)
{
    char first[100], reply[120];
    int more = !eof && a->inn < sizeof a->in - 2;
    if (a->talk == X_HTTP || a->talk == X_GET) { /* HTTP: the proxy's answer */
        const char *line = (const char *)a->in;
        if (!strstr(line, "\r\n\r\n") && more)
            return 0;
        snprintf(first, sizeof first, "%.*s", (int)strcspn(line, "\r\n"), line);
        const char *pass = a->login ? g_logins[a->login - 1].pass : "";
        if (strcasestr(first, "authorization") || (*pass && strstr(first, pass)))
            snprintf(first, sizeof first, "withheld: it quotes the login"); /* a server echoing */
        int http = !strncmp(line, "HTTP/1.", 7) && line[8] == ' ', status = http ? atoi(line + 9) : 0;
        snprintf(reply, sizeof reply, "\"%.60s\"", first);
        if (a->talk == X_HTTP && status == 200)
            return 2;
        if (a->talk == X_GET && status / 100 == 2) { /* the canary's answer: the nonce in its body */
            if (more)
                return 0;
            att_end(a, OC_BLOCKED, 0, "%s answered an absolute-URI GET without the nonce (%s)", a->dsts, reply);
            return 1;
        }
        if (status == 407)
            return login_wanted(a, reply);
        if (http && !eof && proxy_port(a->port_try + 1, &g_relay_target))
            return 3; /* an HTTP proxy's refusal: perhaps of this port alone */
        att_end(a, OC_BLOCKED, 0, "%s refused %s (%s)%s", a->dsts, relay_way(a), reply,
                a->port_try ? " at every port the canary answers" : "");
        return 1;
    }
    /* No SOCKS5 answer to the greeting (closed, or another first byte): asked again by
     * SOCKS4, on a new connection (4: the engine's att_other_dialect). */
    if (a->step == S5_GREET && !a->socks4 && ((eof && a->inn < 2) || (a->inn && a->in[0] != 5)))
        return 4;
    if (a->step == S4_CONNECT) { /* SOCKS4's reply: VN 0, CD 90 granted, 91 to 93 refused */
        if (a->inn < 8 && !eof && (!a->inn || a->in[0] == 0))
            return 0;
        snprintf(reply, sizeof reply, "%u %u", a->in[0], a->inn > 1 ? a->in[1] : 0);
        if (a->inn >= 8 && a->in[0] == 0 && a->in[1] == 90)
            return 2;
        if (a->inn >= 2 && a->in[0] == 0 && !eof && proxy_port(a->port_try + 1, &g_relay_target))
            return 3; /* its refusal: perhaps of this port alone */
        att_end(a, OC_BLOCKED, 0, "%s refused SOCKS5 and SOCKS4 (%s)%s", a->dsts,
                a->inn ? reply : "closed", a->port_try ? " at every port the canary answers" : "");
        return 1;
    }
    size_t need = a->step == S5_CONNECT ? 10 : 2; /* SOCKS5's reply to the step's message */
    if (a->inn < need)
        return eof ? (att_end(a, OC_BLOCKED, 0, "%s: no SOCKS5 answer", a->dsts), 1) : 0;
    snprintf(reply, sizeof reply, "%u %u", a->in[0], a->in[1]);
    if (a->step == S5_GREET) {
        if (a->in[0] == 5 && a->in[1] == 0) {
            a->step = S5_LOGIN; /* none asked: the connect request next */
            return 2;
        }
        if (a->in[0] == 5 && a->in[1] == 2 && a->login)
            return 2; /* the login next */
        if (a->in[0] == 5 && a->in[1] == 0xff)
            return login_wanted(a, reply);
    } else if (a->step == S5_LOGIN) {
        return a->in[1] == 0 ? 2 : login_wanted(a, reply);
    } else if (a->in[0] == 5 && a->in[1] == 0) {
        return 2;
    } else if (a->in[0] == 5 && !eof && proxy_port(a->port_try + 1, &g_relay_target)) {
        return 3; /* its refusal of the connect request: perhaps of this port alone */
    }
    att_end(a, OC_BLOCKED, 0, "%s refused SOCKS5 (%s)%s", a->dsts, reply,
            a->port_try ? " at every port the canary answers" : "");
    return 1;
}
