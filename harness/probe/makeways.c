/* The other ways into the make kinds (fs-create-outside, fs-mkdir-outside,
 * fs-symlink-outside, fs-mkfifo-outside, fs-socket-outside): the i386 entry's calls and io_uring's
 * opcodes. A launcher that leaves a Landlock MAKE_* right unhandled (an older ABI, or
 * a right forgotten) and refuses x86_64's calls by a filter in its place leaves these
 * open unless its filter checks the architecture and refuses io_uring. They are tried
 * only where every native call was refused as a filter refuses (refused_as_filter:
 * EPERM or ENOSYS), never where Landlock, DAC or a read-only mount refused it (EACCES,
 * EROFS), which refuse every way alike: a correct sandbox pays nothing. Each result
 * goes to tried() as "<call> (i386)" or "<opcode> (io_uring)", so the verdict's reason
 * names the way. */

#include "probe.h"

#include <linux/io_uring.h>

#ifndef IORING_OP_BIND
#define IORING_OP_BIND 56 /* 6.11 */
#endif

/* One request on a ring of its own, reported as "<name> (io_uring)": a ring refused
 * (io_uring_setup's EPERM) is a refusal too. Where x86_64's io_uring_setup is refused,
 * the ring is set up and entered through the i386 entry (a filter that refuses
 * x86_64's io_uring calls alone), and the way says so. The request's result (a
 * descriptor, 0), or -1. */
static char label[128]; /* uring_tried's last way, as told */
static int uring_tried(const struct io_uring_sqe *sqe, const char *name)
{
    const char *step;
    g_ring_i386_may = 1;
    int r = uring_one(sqe, name, &step);
    const char *i386 = *uring_i386_way() ? ", its ring set up through the i386 entry" : "";
    snprintf(label, sizeof label, "%s (io_uring%s)", name, i386);
    tried(label, r < 0 ? -1 : 0);
    return r;
}

void mkdir_other_ways(const char *path)
{
    size_t n = strlen(path) + 1;
    const struct compat_call i386[] = {
        { "mkdir", I386_NR_mkdir, { CP(path, n), CV(0755) } },
        { "mkdirat", I386_NR_mkdirat, { CV(AT_FDCWD), CP(path, n), CV(0755) } },
    };
    compat_tried(i386, 2);
    if (tried_any())
        return; /* made: io_uring's would find it there */
    struct io_uring_sqe s = { .opcode = IORING_OP_MKDIRAT, .fd = AT_FDCWD, .len = 0755 };
    s.addr = (unsigned long long)(uintptr_t)path;
    uring_tried(&s, "IORING_OP_MKDIRAT");
}

void symlink_other_ways(const char *target, const char *path)
{
    size_t n = strlen(path) + 1, t = strlen(target) + 1;
    const struct compat_call i386[] = {
        { "symlink", I386_NR_symlink, { CP(target, t), CP(path, n) } },
        { "symlinkat", I386_NR_symlinkat, { CP(target, t), CV(AT_FDCWD), CP(path, n) } },
    };
    compat_tried(i386, 2);
    if (tried_any())
        return;
    struct io_uring_sqe s = { .opcode = IORING_OP_SYMLINKAT, .fd = AT_FDCWD };
    s.addr = (unsigned long long)(uintptr_t)target;
    s.addr2 = (unsigned long long)(uintptr_t)path;
    uring_tried(&s, "IORING_OP_SYMLINKAT");
}

/* A named pipe or a socket file by mknod (io_uring has no mknod of its own). */
void mknod_other_ways(const char *path, unsigned mode)
{
    size_t n = strlen(path) + 1;
    const char *fifo = S_ISFIFO(mode) ? "mknod S_IFIFO" : "mknod S_IFSOCK";
    const char *fifoat = S_ISFIFO(mode) ? "mknodat S_IFIFO" : "mknodat S_IFSOCK";
    const struct compat_call i386[] = {
        { fifo, I386_NR_mknod, { CP(path, n), CV(mode), CV(0) } },
        { fifoat, I386_NR_mknodat, { CV(AT_FDCWD), CP(path, n), CV(mode), CV(0) } },
    };
    compat_tried(i386, 2);
}

/* A unix socket made and bound by the ring (IORING_OP_SOCKET, IORING_OP_BIND: 6.11+),
 * where socket(2) or bind(2) is refused; `a`'s name relative to the working folder. */
/* A unix socket bound through the i386 entry (bind, then socketcall's SYS_BIND): the
 * socket made anyhow (socket(2), a socket of a pair, or that entry's socket), as
 * unbound either way. */
static void bind_i386(const struct sockaddr_un *a)
{
    const char *step = "socket(AF_UNIX)";
    int sv[2] = { -1, -1 }, s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0 && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0)
        s = sv[0];
    if (s < 0 && (s = i386_socket(AF_UNIX, SOCK_STREAM, 0, &step)) < 0) {
        if (errno != ENOSYS) /* the entry is there, and refused it */
            tried("socket(AF_UNIX) (i386)", -1);
        return;
    }
    int r = i386_bind(s, (const struct sockaddr *)a, sizeof *a, &step);
    if (r == 0 || errno != ENOSYS)
        tried(step, r); /* "bind (i386)" or "socketcall bind (i386)" */
    close(s);
    if (sv[1] >= 0)
        close(sv[1]);
}

