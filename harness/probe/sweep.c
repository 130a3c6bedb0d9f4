/* What the egress sweep tries (its ids and ports are sweep.def's): the canary's
 * ports, TCP and UDP, and ICMP echo; the sandbox's own resolvers (ownresolv.c), every unix socket
 * it can reach, the other IP protocols, send calls, a privileged source port,
 * io_uring, the host's own addresses and the canary's abstract unix names (the
 * sockets held at the start: heldsocks.c); and the line for a group of attempts.
 * The exchange itself is attempt.c's. */

#include "probe.h"

const char *const sweep_id[SW_COUNT] = {
#define SWEEP_TCP_PORTS(...)
#define SWEEP_UDP_PORTS(...)
#define SWEEP(name, id) [SW_##name] = id,
#include "sweep.def"
#undef SWEEP
#undef SWEEP_UDP_PORTS
#undef SWEEP_TCP_PORTS
};

#define SWEEP_TCP_PORTS(...) static const int sweep_tcp_ports[] = { __VA_ARGS__ };
#define SWEEP_UDP_PORTS(...) static const int sweep_udp_ports[] = { __VA_ARGS__ };
#define SWEEP(name, id)
#include "sweep.def"
#undef SWEEP
#undef SWEEP_UDP_PORTS
#undef SWEEP_TCP_PORTS

/* TCP and UDP to each of the canary's listed ports (0: the run's high port; 53
 * speaks DNS), and ICMP echo, over family f (0: IPv4, 1: IPv6) to ip. */
int sweep_port_list(int type, int high, int *ports, int max)
{
    const int *list = type == SOCK_DGRAM ? sweep_udp_ports : sweep_tcp_ports;
    int n = type == SOCK_DGRAM ? (int)(sizeof sweep_udp_ports / sizeof sweep_udp_ports[0])
                               : (int)(sizeof sweep_tcp_ports / sizeof sweep_tcp_ports[0]);
    for (int i = 0; i < n && i < max; i++)
        ports[i] = list[i] ? list[i] : high;
    return n < max ? n : max;
}

void sweep_ports(int f, const char *ip, int high)
{
    char id[48];
    for (size_t i = 0; i < sizeof sweep_tcp_ports / sizeof sweep_tcp_ports[0]; i++) {
        int port = sweep_tcp_ports[i] ? sweep_tcp_ports[i] : high;
        snprintf(id, sizeof id, "tcp%d-%s", f ? 6 : 4, sweep_tcp_ports[i] ? "" : "high");
        if (sweep_tcp_ports[i])
            snprintf(id, sizeof id, "tcp%d-%d", f ? 6 : 4, port);
        sweep_add(id, ip, port, SOCK_STREAM, port == 53 ? X_DNS : X_LINE);
    }
    for (size_t i = 0; i < sizeof sweep_udp_ports / sizeof sweep_udp_ports[0]; i++) {
        int port = sweep_udp_ports[i] ? sweep_udp_ports[i] : high;
        snprintf(id, sizeof id, "udp%d-high", f ? 6 : 4);
        if (sweep_udp_ports[i])
            snprintf(id, sizeof id, "udp%d-%d", f ? 6 : 4, port);
        sweep_add(id, ip, port, SOCK_DGRAM, port == 53 ? X_DNS : X_LINE);
    }
    sweep_add(sweep_id[f ? SW_ICMP6 : SW_ICMP4], ip, 0, 0, X_ICMP);
}

static int g_unix_cut; /* the walk stopped, or sockets were left untried: no proof */
static char g_unix_cut_why[160];
static int g_unix_whole; /* a view of the sandbox's own, walked whole (unix_walk) */
static int g_unix_nosock; /* no unix stream socket made by any way (unix_stream) */
static int in_host_mntns(void);

static void unix_cap_cut(const char *fmt, const char *what)
{
    if (!g_unix_whole || g_unix_nosock) /* the host's view (its list names its listeners), or
                                         * no unix socket can be made: nothing is left out */
        return;
    if (!g_unix_cut)
        snprintf(g_unix_cut_why, sizeof g_unix_cut_why, fmt, what);
    g_unix_cut = 1;
}

