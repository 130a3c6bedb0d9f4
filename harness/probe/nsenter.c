/* A descriptor made inside another namespace: a child enters it with setns (the
 * probe itself stays where it stands) and hands the descriptor back over a socket
 * pair made before. A socket keeps the network namespace it was made in, a folder
 * the mount tree it lies on: either is then a route from where the probe stands. */

#include "probe.h"

/* What `make(arg)` returns in a child that entered the namespace behind `h` (a
 * namespace descriptor or a pidfd) as `nstype`; -1 with errno where setns or `make`
 * is refused, ECHILD where the child died (a filter that kills on setns) or hung. */
int fd_in_ns(int h, int nstype, int (*make)(void *), void *arg)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) != 0)
        return -1;
    char cbuf[CMSG_SPACE(sizeof(int))];
    int e = 0, s = -1;
    struct iovec iov = { &e, sizeof e };
    struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf };
    pid_t kid = fork();
    if (kid == 0) {
        if (setns(h, nstype) != 0 || (s = make(arg)) < 0)
            e = errno;
        if (s >= 0) {
            m.msg_controllen = sizeof cbuf;
            struct cmsghdr *c = CMSG_FIRSTHDR(&m);
            c->cmsg_level = SOL_SOCKET;
            c->cmsg_type = SCM_RIGHTS;
            c->cmsg_len = CMSG_LEN(sizeof(int));
            memcpy(CMSG_DATA(c), &s, sizeof s);
        }
        _exit(sendmsg(sv[1], &m, 0) < 0);
    }
    e = errno;
    close(sv[1]);
    if (kid > 0) {
        struct timeval tv = { 3, 0 };
        setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        m.msg_controllen = sizeof cbuf;
        int got_e = ECHILD;
        iov.iov_base = &got_e;
        ssize_t got = recvmsg(sv[0], &m, MSG_CMSG_CLOEXEC);
        struct cmsghdr *c = got > 0 ? CMSG_FIRSTHDR(&m) : NULL;
        if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
            memcpy(&s, CMSG_DATA(c), sizeof s);
        if (got <= 0)
            kill(kid, SIGKILL);
        waitpid(kid, NULL, 0);
        e = got > 0 ? got_e : ECHILD;
    }
    close(sv[0]);
    errno = e;
    return s;
}

/* For fd_in_ns: the root of the mount namespace entered (setns makes it the root). */
int ns_root(void *unused)
{
    (void)unused;
    return open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
}

/* What a held descriptor is a handle to: a namespace (nsfs: its kind, "net", "mnt"...,
 * from its name, or "ns" where /proc cannot name it), a process ("pidfd": every kind
 * of its namespaces at once), or neither (NULL). `name` gets what it links to. */
const char *ns_handle(int fd, char *name, size_t n)
{
    struct statfs fs;
    char proc[64];
    if (fstatfs(fd, &fs) != 0)
        return NULL;
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    ssize_t l = readlink(proc, name, n - 1);
    name[l > 0 ? l : 0] = 0;
    if (fs.f_type == 0x6e736673) { /* NSFS_MAGIC: "net:[4026531840]" */
        static char kind[16];
        size_t k = strcspn(name, ":");
        if (l <= 0 || k == 0 || k >= sizeof kind)
            return "ns";
        memcpy(kind, name, k);
        kind[k] = 0;
        return kind;
    }
    if (fs.f_type == 0x50494446 /* PID_FS_MAGIC */ ||
        (fs.f_type == 0x09041934 /* ANON_INODE_FS_MAGIC */ && (l <= 0 || strstr(name, "[pidfd]"))))
        return "pidfd";
    return NULL;
}
