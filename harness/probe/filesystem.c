/* Reads and writes outside the allowed folder by path, scenario "filesystem" (the
 * sentinel, a created and an overwritten file, symlinks, traversal, /proc/<pid>/root,
 * hard links and renames out), and the controls inside it. */

#include "probe.h"

#define READ_MAX 65536
char g_file[READ_MAX]; /* what a file check read */

int has_token(const char *buf, ssize_t n)
{
    return n > 0 && memmem(buf, (size_t)n, o.token, strlen(o.token)) != NULL;
}

/* "<dir>/<prefix><tag>" for a directory option. */
static const char *in_dir(const char **dir, const char *prefix)
{
    static char path[4096];
    const char *d = need(dir);
    snprintf(path, sizeof path, "%s/%s%s", d, prefix, need(&o.tag));
    return path;
}

/* Read path: escaped when the token is in what came back. */
__attribute__((noreturn))
static void read_attempt(const char *path)
{
    need(&o.token);
    ssize_t n = read_file(path, g_file, sizeof g_file);
    if (n < 0)
        outcome(OC_BLOCKED, errno, "read %s", path);
    ev_int("bytes", n);
    if (has_token(g_file, n))
        outcome(OC_ESCAPED, 0, "read the token through %s", path);
    outcome(OC_SUCCEEDED, 0, "read %zd bytes of %s, but no token", n, path);
}

/* Open path for writing with extra flags and write the token: succeeded. */
__attribute__((noreturn))
static void write_attempt(const char *path, int flags)
{
    const char *token = need(&o.token);
    int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | flags, 0644);
    if (fd < 0 && (flags & O_CREAT) && (errno == EPERM || errno == ENOSYS)) {
        /* refused as a filter refuses, not as Landlock, DAC or a read-only mount do
         * (EACCES, EROFS): a file made by the other ways, the verdict naming the way */
        tried("open O_CREAT", -1);
        create_other_ways(path);
        verdict("create", path);
    }
    if (fd < 0)
        outcome(OC_BLOCKED, errno, "open %s", path);
    if (write(fd, token, strlen(token)) != (ssize_t)strlen(token))
        outcome(OC_BLOCKED, errno, "write %s", path);
    close(fd);
    outcome(OC_SUCCEEDED, 0, "wrote the token to %s", path);
}

void chk_fs_read_outside(void) { read_attempt(need(&o.sentinel)); }
void chk_fs_create_outside(void) { write_attempt(outside(T_created), O_CREAT | O_EXCL); }
/* WRITE_FILE alone: no O_TRUNC, which asks for Landlock's TRUNCATE right too (that
 * is fs-truncate-outside's row), so a sandbox that handles TRUNCATE but not
 * WRITE_FILE does not refuse it; the token, longer than the file, replaces it. */
void chk_fs_overwrite_outside(void) { write_attempt(need(&o.overwrite), 0); }
void chk_fs_symlink_planted(void) { read_attempt(need(&o.planted_link)); }

void chk_fs_traversal(void)
{
    char path[4096];
    int n = snprintf(path, sizeof path, "%s", need(&o.allowed_dir));
    for (int i = 0; i < 32 && n > 0 && (size_t)n < sizeof path; i++)
        n += snprintf(path + n, sizeof path - (size_t)n, "/..");
    if (n > 0 && (size_t)n < sizeof path)
        snprintf(path + n, sizeof path - (size_t)n, "%s", need(&o.sentinel));
    read_attempt(path);
}

void chk_fs_symlink_made(void)
{
    const char *target = need(&o.sentinel), *path = in_dir(&o.allowed_dir, "link-");
    need(&o.token);
    if (symlink(target, path) != 0)
        outcome(OC_BLOCKED, errno, "symlink(%s, %s)", target, path);
    read_attempt(path);
}

static void proc_root(const char *root)
{
    char path[4096];
    snprintf(path, sizeof path, "%s%s", root, need(&o.sentinel));
    read_attempt(path);
}

void chk_fs_proc_self_root(void) { proc_root("/proc/self/root"); }

/* pid 1's root, beside the sentinel through it: as rows of held_files (stands.c), held
 * to the grants, so that an init left outside the workload's root is judged by what
 * it lists and writes, whether a sentinel lies there or not. */
void chk_fs_proc_1_root(void)
{
    int root = open("/proc/1/root", O_PATH | O_DIRECTORY | O_CLOEXEC);
    stand_rows(root, "/proc/1/root");
    if (root >= 0)
        close(root);
    proc_root("/proc/1/root");
}

void chk_fs_hardlink_in(void)
{
    const char *target = need(&o.sentinel), *path = in_dir(&o.allowed_dir, "hardlink-");
    need(&o.token);
    if (link(target, path) != 0)
        outcome(OC_BLOCKED, errno, "link(%s, %s)", target, path);
    read_attempt(path);
}

void chk_fs_rename_in(void)
{
    const char *from = need(&o.rename), *to = in_dir(&o.allowed_dir, "renamed-");
    if (rename(from, to) != 0)
        outcome(OC_BLOCKED, errno, "rename(%s, %s)", from, to);
    outcome(OC_SUCCEEDED, 0, "renamed %s to %s", from, to);
}

/* Controls: the allowed directory must work. Read the control file back. */
static void control_read(const char *path)
{
    ssize_t n = read_file(path, g_file, sizeof g_file);
    if (n < 0)
        outcome(OC_FAILED, errno, "read %s", path);
    if (!has_token(g_file, n))
        outcome(OC_FAILED, 0, "%s does not hold the token (%zd bytes)", path, n);
    outcome(OC_OK, 0, "read the token back from %s", path);
}

void chk_fs_allowed_write(void)
{
    const char *path = in_dir(&o.allowed_dir, "control-"), *token = need(&o.token);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        outcome(OC_FAILED, errno, "open %s", path);
    if (write(fd, token, strlen(token)) != (ssize_t)strlen(token))
        outcome(OC_FAILED, errno, "write %s", path);
    close(fd);
    control_read(path);
}

void chk_fs_allowed_read(void)
{
    need(&o.token);
    control_read(in_dir(&o.allowed_dir, "control-"));
}
