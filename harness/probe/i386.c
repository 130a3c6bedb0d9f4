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
/* Call nr through the entry with six arguments (the sixth in ebp, which the
 * compiler may not be told is clobbered: saved and restored around the call, below
 * the red zone). Its answer, -errno on failure. */
long int80(long nr, const long v[6])
{
    long ret;
    __asm__ volatile("sub $128, %%rsp\n\tpush %%rbp\n\tmov %7, %%rbp\n\tint $0x80\n\t"
                     "pop %%rbp\n\tadd $128, %%rsp"
                     : "=a"(ret)
                     : "a"(nr), "b"(v[0]), "c"(v[1]), "d"(v[2]), "S"(v[3]), "D"(v[4]), "r"(v[5])
                     : "memory", "r8", "r9", "r10", "r11", "cc");
    return ret;
}

/* Is the entry here: does getpid through it answer, in a child (a kernel without
 * the entry, or gVisor, may kill the caller)? 0 if not, errno saying why: a filter's
 * refusal (EPERM), or ENOSYS. */
int i386_here(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        static const long none[6];
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

/* In a child, from call `from` on: first the entry itself (getpid, whose answer
 * proves the entry is there), then each call, each result written to `fd` as it
 * comes, so that a child a filter kills mid-way still said what came before. */
static void run_calls(int fd, const struct compat_call *calls, int from, int n)
{
    char *low = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT,
                     -1, 0);
    static const long none[6];
    long pid = int80(I386_NR_getpid, none);
    long here = (pid == (long)getpid()) ? 1 : 0;
    if (write(fd, &here, sizeof here) != sizeof here || !here || low == MAP_FAILED)
        _exit(1);
    for (int i = from; i < n; i++) {
        long v[6] = { 0 };
        size_t used = 0;
        for (int k = 0; k < 6; k++) {
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

void compat_tried(const struct compat_call *calls, int n) { compat_tried_as(calls, n, 0); }

void compat_tried_as(const struct compat_call *calls, int n, int done_as)
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
            tried(name, r < 0 && (!done_as || r != -done_as) ? -1 : 0);
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

/* Whether rings are made and entered through the entry: io_uring_setup and an empty
 * io_uring_enter there, in a child (a filter may kill on either). */
static int i386_rings(void)
{
    static int ok = -1;
    if (ok >= 0)
        return ok;
    pid_t pid = fork();
    if (pid == 0) {
        void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
        long v[6] = { 1, (long)(uintptr_t)p }, fd = p == MAP_FAILED ? -1 : int80(I386_NR_io_uring_setup, v);
        long e[6] = { fd };
        _exit(fd >= 0 && int80(I386_NR_io_uring_enter, e) >= 0 ? 0 : 1);
    }
    int status = 0;
    pid_t got = -1;
    while (pid > 0 && (got = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
        ;
    ok = got == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    return ok;
}

int i386_ring_setup(unsigned entries, void *params, size_t len)
{
    static void *low;
    if (!i386_rings())
        return errno = ENOSYS, -1;
    if (!low && (low = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0)) == MAP_FAILED)
        low = NULL;
    if (!low || len > 4096)
        return errno = ENOMEM, -1;
    memcpy(low, params, len);
    long v[6] = { (long)entries, (long)(uintptr_t)low }, fd = int80(I386_NR_io_uring_setup, v);
    memcpy(params, low, len);
    return fd < 0 ? (errno = (int)-fd, -1) : (int)fd;
}

long i386_ring_enter(int fd, unsigned n, unsigned wait, unsigned flags)
{
    long v[6] = { fd, (long)n, (long)wait, (long)flags }, r = int80(I386_NR_io_uring_enter, v);
    return r < 0 ? (errno = (int)-r, -1) : r;
}
/* Copy string s below 4 GiB at *used within low: its 32-bit address there. */
static uint32_t put_low(char *low, size_t *used, size_t cap, const char *s)
{
    size_t n = strlen(s) + 1;
    if (*used + n > cap)
        return 0;
    memcpy(low + *used, s, n);
    *used += n;
    return (uint32_t)(uintptr_t)(low + *used - n);
}

/* A pointer array (argv, envp) of 32-bit pointers below 4 GiB, as a 32-bit program
 * passes it: its address, or 0 where it does not fit. */
static uint32_t put_array(char *low, size_t *used, size_t cap, char *const v[])
{
    size_t k = 0;
    while (v && v[k])
        k++;
    *used = (*used + 3) & ~(size_t)3;
    uint32_t *arr = (uint32_t *)(void *)(low + *used);
    if (*used + (k + 1) * 4 > cap)
        return 0;
    *used += (k + 1) * 4;
    for (size_t i = 0; i < k; i++)
        if ((arr[i] = put_low(low, used, cap, v[i])) == 0)
            return 0;
    arr[k] = 0;
    return (uint32_t)(uintptr_t)arr;
}

void exec_i386(const char *path, char *const argv[], char *const envp[], int by_handle)
{
    const size_t cap = 1 << 16;
    char *low = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
    if (low == MAP_FAILED)
        return;
    size_t used = 0;
    uint32_t name = put_low(low, &used, cap, by_handle ? "" : path), av = put_array(low, &used, cap, argv),
             ev = put_array(low, &used, cap, envp);
    if (!name || !av || !ev) {
        errno = E2BIG;
        return;
    }
    long r;
    if (by_handle) {
        int fd = open(path, O_PATH); /* not close-on-exec: execveat runs it */
        if (fd < 0)
            return;
        long v[6] = { fd, name, av, ev, AT_EMPTY_PATH };
        r = int80(I386_NR_execveat, v);
    } else {
        long v[6] = { name, av, ev };
        r = int80(I386_NR_execve, v);
    }
    errno = r < 0 ? (int)-r : EIO;
}

long i386_getdents(int fd, int wide, void *buf, size_t cap)
{
    int p[2];
    if (cap > 32768 || pipe2(p, O_CLOEXEC) != 0)
        return errno = EINVAL, -1;
    pid_t pid = fork();
    if (pid == 0) {
        char *low = mmap(NULL, 32768, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
        static const long none[6];
        long r = low == MAP_FAILED ? -ENOMEM : int80(I386_NR_getpid, none); /* the entry here? */
        if (r == (long)getpid()) {
            long v[6] = { fd, (long)(uintptr_t)low, (long)cap };
            r = int80(wide ? I386_NR_getdents64 : I386_NR_getdents, v);
        } else if (r >= 0 || r < -4095) {
            r = -ENOSYS;
        }
        if (write(p[1], &r, sizeof r) == sizeof r && r > 0 && write(p[1], low, (size_t)r) != r)
            _exit(1);
        _exit(0);
    }
    close(p[1]);
    long r = pid < 0 ? -errno : -ENOSYS;
    int answered = pid > 0 && read(p[0], &r, sizeof r) == sizeof r, status = 0;
    if (answered && r > 0 && recv_until(p[0], buf, (size_t)r, 0, check_end()) != (size_t)r)
        r = -EIO;
    close(p[0]);
    while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (pid > 0 && !answered && WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS)
        r = -EPERM; /* a filter's refusal (SECCOMP_RET_KILL); another death: no such entry */
    return r < 0 ? (errno = (int)-r, -1) : r;
}
#else
/* aarch64: its arm32 compat entry is taken only by a 32-bit program (a different
 * instruction set), which the probe is not; nothing to try from here. */
void compat_tried(const struct compat_call *calls, int n)
{
    (void)calls, (void)n;
}

void compat_tried_as(const struct compat_call *calls, int n, int done_as)
{
    (void)calls, (void)n, (void)done_as;
}

int i386_ring_setup(unsigned entries, void *params, size_t len)
{
    (void)entries, (void)params, (void)len;
    return errno = ENOSYS, -1;
}

long i386_ring_enter(int fd, unsigned n, unsigned wait, unsigned flags)
{
    (void)fd, (void)n, (void)wait, (void)flags;
    return errno = ENOSYS, -1;
}

void exec_i386(const char *path, char *const argv[], char *const envp[], int by_handle)
{
    (void)path, (void)argv, (void)envp, (void)by_handle;
    errno = ENOSYS;
}

long i386_getdents(int fd, int wide, void *buf, size_t cap)
{
    (void)fd, (void)wide, (void)buf, (void)cap;
    return errno = ENOSYS, -1;
}
#endif
