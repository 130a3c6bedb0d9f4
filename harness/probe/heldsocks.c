/* The egress sweep's held-fds line: every socket the workload held when the probe
 * started (held.c's list, at any number), named with its kind and network namespace
 * and tried as its kind allows, towards the canary (attempt.c runs them); and every
 * handle to another network namespace it holds or can open (a namespace descriptor,
 * a pidfd, another process's /proc/<pid>/ns/net), entered by setns for a socket of
 * that namespace's, aimed at the canary like a held one. */

#include "probe.h"

#include <linux/if_tun.h>
#include <net/if.h>
#include <sys/resource.h>

/* At most this many held sockets are tried (the sweep's other lines keep their slots);
 * more make the line an error. */
#define HELD_ATT_MAX 160
static int g_held_atts, g_held_over;

static struct att *held_att(void)
{
    if (g_held_atts >= HELD_ATT_MAX) {
        g_held_over++;
        return NULL;
    }
    struct att *a = att_new(sweep_id[SW_HELD_FDS], G_HELD);
    g_held_atts += a != NULL;
    return a;
}

/* A held raw IP socket gets the HARNESS line aimed at the canary (the kernel writes
 * the IP header, with the socket's own protocol); a held packet socket a UDP packet
 * the probe builds, to the link's broadcast address on the interface it is bound to
 * (index 0: any). Nothing answers either: the canary's capture decides. */
static void held_raw(int fd, int domain, int type, const char *ip, int high)
{
    if (!ip || !*ip || (domain == AF_PACKET && strchr(ip, ':')))
        return;
    struct att *a = held_att();
    if (!a)
        return;
    char spec[80];
    snprintf(spec, sizeof spec, strchr(ip, ':') ? "[%.60s]:%d" : "%.60s:%d", ip, high);
    a->fd = fd;
    a->family = domain;
    a->type = type;
    a->held = 1;
    a->how = H_SENDTO;
    a->talk = domain == AF_PACKET ? X_FRAME : X_FIRE;
    if (parse_addr(spec, &a->dst) != 0) {
        att_end(a, OC_ERROR, 0, "bad canary address %s", spec);
        return;
    }
    if (domain == AF_PACKET) {
        struct sockaddr_ll me;
        socklen_t ml = sizeof me;
        memset(&me, 0, sizeof me);
        getsockname(fd, (struct sockaddr *)&me, &ml);
        a->ll.sll_family = AF_PACKET;
        a->ll.sll_protocol = htons(0x0800); /* ETH_P_IP */
        a->ll.sll_ifindex = me.sll_ifindex;
        a->ll.sll_halen = 6;
        memset(a->ll.sll_addr, 0xff, 6);
        snprintf(a->dsts, sizeof a->dsts, "fd %d (a packet socket on interface %d, to %.64s)", fd,
                 me.sll_ifindex, spec);
    } else {
        snprintf(a->dsts, sizeof a->dsts, "fd %d (a raw socket, to %.64s)", fd, spec);
    }
}

/* The network namespace a socket belongs to (SO_NETNS_COOKIE), 0 if unknown. */
static uint64_t netns_cookie(int fd)
{
    uint64_t cookie = 0;
    socklen_t l = sizeof cookie;
    return getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &l) == 0 ? cookie : 0;
}

static void held_one(int fd, uint64_t own, const char *ip4, const char *ip6, int high);
static void held_ns_fd(int fd, int in_host, uint64_t own, const char *ip4, const char *ip6, int high);
static void held_netns(int in_host, uint64_t own, const char *ip4, const char *ip6, int high);
static void held_ring_files(int fd, int in_host, uint64_t own, const char *ip4, const char *ip6,
                            int high);
static int ns_new(const struct stat *st);
static int in_host_netns(const struct stat *self);

/* held-fds's line: as group_report, but a held unix connection whose listener is
 * outside the sandbox (a container runtime's API, a bus, an agent: none relays the
 * HARNESS line) is escaped where its line was not, as unix-host judges a connect to
 * that listener. */
