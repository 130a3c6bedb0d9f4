/* The IPC attempts' other way in: the i386 entry (int $0x80), tried where x86_64's
 * msgget, msgsnd, shmget, shmat, mq_open or mq_timedsend was refused as a filter
 * refuses. System V's calls there by their own numbers (5.1 on), then by the ipc
 * multiplexer (117) that older 32-bit libcs call; the POSIX queue's mq_timedsend, then
 * its time64 twin (418, the entry's alone). Each way in a child of its own, so that a
 * filter which kills on one (SECCOMP_RET_KILL, TRAP) does not hide the next. A filter
 * that matches x86_64's numbers without the architecture, or names the entry's own
 * calls and forgets `ipc`, or mq_timedsend and not its twin, leaves one of them open. */

#include "probe.h"

#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#if defined(__x86_64__)
enum { KILLED = 4096 }; /* -(KILLED + signal): a way whose call killed its child */
enum { LOW_TEXT = 0, LOW_NAME = 1024, LOW_TIME = 2048, LOW_OUT = 2304, LOW_SIZE = 4096 };
/* How long a writer waits for room in a full queue (ipc.c's IPC_ROOM_MS). */
#define ROOM_MS 2000

/* What one way is asked: the canary's key or queue, the line, and (mq) a descriptor
 * already open on the queue (-1: none), the segment's filler, the way's variant. */
struct job {
    key_t key;
    const char *name, *text;
    int fd, alt;
    int (*fill)(void *seg);
};

static long call6(long nr, long a, long b, long c, long d, long e, long f)
{
    const long v[6] = { a, b, c, d, e, f };
    return int80(nr, v);
}

/* The message (a 32-bit struct msgbuf: its mtype is 4 bytes), by msgget and msgsnd, or
 * (alt) by the multiplexer's MSGGET and MSGSND; waiting for room as ipc.c does. */
static long msg_way(const struct job *j, char *low)
{
    size_t n = strlen(j->text);
    int32_t mtype = 1;
    memcpy(low + LOW_TEXT, &mtype, sizeof mtype);
    memcpy(low + LOW_TEXT + sizeof mtype, j->text, n);
    long id = j->alt ? call6(I386_NR_ipc, I386_IPC_MSGGET, j->key, 0, 0, 0, 0)
                     : call6(I386_NR_msgget, j->key, 0, 0, 0, 0, 0);
    if (id < 0)
        return id;
    long p = (long)(uintptr_t)(low + LOW_TEXT);
    double until = now_ms() + ROOM_MS;
    for (;;) {
        long r = j->alt ? call6(I386_NR_ipc, I386_IPC_MSGSND, id, (long)n, IPC_NOWAIT, p, 0)
                        : call6(I386_NR_msgsnd, id, p, (long)n, IPC_NOWAIT, 0, 0);
        if (r != -EAGAIN || now_ms() >= until)
            return r;
        usleep(20 * 1000);
    }
}

/* The segment, by shmget and shmat (its address the answer), or (alt) by the
 * multiplexer's SHMGET and SHMAT (its address written to a 32-bit word); a slot of it
 * claimed and filled by ipc.c's filler (-EBUSY: every slot taken). */
static long shm_way(const struct job *j, char *low)
{
    long id = j->alt ? call6(I386_NR_ipc, I386_IPC_SHMGET, j->key, 0, 0, 0, 0)
                     : call6(I386_NR_shmget, j->key, 0, 0, 0, 0, 0);
    if (id < 0)
        return id;
    uint32_t *out = (uint32_t *)(low + LOW_OUT);
    long at = j->alt ? call6(I386_NR_ipc, I386_IPC_SHMAT, id, 0, (long)(uintptr_t)out, 0, 0)
                     : call6(I386_NR_shmat, id, 0, 0, 0, 0, 0);
    if (at < 0 && at > -4096)
        return at;
    void *seg = (void *)(uintptr_t)(j->alt ? *out : (unsigned long)at);
    return j->fill(seg) == 0 ? 0 : -EBUSY;
}

/* The POSIX queue: opened by mq_open (its name without the leading '/', as the libcs
 * hand it over) unless a descriptor is already held, then mq_timedsend with a 32-bit
 * timespec, or (alt) mq_timedsend_time64 with a 64-bit one. */
