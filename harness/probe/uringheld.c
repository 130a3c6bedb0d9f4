/* Scenario "filesystem" (fs-io-uring): the rings the workload holds at start, used where
 * it may set up none of its own (a filter refusing io_uring_setup alone, a held ring's
 * calls left open): an extended attribute of the outside file set through each, as the
 * workload itself, which no seccomp filter sees and Landlock does not govern. */

#include "probe.h"

#include <linux/io_uring.h>

void held_rings_setxattr(const char *path, const char *value)
{
    int e = errno;
    DIR *d = opendir("/proc/self/fd");
    char link[64], target[64];
    for (struct dirent *de; d != NULL && (de = readdir(d)) != NULL;) {
        char *end;
        long fd = strtol(de->d_name, &end, 10);
        if (end == de->d_name || *end || fd == dirfd(d))
            continue;
        snprintf(link, sizeof link, "/proc/self/fd/%ld", fd);
        ssize_t n = readlink(link, target, sizeof target - 1);
        if (n < 0 || (target[n] = '\0', strcmp(target, "anon_inode:[io_uring]")))
            continue;
        if (killed_on_call(__NR_io_uring_enter, fd, 0, 0)) /* SIGSYS (asked in a child): refused */
            break;
        struct io_uring_sqe s;
        memset(&s, 0, sizeof s);
        s.opcode = IORING_OP_SETXATTR;
        s.addr = (uint64_t)(uintptr_t) "user.harness-uring";
        s.addr2 = (uint64_t)(uintptr_t)value;
        s.addr3 = (uint64_t)(uintptr_t)path;
        s.len = (uint32_t)strlen(value);
        const char *why = "";
        if (uring_held_do((int)fd, &s, &why) == 0) { /* a ring it cannot drive: fs-inherited-fds's error */
            closedir(d);
            outcome(OC_SUCCEEDED, 0, "IORING_OP_SETXATTR on %s, by the io_uring ring held at descriptor %ld"
                    " (io_uring_setup refused: %s)", path, fd, errname(e));
        }
    }
    if (d != NULL)
        closedir(d);
    errno = e;
}