void held_report(double t0)
{
    /* An attempt only sent (the canary's log judges the line, whatever it says) is no
     * proof of none where another was never made: that error stands for the line. */
    int error = 0, escaped = 0;
    for (size_t i = 0; i < g_natt; i++)
        if (g_att[i].group == G_HELD)
            error |= g_att[i].oc == OC_ERROR, escaped |= g_att[i].oc == OC_ESCAPED;
    for (size_t i = 0; i < g_natt && error && !escaped; i++)
        if (g_att[i].group == G_HELD && g_att[i].oc == OC_SUCCEEDED)
            g_att[i].oc = OC_BLOCKED;
    for (size_t i = 0; i < g_natt; i++) {
        struct att *a = &g_att[i];
        if (a->group == G_HELD && a->peer_out[0] && a->oc != OC_ESCAPED) {
            a->oc = OC_ESCAPED;
            a->err = 0;
            snprintf(a->detail, sizeof a->detail, "holds a connection to a unix listener outside the"
                     " sandbox (as unix-host judges a connect to it): %.200s", a->peer_out);
        }
    }
    group_report(G_HELD, sweep_id[SW_HELD_FDS], t0, "no socket held at the start (descriptors 3 and up),"
                 " no other network namespace to enter");
}

/* A held TUN or TAP device (TUNGETIFF answers): what is written to it arrives at the
 * network stack of the namespace its interface lives in, as if from outside. The
 * HARNESS line in a UDP packet (a frame to the broadcast address, for a TAP) to the
 * host's own address on the run's high port, where the canary listens (netns mode: a
 * local delivery there, nothing forwarded), from the canary's address (a source its
 * stack takes). Nothing answers: the canary's log decides. */
static void held_tun(int fd, int high)
{
    struct stat st;
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    if (fstat(fd, &st) != 0 || !S_ISCHR(st.st_mode) || ioctl(fd, TUNGETIFF, &ifr) != 0)
        return;
    struct att *a = o.host4 && *o.host4 && o.canary4 && *o.canary4 ? held_att() : NULL;
    if (!a)
        return;
    char spec[80], from[80];
    snprintf(spec, sizeof spec, "%.60s:%d", o.host4, high);
    snprintf(from, sizeof from, "%.60s:0", o.canary4);
    a->fd = fd;
    a->family = AF_INET;
    a->type = (ifr.ifr_flags & IFF_TAP) ? SOCK_RAW : SOCK_DGRAM; /* SOCK_RAW: an Ethernet frame */
    a->pi = !(ifr.ifr_flags & IFF_NO_PI);
    a->held = 2; /* written to as it is: no connect */
    a->how = H_WRITE;
    a->talk = X_FRAME;
    a->has_alt = parse_addr(from, &a->alt) == 0;
    snprintf(a->dsts, sizeof a->dsts, "fd %d (a %s device, %.16s, to %.64s)", fd,
             (ifr.ifr_flags & IFF_TAP) ? "TAP" : "TUN", ifr.ifr_name, spec);
    if (parse_addr(spec, &a->dst) != 0)
        att_end(a, OC_ERROR, 0, "bad host address %s", spec);
}

/* One descriptor held at start: a socket (held_one), a TUN or TAP device (held_tun),
 * or a handle to network namespaces (held_ns_fd). 1 and 2 carry the probe's own
 * output. */
static void held_fd(int fd, int in_host, uint64_t own, const char *ip4, const char *ip6, int high)
{
    if (fd == 1 || fd == 2)
        return;
    held_one(fd, own, ip4, ip6, high);
    if (fd > 2) { /* stdin: only a network socket, never the launcher's channel */
        held_tun(fd, high);
        held_ns_fd(fd, in_host, own, ip4, ip6, high);
        held_ring_files(fd, in_host, own, ip4, ip6, high);
    }
}

