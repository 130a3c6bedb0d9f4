/* System V and POSIX IPC: a workload in the host's IPC namespace hands bytes to a
 * host process through a message queue or shared memory, whatever its network.
 * The canary (in the host's IPC namespace: it only ever changes its network one)
 * holds a SysV message queue and shared memory segment under the run's key and a
 * POSIX message queue under the run's name, writable by any uid, and logs what
 * arrives ("ipc" events); the sweep's ipc-* attempts write the HARNESS line to each. */

#include "probe.h"

#include <mqueue.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/shm.h>

/* The shared memory segment: slots a writer claims (free -> writing) and fills
 * (-> full) with atomics, so concurrent cells never write over each other. */
#define SHM_SLOTS 64
enum { SLOT_FREE, SLOT_WRITING, SLOT_FULL };
struct shm_slot { uint32_t state; int32_t pid; char text[248]; };

struct ipc_msg { long mtype; char text[512]; };

/* The POSIX queue is made small: the default (10 messages of 8 KiB) costs ~80 KiB
 * of the owner's RLIMIT_MSGQUEUE (800 KiB), so ten canaries on one host (or queues
 * left behind by killed ones) would exhaust it. A HARNESS line is under 256 bytes. */
#define MQ_MAXMSG 8
#define MQ_MSGSIZE 256

/* How long a writer waits for room in a full queue or segment (the canary drains
 * them ten times a second) before it reports an error: a full queue is a crowded
 * receiver, never a fence, so it must not read as blocked. */
#define IPC_ROOM_MS 2000

static int parse_key(const char *s, key_t *key)
{
    char *end = NULL;
    unsigned long v = s ? strtoul(s, &end, 0) : 0;
    if (!s || !*s || *end || v == 0 || v > 0xffffffffUL)
        return -1;
    *key = (key_t)(uint32_t)v;
    return 0;
}

/* ---- the canary's side ------------------------------------------------------- */

static int g_msq = -1, g_shmid = -1;
static struct shm_slot *g_slots;
static mqd_t g_mq = (mqd_t)-1;
static char g_mq_name[256];
static key_t g_key;

/* Remove what ipc_canary_open made (async-signal-safe: a SIGTERM handler calls it). */
void ipc_canary_remove(void)
{
    if (g_msq >= 0)
        msgctl(g_msq, IPC_RMID, NULL);
    if (g_shmid >= 0)
        shmctl(g_shmid, IPC_RMID, NULL);
    if (g_mq_name[0])
        mq_unlink(g_mq_name);
    g_msq = g_shmid = -1;
    g_mq_name[0] = '\0';
}

static void on_term(int sig)
{
    (void)sig;
    ipc_canary_remove();
    _exit(0);
}

/* One that cannot be made (a kernel without it, a limit reached, a key taken) is
 * logged, not fatal: the host's control then fails to reach it, so the sandboxes'
 * attempts at it are inconclusive, never enforced, and the rest is still judged. */
static void ipc_unbound(const char *proto, const char *what, int e)
{
    Buf b = { .n = 0 };
    bput(&b, "{\"event\":\"unbound\"");
    bkv(&b, "proto", proto);
    bkv(&b, "listen", what);
    bkv(&b, "error", strerror(e));
    bput(&b, "}");
    emit(&b);
}

/* --sysv KEY, --mqueue /NAME: make the queue, the segment and the POSIX queue, new
 * (an existing one is someone else's: not used). Returns the POSIX queue's
 * descriptor for the poll loop (-1: none). */
