/* The sweep's `unix-host` line (issue 38): a connect to a unix listener outside the
 * sandbox. Tried: the host's own listeners (--host-unix, listed by the host in its
 * network namespace: paths at any depth, abstract names), and every unix socket the
 * sweep found in the sandbox's view (its folder walk, its /proc/net/unix), less those
 * where the workload may write (--unix-granted) and the canaries' abstract names
 * (unix-abstract tries this run's). No byte is sent: the connect is the reach.
 *
 * A connect that works is an escape only where the listener is shown to be outside:
 * its socket file is the host's (the same device and inode), its abstract name lives
 * in the host's network namespace, or the process that listens is outside the
 * sandbox's (SO_PEERCRED: no pid in the sandbox's pid namespace; in the host's own,
 * the host's owner, or a process that is not the probe's ancestor whose socket file
 * is on one of the host's own filesystems (--host-devs) or that is in another mount
 * namespace). A listener of the sandbox's own answers too, and is no escape; so does
 * every one on a kernel of the sandbox's own (a VM's, gVisor's: its boot id is not
 * the host's), where namespace inodes and devices are the guest's own and no unix
 * socket reaches the host. */

#include "probe.h"

#define HOSTUNIX_MAX 320
#define SEEN_MAX 4096 /* names the walk found: dead decoys must not crowd a live one out */

struct hl {
    char kind;                 /* s, q, d (the host's list, or /proc/net/unix inside); 0: any */
    unsigned long dev, ino;    /* the host's socket file (0: unknown) */
    long pid;                  /* the host's owner (0: unknown) */
    char comm[32], name[110];  /* name: a path, or '@' and the abstract name */
    char fspath[110];          /* the host's file's path within its filesystem ("": unknown) */
};

static struct hl g_hl[HOSTUNIX_MAX + SEEN_MAX];
static size_t g_nhl;
static unsigned long g_host_ns[3]; /* net, pid, mnt */
static struct seen {
    char kind; /* s, q, d where /proc/net/unix told it; 0: a file the walk found */
    char name[110];
} *g_seen;                         /* every unix socket name the sweep found in view */
static size_t g_nseen, g_over; /* names the walk found, and those past a cap: never tried */
static char g_cut[160];        /* why the walk left sockets unfound, if it did */

void unix_seen_cut(const char *why)
{
    if (!*g_cut)
        snprintf(g_cut, sizeof g_cut, "%s", why);
}

/* sweep.c: a socket the sweep found (its walk, its /proc/net/unix: `kind` s, q or d
 * there, 0 for a file of the walk's, tried as each), before its own cap on proxy
 * attempts: every one is tried here. */
void unix_seen(const char *path, int abstract, char kind)
{
    if (!g_seen && !(g_seen = calloc(SEEN_MAX, sizeof *g_seen)))
        return;
    if (strlen(path) + (size_t)abstract >= sizeof g_seen->name)
        return; /* longer than a name connects to (unix-proxy's line tries it through its folder) */
    /* Past SEEN_MAX, not counted as untried: socket files nobody listens on (a busy
     * /tmp's, in a correct sandbox's view too) would make every such line an error. */
    if (g_nseen < SEEN_MAX) {
        g_seen[g_nseen].kind = kind;
        snprintf(g_seen[g_nseen++].name, sizeof g_seen->name, "%s%s", abstract ? "@" : "", path);
    }
}
static int g_own_kernel;           /* the sandbox showed a kernel other than the host's */

static unsigned long ns_ino(const char *path)
{
    char link[64];
    ssize_t n = readlink(path, link, sizeof link - 1);
    if (n <= 0)
        return 0;
    link[n] = '\0';
    const char *b = strchr(link, '[');
    return b ? strtoul(b + 1, NULL, 10) : 0;
}

static int granted(const char *name)
{
    const char *s = o.unix_granted ? o.unix_granted : "";
    while (name[0] == '/' && *s) {
        size_t n = strcspn(s, "\n");
        if (n > 1 && !strncmp(name, s, n) && (name[n] == '/' || !name[n]))
            return 1;
        if (n == 1 && s[0] == '/')
            return 1;
        s += n + (s[n] == '\n');
    }
    return 0;
}

/* A name to try; `inside`: found in the sandbox's view, so its path is the
 * sandbox's and a grant (--unix-granted, inside paths) covers it. The host's own
 * were held to the grants by their host paths (hostside/listeners.py). */
