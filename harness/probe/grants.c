/* The policy's read-only grants (docs/policy.md), scenario "filesystem": harness's
 * file in each grant reads back (the control), and no kind of change is made there. */

#include "probe.h"
#include <sys/statvfs.h>

/* --granted: harness's own folder in each read-only grant, at the path the sandbox
 * sees it, newline-separated. The next one into dir; 0 when none is left. */
static int next_granted(const char **cur, char *dir, size_t size)
{
    const char *s = *cur;
    while (*s == '\n')
        s++;
    if (!*s)
        return 0;
    size_t n = strcspn(s, "\n");
    snprintf(dir, size, "%.*s", (int)n, s);
    *cur = s + n;
    return 1;
}

static char g_granted[4096]; /* what the control read */

/* The inside control: harness's file in each grant reads back with its token, so a
 * sandbox that blocks every read cannot pass against a policy that allows reading. */
void chk_fs_read_granted(void)
{
    const char *cur = need(&o.granted), *token = need(&o.granted_token);
    char dir[4096], path[4200];
    int n = 0;
    for (; next_granted(&cur, dir, sizeof dir); n++) {
        snprintf(path, sizeof path, "%s/sentinel", dir);
        ssize_t got = read_file(path, g_granted, sizeof g_granted);
        if (got < 0)
            outcome(OC_FAILED, errno, "read %s", path);
        if (!memmem(g_granted, (size_t)got, token, strlen(token)))
            outcome(OC_FAILED, 0, "%s does not hold harness's token (%zd bytes)", path, got);
    }
    outcome(OC_OK, 0, "read harness's file in each of %d read-only grants", n);
}

/* `dir`'s mount made writable again in a mount namespace of the check's own, where
 * it is read-only: a namespace made by the workload's user namespace is that one's,
 * and a read-only flag is locked there only where a more privileged namespace set it
 * (bwrap --unshare-user keeping CAP_SYS_ADMIN sets its binds read-only from inside:
 * unlocked). The other flags are kept, which a remount must. 0 when remounted. */
/* mount_setattr(2) (5.12): what a remount does by the new mount API, which a filter of
 * mount(2) alone leaves open. Its calls took the way where mount(2)'s were refused. */
struct probe_mount_attr { uint64_t attr_set, attr_clr, propagation, userns_fd; };
static int g_by_setattr;

static int by_setattr(const char *path, unsigned recursive, uint64_t clear, uint64_t propagation)
{
    struct probe_mount_attr a = { .attr_clr = clear, .propagation = propagation };
    int r = (int)syscall(442 /* mount_setattr, on every architecture */, AT_FDCWD, path,
                         recursive ? 0x8000U /* AT_RECURSIVE */ : 0U, &a, sizeof a);
    g_by_setattr |= r == 0;
    return r;
}

static int writable_again(const char *dir)
{
    static int own_ns;
    static const struct { unsigned long st, ms; } keep[] = {
        { ST_NOSUID, MS_NOSUID }, { ST_NODEV, MS_NODEV }, { ST_NOEXEC, MS_NOEXEC },
        { ST_NOATIME, MS_NOATIME }, { ST_NODIRATIME, MS_NODIRATIME }, { ST_RELATIME, MS_RELATIME },
    };
    struct statvfs v;
    if (statvfs(dir, &v) != 0 || !(v.f_flag & ST_RDONLY))
        return -1;
    if (!own_ns && (unshare(CLONE_NEWNS) != 0 ||
                    (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 && by_setattr("/", 1, 0, MS_PRIVATE) != 0) ||
                    read_mounts() != 0))
        return -1;
    own_ns = 1;
    const struct mnt *m = NULL;
    for (int i = 0; i < g_nmnt; i++) {
        size_t n = strlen(g_mnt[i].mp);
        if (!strncmp(dir, g_mnt[i].mp, n) && (dir[n] == '/' || !dir[n] || n == 1) &&
            (!m || n >= strlen(m->mp)))
            m = &g_mnt[i];
    }
    unsigned long flags = MS_REMOUNT | MS_BIND;
    for (size_t k = 0; k < sizeof keep / sizeof keep[0]; k++)
        flags |= v.f_flag & keep[k].st ? keep[k].ms : 0;
    if (!m)
        return -1;
    return mount(NULL, m->mp, NULL, flags, NULL) == 0 ? 0 : by_setattr(m->mp, 0, 1 /* MOUNT_ATTR_RDONLY */, 0);
}

/* Every kind of change in each grant's folder, on files fs_setup made writable by
 * anyone: overwrite a byte, create a name, and by every way unlink (remove_name) and
 * truncate (by path, an open with O_TRUNC even for reading, the i386 entry) and the metadata kinds (mode,
 * owner, times, extended attributes, inode flags: by path, the i386 entry, and by a
 * descriptor opened for reading, which a read-only grant allows); a name created where its
 * open is refused as a filter refuses by fs-create-outside's other ways. The host decides. */
static void change_all(const char *dir, const char *tag)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, target_name[T_overwrite_me]);
    int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    tried("write", fd >= 0 && write(fd, "x", 1) == 1 ? 0 : -1);
    if (fd >= 0)
        close(fd);
    snprintf(path, sizeof path, "%s/%s", dir, target_name[T_truncate_me]);
    cut_file(path);
    snprintf(path, sizeof path, "%s/%s-%s", dir, target_name[T_created], tag);
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0644);
    int e = errno;
    tried("create", fd >= 0 ? 0 : -1);
    if (fd >= 0)
        close(fd);
    else if (e == EPERM || e == ENOSYS) /* as a filter refuses: by every way */
        create_other_ways(path);
    snprintf(path, sizeof path, "%s/%s", dir, target_name[T_unlink_me]);
    remove_name(path, 0);
    snprintf(path, sizeof path, "%s/%s", dir, target_name[T_chmod_me]);
    meta_chmod(path);
    snprintf(path, sizeof path, "%s/%s", dir, target_name[T_chown_me]);
    meta_chown(path);
    snprintf(path, sizeof path, "%s/%s", dir, target_name[T_utime_me]);
    meta_utime(path);
    snprintf(path, sizeof path, "%s/%s", dir, target_name[T_xattr_me]);
    meta_xattr(path);
    snprintf(path, sizeof path, "%s/%s", dir, target_name[T_chattr_me]);
    meta_chattr(path);
}

void chk_fs_write_read_only(void)
{
    const char *cur = need(&o.granted), *tag = need(&o.tag);
    char dir[4096], what[4200];
    int n = 0, again = 0;
    for (; next_granted(&cur, dir, sizeof dir); n++) {
        change_all(dir, tag);
        if (!tried_any() && writable_again(dir) == 0) {
            again++; /* each change again, its mount read-write in a namespace of its own */
            change_all(dir, tag);
        }
    }
    snprintf(what, sizeof what, "harness's folder in %d read-only grants%s", n,
             again ? g_by_setattr ? " (its mount made read-write by mount_setattr, mount(2) refused, in a mount"
                                    " namespace of the workload's own)"
                                  : " (its mount remounted read-write in a mount namespace of the workload's own)"
                   : "");
    verdict("change", what);
}
