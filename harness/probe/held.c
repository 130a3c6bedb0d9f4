/* Routes through the descriptors the workload holds when it starts, scenario
 * "filesystem": each one handed in (fds_at_start lists them before the probe opens
 * anything), read, listed and climbed, to whatever it reaches of the host's; each
 * held file's metadata set to what it was, each pty master's terminal placed; a held
 * pipe's reader and the controlling terminal's session are heldreaders.c's. */

#include "probe.h"
#include <limits.h>
#include <sys/resource.h>

#define MAX_HELD 64
#define MAX_FD_SCAN (1 << 20) /* where /proc/self/fd cannot be listed */
static int g_held[MAX_HELD], g_nheld, g_held_more;

static void held_one(int fd)
{
    if (g_nheld < MAX_HELD)
        g_held[g_nheld++] = fd;
    else
        g_held_more++;
}

/* Called first thing in main, before the probe opens anything: every descriptor
 * open now was handed in by whoever started the probe (a launcher that leaks one),
 * at any number (`exec 1500</` is as good a leak as fd 3): /proc/self/fd's entries,
 * less the descriptor listing them, or without /proc every number below the
 * descriptor limit. Those beyond the first MAX_HELD are counted, not dropped. */
void fds_at_start(void)
{
    DIR *dir = opendir("/proc/self/fd");
    if (dir != NULL) {
        int self = dirfd(dir);
        struct dirent *e;
        while ((e = readdir(dir)) != NULL) {
            char *end;
            long fd = strtol(e->d_name, &end, 10);
            if (e->d_name[0] != '.' && *end == 0 && fd >= 0 && fd <= INT_MAX && fd != self)
                held_one((int)fd);
        }
        closedir(dir);
        return;
    }
    struct rlimit lim;
    long top = getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY
                   ? (long)lim.rlim_cur
                   : MAX_FD_SCAN;
    for (long fd = 0; fd < top && fd < MAX_FD_SCAN; fd++)
        if (fcntl((int)fd, F_GETFD) != -1)
            held_one((int)fd);
}

int held_list(const int **fds, int *more)
{
    *fds = g_held;
    *more = g_held_more;
    return g_nheld;
}

static const char *g_paths[10];
static int g_npaths;
static char g_pathbuf[4096];

/* --sentinel and --more-sentinels: what a route must not reach. */
static void held_targets(void)
{
    if (g_npaths)
        return;
    g_paths[g_npaths++] = need(&o.sentinel);
    snprintf(g_pathbuf, sizeof g_pathbuf, "%s", o.more_sentinels ? o.more_sentinels : "");
    char *save = NULL;
    for (char *p = strtok_r(g_pathbuf, "\n", &save); p && g_npaths < 9; p = strtok_r(NULL, "\n", &save))
        if (p[0] == '/')
            g_paths[g_npaths++] = p;
}

static char g_held_buf[65536];
static int g_held_tried;

/* Read an opened route: escaped when the token is in it. */
static void held_read(int fd, const char *how, const char *whose)
{
    struct stat st;
    ssize_t got = -1;
    g_held_tried++;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        got = pread(fd, g_held_buf, sizeof g_held_buf, 0);
    close(fd);
    if (got > 0 && memmem(g_held_buf, (size_t)got, o.token, strlen(o.token))) {
        ev_str("through", whose);
        outcome(OC_ESCAPED, 0, "read the token through %s (%s)", whose, how);
    }
}

static void held_open(int dirfd, const char *rel, const char *how, const char *whose)
{
    int fd = openat(dirfd, rel, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd >= 0)
        held_read(fd, how, whose);
    else
        g_held_tried++;
}

/* Under a folder (`whose`: how the workload has it): each sentinel by its host path
 * after climbing with ".." to the root of that folder's tree (a folder from outside
 * the sandbox's root climbs to the host's), and every suffix of its path below the
 * folder itself. An overwrite through the climb is tried too: the host's sentinel
 * state shows it. The number of routes tried is the caller's to report. */