static struct hl *hl_add(char kind, const char *name, int inside)
{
    size_t len = strlen(name);
    if (!len || len > (name[0] == '@' ? 108 : 107) || (inside && granted(name)))
        return NULL;
    if (name[0] == '@' && !strncmp(name + 1, "harness-canary-", 15))
        return NULL;
    for (size_t i = 0; i < g_nhl; i++)
        if (!strcmp(g_hl[i].name, name))
            return NULL;
    if (g_nhl == (inside ? HOSTUNIX_MAX + SEEN_MAX : HOSTUNIX_MAX))
        return g_over++, NULL;
    struct hl *h = &g_hl[g_nhl++];
    memset(h, 0, sizeof *h);
    h->kind = kind;
    snprintf(h->name, sizeof h->name, "%s", name);
    return h;
}

/* Where the sandbox's mounts show a host listener's file (a bind of any folder above
 * it, at any depth): each mount of its device whose root holds its path within the
 * filesystem, at the mount point and the rest of that path, if the file found there
 * is that very socket (the same device and inode). */
static void host_at_mounts(const struct hl *h)
{
    if (!h->ino || !h->fspath[0])
        return;
    for (int i = 0; i < g_nmnt; i++) {
        const struct mnt *m = &g_mnt[i];
        size_t rl = strcmp(m->root, "/") ? strlen(m->root) : 0;
        if (m->maj != major(h->dev) || m->min != minor(h->dev) || strncmp(h->fspath, m->root, rl) ||
            (h->fspath[rl] != '/' && h->fspath[rl] != '\0'))
            continue; /* '\0': the socket file itself bound at the mount point */
        char path[sizeof h->name];
        struct stat st;
        if (snprintf(path, sizeof path, "%s%s", strcmp(m->mp, "/") ? m->mp : "", h->fspath + rl) >=
                (int)sizeof path ||
            stat(path, &st) != 0 || !S_ISSOCK(st.st_mode) || st.st_dev != h->dev ||
            st.st_ino != h->ino)
            continue;
        struct hl copy = *h, *at = hl_add(h->kind, path, 0);
        if (at) {
            snprintf(copy.name, sizeof copy.name, "%s", path);
            *at = copy;
        }
    }
}

/* --host-unix: "T DEV:INO PID COMM FSPATH NAME" per line (hostside/listeners.py);
 * read once. */
static void read_host_list(void)
{
    static int read;
    if (read++)
        return;
    const char *s = o.host_unix ? o.host_unix : "";
    while (*s) {
        size_t n = strcspn(s, "\n");
        char line[400], kind, *f[6], *save = NULL;
        unsigned long dev, ino;
        long pid;
        snprintf(line, sizeof line, "%.*s", (int)(n < 399 ? n : 399), s);
        s += n + (s[n] == '\n');
        int k = 0;
        for (char *t = strtok_r(line, " ", &save); t && k < 6; t = strtok_r(NULL, " ", &save))
            f[k++] = t;
        if (k != 6 || strlen(f[0]) != 1 || !strchr("sqd", kind = f[0][0]) ||
            sscanf(f[1], "%lu:%lu", &dev, &ino) != 2 || sscanf(f[2], "%ld", &pid) != 1 ||
            strlen(f[3]) >= sizeof g_hl[0].comm || n > 399)
            continue; /* a line it cannot read whole: never half of one */
        const char *comm = f[3], *fspath = f[4], *name = f[5];
        struct hl *h = hl_add(kind, name, 0);
        if (h) {
            h->dev = dev, h->ino = ino, h->pid = pid;
            snprintf(h->comm, sizeof h->comm, "%s", comm);
            if (fspath[0] == '/' && strlen(fspath) < sizeof h->fspath) /* else: unknown */
                snprintf(h->fspath, sizeof h->fspath, "%s", fspath);
        }
    }
    if (read_mounts() == 0)
        for (size_t i = 0, listed = g_nhl; i < listed; i++)
            host_at_mounts(&g_hl[i]);
    const char *ns = o.host_ns ? o.host_ns : "";
    char boot[64] = "", release[128] = "", mine[64];
    if (sscanf(ns, "%lu %lu %lu %63s %127s", &g_host_ns[0], &g_host_ns[1], &g_host_ns[2], boot,
               release) != 5)
        memset(g_host_ns, 0, sizeof g_host_ns);
    /* As the judge tells (judge/reach.py own_kernel): boot ids (UUIDs) that differ, or
     * with no trustworthy one, another release. Unix sockets never cross kernels. */
    struct utsname u;
    read_boot_id(mine, sizeof mine);
    if (strlen(mine) == 36 && strlen(boot) == 36)
        g_own_kernel = strcmp(mine, boot) != 0;
    else if (release[0] && kernel_uname(&u) == 0)
        g_own_kernel = strcmp(u.release, release) != 0;
}

