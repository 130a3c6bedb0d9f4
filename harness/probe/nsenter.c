/* A descriptor made inside another namespace: a child enters it with setns (the
 * probe itself stays where it stands) and hands the descriptor back over a socket
 * pair made before. A socket keeps the network namespace it was made in, a folder
 * the mount tree it lies on: either is then a route from where the probe stands. */

#include "probe.h"

#ifndef NS_GET_USERNS
#define NS_GET_USERNS _IO(0xb7, 0x1)
#endif
#ifndef NS_GET_NSTYPE
#define NS_GET_NSTYPE _IO(0xb7, 0x3)
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

static char g_ns_way[240]; /* the way the child took, where not as given */
static int g_ns_noted;      /* whether its `make` has added its own (once) */

/* setns through the i386 entry (346), where x86_64's is refused as a filter refuses
 * (EPERM, ENOSYS): a deny-list of x86_64's numbers never matches it. Made in the child
 * that enters (the entry asked first: a kernel without it may kill the caller); the
 * way goes back with its descriptors. */
static int setns_i386(int h, int nstype)
{
#if defined(__x86_64__)
    int e = errno;
    long v[6] = { h, nstype, 0, 0, 0, 0 };
    long r = (e == EPERM || e == ENOSYS) && i386_here() ? int80(I386_NR_setns, v) : -e;
    if (r == 0) {
        snprintf(g_ns_way, sizeof g_ns_way, " (setns through the i386 entry, int $0x80: x86_64's refused)");
        return 0;
    }
    errno = e; /* x86_64's answer stays the one recorded */
#else
    (void)h, (void)nstype;
#endif
    return -1;
}

/* setns into `h` (through the i386 entry where x86_64's is refused), and where that is
 * refused, through the user namespace that owns it (a namespace descriptor:
 * NS_GET_USERNS; a pidfd: its user namespace with it): a rootless container's
 * namespaces are its user namespace's, entered by anyone who may enter that one. */
static int enter(int h, int nstype)
{
    if (setns(h, nstype) == 0 || setns_i386(h, nstype) == 0)
        return 0;
    if (errno != EPERM)
        return -1;
    int u = ioctl(h, NS_GET_USERNS), r;
    if (u >= 0) {
        r = setns(u, CLONE_NEWUSER);
        close(u);
        r = r == 0 ? setns(h, nstype) : -1;
    } else {
        r = setns(h, nstype | CLONE_NEWUSER);
    }
    if (r != 0 && errno == EINVAL)
        errno = EPERM; /* its owner is the probe's own user namespace: refused as it was */
    return r;
}

#define NS_FDS_MAX 16 /* descriptors one child hands back */

/* For a `make` of fds_in_ns's: the way its descriptors took (sock_way()), handed back
 * with them, after the way the child entered; and, after fds_in_ns, the way the last
 * ones took ("" where as given). */
void ns_way_note(const char *way)
{
    size_t n = strlen(g_ns_way);
    if (!g_ns_noted++)
        snprintf(g_ns_way + n, sizeof g_ns_way - n, "%s", way);
}

const char *ns_way(void)
{
    return g_ns_way;
}

/* The descriptors `make(arg, fds, max)` makes (its count; -1 with errno where it
 * fails) in a child that entered the namespace behind `h` (a namespace descriptor or a
 * pidfd) as `nstype`, handed back in one message: their count, or -1 with errno and
 * `*why`: NS_OUTSIDE where setns was refused (or a filter killed the child with
 * SIGSYS), NS_REFUSED where `make` was, NS_LOST where nothing came back (the child
 * hung, died of another signal, or its descriptors were dropped on the way). */
