/* The kernel, scenario "mechanisms" (facts): its release and machine; and its
 * identity as evidence (ev_kernel), so the harness can tell a shared kernel from a
 * sandbox's own. */

#include "probe.h"
#include <sys/personality.h>

void chk_kernel_release(void)
{
    struct utsname u;
    if (kernel_uname(&u) != 0)
        fail(errno, "uname");
    ok_str(u.release);
}

void chk_kernel_machine(void)
{
    struct utsname u;
    if (kernel_uname(&u) != 0)
        fail(errno, "uname");
    ok_str(u.machine);
}

/* The boot id, if it can be trusted: read twice from a file on a proc
 * filesystem (a file bound over it, or another proc file that changes on every
 * read, such as .../uuid, gives ""). */
void read_boot_id(char *id, size_t cap)
{
    const char *p = "/proc/sys/kernel/random/boot_id";
    char again[64];
    struct statfs sf;
    id[0] = '\0';
    if (statfs(p, &sf) != 0 || sf.f_type != PROC_SUPER_MAGIC)
        return;
    ssize_t n = read_file(p, id, cap - 1), m = read_file(p, again, sizeof again - 1);
    if (n <= 0 || n != m || memcmp(id, again, (size_t)n)) {
        id[0] = '\0';
        return;
    }
    id[n] = '\0';
    if (id[n - 1] == '\n')
        id[n - 1] = '\0';
}

static void personality_call(void *arg)
{
    (void)arg;
    personality(0xffffffff);
}

/* uname(2) as the kernel is: a UNAME26 personality (setarch --uname-2.6) makes the
 * release up, and would pass for another kernel's. The probe drops it first. Where a
 * filter kills on personality(2) (SIGSYS, asked in a child), a "2.6." release is
 * taken from /proc/sys/kernel/osrelease, which no personality changes. */
int kernel_uname(struct utsname *u)
{
    static int killed = -1;
    if (killed < 0)
        killed = killed_on(personality_call, NULL);
    int p = killed ? -1 : personality(0xffffffff);
    if (p != -1 && (p & UNAME26))
        personality((unsigned long)(p & ~UNAME26));
    int r = uname(u);
    if (r == 0 && killed && !strncmp(u->release, "2.6.", 4)) {
        char rel[sizeof u->release];
        ssize_t n = read_file("/proc/sys/kernel/osrelease", rel, sizeof rel - 1);
        if (n <= 0)
            return errno = EPERM, -1; /* no release to trust */
        rel[n] = '\0';
        rel[strcspn(rel, "\n")] = '\0';
        memcpy(u->release, rel, sizeof rel);
    }
    return r;
}

/* This kernel's identity, so the harness can tell a shared kernel from a
 * sandbox's own: the boot id (empty when unreadable or untrusted) and the release. */
void ev_kernel(void)
{
    char id[64];
    struct utsname u;
    read_boot_id(id, sizeof id);
    ev_str("boot_id", id);
    ev_str("release", kernel_uname(&u) == 0 ? u.release : "");
}