void bind_other_ways(const struct sockaddr_un *a)
{
    const char *step;
    bind_i386(a);
    if (tried_any())
        return;
    struct io_uring_sqe mk = { .opcode = IORING_OP_SOCKET, .fd = AF_UNIX, .off = SOCK_STREAM | SOCK_CLOEXEC };
    int s = uring_one(&mk, "IORING_OP_SOCKET", &step);
    if (s < 0) { /* the socket alone makes nothing: only its refusal is told */
        tried("IORING_OP_SOCKET (io_uring)", -1);
        return;
    }
    struct io_uring_sqe b = { .opcode = IORING_OP_BIND, .fd = s };
    b.addr = (unsigned long long)(uintptr_t)a;
    b.addr2 = sizeof *a;
    uring_tried(&b, "IORING_OP_SOCKET and IORING_OP_BIND");
    close(s);
}

/* Whether a way made the regular file `path`: it went through, or the file is there
 * after it though its open failed (Landlock makes the file where MAKE_REG is unhandled,
 * and only then refuses to open it for writing, WRITE_FILE): then it is told as done. */
static int reg_made(const char *path, const char *way, int before)
{
    struct stat st;
    if (tried_any() == before && lstat(path, &st) == 0)
        tried(way, 0);
    return tried_any() > before;
}

/* A regular file made by every other way, where the open with O_CREAT was refused as a
 * filter refuses (a deny-list of the creating opens, by their flags, in place of
 * MAKE_REG left unhandled; seccomp cannot read openat2's flags, so such a list refuses
 * openat2 whole): x86_64's openat, creat, openat2 and mknod(S_IFREG), any of which a
 * list may forget; the i386 entry's open, openat, creat, openat2, mknod and mknodat,
 * which a list of x86_64's numbers lets through; io_uring's IORING_OP_OPENAT and
 * _OPENAT2, which no filter on the calls sees. Each call alone (a child each for the
 * i386 entry's), to the first that made it. */
void create_other_ways(const char *path)
{
    const int fl = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, before = tried_any();
    struct { uint64_t flags, mode, resolve; } how = { fl, 0644, 0 }; /* struct open_how */
    size_t n = strlen(path) + 1;
    const struct { const char *name; long nr; long a[4]; } native[] = {
        { "openat O_CREAT", SYS_openat, { AT_FDCWD, (long)path, fl, 0644 } },
#ifdef SYS_creat
        { "creat", SYS_creat, { (long)path, 0644 } },
#endif
        { "openat2 O_CREAT", 437, { AT_FDCWD, (long)path, (long)&how, sizeof how } },
#ifdef SYS_mknod
        { "mknod S_IFREG", SYS_mknod, { (long)path, S_IFREG | 0644, 0 } },
#endif
        { "mknodat S_IFREG", SYS_mknodat, { AT_FDCWD, (long)path, S_IFREG | 0644, 0 } },
    };
    for (size_t i = 0; i < sizeof native / sizeof native[0]; i++) {
        long r = syscall(native[i].nr, native[i].a[0], native[i].a[1], native[i].a[2], native[i].a[3]);
        if (r > 0 && strncmp(native[i].name, "mknod", 5))
            close((int)r);
        tried(native[i].name, r < 0 ? -1 : 0);
        if (reg_made(path, native[i].name, before))
            return;
    }
    const struct compat_call i386[] = {
        { "open O_CREAT", I386_NR_open, { CP(path, n), CV(fl), CV(0644) } },
        { "openat O_CREAT", I386_NR_openat, { CV(AT_FDCWD), CP(path, n), CV(fl), CV(0644) } },
        { "creat", I386_NR_creat, { CP(path, n), CV(0644) } },
        { "openat2 O_CREAT", I386_NR_openat2, { CV(AT_FDCWD), CP(path, n), CP(&how, sizeof how), CV(sizeof how) } },
        { "mknod S_IFREG", I386_NR_mknod, { CP(path, n), CV(S_IFREG | 0644), CV(0) } },
        { "mknodat S_IFREG", I386_NR_mknodat, { CV(AT_FDCWD), CP(path, n), CV(S_IFREG | 0644), CV(0) } },
    };
    char way[64];
    for (int i = 0; i < 6; i++) {
        compat_tried(&i386[i], 1);
        snprintf(way, sizeof way, "%s (i386)", i386[i].name);
        if (reg_made(path, way, before))
            return;
    }
    struct io_uring_sqe s = { .opcode = IORING_OP_OPENAT, .fd = AT_FDCWD, .len = 0644, .open_flags = (unsigned)fl };
    s.addr = (unsigned long long)(uintptr_t)path;
    int fd = uring_tried(&s, "IORING_OP_OPENAT O_CREAT");
    if (fd >= 0)
        close(fd);
    if (reg_made(path, label, before))
        return;
    s.opcode = IORING_OP_OPENAT2, s.len = sizeof how, s.addr2 = (unsigned long long)(uintptr_t)&how;
    if ((fd = uring_tried(&s, "IORING_OP_OPENAT2 O_CREAT")) >= 0)
        close(fd);
    reg_made(path, label, before);
}