int ipc_canary_open(const char *sysv, const char *mqueue)
{
    char what[300];
    struct sigaction sa = { .sa_handler = on_term };
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    if (sysv) {
        if (parse_key(sysv, &g_key) != 0)
            fatal(2, "bad --sysv (want a non-zero 32-bit key): %s", sysv);
        g_msq = msgget(g_key, IPC_CREAT | IPC_EXCL | 0622);
        snprintf(what, sizeof what, "msg 0x%08x", (unsigned)g_key);
        if (g_msq < 0)
            ipc_unbound("sysv-msg", what, errno);
        g_shmid = shmget(g_key, SHM_SLOTS * sizeof(struct shm_slot), IPC_CREAT | IPC_EXCL | 0666);
        void *at = g_shmid >= 0 ? shmat(g_shmid, NULL, 0) : (void *)-1;
        snprintf(what, sizeof what, "shm 0x%08x", (unsigned)g_key);
        if (at == (void *)-1) {
            ipc_unbound("sysv-shm", what, errno);
            if (g_shmid >= 0)
                shmctl(g_shmid, IPC_RMID, NULL);
            g_shmid = -1;
        } else {
            g_slots = at;
        }
    }
    if (!mqueue)
        return -1;
    if (mqueue[0] != '/' || strchr(mqueue + 1, '/') || strlen(mqueue) >= sizeof g_mq_name)
        fatal(2, "bad --mqueue (want /NAME): %s", mqueue);
    mode_t old = umask(0);
    struct mq_attr attr = { .mq_maxmsg = MQ_MAXMSG, .mq_msgsize = MQ_MSGSIZE };
    g_mq = mq_open(mqueue, O_RDONLY | O_CREAT | O_EXCL | O_NONBLOCK | O_CLOEXEC, 0622, &attr);
    umask(old);
    if (g_mq == (mqd_t)-1) {
        snprintf(what, sizeof what, "mq %s", mqueue);
        ipc_unbound("posix-mq", what, errno);
        return -1;
    }
    snprintf(g_mq_name, sizeof g_mq_name, "%s", mqueue);
    return (int)g_mq;
}

static void ipc_event(const char *proto, const char *listen, int pid, const char *text, size_t n)
{
    char line[600], peer[32] = "";
    size_t k = 0;
    for (size_t i = 0; i < n && text[i] && text[i] != '\n' && k + 1 < sizeof line; i++)
        line[k++] = text[i] >= 0x20 && text[i] < 0x7f ? text[i] : '.';
    line[k] = '\0';
    if (pid > 0)
        snprintf(peer, sizeof peer, "pid %d", pid);
    Buf b = { .n = 0 };
    bput(&b, "{\"event\":\"ipc\"");
    bkv(&b, "proto", proto);
    bkv(&b, "listen", listen);
    bkv(&b, "peer", peer);
    bkv(&b, "line", line);
    bput(&b, "}");
    emit(&b);
}

/* Log every message and filled slot waiting; the poll loop calls it each turn. */
void ipc_canary_read(void)
{
    char where[300];
    struct ipc_msg m;
    for (int k = 0; g_msq >= 0 && k < 64; k++) {
        ssize_t n = msgrcv(g_msq, &m, sizeof m.text, 0, IPC_NOWAIT | MSG_NOERROR);
        if (n < 0)
            break;
        struct msqid_ds ds;
        int pid = msgctl(g_msq, IPC_STAT, &ds) == 0 ? (int)ds.msg_lspid : 0;
        snprintf(where, sizeof where, "msg 0x%08x", (unsigned)g_key);
        ipc_event("sysv-msg", where, pid, m.text, (size_t)n);
    }
    for (int i = 0; g_slots && i < SHM_SLOTS; i++) {
        struct shm_slot *s = &g_slots[i];
        if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) != SLOT_FULL)
            continue;
        snprintf(where, sizeof where, "shm 0x%08x", (unsigned)g_key);
        ipc_event("sysv-shm", where, s->pid, s->text, sizeof s->text);
        memset(s->text, 0, sizeof s->text);
        __atomic_store_n(&s->state, SLOT_FREE, __ATOMIC_RELEASE);
    }
    for (int k = 0; g_mq != (mqd_t)-1 && k < 64; k++) {
        char text[8192 + 1];
        ssize_t n = mq_receive(g_mq, text, sizeof text - 1, NULL);
        if (n < 0)
            break;
        snprintf(where, sizeof where, "mq %s", g_mq_name);
        ipc_event("posix-mq", where, 0, text, (size_t)n);
    }
}

/* ---- the probe's side: the sweep's attempts ----------------------------------- */

static void ipc_line(const char *id, char *out, size_t cap)
{
    snprintf(out, cap, "HARNESS %s %s\n", o.tag, id);
}

/* Refused as a filter refuses (EPERM, EACCES, ENOSYS: a queue or segment of the
 * canary's is writable by any uid, and in an IPC namespace of the sandbox's own it is
 * not found, ENOENT): the same through the i386 entry (ipc386.c) before it is blocked. */
static int filter_refused(int e)
{
    return e == EPERM || e == EACCES || e == ENOSYS;
}

