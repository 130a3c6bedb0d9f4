/* Another way into the same kernel operations: the i386 entry (int $0x80) that an
 * x86_64 kernel with IA32 emulation keeps for 32-bit programs, with numbers of its
 * own. A seccomp filter that matches syscall numbers without checking
 * seccomp_data.arch refuses chmod (90) and lets the i386 chmod (15) through. The
 * write kinds try their calls here too (compat_tried), each result reported to
 * tried() as "<call> (i386)", so a verdict's reason names the way. Where there is no
 * such entry (aarch64, a kernel without IA32 emulation, gVisor), nothing is tried:
 * no line claims a way it could not take. */

#include "probe.h"

#include <sys/mman.h>

#if defined(__x86_64__)
static long int80(long nr, const long v[5])
{
    long ret;
    __asm__ volatile("int $0x80"
                     : "=a"(ret)
                     : "a"(nr), "b"(v[0]), "c"(v[1]), "d"(v[2]), "S"(v[3]), "D"(v[4])
                     : "memory", "r8", "r9", "r10", "r11");
    return ret;
}

/* Is the entry here: does getpid through it answer, in a child (a kernel without
 * the entry, or gVisor, may kill the caller)? 0 if not, errno saying why: a filter's
 * refusal (EPERM), or ENOSYS. */
static int entry_here(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        static const long none[5];
        long r = int80(I386_NR_getpid, none);
        _exit(r == (long)getpid() ? 0 : r < 0 && r > -255 ? (int)-r : 255);
    }
    int status = 0;
    if (pid < 0)
        return 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 1;
    errno = WIFEXITED(status) && WEXITSTATUS(status) < 255 ? WEXITSTATUS(status) : ENOSYS;
    return 0;
}

/* A socket call through the entry: its own number, or where that is refused (a
 * filter on 359 to 373 alone) the socketcall multiplexer, which takes the arguments
 * as an array. `*step` names the way that answered last. */
static long socket_call(long nr, int multiplexed, const long v[3], uint32_t *array,
                        const char *name, const char **step)
{
    static char way[64];
    long args[5] = { v[0], v[1], v[2], 0, 0 };
    long r = int80(nr, args);
    snprintf(way, sizeof way, "%s (i386)", name);
    if (r < 0 && r != -EINTR) {
        for (int i = 0; i < 3; i++)
            array[i] = (uint32_t)v[i];
        long m[5] = { multiplexed, (long)(uintptr_t)array, 0, 0, 0 };
        r = int80(I386_NR_socketcall, m);
        snprintf(way, sizeof way, "socketcall %s (i386)", name);
    }
    *step = way;
    return r;
}

/* Egress through the i386 entry alone (the sweep's i386-tcp4): socket, connect,
 * write and read by int $0x80, each by its own call or through socketcall. Runs in
 * the sweep's child, and blocks; 0 when the exchange ran (reply may be empty), else
 * -1 with errno and *step the way that failed. */
int i386_exchange(const Addr *dst, const char *msg, char *reply, size_t cap, int *src_port,
                  const char **step)
{
    *step = "the i386 entry";
    if (dst->ss_family != AF_INET)
        return errno = EAFNOSUPPORT, -1;
    if (!entry_here())
        return -1;
    char *low = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT,
                     -1, 0);
    if (low == MAP_FAILED)
        return -1;
    size_t n = strlen(msg);
    if (n > 4096 || cap > 8192)
        return errno = EMSGSIZE, -1;
    memcpy(low, dst, sizeof(struct sockaddr_in));
    memcpy(low + 256, msg, n);
    uint32_t *array = (uint32_t *)(low + 128);
    const long sock[3] = { AF_INET, SOCK_STREAM, 0 };
    long fd = socket_call(I386_NR_socket, I386_SYS_SOCKET, sock, array, "socket", step);
    if (fd < 0)
        return errno = (int)-fd, -1;
    const long conn[3] = { fd, (long)(uintptr_t)low, (long)sizeof(struct sockaddr_in) };
    long r = socket_call(I386_NR_connect, I386_SYS_CONNECT, conn, array, "connect", step);
    if (r < 0)
        return errno = (int)-r, -1;
    Addr me;
    socklen_t ml = sizeof me;
    if (getsockname((int)fd, (struct sockaddr *)&me, &ml) == 0)
        *src_port = (int)addr_port(&me);
    long w[5] = { fd, (long)(uintptr_t)(low + 256), (long)n, 0, 0 };
    *step = "write (i386)";
    if ((r = int80(I386_NR_write, w)) < 0)
        return errno = (int)-r, -1;
    long rd[5] = { fd, (long)(uintptr_t)(low + 8192), (long)cap - 1, 0, 0 };
    *step = "read (i386)";
    r = int80(I386_NR_read, rd);
    size_t got = r > 0 ? (size_t)r : 0;
    memcpy(reply, low + 8192, got);
    reply[got] = '\0';
    *step = "socket, connect, write, read (i386)";
    return 0;
}