/* The host's listener whose socket file this is, wherever the sandbox sees it. */
static const struct hl *host_file(const struct stat *st)
{
    for (size_t i = 0; i < g_nhl; i++)
        if (g_hl[i].kind && g_hl[i].ino && g_hl[i].dev == (unsigned long)st->st_dev &&
            g_hl[i].ino == (unsigned long)st->st_ino)
            return &g_hl[i];
    return NULL;
}

/* Is dev one of the host's own filesystems (--host-devs: MAJ:MIN,...)? */
static int host_dev(dev_t dev)
{
    const char *s = o.host_devs ? o.host_devs : "";
    while (*s) {
        unsigned maj, min;
        if (sscanf(s, "%u:%u", &maj, &min) == 2 && maj == major(dev) && min == minor(dev))
            return 1;
        const char *c = strchr(s, ',');
        s = c ? c + 1 : "";
    }
    return 0;
}

static int is_ancestor(pid_t pid)
{
    for (pid_t p = getppid(); p > 1;) {
        if (p == pid)
            return 1;
        char path[64], buf[512];
        snprintf(path, sizeof path, "/proc/%d/stat", (int)p);
        ssize_t n = read_file(path, buf, sizeof buf - 1);
        buf[n > 0 ? n : 0] = '\0';
        const char *r = strrchr(buf, ')');
        int next = 0;
        if (!r || sscanf(r + 1, " %*c %d", &next) != 1)
            return 0;
        p = next;
    }
    return pid == 1 && getppid() == 1;
}

static void owner(const struct hl *h, char *out, size_t cap)
{
    if (h && h->pid)
        snprintf(out, cap, " (pid %ld, %s)", h->pid, h->comm);
    else
        out[0] = '\0';
}

/* Whether the listener's process, `pid` as the sandbox's pid namespace numbers it, is
 * shown to be outside: only in the host's own pid namespace can its pid say so (the
 * host's owner; a process whose socket file is on the host's filesystems, or one in
 * another mount namespace that is not the probe's ancestor). */
static int pid_outside(pid_t pid, const struct hl *h, const char *name, const char *who, char *why,
                       size_t cap)
{
    struct stat st;
    unsigned long pidns = ns_ino("/proc/self/ns/pid");
    if (!pidns || pidns != g_host_ns[1])
        return 0;
    if (h && h->pid == pid) {
        snprintf(why, cap, "%s: its listener is the host's%s", name, who);
        return 1;
    }
    char path[64], comm[32] = "?";
    snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
    ssize_t cn = read_file(path, comm, sizeof comm - 1);
    comm[cn > 0 ? cn : 0] = '\0';
    comm[strcspn(comm, "\n")] = '\0';
    if (name[0] == '/' && stat(name, &st) == 0 && host_dev(st.st_dev)) {
        snprintf(why, cap, "%s: its listener, pid %d (%s), is a host process, its socket file on the"
                 " host's filesystem %u:%u", name, (int)pid, comm, major(st.st_dev),
                 minor(st.st_dev));
        return 1;
    }
    /* A launcher listening for its sandbox is the sandbox's own only off the host's
     * filesystems (a runtime's shim or monitor that listens there is a host process). */
    if (is_ancestor(pid))
        return 0;
    snprintf(path, sizeof path, "/proc/%d/ns/mnt", (int)pid);
    unsigned long mnt = ns_ino(path), mine = ns_ino("/proc/self/ns/mnt");
    if (mnt && mine && mnt != mine) {
        snprintf(why, cap, "%s: its listener, pid %d (%s), is a host process in another mount"
                 " namespace", name, (int)pid, comm);
        return 1;
    }
    return 0;
}