/* A held io_uring ring's registered files are descriptors it holds too: each is
 * installed as one of the probe's (IORING_OP_FIXED_FD_INSTALL) and tried like one held
 * at start (kept open: its attempt uses it), named by its ring and slot. A ring
 * harness cannot drive, a file it cannot install, or more files than it installs make
 * the line an error, never blocked. */
static void held_ring_files(int fd, int in_host, uint64_t own, const char *ip4, const char *ip6,
                            int high)
{
    static int depth;
    char link[128];
    if (fd_kind(fd, link, sizeof link) != FK_io_uring || depth > 1)
        return;
    int files = uring_held_files(fd), e = 0;
    const char *why = "";
    if (files < 0 || files > 64)
        why = files < 0 ? "its fdinfo shows no registered files" : "more than the 64 it installs";
    depth++;
    for (int slot = 0; slot < files && slot < 64 && !*why; slot++) {
        int s = uring_held_install(fd, (unsigned)slot, &why);
        if (s == -EBADF) /* an empty slot */
            continue;
        if (s == RING_REFUSED) /* the kernel refuses the holder any request on it */
            break;
        if (s < 0) { /* EINVAL before 6.8, EACCES under the ring's restrictions */
            if (s != -EBADE)
                e = -s, why = "a registered file could not be installed";
            break;
        }
        size_t before = g_natt;
        held_fd(s, in_host, own, ip4, ip6, high);
        for (size_t k = before; k < g_natt; k++) { /* say where the socket came from */
            char was[sizeof g_att[k].dsts];
            snprintf(was, sizeof was, "%s", g_att[k].dsts);
            snprintf(g_att[k].dsts, sizeof g_att[k].dsts, "fixed file %d of the io_uring ring at fd %d, %.100s",
                     slot, fd, was);
        }
    }
    depth--;
    if (*why) { /* not tried: never certified blocked */
        struct att *a = att_new(sweep_id[SW_HELD_FDS], G_HELD);
        if (a) {
            snprintf(a->dsts, sizeof a->dsts, "the files registered on the io_uring ring at fd %d", fd);
            att_end(a, OC_ERROR, e, "the files registered on the ring at fd %d: %s", fd, why);
        }
    }
}

/* Every socket the probe held when it started (held.c's list, at any number; 0 to 2
 * carry its own output): connected ones get the HARNESS line, unconnected IP ones are
 * aimed at the canary, and an unconnected unix socket (stream, seqpacket, datagram) at
 * the canary's abstract name for its kind, reached through it where the socket is of the host's network
 * namespace (abstract names are per namespace: the socket's, not the caller's). A
 * launcher's socket into the host's network is egress. Each is named with its kind
 * and whether it belongs to the sandbox's own network namespace. */
void sweep_held(const char *ip4, const char *ip6, int high)
{
    const int *fds;
    int more, n = held_list(&fds, &more);
    int probe = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    uint64_t own = probe >= 0 ? netns_cookie(probe) : 0;
    if (probe >= 0)
        close(probe);
    struct stat self = { 0 };
    if (stat("/proc/self/ns/net", &self) == 0)
        ns_new(&self);
    int in_host = self.st_ino && in_host_netns(&self);
    for (int i = 0; i < n; i++)
        held_fd(fds[i], in_host, own, ip4, ip6, high);
    struct rlimit lim;
    long top = getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY ? (long)lim.rlim_cur
                                                                                    : 1L << 20;
    for (long fd = 3; more && fd < top && fd < (1L << 20); fd++) { /* beyond the list: every number */
        int listed = 0;
        for (int i = 0; i < n && !listed; i++)
            listed = fds[i] == fd;
        if (!listed && fcntl((int)fd, F_GETFD) != -1)
            held_fd((int)fd, in_host, own, ip4, ip6, high);
    }
    held_netns(in_host, own, ip4, ip6, high);
    if (g_held_over) { /* not certified: some were never tried */
        struct att *a = att_new(sweep_id[SW_HELD_FDS], G_HELD);
        if (a) {
            snprintf(a->dsts, sizeof a->dsts, "%d more held sockets", g_held_over);
            att_end(a, OC_ERROR, 0, "%d more sockets (held at the start, or other processes' taken by"
                    " pidfd_getfd) than the %d tried: no proof for those", g_held_over, HELD_ATT_MAX);
        }
    }
}