int route_dir(int dirfd, const char *whose)
{
    char rel[4096];
    need(&o.token);
    held_targets();
    for (int s = 0; s < g_npaths; s++) {
        int k = 0;
        for (int i = 0; i < 40; i++)
            k += snprintf(rel + k, sizeof rel - (size_t)k, "../");
        snprintf(rel + k, sizeof rel - (size_t)k, "%s", g_paths[s] + 1);
        held_open(dirfd, rel, "\"..\" up from it, then the host path", whose);
        for (const char *p = strchr(g_paths[s] + 1, '/'); p; p = strchr(p + 1, '/'))
            held_open(dirfd, p + 1, "a suffix of the host path below it", whose);
    }
    if (o.overwrite) {
        int k = 0;
        for (int i = 0; i < 40; i++)
            k += snprintf(rel + k, sizeof rel - (size_t)k, "../");
        snprintf(rel + k, sizeof rel - (size_t)k, "%s", o.overwrite + 1);
        int fd = openat(dirfd, rel, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd >= 0) {
            if (write(fd, o.token, strlen(o.token)) < 0)
                ev_int("overwrite_errno", errno);
            close(fd);
            ev_str("overwrote_through", whose);
        }
    }
    return g_held_tried;
}

/* The mount a descriptor lies on, by the mount id /proc/self/fdinfo gives (-1 when
 * the sandbox's own table does not show it: a descriptor from outside its mount
 * namespace, whose /proc/self/fd link then names the path as the launcher saw it). */
int held_mount(int fd)
{
    char path[64], info[512];
    snprintf(path, sizeof path, "/proc/self/fdinfo/%d", fd);
    ssize_t n = read_file(path, info, sizeof info - 1);
    if (n <= 0)
        return -1;
    info[n] = 0;
    const char *m = strstr(info, "mnt_id:");
    int id;
    if (m == NULL || sscanf(m + 7, "%d", &id) != 1)
        return -1;
    for (int i = 0; i < g_nmnt; i++)
        if (g_mnt[i].id == id)
            return i;
    return -1;
}

/* What a held folder or file gives by itself, whatever sentinels lie where: "listed"
 * for a folder whose entries it read, "read" for a file it read a byte of (either
 * through the descriptor or re-opened through /proc/self/fd/N), "" for neither. */
