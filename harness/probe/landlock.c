/* Landlock, scenario "mechanisms" (facts, for audit only): its ABI version, and
 * whether a ruleset really enforces (a denied folder refused, an allowed one not). */

#include "probe.h"
#include "landlock.h"

void chk_landlock_abi(void)
{
    long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    if (abi < 0)
        unavail("landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)", errno);
    ok_int(abi);
}

void set_nnp(void)
{
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        unavail("prctl(PR_SET_NO_NEW_PRIVS)", errno);
}

void chk_landlock_enforces(void)
{
    char path[1024];
    struct stat st;
    self_path(path, sizeof path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        fail(errno, "open(%s) before restricting", path);
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        fail(0, "%s is not a regular file", path);
    close(fd);

    struct probe_ruleset_attr attr = { .handled_access_fs = LL_FS_READ_FILE };
    long rs = syscall(__NR_landlock_create_ruleset, &attr, sizeof attr, 0);
    if (rs < 0)
        unavail("landlock_create_ruleset(READ_FILE)", errno);
    set_nnp();
    if (syscall(__NR_landlock_restrict_self, rs, 0) != 0)
        unavail("landlock_restrict_self", errno);

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0)
        ok_bool(0, "file still readable after landlock_restrict_self");
    if (errno == EACCES)
        ok_bool(1, NULL);
    fail(errno, "open(%s) after restricting", path);
}

/* landlock_allow_deny's scratch tree: <root>/{allowed,denied}/file, each file
 * holding its directory's name. */
static const char *const ll_dirs[] = { "allowed", "denied" };
static char g_ll_root[1024];

static void ll_path(char *out, size_t cap, const char *dir, const char *file)
{
    snprintf(out, cap, "%s/%s%s%s", g_ll_root, dir, file ? "/" : "", file ? file : "");
}

/* Run before the result is sent; Landlock does not stop it, as the ruleset
 * handles only reading. */
static void ll_cleanup(void)
{
    char p[1200];
    for (size_t i = 0; i < 2; i++) {
        ll_path(p, sizeof p, ll_dirs[i], "file");
        unlink(p);
        ll_path(p, sizeof p, ll_dirs[i], NULL);
        rmdir(p);
    }
    rmdir(g_ll_root);
}

/* A new directory under $TMPDIR, /tmp, /var/tmp, /dev/shm or the cwd, the
 * first that works: 0, or -1 with the errno of the last attempt. */
static int scratch_dir(char *out, size_t cap)
{
    const char *const bases[] = { getenv("TMPDIR"), "/tmp", "/var/tmp", "/dev/shm", "." };
    int e = ENOENT;
    for (size_t i = 0; i < sizeof bases / sizeof bases[0]; i++) {
        if (!bases[i] || !bases[i][0])
            continue;
        snprintf(out, cap, "%s/harness-probe-XXXXXX", bases[i]);
        if (mkdtemp(out))
            return 0;
        e = errno;
    }
    errno = e;
    return -1;
}

static int make_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    ssize_t k = write(fd, text, strlen(text));
    int e = k < 0 ? errno : EIO;
    close(fd);
    errno = e;
    return k == (ssize_t)strlen(text) ? 0 : -1;
}

/* A ruleset handling READ_FILE and READ_DIR with one rule allowing both
 * beneath "allowed": its file stays readable, the one in "denied" is EACCES. */
void chk_landlock_allow_deny(void)
{
    struct probe_ruleset_attr attr = {
        .handled_access_fs = LL_FS_READ_FILE | LL_FS_READ_DIR,
    };
    long rs = syscall(__NR_landlock_create_ruleset, &attr, sizeof attr, 0);
    if (rs < 0)
        unavail("landlock_create_ruleset(READ_FILE | READ_DIR)", errno);

    char p[1200], got[16];
    if (scratch_dir(g_ll_root, sizeof g_ll_root) != 0)
        fail(errno, "no writable directory for the test files ($TMPDIR, /tmp, /var/tmp, /dev/shm, the cwd)");
    g_cleanup = ll_cleanup;
    for (size_t i = 0; i < 2; i++) {
        ll_path(p, sizeof p, ll_dirs[i], NULL);
        if (mkdir(p, 0700) != 0)
            fail(errno, "mkdir(%s)", p);
        ll_path(p, sizeof p, ll_dirs[i], "file");
        if (make_file(p, ll_dirs[i]) != 0)
            fail(errno, "create %s", p);
    }

    ll_path(p, sizeof p, "allowed", NULL);
    struct probe_path_beneath_attr rule;
    rule.allowed_access = LL_FS_READ_FILE | LL_FS_READ_DIR;
    rule.parent_fd = open(p, O_PATH | O_CLOEXEC);
    if (rule.parent_fd < 0)
        fail(errno, "open(%s, O_PATH)", p);
    if (syscall(__NR_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) != 0)
        unavail("landlock_add_rule(PATH_BENEATH)", errno);
    set_nnp();
    if (syscall(__NR_landlock_restrict_self, rs, 0) != 0)
        unavail("landlock_restrict_self", errno);

    ll_path(p, sizeof p, "allowed", "file");
    ssize_t n = read_file(p, got, sizeof got);
    if (n < 0)
        ok_false("reading %s (allowed) failed: %s", p, strerror(errno));
    if (n != 7 || memcmp(got, "allowed", 7) != 0)
        ok_false("%s (allowed) did not read back what was written", p);
    ll_path(p, sizeof p, "denied", "file");
    n = read_file(p, got, sizeof got);
    if (n >= 0)
        ok_false("%s (not allowed) is still readable", p);
    if (errno != EACCES)
        ok_false("reading %s (not allowed) failed with %s, expected EACCES", p, errname(errno));
    ok_bool(1, NULL);
}