/* A datagram socket reached (no peer's credentials) that no test above places outside:
 * bound in the sandbox's own network namespace, by a file or an abstract name, perhaps
 * by a host process that shares it (a sidecar's). Whose it is: the process holding it
 * (unixholder.c). 1 outside, 0 not shown, -1 not told (why says so). */
static int dgram_outside(const struct hl *h, const char *name, const char *who, char *why, size_t cap)
{
    struct stat st;
    unsigned long sock = 0;
    int here = name[0] == '@'            ? unix_bound_here(name, 0, 0, &sock)
               : stat(name, &st) == 0 ? unix_bound_here(NULL, st.st_dev, st.st_ino, &sock)
                                      : -1;
    if (here != 1)
        sock = unix_proc_inode(name);
    long pid = sock ? unix_holder(sock) : -1;
    unsigned long pidns = ns_ino("/proc/self/ns/pid");
    if (pid == 0 && pidns && pidns != g_host_ns[1]) {
        snprintf(why, cap, "%s: a datagram socket that no process of the sandbox's pid namespace"
                 " holds%s", name, who);
        return 1;
    }
    if (pid < 0) {
        snprintf(why, cap, "%s answers, but whose datagram socket it is could not be told (%s):"
                 " no proof", name, sock ? "a process in view whose descriptors the workload may"
                 " not read" : "neither sock_diag nor /proc/net/unix names it");
        return -1;
    }
    return pid ? pid_outside((pid_t)pid, h, name, who, why, cap) : 0;
}

/* Why the listener behind fd is outside the sandbox, into why; 0 if it is not shown
 * to be, -1 where a datagram socket's holder cannot be told. h: the host's entry of
 * that name, if any; peer: fd is a connected stream or seqpacket socket (a datagram
 * socket, or a connect the full backlog held back, carries no peer's credentials);
 * dgram: fd is a datagram socket. */
static int peer_outside(int fd, int peer, int dgram, const struct hl *h, const char *name, char *why,
                        size_t cap)
{
    char who[64];
    struct stat st;
    if (name[0] == '/' && stat(name, &st) == 0) {
        const struct hl *f = host_file(&st);
        if (f) {
            owner(f, who, sizeof who);
            snprintf(why, cap, "%s is the host's listener %s%s (the same file)", name, f->name, who);
            return 1;
        }
    }
    unsigned long net = ns_ino("/proc/self/ns/net");
    owner(h, who, sizeof who);
    if (name[0] == '@' && net && net == g_host_ns[0]) {
        snprintf(why, cap, "%s is in the host's network namespace%s", name, who);
        return 1;
    }
    if (!peer && name[0] == '/' && stat(name, &st) == 0 &&
        unix_bound_here(NULL, st.st_dev, st.st_ino, NULL) == 0) {
        snprintf(why, cap, "%s: bound in a network namespace other than the sandbox's%s", name, who);
        return 1;
    }
    if (dgram)
        return dgram_outside(h, name, who, why, cap);
    struct ucred cr;
    socklen_t l = sizeof cr;
    if (!peer || getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &l) != 0 || l != sizeof cr)
        return 0;
    if (cr.pid == 0) {
        snprintf(why, cap, "%s: its listener's process is outside the sandbox's pid namespace%s",
                 name, who);
        return 1;
    }
    return pid_outside(cr.pid, h, name, who, why, cap);
}

/* A held connected unix socket's listener outside the sandbox, judged as a connect to
 * it would be (peer_outside), its reason into why: 1 shown outside, 0 not. */
int held_peer_outside(int fd, char *why, size_t cap)
{
    struct sockaddr_un un;
    socklen_t l = sizeof un;
    char name[sizeof un.sun_path + 2] = "";
    read_host_list();
    memset(&un, 0, sizeof un);
    if (getpeername(fd, (struct sockaddr *)&un, &l) == 0 && l > sizeof(sa_family_t)) {
        size_t n = l - sizeof(sa_family_t);
        if (un.sun_path[0] == '\0') /* abstract: '@' and the name */
            snprintf(name, sizeof name, "@%.*s", (int)(n - 1), un.sun_path + 1);
        else
            snprintf(name, sizeof name, "%.*s", (int)strnlen(un.sun_path, n), un.sun_path);
    }
    if (!name[0])
        snprintf(name, sizeof name, "fd %d", fd); /* an unnamed listener: only its credentials */
    return peer_outside(fd, 1, 0, NULL, name, why, cap) == 1;
}