static const char *held_reach(int fd, const struct stat *st)
{
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    if (S_ISDIR(st->st_mode)) {
        int d = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *dir = d >= 0 ? fdopendir(d) : NULL;
        if (dir == NULL) {
            if (d >= 0)
                close(d);
            return "";
        }
        errno = 0;
        int listed = readdir(dir) != NULL || errno == 0;
        closedir(dir);
        return listed ? "listed" : "";
    }
    char c;
    if (pread(fd, &c, 1, 0) >= 0)
        return "read";
    int again = open(proc, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    int got = again >= 0 && pread(again, &c, 1, 0) >= 0;
    if (again >= 0)
        close(again);
    return got ? "read" : "";
}

/* Whether the workload can write through a held folder or file, whatever mode the
 * descriptor was opened in: a folder given a file with O_TMPFILE (no name, gone at
 * close: the folder is not touched), a regular file re-opened for writing through
 * /proc/self/fd/N, nothing written (that re-open goes to the launcher's mount, not
 * the sandbox's read-only view of the file). Never a file with an execute bit (an
 * open for writing makes a concurrent exec of it fail) nor a device. */
static int held_writable(int fd, const struct stat *st)
{
    int w = -1;
    if (S_ISDIR(st->st_mode)) {
        w = openat(fd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
    } else if (S_ISREG(st->st_mode) && !(st->st_mode & 0111)) {
        char proc[64];
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
        w = open(proc, O_WRONLY | O_APPEND | O_CLOEXEC | O_NONBLOCK | O_NOCTTY); /* +a too */
    }
    if (w < 0)
        return 0;
    close(w);
    return 1;
}

static int g_held_rows, g_held_cut;
static char g_changed[2048]; /* held_changed: [label, the ways that went through] */
static size_t g_cn;

/* One row of held_files for descriptor `fd` (named `label`): [label, kind, dev, path,
 * mount point, mount root, access, reach, inode]. `access` is what the workload can do
 * through it: the mode it was opened in ("r", "w", "rw", "path" for O_PATH), made
 * "rw" (or "w" where nothing reads) when a write goes through anyway. A folder's or
 * file's metadata changes that went through (each to what it was) go to held_changed;
 * only a descriptor's held at start (its label a number), not stands.c's rows ("cwd",
 * "/proc/1/root"): only where those lead is judged.
 * A character device here is a held pty master's terminal (held_pty_row): only
 * placed, never opened. */
void held_row(const char *label, int fd, const struct stat *st, const char *opened,
                     int have_mounts)
{
    if (g_ev.n >= sizeof g_ev.s - 10000) {
        g_held_cut++;
        return;
    }
    char proc[64], path[4096];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    ssize_t len = readlink(proc, path, sizeof path - 1);
    path[len > 0 ? len : 0] = 0;
    int m = have_mounts ? held_mount(fd) : -1, pty = S_ISCHR(st->st_mode);
    const char *reach = pty ? "" : held_reach(fd, st), *access = opened;
    if (!pty && !strchr(opened, 'w') && held_writable(fd, st))
        access = reach[0] ? "rw" : "w";
    /* (not a folder climbed to: its path judges it, and a host's / stays untouched) */
    const char *changed = (S_ISDIR(st->st_mode) || S_ISREG(st->st_mode)) && !strstr(label, "/..") &&
                                  label[0] >= '0' && label[0] <= '9' ? meta_unchanged(fd) : "";
    if (changed[0]) {
        size_t room = sizeof g_changed - g_cn;
        int k = snprintf(g_changed + g_cn, room, "%s[\"%s\",\"%s\"]", g_cn ? "," : "", label, changed);
        if (k < 0 || (size_t)k >= room) { /* not reported: the check is an error */
            g_changed[g_cn] = 0;
            g_held_cut++;
        } else {
            g_cn += (size_t)k;
        }
    }
    bput(&g_ev, "%s[", g_held_rows++ ? "," : "");
    bstr(&g_ev, label);
    bput(&g_ev, ",\"%s\",\"%u:%u\",",
         S_ISDIR(st->st_mode) ? "dir" : S_ISBLK(st->st_mode) ? "block" : pty ? "pty" : "file",
         major(st->st_dev), minor(st->st_dev));
    bstr(&g_ev, path);
    bput(&g_ev, ",");
    bstr(&g_ev, m >= 0 ? g_mnt[m].mp : "");
    bput(&g_ev, ",");
    bstr(&g_ev, m >= 0 ? g_mnt[m].root : "");
    bput(&g_ev, ",\"%s\",\"%s\",\"%llu\"]", access, reach, (unsigned long long)st->st_ino);
}

/* The rows held_row left out (the evidence full): the check is then no proof. */
int held_rows_cut(void) { return g_held_cut; }

/* A held folder's ancestors, each a row of its own ("3/..", "3/../.."): ".." from a
 * folder held on the launcher's mount climbs to the host's root whatever the
 * sandbox's own root is, so the folder's grant says nothing of where it leads. */
void held_climb(const char *base, int n, const struct stat *st, int have_mounts)
{
    char label[128];
    int k = snprintf(label, sizeof label, "%s", base);
    int cur = fcntl(n, F_DUPFD_CLOEXEC, 0);
    struct stat was = *st;
    for (int depth = 0; cur >= 0 && depth < 16 && k < (int)sizeof label - 4; depth++) {
        int up = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
        close(cur);
        cur = up;
        struct stat at;
        if (up < 0 || fstat(up, &at) != 0 || (at.st_dev == was.st_dev && at.st_ino == was.st_ino))
            break; /* the top: a root ".." does not leave */
        k += snprintf(label + k, sizeof label - (size_t)k, "/..");
        held_row(label, up, &at, "path", have_mounts);
        was = at;
    }
    if (cur >= 0)
        close(cur);
}

/* Descriptors a held one leads to (a ring's registered files, installed), judged
 * like those held at start; `label` names where each came from ("3:fixed 0"). */
#define MAX_INNER 64
static struct { int fd; char label[32]; } g_inner[MAX_INNER];
static int g_ninner;

static char g_pty_unplaced[128];

/* A pseudo-terminal's master (fdkinds.c: char 5:2): whatever it writes, the process
 * reading its terminal takes as typed. Its row is its terminal's, the slave opened by
 * TIOCGPTPEER as an O_PATH handle (nothing opens the terminal, nothing is written):
 * the slave's device is the devpts instance it lies in, which says whose terminal it
 * is (the judge). One harness cannot place is named in g_pty_unplaced (an error). */
static void held_pty_row(int n, const char *label, const char *opened, int have_mounts)
{
    unsigned index;
    struct stat st;
    int peer = ioctl(n, TIOCGPTN, &index) == 0 ? ioctl(n, TIOCGPTPEER, O_PATH | O_CLOEXEC) : -1;
    if (peer >= 0 && fstat(peer, &st) == 0)
        held_row(label, peer, &st, opened, have_mounts);
    else if (!g_pty_unplaced[0])
        snprintf(g_pty_unplaced, sizeof g_pty_unplaced, "%.16s (%s)", label, errname(errno));
    if (peer >= 0)
        close(peer);
}

static void held_file_row(int n, const char *label, int have_mounts)
{
    struct stat st;
    if (fstat(n, &st) != 0)
        return;
    int flags = fcntl(n, F_GETFL);
    const char *opened = flags < 0             ? ""
                         : (flags & O_PATH)    ? "path"
                         : (flags & O_ACCMODE) == O_WRONLY ? "w"
                         : (flags & O_ACCMODE) == O_RDWR   ? "rw"
                                                           : "r";
    char link[16];
    if (fd_kind(n, link, sizeof link) == FK_pty && !(flags & O_PATH)) /* O_PATH: no ioctl */
        held_pty_row(n, label, opened, have_mounts);
    if (!(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)))
        return;
    held_row(label, n, &st, opened, have_mounts);
    if (S_ISDIR(st.st_mode))
        held_climb(label, n, &st, have_mounts);
}

/* Each folder, regular file, block device or pty master held at start (and each a
 * held ring or socket led to), as [label, kind, dev, path, mount point, mount root,
 * access, reach, inode], and each folder's ancestors by "..", with held_changed: the
 * harness judges them against the grants (a descriptor is a route like any other,
 * sentinel or not). */
static void held_files(void)
{
    int have_mounts = read_mounts() == 0;
    bput(&g_ev, "%s\"held_files\":[", g_ev.n ? "," : "");
    for (int i = 0; i < g_nheld; i++) {
        char label[16];
        snprintf(label, sizeof label, "%d", g_held[i]);
        held_file_row(g_held[i], label, have_mounts);
    }
    for (int i = 0; i < g_ninner; i++)
        held_file_row(g_inner[i].fd, g_inner[i].label, have_mounts);
    bput(&g_ev, "],\"held_changed\":[%s]", g_changed);
    ev_int("held_files_cut", g_held_cut);
    held_ctty(have_mounts ? held_mount : NULL);
}

/* Scenario "privilege" (priv-held-tty): the pty masters held at start, each its
 * terminal's row, and the controlling terminal, as held_files reports them: a host
 * process reads what goes into either as typed (a root shell runs it), beyond every
 * capability and filter the workload holds. Nothing is written, nothing typed. */
void chk_priv_held_tty(void)
{
    int have_mounts = read_mounts() == 0, ptys = 0;
    bput(&g_ev, "%s\"held_files\":[", g_ev.n ? "," : "");
    for (int i = 0; i < g_nheld; i++) {
        char label[16], link[16];
        int flags = fcntl(g_held[i], F_GETFL);
        snprintf(label, sizeof label, "%d", g_held[i]);
        if (flags >= 0 && !(flags & O_PATH) && fd_kind(g_held[i], link, sizeof link) == FK_pty && ++ptys)
            held_pty_row(g_held[i], label, (flags & O_ACCMODE) == O_RDONLY ? "r" : "rw", have_mounts);
    }
    bput(&g_ev, "],\"held_changed\":[]");
    held_ctty(have_mounts ? held_mount : NULL);
    ev_kernel();
    if (g_pty_unplaced[0])
        fail(0, "the pty master held at descriptor %s: its terminal could not be placed", g_pty_unplaced);
    outcome(OC_BLOCKED, 0, "%d pty master(s) among %d descriptors held at start", ptys, g_nheld);
}

static char g_kinds[512], g_unjudged[256], g_pipe_out[32];
static size_t g_kn, g_un;
static void held_route(int n, const char *label, int depth);

/* A held io_uring ring: each personality registered on it (found by a NOP as each of
 * 1 to 65535) is the credentials of whoever registered it, Landlock domain and
 * capabilities included, and a request carrying its number runs as them: each
 * sentinel is opened that way, in the holder's own memory and root. Each file
 * registered on it (a fixed file) is a descriptor it holds too: installed as one of
 * the holder's (IORING_OP_FIXED_FD_INSTALL) and judged like one held at start. A ring
 * harness cannot drive, or a file it cannot install, makes the check an error. */
static void held_ring(int n, const char *label, const char *whose, int depth)
{
    const char *why = "";
    unsigned ids[64];
    int np = uring_held_personalities(n, ids, 64, &why);
    if (np == -EBADE)
        fail(0, "descriptor %s held at start is an io_uring ring harness cannot drive: %s", label, why);
    if (np == RING_REFUSED) { /* the kernel refuses the holder any request on it */
        ev_str("ring_refused", errname(uring_held_refusal()));
        g_held_tried++;
        return;
    }
    ev_int("ring_personalities", np);
    for (int i = 0; i < np; i++)
        for (int s = 0; s < g_npaths; s++) {
            int fd = uring_held_open(n, g_paths[s], ids[i], &why);
            if (fd == -EBADE || fd == RING_REFUSED)
                fail(0, "the io_uring ring held at descriptor %s: %s", label,
                     fd == -EBADE ? why : "io_uring_enter refused after it was let through");
            if (fd >= 0) {
                char how[64];
                snprintf(how, sizeof how, "IORING_OP_OPENAT as its personality %u", ids[i]);
                held_read(fd, how, whose);
            } else {
                g_held_tried++;
            }
        }
    int files = uring_held_files(n);
    if (files < 0 || files > MAX_INNER)
        fail(0, "the io_uring ring held at descriptor %s: %s", label,
             files < 0 ? "its fdinfo shows no registered files" : "more registered files than it installs");
    for (int slot = 0; slot < files; slot++) {
        int fd = uring_held_install(n, (unsigned)slot, &why);
        g_held_tried++;
        if (fd == -EBADF) /* an empty slot */
            continue;
        if (fd < 0) /* EINVAL before 6.8, EACCES under the ring's restrictions: not judged */
            fail(fd < 0 && fd != -EBADE && fd != RING_REFUSED ? -fd : 0,
                 "fixed file %d of the io_uring ring held at descriptor %s could not be installed:"
                 " %s", slot, label, fd == -EBADE ? why : fd == RING_REFUSED ? "io_uring_enter refused"
                 : errname(-fd));
        char inner[32];
        snprintf(inner, sizeof inner, "%.16s:fixed %d", label, slot);
        if (g_ninner == MAX_INNER) /* never judged: never certified blocked */
            fail(0, "more files registered on the io_uring rings held than the %d it judges",
                 MAX_INNER);
        g_inner[g_ninner].fd = fd;
        snprintf(g_inner[g_ninner++].label, sizeof g_inner[0].label, "%s", inner);
        held_route(fd, inner, depth + 1);
    }
}

/* One held unix socket's queue: every descriptor waiting in it (SCM_RIGHTS, queued by
 * whoever holds its peer before the workload started) is one it holds too, as soon as
 * it reads: each message is received (never blocking), and each descriptor in it
 * judged like one held at start. A message of no bytes is a message (a datagram's or
 * a seqpacket's, SCM_RIGHTS alone); only a stream's end, or a seqpacket's, ends it
 * (with SO_PASSCRED set for each read and set back at once, as it was, each
 * seqpacket message carries credentials and its end nothing). At most HELD_MSGS messages: one still waiting after them
 * (FIONREAD, SIOCINQ's, or a peek) makes the check an error. */
#define HELD_MSGS 16
static ssize_t held_recv(int n, struct msghdr *msg, int flags, int passcred)
{
    int on = 1, off = 0;
    passcred = passcred && setsockopt(n, SOL_SOCKET, SO_PASSCRED, &on, sizeof on) == 0;
    ssize_t got = recvmsg(n, msg, flags);
    int e = errno;
    if (passcred) /* set back at once: nothing else runs while it is on */
        setsockopt(n, SOL_SOCKET, SO_PASSCRED, &off, sizeof off);
    errno = e;
    return got;
}

static void held_queue_of(int n, const char *label, int depth, int type)
{
    int cred = 1, m;
    socklen_t len = sizeof cred;
    int passcred = type == SOCK_SEQPACKET && getsockopt(n, SOL_SOCKET, SO_PASSCRED, &cred, &len) == 0
                   && !cred;
    const char *why = NULL;
    for (m = 0; m < HELD_MSGS && !why; m++) {
        char control[CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(16 * sizeof(int))];
        struct iovec iov = { g_held_buf, sizeof g_held_buf };
        struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control,
                              .msg_controllen = sizeof control };
        ssize_t got = held_recv(n, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC, passcred);
        if (got < 0 || (got == 0 && msg.msg_controllen == 0 && type != SOCK_DGRAM))
            break; /* nothing waiting, or its end */
        g_held_tried++;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
            if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
                continue;
            int fds[16], k = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
            memcpy(fds, CMSG_DATA(c), (size_t)k * sizeof(int));
            for (int i = 0; i < k; i++) {
                if (g_ninner == MAX_INNER) /* never judged: never certified blocked */
                    fail(0, "more descriptors queued in the sockets held than the %d it judges", MAX_INNER);
                g_inner[g_ninner].fd = fds[i];
                snprintf(g_inner[g_ninner].label, sizeof g_inner[0].label, "%.16s:queued %d", label, g_ninner);
                held_route(fds[i], g_inner[g_ninner++].label, depth + 1);
            }
        }
        if (msg.msg_flags & MSG_CTRUNC)
            why = "queued more descriptors in one message than harness receives";
    }
    if (!why && m == HELD_MSGS) { /* still waiting: bytes, or a message (control data only) */
        int inq = 0;
        char c;
        struct iovec iov = { &c, 1 };
        struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 }; /* no room: nothing installed */
        ssize_t peek = held_recv(n, &msg, MSG_DONTWAIT | MSG_PEEK, passcred);
        if ((ioctl(n, FIONREAD, &inq) == 0 && inq > 0) || peek > 0 ||
            (peek == 0 && (type == SOCK_DGRAM || (msg.msg_flags & MSG_CTRUNC))))
            why = "still has messages queued after the ones harness receives";
    }
    if (why)
        fail(0, "descriptor %s held at start %s", label, why);
}