static long mq_way(const struct job *j, char *low)
{
    long fd = j->fd;
    if (fd < 0) {
        snprintf(low + LOW_NAME, LOW_TIME - LOW_NAME, "%s", j->name + (j->name[0] == '/'));
        fd = call6(I386_NR_mq_open, (long)(uintptr_t)(low + LOW_NAME), O_WRONLY | O_CLOEXEC, 0, 0, 0, 0);
        if (fd < 0)
            return fd;
    }
    size_t n = strlen(j->text);
    memcpy(low + LOW_TEXT, j->text, n);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += ROOM_MS / 1000;
    if (j->alt) {
        int64_t ts64[2] = { until.tv_sec, until.tv_nsec };
        memcpy(low + LOW_TIME, ts64, sizeof ts64);
    } else {
        int32_t ts32[2] = { (int32_t)until.tv_sec, (int32_t)until.tv_nsec };
        memcpy(low + LOW_TIME, ts32, sizeof ts32);
    }
    return call6(j->alt ? I386_NR_mq_timedsend_time64 : I386_NR_mq_timedsend, fd,
                 (long)(uintptr_t)(low + LOW_TEXT), (long)n, 0, (long)(uintptr_t)(low + LOW_TIME), 0);
}

/* way(j) in a child, its pointers in a page below 4 GiB: 0 if it did the deed, -errno,
 * or -(KILLED + signal). */
static long in_child(long (*way)(const struct job *, char *), const struct job *j)
{
    pid_t pid = fork();
    if (pid < 0)
        return -errno;
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        char *low = mmap(NULL, LOW_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT,
                         -1, 0);
        long r = low == MAP_FAILED ? -ENOMEM : way(j, low);
        _exit(r >= 0 ? 0 : r > -255 ? (int)-r : 255);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -errno;
    if (WIFSIGNALED(st))
        return -(KILLED + WTERMSIG(st));
    return WEXITSTATUS(st) ? -WEXITSTATUS(st) : 0;
}

/* Each way in turn while the one before was refused as a filter refuses (a kill is
 * one): 0 if one did it, or the last way's -errno (a kill as -EPERM); *way names it.
 * IPC386_NONE where there is no i386 entry: nothing was tried. */
static long ways(long (*way)(const struct job *, char *), struct job *j, const char *const names[2],
                 const char **named)
{
    if (!i386_here())
        return IPC386_NONE;
    long r = -ENOSYS;
    for (j->alt = 0; j->alt < 2; j->alt++) {
        *named = names[j->alt];
        r = in_child(way, j);
        if (r <= -KILLED)
            r = -EPERM;
        if (r != -EPERM && r != -EACCES && r != -ENOSYS)
            break;
    }
    return r;
}

long ipc386_msg(key_t key, const char *text, const char **way)
{
    static const char *const names[2] = { "msgget and msgsnd (i386)", "the ipc multiplexer's MSGGET and MSGSND (i386)" };
    struct job j = { .key = key, .text = text, .fd = -1 };
    return ways(msg_way, &j, names, way);
}

long ipc386_shm(key_t key, int (*fill)(void *seg), const char **way)
{
    static const char *const names[2] = { "shmget and shmat (i386)", "the ipc multiplexer's SHMGET and SHMAT (i386)" };
    struct job j = { .key = key, .fill = fill, .fd = -1 };
    return ways(shm_way, &j, names, way);
}

long ipc386_mq(const char *name, int fd, const char *text, const char **way)
{
    static const char *const opened[2] = { "mq_open and mq_timedsend (i386)",
                                           "mq_open and mq_timedsend_time64 (i386)" };
    static const char *const held[2] = { "mq_timedsend (i386)", "mq_timedsend_time64 (i386)" };
    struct job j = { .name = name, .text = text, .fd = fd };
    return ways(mq_way, &j, fd < 0 ? opened : held, way);
}
#else
/* aarch64: its arm32 entry is taken only by a 32-bit program; nothing to try. */
long ipc386_msg(key_t key, const char *text, const char **way)
{
    (void)key, (void)text, (void)way;
    return IPC386_NONE;
}

long ipc386_shm(key_t key, int (*fill)(void *seg), const char **way)
{
    (void)key, (void)fill, (void)way;
    return IPC386_NONE;
}

long ipc386_mq(const char *name, int fd, const char *text, const char **way)
{
    (void)name, (void)fd, (void)text, (void)way;
    return IPC386_NONE;
}
#endif