int fds_in_ns(int h, int nstype, int (*make)(void *, int *, int), void *arg, int *fds, int max,
              int *why)
{
    int sv[2];
    *why = NS_LOST;
    if (max > NS_FDS_MAX)
        max = NS_FDS_MAX;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
        return -1;
    union {
        char buf[CMSG_SPACE(NS_FDS_MAX * sizeof(int))];
        struct cmsghdr align;
    } cbuf;
    int sent[2] = { 0, 0 }, n = -1; /* errno, and whether setns went through */
    struct iovec iov[2] = { { sent, sizeof sent }, { g_ns_way, sizeof g_ns_way } };
    struct msghdr m = { .msg_iov = iov, .msg_iovlen = 2, .msg_control = cbuf.buf };
    const ssize_t whole = (ssize_t)(sizeof sent + sizeof g_ns_way);
    g_ns_way[0] = '\0';
    g_ns_noted = 0;
    pid_t kid = fork();
    if (kid == 0) {
        close(sv[0]);
        if ((sent[1] = enter(h, nstype) == 0) == 0 || (n = make(arg, fds, max)) <= 0)
            sent[0] = n == 0 ? EINVAL : errno;
        if (n > 0) {
            m.msg_controllen = CMSG_SPACE((size_t)n * sizeof(int));
            struct cmsghdr *c = CMSG_FIRSTHDR(&m);
            c->cmsg_level = SOL_SOCKET;
            c->cmsg_type = SCM_RIGHTS;
            c->cmsg_len = CMSG_LEN((size_t)n * sizeof(int));
            memcpy(CMSG_DATA(c), fds, (size_t)n * sizeof(int));
        }
        _exit(sendmsg(sv[1], &m, 0) < 0);
    }
    int e = kid < 0 ? errno : ECHILD;
    close(sv[1]);
    n = -1;
    if (kid > 0) {
        struct timeval tv = { 2, 0 };
        setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        m.msg_controllen = sizeof cbuf.buf;
        ssize_t got = recvmsg(sv[0], &m, MSG_CMSG_CLOEXEC); /* 0: the child died */
        struct cmsghdr *c = got == whole ? CMSG_FIRSTHDR(&m) : NULL;
        if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
            c->cmsg_len >= CMSG_LEN(sizeof(int))) {
            n = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
            if (n > max) { /* never more than asked for: the rest closed */
                int extra[NS_FDS_MAX];
                memcpy(extra, CMSG_DATA(c), (size_t)n * sizeof(int));
                for (int i = max; i < n; i++)
                    close(extra[i]);
                n = max;
            }
            memcpy(fds, CMSG_DATA(c), (size_t)n * sizeof(int));
        }
        g_ns_way[got == whole ? sizeof g_ns_way - 1 : 0] = '\0';
        int status = 0;
        if (got <= 0)
            kill(kid, SIGKILL);
        waitpid(kid, &status, 0);
        if (n > 0 && (m.msg_flags & MSG_CTRUNC)) { /* some dropped: never a partial set */
            for (int i = 0; i < n; i++)
                close(fds[i]);
            n = -1;
        } else if (n > 0) {
            e = 0;
        } else if (got == whole && !(m.msg_flags & MSG_CTRUNC) && sent[0]) {
            e = sent[0], *why = sent[1] ? NS_REFUSED : NS_OUTSIDE;
        } else if (got == 0 && WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS) {
            e = EPERM, *why = NS_OUTSIDE; /* a filter's kill */
        }
    }
    close(sv[0]);
    errno = e;
    return n;
}

struct one_fd {
    int (*make)(void *);
    void *arg;
};

static int make_one(void *arg, int *fds, int max)
{
    (void)max;
    struct one_fd *one = arg;
    return (fds[0] = one->make(one->arg)) < 0 ? -1 : 1;
}

/* What `make(arg)` returns in a child that entered the namespace behind `h`: one
 * descriptor of fds_in_ns's. */
int fd_in_ns(int h, int nstype, int (*make)(void *), void *arg, int *why)
{
    struct one_fd one = { make, arg };
    int fd = -1;
    return fds_in_ns(h, nstype, make_one, &one, &fd, 1, why) == 1 ? fd : -1;
}

/* For fd_in_ns: the root of the mount namespace entered (setns makes it the root). */
int ns_root(void *unused)
{
    (void)unused;
    return open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
}

/* What a held descriptor is a handle to: a namespace (its kind, "net", "mnt"..., by
 * NS_GET_NSTYPE on an nsfs file), a process ("pidfd": every kind of its namespaces
 * at once; a signal 0 tells one from another anonymous inode), or neither (NULL).
 * `name` gets what /proc says it links to ("" without /proc). */
const char *ns_handle(int fd, char *name, size_t n)
{
    static const struct { int type; const char *kind; } kinds[] = {
        { CLONE_NEWNET, "net" }, { CLONE_NEWNS, "mnt" }, { CLONE_NEWPID, "pid" },
        { CLONE_NEWUSER, "user" }, { CLONE_NEWUTS, "uts" }, { CLONE_NEWIPC, "ipc" },
        { CLONE_NEWCGROUP, "cgroup" }, { 0x00000080 /* CLONE_NEWTIME */, "time" },
    };
    struct statfs fs;
    char proc[64];
    if (fstatfs(fd, &fs) != 0)
        return NULL;
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    ssize_t l = readlink(proc, name, n - 1);
    name[l > 0 ? l : 0] = 0;
    if (fs.f_type == 0x6e736673) { /* NSFS_MAGIC */
        int type = ioctl(fd, NS_GET_NSTYPE);
        for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
            if (kinds[i].type == type)
                return kinds[i].kind;
        return "ns"; /* a kernel before 4.11: try it as any */
    }
    if (fs.f_type == 0x50494446 /* PID_FS_MAGIC */ || fs.f_type == 0x09041934 /* anon inodes */) {
        if (syscall(SYS_pidfd_send_signal, fd, 0, NULL, 0) == 0 || errno == EPERM || errno == ESRCH)
            return "pidfd";
    }
    return NULL;
}