/* The attempt's line where x86_64's calls were refused (`e`, `detail`): the i386
 * entry's ways tried (`r`, the last named in `*named`, read only once they were
 * tried) decide it. 0 where none was tried (no such entry): x86_64's refusal stands. */
static int other_way(const char *id, long r, const char *const *named, int e, const char *detail,
                     double t0, const char *where, const char *what)
{
    char dst[400], why[300];
    const char *way = *named ? *named : "the i386 entry";
    if (r == IPC386_NONE)
        return 0;
    if (r == 0) {
        snprintf(dst, sizeof dst, "%.200s (sent by %s: x86_64's calls refused)", where, way);
        snprintf(why, sizeof why, "sent to the canary's %s by %s; nothing answers: only its log"
                 " proves a crossing", what, way);
        att_line(id, OC_SUCCEEDED, 0, why, t0, dst, 0, NULL);
    } else if (r == -EAGAIN || r == -ETIMEDOUT || r == -EBUSY || r == -EINTR) {
        snprintf(why, sizeof why, "the canary's %s stayed full (by %s)", what, way);
        att_line(id, OC_ERROR, (int)-r, why, t0, where, 0, NULL);
    } else {
        snprintf(why, sizeof why, "%s; by the i386 entry too, the last way %s: %s", detail, way,
                 strerror((int)-r));
        att_line(id, OC_BLOCKED, e, why, t0, where, 0, NULL);
    }
    return 1;
}

/* msgsnd, waiting up to IPC_ROOM_MS for room (EAGAIN then means still full). */
static int msg_send(int id, const struct ipc_msg *m)
{
    double until = now_ms() + IPC_ROOM_MS;
    for (;;) {
        if (msgsnd(id, m, strlen(m->text), IPC_NOWAIT) == 0)
            return 0;
        if (errno != EAGAIN || now_ms() >= until)
            return -1;
        usleep(20 * 1000);
    }
}

static void try_msg(key_t key, const char *where)
{
    double t0 = now_ms();
    struct ipc_msg m = { .mtype = 1 };
    ipc_line(sweep_id[SW_IPC_SYSV_MSG], m.text, sizeof m.text);
    const char *way = NULL, *refused = "msgget: no queue of the canary's in reach";
    int id = msgget(key, 0);
    if (id < 0 || msg_send(id, &m) != 0) {
        int e = errno;
        refused = id < 0 ? refused : "msgsnd to the canary's queue";
        if (filter_refused(e) && other_way(sweep_id[SW_IPC_SYSV_MSG], ipc386_msg(key, m.text, &way), &way,
                                           e, refused, t0, where, "queue"))
            return;
        if (e == EAGAIN)
            att_line(sweep_id[SW_IPC_SYSV_MSG], OC_ERROR, e, "the canary's queue stayed full", t0, where, 0, NULL);
        else
            att_line(sweep_id[SW_IPC_SYSV_MSG], OC_BLOCKED, e, refused, t0, where, 0, NULL);
    } else {
        att_line(sweep_id[SW_IPC_SYSV_MSG], OC_SUCCEEDED, 0,
                 "sent to the canary's queue; nothing answers: only its log proves a crossing", t0, where,
                 0, NULL);
    }
}

/* A free slot of the canary's segment claimed and filled with the line: 0, or -1 where
 * every slot is taken. */
static int shm_fill(void *seg)
{
    struct shm_slot *slots = seg;
    for (int i = 0; i < SHM_SLOTS; i++) {
        uint32_t free_ = SLOT_FREE;
        if (!__atomic_compare_exchange_n(&slots[i].state, &free_, SLOT_WRITING, 0, __ATOMIC_ACQUIRE,
                                         __ATOMIC_RELAXED))
            continue;
        slots[i].pid = (int32_t)getpid();
        ipc_line(sweep_id[SW_IPC_SYSV_SHM], slots[i].text, sizeof slots[i].text);
        __atomic_store_n(&slots[i].state, SLOT_FULL, __ATOMIC_RELEASE);
        return 0;
    }
    return -1;
}