/* A socket of the view left unfound or unreachable: unix-host's too (hostunix.c). */
static void unix_cut(const char *fmt, const char *what)
{
    unix_cap_cut(fmt, what);
    if (g_unix_cut)
        unix_seen_cut(g_unix_cut_why);
}

/* A path too long for sun_path (108 bytes), as one that fits: its folder held by an
 * O_PATH descriptor and named through /proc/self/fd (a workload reaches it the same
 * way, or by chdir and the bare name). 0 where it cannot be. */
static int unix_short(const char *path, char *out, size_t n)
{
    const char *slash = strrchr(path, '/');
    char dir[4096];
    if (!slash || slash == path || (size_t)(slash - path) >= sizeof dir)
        return 0;
    snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    if (snprintf(out, n, "/proc/self/fd/%d/%s", fd, slash + 1) >= (int)n - 1 || access("/proc/self/fd", F_OK)) {
        close(fd);
        return 0;
    }
    return 1; /* the descriptor stays open for the sweep's life */
}

/* A unix stream socket made as unix-proxy's attempts make theirs (attempt.c): every way
 * socket(2) may take (sock_make), and where it refused as a filter refuses, by the i386
 * entry or the ring (sock_entries: a filter of x86_64's socket(2) alone leaves them;
 * a kind refused there is not asked again). -1 where no way makes one. */
static int unix_stream(void)
{
    int fd = sock_make(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 && (errno == EPERM || errno == EACCES))
        fd = sock_entries(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    return fd;
}

static void unix_add(const char *path, int abstract)
{
    unix_seen(path, abstract, 0); /* unix-host tries every one (hostunix.c) */
    for (size_t i = 0; i < g_natt; i++)
        if (g_att[i].group == G_UNIX && !strcmp(g_att[i].dsts, path) && (g_att[i].un.sun_path[0] == 0) == abstract)
            return;
    size_t len = strlen(path);
    char shorter[sizeof ((struct sockaddr_un *)0)->sun_path];
    const char *at = path;
    if (len == 0)
        return;
    if (len >= sizeof shorter - 1) {
        if (abstract || !unix_short(path, shorter, sizeof shorter)) {
            unix_cut("a unix socket whose name is too long to connect to (%.100s)", path);
            return;
        }
        at = shorter, len = strlen(shorter);
    }
    if (!abstract) {
        /* One of the host's listeners that unix-host connects to, or a file nothing
         * listens on (a stale socket: refused), needs no proxy request: neither
         * counts against the sockets tried. */
        struct stat st;
        struct sockaddr_un un = { .sun_family = AF_UNIX };
        memcpy(un.sun_path, at, len);
        int fd = unix_stream();
        int dead = fd >= 0 && connect(fd, (struct sockaddr *)&un, sizeof un) != 0 && errno == ECONNREFUSED;
        if (fd >= 0)
            close(fd);
        else
            g_unix_nosock = 1;
        if (dead || (lstat(path, &st) == 0 && unix_host_tries(&st)))
            return;
    }
    static const int ways[RELAY_WAYS] = { X_HTTP, X_SOCKS, X_GET };
    for (int w = 0; w < RELAY_WAYS; w++) {
        int talk = ways[w];
        size_t units = 0;
        for (size_t i = 0; i < g_natt; i++)
            units += g_att[i].group == G_UNIX;
        if (units >= RELAY_WAYS * UNIX_MAX) {
            /* Where no unix socket can be made at all (by socket(2) every way, the i386
             * entry, the ring), every attempt ends the same way there: none is left out. */
            if (!g_unix_nosock)
                unix_cap_cut("more unix sockets in view than are tried (%s)", "48");
            return;
        }
        struct att *a = att_new(sweep_id[SW_UNIX_PROXY], G_UNIX);
        if (!a)
            return;
        a->family = AF_UNIX;
        a->type = SOCK_STREAM;
        a->talk = talk;
        a->un.sun_family = AF_UNIX;
        memcpy(a->un.sun_path + abstract, at, len);
        if (abstract) /* the name is exactly its bytes: no trailing zeros */
            a->unlen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len);
        snprintf(a->dsts, sizeof a->dsts, "%s%s", abstract ? "@" : "", path);
        if (abstract) /* dsts shows '@'; compare on the bare name above */
            snprintf(a->dsts, sizeof a->dsts, "%s", path);
        if (talk == X_SOCKS) /* after the HTTP CONNECT (attempt.c, att_wait_over) */
            a->after = (size_t)(a - g_att), a->state = S_WAIT;
    }
}