static void held_one(int fd, uint64_t own, const char *ip4, const char *ip6, int high)
{
    struct stat st;
    int listening = 0, domain = 0, type = 0;
    socklen_t l = sizeof listening;
    if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode))
        return;
    getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &l);
    l = sizeof domain;
    getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &l);
    l = sizeof type;
    getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l);
    if (listening || (type != SOCK_STREAM && type != SOCK_DGRAM && type != SOCK_RAW && type != SOCK_SEQPACKET))
        return;
    if (fd == 0 && domain != AF_INET && domain != AF_INET6 && domain != AF_PACKET)
        return; /* stdin from a unix socket or pipe: the launcher's own channel */
    if (domain == AF_PACKET || type == SOCK_RAW) {
        held_raw(fd, domain, type, domain == AF_INET6 ? ip6 : ip4, high);
        return;
    }
    uint64_t cookie = netns_cookie(fd);
    const char *ns = !cookie || !own ? "" : cookie == own ? ", of the sandbox's network namespace"
                                                          : ", of another network namespace";
    Addr peer;
    socklen_t pl = sizeof peer;
    int connected = getpeername(fd, (struct sockaddr *)&peer, &pl) == 0;
    const char *ip = domain == AF_INET ? ip4 : domain == AF_INET6 ? ip6 : NULL;
    int unix_canary = domain == AF_UNIX && type != SOCK_RAW && o.canary_unix && *o.canary_unix;
    /* An unconnected IPv6 socket reaches IPv4 too (::ffff:a.b.c.d): the canary's IPv4
     * address where it has no IPv6, else where IPv6 has no route (held_alt). */
    char mapped[80] = "";
    if (domain == AF_INET6 && ip4 && *ip4)
        snprintf(mapped, sizeof mapped, "::ffff:%.60s", ip4);
    if (domain == AF_INET6 && (!ip || !*ip) && *mapped)
        ip = mapped;
    if (!connected && (domain == AF_UNIX ? !unix_canary : type == SOCK_SEQPACKET || !ip || !*ip))
        return; /* no canary name to aim at, SCTP, or a family the canary lacks */
    struct att *a = held_att();
    if (!a)
        return;
    a->fd = fd;
    a->family = domain;
    a->type = type;
    a->talk = X_LINE;
    a->held = connected ? 2 : 1;
    if (connected) {
        char where[80] = "unix";
        if (domain == AF_INET || domain == AF_INET6)
            fmt_addr(&peer, where, sizeof where);
        snprintf(a->dsts, sizeof a->dsts, "fd %d (connected to %s%s)", fd, where, ns);
        if (domain == AF_UNIX && type != SOCK_DGRAM) /* a daemon outside relays no line */
            held_peer_outside(fd, a->peer_out, sizeof a->peer_out);
        return;
    }
    if (domain == AF_UNIX) { /* to the canary's abstract name for its kind */
        int dgram = type == SOCK_DGRAM;
        snprintf(a->dsts, sizeof a->dsts, "fd %d (unconnected unix %s%s, to @%.60s%s)", fd,
                 dgram ? "datagram" : type == SOCK_SEQPACKET ? "seqpacket" : "stream", ns, o.canary_unix,
                 canary_unix_suffix(type));
        if (dgram)
            a->how = H_SENDTO, a->talk = X_FIRE;
        at_canary_unix(a);
        return;
    }
    char spec[96], alt[96];
    snprintf(spec, sizeof spec, domain == AF_INET6 ? "[%.70s]:%d" : "%.70s:%d", ip, high);
    snprintf(a->dsts, sizeof a->dsts, "fd %d (unconnected%s, to %s)", fd, ns, spec);
    if (parse_addr(spec, &a->dst) != 0)
        att_end(a, OC_ERROR, 0, "bad canary address %s", spec);
    if (type == SOCK_DGRAM)
        a->how = H_SENDTO;
    if (domain != AF_INET6 || !*mapped || ip == mapped)
        return;
    snprintf(alt, sizeof alt, "[%s]:%d", mapped, high);
    if (type == SOCK_STREAM) { /* one connect: the mapped address if IPv6 has no route */
        a->has_alt = parse_addr(alt, &a->alt) == 0;
        return;
    }
    struct att *b = held_att(); /* a datagram goes to both, from the same socket */
    if (!b)
        return;
    int copy = fcntl(fd, F_DUPFD_CLOEXEC, 3), e = errno;
    *b = *a;
    b->fd = copy;
    snprintf(b->dsts, sizeof b->dsts, "fd %d (unconnected%s, to %s)", fd, ns, alt);
    if (copy < 0) /* not tried: no verdict of enforced on it */
        att_end(b, OC_ERROR, e, "no descriptor to send to %s from", b->dsts);
    else if (parse_addr(alt, &b->dst) != 0)
        att_end(b, OC_ERROR, 0, "bad canary address %s", alt);
}

