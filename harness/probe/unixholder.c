/* Whose a unix socket of the sandbox's own network namespace is, for unix-host's
 * datagram sockets, which carry no peer's credentials: the socket bound to a file or
 * an abstract name, found by sock_diag (the kernel's list of the namespace's unix
 * sockets), and the process that holds it, found by its inode among every visible
 * process's descriptors. A host process may listen in a namespace it shares with the
 * sandbox (a sidecar's, a shim's); abstract names are the network namespace's, so no
 * bind shows it. */

#include "probe.h"
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>

/* The socket of this network namespace bound to `name` (an abstract one,
 * '@' and its bytes) or to the file (dev, ino), one dump of sock_diag (UDIAG_SHOW_NAME,
 * UDIAG_SHOW_VFS): 1 found, its socket's inode in *sock; 0 none here; -1 when it
 * cannot be asked. */
int unix_bound_here(const char *name, dev_t dev, ino_t ino, unsigned long *sock)
{
    int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (fd < 0)
        return -1;
    struct {
        struct nlmsghdr h;
        struct unix_diag_req r;
    } req = {
        .h = { .nlmsg_len = sizeof req, .nlmsg_type = SOCK_DIAG_BY_FAMILY,
               .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
        .r = { .sdiag_family = AF_UNIX, .udiag_states = ~0U,
               .udiag_show = UDIAG_SHOW_VFS | UDIAG_SHOW_NAME },
    };
    int found = -1, abstract = name && name[0] == '@';
    size_t nlen = abstract ? strlen(name) : 0; /* the kernel's name: a NUL, then the bytes */
    ssize_t w = send(fd, &req, sizeof req, 0);
    if (w < 0 && (errno == EPERM || errno == EACCES || errno == ENOSYS)) /* a filter refusing sendto */
        w = write(fd, &req, sizeof req);
    if (w == (ssize_t)sizeof req) {
        static char buf[32768];
        double end = now_ms() + 2000;
        for (int done = 0; !done && now_ms() < end;) {
            ssize_t n = recv(fd, buf, sizeof buf, 0);
            if (n <= 0)
                break;
            for (struct nlmsghdr *h = (void *)buf; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
                if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR) {
                    done = 1;
                    if (h->nlmsg_type == NLMSG_DONE && found < 0)
                        found = 0;
                    break;
                }
                struct unix_diag_msg *m = NLMSG_DATA(h);
                int len = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof *m));
                for (struct rtattr *a = (void *)(m + 1); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
                    const char *p = RTA_DATA(a);
                    int hit = 0;
                    if (a->rta_type == UNIX_DIAG_VFS && !abstract &&
                        RTA_PAYLOAD(a) >= (int)sizeof(struct unix_diag_vfs)) {
                        const struct unix_diag_vfs *v = RTA_DATA(a);
                        /* the kernel's own encoding of the device: major << 20 | minor */
                        hit = v->udiag_vfs_ino == ino && v->udiag_vfs_dev >> 20 == major(dev) &&
                              (v->udiag_vfs_dev & 0xfffff) == minor(dev);
                    } else if (a->rta_type == UNIX_DIAG_NAME && abstract) {
                        hit = (size_t)RTA_PAYLOAD(a) == nlen && p[0] == '\0' &&
                              !memcmp(p + 1, name + 1, nlen - 1);
                    }
                    if (hit) { /* a name is one socket's, whatever its type */
                        found = 1;
                        if (sock)
                            *sock = m->udiag_ino;
                    }
                }
            }
        }
    }
    close(fd);
    return found;
}

/* The process that holds the socket of inode `sock` (a descriptor of it in
 * /proc/<pid>/fd): its pid; 0 where no process in view holds it and every process's
 * descriptors could be read; -1 where it cannot be told (no /proc, or a process whose
 * descriptors the workload may not read, which may be the one). */
long unix_holder(unsigned long sock)
{
    char want[48];
    snprintf(want, sizeof want, "socket:[%lu]", sock);
    DIR *procs = opendir("/proc");
    if (!procs)
        return -1;
    long found = 0;
    int unread = 0;
    for (struct dirent *p; !found && (p = readdir(procs));) {
        char *end, path[300], link[64];
        long pid = strtol(p->d_name, &end, 10);
        if (pid <= 0 || *end)
            continue;
        snprintf(path, sizeof path, "/proc/%ld/fd", pid);
        DIR *fds = opendir(path);
        if (!fds) {
            unread |= errno != ENOENT; /* ENOENT: gone, or a kernel thread's */
            continue;
        }
        for (struct dirent *f; !found && (f = readdir(fds));) {
            if (f->d_name[0] == '.')
                continue;
            snprintf(path, sizeof path, "/proc/%ld/fd/%s", pid, f->d_name);
            ssize_t n = readlink(path, link, sizeof link - 1);
            if (n > 0 && (link[n] = '\0', !strcmp(link, want)))
                found = pid;
        }
        closedir(fds);
    }
    closedir(procs);
    return found ? found : unread ? -1 : 0;
}

/* The same socket by /proc/net/unix, where sock_diag cannot be asked: the inode of the
 * one bound to `name` as its binder gave it (a path, or '@' and the abstract name); 0
 * where none is listed. */
unsigned long unix_proc_inode(const char *name)
{
    FILE *f = proc_net_fopen("unix");
    char line[512], path[256];
    unsigned long ino, found = 0;
    while (f && !found && fgets(line, sizeof line, f))
        if (sscanf(line, "%*s %*s %*s %*s %*s %*s %lu %255s", &ino, path) == 2 && !strcmp(path, name))
            found = ino;
    if (f)
        fclose(f);
    return found;
}
