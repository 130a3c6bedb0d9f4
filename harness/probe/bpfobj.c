/* A pinned BPF object on a bpffs, for the host kernel's state (kstate.c): whether
 * the workload can open it read-write, every way. */

#include "probe.h"

#include <sys/mman.h>

/* Whether `fd`, got by BPF_OBJ_GET, is a map or a link (a program read-write changes
 * nothing by that alone): 1 or 0; closed. */
static int bpf_state(int fd)
{
    char info[64], line[128];
    int state = 0;
    snprintf(info, sizeof info, "/proc/self/fdinfo/%d", fd);
    FILE *f = fopen(info, "r");
    while (f && !state && fgets(line, sizeof line, f))
        state = !strncmp(line, "map_type:", 9) || !strncmp(line, "link_type:", 10);
    if (f)
        fclose(f);
    close(fd);
    return state;
}

/* A pinned BPF object (a map a policy daemon keeps, a link that attaches a program)
 * opened read-write by its path: BPF_OBJ_GET asks no capability, only the file's mode,
 * and a map got so is the caller's to change (nothing is changed here). Where x86_64's
 * bpf(2) is refused, the i386 entry's (357), in a child (a filter may kill on it), its
 * attr below 4 GiB (*by_i386 set). 0 where it opens. */
int bpf_obj_get(const char *path, int *by_i386)
{
    union {
        struct { uint64_t pathname; uint32_t bpf_fd, file_flags; } get;
        unsigned char pad[128];
    } attr;
    memset(&attr, 0, sizeof attr);
    attr.get.pathname = (uint64_t)(uintptr_t)path;
    int fd = (int)syscall(SYS_bpf, 7 /* BPF_OBJ_GET */, &attr, sizeof attr);
    if (fd >= 0)
        return bpf_state(fd) ? 0 : -1;
#if defined(__x86_64__)
    static int here = -1;
    if ((errno != EPERM && errno != ENOSYS) || (here < 0 && (here = i386_here()) == 0) || !here)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        void *low = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
        if (low == MAP_FAILED)
            _exit(1);
        memcpy(low, &attr, sizeof attr);
        long v[6] = { 7, (long)(uintptr_t)low, (long)sizeof attr }, got = int80(I386_NR_bpf, v);
        _exit(got >= 0 && bpf_state((int)got) ? 0 : 1);
    }
    int status = 0;
    pid_t got = -1;
    while (pid > 0 && (got = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
        ;
    if (got == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return *by_i386 = 1, 0;
#endif
    return -1;
}