/* For fds_in_ns: one socket of kind {domain, type, count} per port, `count` of them,
 * each made every way (sock_make), and where refused as a filter refuses, by the i386
 * entry or the ring (sock_entries): the sweep's own lines of those entries aim from the
 * sandbox's namespace, not this one. The way taken goes back with them (ns_way). */
static int ip_sockets(void *kind, int *fds, int max)
{
    const int *k = kind;
    int n = 0;
    for (; n < k[2] && n < max; n++) {
        if ((fds[n] = sock_make(k[0], k[1] | SOCK_CLOEXEC, 0)) < 0 && (errno == EPERM || errno == EACCES))
            fds[n] = sock_entries(k[0], k[1] | SOCK_CLOEXEC, 0); /* the i386 entry's, the ring's */
        if (fds[n] < 0) {
            int e = errno;
            while (n > 0)
                close(fds[--n]);
            errno = e;
            return -1;
        }
        ns_way_note(sock_way());
    }
    return n;
}

#define NETNS_MAX 16 /* distinct namespaces entered; more are counted as not tried */
static struct stat g_ns_seen[NETNS_MAX];
static int g_ns_n, g_ns_over;

/* Whether `st` is a namespace not seen before (nor the sandbox's own, at 0). */
static int ns_new(const struct stat *st)
{
    for (int i = 0; i < g_ns_n; i++)
        if (g_ns_seen[i].st_dev == st->st_dev && g_ns_seen[i].st_ino == st->st_ino)
            return 0;
    if (g_ns_n < NETNS_MAX)
        g_ns_seen[g_ns_n++] = *st;
    else
        g_ns_over++;
    return g_ns_n <= NETNS_MAX && !g_ns_over;
}

/* Enter the namespace behind `h` (named `via`) for sockets aimed at the canary on every
 * port the sweep tries (TCP and UDP, each family the canary has: a namespace that lets
 * out one port alone is a way out by that port), each an attempt of the held-fds line,
 * one child per kind; a socket of the sandbox's own namespace (by its cookie) is no
 * route of its own and is left out. */