/* Every socket file in the sandbox's view, breadth first below each place it starts
 * from, never through a symlink, /proc or /sys: the places sockets live are read first,
 * then every mount point the sandbox has (where a bind of a host folder lands, however
 * deep), then the rest of "/" level by level. In a mount namespace of the sandbox's
 * own the walk is whole (UNIX_DEPTH levels, UNIX_ENTRIES entries, UNIX_WALK_MS: a
 * proxy's socket ten folders down, or below a bound /usr, is found), and one cut short
 * makes the line an error where nothing escaped; where the probe stands in the host's
 * (the control, a co-located sandbox: the host's list names every listener of the
 * host's at its path) it reads UNIX_HOST_ENTRIES to a depth of 8 and goes on. */
#define UNIX_DEPTH 64
#define UNIX_ENTRIES 3000000
#define UNIX_WALK_MS 6000.0
#define UNIX_HOST_ENTRIES 20000
#define UNIX_SEEDS 256
static const char *const UNIX_FIRST[] = { "/run", "/var/run", "/tmp", "/var/tmp", "/dev/shm" };
static char *g_seeds[UNIX_SEEDS];
static size_t g_nseeds;

static int unix_seed(const char *p)
{
    for (size_t i = 0; i < g_nseeds; i++)
        if (g_seeds[i] && !strcmp(p, g_seeds[i]))
            return 1;
    return 0;
}
static size_t g_unix_read; /* entries read, over every level */

static int under(const char *p, const char *root)
{
    size_t n = strlen(root);
    return !strncmp(p, root, n) && (p[n] == '/' || !p[n]);
}

/* Where the walk starts: UNIX_FIRST, then each mount point (not "/", /proc, /sys). */
static void unix_seeds(void)
{
    for (size_t i = 0; i < sizeof UNIX_FIRST / sizeof UNIX_FIRST[0]; i++)
        g_seeds[g_nseeds++] = strdup(UNIX_FIRST[i]);
    if (read_mounts() != 0)
        return;
    for (int i = 0; i < g_nmnt && g_nseeds < UNIX_SEEDS; i++) {
        const char *mp = g_mnt[i].mp;
        if (!strcmp(mp, "/") || under(mp, "/proc") || under(mp, "/sys") || unix_seed(mp))
            continue;
        g_seeds[g_nseeds++] = strdup(mp);
    }
}

/* Whether the probe stands in the host's mount namespace: by --host-ns's third inode,
 * as harness always tells it; without it (a probe run by hand, a bench), where it
 * stands in the kernel's first PID namespace (its inode is the kernel's constant), as
 * an unsandboxed process does. Otherwise (no /proc, a PID namespace of the sandbox's
 * own) it cannot be told, and the walk is whole: a bounded walk is no proof in a
 * sandbox's own view. */
#define PID_NS_INIT_INO 0xEFFFFFFCUL
static int in_host_mntns(void)
{
    struct stat self, pidns;
    unsigned long net, pid, mnt;
    if (stat("/proc/self/ns/mnt", &self) != 0)
        return 0;
    if (o.host_ns && sscanf(o.host_ns, "%lu%*[ ,]%lu%*[ ,]%lu", &net, &pid, &mnt) == 3 && mnt)
        return mnt == (unsigned long)self.st_ino;
    return stat("/proc/self/ns/pid", &pidns) == 0 && pidns.st_ino == PID_NS_INIT_INO;
}

