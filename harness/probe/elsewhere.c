/* The egress sweep's lines at the canary's stand-ins elsewhere (`elsewhere4-tcp` and
 * the rest): one line for each family and transport, whatever the count of addresses. */
#include "probe.h"

/* The canary's stand-ins elsewhere: an address of each range the run was given
 * (private, shared, link-local, benchmarking; a global one where the matrix asks:
 * `--elsewhere4`/`--elsewhere6`, comma lists, tried at the high port and at the web's
 * ports, 443 and 80), and
 * the host's own gateways and resolvers where it asks (`--elsewhere4-high`, `-6-high`:
 * at the high port alone, since their real services keep their ports), where the
 * netns canary answers. A sandbox that refuses harness's own ranges and lets the rest
 * out (the internet, the fleet's own networks; the web's ports alone) is seen. One line
 * for each family and transport, whatever the count. */
/* Each line's group and id, by [web][family][udp]: the high port's, and the web's. */
static const int line_group[2][2][2] = {
    { { G_ELSE4_TCP, G_ELSE4_UDP }, { G_ELSE6_TCP, G_ELSE6_UDP } },
    { { G_WEB4_TCP, G_WEB4_UDP }, { G_WEB6_TCP, G_WEB6_UDP } },
};
static const int line_id[2][2][2] = {
    { { SW_ELSE4_TCP, SW_ELSE4_UDP }, { SW_ELSE6_TCP, SW_ELSE6_UDP } },
    { { SW_WEB4_TCP, SW_WEB4_UDP }, { SW_WEB6_TCP, SW_WEB6_UDP } },
};

static void stand_ins(int f, const char *list, int port, int web)
{
    char copy[1024];
    snprintf(copy, sizeof copy, "%s", list ? list : "");
    for (char *save = NULL, *ip = strtok_r(copy, ",", &save); ip; ip = strtok_r(NULL, ",", &save))
        for (int u = 0; u < 2; u++) {
            struct att *a = sweep_add(sweep_id[line_id[web][f][u]], ip, port, u ? SOCK_DGRAM : SOCK_STREAM, X_LINE);
            if (a)
                a->group = line_group[web][f][u];
        }
}

void sweep_elsewhere(int f, int high)
{
    const char *ranges = f ? o.elsewhere6 : o.elsewhere4, *own = f ? o.own6 : o.own4;
    stand_ins(f, ranges, high, 0);
    stand_ins(f, own, high, 0);
    stand_ins(f, ranges, 443, 1);
    stand_ins(f, ranges, 80, 1);
}

void elsewhere_report(double t0)
{
    const char *ranges[2] = { o.elsewhere4, o.elsewhere6 }, *own[2] = { o.own4, o.own6 };
    const char *fams[2] = { o.canary4, o.canary6 };
    for (int f = 0; f < 2; f++)
        for (int web = 0; web < 2; web++)
            for (int u = 0; u < 2; u++) {
                int any = (ranges[f] && *ranges[f]) || (!web && own[f] && *own[f]);
                if (any && fams[f] && *fams[f])
                    group_report(line_group[web][f][u], sweep_id[line_id[web][f][u]], t0,
                                 "no stand-in address given");
            }
}

/* Whether `host` is one of the canary's stand-ins (never taken for a relay). */
int elsewhere_has(const char *host)
{
    size_t n = strlen(host);
    const char *lists[4] = { o.elsewhere4, o.elsewhere6, o.own4, o.own6 };
    for (int k = 0; k < 4; k++)
        for (const char *l = lists[k], *at = l; l && n && (at = strstr(at, host)); at += n)
            if ((at == l || at[-1] == ',') && (at[n] == ',' || at[n] == '\0'))
                return 1;
    return 0;
}

/* Every attempt of a stand-in line from one source port (SO_REUSEADDR: the four-tuples
 * differ): the line reports one port, and the canary's log of any of its packets (a SYN
 * whose handshake a host's strict reverse-path filter cut, say) is matched to it, not
 * left unexplained, which would make every cell on the host inconclusive. */
int elsewhere_bind(struct att *a)
{
    static int port[8];
    if (a->group < G_ELSE4_TCP || a->group > G_WEB6_UDP)
        return 0;
    int *shared = &port[a->group - G_ELSE4_TCP], one = 1;
    Addr me;
    memset(&me, 0, sizeof me);
    me.ss_family = (sa_family_t)a->family;
    socklen_t len = a->family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
    if (a->family == AF_INET6)
        ((struct sockaddr_in6 *)(void *)&me)->sin6_port = htons((uint16_t)*shared);
    else
        ((struct sockaddr_in *)(void *)&me)->sin_port = htons((uint16_t)*shared);
    int r = setsockopt(a->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (r == 0 && (r = bind(a->fd, (struct sockaddr *)&me, len)) != 0 &&
        (errno == EPERM || errno == EACCES || errno == ENOSYS)) {
        /* A filter refusing bind(2) ("no servers"): the other entries' bind, and where
         * each refuses it too, none at all: the attempt goes from an ephemeral port of
         * its own (att_src_port), as the workload's would. */
        if ((r = bind_other(a, &me)) != 0)
            return 0;
    }
    if (r != 0) {
        att_end(a, OC_ERROR, errno, "bind to the line's source port %d for %s", *shared, a->dsts);
        return -1;
    }
    if (!*shared && getsockname(a->fd, (struct sockaddr *)&me, &len) == 0)
        *shared = ntohs(a->family == AF_INET6 ? ((struct sockaddr_in6 *)(void *)&me)->sin6_port
                                              : ((struct sockaddr_in *)(void *)&me)->sin_port);
    a->src_port = *shared; /* reported even where the attempt ends at once (refused) */
    return 0;
}