static void netns_try(int h, const char *via, uint64_t own, const char *ip4, const char *ip6, int high)
{
    const char *ips[2] = { ip4, ip6 };
    for (int k = 0; k < 4; k++) { /* TCP and UDP, IPv4 then IPv6 */
        int f = k / 2, type = k % 2 ? SOCK_DGRAM : SOCK_STREAM, ports[16], why;
        if (!ips[f] || !*ips[f])
            continue;
        int count = sweep_port_list(type, high, ports, 16), fds[16];
        int kind[3] = { f ? AF_INET6 : AF_INET, type, count };
        int n = fds_in_ns(h, CLONE_NEWNET, ip_sockets, kind, fds, count, &why), e = errno;
        if (n > 0 && own && netns_cookie(fds[0]) == own) {
            while (n > 0)
                close(fds[--n]);
            return; /* the sandbox's own namespace: no route of its own */
        }
        for (int i = 0; i < (n > 0 ? n : 1); i++) {
            struct att *a = held_att();
            if (!a) {
                while (n > i)
                    close(fds[--n]);
                return;
            }
            char spec[96];
            snprintf(spec, sizeof spec, f ? "[%.70s]:%d" : "%.70s:%d", ips[f], ports[i]);
            snprintf(a->dsts, sizeof a->dsts, "a %s socket made by setns into %.90s, to %.64s%s",
                     type == SOCK_DGRAM ? "UDP" : "TCP", via, spec, n > 0 ? ns_way() : "");
            a->fd = n > 0 ? fds[i] : -1;
            a->family = kind[0];
            a->type = type;
            a->talk = ports[i] == 53 ? X_DNS : X_LINE;
            if (a->talk == X_DNS)
                snprintf(a->qname, sizeof a->qname, "%s-%d.%s.%s", sweep_id[SW_HELD_FDS], i, o.tag,
                         o.denied_name);
            a->held = 1;
            if (type == SOCK_DGRAM && a->talk == X_LINE)
                a->how = H_SENDTO;
            if (n < 0 && why == NS_LOST) /* no answer: never certified blocked */
                att_end(a, OC_ERROR, e, "setns into %s: nothing came back from its child", via);
            else if (n < 0)
                att_end(a, OC_BLOCKED, e, why == NS_OUTSIDE ? "setns into %s" : "a socket in %s", via);
            else if (parse_addr(spec, &a->dst) != 0)
                att_end(a, OC_ERROR, 0, "bad canary address %s", spec);
        }
        if (n < 0 && why != NS_REFUSED)
            return; /* not let in (or no answer): its other kinds would say the same */
    }
}

/* The network namespace at `rel` below `dirfd` (a /proc, or a /proc/<pid>
 * folder: "<pid>/ns/net" or "ns/net"), opened as the owner of `owner` below it (as
 * fs-routes does: the link is the owner's to follow), entered once per namespace. */
static void proc_ns_try(int dirfd, const char *owner, const char *rel, const char *via, uint64_t own,
                        const char *ip4, const char *ip6, int high)
{
    struct stat st, who;
    if (fstatat(dirfd, owner, &who, 0) != 0)
        return;
    int fsuid = setfsuid((uid_t)-1), fsgid = setfsgid((gid_t)-1);
    setfsgid(who.st_gid);
    setfsuid(who.st_uid);
    int h = fstatat(dirfd, rel, &st, 0) == 0 && ns_new(&st) ? openat(dirfd, rel, O_RDONLY | O_CLOEXEC) : -1;
    setfsuid((uid_t)fsuid);
    setfsgid((gid_t)fsgid);
    if (h >= 0) {
        netns_try(h, via, own, ip4, ip6, high);
        close(h);
    }
}

/* Every process's network namespace in the proc folder `procfd` (named `name`), and
 * every other thread's. */
