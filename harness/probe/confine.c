/* `probe confine`: a small Landlock launcher, the co-located sandbox shape OpenShell
 * builds on the host's own filesystem view. It handles every filesystem access right
 * the kernel's Landlock ABI knows, allows reading (and executing) beneath each --read
 * path and everything beneath each --write path, keeps only Docker's default
 * capabilities (less CAP_MKNOD), sets no_new_privs, then execs the command after "--". harness uses it
 * for its reference (matrices/local.toml) and its mutants; it is not a check. */

#include "probe.h"
#include "landlock.h"

#define MAX_RULES 64

/* Docker's default capability set (moby's oci/caps/defaults.go), by number, less
 * CAP_MKNOD (27): only Docker's devices cgroup makes that one safe, and a launcher
 * has none, so a device node made in a writable folder would read the host's disk. */
static const int docker_caps[] = { 0, 1, 3, 4, 5, 6, 7, 8, 10, 13, 18, 29, 31 };

static uint64_t handled_rights(int abi)
{
    uint64_t r = LL_FS_ABI1;
    if (abi >= 2)
        r |= LL_FS_REFER;
    if (abi >= 3)
        r |= LL_FS_TRUNCATE;
    if (abi >= 5)
        r |= LL_FS_IOCTL_DEV;
    return r;
}

static void add_rule(int ruleset, const char *path, uint64_t rights)
{
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0)
        fatal(2, "confine: %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode))
        rights &= LL_FS_FILE_RIGHTS; /* a rule on a file takes only a file's rights */
    struct probe_path_beneath_attr rule = { .allowed_access = rights, .parent_fd = fd };
    if (syscall(__NR_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) != 0)
        fatal(2, "confine: landlock_add_rule %s: %s", path, strerror(errno));
    close(fd);
}

/* Keep Docker's default capabilities: the bounding set first, then the others. */
static void docker_capabilities(void)
{
    uint64_t keep = 0;
    for (size_t i = 0; i < sizeof docker_caps / sizeof docker_caps[0]; i++)
        keep |= 1ULL << docker_caps[i];
    for (int cap = 0; cap < 64; cap++)
        if (!(keep >> cap & 1) && prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 1 &&
            prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0)
            fatal(2, "confine: drop capability %d from the bounding set: %s", cap, strerror(errno));
    prctl(PR_CAP_AMBIENT, 4 /* PR_CAP_AMBIENT_CLEAR_ALL */, 0, 0, 0);
    struct cap_header h = { PROBE_CAP_VERSION_3, 0 };
    struct cap_data d[2];
    if (syscall(SYS_capget, &h, d) != 0)
        fatal(2, "confine: capget: %s", strerror(errno));
    for (int i = 0; i < 2; i++) {
        uint32_t k = (uint32_t)(keep >> (32 * i));
        d[i].effective &= k;
        d[i].permitted &= k;
        d[i].inheritable &= k;
    }
    if (syscall(SYS_capset, &h, d) != 0)
        fatal(2, "confine: capset: %s", strerror(errno));
}

void confine_main(int argc, char **argv)
{
    const char *paths[MAX_RULES];
    uint64_t rights[MAX_RULES];
    int n = 0, i = 2;
    for (; i < argc && strcmp(argv[i], "--"); i++) {
        int write = !strcmp(argv[i], "--write");
        if ((!write && strcmp(argv[i], "--read")) || i + 1 >= argc || n == MAX_RULES)
            fatal(2, "usage: probe confine [--read PATH]... [--write PATH]... -- COMMAND...");
        paths[n] = argv[++i];
        rights[n++] = write ? ~0ULL : (LL_FS_EXECUTE | LL_FS_READ_FILE | LL_FS_READ_DIR);
    }
    if (i + 1 >= argc)
        fatal(2, "confine: no command after --");
    int abi = (int)syscall(__NR_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    if (abi < 1)
        fatal(2, "confine: Landlock unavailable: %s", strerror(errno));
    uint64_t handled = handled_rights(abi);
    struct probe_ruleset_attr attr = { .handled_access_fs = handled };
    int ruleset = (int)syscall(__NR_landlock_create_ruleset, &attr, sizeof attr, 0);
    if (ruleset < 0)
        fatal(2, "confine: landlock_create_ruleset: %s", strerror(errno));
    for (int k = 0; k < n; k++)
        add_rule(ruleset, paths[k], rights[k] & handled);
    docker_capabilities();
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        fatal(2, "confine: no_new_privs: %s", strerror(errno));
    if (syscall(__NR_landlock_restrict_self, ruleset, 0) != 0)
        fatal(2, "confine: landlock_restrict_self: %s", strerror(errno));
    close(ruleset);
    execv(argv[i + 1], &argv[i + 1]);
    fatal(127, "confine: exec %s: %s", argv[i + 1], strerror(errno));
}
