/* The sweep's `tcp-proxy` line: a relay to anywhere that listens on TCP where the
 * workload can reach it without leaving its network namespace (a sidecar proxy bound
 * on the sandbox's own loopback, its outgoing side in the host's network), asked by
 * HTTP CONNECT and SOCKS5 to reach the canary, as unix-proxy asks every unix socket.
 * Tried: every TCP listener of the sandbox's own network namespace
 * (/proc/net/tcp and tcp6, a wildcard address by loopback), and every proxy its
 * environment names by address (http_proxy, https_proxy, all_proxy, either case).
 * Where the probe may stand in the host's network namespace (the control, a
 * co-located sandbox) the listeners are the host's own services, which are never
 * sent a request: only the proxies the environment names are tried there; a sandbox
 * that shows no /proc (no listener can be listed, the namespace not told) is an error.
 * Every port is tried (a relay on the canary's own port number, 8080, is a relay).
 * Credentials in a proxy's address are never printed. */

#include "probe.h"

#define PROXY_MAX 32 /* relays tried, at most: more make the line an error */

static int g_proxy_cut; /* more relays in view than are tried: no proof */
static int g_in_host_netns;
static int g_unlisted; /* no /proc to list the namespace's listeners by, or tell it by */

static void proxy_add(const char *host, unsigned port)
{
    char dsts[96];
    snprintf(dsts, sizeof dsts, strchr(host, ':') ? "[%s]:%u" : "%s:%u", host, port);
    size_t relays = 0;
    for (size_t i = 0; i < g_natt; i++) {
        if (g_att[i].group != G_PROXY)
            continue;
        if (!strcmp(g_att[i].dsts, dsts))
            return;
        relays++;
    }
    if (relays >= 2 * PROXY_MAX) {
        g_proxy_cut = 1;
        return;
    }
    for (int talk = X_HTTP; talk <= X_SOCKS; talk++) {
        struct att *a = sweep_add(sweep_id[SW_TCP_PROXY], host, (int)port, SOCK_STREAM, talk);
        if (a)
            a->group = G_PROXY;
        if (a && talk == X_SOCKS && a->state != S_DONE) /* after the HTTP CONNECT */
            a->after = (size_t)(a - g_att), a->state = S_WAIT;
    }
}

/* /proc/net/tcp or tcp6: each listener (state 0A), a wildcard address by loopback
 * (tcp6's at ::1 and at 127.0.0.1: /proc does not say whether it is IPv6 only); -1
 * where the table cannot be read. */
static int listeners(const char *file, int six)
{
    FILE *f = fopen(file, "r");
    if (!f)
        return -1;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        char hex[40], st[4];
        unsigned port;
        if (sscanf(line, "%*s %39[0-9A-Fa-f]:%x %*s %3s", hex, &port, st) != 3 || strcmp(st, "0A"))
            continue;
        unsigned char raw[16];
        size_t words = six ? 4 : 1;
        if (strlen(hex) != words * 8)
            continue;
        for (size_t w = 0; w < words; w++) { /* each 32-bit word as the kernel holds it */
            char chunk[9];
            memcpy(chunk, hex + 8 * w, 8);
            chunk[8] = '\0';
            uint32_t v = (uint32_t)strtoul(chunk, NULL, 16);
            memcpy(raw + 4 * w, &v, 4);
        }
        char host[INET6_ADDRSTRLEN];
        static const unsigned char any[16];
        if (!memcmp(raw, any, 4 * words)) { /* a wildcard: by loopback; tcp6's may be dual-stack */
            proxy_add(six ? "::1" : "127.0.0.1", port);
            if (six)
                proxy_add("127.0.0.1", port);
            continue;
        }
        if (inet_ntop(six ? AF_INET6 : AF_INET, raw, host, sizeof host))
            proxy_add(host, port);
    }
    fclose(f);
    return 0;
}

/* A proxy URL's address ([scheme://][user[:password]@]host[:port][/...]), by number
 * or localhost; a name is not looked up (the query would be a line of its own). */
static void env_proxy(const char *url)
{
    char buf[256], *h;
    snprintf(buf, sizeof buf, "%s", url);
    h = strstr(buf, "://") ? strstr(buf, "://") + 3 : buf;
    if (strrchr(h, '@'))
        h = strrchr(h, '@') + 1; /* the credentials go no further */
    h[strcspn(h, "/?#")] = '\0';
    unsigned port = 1080; /* curl's, where none is given */
    char *host = h, *colon;
    if (*h == '[') {
        char *close = strchr(h, ']');
        if (!close)
            return;
        *close = '\0';
        host = h + 1;
        if (close[1] == ':')
            port = (unsigned)strtoul(close + 2, NULL, 10);
    } else if ((colon = strrchr(h, ':'))) {
        *colon = '\0';
        port = (unsigned)strtoul(colon + 1, NULL, 10);
    }
    if (!strcmp(host, "localhost"))
        host = "127.0.0.1";
    unsigned char a[16];
    if (port && port < 65536 && (inet_pton(AF_INET, host, a) == 1 || inet_pton(AF_INET6, host, a) == 1))
        proxy_add(host, port);
}

void sweep_tcp_proxy(void)
{
    static const char *const names[] = { "http_proxy", "HTTP_PROXY", "https_proxy",
                                         "HTTPS_PROXY", "all_proxy", "ALL_PROXY" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *v = getenv(names[i]);
        if (v && *v)
            env_proxy(v);
    }
    struct stat self;
    g_unlisted = stat("/proc/self/ns/net", &self) != 0; /* no /proc: nothing can be told */
    g_in_host_netns = !g_unlisted && maybe_host_netns();
    if (g_unlisted || g_in_host_netns)
        return;
    if (listeners("/proc/net/tcp", 0) != 0)
        g_unlisted = 1;
    listeners("/proc/net/tcp6", 1); /* none where the kernel has no IPv6 */
}

/* tcp-proxy's line: as group_report, but an error where more relays were in view
 * than are tried and none of those tried escaped. */
void proxy_report(const char *id, double t0)
{
    int escaped = 0;
    for (size_t i = 0; i < g_natt; i++)
        escaped |= g_att[i].group == G_PROXY && g_att[i].oc == OC_ESCAPED;
    if (g_unlisted && !escaped) {
        att_line(id, OC_ERROR, 0,
                 "the sandbox shows no /proc/net/tcp: its network namespace's TCP listeners cannot"
                 " be listed (a relay among them would be a way out)", t0, "", 0, NULL);
        return;
    }
    if (g_proxy_cut && !escaped) {
        att_line(id, OC_ERROR, 0,
                 "more TCP listeners and proxies in view than are tried (32): no proof that none is"
                 " a way out", t0, "", 0, NULL);
        return;
    }
    group_report(G_PROXY, id, t0,
                 g_in_host_netns ? "may stand in the host's network namespace, whose listeners are the"
                                   " host's services (not tried), and no proxy named in its environment"
                                 : "no TCP listener in the sandbox's network namespace and no proxy"
                                   " named in its environment");
}