/* A datagram socket whose connect(2) and sendto(2) a filter refused (*e EPERM or
 * EACCES): the empty datagram by sendmsg, then sendmmsg, its name in msg_name. 0 with
 * its way in `way`, else -1 and *e the last answer that was not a refusal, if any. */
static int dgram_other(int fd, const struct sockaddr_un *un, socklen_t ul, int *e, char *way, size_t cap)
{
    struct iovec iov = { .iov_base = (void *)"", .iov_len = 0 };
    struct mmsghdr mm;
    memset(&mm, 0, sizeof mm);
    mm.msg_hdr.msg_name = (void *)un, mm.msg_hdr.msg_namelen = ul;
    mm.msg_hdr.msg_iov = &iov, mm.msg_hdr.msg_iovlen = 1;
    for (int k = 0; k < 2; k++) {
        long r = k ? syscall(SYS_sendmmsg, fd, &mm, 1, MSG_DONTWAIT) : sendmsg(fd, &mm.msg_hdr, MSG_DONTWAIT);
        if (r >= 0) {
            snprintf(way, cap, k ? " (by sendmmsg(2) with its name: connect(2), sendto(2) and sendmsg(2) refused)"
                                 : " (by sendmsg(2) with its name: connect(2) and sendto(2) refused)");
            return *e = 0, 0;
        }
        if (errno != EPERM && errno != EACCES && errno != ENOSYS)
            return *e = errno, -1;
    }
    return -1;
}

/* Connect to one name; the outcome into h's line of the report. */
static enum outcome try_one(const struct hl *h, char *why, size_t cap, int *err)
{
    struct sockaddr_un un = { .sun_family = AF_UNIX };
    size_t len = strlen(h->name);
    int abstract = h->name[0] == '@';
    memcpy(un.sun_path, h->name, len);
    if (abstract)
        un.sun_path[0] = '\0';
    socklen_t ul = abstract ? (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len)
                            : (socklen_t)sizeof un;
    static const int types[] = { SOCK_STREAM, SOCK_SEQPACKET, SOCK_DGRAM };
    int e = 0, refused = 0;
    for (size_t i = 0; i < 3; i++) {
        int type = types[i];
        if (h->kind && h->kind != "sqd"[i])
            continue;
        int fd = sock_make(AF_UNIX, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0) /* refused every way: the i386 entry's, then the ring's (a filter of x86_64's) */
            fd = sock_entries(AF_UNIX, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0) {
            e = errno;
            continue;
        }
        int r = connect(fd, (struct sockaddr *)&un, ul);
        e = r == 0 ? 0 : errno;
        /* A datagram socket is reached by sendto(2) as well: a filter that refuses
         * connect(2) leaves it open. An empty datagram, the least a listener can get. */
        if (r != 0 && type == SOCK_DGRAM && (e == EPERM || e == EACCES)) {
            r = sendto(fd, "", 0, 0, (struct sockaddr *)&un, ul) == 0 ? 0 : -1;
            e = r == 0 ? 0 : errno;
        }
        char cway[100] = "";
        if (r != 0 && type == SOCK_DGRAM && (e == EPERM || e == EACCES)) /* sendto refused too */
            r = dgram_other(fd, &un, ul, &e, cway, sizeof cway);
        if (r != 0 && (e == EPERM || e == EACCES)) { /* connect(2) refused: the other entries' */
            errno = e;
            r = connect_entries(fd, (struct sockaddr *)&un, ul, cway, sizeof cway);
            e = r == 0 ? 0 : errno == EINPROGRESS ? EAGAIN : errno; /* the ring's, pending: a full backlog */
        }
        if (r == 0 || e == EAGAIN) { /* EAGAIN: a full backlog, and still reached */
            char way[300];
            snprintf(way, sizeof way, "%s%s", sock_way(), cway);
            int out = g_own_kernel ? 0 : peer_outside(fd, r == 0 && type != SOCK_DGRAM,
                                                      type == SOCK_DGRAM, h, h->name, why, cap);
            close(fd);
            if (out < 0) /* a datagram socket whose holder cannot be told: why says so */
                return OC_ERROR;
            if (out) {
                size_t l = strlen(why);
                snprintf(why + l, cap - l, "%s", way);
                if (type == SOCK_SEQPACKET && strlen(why) + 24 < cap)
                    strcat(why, " (a seqpacket listener)");
                return OC_ESCAPED;
            }
            if (g_own_kernel) {
                snprintf(why, cap, "%s answers, on the sandbox's own kernel (not the host's)", h->name);
                return OC_BLOCKED;
            }
            snprintf(why, cap, "%s answers, but its listener is the sandbox's own", h->name);
            return OC_BLOCKED;
        }
        close(fd);
        if ((e == EPERM || e == EACCES) && !refused)
            refused = e;
        if (e != EPROTOTYPE && e != EPERM && e != EACCES)
            break; /* another type: a refused connect may yet be a datagram's sendto */
    }
    *err = refused ? refused : e; /* a filter's refusal says more than a type mismatch */
    snprintf(why, cap, "connect(%s)", h->name);
    return OC_BLOCKED;
}