static void proc_netns(int procfd, const char *name, uint64_t own, const char *ip4, const char *ip6,
                       int high)
{
    int d = fcntl(procfd, F_DUPFD_CLOEXEC, 0);
    DIR *dir = d >= 0 ? fdopendir(d) : NULL;
    if (dir == NULL && d >= 0)
        close(d);
    for (struct dirent *e; dir && (e = readdir(dir)) != NULL;) {
        char rel[48], via[96];
        if (e->d_name[0] < '1' || e->d_name[0] > '9' || (!strcmp(name, "/proc") && atoi(e->d_name) == getpid()))
            continue;
        snprintf(rel, sizeof rel, "%.20s/ns/net", e->d_name);
        snprintf(via, sizeof via, "%.48s/%.46s", name, rel);
        proc_ns_try(procfd, e->d_name, rel, via, own, ip4, ip6, high);
        snprintf(rel, sizeof rel, "%.20s/task", e->d_name); /* a thread may stand elsewhere */
        int t = openat(procfd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *tasks = t >= 0 ? fdopendir(t) : NULL;
        if (tasks == NULL && t >= 0)
            close(t);
        for (struct dirent *k; tasks && (k = readdir(tasks)) != NULL;) {
            if (k->d_name[0] < '1' || k->d_name[0] > '9' || !strcmp(k->d_name, e->d_name))
                continue;
            snprintf(rel, sizeof rel, "%.12s/task/%.12s/ns/net", e->d_name, k->d_name);
            snprintf(via, sizeof via, "%.48s/%.46s", name, rel);
            proc_ns_try(procfd, e->d_name, rel, via, own, ip4, ip6, high);
        }
        if (tasks)
            closedir(tasks);
    }
    if (dir)
        closedir(dir);
}

/* One held descriptor, if it is a handle to network namespaces: a namespace
 * descriptor or pidfd (ns_handle), or a folder of a proc filesystem (a /proc: each
 * process's; a /proc/<pid>: its own). */
static void held_ns_fd(int fd, int in_host, uint64_t own, const char *ip4, const char *ip6, int high)
{
    struct stat st;
    struct statfs fs;
    char link[64], via[96];
    const char *kind = ns_handle(fd, link, sizeof link);
    if (!kind && !in_host && fstatfs(fd, &fs) == 0 && fs.f_type == 0x9fa0 /* PROC_SUPER_MAGIC */ &&
        fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(via, sizeof via, "held descriptor %d (%.40s)", fd, *link ? link : "a proc folder");
        if (fstatat(fd, "ns/net", &st, 0) == 0) { /* a /proc/<pid> */
            char named[128];
            snprintf(named, sizeof named, "%s/ns/net", via);
            proc_ns_try(fd, ".", "ns/net", named, own, ip4, ip6, high);
        } else {
            proc_netns(fd, via, own, ip4, ip6, high);
        }
        return;
    }
    if (!kind || fstat(fd, &st) != 0)
        return;
    int pidfd = !strcmp(kind, "pidfd");
    if (!pidfd && strcmp(kind, "net") && strcmp(kind, "ns"))
        return; /* another type of namespace */
    if (!pidfd && !ns_new(&st))
        return;
    snprintf(via, sizeof via, "held descriptor %d (%.40s)", fd, *link ? link : kind);
    netns_try(fd, via, own, ip4, ip6, high);
}

/* Whether the probe stands in the host's own network namespace: by --host-ns, or
 * without it by pid 1's (the host's init, where the probe shares the host's PID
 * namespace); then every other line tries the host's network directly, and other
 * processes' namespaces (a fleet host's containers) are left alone. */
static int in_host_netns(const struct stat *self)
{
    unsigned long host_net = o.host_ns ? strtoul(o.host_ns, NULL, 10) : 0;
    struct stat init;
    if (host_net)
        return host_net == (unsigned long)self->st_ino;
    return stat("/proc/1/ns/net", &init) == 0 && init.st_ino == self->st_ino && init.st_dev == self->st_dev;
}

/* Every IP socket of another visible process that belongs to another network
 * namespace and that the workload may take: pidfd_getfd asks ptrace's permission (the
 * same uid, no capability the workload lacks), not any network's. A host process's
 * connection, taken, is the host's network: tried as one held at start (held_fd),
 * named by its process. A datagram socket is only sent through: what arrives on it is
 * its owner's (read here, a datagram the sweep sent to that relay would never reach
 * it), so the canary's log decides; a connection's answer comes to what was written. Its own
 * namespace's are no route (the sweep tries that), nor
 * another harness probe's or canary's (another cell's attempts, of its own namespace:
 * an arrival by them would be that cell's, not this sandbox's way out). */
static void proc_sockets(uint64_t own, const char *ip4, const char *ip6, int high)
{
    DIR *d = own ? opendir("/proc") : NULL;
    char me[32] = "", comm[32];
    read_file("/proc/self/comm", me, sizeof me - 1);
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) { /* no cap but held_att's (an error past it) */
        pid_t pid = (pid_t)atoi(e->d_name);
        char dir[64], path[128], link[64];
        snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
        memset(comm, 0, sizeof comm);
        if (pid <= 0 || (read_file(path, comm, sizeof comm - 1) > 0 && !strcmp(comm, me)))
            continue;
        snprintf(dir, sizeof dir, "/proc/%d/fd", (int)pid);
        DIR *fds = pid != getpid() ? opendir(dir) : NULL;
        int pfd = -1;
        for (struct dirent *f; fds && (f = readdir(fds)) != NULL;) {
            snprintf(path, sizeof path, "%s/%.32s", dir, f->d_name);
            ssize_t l = readlink(path, link, sizeof link - 1);
            if (l <= 7 || strncmp(link, "socket:", 7))
                continue;
            if (pfd < 0 && (pfd = (int)syscall(SYS_pidfd_open, pid, 0)) < 0)
                break;
            int got = (int)syscall(SYS_pidfd_getfd, pfd, atoi(f->d_name), 0), domain = 0;
            socklen_t sl = sizeof domain;
            if (got < 0 && errno == EPERM)
                break; /* none of this process's */
            if (got < 0)
                continue;
            getsockopt(got, SOL_SOCKET, SO_DOMAIN, &domain, &sl);
            uint64_t cookie = netns_cookie(got);
            size_t before = g_natt;
            if ((domain == AF_INET || domain == AF_INET6) && cookie && cookie != own)
                held_fd(got, 0, own, ip4, ip6, high);
            if (g_natt == before) { /* not one to try: not kept */
                close(got);
                continue;
            }
            for (size_t k = before; k < g_natt; k++) {
                if (g_att[k].talk == X_LINE && g_att[k].type == SOCK_DGRAM)
                    g_att[k].talk = X_FIRE; /* its owner reads it too: take nothing it is sent */
                char was[sizeof g_att[k].dsts];
                snprintf(was, sizeof was, "%s", g_att[k].dsts);
                snprintf(g_att[k].dsts, sizeof g_att[k].dsts, "descriptor %.16s of pid %d (taken by"
                         " pidfd_getfd), %.120s", f->d_name, (int)pid, was);
            }
        }
        if (pfd >= 0)
            close(pfd);
        if (fds)
            closedir(fds);
    }
    if (d)
        closedir(d);
}

