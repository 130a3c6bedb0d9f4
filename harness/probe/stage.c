/* Mode "stage": inside a sandbox something else started (the exec runtime kind), the
 * probe makes what harness makes on the host for the other runtimes, since no folder
 * is shared: the allowed folder with its planted link, and the privilege helpers,
 * copies of itself that are setuid-root, setgid-root, carry cap_net_raw+ep, carry
 * every capability inheritable, or have bytes appended (`other`).
 *
 *   probe stage DIR LINK [--helpers]
 *
 * Prints one line NAME=ok|failed|failed-nosuid per helper. A helper that could not be
 * made as it must be (a setuid copy not owned by root, where the stager is not root;
 * any set-id or capability copy on a nosuid mount, where the kernel ignores both) is
 * not left, never a plain copy: running it would prove nothing, and a missing helper
 * makes its check an error, not "blocked". */

#include "probe.h"

#include <limits.h>
#include <sys/statfs.h>
#include <sys/xattr.h>

#define OTHER_TAIL "\nharness: another binary\n" /* as the host's helpers-setup.sh */

/* struct vfs_cap_data, revision 2, little-endian, the effective flag set. */
static const uint32_t CAP_NET_RAW_EP[5] = { 0x02000001U, 1U << PROBE_CAP_NET_RAW, 0, 0, 0 };
static const uint32_t CAP_ALL_EI[5] = { 0x02000001U, 0, 0xffffffffU, 0, 0xffffffffU };

/* Copy this program to `path` (a new file), with `tail` appended; 0, or -1. */
static int copy_self(const char *path, const char *tail)
{
    int in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return -1;
    int out = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
    if (out < 0) {
        close(in);
        return -1;
    }
    char buf[65536];
    ssize_t n;
    int bad = 0;
    while ((n = read(in, buf, sizeof buf)) > 0)
        if (write(out, buf, (size_t)n) != n)
            bad = 1;
    if (n < 0 || (tail && write(out, tail, strlen(tail)) != (ssize_t)strlen(tail)))
        bad = 1;
    close(in);
    if (close(out) || bad)
        return -1;
    return 0;
}

/* Make helper `name` in `dir`: owner root where `mode` has a set-id bit (chown first,
 * which would clear it), then the mode, then the capability; checked as made. */
static void make_helper(const char *dir, const char *name, mode_t mode, const uint32_t *cap, int nosuid)
{
    char path[PATH_MAX];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    /* On a nosuid mount a set-id bit or a file capability is ignored: such a helper
     * would run as a plain program and pass for a sandbox that refuses it. */
    if (nosuid && (mode & (S_ISUID | S_ISGID) || cap)) {
        printf("%s=failed-nosuid\n", name);
        return;
    }
    int ok = !copy_self(path, strcmp(name, "other") ? NULL : OTHER_TAIL);
    if (ok && mode & (S_ISUID | S_ISGID))
        ok = !chown(path, 0, 0);
    ok = ok && !chmod(path, mode);
    if (ok && cap)
        ok = !setxattr(path, "security.capability", cap, 5 * sizeof *cap, 0);
    ok = ok && !stat(path, &st) && (st.st_mode & 07777) == mode
         && (!(mode & (S_ISUID | S_ISGID)) || (st.st_uid == 0 && st.st_gid == 0));
    if (!ok)
        unlink(path);
    printf("%s=%s\n", name, ok ? "ok" : "failed");
}

__attribute__((noreturn)) void stage_main(int argc, char **argv)
{
    if (argc < 4 || argc > 5 || (argc == 5 && strcmp(argv[4], "--helpers")))
        fatal(2, "usage: probe stage DIR LINK [--helpers]");
    const char *dir = argv[2], *link = argv[3];
    char path[PATH_MAX];
    umask(022);
    snprintf(path, sizeof path, "%s/allowed", dir);
    if (mkdir(path, 0777) || chmod(path, 0777))
        fatal(2, "stage: mkdir %s: %s", path, strerror(errno));
    if (*link) {
        snprintf(path, sizeof path, "%s/allowed/planted-link", dir);
        if (symlink(link, path))
            fatal(2, "stage: symlink %s: %s", path, strerror(errno));
    }
    if (argc == 5) {
        snprintf(path, sizeof path, "%s/helpers", dir);
        if (mkdir(path, 0755) || chmod(path, 0755))
            fatal(2, "stage: mkdir %s: %s", path, strerror(errno));
        struct statfs sf;
        int nosuid = statfs(path, &sf) == 0 && sf.f_flags & 2 /* ST_NOSUID */;
        make_helper(path, "setuid", 04755, NULL, nosuid);
        make_helper(path, "setgid", 02755, NULL, nosuid);
        make_helper(path, "fcap", 0755, CAP_NET_RAW_EP, nosuid);
        make_helper(path, "inh", 0755, CAP_ALL_EI, nosuid);
        make_helper(path, "other", 0755, NULL, nosuid);
    }
    fflush(stdout);
    exit(0);
}