/* Is this socket file one of the host's listeners unix-host connects to (the host's
 * list, less what the policy lets the workload change)? A connect that works there is
 * an escape by that line, so unix-proxy need not ask it too. */
int unix_host_tries(const struct stat *st)
{
    read_host_list();
    return host_file(st) != NULL;
}

void sweep_host_unix(double t0)
{
    read_host_list();
    size_t listed = g_nhl;
    for (size_t i = 0; i < g_nseen; i++) /* what the sweep found in the sandbox's view */
        hl_add(g_seen[i].kind, g_seen[i].name, 1);
    const struct hl *pick = NULL, *untold = NULL;
    char why[300] = "", first[300] = "", doubt[300] = "";
    int err = 0, first_err = 0;
    size_t refused = 0, own = 0;
    for (size_t i = 0; i < g_nhl; i++) {
        int e = 0;
        enum outcome oc = try_one(&g_hl[i], why, sizeof why, &e);
        if (oc == OC_ESCAPED && !pick) {
            pick = &g_hl[i];
            snprintf(first, sizeof first, "%s", why);
        } else if (oc == OC_BLOCKED && e) {
            refused++;
            if (!first_err)
                first_err = e, err = e;
        } else if (oc == OC_BLOCKED) {
            own++;
        } else if (oc == OC_ERROR && !untold) { /* answered, whose unknown */
            untold = &g_hl[i];
            snprintf(doubt, sizeof doubt, "%s", why);
        }
    }
    char detail[600];
    if (pick) {
        snprintf(detail, sizeof detail, "connected: %s (%zu names of the host's listeners, %zu more found inside)",
                 first, listed, g_nhl - listed);
        att_line(sweep_id[SW_UNIX_HOST], OC_ESCAPED, 0, detail, t0, pick->name, 0, NULL);
        return;
    }
    if (g_over || *g_cut) { /* a listener among those never tried may be the host's */
        if (g_over)
            snprintf(detail, sizeof detail, "none of %zu unix listeners connected, but %zu more were never"
                     " tried (at most %d of the host's and %d found inside): no proof", g_nhl, g_over,
                     HOSTUNIX_MAX, SEEN_MAX);
        else
            snprintf(detail, sizeof detail, "none of %zu unix listeners connected, but the walk of the"
                     " sandbox's view left sockets unfound (%.160s): no proof", g_nhl, g_cut);
        att_line(sweep_id[SW_UNIX_HOST], OC_ERROR, 0, detail, t0, g_nhl ? g_hl[0].name : "", 0, NULL);
        return;
    }
    if (untold) {
        att_line(sweep_id[SW_UNIX_HOST], OC_ERROR, 0, doubt, t0, untold->name, 0, NULL);
        return;
    }
    if (!g_nhl) {
        att_line(sweep_id[SW_UNIX_HOST], OC_BLOCKED, 0,
                 "no unix listener to try (none listed by the host, none found inside)", t0, "", 0,
                 NULL);
        return;
    }
    snprintf(detail, sizeof detail,
             "%zu names of the host's listeners, %zu more found inside: %zu refused, %zu the sandbox's"
             " own%s", listed, g_nhl - listed, refused, own,
             g_own_kernel ? " (on a kernel of its own: no unix socket reaches the host's)" : "");
    att_line(sweep_id[SW_UNIX_HOST], OC_BLOCKED, refused == g_nhl ? err : 0, detail, t0,
             g_hl[0].name, 0, NULL);
}