static void unix_walk(void)
{
    struct item { char *path; int depth; };
    int whole = g_unix_whole;
    size_t entries = whole ? UNIX_ENTRIES : UNIX_HOST_ENTRIES;
    int depth = whole ? UNIX_DEPTH : 8, stop = 0;
    double end = now_ms() + UNIX_WALK_MS;
    if (end > check_end() - 2000.0) /* time left for the attempts: the sweep's other lines */
        end = check_end() - 2000.0;
    unix_seeds();
    size_t cap = g_nseeds + 256, head = 0, tail = 0;
    struct item *q = malloc(cap * sizeof *q);
    if (!q) {
        unix_cut("%s", "no memory for the walk of the sandbox's view");
        return;
    }
    for (size_t i = 0; i < g_nseeds; i++)
        q[tail++] = (struct item){ g_seeds[i] ? strdup(g_seeds[i]) : NULL, 0 };
    q[tail++] = (struct item){ strdup("/"), 0 };
    while (head < tail && !stop) {
        struct item it = q[head++];
        DIR *d = it.path ? opendir(it.path) : NULL;
        struct stat top;
        if (it.path && !d && errno == EACCES && access(it.path, X_OK) == 0)
            unix_cut("a folder it may pass through but not list (%.100s): a socket inside is reached"
                     " by its name, unseen", it.path);
        if (it.path && !d && lstat(it.path, &top) == 0 && S_ISSOCK(top.st_mode))
            unix_add(it.path, 0); /* a mount point that is a socket file bound in itself */
        for (struct dirent *e; d && (e = readdir(d));) {
            if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
                continue;
            if (++g_unix_read > entries || ((g_unix_read & 1023) == 0 && now_ms() > end)) {
                stop = 1;
                unix_cut("the walk of the sandbox's view stopped %s: sockets beyond it untried",
                         g_unix_read > entries ? "at 3,000,000 entries" : "when its time ran out");
                break;
            }
            char p[4096];
            struct stat st;
            if (snprintf(p, sizeof p, "%s/%s", strcmp(it.path, "/") ? it.path : "", e->d_name) >=
                (int)sizeof p) {
                unix_cut("a path in the sandbox's view too long to walk (%.100s)", it.path);
                continue;
            }
            unsigned char type = e->d_type;
            if (type == DT_UNKNOWN) {
                if (lstat(p, &st) != 0)
                    continue;
                type = S_ISSOCK(st.st_mode) ? DT_SOCK : S_ISDIR(st.st_mode) ? DT_DIR : DT_REG;
            }
            if (type == DT_SOCK) {
                unix_add(p, 0);
            } else if (type == DT_DIR && strcmp(p, "/proc") && strcmp(p, "/sys") && !unix_seed(p)) {
                if (it.depth + 1 >= depth) {
                    unix_cut("folders deeper than 64 levels (%.100s)", p);
                    continue;
                }
                if (tail == cap) {
                    struct item *more = realloc(q, (cap *= 2) * sizeof *q);
                    if (!more) {
                        unix_cut("%s", "no memory for the walk of the sandbox's view");
                        continue;
                    }
                    q = more;
                }
                q[tail++] = (struct item){ strdup(p), it.depth + 1 };
            }
        }
        if (d)
            closedir(d);
        free(it.path);
    }
    while (head < tail)
        free(q[head++].path);
    free(q);
}

/* unix-proxy's line: as group_report, but an error where the walk was cut short or
 * sockets were left untried and none of those tried escaped. */
void unix_report(const char *id, double t0)
{
    int escaped = 0;
    for (size_t i = 0; i < g_natt; i++)
        escaped |= g_att[i].group == G_UNIX && g_att[i].oc == OC_ESCAPED;
    if (g_unix_cut && !escaped) {
        char detail[300];
        snprintf(detail, sizeof detail, "%s: no proof that no unix socket in view is a way out",
                 g_unix_cut_why);
        att_line(id, OC_ERROR, 0, detail, t0, "", 0, NULL);
        return;
    }
    group_report(G_UNIX, id, t0, "no unix socket is visible in the sandbox");
}