/* Every other handle to a network namespace other than the sandbox's (the held
 * ones are held_ns_fd's): each /proc/<pid>/ns/net (and each thread's) the probe can
 * open, below /proc and every other proc mount, whose namespace is not its own. */
static void held_netns(int in_host, uint64_t own, const char *ip4, const char *ip6, int high)
{
    int proc = in_host ? -1 : open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (proc >= 0) {
        proc_netns(proc, "/proc", own, ip4, ip6, high);
        close(proc);
        proc_sockets(own, ip4, ip6, high);
    }
    /* Every other proc mount (a host's /proc bound in at /host/proc): its pids are
     * another PID namespace's. */
    int mounts = !in_host && read_mounts() == 0 ? g_nmnt : 0;
    for (int i = 0; i < mounts; i++) {
        if (strcmp(g_mnt[i].type, "proc") || !strcmp(g_mnt[i].mp, "/proc"))
            continue;
        int other = open(g_mnt[i].mp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (other >= 0) {
            proc_netns(other, g_mnt[i].mp, own, ip4, ip6, high);
            close(other);
        }
    }
    if (g_ns_over) {
        struct att *a = att_new(sweep_id[SW_HELD_FDS], G_HELD);
        if (a) {
            snprintf(a->dsts, sizeof a->dsts, "%d more handles to network namespaces", g_ns_over);
            att_end(a, OC_ERROR, 0, "%d more handles to network namespaces beyond the %d entered", g_ns_over,
                    NETNS_MAX);
        }
    }
}