/* A held unix socket: its queue (held_queue_of); a listening one's each connection
 * waiting in its backlog (a host client of the launcher's that queued descriptors and
 * hung up) accepted, at most HELD_MSGS, its queue read, then closed. Not an IP
 * listener: its connections are a socket-activated server's own clients. */
static void held_queued(int n, const char *label, int depth)
{
    int domain = 0, type = 0, listening = 0;
    socklen_t len = sizeof domain;
    if (getsockopt(n, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0 || domain != AF_UNIX)
        return;
    len = sizeof type;
    getsockopt(n, SOL_SOCKET, SO_TYPE, &type, &len);
    len = sizeof listening;
    if (getsockopt(n, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || !listening) {
        held_queue_of(n, label, depth, type);
        return;
    }
    for (int c = 0;; c++) {
        struct pollfd p = { .fd = n, .events = POLLIN };
        if (poll(&p, 1, 0) != 1 || !(p.revents & POLLIN))
            return;
        if (c == HELD_MSGS)
            fail(0, "descriptor %s held at start, a unix listener, has more connections waiting than"
                    " the %d harness accepts", label, HELD_MSGS);
        int conn = accept4(n, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (conn < 0)
            return;
        char inner[32];
        snprintf(inner, sizeof inner, "%.12s:accepted %d", label, c);
        g_held_tried++;
        held_queue_of(conn, inner, depth, type);
        close(conn);
    }
}

/* One descriptor, by its kind (fdkinds.def): a folder (or an O_PATH handle to one) is
 * a root to open the sentinels under; a file is read, and re-opened through
 * /proc/self/fd/N (which gives a read that an O_PATH or write-only descriptor does
 * not); a namespace handle's root, a ring's personalities and files and the
 * descriptors queued in a unix socket are routes too (a pty master's terminal is
 * placed by held_files); the write end of a pipe read outside the sandbox is noted (an
 * error); each is reported by its label and kind, and a kind that may lead outside
 * where harness cannot tell makes the check an error. */
static void held_route(int n, const char *label, int depth)
{
    struct stat st;
    char link[128], nsname[64], nskind[24];
    enum fd_kind fk = fd_kind(n, link, sizeof link);
    if (fk == FK_UNKNOWN && fstat(n, &st) != 0)
        return; /* closed since the start */
    const char *ns = fk == FK_nsfs || fk == FK_pidfd ? ns_handle(n, nsname, sizeof nsname) : NULL;
    snprintf(nskind, sizeof nskind, "ns(%.16s)", ns ? ns : "");
    const char *name = fd_kind_name(fk);
    const char *kind = fk == FK_nsfs ? nskind : fk == FK_pidfd ? "pidfd"
                     : fk == FK_UNKNOWN ? link : strncmp(name, "anon_inode:", 11) ? name
                     : name + 11;
    int flags = fcntl(n, F_GETFL);
    if (g_kn < sizeof g_kinds)
        g_kn += (size_t)snprintf(g_kinds + g_kn, sizeof g_kinds - g_kn, "%s%s:%s%s", g_kn ? " " : "",
                                 label, kind, flags >= 0 && (flags & O_PATH) ? "(O_PATH)" : "");
    if (fd_kind_route(fk) == FR_UNJUDGED && g_un < sizeof g_unjudged)
        g_un += (size_t)snprintf(g_unjudged + g_un, sizeof g_unjudged - g_un, "%s%s (%s)",
                                 g_un ? ", " : "", label, kind);
    char proc[64], whose[192];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", n);
    snprintf(whose, sizeof whose, "descriptor %s held at start", label);
    if (ns && (!strcmp(ns, "mnt") || !strcmp(ns, "ns") || !strcmp(ns, "pidfd"))) {
        /* a handle to a mount namespace (or a process's): its root, by setns */
        int why, root = fd_in_ns(n, CLONE_NEWNS, ns_root, NULL, &why);
        g_held_tried += root < 0;
        if (root < 0 && why == NS_LOST) /* no answer: never certified blocked */
            fail(errno, "setns into descriptor %s's mount namespace: nothing came back", label);
        if (root >= 0) {
            snprintf(whose, sizeof whose, "the root of descriptor %s's mount namespace (setns)%s", label,
                     ns_way());
            route_dir(root, whose);
            close(root);
        }
    } else if (fk == FK_io_uring) {
        if (depth > 2)
            fail(0, "an io_uring ring registered in a ring, deeper than harness follows (%s)", label);
        snprintf(whose, sizeof whose, "the io_uring ring held at descriptor %s", label);
        held_ring(n, label, whose, depth);
    } else if (fk == FK_dir) {
        route_dir(n, whose);
        int again = open(proc, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (again >= 0) {
            route_dir(again, whose);
            close(again);
        }
    } else if (fk == FK_socket && depth <= 2 && (depth || n > 2)) { /* not stdio: the
                                                                       * launcher's channel */
        held_queued(n, label, depth);
    } else if (fk == FK_fifo && (depth || n > 2) && held_pipe_outside(n)) {
        if (!g_pipe_out[0]) /* an error once the rest is reported */
            snprintf(g_pipe_out, sizeof g_pipe_out, "%.24s", label);
    } else if (fk == FK_file) {
        int dup = fcntl(n, F_DUPFD_CLOEXEC, 0);
        if (dup >= 0)
            held_read(dup, "read from offset 0", whose);
        int again = open(proc, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (again >= 0)
            held_read(again, "re-opened through /proc/self/fd", whose);
    }
}

/* Every descriptor the workload held when it started, each by its kind (held_route). */
void chk_fs_inherited_fds(void)
{
    need(&o.token);
    held_targets();
    for (int i = 0; i < g_nheld; i++) {
        char label[16];
        snprintf(label, sizeof label, "%d", g_held[i]);
        held_route(g_held[i], label, 0);
    }
    const char *kinds = g_kinds, *unjudged = g_unjudged;
    ev_str("held", kinds);
    ev_int("routes_tried", g_held_tried);
    ev_kernel();
    held_files();
    if (g_held_cut)
        fail(0, "%d rows of held files not reported (too many to report)", g_held_cut);
    if (g_pty_unplaced[0]) /* a terminal whose holder harness cannot tell */
        fail(0, "the pty master held at descriptor %s: its terminal could not be placed",
             g_pty_unplaced);
    if (g_pipe_out[0]) /* not blocked: a process outside takes what it writes */
        fail(0, "descriptor %s held at start is the write end of a pipe whose reader is outside"
                " the sandbox: what reads it harness cannot tell", g_pipe_out);
    if (unjudged[0]) /* not blocked: kinds that may lead outside, not judged */
        fail(0, "held at start, of a kind harness does not judge: %s", unjudged);
    if (g_held_more) /* not blocked: descriptors it never tried */
        fail(0, "%d descriptors held at start, %d beyond the %d it checks", g_nheld + g_held_more,
             g_held_more, MAX_HELD);
    outcome(OC_BLOCKED, 0, "%d descriptors held at start (%s), %d routes through them failed",
            g_nheld, kinds[0] ? kinds : "none", g_held_tried);
}