void sweep_unix(void)
{
    g_unix_whole = !in_host_mntns();
    int probe_fd = unix_stream();
    if (probe_fd < 0) /* no unix socket can be made by any way: every attempt ends there */
        g_unix_nosock = 1;
    else
        close(probe_fd);
    /* Where it may stand in the host's network namespace, its abstract datagram sockets
     * are the host's: the canary's is unix-abstract-dgram's, and what reaches one
     * reaches it (no filter tells names apart). */
    int host_net = maybe_host_netns();
    FILE *f = proc_net_fopen("unix"); /* line by line: a busy namespace's is long */
    char l[512];
    while (f && fgets(l, sizeof l, f)) {
        char flags[16], path[256] = "";
        unsigned type, st;
        /* Num RefCount Protocol Flags Type St Inode Path */
        if (sscanf(l, "%*s %*s %*s %15s %x %x %*s %255s", flags, &type, &st, path) != 4)
            continue;
        int listening = strtoul(flags, NULL, 16) == 0x10000;
        /* A canary's listener, this run's (unix-abstract tries it) or another harness
         * run's on the same host: no proxy, and a line sent there would be that run's
         * unexplained arrival. */
        if (path[0] == '@' && !strncmp(path + 1, "harness-canary-", 15))
            continue;
        if (type == 1 && listening) /* stream: a relay too (unix-proxy) */
            unix_add(path[0] == '@' ? path + 1 : path, path[0] == '@');
        /* An abstract name of the other kinds, which no walk finds: a seqpacket
         * listener's, an unconnected datagram socket's (SS_UNCONNECTED) of a process
         * that shares this namespace (unix-host). A file's the walk finds. */
        else if (path[0] == '@' && ((type == 5 && listening) || (type == 2 && st == 1 && !host_net)))
            unix_seen(path + 1, 1, type == 5 ? 'q' : 'd');
    }
    if (f)
        fclose(f);
    unix_walk();
}

/* The line for a group (own resolver, unix sockets): escaped if any attempt
 * escaped; else what leaves most doubt; with what was tried. */
void group_report(int group, const char *id, double t0, const char *none)
{
    static const enum outcome rank[] = { OC_ESCAPED, OC_SUCCEEDED, OC_ERROR, OC_BLOCKED };
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
            if (a->oc != rank[r])
                continue;
            size_t cur = 4;
            for (size_t k = 0; pick && k < 4; k++)
                if (pick->oc == rank[k])
                    cur = k;
            if (r < cur)
                pick = a;
        }
    }
    if (!tried) { /* none made: blocked, unless one was left out for want of room */
        att_line(id, g_att_dropped ? OC_ERROR : OC_BLOCKED, 0, g_att_dropped ? "more attempts than the sweep"
                 " holds were left out, none of this line's made: no proof" : none, t0, "", 0, NULL);
        return;
    }
    char detail[700];
    snprintf(detail, sizeof detail, "%s (%zu attempt%s: %s)%s", pick ? pick->detail : "?", tried,
             tried == 1 ? "" : "s", list,
             g_att_dropped ? "; more attempts than the sweep holds were left out: no proof" : "");
    /* An attempt left out for want of room could have been this line's: no blocked then. */
    enum outcome oc = !pick ? OC_ERROR : pick->oc == OC_BLOCKED && g_att_dropped ? OC_ERROR : pick->oc;
    att_line(id, oc, pick ? pick->err : 0, detail, t0, pick ? pick->dsts : "",
             pick ? pick->src_port : 0, pick ? pick->qname : NULL);
}

struct att *sweep_add(const char *id, const char *ip, int port, int type, int talk)
{
    char spec[96];
    struct att *a = att_new(id, G_SELF);
    if (!a)
        return NULL;
    snprintf(spec, sizeof spec, strchr(ip, ':') ? "[%s]:%d" : "%s:%d", ip, port);
    snprintf(a->dsts, sizeof a->dsts, "%s", spec);
    if (parse_addr(spec, &a->dst) != 0) {
        att_end(a, OC_ERROR, 0, "bad canary address %s", spec);
        return a;
    }
    a->family = a->dst.ss_family;
    a->type = type;
    a->talk = talk;
    if (talk == X_DNS)
        snprintf(a->qname, sizeof a->qname, "%s.%s.%s", id, o.tag, o.denied_name);
    return a;
}

/* Beyond TCP, UDP and ICMP: UDP-Lite and a raw IP protocol (253, for
 * experiments) carry the marker where nothing answers; the capture sees them. */
void sweep_protocols(int f, const char *ip, int high)
{
    struct att *a = sweep_add(sweep_id[f ? SW_UDPLITE6 : SW_UDPLITE4], ip, high, SOCK_DGRAM, X_FIRE);
    if (a)
        a->proto = IPPROTO_UDPLITE, a->how = H_SENDTO;
    if ((a = sweep_add(sweep_id[f ? SW_RAWIP6 : SW_RAWIP4], ip, 0, SOCK_RAW, X_FIRE)))
        a->proto = 253, a->how = H_SENDTO;
}

