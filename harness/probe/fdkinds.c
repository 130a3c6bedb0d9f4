/* What a held descriptor is: its kind by the kernel's own name (fdkinds.def), so that
 * every kind a workload can be handed is either tried, known to reach nothing, or
 * named as not judged; a kind the table lacks is never taken for harmless. */

#include "probe.h"

#ifndef MQUEUE_MAGIC
#define MQUEUE_MAGIC 0x19800202
#endif

static const struct { const char *name; enum fd_route route; } kinds[] = {
#define FDKIND(ident, name, route) [FK_##ident] = { name, FR_##route },
#include "fdkinds.def"
#undef FDKIND
};

const char *fd_kind_name(enum fd_kind k)
{
    return k == FK_UNKNOWN ? "unknown" : kinds[k].name;
}

enum fd_route fd_kind_route(enum fd_kind k)
{
    return k == FK_UNKNOWN ? FR_UNJUDGED : kinds[k].route;
}

/* `link` gets what /proc/self/fd/N names (an unknown kind is reported by it). */
enum fd_kind fd_kind(int fd, char *link, size_t n)
{
    char proc[64], ns[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    ssize_t l = readlink(proc, link, n - 1);
    link[l > 0 ? l : 0] = 0;
    const char *handle = ns_handle(fd, ns, sizeof ns);
    if (handle)
        return strcmp(handle, "pidfd") ? FK_nsfs : FK_pidfd;
    struct stat st;
    if (fstat(fd, &st) != 0)
        return FK_UNKNOWN;
    if (!strncmp(link, "anon_inode:", 11)) {
        for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
            if (!strcmp(kinds[k].name, link))
                return (enum fd_kind)k;
        return FK_UNKNOWN;
    }
    struct statfs fs;
    if (fstatfs(fd, &fs) == 0 && fs.f_type == MQUEUE_MAGIC && S_ISREG(st.st_mode) &&
        (fcntl(fd, F_GETFL) & O_PATH) == 0)
        return FK_mqueue;
    switch (st.st_mode & S_IFMT) {
    case S_IFREG: return FK_file;
    case S_IFDIR: return FK_dir;
    case S_IFBLK: return FK_block;
    case S_IFCHR: return st.st_rdev == makedev(5, 2) ? FK_pty : FK_chr; /* /dev/ptmx's */
    case S_IFIFO: return FK_fifo;
    case S_IFSOCK: return FK_socket;
    case S_IFLNK: return FK_symlink;
    default: return FK_UNKNOWN;
    }
}