/* In a child, from call `from` on: first the entry itself (getpid, whose answer
 * proves the entry is there), then each call, each result written to `fd` as it
 * comes, so that a child a filter kills mid-way still said what came before. */
static void run_calls(int fd, const struct compat_call *calls, int from, int n)
{
    char *low = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT,
                     -1, 0);
    static const long none[5];
    long pid = int80(I386_NR_getpid, none);
    long here = (pid == (long)getpid()) ? 1 : 0;
    if (write(fd, &here, sizeof here) != sizeof here || !here || low == MAP_FAILED)
        _exit(1);
    for (int i = from; i < n; i++) {
        long v[5];
        size_t used = 0;
        for (int k = 0; k < 5; k++) {
            const struct compat_arg *a = &calls[i].a[k];
            v[k] = a->v;
            if (a->p && used + a->len <= (1 << 16)) {
                memcpy(low + used, a->p, a->len);
                v[k] = (long)(uintptr_t)(low + used);
                used += (a->len + 15) & ~(size_t)15;
            }
        }
        long r = int80(calls[i].nr, v);
        if (write(fd, &r, sizeof r) != sizeof r)
            _exit(1);
    }
    _exit(0);
}

void compat_tried(const struct compat_call *calls, int n)
{
    char name[96];
    for (int from = 0; from < n;) {
        int p[2];
        if (pipe2(p, O_CLOEXEC) != 0)
            return;
        pid_t pid = fork();
        if (pid < 0) {
            close(p[0]), close(p[1]);
            return;
        }
        if (pid == 0) {
            close(p[0]);
            run_calls(p[1], calls, from, n);
        }
        close(p[1]);
        long here = 0, r;
        int got = read(p[0], &here, sizeof here) == sizeof here && here;
        int i = from;
        for (; got && i < n && read(p[0], &r, sizeof r) == sizeof r; i++) {
            snprintf(name, sizeof name, "%s (i386)", calls[i].name);
            errno = r < 0 ? (int)-r : 0;
            tried(name, r < 0 ? -1 : 0);
        }
        close(p[0]);
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
        if (!got)
            return; /* no i386 entry here (or it cannot be told): nothing tried */
        if (i < n && WIFSIGNALED(status)) {
            /* Killed at call i: a filter's refusal (SECCOMP_RET_KILL). */
            snprintf(name, sizeof name, "%s (i386)", calls[i].name);
            errno = EPERM;
            tried(name, -1);
            i++;
        } else if (i < n) {
            return;
        }
        from = i;
    }
}
#else
int i386_exchange(const Addr *dst, const char *msg, char *reply, size_t cap, int *src_port,
                  const char **step)
{
    (void)dst, (void)msg, (void)cap, (void)src_port;
    reply[0] = '\0';
    *step = "the i386 entry (none on this architecture)";
    return errno = ENOSYS, -1;
}

/* aarch64: its arm32 compat entry is taken only by a 32-bit program (a different
 * instruction set), which the probe is not; nothing to try from here. */
void compat_tried(const struct compat_call *calls, int n)
{
    (void)calls, (void)n;
}
#endif