/* The socket API's other ways to send (unconnected sendto, sendmsg, sendmmsg;
 * write, writev, pwritev2, sendfile and splice on a connected socket), a privileged
 * source port, TCP made without connect(2), io_uring, and the i386 entry (a
 * filter without an architecture check), each to the canary's high port over family
 * f (0: IPv4, 1: IPv6): a filter on one call or one port is not enough. */
void sweep_calls(int f, const char *ip, int high)
{
    static const struct { int id[2], how; } calls[] = {
        { { SW_SEND4_SENDTO, SW_SEND6_SENDTO }, H_SENDTO },
        { { SW_SEND4_SENDMSG, SW_SEND6_SENDMSG }, H_SENDMSG },
        { { SW_SEND4_SENDMMSG, SW_SEND6_SENDMMSG }, H_SENDMMSG },
        { { SW_SEND4_WRITE, SW_SEND6_WRITE }, H_WRITE },
        { { SW_SEND4_WRITEV, SW_SEND6_WRITEV }, H_WRITEV },
        { { SW_SEND4_PWRITEV2, SW_SEND6_PWRITEV2 }, H_PWRITEV2 },
        { { SW_SEND4_SENDFILE, SW_SEND6_SENDFILE }, H_SENDFILE },
        { { SW_SEND4_SPLICE, SW_SEND6_SPLICE }, H_SPLICE },
    };
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        struct att *a = sweep_add(sweep_id[calls[i].id[f]], ip, high, SOCK_DGRAM, X_LINE);
        if (a)
            a->how = calls[i].how;
    }
    struct att *a = sweep_add(sweep_id[f ? SW_UDP6_PRIVPORT : SW_UDP4_PRIVPORT], ip, high, SOCK_DGRAM, X_LINE);
    if (a)
        a->bind_port = 1;
    sweep_sports(f, ip, high);
    /* TCP without connect(2): Fast Open's first send connects (a filter or an LSM
     * hook on connect never sees it); TCP_FASTOPEN_CONNECT; and a Multipath TCP
     * socket, which talks TCP to any peer (Landlock's TCP rights do not cover it). */
    static const struct { int id[2], how; } fastopen[] = {
        { { SW_TFO4_SENDTO, SW_TFO6_SENDTO }, H_SENDTO },
        { { SW_TFO4_SENDMSG, SW_TFO6_SENDMSG }, H_SENDMSG },
        { { SW_TFO4_SENDMMSG, SW_TFO6_SENDMMSG }, H_SENDMMSG },
    };
    for (size_t i = 0; i < sizeof fastopen / sizeof fastopen[0]; i++) {
        a = sweep_add(sweep_id[fastopen[i].id[f]], ip, high, SOCK_STREAM, X_LINE);
        if (a)
            a->how = fastopen[i].how, a->tfo = T_SEND;
    }
    if ((a = sweep_add(sweep_id[f ? SW_TFO6_CONNECT : SW_TFO4_CONNECT], ip, high, SOCK_STREAM, X_LINE)))
        a->tfo = T_CONNECT;
    if ((a = sweep_add(sweep_id[f ? SW_MPTCP6 : SW_MPTCP4], ip, high, SOCK_STREAM, X_LINE)))
        a->proto = IPPROTO_MPTCP;
    if (!f) {
        /* IPv4 by an IPv6 socket (a v4-mapped address): a filter or rule on AF_INET
         * alone leaves it open, and on the wire it is IPv4, which IPv6's rules never see. */
        char mapped[80];
        snprintf(mapped, sizeof mapped, "::ffff:%.60s", ip);
        sweep_add(sweep_id[SW_TCP4_MAPPED], mapped, high, SOCK_STREAM, X_LINE);
        sweep_add(sweep_id[SW_UDP4_MAPPED], mapped, high, SOCK_DGRAM, X_LINE);
    }
    sweep_add(sweep_id[f ? SW_URING6 : SW_URING4], ip, high, SOCK_STREAM, X_URING);
    sweep_add(sweep_id[f ? SW_URING6_UDP : SW_URING4_UDP], ip, high, SOCK_DGRAM, X_URING);
    if ((a = sweep_add(sweep_id[f ? SW_URING6_MPTCP : SW_URING4_MPTCP], ip, high, SOCK_STREAM, X_URING)))
        a->proto = IPPROTO_MPTCP;
    /* The same through the i386 entry: each call by its own number and by socketcall. */
    sweep_add(sweep_id[f ? SW_I386_TCP6 : SW_I386_TCP4], ip, high, SOCK_STREAM, X_I386);
    sweep_add(sweep_id[f ? SW_I386_UDP6 : SW_I386_UDP4], ip, high, SOCK_DGRAM, X_I386);
    if ((a = sweep_add(sweep_id[f ? SW_I386_TFO6 : SW_I386_TFO4], ip, high, SOCK_STREAM, X_I386)))
        a->tfo = T_SEND;
}