static void try_shm(key_t key, const char *where)
{
    double t0 = now_ms();
    const char *id = sweep_id[SW_IPC_SYSV_SHM], *way = NULL;
    int shmid = shmget(key, 0, 0);
    struct shm_slot *slots = shmid >= 0 ? shmat(shmid, NULL, 0) : (void *)-1;
    if (shmid < 0 || slots == (void *)-1) {
        int e = errno;
        const char *refused = shmid < 0 ? "shmget: no segment of the canary's in reach"
                                        : "shmat of the canary's segment";
        if (!filter_refused(e) ||
            !other_way(id, ipc386_shm(key, shm_fill, &way), &way, e, refused, t0, where, "segment"))
            att_line(id, OC_BLOCKED, e, refused, t0, where, 0, NULL);
        return;
    }
    int filled = shm_fill(slots);
    shmdt(slots);
    if (filled == 0)
        att_line(id, OC_SUCCEEDED, 0,
                 "written to the canary's segment; nothing answers: only its log proves a crossing", t0,
                 where, 0, NULL);
    else
        att_line(id, OC_ERROR, 0, "every slot of the canary's segment is taken", t0, where, 0, NULL);
}

static void try_mq(const char *name)
{
    double t0 = now_ms();
    char text[300], where[300];
    snprintf(where, sizeof where, "mq %s", name);
    ipc_line(sweep_id[SW_IPC_POSIX_MQ], text, sizeof text);
    mqd_t q = mq_open(name, O_WRONLY | O_CLOEXEC);
    int e0 = errno;
    /* Not in its own IPC namespace: through every mqueue mount in view (the host's
     * /dev/mqueue bound in reaches the host's queues; a descriptor open() gives is one
     * mq_timedsend takes). */
    int listed = q == (mqd_t)-1 && read_mounts() == 0;
    for (int i = 0; listed && q == (mqd_t)-1 && i < g_nmnt; i++) {
        char path[4200];
        if (strcmp(g_mnt[i].type, "mqueue") ||
            snprintf(path, sizeof path, "%s%s", strcmp(g_mnt[i].mp, "/") ? g_mnt[i].mp : "", name) >=
                (int)sizeof path)
            continue;
        if ((q = (mqd_t)open(path, O_WRONLY | O_CLOEXEC)) != (mqd_t)-1)
            snprintf(where, sizeof where, "mq %.280s", path);
    }
    errno = e0;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += IPC_ROOM_MS / 1000;
    const char *id = sweep_id[SW_IPC_POSIX_MQ], *way = NULL;
    if (q == (mqd_t)-1) {
        int e = errno;
        const char *refused = "mq_open, and open on every mqueue mount in view: no queue of the canary's"
                              " in reach";
        if (!filter_refused(e) ||
            !other_way(id, ipc386_mq(name, -1, text, &way), &way, e, refused, t0, where, "queue"))
            att_line(id, OC_BLOCKED, e, refused, t0, where, 0, NULL);
    } else if (mq_timedsend(q, text, strlen(text), 0, &until) != 0) {
        int e = errno;
        if (e == ETIMEDOUT || e == EINTR) /* full, or cut short: no fence either way */
            att_line(id, OC_ERROR, e, "the canary's queue stayed full", t0, where, 0, NULL);
        else if (!filter_refused(e) || !other_way(id, ipc386_mq(name, (int)q, text, &way), &way, e,
                                                  "mq_send to the canary's queue", t0, where, "queue"))
            att_line(id, OC_BLOCKED, e, "mq_send to the canary's queue", t0, where, 0, NULL);
    } else {
        att_line(sweep_id[SW_IPC_POSIX_MQ], OC_SUCCEEDED, 0,
                 "sent to the canary's queue; nothing answers: only its log proves a crossing", t0, where,
                 0, NULL);
    }
    if (q != (mqd_t)-1)
        mq_close(q);
}

/* The sweep's IPC attempts, each one line; quick (nothing waits for an answer). */
void sweep_ipc(void)
{
    key_t key;
    if (o.canary_sysv && *o.canary_sysv) {
        char where[64];
        if (parse_key(o.canary_sysv, &key) != 0) {
            att_line(sweep_id[SW_IPC_SYSV_MSG], OC_ERROR, 0, "bad --canary-sysv", now_ms(), o.canary_sysv, 0, NULL);
            att_line(sweep_id[SW_IPC_SYSV_SHM], OC_ERROR, 0, "bad --canary-sysv", now_ms(), o.canary_sysv, 0, NULL);
        } else {
            snprintf(where, sizeof where, "msg 0x%08x", (unsigned)key);
            try_msg(key, where);
            snprintf(where, sizeof where, "shm 0x%08x", (unsigned)key);
            try_shm(key, where);
        }
    }
    if (o.canary_mq && *o.canary_mq)
        try_mq(o.canary_mq);
}