/* The suffix of the canary's abstract name for a unix socket of `type`: its stream
 * listener's (none), its datagram socket's or its seqpacket listener's. */
const char *canary_unix_suffix(int type)
{
    return type == SOCK_DGRAM ? CANARY_DGRAM_SUFFIX : type == SOCK_SEQPACKET ? CANARY_SEQPACKET_SUFFIX : "";
}

/* Aim attempt a at the canary's abstract name for its socket type; 0, or -1 with
 * the attempt ended. */
int at_canary_unix(struct att *a)
{
    char name[sizeof a->un.sun_path];
    size_t len = (size_t)snprintf(name, sizeof name, "%s%s", o.canary_unix, canary_unix_suffix(a->type));
    if (!*o.canary_unix || len >= sizeof a->un.sun_path - 1) {
        att_end(a, OC_ERROR, 0, "bad --canary-unix %s", o.canary_unix);
        return -1;
    }
    a->un.sun_family = AF_UNIX;
    memcpy(a->un.sun_path + 1, name, len);
    a->unlen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len);
    return 0;
}

/* The canary's own listeners in the host's abstract unix namespace (stream and
 * seqpacket) and its datagram socket there: reachable from a sandbox that shares
 * the host's network namespace, whatever its IP rules (and a filter that lets only
 * one kind of unix socket through). */
void sweep_abstract(void)
{
    static const struct { int id, type; } kinds[] = {
        { SW_UNIX_ABSTRACT, SOCK_STREAM },
        { SW_UNIX_ABSTRACT_DGRAM, SOCK_DGRAM },
        { SW_UNIX_ABSTRACT_SEQPACKET, SOCK_SEQPACKET },
    };
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        struct att *a = att_new(sweep_id[kinds[k].id], G_SELF);
        if (!a)
            return;
        int dgram = kinds[k].type == SOCK_DGRAM;
        snprintf(a->dsts, sizeof a->dsts, "@%.100s%s", o.canary_unix, canary_unix_suffix(kinds[k].type));
        a->family = AF_UNIX;
        a->type = kinds[k].type;
        a->talk = dgram ? X_FIRE : X_LINE;
        a->how = dgram ? H_SENDTO : H_SEND;
        at_canary_unix(a);
    }
}

/* The host's own addresses (the host's end of the canary's veth): a sandbox whose
 * packets reach the host's stack reaches its services, even where the host
 * forwards nothing to the canary. */
void sweep_host(int f, const char *ip, int high)
{
    sweep_add(sweep_id[f ? SW_HOST6_TCP : SW_HOST4_TCP], ip, high, SOCK_STREAM, X_LINE);
    sweep_add(sweep_id[f ? SW_HOST6_UDP : SW_HOST4_UDP], ip, high, SOCK_DGRAM, X_LINE);
}

/* The cloud metadata address of family f (169.254.169.254, fd00:ec2::254), where
 * the netns canary answers too on the high port: a filter that keeps the private
 * ranges and forgets link-local leaves a cloud's credentials in reach. */
void sweep_meta(int f, const char *ip, int high)
{
    sweep_add(sweep_id[f ? SW_META6_TCP : SW_META4_TCP], ip, high, SOCK_STREAM, X_LINE);
    sweep_add(sweep_id[f ? SW_META6_UDP : SW_META4_UDP], ip, high, SOCK_DGRAM, X_LINE);
}
