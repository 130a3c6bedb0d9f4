/*
 * harness-probe: a small static binary that checks sandbox security properties
 * where it runs, by really exercising them. The protocol is specified in
 * docs/probe-protocol.md.
 *
 *   probe run [OPTIONS] SCENARIO...   checks; JSON lines on stdout
 *   probe canary [OPTIONS]            TCP and DNS canary that answers with the nonce
 *   probe whoami                      credentials (the setuid/fcap helper's job)
 *   probe version
 *   probe init                        PID 1 of a microVM guest: runs `probe run`, reboots
 *
 * Protocol 1: JSON lines on stdout, each line written with a single write(2).
 *   {"type":"start","probe":"harness-probe","protocol":1,"pid":N,"uid":N,"euid":N,"gid":N}
 *   {"type":"fact","scenario":S,"id":ID,"status":ST,...,"elapsed_ms":F}   scenario mechanisms
 *   {"type":"check","scenario":S,"id":ID,"kind":K,"outcome":O,...,"elapsed_ms":F,"evidence":{..}}
 *   {"type":"info","scenario":S,"id":ID,...}   not counted by "done"
 *   {"type":"done","count":N,"digest":HEX}   only once every check has finished
 * With --cell-nonce X, start and done also carry "cell_nonce":X, and the digest
 * is the sha256 of X, a newline, and every line printed between start and done
 * (each with its newline): output replayed from another cell does not match.
 *   {"type":"fatal","detail":D}   bad usage (exit 2) or overall deadline (exit 3)
 * status: "ok" (with "value"), "unavailable" (the kernel refused: "errno",
 * "errno_num", "detail"), "error" (the measurement itself failed: "detail",
 * maybe "errno"), "timeout" (the check overran and was SIGKILLed).
 * outcome (kind "attempt"): blocked, escaped, succeeded, error, timeout;
 * outcome (kind "control"): ok, failed, error, timeout.
 *
 * Every check runs in its own forked child, in its own process group, and
 * writes one JSON fragment ("status":... or "outcome":...) into a pipe. A
 * check may thus restrict itself irreversibly (no_new_privs, Landlock,
 * seccomp, dropping privileges), crash or hang without affecting the parent
 * or later checks: the parent only waits with a timeout, kills the whole group
 * and prints the line. The parent never restricts itself.
 *
 * New scenarios: write chk_* functions and add rows to `checks` below.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <net/if.h>
#include <netpacket/packet.h>
#include <net/route.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/fsuid.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/reboot.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <dirent.h>
#include <netinet/ip_icmp.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <linux/filter.h>
#include <linux/ioctl.h>
#include <linux/seccomp.h>

#define PROBE_NAME "harness-probe"
#define PROTOCOL 1
#define MAGIC_RET 424242

/* Landlock: musl's include path has no linux/landlock.h, so define what we use. */
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_landlock_add_rule
#define __NR_landlock_add_rule 445
#endif
#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif
#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif
#ifndef LANDLOCK_ACCESS_FS_READ_FILE
#define LANDLOCK_ACCESS_FS_READ_FILE (1ULL << 2)
#endif
#ifndef LANDLOCK_ACCESS_FS_READ_DIR
#define LANDLOCK_ACCESS_FS_READ_DIR (1ULL << 3)
#endif
#ifndef LANDLOCK_RULE_PATH_BENEATH
#define LANDLOCK_RULE_PATH_BENEATH 1 /* enum landlock_rule_type */
#endif
/* ABI 1 layout; newer kernels accept it (missing fields mean "handle nothing"). */
struct probe_ruleset_attr { uint64_t handled_access_fs; };
/* struct landlock_path_beneath_attr, which the UAPI declares packed (12 bytes). */
struct probe_path_beneath_attr { uint64_t allowed_access; int32_t parent_fd; } __attribute__((packed));

/* Seccomp constants newer than some UAPI headers. */
#ifndef SECCOMP_FILTER_FLAG_NEW_LISTENER
#define SECCOMP_FILTER_FLAG_NEW_LISTENER (1UL << 3)
#endif
#ifndef SECCOMP_RET_USER_NOTIF
#define SECCOMP_RET_USER_NOTIF 0x7fc00000U
#endif
#ifndef SECCOMP_ADDFD_FLAG_SEND
#define SECCOMP_ADDFD_FLAG_SEND (1UL << 1)
#endif
#ifndef SECCOMP_IOCTL_NOTIF_ADDFD
struct seccomp_notif_addfd { uint64_t id; uint32_t flags, srcfd, newfd, newfd_flags; };
#define SECCOMP_IOCTL_NOTIF_ADDFD _IOW('!', 3, struct seccomp_notif_addfd)
#endif
#ifndef SECCOMP_IOCTL_NOTIF_ID_VALID
#define SECCOMP_IOCTL_NOTIF_ID_VALID _IOW('!', 2, uint64_t)
#endif

/* pidfds (Linux 5.3 and 5.6); the numbers are the same on every architecture. */
#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif
#ifndef __NR_pidfd_getfd
#define __NR_pidfd_getfd 438
#endif

/* Capabilities: raw capget/capset, so no libcap and no linux/capability.h. */
#ifndef PR_CAPBSET_READ
#define PR_CAPBSET_READ 23
#endif
#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT 47
#endif
#ifndef PR_CAP_AMBIENT_IS_SET
#define PR_CAP_AMBIENT_IS_SET 1
#endif
#ifndef PR_CAP_AMBIENT_RAISE
#define PR_CAP_AMBIENT_RAISE 2
#endif
#define PROBE_CAP_VERSION_3 0x20080522 /* _LINUX_CAPABILITY_VERSION_3 */
#define PROBE_CAP_NET_RAW 13
#define PROBE_CAP_SYS_ADMIN 21
struct cap_header { uint32_t version; int pid; };
struct cap_data { uint32_t effective, permitted, inheritable; };

#if defined(__x86_64__)
#define PROBE_AUDIT_ARCH 0xc000003eU /* AUDIT_ARCH_X86_64 */
#elif defined(__aarch64__)
#define PROBE_AUDIT_ARCH 0xc00000b7U /* AUDIT_ARCH_AARCH64 */
#else
#error "unsupported architecture (add its AUDIT_ARCH_* value)"
#endif

/* A row of the check table; the kind decides the line type (fact, check, info). */
enum { K_FACT, K_ATTEMPT, K_CONTROL, K_INFO, K_SWEEP };
struct check { const char *scenario, *id; void (*fn)(void); int kind; };

static int g_check_timeout_ms = 5000;
static long g_deadline_ms = 60000;
static const char *g_argv0 = "probe";
static const char *g_fatal_type = "type"; /* the canary says "event" */
static const struct check *g_cur;        /* the check now running (parent and child) */
static double g_t0;                      /* when it started (now_ms) */
static int g_resfd = -1;                 /* in a check child: write end of the result pipe */
static pid_t g_target;                   /* in a check child: a grandchild to kill on exit */
static void (*g_cleanup)(void);          /* in a check child: run before the result is sent */
static volatile sig_atomic_t g_child;    /* in the parent: the check child now running */

/* Options of `probe run`; a check that needs a missing one reports "error". */
static struct {
    const char *tag, *canary_tcp, *resolver, *alt_dns, *doh, *denied_name, *nonce,
        *allowed_dir, *sentinel, *token, *outside_dir, *overwrite, *rename, *planted_link,
        *setuid_helper, *fcap_helper, *unpriv_uid, *allowed_tcp, *canary4, *canary6, *high_port,
        *resolver_ranges, *more_sentinels, *cell_nonce;
} o;
static const struct { const char *name; const char **val; } run_opts[] = {
    { "--tag", &o.tag }, { "--canary-tcp", &o.canary_tcp }, { "--resolver", &o.resolver },
    { "--alt-dns", &o.alt_dns }, { "--doh", &o.doh }, { "--denied-name", &o.denied_name },
    { "--nonce", &o.nonce }, { "--allowed-dir", &o.allowed_dir }, { "--sentinel", &o.sentinel },
    { "--token", &o.token }, { "--outside-dir", &o.outside_dir }, { "--overwrite", &o.overwrite },
    { "--rename", &o.rename }, { "--planted-link", &o.planted_link },
    { "--setuid-helper", &o.setuid_helper }, { "--fcap-helper", &o.fcap_helper },
    { "--unpriv-uid", &o.unpriv_uid }, { "--allowed-tcp", &o.allowed_tcp },
    { "--canary4", &o.canary4 }, { "--canary6", &o.canary6 }, { "--high-port", &o.high_port },
    { "--resolver-ranges", &o.resolver_ranges }, { "--more-sentinels", &o.more_sentinels },
    { "--cell-nonce", &o.cell_nonce },
};
#define NRUNOPTS (sizeof run_opts / sizeof run_opts[0])
static unsigned g_unpriv_uid = 65534;

/* ---- output helpers ---------------------------------------------------- */

/* Big enough for any line we build, the mount table included. A check child is
 * its result pipe's only writer and the parent reads to the newline, so a result
 * longer than PIPE_BUF still arrives whole. */
typedef struct { char s[16384]; size_t n; } Buf;

__attribute__((format(printf, 2, 3)))
static void bput(Buf *b, const char *fmt, ...)
{
    size_t room = sizeof b->s - b->n;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b->s + b->n, room, fmt, ap);
    va_end(ap);
    if (k > 0)
        b->n += (size_t)k < room ? (size_t)k : room - 1;
}

/* A JSON string literal. Bytes outside printable ASCII become \u00XX, so the
 * line is always valid (ASCII) JSON whatever the input. */
static void bstr(Buf *b, const char *str)
{
    bput(b, "\"");
    for (const unsigned char *p = (const unsigned char *)str; *p; p++) {
        if (*p == '"' || *p == '\\')
            bput(b, "\\%c", *p);
        else if (*p < 0x20 || *p >= 0x7f)
            bput(b, "\\u%04x", *p);
        else
            bput(b, "%c", *p);
    }
    bput(b, "\"");
}

/* ,"key":"value" */
static void bkv(Buf *b, const char *key, const char *val)
{
    bput(b, ",\"%s\":", key);
    bstr(b, val);
}

/* ---- SHA-256, for the digest binding a run's lines to its cell nonce ---- */

typedef struct { uint32_t h[8]; uint64_t len; unsigned char blk[64]; size_t n; } Sha256;

static const uint32_t sha_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROR32(x, r) (((x) >> (r)) | ((x) << (32 - (r))))

static void sha_block(Sha256 *c, const unsigned char *p)
{
    uint32_t w[64], a, b, d, e, f, g, h, cc;
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ROR32(w[i - 15], 7) ^ ROR32(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ROR32(w[i - 2], 17) ^ ROR32(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    a = c->h[0], b = c->h[1], cc = c->h[2], d = c->h[3], e = c->h[4], f = c->h[5], g = c->h[6], h = c->h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = h + (ROR32(e, 6) ^ ROR32(e, 11) ^ ROR32(e, 25)) + ((e & f) ^ (~e & g)) + sha_k[i] + w[i];
        uint32_t t2 = (ROR32(a, 2) ^ ROR32(a, 13) ^ ROR32(a, 22)) + ((a & b) ^ (a & cc) ^ (b & cc));
        h = g, g = f, f = e, e = d + t1, d = cc, cc = b, b = a, a = t1 + t2;
    }
    c->h[0] += a, c->h[1] += b, c->h[2] += cc, c->h[3] += d;
    c->h[4] += e, c->h[5] += f, c->h[6] += g, c->h[7] += h;
}

static void sha_init(Sha256 *c)
{
    static const uint32_t iv[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
    memcpy(c->h, iv, sizeof iv);
    c->len = 0;
    c->n = 0;
}

static void sha_update(Sha256 *c, const void *data, size_t len)
{
    const unsigned char *p = data;
    c->len += len;
    while (len > 0) {
        size_t k = 64 - c->n < len ? 64 - c->n : len;
        memcpy(c->blk + c->n, p, k);
        c->n += k, p += k, len -= k;
        if (c->n == 64) {
            sha_block(c, c->blk);
            c->n = 0;
        }
    }
}

/* The digest as 64 hex digits into out[65]. */
static void sha_hex(Sha256 *c, char *out)
{
    uint64_t bits = c->len * 8;
    unsigned char pad = 0x80, zero = 0, lenb[8];
    sha_update(c, &pad, 1);
    while (c->n != 56)
        sha_update(c, &zero, 1);
    for (int i = 0; i < 8; i++)
        lenb[i] = (unsigned char)(bits >> (56 - 8 * i));
    sha_update(c, lenb, 8);
    for (int i = 0; i < 8; i++)
        snprintf(out + 8 * i, 9, "%08x", c->h[i]);
}

/* While set (the parent of `probe run`, between its start and done lines), every
 * printed line goes into the digest that the done line carries. */
static Sha256 g_digest;
static int g_digesting;

static void write_all(int fd, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t k = write(fd, s, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return;
        s += k;
        n -= (size_t)k;
    }
}

/* Print a line; SIGALRM (deadline) is blocked so it cannot cut a line in half. */
static void emit(Buf *b)
{
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGALRM);
    sigprocmask(SIG_BLOCK, &set, &old);
    bput(b, "\n");
    if (g_digesting)
        sha_update(&g_digest, b->s, b->n);
    write_all(STDOUT_FILENO, b->s, b->n);
    sigprocmask(SIG_SETMASK, &old, NULL);
}

__attribute__((format(printf, 2, 3), noreturn))
static void fatal(int code, const char *fmt, ...)
{
    char detail[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    Buf b = { .n = 0 };
    bput(&b, "{\"%s\":\"fatal\",\"detail\":", g_fatal_type);
    bstr(&b, detail);
    bput(&b, "}");
    emit(&b);
    exit(code);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static const char *errname(int e)
{
#define E(x) { x, #x }
    static const struct { int num; const char *name; } t[] = {
        E(EPERM), E(ENOENT), E(ESRCH), E(EINTR), E(EIO), E(ENXIO), E(E2BIG),
        E(ENOEXEC), E(EBADF), E(ECHILD), E(EAGAIN), E(ENOMEM), E(EACCES),
        E(EFAULT), E(ENOTBLK), E(EBUSY), E(EEXIST), E(EXDEV), E(ENODEV),
        E(ENOTDIR), E(EISDIR), E(EINVAL), E(ENFILE), E(EMFILE), E(ENOTTY),
        E(ETXTBSY), E(EFBIG), E(ENOSPC), E(ESPIPE), E(EROFS), E(EMLINK),
        E(EPIPE), E(EDOM), E(ERANGE), E(EDEADLK), E(ENAMETOOLONG), E(ENOLCK),
        E(ENOSYS), E(ENOTEMPTY), E(ELOOP), E(ENOMSG), E(EIDRM), E(ENODATA),
        E(ETIME), E(EPROTO), E(EBADMSG), E(EOVERFLOW), E(EBADFD), E(ENOTSOCK),
        E(EDESTADDRREQ), E(EMSGSIZE), E(EPROTOTYPE), E(ENOPROTOOPT),
        E(EPROTONOSUPPORT), E(ESOCKTNOSUPPORT), E(EOPNOTSUPP), E(EPFNOSUPPORT),
        E(EAFNOSUPPORT), E(EADDRINUSE), E(EADDRNOTAVAIL), E(ENETDOWN),
        E(ENETUNREACH), E(ENETRESET), E(ECONNABORTED), E(ECONNRESET),
        E(ENOBUFS), E(EISCONN), E(ENOTCONN), E(ESHUTDOWN), E(ETIMEDOUT),
        E(ECONNREFUSED), E(EHOSTDOWN), E(EHOSTUNREACH), E(EALREADY),
        E(EINPROGRESS), E(ESTALE), E(EDQUOT), E(ECANCELED), E(EOWNERDEAD),
        E(ENOTRECOVERABLE), E(ENOMEDIUM), E(EREMOTEIO),
    };
#undef E
    static char unknown[24];
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (t[i].num == e)
            return t[i].name;
    snprintf(unknown, sizeof unknown, "E%d", e);
    return unknown;
}

static void frag_errno(Buf *b, int e)
{
    bput(b, ",\"errno\":");
    bstr(b, errname(e));
    bput(b, ",\"errno_num\":%d", e);
}

static int is_check_kind(int kind) { return kind == K_ATTEMPT || kind == K_CONTROL || kind == K_SWEEP; }

/* The start of a result fragment: "status" for facts, "outcome" for checks. */
static void frag_status(Buf *b, const char *status, int e, const char *detail)
{
    bput(b, "\"%s\":", g_cur && is_check_kind(g_cur->kind) ? "outcome" : "status");
    bstr(b, status);
    if (e)
        frag_errno(b, e);
    bput(b, ",\"detail\":");
    bstr(b, detail);
}

/* ---- results, as written by a check child (each ends the child) ------- */

static Buf g_ev; /* the check's evidence: "key":value,... */

static void ev_int(const char *key, long long v)
{
    bput(&g_ev, "%s\"%s\":%lld", g_ev.n ? "," : "", key, v);
}

static void ev_str(const char *key, const char *v)
{
    bput(&g_ev, "%s\"%s\":", g_ev.n ? "," : "", key);
    bstr(&g_ev, v);
}

__attribute__((noreturn))
static void send_result(Buf *b)
{
    if (g_target > 0)
        kill(g_target, SIGKILL);
    if (g_cleanup) {
        void (*f)(void) = g_cleanup;
        g_cleanup = NULL; /* once, even if it ends in a result itself */
        f();
    }
    bput(b, "\n");
    write_all(g_resfd, b->s, b->n); /* the pipe's only writer */
    _exit(0);
}

__attribute__((noreturn))
static void ok_int(long long v)
{
    Buf b = { .n = 0 };
    bput(&b, "\"status\":\"ok\",\"value\":%lld", v);
    send_result(&b);
}

__attribute__((noreturn))
static void ok_bool(int v, const char *detail)
{
    Buf b = { .n = 0 };
    bput(&b, "\"status\":\"ok\",\"value\":%s", v ? "true" : "false");
    if (detail) {
        bput(&b, ",\"detail\":");
        bstr(&b, detail);
    }
    send_result(&b);
}

/* ok, value false: the mechanism exists but misbehaved, as the detail says. */
__attribute__((format(printf, 1, 2), noreturn))
static void ok_false(const char *fmt, ...)
{
    char detail[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    ok_bool(0, detail);
}

__attribute__((noreturn))
static void ok_str(const char *v)
{
    Buf b = { .n = 0 };
    bput(&b, "\"status\":\"ok\",\"value\":");
    bstr(&b, v);
    send_result(&b);
}

/* The kernel refused `call` with errno e. */
__attribute__((noreturn))
static void unavail(const char *call, int e)
{
    char detail[256];
    snprintf(detail, sizeof detail, "%s: %s", call, strerror(e));
    Buf b = { .n = 0 };
    frag_status(&b, "unavailable", e, detail);
    send_result(&b);
}

/* A status/outcome with errno e (if nonzero, also appended to the detail)
 * and the evidence gathered so far. */
__attribute__((noreturn))
static void vresult(const char *status, int e, const char *fmt, va_list ap)
{
    char detail[512];
    int n = vsnprintf(detail, sizeof detail, fmt, ap);
    if (e && n >= 0 && (size_t)n < sizeof detail)
        snprintf(detail + n, sizeof detail - (size_t)n, ": %s", strerror(e));
    Buf b = { .n = 0 };
    frag_status(&b, status, e, detail);
    if (g_ev.n)
        bput(&b, ",\"evidence\":{%s}", g_ev.s);
    send_result(&b);
}

/* The measurement or attempt could not be made; e (if nonzero) is why. */
__attribute__((format(printf, 2, 3), noreturn))
static void fail(int e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vresult("error", e, fmt, ap);
}

/* A check's outcome: "blocked", "escaped", "succeeded", "ok", "failed". */
__attribute__((format(printf, 3, 4), noreturn))
static void outcome(const char *oc, int e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vresult(oc, e, fmt, ap);
}

/* The value of an option this check needs; "error" when it was not given. */
static const char *need(const char **opt)
{
    for (size_t i = 0; i < NRUNOPTS; i++)
        if (run_opts[i].val == opt && (!*opt || !**opt))
            fail(0, "%s not given", run_opts[i].name);
    return *opt;
}

/* ---- helpers shared by several scenarios ------------------------------- */

/* A check must report before its timeout (200 ms to spare). */
static double check_end(void) { return g_t0 + g_check_timeout_ms - 200.0; }

/* Wait until fd is ready for `events`; 0, or -1 with errno (ETIMEDOUT at end). */
static int wait_io(int fd, short events, double end)
{
    for (;;) {
        int left = (int)(end - now_ms() + 0.999);
        if (left <= 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        struct pollfd p = { .fd = fd, .events = events };
        int r = poll(&p, 1, left);
        if (r > 0)
            return 0; /* also POLLERR/POLLHUP: the next call says what happened */
        if (r < 0 && errno != EINTR)
            return -1;
    }
}

/* Read up to 64 KiB; the byte count, or -1 with errno. */
static ssize_t read_file(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    size_t n = 0;
    if (fd < 0)
        return -1;
    while (n < cap) {
        ssize_t k = read(fd, buf + n, cap - n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
        if (k == 0)
            break;
        n += (size_t)k;
    }
    close(fd);
    return (ssize_t)n;
}

/* ---- scenario "mechanisms" --------------------------------------------- */

static void chk_landlock_abi(void)
{
    long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    if (abi < 0)
        unavail("landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)", errno);
    ok_int(abi);
}

/* The probe's own executable: surely a readable regular file. */
static void self_path(char *out, size_t cap)
{
    ssize_t n = readlink("/proc/self/exe", out, cap - 1);
    if (n > 0) {
        out[n] = '\0';
        return;
    }
    char cwd[512];
    if (g_argv0[0] == '/' || !getcwd(cwd, sizeof cwd))
        snprintf(out, cap, "%s", g_argv0);
    else
        snprintf(out, cap, "%s/%s", cwd, g_argv0);
}

static void set_nnp(void)
{
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        unavail("prctl(PR_SET_NO_NEW_PRIVS)", errno);
}

static void chk_landlock_enforces(void)
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

    struct probe_ruleset_attr attr = { .handled_access_fs = LANDLOCK_ACCESS_FS_READ_FILE };
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
static void chk_landlock_allow_deny(void)
{
    struct probe_ruleset_attr attr = {
        .handled_access_fs = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR,
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
    rule.allowed_access = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
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

/* Install either an allow-all filter or one that sends getppid() to a
 * user-space listener. Returns the seccomp() result (listener fd if asked). */
static long install_filter(unsigned long flags, int notify_getppid)
{
    static struct sock_filter allow_all[] = {
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    static struct sock_filter notify[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PROBE_AUDIT_ARCH, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_getppid, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = { .len = 1, .filter = allow_all };
    if (notify_getppid) {
        prog.len = sizeof notify / sizeof notify[0];
        prog.filter = notify;
    }
    return syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
}

static void chk_seccomp_filter(void)
{
    set_nnp();
    if (install_filter(0, 0) != 0)
        unavail("seccomp(SET_MODE_FILTER)", errno);
    ok_bool(1, NULL);
}

static void chk_seccomp_new_listener(void)
{
    set_nnp();
    if (install_filter(SECCOMP_FILTER_FLAG_NEW_LISTENER, 1) < 0)
        unavail("seccomp(SET_MODE_FILTER, NEW_LISTENER)", errno);
    ok_bool(1, NULL);
}

/* ioctl via syscall(): musl's ioctl() takes an int request, which these
 * request numbers overflow (a warning), glibc's an unsigned long. */
static long notif_ioctl(int fd, unsigned long req, void *arg)
{
    return syscall(SYS_ioctl, fd, req, arg);
}

/*
 * User notification. Each of these facts forks a target (a grandchild) that
 * installs a filter sending getppid() to a listener, hands the listener to the
 * supervisor (the check child) and calls getppid(a0, a1): getppid ignores its
 * arguments, but seccomp_data.args carries them to the supervisor. The mode
 * decides what the target prepares, what the supervisor does with the
 * notification and what the target checks afterwards:
 *
 *   REPLY      answer MAGIC_RET; the target's getppid() must return it
 *   ADDFD      answer by installing a pipe fd (ADDFD_FLAG_SEND); the target fstat()s it
 *   ID_VALID   NOTIF_ID_VALID succeeds while pending, fails ENOENT once answered
 *   SOCKET     a0 = one end of a socketpair: the supervisor takes it with
 *              pidfd_getfd, checks its type and sends a byte that the target reads
 *   PROC_FD    a0 = an fd on the probe's executable: /proc/<pid>/fd/<a0> must name it
 *   MEM_READ   a0, a1 = a buffer holding a marker: the supervisor reads it
 *   MEM_WRITE  a0, a1 = a buffer: the supervisor overwrites it, the target checks
 *   CANCEL     the supervisor signals the target (a handler without SA_RESTART):
 *              getppid() fails EINTR, and NOTIF_SEND on its id fails ENOENT
 *
 * Every mode but CANCEL answers MAGIC_RET when its own part went well. The
 * target exits 0 when its check holds, 1 when not, 2 when it could not run.
 */
enum notif_mode {
    NOTIF_REPLY, NOTIF_ADDFD, NOTIF_ID_VALID, NOTIF_SOCKET, NOTIF_PROC_FD,
    NOTIF_MEM_READ, NOTIF_MEM_WRITE, NOTIF_CANCEL,
};
#define NOT_MAGIC "the target's getppid() did not return the supervisor's value"
static const struct {
    const char *prep;     /* the target's preparation, named when it fails */
    const char *mismatch; /* the detail of value false when the target exits 1 */
} notif_modes[] = {
    [NOTIF_REPLY] = { "", NOT_MAGIC },
    [NOTIF_ADDFD] = { "", "the target's getppid() did not return a pipe fd" },
    [NOTIF_ID_VALID] = { "", NOT_MAGIC },
    [NOTIF_SOCKET] = { "socketpair(AF_UNIX, SOCK_DGRAM)",
                       "the target did not receive the byte sent through its retained socket" },
    [NOTIF_PROC_FD] = { "open(the probe's executable)", NOT_MAGIC },
    [NOTIF_MEM_READ] = { "", NOT_MAGIC },
    [NOTIF_MEM_WRITE] = { "", "the target's buffer does not hold what the supervisor wrote" },
    [NOTIF_CANCEL] = { "sigaction(SIGUSR1)", "" },
};

/* Target to supervisor. stage 0: the listener is attached; 1: prctl failed;
 * 2: seccomp failed; 3: the mode's preparation failed. */
struct setup_msg { int stage, err; };
/* CANCEL, target to supervisor: what the interrupted getppid() returned. */
struct cancel_msg { long ret; int err; };

#define NOTIF_BUF 64
#define NOTIF_BYTE 'R'
static char g_notif_buf[NOTIF_BUF]; /* the target's buffer (MEM_READ, MEM_WRITE) */
static char g_notif_path[1024];     /* the file the target opens (PROC_FD) */

/* The marker a target with this pid holds in its buffer, before or after the write. */
static void notif_marker(char *out, const char *when, long pid)
{
    memset(out, 0, NOTIF_BUF);
    snprintf(out, NOTIF_BUF, "harness-probe %s %ld", when, pid);
}

static void on_signal(int sig) { (void)sig; }

/* The target's preparation, which sets the getppid() arguments: 0, or -1 with errno. */
static int notif_prepare(enum notif_mode mode, long a[2], int sp[2])
{
    struct sigaction sa;
    switch (mode) {
    case NOTIF_SOCKET:
        if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sp) != 0)
            return -1;
        a[0] = sp[0];
        return 0;
    case NOTIF_PROC_FD:
        a[0] = open(g_notif_path, O_RDONLY | O_CLOEXEC);
        return a[0] < 0 ? -1 : 0;
    case NOTIF_MEM_READ:
    case NOTIF_MEM_WRITE:
        notif_marker(g_notif_buf, "before", (long)getpid());
        a[0] = (long)(uintptr_t)g_notif_buf;
        a[1] = NOTIF_BUF;
        return 0;
    case NOTIF_CANCEL:
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal; /* no SA_RESTART: the trapped call must fail EINTR */
        return sigaction(SIGUSR1, &sa, NULL);
    default:
        return 0;
    }
}

/* Target (grandchild): prepare, install the notifying filter, hand the
 * listener to the supervisor, then call getppid(a0, a1) and check the outcome. */
__attribute__((noreturn))
static void notif_target(int sock, enum notif_mode mode)
{
    struct setup_msg m = { 0, 0 };
    long lfd = -1, a[2] = { 0, 0 };
    int sp[2] = { -1, -1 };
    if (notif_prepare(mode, a, sp) != 0)
        m = (struct setup_msg){ 3, errno };
    else if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        m = (struct setup_msg){ 1, errno };
    else if ((lfd = install_filter(SECCOMP_FILTER_FLAG_NEW_LISTENER, 1)) < 0)
        m = (struct setup_msg){ 2, errno };

    union { char buf[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } ctl;
    struct iovec iov = { .iov_base = &m, .iov_len = sizeof m };
    struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
    if (lfd >= 0) {
        int fd = (int)lfd;
        memset(&ctl, 0, sizeof ctl);
        mh.msg_control = ctl.buf;
        mh.msg_controllen = sizeof ctl.buf;
        struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof fd);
        memcpy(CMSG_DATA(cm), &fd, sizeof fd);
    }
    if (sendmsg(sock, &mh, 0) < 0 || lfd < 0)
        _exit(2);
    /* Only the supervisor holds the listener now: should it die, getppid()
     * fails with ENOSYS instead of blocking forever. */
    close((int)lfd);
    if (mode != NOTIF_CANCEL)
        close(sock);

    errno = 0;
    long r = syscall(__NR_getppid, a[0], a[1]);
    struct cancel_msg cm = { r, errno };
    char want[NOTIF_BUF], c = 0;
    struct stat st;
    switch (mode) {
    case NOTIF_ADDFD:
        _exit(r >= 0 && fstat((int)r, &st) == 0 && S_ISFIFO(st.st_mode) ? 0 : 1);
    case NOTIF_SOCKET:
        _exit(r == MAGIC_RET && recv(sp[1], &c, 1, MSG_DONTWAIT) == 1 && c == NOTIF_BYTE ? 0 : 1);
    case NOTIF_MEM_WRITE:
        notif_marker(want, "after", (long)getpid());
        _exit(r == MAGIC_RET && !memcmp(g_notif_buf, want, NOTIF_BUF) ? 0 : 1);
    case NOTIF_CANCEL:
        /* Report, then stay alive while the supervisor tries the stale id. */
        write_all(sock, (const char *)&cm, sizeof cm);
        while (read(sock, &c, 1) < 0 && errno == EINTR)
            ;
        _exit(0);
    default:
        _exit(r == MAGIC_RET ? 0 : 1);
    }
}

/* Answer notification id with MAGIC_RET: 0, or the errno. */
static int notif_send(int lfd, uint64_t id)
{
    struct seccomp_notif_resp resp;
    memset(&resp, 0, sizeof resp);
    resp.id = id;
    resp.val = MAGIC_RET;
    return notif_ioctl(lfd, SECCOMP_IOCTL_NOTIF_SEND, &resp) == 0 ? 0 : errno;
}

/* The same, where a refusal means the mechanism is unavailable. */
static void notif_reply(int lfd, uint64_t id)
{
    int e = notif_send(lfd, id);
    if (e)
        unavail("ioctl(SECCOMP_IOCTL_NOTIF_SEND)", e);
}

/* SECCOMP_IOCTL_NOTIF_ID_VALID: 0, or the errno. */
static int notif_id_valid(int lfd, uint64_t id)
{
    uint64_t v = id;
    return notif_ioctl(lfd, SECCOMP_IOCTL_NOTIF_ID_VALID, &v) == 0 ? 0 : errno;
}

/* ADDFD: answer by installing a pipe's read end as the syscall's result. */
static const char *sup_addfd(int lfd, const struct seccomp_notif *n)
{
    int p[2];
    if (pipe(p) != 0)
        fail(errno, "pipe");
    struct seccomp_notif_addfd add;
    memset(&add, 0, sizeof add);
    add.id = n->id;
    add.flags = SECCOMP_ADDFD_FLAG_SEND;
    add.srcfd = (uint32_t)p[0];
    if (notif_ioctl(lfd, SECCOMP_IOCTL_NOTIF_ADDFD, &add) < 0)
        unavail("ioctl(SECCOMP_IOCTL_NOTIF_ADDFD, ADDFD_FLAG_SEND)", errno);
    return NULL;
}

/* ID_VALID: the id is valid while pending and gone (ENOENT) once answered. */
static const char *sup_id_valid(int lfd, const struct seccomp_notif *n)
{
    int e = notif_id_valid(lfd, n->id);
    if (e == ENOENT)
        ok_false("NOTIF_ID_VALID failed with ENOENT while the notification was pending");
    if (e)
        unavail("ioctl(SECCOMP_IOCTL_NOTIF_ID_VALID)", e);
    notif_reply(lfd, n->id);
    e = notif_id_valid(lfd, n->id);
    if (e != ENOENT)
        ok_false("NOTIF_ID_VALID after the answer: %s, expected ENOENT", e ? errname(e) : "succeeded");
    return NULL;
}

/* SOCKET: take the target's socket with pidfd_getfd and use it. */
static const char *sup_socket(int lfd, const struct seccomp_notif *n)
{
    int pidfd = (int)syscall(__NR_pidfd_open, (pid_t)n->pid, 0);
    if (pidfd < 0)
        unavail("pidfd_open(target)", errno);
    int fd = (int)syscall(__NR_pidfd_getfd, pidfd, (int)n->data.args[0], 0);
    if (fd < 0)
        unavail("pidfd_getfd(target's socket)", errno);
    close(pidfd);

    int type = -1;
    socklen_t len = sizeof type;
    struct sockaddr_storage ss;
    socklen_t slen = sizeof ss;
    char c = NOTIF_BYTE;
    memset(&ss, 0, sizeof ss);
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0)
        ok_false("getsockopt(SO_TYPE) on the retained fd: %s", strerror(errno));
    if (type != SOCK_DGRAM)
        ok_false("the retained fd's SO_TYPE is %d, expected SOCK_DGRAM (%d)", type, SOCK_DGRAM);
    if (getsockname(fd, (struct sockaddr *)&ss, &slen) != 0)
        ok_false("getsockname on the retained fd: %s", strerror(errno));
    if (ss.ss_family != AF_UNIX)
        ok_false("the retained fd's family is %d, expected AF_UNIX", ss.ss_family);
    if (send(fd, &c, 1, MSG_DONTWAIT) != 1)
        ok_false("send through the retained fd: %s", strerror(errno));
    close(fd);
    notif_reply(lfd, n->id);
    return NULL;
}

/* PROC_FD: /proc/<pid>/fd/<a0> names the file the target opened. */
static const char *sup_proc_fd(int lfd, const struct seccomp_notif *n)
{
    char link[64], call[96], got[sizeof g_notif_path];
    snprintf(link, sizeof link, "/proc/%u/fd/%llu", (unsigned)n->pid,
             (unsigned long long)n->data.args[0]);
    ssize_t k = readlink(link, got, sizeof got - 1);
    if (k < 0) {
        snprintf(call, sizeof call, "readlink(%s)", link);
        unavail(call, errno);
    }
    got[k] = '\0';
    if (strcmp(got, g_notif_path) != 0)
        ok_false("%s names %s, expected %s", link, got, g_notif_path);
    notif_reply(lfd, n->id);
    return NULL;
}

/* Copy len bytes between buf and the task's memory at addr: with
 * process_vm_readv/writev, else through /proc/<pid>/mem. Returns the method
 * that worked (for the detail); unavailable when both fail. */
static const char *task_mem(pid_t pid, uint64_t addr, void *buf, size_t len, int wr)
{
    static char how[192];
    const char *vm = wr ? "process_vm_writev" : "process_vm_readv";
    struct iovec local = { .iov_base = buf, .iov_len = len };
    struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };
    ssize_t k = wr ? process_vm_writev(pid, &local, 1, &remote, 1, 0)
                   : process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (k == (ssize_t)len)
        return vm;
    int e1 = k < 0 ? errno : EIO; /* EIO: a short transfer */

    char path[64];
    snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
    int fd = open(path, (wr ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
    k = -1;
    if (fd >= 0) {
        k = wr ? pwrite(fd, buf, len, (off_t)addr) : pread(fd, buf, len, (off_t)addr);
        if (k >= 0 && k != (ssize_t)len)
            errno = EIO;
        int e = errno;
        close(fd);
        errno = e;
    }
    if (k != (ssize_t)len) {
        snprintf(how, sizeof how, "%s (%s), then %s(%s)", vm, errname(e1),
                 fd < 0 ? "open" : wr ? "pwrite" : "pread", path);
        unavail(how, errno);
    }
    snprintf(how, sizeof how, "%s (%s failed: %s)", path, vm, errname(e1));
    return how;
}

static void notif_buf_arg(const struct seccomp_notif *n)
{
    if (n->data.args[1] != NOTIF_BUF)
        fail(0, "getppid() length argument %llu, expected %d",
             (unsigned long long)n->data.args[1], NOTIF_BUF);
}

/* MEM_READ: the target's buffer holds its marker. */
static const char *sup_mem_read(int lfd, const struct seccomp_notif *n)
{
    char got[NOTIF_BUF], want[NOTIF_BUF];
    notif_buf_arg(n);
    const char *how = task_mem((pid_t)n->pid, n->data.args[0], got, NOTIF_BUF, 0);
    notif_marker(want, "before", (long)n->pid);
    if (memcmp(got, want, NOTIF_BUF) != 0) {
        got[NOTIF_BUF - 1] = '\0';
        ok_false("read \"%s\" with %s, expected \"%s\"", got, how, want);
    }
    notif_reply(lfd, n->id);
    return how;
}

/* MEM_WRITE: overwrite the target's buffer; the target checks it. */
static const char *sup_mem_write(int lfd, const struct seccomp_notif *n)
{
    char buf[NOTIF_BUF];
    notif_buf_arg(n);
    notif_marker(buf, "after", (long)n->pid);
    const char *how = task_mem((pid_t)n->pid, n->data.args[0], buf, NOTIF_BUF, 1);
    notif_reply(lfd, n->id);
    return how;
}

/* CANCEL: a signal interrupts the trapped getppid(); its id is then gone. */
__attribute__((noreturn))
static void sup_cancel(int lfd, const struct seccomp_notif *n, int sock)
{
    struct cancel_msg cm;
    if (kill((pid_t)n->pid, SIGUSR1) != 0)
        fail(errno, "kill(target, SIGUSR1)");
    if (wait_io(sock, POLLIN, check_end()) != 0)
        ok_false("the target's getppid() did not return after SIGUSR1 (%s)", strerror(errno));
    ssize_t k = read(sock, &cm, sizeof cm);
    if (k != (ssize_t)sizeof cm)
        fail(k < 0 ? errno : 0, "no report from the target after SIGUSR1 (got %zd bytes)", k);
    if (cm.ret != -1 || cm.err != EINTR)
        ok_false("after SIGUSR1 the target's getppid() returned %ld (errno %s), expected -1 EINTR",
                 cm.ret, errname(cm.err));
    int e = notif_send(lfd, n->id);
    if (e != ENOENT)
        ok_false("NOTIF_SEND on the interrupted notification: %s, expected ENOENT",
                 e ? errname(e) : "succeeded");
    ok_bool(1, NULL);
}

/* Supervisor (the check child): fork the target, take its listener, receive
 * the getppid() notification and do the mode's part; then the target's exit
 * status says whether its side held. */
static void notif_supervisor(enum notif_mode mode)
{
    if (mode == NOTIF_PROC_FD) {
        char raw[sizeof g_notif_path];
        self_path(raw, sizeof raw);
        char *real = realpath(raw, NULL); /* what /proc/<pid>/fd/<n> will say */
        snprintf(g_notif_path, sizeof g_notif_path, "%s", real ? real : raw);
        free(real);
    }
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        fail(errno, "socketpair");
    g_target = fork();
    if (g_target < 0)
        fail(errno, "fork(target)");
    if (g_target == 0) {
        close(g_resfd);
        close(sv[0]);
        notif_target(sv[1], mode);
    }
    close(sv[1]);

    struct setup_msg m = { 0, 0 };
    union { char buf[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } ctl;
    struct iovec iov = { .iov_base = &m, .iov_len = sizeof m };
    struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
                         .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf };
    ssize_t n = recvmsg(sv[0], &mh, MSG_CMSG_CLOEXEC);
    if (n != (ssize_t)sizeof m)
        fail(n < 0 ? errno : 0, "no setup message from the target (got %zd bytes)", n);
    if (m.stage == 1)
        unavail("prctl(PR_SET_NO_NEW_PRIVS)", m.err);
    if (m.stage == 2)
        unavail("seccomp(SET_MODE_FILTER, NEW_LISTENER)", m.err);
    if (m.stage == 3)
        fail(m.err, "the target's preparation, %s", notif_modes[mode].prep);
    struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
    if (!cm || cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
        fail(0, "the target sent no listener fd");
    int lfd;
    memcpy(&lfd, CMSG_DATA(cm), sizeof lfd);

    struct pollfd pfd = { .fd = lfd, .events = POLLIN };
    int pr = poll(&pfd, 1, g_check_timeout_ms);
    if (pr < 0)
        fail(errno, "poll(listener)");
    if (!(pfd.revents & POLLIN))
        fail(0, "no notification from the target (poll revents 0x%x)", (unsigned)pfd.revents);

    struct seccomp_notif notif;
    memset(&notif, 0, sizeof notif);
    if (notif_ioctl(lfd, SECCOMP_IOCTL_NOTIF_RECV, &notif) != 0)
        unavail("ioctl(SECCOMP_IOCTL_NOTIF_RECV)", errno);
    if (notif.data.nr != __NR_getppid)
        fail(0, "notification for syscall %d, expected getppid (%d)", notif.data.nr, __NR_getppid);

    const char *detail = NULL; /* for value true: how it worked, where that varies */
    switch (mode) {
    case NOTIF_REPLY: notif_reply(lfd, notif.id); break;
    case NOTIF_ADDFD: detail = sup_addfd(lfd, &notif); break;
    case NOTIF_ID_VALID: detail = sup_id_valid(lfd, &notif); break;
    case NOTIF_SOCKET: detail = sup_socket(lfd, &notif); break;
    case NOTIF_PROC_FD: detail = sup_proc_fd(lfd, &notif); break;
    case NOTIF_MEM_READ: detail = sup_mem_read(lfd, &notif); break;
    case NOTIF_MEM_WRITE: detail = sup_mem_write(lfd, &notif); break;
    case NOTIF_CANCEL: sup_cancel(lfd, &notif, sv[0]);
    }

    int st;
    while (waitpid(g_target, &st, 0) < 0)
        if (errno != EINTR)
            fail(errno, "waitpid(target)");
    g_target = 0;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
        ok_bool(1, detail);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 1)
        ok_bool(0, notif_modes[mode].mismatch);
    if (WIFSIGNALED(st))
        fail(0, "target killed by signal %d", WTERMSIG(st));
    fail(0, "target exited %d", WEXITSTATUS(st));
}

static void chk_seccomp_notif_round_trip(void) { notif_supervisor(NOTIF_REPLY); }
static void chk_seccomp_addfd(void) { notif_supervisor(NOTIF_ADDFD); }
static void chk_seccomp_id_validation(void) { notif_supervisor(NOTIF_ID_VALID); }
static void chk_seccomp_retained_socket(void) { notif_supervisor(NOTIF_SOCKET); }
static void chk_seccomp_proc_fd_identity(void) { notif_supervisor(NOTIF_PROC_FD); }
static void chk_seccomp_task_memory_read(void) { notif_supervisor(NOTIF_MEM_READ); }
static void chk_seccomp_task_memory_write(void) { notif_supervisor(NOTIF_MEM_WRITE); }
static void chk_seccomp_cancellation(void) { notif_supervisor(NOTIF_CANCEL); }

static void chk_kernel_release(void)
{
    struct utsname u;
    if (uname(&u) != 0)
        fail(errno, "uname");
    ok_str(u.release);
}

static void chk_kernel_machine(void)
{
    struct utsname u;
    if (uname(&u) != 0)
        fail(errno, "uname");
    ok_str(u.machine);
}

/* ---- network helpers ----------------------------------------------------- */

typedef struct sockaddr_storage Addr;

static socklen_t addr_len(const Addr *a)
{
    return a->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

static unsigned addr_port(const Addr *a)
{
    const struct sockaddr_in *s4 = (const void *)a;
    const struct sockaddr_in6 *s6 = (const void *)a;
    return ntohs(a->ss_family == AF_INET6 ? s6->sin6_port : s4->sin_port);
}

/* "IP:PORT" or "[IPv6]:PORT" (no names: nothing here may use a resolver). */
static int parse_addr(const char *s, Addr *a)
{
    char host[64], *end;
    const char *colon = strrchr(s, ':');
    if (!colon || colon == s || (size_t)(colon - s) >= sizeof host)
        return -1;
    memcpy(host, s, (size_t)(colon - s));
    host[colon - s] = '\0';
    long port = strtol(colon + 1, &end, 10);
    if (end == colon + 1 || *end || port < 0 || port > 65535)
        return -1;
    memset(a, 0, sizeof *a);
    size_t hl = strlen(host);
    if (host[0] == '[' && hl > 2 && host[hl - 1] == ']') {
        struct sockaddr_in6 *s6 = (void *)a;
        host[hl - 1] = '\0';
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons((uint16_t)port);
        return inet_pton(AF_INET6, host + 1, &s6->sin6_addr) == 1 ? 0 : -1;
    }
    struct sockaddr_in *s4 = (void *)a;
    s4->sin_family = AF_INET;
    s4->sin_port = htons((uint16_t)port);
    return inet_pton(AF_INET, host, &s4->sin_addr) == 1 ? 0 : -1;
}

static void fmt_addr(const Addr *a, char *out, size_t cap)
{
    char ip[INET6_ADDRSTRLEN] = "?";
    if (a->ss_family == AF_INET6) {
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)a)->sin6_addr, ip, sizeof ip);
        snprintf(out, cap, "[%s]:%u", ip, addr_port(a));
    } else {
        inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)a)->sin_addr, ip, sizeof ip);
        snprintf(out, cap, "%s:%u", ip, addr_port(a));
    }
}

/* The address in an option this check needs. */
static void need_addr(const char **opt, Addr *a)
{
    const char *s = need(opt);
    if (parse_addr(s, a) != 0)
        for (size_t i = 0; i < NRUNOPTS; i++)
            if (run_opts[i].val == opt)
                fail(0, "bad %s (want IP:PORT): %s", run_opts[i].name, s);
}

/* One network step (connect, or a read) gives up after at most 2 s. */
static double net_end(void)
{
    double end = now_ms() + 2000.0;
    return end < check_end() ? end : check_end();
}

/* A nonblocking socket of `type` connected to a; -1 with errno. */
static int connect_to(const Addr *a, int type, double end)
{
    int fd = socket(a->ss_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (connect(fd, (const struct sockaddr *)a, addr_len(a)) != 0) {
        int e = errno;
        socklen_t len = sizeof e;
        if (e == EINPROGRESS && wait_io(fd, POLLOUT, end) != 0)
            e = errno;
        else if (e == EINPROGRESS && getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) != 0)
            e = errno;
        if (e) {
            close(fd);
            errno = e;
            return -1;
        }
    }
    return fd;
}

static int send_all(int fd, const void *p, size_t n, double end)
{
    const char *s = p;
    while (n > 0) {
        ssize_t k = send(fd, s, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && (errno != EAGAIN || wait_io(fd, POLLOUT, end) != 0))
            return -1;
        if (k > 0) {
            s += k;
            n -= (size_t)k;
        }
    }
    return 0;
}

/* Read until `want` bytes, a newline (if `line`), EOF, an error or `end`.
 * Returns the byte count; errno is 0 unless an error or the deadline stopped it. */
static size_t recv_until(int fd, void *buf, size_t want, int line, double end)
{
    char *b = buf;
    size_t n = 0;
    while (n < want && !(line && memchr(b, '\n', n))) {
        if (wait_io(fd, POLLIN, end) != 0)
            return n;
        ssize_t k = read(fd, b + n, want - n);
        if (k < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (k < 0)
            return n;
        if (k == 0)
            break;
        n += (size_t)k;
    }
    errno = 0;
    return n;
}

/* The TCP exchange: connect to a, send "HARNESS <tag> <check-id>\n", read
 * one line back (newline stripped) into reply. -1 (errno set) when the
 * connect failed; else 0, with *rerr the errno of a failed send or read. */
static int tcp_exchange(const Addr *a, char *reply, size_t cap, int *rerr)
{
    char msg[256];
    Addr me;
    socklen_t ml = sizeof me;
    int fd = connect_to(a, SOCK_STREAM, net_end());
    if (fd < 0)
        return -1;
    if (getsockname(fd, (struct sockaddr *)&me, &ml) == 0)
        ev_int("src_port", addr_port(&me));
    int n = snprintf(msg, sizeof msg, "HARNESS %s %s\n", o.tag, g_cur->id);
    size_t got = 0;
    if (send_all(fd, msg, (size_t)n, net_end()) == 0)
        got = recv_until(fd, reply, cap - 1, 1, net_end());
    *rerr = errno;
    reply[got] = '\0';
    reply[strcspn(reply, "\r\n")] = '\0';
    close(fd);
    return 0;
}

/* A TCP attempt (or control): escaped (ok) when "NONCE <nonce>" comes back;
 * succeeded (failed) when the connection worked but the nonce did not. */
__attribute__((noreturn))
static void tcp_check(const Addr *a)
{
    int ctl = g_cur->kind == K_CONTROL, rerr;
    char dst[80], reply[256], want[256];
    need(&o.tag);
    snprintf(want, sizeof want, "NONCE %s", need(&o.nonce));
    fmt_addr(a, dst, sizeof dst);
    ev_str("dst", dst);
    if (tcp_exchange(a, reply, sizeof reply, &rerr) != 0)
        outcome(ctl ? "failed" : "blocked", errno, "connect(%s)", dst);
    if (!strcmp(reply, want))
        outcome(ctl ? "ok" : "escaped", 0, "the nonce came back from %s", dst);
    /* A control only needs the connection: the allowed destination may be any
     * service, not necessarily a canary that knows the nonce. */
    outcome(ctl ? "ok" : "succeeded", 0, "connected to %s, but no nonce came back (%s, reply \"%.100s\")",
            dst, rerr ? strerror(rerr) : "no error", reply);
}

/* ---- DNS, built by hand: queries, answers, names -------------------------- */

enum { DNS_A = 1, DNS_TXT = 16 };

/* The name at off in a message (following compression pointers), dotted into
 * out (if not NULL). Returns the offset just past the name where it starts, or -1. */
static long dns_get_name(const unsigned char *m, size_t len, size_t off, char *out, size_t cap)
{
    size_t pos = off, next = 0, n = 0;
    int jumps = 0;
    if (out)
        out[0] = '\0';
    for (;;) {
        if (pos >= len)
            return -1;
        unsigned c = m[pos];
        if ((c & 0xc0) == 0xc0) {
            if (pos + 1 >= len || ++jumps > 32)
                return -1;
            if (jumps == 1)
                next = pos + 2;
            pos = (c & 0x3f) << 8 | m[pos + 1];
            continue;
        }
        if (c & 0xc0 || pos + 1 + c > len)
            return -1;
        if (c == 0)
            return (long)(jumps ? next : pos + 1);
        if (out && n + c + 2 < cap) {
            if (n)
                out[n++] = '.';
            memcpy(out + n, m + pos + 1, c);
            out[n += c] = '\0';
        }
        pos += 1 + c;
    }
}

/* A query with recursion desired; returns its length or -1. */
static int dns_build(unsigned char *q, size_t cap, uint16_t id, const char *name, int qtype)
{
    size_t p = 12, nl = strlen(name);
    if (cap < 12 + nl + 6 || nl == 0 || nl > 253)
        return -1;
    memset(q, 0, 12);
    q[0] = (unsigned char)(id >> 8);
    q[1] = (unsigned char)id;
    q[2] = 0x01; /* RD */
    q[5] = 1;    /* QDCOUNT */
    for (const char *s = name; *s;) {
        size_t l = strcspn(s, ".");
        if (l == 0 || l > 63)
            return -1;
        q[p++] = (unsigned char)l;
        memcpy(q + p, s, l);
        p += l;
        s += l + (s[l] == '.');
    }
    q[p++] = 0;
    q[p++] = (unsigned char)(qtype >> 8);
    q[p++] = (unsigned char)qtype;
    q[p++] = 0;
    q[p++] = 1; /* class IN */
    return (int)p;
}

struct dns_ans { int rcode, ancount, has_a; struct in_addr a; char txt[256]; };

/* Parse the response to query id: rcode, the first A and the first TXT string. */
static int dns_parse(const unsigned char *m, size_t len, uint16_t id, struct dns_ans *r)
{
    memset(r, 0, sizeof *r);
    if (len < 12 || (m[0] << 8 | m[1]) != id || !(m[2] & 0x80))
        return -1;
    r->rcode = m[3] & 0x0f;
    r->ancount = m[6] << 8 | m[7];
    long off = 12;
    for (int i = 0; i < (m[4] << 8 | m[5]); i++) {
        if ((off = dns_get_name(m, len, (size_t)off, NULL, 0)) < 0 || (size_t)off + 4 > len)
            return -1;
        off += 4;
    }
    for (int i = 0; i < r->ancount; i++) {
        if ((off = dns_get_name(m, len, (size_t)off, NULL, 0)) < 0 || (size_t)off + 10 > len)
            return -1;
        const unsigned char *rr = m + off, *rd = rr + 10;
        size_t type = (size_t)(rr[0] << 8 | rr[1]), rdlen = (size_t)(rr[8] << 8 | rr[9]);
        if ((size_t)off + 10 + rdlen > len)
            return -1;
        if (type == DNS_A && rdlen == 4 && !r->has_a) {
            memcpy(&r->a, rd, 4);
            r->has_a = 1;
        }
        if (type == DNS_TXT && rdlen >= 1 && rd[0] < rdlen && !r->txt[0]) {
            memcpy(r->txt, rd + 1, rd[0]);
            r->txt[rd[0]] = '\0';
        }
        off += 10 + (long)rdlen;
    }
    return 0;
}

enum { DQ_ENCODE, DQ_CONNECT, DQ_SEND, DQ_RECV, DQ_PARSE };
static const char *const dq_step[] = { "encode", "connect", "send", "receive", "parse" };

/* One query to srv over UDP or TCP (2-byte length prefix). 0 with the parsed
 * answer, or -1 with errno and *step saying where it failed. */
static int dns_query(const Addr *srv, int tcp, const char *name, int qtype, struct dns_ans *r, int *step)
{
    unsigned char q[2 + 512], m[4096];
    uint16_t id = (uint16_t)((unsigned)getpid() * 7919u + (unsigned)now_ms());
    int qn = dns_build(q + 2, sizeof q - 2, id, name, qtype), rc = -1;
    *step = DQ_ENCODE;
    if (qn < 0) {
        errno = EINVAL;
        return -1;
    }
    q[0] = (unsigned char)(qn >> 8);
    q[1] = (unsigned char)qn;
    *step = DQ_CONNECT;
    int fd = connect_to(srv, tcp ? SOCK_STREAM : SOCK_DGRAM, net_end());
    if (fd < 0)
        return -1;
    Addr me;
    socklen_t ml = sizeof me;
    if (getsockname(fd, (struct sockaddr *)&me, &ml) == 0)
        ev_int("src_port", addr_port(&me)); /* lets the harness match canary arrivals */
    double end = net_end();
    *step = DQ_SEND;
    if (send_all(fd, tcp ? q : q + 2, (size_t)qn + (tcp ? 2 : 0), end) == 0) {
        *step = DQ_RECV;
        if (tcp) {
            size_t len = recv_until(fd, m, 2, 0, end) == 2 ? (size_t)(m[0] << 8 | m[1]) : 0;
            if (len > sizeof m) {
                errno = EMSGSIZE;
            } else if (len && recv_until(fd, m, len, 0, end) == len) {
                *step = DQ_PARSE;
                if ((rc = dns_parse(m, len, id, r)) != 0)
                    errno = EBADMSG;
            } else if (!errno) {
                errno = ECONNRESET; /* closed before a whole answer came */
            }
        } else {
            /* Skip datagrams that are not the answer to this query. */
            while (rc != 0 && wait_io(fd, POLLIN, end) == 0) {
                ssize_t k = recv(fd, m, sizeof m, 0);
                if (k < 0 && errno != EINTR && errno != EAGAIN)
                    break;
                if (k > 0)
                    rc = dns_parse(m, (size_t)k, id, r);
            }
        }
    }
    int e = errno;
    close(fd);
    errno = e;
    return rc;
}

/* ---- scenario "egress" ------------------------------------------------------ */

static void chk_tcp_denied_name(void)
{
    Addr srv, dst;
    struct dns_ans r;
    char name[300], where[80];
    int step;
    need_addr(&o.resolver, &srv);
    need_addr(&o.canary_tcp, &dst);
    need(&o.nonce);
    snprintf(name, sizeof name, "t-%s.%s", need(&o.tag), need(&o.denied_name));
    fmt_addr(&srv, where, sizeof where);
    ev_str("qname", name);
    if (dns_query(&srv, 0, name, DNS_A, &r, &step) != 0)
        outcome(step == DQ_ENCODE ? "error" : "blocked", errno, "DNS A %s via %s: %s",
                name, where, dq_step[step]);
    if (r.rcode || !r.has_a)
        outcome("blocked", 0, "DNS A %s via %s: rcode %d, no A record", name, where, r.rcode);
    char ip[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &r.a, ip, sizeof ip);
    ev_str("resolved", ip);
    /* The answer, on the canary's port. */
    unsigned port = addr_port(&dst);
    struct sockaddr_in *s4 = (void *)&dst;
    memset(&dst, 0, sizeof dst);
    s4->sin_family = AF_INET;
    s4->sin_port = htons((uint16_t)port);
    s4->sin_addr = r.a;
    tcp_check(&dst);
}

/* The TCP exchange with the address in an option. */
__attribute__((noreturn))
static void tcp_to(const char **opt)
{
    Addr a;
    need_addr(opt, &a);
    tcp_check(&a);
}

static void chk_tcp_raw_ip(void) { tcp_to(&o.canary_tcp); }
static void chk_doh_port(void) { tcp_to(&o.doh); }

/* TXT <check-id>.<tag>.<denied-name> to the alternate resolver. */
static void dns_alt(int tcp)
{
    Addr srv;
    struct dns_ans r;
    char name[300], want[300], where[80];
    int step;
    need_addr(&o.alt_dns, &srv);
    snprintf(name, sizeof name, "%s.%s.%s", g_cur->id, need(&o.tag), need(&o.denied_name));
    snprintf(want, sizeof want, "nonce=%s", need(&o.nonce));
    fmt_addr(&srv, where, sizeof where);
    ev_str("dst", where);
    ev_str("qname", name);
    if (dns_query(&srv, tcp, name, DNS_TXT, &r, &step) != 0) {
        if (step == DQ_ENCODE)
            fail(0, "cannot encode DNS name %s", name);
        if (!tcp || step == DQ_CONNECT)
            outcome("blocked", errno, "DNS TXT %s via %s/%s: %s", name, where, tcp ? "tcp" : "udp",
                    dq_step[step]);
        /* Over TCP, a completed connect already crossed the boundary. */
        outcome("succeeded", 0, "connected to %s, but no DNS answer: %s: %s", where, dq_step[step],
                strerror(errno));
    }
    if (!strcmp(r.txt, want))
        outcome("escaped", 0, "TXT answer from %s carries the nonce", where);
    outcome("succeeded", 0, "answer from %s without the nonce (rcode %d, %d answers)",
            where, r.rcode, r.ancount);
}

static void chk_dns_alt_udp(void) { dns_alt(0); }
static void chk_dns_alt_tcp(void) { dns_alt(1); }

/* ---- scenario "egress": the sweep ------------------------------------------
 * Every channel a real network leaves open, for IPv4 and IPv6 at once: TCP to a
 * spread of ports, UDP, ICMP echo, DNS through the sandbox's own resolver, and
 * HTTP CONNECT / SOCKS5 through every unix socket the sandbox can reach. All
 * attempts run concurrently on nonblocking sockets in one child, so the sweep
 * fits in one check's time limit; each attempt is reported as a check line of
 * its own ("kind":"attempt"). A packet that leaves proves nothing by itself
 * here: the canary's nonce coming back does, and so does the canary's log. */

static const int sweep_tcp_ports[] = { 22, 25, 53, 80, 443, 853, 8080, 8443, 0 /* high */ };
static const int sweep_udp_ports[] = { 53, 123, 443, 0 /* high */ };

enum { X_LINE, X_DNS, X_HTTP, X_SOCKS, X_ICMP };
enum { S_CONNECT, S_SEND, S_RECV, S_DONE };
enum { G_SELF, G_OWN_DNS, G_UNIX };
#define MAX_ATT 192
#define UNIX_MAX 48

struct att {
    char id[48], dsts[120];
    int family, type, talk, group, raw, fd, state, step, err, src_port;
    Addr dst;
    struct sockaddr_un un;
    double t0, end;
    unsigned char out[700], in[1500];
    size_t outn, outoff, inn;
    uint16_t qid;
    char oc[12], detail[300], qname[300];
};
static struct att g_att[MAX_ATT];
static size_t g_natt;

static struct att *att_new(const char *id, int group)
{
    if (g_natt == MAX_ATT)
        return NULL;
    struct att *a = &g_att[g_natt++];
    memset(a, 0, sizeof *a);
    snprintf(a->id, sizeof a->id, "%s", id);
    a->group = group;
    a->fd = -1;
    return a;
}

__attribute__((format(printf, 4, 5)))
static void att_end(struct att *a, const char *oc, int e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->detail, sizeof a->detail, fmt, ap);
    va_end(ap);
    snprintf(a->oc, sizeof a->oc, "%s", oc);
    a->err = e;
    a->state = S_DONE;
    if (a->fd >= 0)
        close(a->fd);
    a->fd = -1;
}

/* One check line's fragment for the parent: "id":..,"kind":"attempt",... */
static void att_line(const char *id, const char *oc, int e, const char *detail, double t0,
                     const char *dst, int src_port, const char *qname)
{
    Buf b = { .n = 0 };
    bput(&b, "\"id\":");
    bstr(&b, id);
    bput(&b, ",\"kind\":\"attempt\",\"outcome\":");
    bstr(&b, oc);
    if (e)
        frag_errno(&b, e);
    bput(&b, ",\"detail\":");
    bstr(&b, detail);
    bput(&b, ",\"elapsed_ms\":%.3f,\"evidence\":{", now_ms() - t0);
    bput(&b, "\"dst\":");
    bstr(&b, dst ? dst : "");
    if (src_port > 0)
        bput(&b, ",\"src_port\":%d", src_port);
    if (qname && *qname) {
        bput(&b, ",\"qname\":");
        bstr(&b, qname);
    }
    bput(&b, "}\n");
    write_all(g_resfd, b.s, b.n);
}

static void att_report(const struct att *a)
{
    char detail[400];
    snprintf(detail, sizeof detail, "%s%s%s", a->detail, a->err ? ": " : "", a->err ? strerror(a->err) : "");
    att_line(a->id, a->oc, a->err, detail, a->t0, a->dsts, a->src_port, a->qname);
}

static void att_line_msg(struct att *a)
{
    a->outn = (size_t)snprintf((char *)a->out, sizeof a->out, "HARNESS %s %s\n", o.tag, a->id);
}

static void att_dns_msg(struct att *a, int tcp)
{
    unsigned char *q = a->out + (tcp ? 2 : 0);
    a->qid = (uint16_t)((unsigned)getpid() * 31u + (unsigned)g_natt * 977u + (unsigned)now_ms());
    int n = dns_build(q, sizeof a->out - 2, a->qid, a->qname, DNS_TXT);
    if (n < 0) {
        att_end(a, "error", 0, "cannot encode DNS name %s", a->qname);
        return;
    }
    if (tcp) {
        a->out[0] = (unsigned char)(n >> 8);
        a->out[1] = (unsigned char)n;
    }
    a->outn = (size_t)n + (tcp ? 2 : 0);
}

static void att_src_port(struct att *a)
{
    Addr me;
    socklen_t ml = sizeof me;
    if (a->family != AF_UNIX && getsockname(a->fd, (struct sockaddr *)&me, &ml) == 0)
        a->src_port = (int)addr_port(&me);
}

/* Open the socket and start the attempt; failures end it at once. */
static void att_start(struct att *a)
{
    a->t0 = now_ms();
    a->end = a->t0 + (a->family == AF_UNIX ? 1500.0 : 2000.0);
    if (a->end > check_end() - 150.0)
        a->end = check_end() - 150.0;
    if (a->state == S_DONE)
        return;
    if (a->talk == X_ICMP) {
        int proto = a->family == AF_INET6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP;
        a->fd = socket(a->family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, proto);
        if (a->fd < 0) {
            a->raw = 1;
            a->fd = socket(a->family, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, proto);
        }
        if (a->fd < 0) {
            att_end(a, "blocked", errno, "no ICMP socket (datagram or raw) could be made");
            return;
        }
        unsigned char *p = a->out;
        memset(p, 0, 8);
        p[0] = a->family == AF_INET6 ? 128 : 8; /* echo request */
        uint16_t ident = (uint16_t)getpid();
        p[4] = (unsigned char)(ident >> 8);
        p[5] = (unsigned char)ident;
        p[7] = 1;
        int n = snprintf((char *)p + 8, sizeof a->out - 8, "HARNESS %s %s", o.tag, a->id);
        a->outn = 8 + (size_t)n;
        if (a->family == AF_INET && a->raw) { /* the kernel fills in the ICMPv6 checksum, not this */
            uint32_t sum = 0;
            for (size_t i = 0; i + 1 < a->outn; i += 2)
                sum += (uint32_t)(p[i] << 8 | p[i + 1]);
            if (a->outn & 1)
                sum += (uint32_t)(p[a->outn - 1] << 8);
            while (sum >> 16)
                sum = (sum & 0xffff) + (sum >> 16);
            p[2] = (unsigned char)(~sum >> 8);
            p[3] = (unsigned char)~sum;
        }
        if (sendto(a->fd, p, a->outn, MSG_NOSIGNAL, (struct sockaddr *)&a->dst, addr_len(&a->dst)) < 0) {
            att_end(a, "blocked", errno, "ICMP echo to %s", a->dsts);
            return;
        }
        if (a->raw)
            a->src_port = ident;
        else
            att_src_port(a); /* a datagram ICMP socket's "port" is the echo id */
        a->state = S_RECV;
        return;
    }
    a->fd = socket(a->family, a->type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (a->fd < 0) {
        att_end(a, "blocked", errno, "socket for %s", a->dsts);
        return;
    }
    const struct sockaddr *sa = a->family == AF_UNIX ? (const struct sockaddr *)&a->un : (const struct sockaddr *)&a->dst;
    socklen_t sl = a->family == AF_UNIX ? (socklen_t)sizeof a->un : addr_len(&a->dst);
    if (connect(a->fd, sa, sl) != 0 && errno != EINPROGRESS) {
        att_end(a, "blocked", errno, "connect(%s)", a->dsts);
        return;
    }
    att_src_port(a);
    a->state = a->type == SOCK_STREAM ? S_CONNECT : S_SEND;
}

/* The reply so far: 0 want more, 1 finished (result set), 2 go on to the next step. */
static int att_judge(struct att *a, int eof)
{
    char want[256], *line = (char *)a->in;
    snprintf(want, sizeof want, "NONCE %s", o.nonce);
    a->in[a->inn] = '\0';
    if (a->talk == X_LINE || (a->step == 2 && (a->talk == X_HTTP || a->talk == X_SOCKS))
        || (a->step == 1 && a->talk == X_HTTP)) {
        if (!memchr(a->in, '\n', a->inn) && !eof && a->type == SOCK_STREAM)
            return 0;
        line[strcspn(line, "\r\n")] = '\0';
        if (!strcmp(line, want)) {
            if (a->group == G_UNIX)
                att_end(a, "escaped", 0, "%s through unix socket %s: the nonce came back",
                        a->talk == X_HTTP ? "HTTP CONNECT" : "SOCKS5", a->dsts);
            else
                att_end(a, "escaped", 0, "the nonce came back from %s", a->dsts);
        } else {
            att_end(a, a->group == G_UNIX ? "blocked" : "succeeded", 0,
                    "connected to %s, but no nonce came back (reply \"%.80s\")", a->dsts, line);
        }
        return 1;
    }
    if (a->talk == X_DNS) {
        struct dns_ans r;
        size_t off = a->type == SOCK_STREAM ? 2 : 0;
        if (a->type == SOCK_STREAM && (a->inn < 2 || a->inn < 2 + (size_t)(a->in[0] << 8 | a->in[1])))
            return eof ? (att_end(a, "succeeded", 0, "connected to %s, but no whole DNS answer", a->dsts), 1) : 0;
        if (dns_parse(a->in + off, a->inn - off, a->qid, &r) != 0) {
            if (a->type == SOCK_DGRAM) {
                a->inn = 0; /* not the answer to this query: wait for another */
                return 0;
            }
            att_end(a, "succeeded", 0, "an answer from %s that is not DNS", a->dsts);
            return 1;
        }
        snprintf(want, sizeof want, "nonce=%s", o.nonce);
        if (!strcmp(r.txt, want))
            att_end(a, "escaped", 0, "TXT answer from %s carries the nonce", a->dsts);
        else
            att_end(a, "succeeded", 0, "answer from %s without the nonce (rcode %d, %d answers)",
                    a->dsts, r.rcode, r.ancount);
        return 1;
    }
    if (a->talk == X_ICMP) {
        size_t off = 0;
        if (a->raw && a->family == AF_INET && a->inn >= 20)
            off = (size_t)(a->in[0] & 15) * 4;
        if (a->inn >= off + 8 && (a->in[off] == 0 || a->in[off] == 129)) {
            att_end(a, "succeeded", 0, "echo reply from %s (a crossing is proved only by the canary)", a->dsts);
            return 1;
        }
        a->inn = 0;
        return 0;
    }
    if (a->talk == X_HTTP) { /* step 0: the proxy's answer to CONNECT */
        if (!strstr(line, "\r\n\r\n") && !eof && a->inn < sizeof a->in - 1)
            return 0;
        if (strncmp(line, "HTTP/1.", 7) || strncmp(line + 8, " 200", 4)) {
            line[strcspn(line, "\r\n")] = '\0';
            att_end(a, "blocked", 0, "%s refused HTTP CONNECT (\"%.60s\")", a->dsts, line);
            return 1;
        }
        return 2;
    }
    /* SOCKS5: step 0 the method reply, step 1 the connect reply */
    size_t need = a->step == 0 ? 2 : 10;
    if (a->inn < need)
        return eof ? (att_end(a, "blocked", 0, "%s: no SOCKS5 answer", a->dsts), 1) : 0;
    if (a->in[0] != 5 || a->in[1] != 0) {
        att_end(a, "blocked", 0, "%s refused SOCKS5 (%u %u)", a->dsts, a->in[0], a->in[1]);
        return 1;
    }
    return 2;
}

/* What to send at the attempt's current step. */
static void att_next_out(struct att *a, const Addr *target)
{
    a->inn = 0;
    a->outoff = 0;
    if (a->talk == X_HTTP && a->step == 0) {
        char t[80];
        fmt_addr(target, t, sizeof t);
        a->outn = (size_t)snprintf((char *)a->out, sizeof a->out, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", t, t);
    } else if (a->talk == X_SOCKS && a->step == 0) {
        memcpy(a->out, "\x05\x01\x00", 3);
        a->outn = 3;
    } else if (a->talk == X_SOCKS && a->step == 1) {
        const struct sockaddr_in *s4 = (const void *)target;
        unsigned char *p = a->out;
        p[0] = 5; p[1] = 1; p[2] = 0; p[3] = 1;
        memcpy(p + 4, &s4->sin_addr, 4);
        memcpy(p + 8, &s4->sin_port, 2);
        a->outn = 10;
    } else {
        att_line_msg(a);
    }
}

static int in_ranges(const Addr *a, const char *ranges)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", ranges ? ranges : "");
    for (char *save = NULL, *r = strtok_r(buf, ",", &save); r; r = strtok_r(NULL, ",", &save)) {
        char *slash = strchr(r, '/');
        int bits = slash ? atoi(slash + 1) : -1;
        if (slash)
            *slash = '\0';
        unsigned char net[16], *ip;
        int len;
        if (a->ss_family == AF_INET && inet_pton(AF_INET, r, net) == 1) {
            ip = (unsigned char *)&((struct sockaddr_in *)(void *)a)->sin_addr;
            len = 4;
        } else if (a->ss_family == AF_INET6 && inet_pton(AF_INET6, r, net) == 1) {
            ip = (unsigned char *)&((struct sockaddr_in6 *)(void *)a)->sin6_addr;
            len = 16;
        } else {
            continue;
        }
        if (bits < 0 || bits > len * 8)
            bits = len * 8;
        int ok = 1;
        for (int i = 0; i < bits && ok; i++)
            ok = ((ip[i / 8] ^ net[i / 8]) & (0x80 >> (i % 8))) == 0;
        if (ok)
            return 1;
    }
    return 0;
}

/* The sandbox's own resolvers (/etc/resolv.conf; libc's default without one). */
static void sweep_own_dns(const char *denied)
{
    char conf[4096], name[300];
    ssize_t n = read_file("/etc/resolv.conf", conf, sizeof conf - 1);
    int found = 0;
    conf[n > 0 ? n : 0] = '\0';
    snprintf(name, sizeof name, "dns-own.%s.%s", o.tag, denied);
    for (char *save = NULL, *l = strtok_r(conf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        char ip[64], spec[80];
        if (sscanf(l, " nameserver %63s", ip) != 1 || found == 3)
            continue;
        snprintf(spec, sizeof spec, strchr(ip, ':') ? "[%s]:53" : "%s:53", ip);
        struct att *a = att_new("dns-own", G_OWN_DNS);
        if (!a || parse_addr(spec, &a->dst) != 0) {
            if (a)
                g_natt--;
            continue;
        }
        found++;
        a->family = a->dst.ss_family;
        a->type = SOCK_DGRAM;
        a->talk = X_DNS;
        snprintf(a->dsts, sizeof a->dsts, "%s (own resolver)", spec);
        snprintf(a->qname, sizeof a->qname, "%s", name);
    }
    if (!found) { /* no resolv.conf: libc asks the local host */
        struct att *a = att_new("dns-own", G_OWN_DNS);
        if (a) {
            parse_addr("127.0.0.1:53", &a->dst);
            a->family = AF_INET;
            a->type = SOCK_DGRAM;
            a->talk = X_DNS;
            snprintf(a->dsts, sizeof a->dsts, "127.0.0.1:53 (libc default, no resolv.conf)");
            snprintf(a->qname, sizeof a->qname, "%s", name);
        }
    }
}

/* A resolver outside --resolver-ranges is asked only if no packet could leave:
 * connecting a UDP socket sends nothing, and tells whether there is a route. */
static void own_dns_gate(struct att *a)
{
    if (in_ranges(&a->dst, o.resolver_ranges))
        return;
    int fd = socket(a->family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        att_end(a, "blocked", errno, "socket for %s", a->dsts);
        return;
    }
    if (connect(fd, (struct sockaddr *)&a->dst, addr_len(&a->dst)) != 0) {
        int e = errno;
        close(fd);
        att_end(a, "blocked", e, "no route to %s", a->dsts);
        return;
    }
    close(fd);
    att_end(a, "error", 0, "%s is outside the resolver ranges harness may query; not tried", a->dsts);
}

static void unix_add(const char *path, int abstract)
{
    for (size_t i = 0; i < g_natt; i++)
        if (g_att[i].group == G_UNIX && !strcmp(g_att[i].dsts, path) && (g_att[i].un.sun_path[0] == 0) == abstract)
            return;
    size_t len = strlen(path);
    if (len == 0 || len >= sizeof ((struct sockaddr_un *)0)->sun_path - 1)
        return;
    for (int talk = X_HTTP; talk <= X_SOCKS; talk++) {
        size_t units = 0;
        for (size_t i = 0; i < g_natt; i++)
            units += g_att[i].group == G_UNIX;
        if (units >= 2 * UNIX_MAX)
            return;
        struct att *a = att_new("unix-proxy", G_UNIX);
        if (!a)
            return;
        a->family = AF_UNIX;
        a->type = SOCK_STREAM;
        a->talk = talk;
        a->un.sun_family = AF_UNIX;
        memcpy(a->un.sun_path + abstract, path, len);
        snprintf(a->dsts, sizeof a->dsts, "%s%s", abstract ? "@" : "", path);
        if (abstract) /* dsts shows '@'; compare on the bare name above */
            snprintf(a->dsts, sizeof a->dsts, "%s", path);
    }
}

static void unix_walk(const char *dir, int depth)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        char p[512];
        struct stat st;
        if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
            continue;
        snprintf(p, sizeof p, "%s/%s", strcmp(dir, "/") ? dir : "", e->d_name);
        if (lstat(p, &st) != 0)
            continue;
        if (S_ISSOCK(st.st_mode))
            unix_add(p, 0);
        else if (S_ISDIR(st.st_mode) && depth > 0 && strcmp(p, "/proc") && strcmp(p, "/sys"))
            unix_walk(p, depth - 1);
    }
    closedir(d);
}

static void sweep_unix(void)
{
    char buf[65536];
    ssize_t n = read_file("/proc/net/unix", buf, sizeof buf - 1);
    buf[n > 0 ? n : 0] = '\0';
    for (char *save = NULL, *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        char flags[16], path[256] = "";
        unsigned type;
        /* Num RefCount Protocol Flags Type St Inode Path */
        if (sscanf(l, "%*s %*s %*s %15s %x %*s %*s %255s", flags, &type, path) != 3)
            continue;
        if (type != 1 || strtoul(flags, NULL, 16) != 0x10000) /* stream, listening */
            continue;
        unix_add(path[0] == '@' ? path + 1 : path, path[0] == '@');
    }
    static const char *const dirs[] = { "/run", "/var/run", "/tmp", "/var/tmp", "/dev/shm", "/" };
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
        unix_walk(dirs[i], strcmp(dirs[i], "/") ? 3 : 1);
}

/* The line for a group (own resolver, unix sockets): escaped if any attempt
 * escaped; else what leaves most doubt; with what was tried. */
static void group_report(int group, const char *id, double t0)
{
    static const char *const rank[] = { "escaped", "succeeded", "error", "blocked" };
    const struct att *pick = NULL;
    size_t tried = 0;
    char list[300] = "";
    for (size_t i = 0; i < g_natt; i++) {
        const struct att *a = &g_att[i];
        if (a->group != group)
            continue;
        tried++;
        size_t l = strlen(list);
        if (!strstr(list, a->dsts) && l + strlen(a->dsts) + 3 < sizeof list)
            snprintf(list + l, sizeof list - l, "%s%s", l ? ", " : "", a->dsts);
        for (size_t r = 0; r < 4; r++) {
            if (strcmp(a->oc, rank[r]))
                continue;
            size_t cur = 4;
            for (size_t k = 0; pick && k < 4; k++)
                if (!strcmp(pick->oc, rank[k]))
                    cur = k;
            if (r < cur)
                pick = a;
        }
    }
    if (!tried) {
        att_line(id, "blocked", 0, "no unix socket is visible in the sandbox", t0, "", 0, NULL);
        return;
    }
    char detail[700];
    snprintf(detail, sizeof detail, "%s (%zu attempt%s: %s)", pick ? pick->detail : "?", tried,
             tried == 1 ? "" : "s", list);
    att_line(id, pick ? pick->oc : "error", pick ? pick->err : 0, detail, t0, pick ? pick->dsts : "",
             pick ? pick->src_port : 0, pick ? pick->qname : NULL);
}

static void sweep_add(const char *id, const char *ip, int port, int type, int talk)
{
    char spec[96];
    struct att *a = att_new(id, G_SELF);
    if (!a)
        return;
    snprintf(spec, sizeof spec, strchr(ip, ':') ? "[%s]:%d" : "%s:%d", ip, port);
    snprintf(a->dsts, sizeof a->dsts, "%s", spec);
    if (parse_addr(spec, &a->dst) != 0) {
        att_end(a, "error", 0, "bad canary address %s", spec);
        return;
    }
    a->family = a->dst.ss_family;
    a->type = type;
    a->talk = talk;
    if (talk == X_DNS)
        snprintf(a->qname, sizeof a->qname, "%s.%s.%s", id, o.tag, o.denied_name);
}

static void chk_egress_sweep(void)
{
    double t0 = now_ms();
    const char *fams[2] = { o.canary4, o.canary6 };
    long high = o.high_port ? strtol(o.high_port, NULL, 10) : 0;
    Addr target;
    need(&o.tag);
    need(&o.nonce);
    need(&o.denied_name);
    need_addr(&o.canary_tcp, &target);
    if (high <= 0 || high > 65535)
        fail(0, "--high-port not given");
    for (int f = 0; f < 2; f++) {
        if (!fams[f] || !*fams[f])
            continue; /* a canary without that family: its checks are not asked for */
        char id[48];
        for (size_t i = 0; i < sizeof sweep_tcp_ports / sizeof sweep_tcp_ports[0]; i++) {
            int port = sweep_tcp_ports[i] ? sweep_tcp_ports[i] : (int)high;
            snprintf(id, sizeof id, "tcp%d-%s", f ? 6 : 4, sweep_tcp_ports[i] ? "" : "high");
            if (sweep_tcp_ports[i])
                snprintf(id, sizeof id, "tcp%d-%d", f ? 6 : 4, port);
            sweep_add(id, fams[f], port, SOCK_STREAM, port == 53 ? X_DNS : X_LINE);
        }
        for (size_t i = 0; i < sizeof sweep_udp_ports / sizeof sweep_udp_ports[0]; i++) {
            int port = sweep_udp_ports[i] ? sweep_udp_ports[i] : (int)high;
            snprintf(id, sizeof id, "udp%d-high", f ? 6 : 4);
            if (sweep_udp_ports[i])
                snprintf(id, sizeof id, "udp%d-%d", f ? 6 : 4, port);
            sweep_add(id, fams[f], port, SOCK_DGRAM, port == 53 ? X_DNS : X_LINE);
        }
        snprintf(id, sizeof id, "icmp%d", f ? 6 : 4);
        sweep_add(id, fams[f], 0, 0, X_ICMP);
    }
    sweep_own_dns(o.denied_name);
    sweep_unix();

    for (size_t i = 0; i < g_natt; i++) {
        struct att *a = &g_att[i];
        if (a->group == G_OWN_DNS)
            own_dns_gate(a);
        if (a->state != S_DONE && a->talk != X_ICMP) {
            if (a->talk == X_DNS)
                att_dns_msg(a, a->type == SOCK_STREAM);
            else
                att_next_out(a, &target);
        }
        att_start(a);
        if (a->state == S_DONE && a->group == G_SELF)
            att_report(a);
    }
    static struct pollfd pf[MAX_ATT];
    static size_t idx[MAX_ATT];
    for (;;) {
        size_t np = 0;
        double now = now_ms(), next = -1;
        for (size_t i = 0; i < g_natt; i++) {
            struct att *a = &g_att[i];
            if (a->state == S_DONE)
                continue;
            if (now >= a->end) {
                if (a->state == S_CONNECT)
                    att_end(a, "blocked", ETIMEDOUT, "connect(%s)", a->dsts);
                else if (a->type == SOCK_STREAM && a->group == G_SELF)
                    att_judge(a, 1);
                else if (a->group == G_UNIX)
                    att_end(a, "blocked", 0, "%s: no proxy answer", a->dsts);
                else
                    att_end(a, "blocked", ETIMEDOUT, "no answer from %s", a->dsts);
                if (a->group == G_SELF)
                    att_report(a);
                continue;
            }
            pf[np] = (struct pollfd){ .fd = a->fd, .events = a->state == S_RECV ? POLLIN : POLLOUT };
            idx[np++] = i;
            if (next < 0 || a->end < next)
                next = a->end;
        }
        if (!np)
            break;
        int wait = (int)(next - now + 1);
        if (poll(pf, np, wait < 1 ? 1 : wait) < 0 && errno != EINTR)
            break;
        for (size_t k = 0; k < np; k++) {
            struct att *a = &g_att[idx[k]];
            if (!pf[k].revents)
                continue;
            if (a->state == S_CONNECT) {
                int e = 0;
                socklen_t len = sizeof e;
                getsockopt(a->fd, SOL_SOCKET, SO_ERROR, &e, &len);
                if (e) {
                    att_end(a, "blocked", e, "connect(%s)", a->dsts);
                } else {
                    att_src_port(a);
                    a->state = S_SEND;
                }
            } else if (a->state == S_SEND) {
                ssize_t w = send(a->fd, a->out + a->outoff, a->outn - a->outoff, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (w < 0 && errno != EAGAIN && errno != EINTR)
                    att_end(a, a->type == SOCK_STREAM && a->group == G_SELF ? "succeeded" : "blocked", errno,
                            "send to %s", a->dsts);
                else if (w > 0 && (a->outoff += (size_t)w) == a->outn)
                    a->state = S_RECV;
            } else {
                ssize_t r = recv(a->fd, a->in + a->inn, sizeof a->in - 1 - a->inn, MSG_DONTWAIT);
                if (r < 0 && (errno == EAGAIN || errno == EINTR))
                    continue;
                if (r < 0 && a->type == SOCK_DGRAM) {
                    att_end(a, "blocked", errno, "no answer from %s", a->dsts);
                } else if (r < 0 || (r == 0 && a->type == SOCK_STREAM)) {
                    att_judge(a, 1);
                    if (a->state != S_DONE)
                        att_end(a, "blocked", 0, "%s closed", a->dsts);
                } else {
                    a->inn += (size_t)r;
                    if (a->inn >= sizeof a->in - 1)
                        a->inn = sizeof a->in - 2;
                    if (att_judge(a, 0) == 2) {
                        a->step++;
                        att_next_out(a, &target);
                        a->state = S_SEND;
                    }
                }
            }
            if (a->state == S_DONE && a->group == G_SELF)
                att_report(a);
        }
    }
    group_report(G_OWN_DNS, "dns-own", t0);
    group_report(G_UNIX, "unix-proxy", t0);
    _exit(0);
}

/* ---- scenario "filesystem" ------------------------------------------------ */

#define READ_MAX 65536
static char g_file[READ_MAX]; /* what a file check read */

static int has_token(const char *buf, ssize_t n)
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
        outcome("blocked", errno, "read %s", path);
    ev_int("bytes", n);
    if (has_token(g_file, n))
        outcome("escaped", 0, "read the token through %s", path);
    outcome("succeeded", 0, "read %zd bytes of %s, but no token", n, path);
}

/* Open path for writing with extra flags and write the token: succeeded. */
__attribute__((noreturn))
static void write_attempt(const char *path, int flags)
{
    const char *token = need(&o.token);
    int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | flags, 0644);
    if (fd < 0)
        outcome("blocked", errno, "open %s", path);
    if (write(fd, token, strlen(token)) != (ssize_t)strlen(token))
        outcome("blocked", errno, "write %s", path);
    close(fd);
    outcome("succeeded", 0, "wrote the token to %s", path);
}

static void chk_fs_read_outside(void) { read_attempt(need(&o.sentinel)); }
static void chk_fs_create_outside(void) { write_attempt(in_dir(&o.outside_dir, "created-"), O_CREAT | O_EXCL); }
static void chk_fs_overwrite_outside(void) { write_attempt(need(&o.overwrite), O_TRUNC); }
static void chk_fs_symlink_planted(void) { read_attempt(need(&o.planted_link)); }

static void chk_fs_traversal(void)
{
    char path[4096];
    int n = snprintf(path, sizeof path, "%s", need(&o.allowed_dir));
    for (int i = 0; i < 32 && n > 0 && (size_t)n < sizeof path; i++)
        n += snprintf(path + n, sizeof path - (size_t)n, "/..");
    if (n > 0 && (size_t)n < sizeof path)
        snprintf(path + n, sizeof path - (size_t)n, "%s", need(&o.sentinel));
    read_attempt(path);
}

static void chk_fs_symlink_made(void)
{
    const char *target = need(&o.sentinel), *path = in_dir(&o.allowed_dir, "link-");
    need(&o.token);
    if (symlink(target, path) != 0)
        outcome("blocked", errno, "symlink(%s, %s)", target, path);
    read_attempt(path);
}

static void proc_root(const char *root)
{
    char path[4096];
    snprintf(path, sizeof path, "%s%s", root, need(&o.sentinel));
    read_attempt(path);
}

static void chk_fs_proc_self_root(void) { proc_root("/proc/self/root"); }
static void chk_fs_proc_1_root(void) { proc_root("/proc/1/root"); }

static void chk_fs_hardlink_in(void)
{
    const char *target = need(&o.sentinel), *path = in_dir(&o.allowed_dir, "hardlink-");
    need(&o.token);
    if (link(target, path) != 0)
        outcome("blocked", errno, "link(%s, %s)", target, path);
    read_attempt(path);
}

static void chk_fs_rename_in(void)
{
    const char *from = need(&o.rename), *to = in_dir(&o.allowed_dir, "renamed-");
    if (rename(from, to) != 0)
        outcome("blocked", errno, "rename(%s, %s)", from, to);
    outcome("succeeded", 0, "renamed %s to %s", from, to);
}

/* Controls: the allowed directory must work. Read the control file back. */
static void control_read(const char *path)
{
    ssize_t n = read_file(path, g_file, sizeof g_file);
    if (n < 0)
        outcome("failed", errno, "read %s", path);
    if (!has_token(g_file, n))
        outcome("failed", 0, "%s does not hold the token (%zd bytes)", path, n);
    outcome("ok", 0, "read the token back from %s", path);
}

static void chk_fs_allowed_write(void)
{
    const char *path = in_dir(&o.allowed_dir, "control-"), *token = need(&o.token);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        outcome("failed", errno, "open %s", path);
    if (write(fd, token, strlen(token)) != (ssize_t)strlen(token))
        outcome("failed", errno, "write %s", path);
    close(fd);
    control_read(path);
}

static void chk_fs_allowed_read(void)
{
    need(&o.token);
    control_read(in_dir(&o.allowed_dir, "control-"));
}

/* ---- the mount table and every route to every sentinel ------------------- */

#define PROC_SUPER_MAGIC 0x9fa0
#define MAX_MOUNTS 512
struct mnt { unsigned maj, min; char *root, *mp, *type; };
static struct mnt g_mnt[MAX_MOUNTS];
static int g_nmnt;
static char g_mntbuf[131072];

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void mnt_unescape(char *s)
{
    char *w = s;
    for (char *r = s; *r;) {
        if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
            r[3] >= '0' && r[3] <= '7') {
            *w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
            r += 4;
        } else {
            *w++ = *r++;
        }
    }
    *w = '\0';
}

/* Parse /proc/self/mountinfo into g_mnt; 0, or -1 with errno (EFBIG: too long). */
static int read_mounts(void)
{
    ssize_t n = read_file("/proc/self/mountinfo", g_mntbuf, sizeof g_mntbuf - 1);
    if (n < 0)
        return -1;
    if ((size_t)n == sizeof g_mntbuf - 1) {
        errno = EFBIG;
        return -1;
    }
    g_mntbuf[n] = '\0';
    g_nmnt = 0;
    char *save = NULL;
    for (char *line = strtok_r(g_mntbuf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *tok[64], *s2 = NULL;
        int k = 0;
        for (char *t = strtok_r(line, " ", &s2); t && k < 64; t = strtok_r(NULL, " ", &s2))
            tok[k++] = t;
        int sep = -1;
        for (int i = 6; i < k; i++)
            if (!strcmp(tok[i], "-")) {
                sep = i;
                break;
            }
        if (k < 5 || sep < 0 || sep + 1 >= k)
            continue;
        if (g_nmnt == MAX_MOUNTS) {
            errno = EFBIG;
            return -1;
        }
        struct mnt *m = &g_mnt[g_nmnt++];
        if (sscanf(tok[2], "%u:%u", &m->maj, &m->min) != 2)
            m->maj = m->min = 0;
        m->root = tok[3];
        m->mp = tok[4];
        m->type = tok[sep + 1];
        mnt_unescape(m->root);
        mnt_unescape(m->mp);
    }
    return 0;
}

/* The boot id, if it can be trusted: read twice from a file on a proc
 * filesystem (a file bound over it, or another proc file that changes on every
 * read, such as .../uuid, gives ""). */
static void read_boot_id(char *id, size_t cap)
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

/* This kernel's identity, so the harness can tell a shared kernel from a
 * sandbox's own: the boot id (empty when unreadable or untrusted) and the release. */
static void ev_kernel(void)
{
    char id[64];
    struct utsname u;
    read_boot_id(id, sizeof id);
    ev_str("boot_id", id);
    ev_str("release", uname(&u) == 0 ? u.release : "");
}

/* Every mount the sandbox sees, as [dev, type, mount point, root]: the harness
 * judges which of them expose a host filesystem beyond the grants. */
static void chk_fs_mounts(void)
{
    if (read_mounts() != 0)
        fail(errno, "read /proc/self/mountinfo");
    ev_kernel();
    bput(&g_ev, ",\"mounts\":[");
    for (int i = 0; i < g_nmnt; i++) {
        bput(&g_ev, "%s[\"%u:%u\",", i ? "," : "", g_mnt[i].maj, g_mnt[i].min);
        bstr(&g_ev, g_mnt[i].type);
        bput(&g_ev, ",");
        bstr(&g_ev, g_mnt[i].mp);
        bput(&g_ev, ",");
        bstr(&g_ev, g_mnt[i].root);
        bput(&g_ev, "]");
    }
    bput(&g_ev, "]");
    if (g_ev.n > sizeof g_ev.s - 1500) {
        g_ev.n = 0;
        fail(0, "the mount table (%d mounts) is too long to report", g_nmnt);
    }
    outcome("succeeded", 0, "%d mounts", g_nmnt);
}

#define MAX_SENTINELS 8
static const char *g_sent[MAX_SENTINELS];
static int g_nsent;
static char g_sentbuf[4096];

/* --sentinel and the newline-separated --more-sentinels (other host places). */
static void load_sentinels(void)
{
    g_sent[0] = need(&o.sentinel);
    g_nsent = 1;
    if (!o.more_sentinels)
        return;
    snprintf(g_sentbuf, sizeof g_sentbuf, "%s", o.more_sentinels);
    char *save = NULL;
    for (char *p = strtok_r(g_sentbuf, "\n", &save); p && g_nsent < MAX_SENTINELS;
         p = strtok_r(NULL, "\n", &save))
        if (p[0] == '/')
            g_sent[g_nsent++] = p;
}

static struct { int tried, absent, denied, other; } g_routes;

/* A route opened: escaped if it is a regular file holding the token. */
static void route_fd(int fd, const char *path, const char *how)
{
    struct stat st;
    ssize_t n = -1;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        n = read(fd, g_file, sizeof g_file);
    close(fd);
    if (has_token(g_file, n)) {
        ev_str("route", how);
        ev_int("routes_tried", g_routes.tried);
        outcome("escaped", 0, "read the token through %s (%s)", path, how);
    }
}

static void route_errno(int e)
{
    if (e == ENOENT || e == ENOTDIR)
        g_routes.absent++;
    else if (e == EACCES || e == EPERM)
        g_routes.denied++;
    else
        g_routes.other++;
}

static void route(const char *path, const char *how)
{
    g_routes.tried++;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        route_errno(errno);
    else
        route_fd(fd, path, how);
}

/* Every suffix of a sentinel's host path ("/a/b/s", "/b/s", "/s") under a
 * directory fd: a host folder bound anywhere, at any depth, is found. */
static void routes_under(int dirfd, const char *prefix, const char *how)
{
    char path[4096];
    for (int s = 0; s < g_nsent; s++)
        for (const char *p = g_sent[s]; p; p = strchr(p + 1, '/')) {
            if (dirfd >= 0) {
                g_routes.tried++;
                int fd = openat(dirfd, p + 1, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
                snprintf(path, sizeof path, "%s%s", prefix, p);
                if (fd < 0)
                    route_errno(errno);
                else
                    route_fd(fd, path, how);
            } else if (strcmp(prefix, "/") || p != g_sent[s]) {
                snprintf(path, sizeof path, "%s%s", strcmp(prefix, "/") ? prefix : "", p);
                route(path, how);
            }
        }
}

/* The fs root of the filesystem mounted at mp, by a file handle made up for its
 * root inode (ext2/3/4: FILEID_INO32_GEN, inode 2, generation 0): the "shocker"
 * route, open only to a holder of CAP_DAC_READ_SEARCH in the initial namespace. */
static int g_handle_errno;
static void routes_by_handle(const char *mp)
{
    struct { struct file_handle fh; unsigned char f[128]; } h;
    int mid;
    h.fh.handle_bytes = sizeof h.f;
    if (name_to_handle_at(AT_FDCWD, mp, &h.fh, &mid, 0) != 0)
        return;
    int mfd = open(mp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (mfd < 0)
        return;
    g_routes.tried++;
    int fd = open_by_handle_at(mfd, &h.fh, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        g_handle_errno = errno;
        route_errno(errno);
    } else {
        close(fd);
        if (h.fh.handle_type == 1 && h.fh.handle_bytes >= 8) {
            uint32_t root[2] = { 2, 0 };
            memcpy(h.fh.f_handle, root, sizeof root);
            h.fh.handle_bytes = sizeof root;
            fd = open_by_handle_at(mfd, &h.fh, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            if (fd >= 0) {
                char how[256];
                snprintf(how, sizeof how, "open_by_handle_at(inode 2) on the fs of %s", mp);
                routes_under(fd, "<fs root>", how);
                close(fd);
            } else {
                route_errno(errno);
            }
        }
    }
    close(mfd);
}

/* Every route to every sentinel: its host path, every mount point joined with
 * every suffix of it, /proc/<pid>/root of every visible process (as that
 * process's owner, by setfsuid), and file handles on every mounted filesystem. */
static void chk_fs_routes(void)
{
    char path[4096];
    need(&o.token);
    load_sentinels();
    if (read_mounts() != 0)
        fail(errno, "read /proc/self/mountinfo");
    for (int s = 0; s < g_nsent; s++)
        route(g_sent[s], "host path");
    for (int i = 0; i < g_nmnt; i++)
        routes_under(-1, g_mnt[i].mp, "mount point + path suffix");
    DIR *d = opendir("/proc");
    int pids = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        struct stat st;
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof path, "/proc/%s", e->d_name);
        if (stat(path, &st) != 0)
            continue;
        pids++;
        unsigned fsuid = (unsigned)setfsuid((uid_t)-1), fsgid = (unsigned)setfsgid((gid_t)-1);
        setfsgid(st.st_gid);
        setfsuid(st.st_uid);
        for (int s = 0; s < g_nsent; s++) {
            snprintf(path, sizeof path, "/proc/%s/root%s", e->d_name, g_sent[s]);
            route(path, "/proc/<pid>/root as the pid's owner");
        }
        setfsuid(fsuid);
        setfsgid(fsgid);
    }
    if (d)
        closedir(d);
    for (int i = 0; i < g_nmnt; i++)
        routes_by_handle(g_mnt[i].mp);
    ev_int("routes_tried", g_routes.tried);
    ev_int("sentinels", g_nsent);
    ev_int("mounts", g_nmnt);
    ev_int("pids", pids);
    ev_int("absent", g_routes.absent);
    ev_int("denied", g_routes.denied);
    ev_int("other", g_routes.other);
    if (g_handle_errno)
        ev_str("open_by_handle_at", errname(g_handle_errno));
    outcome("blocked", 0, "%d routes to %d sentinels failed (%d absent, %d denied, %d other)",
            g_routes.tried, g_nsent, g_routes.absent, g_routes.denied, g_routes.other);
}

/* ---- scenario "privilege" -------------------------------------------------- */

static int caps_get(struct cap_data d[2])
{
    struct cap_header h = { PROBE_CAP_VERSION_3, 0 };
    memset(d, 0, 2 * sizeof *d);
    return (int)syscall(SYS_capget, &h, d);
}

static uint64_t cap64(uint32_t lo, uint32_t hi) { return (uint64_t)hi << 32 | lo; }

/* The bounding (PR_CAPBSET_READ) or ambient (PR_CAP_AMBIENT_IS_SET) set. */
static uint64_t cap_set_by_prctl(int ambient)
{
    uint64_t m = 0;
    for (unsigned long c = 0; c < 64; c++) {
        int r = ambient ? prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, c, 0, 0)
                        : prctl(PR_CAPBSET_READ, c, 0, 0, 0);
        if (r < 0)
            break; /* EINVAL past the last capability */
        if (r > 0)
            m |= 1ULL << c;
    }
    return m;
}

static void bcap(Buf *b, const char *key, uint64_t v)
{
    bput(b, ",\"%s\":\"%016llx\"", key, (unsigned long long)v);
}

/* "uid":..,"euid":..,"cap_eff":..,"nnp":.. and, if full, the other sets. */
static void put_creds(Buf *b, int full)
{
    struct cap_data d[2];
    int e = caps_get(d) ? errno : 0;
    bput(b, "\"uid\":%u,\"euid\":%u", (unsigned)getuid(), (unsigned)geteuid());
    bcap(b, "cap_eff", cap64(d[0].effective, d[1].effective));
    bput(b, ",\"nnp\":%d", prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
    if (full) {
        bput(b, ",\"gid\":%u,\"egid\":%u", (unsigned)getgid(), (unsigned)getegid());
        bcap(b, "cap_prm", cap64(d[0].permitted, d[1].permitted));
        bcap(b, "cap_inh", cap64(d[0].inheritable, d[1].inheritable));
        bcap(b, "cap_bnd", cap_set_by_prctl(0));
        bcap(b, "cap_amb", cap_set_by_prctl(1));
    }
    if (e)
        bkv(b, "detail", strerror(e));
}

static void chk_creds(void)
{
    Buf b = { .n = 0 };
    put_creds(&b, 1);
    send_result(&b);
}

/* Attempts run unprivileged: as root, become --unpriv-uid (gid the same),
 * deliberately without no_new_privs. */
static void drop_privs(void)
{
    uid_t u = g_unpriv_uid;
    if (geteuid() != 0)
        return;
    if (setgroups(0, NULL) != 0)
        fail(errno, "setgroups(0, NULL)");
    if (setresgid(u, u, u) != 0)
        fail(errno, "setresgid(%u)", u);
    if (setresuid(u, u, u) != 0)
        fail(errno, "setresuid(%u)", u);
    ev_int("uid", u);
}

/* Run `<helper> whoami` in a grandchild, stdout to a pipe; its euid and CapEff. */
static void exec_helper(const char **opt, unsigned *euid, uint64_t *cap_eff)
{
    const char *path = need(opt);
    char out[1024];
    int p[2], st;
    drop_privs();
    if (pipe2(p, O_CLOEXEC) != 0)
        fail(errno, "pipe");
    if ((g_target = fork()) < 0)
        fail(errno, "fork");
    if (g_target == 0) {
        char *const argv[] = { (char *)path, "whoami", NULL };
        dup2(p[1], STDOUT_FILENO);
        execv(path, argv);
        dprintf(STDOUT_FILENO, "{\"exec_errno\":%d}\n", errno);
        _exit(127);
    }
    close(p[1]);
    size_t n = recv_until(p[0], out, sizeof out - 1, 0, check_end());
    out[n] = '\0';
    if (errno == ETIMEDOUT)
        kill(g_target, SIGKILL);
    while (waitpid(g_target, &st, 0) < 0)
        if (errno != EINTR)
            fail(errno, "waitpid(helper)");
    g_target = 0;
    const char *ee = strstr(out, "\"exec_errno\":"), *eu = strstr(out, "\"euid\":"),
               *ce = strstr(out, "\"cap_eff\":\"");
    if (ee)
        outcome("blocked", atoi(ee + 13), "execve(%s)", path);
    if (!eu || !ce)
        fail(0, "helper %s printed no whoami line (wait status 0x%x): \"%.100s\"", path, (unsigned)st, out);
    *euid = (unsigned)strtoul(eu + 7, NULL, 10);
    *cap_eff = strtoull(ce + 11, NULL, 16);
}

static void chk_priv_setuid_exec(void)
{
    unsigned euid;
    uint64_t caps;
    exec_helper(&o.setuid_helper, &euid, &caps);
    ev_int("euid", euid);
    outcome(euid == 0 ? "escaped" : "blocked", 0, "the setuid helper ran with euid %u", euid);
}

static void chk_priv_fcap_exec(void)
{
    unsigned euid;
    uint64_t caps;
    char hex[24];
    exec_helper(&o.fcap_helper, &euid, &caps);
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)caps);
    ev_str("cap_eff", hex);
    outcome(caps >> PROBE_CAP_NET_RAW & 1 ? "escaped" : "blocked", 0,
            "the fcap helper ran with CapEff %s", hex);
}

static void chk_priv_setuid0(void)
{
    drop_privs();
    if (setuid(0) != 0)
        outcome("blocked", errno, "setuid(0)");
    ev_int("euid", geteuid());
    outcome(geteuid() == 0 ? "escaped" : "succeeded", 0, "setuid(0) returned 0");
}

static void chk_priv_capset(void)
{
    struct cap_header h = { PROBE_CAP_VERSION_3, 0 };
    struct cap_data d[2];
    drop_privs();
    if (caps_get(d) != 0)
        fail(errno, "capget");
    d[0].effective |= 1U << PROBE_CAP_SYS_ADMIN;
    d[0].permitted |= 1U << PROBE_CAP_SYS_ADMIN;
    if (syscall(SYS_capset, &h, d) != 0)
        outcome("blocked", errno, "capset(+CAP_SYS_ADMIN)");
    caps_get(d);
    ev_int("cap_sys_admin", d[0].effective >> PROBE_CAP_SYS_ADMIN & 1);
    outcome(d[0].effective >> PROBE_CAP_SYS_ADMIN & 1 ? "escaped" : "succeeded", 0,
            "capset(+CAP_SYS_ADMIN) returned 0");
}

static void chk_priv_ambient(void)
{
    drop_privs();
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, PROBE_CAP_NET_RAW, 0, 0) != 0)
        outcome("blocked", errno, "prctl(PR_CAP_AMBIENT_RAISE, CAP_NET_RAW)");
    int set = prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, PROBE_CAP_NET_RAW, 0, 0) == 1;
    outcome(set ? "escaped" : "succeeded", 0, "PR_CAP_AMBIENT_RAISE of CAP_NET_RAW returned 0");
}

/* ---- privilege as started, and what a root workload would try ------------ */

#define PROBE_CAP_SYS_MODULE 16
#define INIT_USER_NS "user:[4026531837]" /* PROC_USER_INIT_INO, fixed by the kernel */

/* 1 in the initial user namespace, 0 in another; unknown counts as initial. */
static int initial_userns(void)
{
    char l[64];
    ssize_t k = readlink("/proc/self/ns/user", l, sizeof l - 1);
    if (k <= 0)
        return 1;
    l[k] = '\0';
    return !strcmp(l, INIT_USER_NS);
}

/* The credentials the workload started with; the harness judges the
 * capabilities against its baseline. */
static void chk_priv_start(void)
{
    struct cap_data d[2];
    char hex[3][24];
    if (caps_get(d) != 0)
        fail(errno, "capget");
    uint64_t sets[3] = { cap64(d[0].effective, d[1].effective),
                         cap64(d[0].permitted, d[1].permitted), cap_set_by_prctl(0) };
    const char *keys[3] = { "cap_eff", "cap_prm", "cap_bnd" };
    int init = initial_userns();
    ev_int("uid", getuid());
    ev_int("euid", geteuid());
    ev_int("initial_userns", init);
    for (int i = 0; i < 3; i++) {
        snprintf(hex[i], sizeof hex[i], "%016llx", (unsigned long long)sets[i]);
        ev_str(keys[i], hex[i]);
    }
    ev_kernel();
    outcome("succeeded", 0, "uid %u, CapEff %s, CapPrm %s, %s user namespace", (unsigned)getuid(),
            hex[0], hex[1], init ? "initial" : "a child");
}

/* Writable /proc/sys: write a value's own content back (changes nothing). */
/* Write one kernel value back as read; 0 if written, else the errno (or EIO). */
static int write_back(const char *p)
{
    char v[256];
    ssize_t n = read_file(p, v, sizeof v);
    if (n <= 0)
        return n < 0 ? errno : EIO;
    int fd = open(p, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return errno;
    ssize_t k = write(fd, v, (size_t)n);
    int e = errno;
    close(fd);
    return k == n ? 0 : (k < 0 ? e : EIO);
}

/* Host kernel settings: a sysctl, and two under /sys that a read-write sysfs exposes
   (uevent_helper runs a program of the writer's choice on the host at the next
   uevent; a module parameter stands for the rest). Each gets its own value back. */
static void chk_priv_root_sysctl(void)
{
    const char *paths[] = {
        "/proc/sys/kernel/printk_ratelimit",
        "/sys/kernel/uevent_helper",
        "/sys/module/printk/parameters/time",
    };
    int first = 0;
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        int e = write_back(paths[i]);
        if (e == 0)
            outcome("escaped", 0, "wrote %s (its own value back)", paths[i]);
        if (!first)
            first = e;
    }
    outcome("blocked", first, "write %s, /sys/kernel/uevent_helper or a /sys module parameter",
            paths[0]);
}

/* A private mount namespace of this check child's own, so nothing propagates. */
static const char *private_mountns(void)
{
    struct stat st;
    if (unshare(CLONE_NEWNS) != 0)
        outcome("blocked", errno, "unshare(CLONE_NEWNS)");
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        outcome("blocked", errno, "make the new mount namespace private");
    return stat("/tmp", &st) == 0 && S_ISDIR(st.st_mode) ? "/tmp" : "/dev";
}

static void chk_priv_root_mount(void)
{
    const char *dir = private_mountns();
    char p[64];
    if (mount("harness", dir, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=64k") != 0)
        outcome("blocked", errno, "mount a tmpfs on %s", dir);
    snprintf(p, sizeof p, "%s/proc", dir);
    mkdir(p, 0755);
    int pr = mount("proc", p, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
    ev_int("proc_mounted", pr == 0);
    outcome("escaped", 0, "mounted a tmpfs on %s%s", dir, pr == 0 ? " and a proc in it" : "");
}

/* A cgroup v1 release_agent written: its own value back (nothing changes, nothing
 * runs; the kernel checks CAP_SYS_ADMIN in the initial namespace at write time,
 * so opening it is no proof). One already mounted, else a hierarchy mounted in a
 * private mount namespace. 0, or the errno of the refusal. */
static int rewrite_agent(const char *path)
{
    char v[4096];
    ssize_t n = read_file(path, v, sizeof v - 1);
    if (n < 0)
        return errno;
    if (n == 0)
        v[n++] = '\n';
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return errno;
    ssize_t k = write(fd, v, (size_t)n);
    int e = k == n ? 0 : k < 0 ? errno : EIO;
    close(fd);
    return e;
}

static void chk_priv_root_release_agent(void)
{
    char p[4096];
    int e = 0, seen = 0;
    if (read_mounts() == 0)
        for (int i = 0; i < g_nmnt; i++) {
            if (strcmp(g_mnt[i].type, "cgroup"))
                continue;
            snprintf(p, sizeof p, "%s/release_agent", g_mnt[i].mp);
            seen++;
            if ((e = rewrite_agent(p)) == 0)
                outcome("escaped", 0, "wrote %s (its own value back)", p);
        }
    ev_int("mounted_release_agents", seen);
    if (unshare(CLONE_NEWNS) != 0)
        outcome("blocked", e ? e : errno, "%d mounted release_agent(s) not writable; unshare(CLONE_NEWNS)", seen);
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        outcome("blocked", errno, "make the new mount namespace private");
    struct stat st;
    const char *dir = stat("/tmp", &st) == 0 && S_ISDIR(st.st_mode) ? "/tmp" : "/dev";
    const char *opts[] = { "rdma", "none,name=harness-probe" };
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
        if (mount("cgroup", dir, "cgroup", MS_NOSUID | MS_NODEV | MS_NOEXEC, opts[i]) != 0) {
            e = errno;
            continue;
        }
        snprintf(p, sizeof p, "%s/release_agent", dir);
        e = rewrite_agent(p);
        umount2(dir, MNT_DETACH);
        if (e == 0)
            outcome("escaped", 0, "mounted cgroup v1 (%s) and wrote its release_agent (its own value back)", opts[i]);
    }
    outcome("blocked", e, "mount a cgroup v1 hierarchy and write its release_agent");
}

/* open_by_handle_at on any visible filesystem: needs CAP_DAC_READ_SEARCH. */
static void chk_priv_root_handle(void)
{
    struct { struct file_handle fh; unsigned char f[128]; } h;
    int mid, e = ENOENT;
    if (read_mounts() != 0)
        fail(errno, "read /proc/self/mountinfo");
    for (int i = 0; i < g_nmnt; i++) {
        h.fh.handle_bytes = sizeof h.f;
        if (name_to_handle_at(AT_FDCWD, g_mnt[i].mp, &h.fh, &mid, 0) != 0) {
            e = errno;
            continue;
        }
        int mfd = open(g_mnt[i].mp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (mfd < 0)
            continue;
        int fd = open_by_handle_at(mfd, &h.fh, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        e = errno;
        close(mfd);
        if (fd >= 0) {
            close(fd);
            outcome("escaped", 0, "open_by_handle_at on %s succeeded (CAP_DAC_READ_SEARCH)", g_mnt[i].mp);
        }
        outcome("blocked", e, "open_by_handle_at on %s", g_mnt[i].mp);
    }
    outcome("blocked", e, "name_to_handle_at on every mount");
}

/* mknod a block device for a disk behind a visible mount and read one sector. */
static char g_node[256];
static void unlink_node(void)
{
    if (g_node[0])
        unlink(g_node);
}

/* Read one sector through a block device node; escaped on success. */
static void read_sector(const char *node, unsigned maj, unsigned min, const char *how, int *e)
{
    int fd = open(node, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    *e = errno;
    if (fd < 0)
        return;
    ssize_t n = read(fd, g_file, 512);
    *e = errno;
    close(fd);
    if (n == 512)
        outcome("escaped", 0, "read a sector of block device %u:%u %s", maj, min, how);
}

/* An existing node in /dev for the device, as the host has for its own disk. */
static void existing_node(unsigned maj, unsigned min, int *e, int *tried)
{
    char p[512];
    DIR *d = opendir("/dev");
    for (struct dirent *x; d && (x = readdir(d));) {
        struct stat st;
        snprintf(p, sizeof p, "/dev/%s", x->d_name);
        if (lstat(p, &st) != 0 || !S_ISBLK(st.st_mode) || major(st.st_rdev) != maj ||
            minor(st.st_rdev) != min)
            continue;
        (*tried)++;
        closedir(d);
        read_sector(p, maj, min, "through its node in /dev", e);
        return;
    }
    if (d)
        closedir(d);
}

/* Every block device node already in /dev, whatever it backs: a host disk, loop
   device or zram passed into the sandbox (`--device`) is host storage in reach,
   even when no mount of the sandbox's names it. */
static void every_node(int *e, int *tried)
{
    char p[512];
    DIR *d = opendir("/dev");
    for (struct dirent *x; d && (x = readdir(d));) {
        struct stat st;
        snprintf(p, sizeof p, "/dev/%s", x->d_name);
        if (lstat(p, &st) != 0 || !S_ISBLK(st.st_mode))
            continue;
        (*tried)++;
        read_sector(p, major(st.st_rdev), minor(st.st_rdev), "through its node in /dev", e);
    }
    if (d)
        closedir(d);
}

static void chk_priv_root_mknod(void)
{
    const char *dirs[] = { "/tmp", o.allowed_dir, "/dev" };
    int e = ENOENT, tried = 0;
    if (read_mounts() != 0)
        fail(errno, "read /proc/self/mountinfo");
    g_cleanup = unlink_node;
    for (int i = 0; i < g_nmnt; i++) {
        if (g_mnt[i].maj == 0)
            continue;
        int dup = 0;
        for (int j = 0; j < i; j++)
            dup |= g_mnt[j].maj == g_mnt[i].maj && g_mnt[j].min == g_mnt[i].min;
        if (dup)
            continue;
        existing_node(g_mnt[i].maj, g_mnt[i].min, &e, &tried);
        for (size_t k = 0; k < sizeof dirs / sizeof dirs[0]; k++) {
            if (!dirs[k])
                continue;
            tried++;
            snprintf(g_node, sizeof g_node, "%s/harness-blk-%d", dirs[k], (int)getpid());
            if (mknod(g_node, S_IFBLK | 0600, makedev(g_mnt[i].maj, g_mnt[i].min)) != 0) {
                e = errno;
                g_node[0] = '\0';
                continue;
            }
            char how[300];
            snprintf(how, sizeof how, "through a node made in %s", dirs[k]);
            read_sector(g_node, g_mnt[i].maj, g_mnt[i].min, how, &e);
            unlink(g_node);
            g_node[0] = '\0';
        }
    }
    every_node(&e, &tried);
    ev_int("tried", tried);
    outcome("blocked", e, "mknod and read %d block device node(s)", tried);
}

/* Holding CAP_SYS_MODULE in the initial namespace is the finding: load nothing. */
static void chk_priv_root_sys_module(void)
{
    struct cap_data d[2];
    if (caps_get(d) != 0)
        fail(errno, "capget");
    int held = (d[0].effective | d[0].permitted) >> PROBE_CAP_SYS_MODULE & 1;
    if (held && initial_userns())
        outcome("escaped", 0, "holds CAP_SYS_MODULE in the initial user namespace (nothing loaded)");
    outcome("blocked", 0, held ? "CAP_SYS_MODULE held only in a child user namespace"
                               : "CAP_SYS_MODULE not held");
}

/* ---- scenario "attribution" ------------------------------------------------ */

static void chk_attr_allowed_connect(void) { tcp_to(&o.allowed_tcp); }

/* ---- the check table: add scenarios here -------------------------------- */

/* selftest: only for testing the harness's own fault handling. */
static void chk_selftest_hang(void)
{
    for (;;)
        pause();
}

static const struct check checks[] = {
    { "mechanisms", "landlock_abi", chk_landlock_abi, K_FACT },
    { "mechanisms", "landlock_enforces", chk_landlock_enforces, K_FACT },
    { "mechanisms", "seccomp_filter", chk_seccomp_filter, K_FACT },
    { "mechanisms", "seccomp_new_listener", chk_seccomp_new_listener, K_FACT },
    { "mechanisms", "seccomp_notif_round_trip", chk_seccomp_notif_round_trip, K_FACT },
    { "mechanisms", "seccomp_addfd", chk_seccomp_addfd, K_FACT },
    { "mechanisms", "seccomp_id_validation", chk_seccomp_id_validation, K_FACT },
    { "mechanisms", "seccomp_retained_socket_operation", chk_seccomp_retained_socket, K_FACT },
    { "mechanisms", "seccomp_proc_fd_identity", chk_seccomp_proc_fd_identity, K_FACT },
    { "mechanisms", "seccomp_task_memory_read", chk_seccomp_task_memory_read, K_FACT },
    { "mechanisms", "seccomp_task_memory_write", chk_seccomp_task_memory_write, K_FACT },
    { "mechanisms", "seccomp_cancellation", chk_seccomp_cancellation, K_FACT },
    { "mechanisms", "landlock_allow_deny", chk_landlock_allow_deny, K_FACT },
    { "mechanisms", "kernel_release", chk_kernel_release, K_FACT },
    { "mechanisms", "kernel_machine", chk_kernel_machine, K_FACT },
    { "egress", "tcp-denied-name", chk_tcp_denied_name, K_ATTEMPT },
    { "egress", "tcp-raw-ip", chk_tcp_raw_ip, K_ATTEMPT },
    { "egress", "dns-alt-udp", chk_dns_alt_udp, K_ATTEMPT },
    { "egress", "dns-alt-tcp", chk_dns_alt_tcp, K_ATTEMPT },
    { "egress", "doh-port", chk_doh_port, K_ATTEMPT },
    { "egress", "sweep", chk_egress_sweep, K_SWEEP },
    { "filesystem", "fs-read-outside", chk_fs_read_outside, K_ATTEMPT },
    { "filesystem", "fs-create-outside", chk_fs_create_outside, K_ATTEMPT },
    { "filesystem", "fs-overwrite-outside", chk_fs_overwrite_outside, K_ATTEMPT },
    { "filesystem", "fs-traversal", chk_fs_traversal, K_ATTEMPT },
    { "filesystem", "fs-symlink-planted", chk_fs_symlink_planted, K_ATTEMPT },
    { "filesystem", "fs-symlink-made", chk_fs_symlink_made, K_ATTEMPT },
    { "filesystem", "fs-proc-self-root", chk_fs_proc_self_root, K_ATTEMPT },
    { "filesystem", "fs-proc-1-root", chk_fs_proc_1_root, K_ATTEMPT },
    { "filesystem", "fs-hardlink-in", chk_fs_hardlink_in, K_ATTEMPT },
    { "filesystem", "fs-rename-in", chk_fs_rename_in, K_ATTEMPT },
    { "filesystem", "fs-mounts", chk_fs_mounts, K_ATTEMPT },
    { "filesystem", "fs-routes", chk_fs_routes, K_ATTEMPT },
    { "filesystem", "fs-allowed-write", chk_fs_allowed_write, K_CONTROL },
    { "filesystem", "fs-allowed-read", chk_fs_allowed_read, K_CONTROL },
    { "privilege", "creds", chk_creds, K_INFO },
    { "privilege", "priv-start", chk_priv_start, K_ATTEMPT },
    { "privilege", "priv-root-sysctl", chk_priv_root_sysctl, K_ATTEMPT },
    { "privilege", "priv-root-mount", chk_priv_root_mount, K_ATTEMPT },
    { "privilege", "priv-root-release-agent", chk_priv_root_release_agent, K_ATTEMPT },
    { "privilege", "priv-root-handle", chk_priv_root_handle, K_ATTEMPT },
    { "privilege", "priv-root-mknod", chk_priv_root_mknod, K_ATTEMPT },
    { "privilege", "priv-root-sys-module", chk_priv_root_sys_module, K_ATTEMPT },
    { "privilege", "priv-setuid-exec", chk_priv_setuid_exec, K_ATTEMPT },
    { "privilege", "priv-fcap-exec", chk_priv_fcap_exec, K_ATTEMPT },
    { "privilege", "priv-setuid0", chk_priv_setuid0, K_ATTEMPT },
    { "privilege", "priv-capset", chk_priv_capset, K_ATTEMPT },
    { "privilege", "priv-ambient", chk_priv_ambient, K_ATTEMPT },
    { "attribution", "attr-allowed-connect", chk_attr_allowed_connect, K_CONTROL },
    { "selftest", "selftest_hang", chk_selftest_hang, K_FACT },
};
#define NCHECKS (sizeof checks / sizeof checks[0])

/* ---- the parent: run one check in a child ------------------------------- */

static int sweep_lines(const struct check *c, const char *buf, size_t n, int *count);

/* Run one row of the table; the number of fact and check lines printed. */
static int run_check(const struct check *c)
{
    Buf frag = { .n = 0 };
    static char buf[65536];
    int count = c->kind != K_INFO;
    size_t n = 0;
    int got = 0, timed_out = 0, st = 0, p[2];
    double t0 = now_ms(), end = t0 + g_check_timeout_ms;
    pid_t pid;

    g_cur = c;
    g_t0 = t0;
    if (pipe(p) != 0) {
        frag_status(&frag, "error", errno, "pipe() for the check child failed");
        goto report;
    }
    pid_t parent = getpid();
    if ((pid = fork()) < 0) {
        frag_status(&frag, "error", errno, "fork() of the check child failed");
        close(p[0]);
        close(p[1]);
        goto report;
    }
    if (pid == 0) {
        setpgid(0, 0);
        /* Die with the parent: a probe killed at the cell timeout must not
         * leave a check child behind in its own process group. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(1); /* the parent died before PDEATHSIG was armed */
        close(p[0]);
        g_resfd = p[1];
        fcntl(g_resfd, F_SETFD, FD_CLOEXEC); /* not for exec'd helpers */
        c->fn();
        fail(0, "check returned without a result");
    }
    setpgid(pid, pid); /* also here, so the group exists before we may kill it */
    g_child = pid;
    close(p[1]);

    /* Read the result until EOF (the child exited: the target grandchild
     * closes its copy of the pipe) or the check timeout. */
    for (;;) {
        int left = (int)(end - now_ms() + 0.999);
        if (left <= 0) {
            timed_out = 1;
            break;
        }
        struct pollfd pfd = { .fd = p[0], .events = POLLIN };
        int r = poll(&pfd, 1, left);
        if (r < 0 && errno == EINTR)
            continue;
        if (r == 0)
            timed_out = 1;
        if (r <= 0)
            break;
        char scratch[256], *dst = n < sizeof buf - 1 ? buf + n : scratch;
        size_t room = n < sizeof buf - 1 ? sizeof buf - 1 - n : sizeof scratch;
        ssize_t k = read(p[0], dst, room);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        if (dst != scratch)
            n += (size_t)k;
    }
    got = memchr(buf, '\n', n) != NULL;
    timed_out &= !got;
    close(p[0]);

    /* Wait for the child to end, without reaping it, so its pid (= the group
     * id) cannot be reused before we kill the group's stragglers. */
    while (!timed_out) {
        siginfo_t si;
        memset(&si, 0, sizeof si);
        if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0 && errno != EINTR)
            break;
        if (si.si_pid == pid)
            break;
        if (now_ms() >= end) {
            timed_out = !got;
            break;
        }
        usleep(200);
    }
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    g_child = 0;
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ; /* orphaned grandchildren are ours when we are pid 1 (e.g. in runsc) */

    if (c->kind == K_SWEEP) { /* many lines: one per attempt */
        count = 0;
        if (sweep_lines(c, buf, n, &count))
            goto done;
        timed_out = timed_out || !WIFEXITED(st);
        frag_status(&frag, timed_out ? "timeout" : "error", 0,
                    timed_out ? "the sweep exceeded its time limit; child killed" : "the sweep ended early");
        count++;
        goto report;
    }
    /* A fact's result starts with "status", a check's with "outcome", an
     * info item's with any member. */
    const char *lead = c->kind == K_INFO ? "\"" : is_check_kind(c->kind) ? "\"outcome\":" : "\"status\":";
    if (got && n > strlen(lead) && !memcmp(buf, lead, strlen(lead))
        && (size_t)((char *)memchr(buf, '\n', n) - buf) < sizeof frag.s) {
        n = (size_t)((char *)memchr(buf, '\n', n) - buf);
        memcpy(frag.s, buf, n);
        frag.s[n] = '\0';
        frag.n = n;
    } else {
        char detail[128];
        if (got)
            snprintf(detail, sizeof detail, "child wrote a malformed result");
        else if (timed_out)
            snprintf(detail, sizeof detail, "check exceeded %d ms; child killed", g_check_timeout_ms);
        else if (WIFSIGNALED(st))
            snprintf(detail, sizeof detail, "child killed by signal %d", WTERMSIG(st));
        else
            snprintf(detail, sizeof detail, "child exited %d without a result", WEXITSTATUS(st));
        frag_status(&frag, timed_out ? "timeout" : "error", 0, detail);
    }

report:;
    /* The evidence (always last in a fragment) goes after elapsed_ms. A
     * quote inside a JSON string is escaped, so this cannot match inside one. */
    char *ev = strstr(frag.s, ",\"evidence\":{");
    if (ev)
        *ev++ = '\0';
    Buf line = { .n = 0 };
    bput(&line, "{\"type\":\"%s\",\"scenario\":",
         c->kind == K_INFO ? "info" : is_check_kind(c->kind) ? "check" : "fact");
    bstr(&line, c->scenario);
    bput(&line, ",\"id\":");
    bstr(&line, c->id);
    if (is_check_kind(c->kind))
        bput(&line, ",\"kind\":\"%s\"", c->kind == K_CONTROL ? "control" : "attempt");
    bput(&line, ",%s", frag.s);
    if (c->kind != K_INFO)
        bput(&line, ",\"elapsed_ms\":%.3f", now_ms() - t0);
    if (ev)
        bput(&line, ",%s", ev);
    bput(&line, "}");
    emit(&line);
done:
    g_cur = NULL;
    return count;
}

/* Print the sweep child's lines ("id":...,"kind":"attempt",... each); 1 if the
 * last one (the unix sockets' line, written after every other) is among them. */
static int sweep_lines(const struct check *c, const char *buf, size_t n, int *count)
{
    int complete = 0;
    for (size_t at = 0; at < n;) {
        const char *nl = memchr(buf + at, '\n', n - at);
        if (!nl)
            break;
        size_t len = (size_t)(nl - (buf + at));
        if (len > 7 && len < 3800 && !memcmp(buf + at, "\"id\":\"", 6)) {
            Buf line = { .n = 0 };
            bput(&line, "{\"type\":\"check\",\"scenario\":");
            bstr(&line, c->scenario);
            bput(&line, ",%.*s}", (int)len, buf + at);
            emit(&line);
            (*count)++;
            complete |= !memcmp(buf + at, "\"id\":\"unix-proxy\"", 17);
        }
        at += len + 1;
    }
    return complete;
}

/* ---- mode "canary": TCP and DNS listeners that answer with the nonce ---- */

#define MAX_LISTEN 96
#define MAX_CLIENTS 512
#define CLIENT_MS 2000 /* a client has this long to send its line or query */

enum { L_LINE, L_DNS_UDP, L_DNS_TCP, L_UDP_LINE };
/* optional: a sweep port that may be taken (listen mode); a failed bind is logged. */
struct listener { int fd, type; const char *spec; int optional; };
struct client {
    int fd;
    const struct listener *l;
    char peer[80];
    double end;
    size_t n;
    unsigned char buf[2 + 512];
};

static const char *g_canary_nonce;
static struct in_addr g_answer;
static int g_have_answer;

/* Answer a query (A: --answer, TXT: nonce=<nonce>, else NOERROR and no
 * answer) into r; the reply length or -1. The question goes to qname/qtype. */
static int dns_answer(const unsigned char *q, size_t n, unsigned char *r, size_t cap,
                      char *qname, size_t ncap, int *qtype)
{
    long off;
    if (n < 12 || q[2] & 0x80 || (q[4] << 8 | q[5]) < 1 ||
        (off = dns_get_name(q, n, 12, qname, ncap)) < 0 || (size_t)off + 4 > n)
        return -1;
    *qtype = q[off] << 8 | q[off + 1];
    size_t p = (size_t)off + 4, rdlen = 0;
    unsigned char rd[256];
    if (*qtype == DNS_A && g_have_answer) {
        memcpy(rd, &g_answer, 4);
        rdlen = 4;
    } else if (*qtype == DNS_TXT) {
        rdlen = (size_t)snprintf((char *)rd + 1, sizeof rd - 1, "nonce=%s", g_canary_nonce);
        rd[0] = (unsigned char)rdlen++;
    }
    if (p + 12 + rdlen > cap)
        return -1;
    memcpy(r, q, p);                                /* header and question */
    r[2] = (unsigned char)(0x80 | (q[2] & 0x79));    /* QR, opcode, RD */
    r[3] = 0x80;                                     /* RA, NOERROR */
    memset(r + 4, 0, 8);
    r[5] = 1;
    if (rdlen) {
        static const unsigned char rr[] = { 0xc0, 12, 0, 0, 0, 1, 0, 0, 0, 60, 0, 0 };
        memcpy(r + p, rr, sizeof rr);                /* name: pointer to the question */
        r[p + 3] = (unsigned char)*qtype;
        r[p + 11] = (unsigned char)rdlen;
        memcpy(r + p + 12, rd, rdlen);
        p += 12 + rdlen;
        r[7] = 1;                                    /* ANCOUNT */
    }
    return (int)p;
}

/* Log a query and build its reply; the reply length (0: none). */
static size_t canary_dns(const char *proto, const char *listen, const char *peer,
                         const unsigned char *q, size_t n, unsigned char *r, size_t cap)
{
    char qname[256];
    int qtype = -1, len = dns_answer(q, n, r, cap, qname, sizeof qname, &qtype);
    Buf b = { .n = 0 };
    bput(&b, "{\"event\":\"dns\"");
    bkv(&b, "proto", proto);
    bkv(&b, "listen", listen);
    bkv(&b, "peer", peer);
    if (len < 0)
        bkv(&b, "error", "malformed query");
    else {
        bkv(&b, "qname", qname);
        bput(&b, ",\"qtype\":%d", qtype);
    }
    bput(&b, "}");
    emit(&b);
    return len > 0 ? (size_t)len : 0;
}

static void serve_udp(const struct listener *l)
{
    for (int k = 0; k < 64; k++) { /* a bounded batch, then the other sockets */
        unsigned char q[1500], r[600];
        Addr from;
        socklen_t fl = sizeof from;
        char peer[80];
        ssize_t n = recvfrom(l->fd, q, sizeof q, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return;
        fmt_addr(&from, peer, sizeof peer);
        size_t len = canary_dns("udp", l->spec, peer, q, (size_t)n, r, sizeof r);
        if (len)
            sendto(l->fd, r, len, MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *)&from, fl);
    }
}

/* A datagram on a sweep port: log its first line, answer with the nonce. */
static void serve_udp_line(const struct listener *l)
{
    for (int k = 0; k < 64; k++) {
        char q[1500], peer[80];
        Addr from;
        socklen_t fl = sizeof from;
        ssize_t n = recvfrom(l->fd, q, sizeof q - 1, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return;
        q[n] = '\0';
        q[strcspn(q, "\r\n")] = '\0';
        fmt_addr(&from, peer, sizeof peer);
        Buf b = { .n = 0 };
        bput(&b, "{\"event\":\"udp\"");
        bkv(&b, "listen", l->spec);
        bkv(&b, "peer", peer);
        bkv(&b, "line", q);
        bput(&b, "}");
        emit(&b);
        b.n = 0;
        bput(&b, "NONCE %s\n", g_canary_nonce);
        sendto(l->fd, b.s, b.n, MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *)&from, fl);
    }
}

/* 1: the client's line or query is complete; 0: not yet; -1: it never will be. */
static int client_ready(const struct client *c)
{
    if (c->l->type == L_LINE)
        return memchr(c->buf, '\n', c->n) ? 1 : c->n >= sizeof c->buf - 1 ? -1 : 0;
    if (c->n < 2)
        return 0;
    size_t want = (size_t)(c->buf[0] << 8 | c->buf[1]);
    return want + 3 > sizeof c->buf ? -1 : c->n >= 2 + want;
}

/* Log the client's line or query, answer it, and close. */
static void client_finish(struct client *c, int complete)
{
    if (c->l->type == L_LINE) {
        char line[sizeof c->buf];
        memcpy(line, c->buf, c->n);
        line[c->n] = '\0';
        line[strcspn(line, "\r\n")] = '\0';
        Buf b = { .n = 0 };
        bput(&b, "{\"event\":\"tcp\"");
        bkv(&b, "listen", c->l->spec);
        bkv(&b, "peer", c->peer);
        bkv(&b, "line", line);
        if (!complete)
            bput(&b, ",\"complete\":false");
        bput(&b, "}");
        emit(&b);
        b.n = 0;
        bput(&b, "NONCE %s\n", g_canary_nonce);
        send(c->fd, b.s, b.n, MSG_DONTWAIT | MSG_NOSIGNAL);
    } else if (complete) {
        unsigned char r[2 + 600];
        size_t len = canary_dns("tcp", c->l->spec, c->peer, c->buf + 2, c->n - 2, r + 2, sizeof r - 2);
        r[0] = (unsigned char)(len >> 8);
        r[1] = (unsigned char)len;
        if (len)
            send(c->fd, r, len + 2, MSG_DONTWAIT | MSG_NOSIGNAL);
    } else {
        Buf b = { .n = 0 };
        bput(&b, "{\"event\":\"dns\",\"proto\":\"tcp\"");
        bkv(&b, "listen", c->l->spec);
        bkv(&b, "peer", c->peer);
        bput(&b, ",\"error\":\"incomplete query\"}");
        emit(&b);
    }
    shutdown(c->fd, SHUT_WR);
    close(c->fd);
    c->fd = -1;
}

static void client_read(struct client *c)
{
    ssize_t k = read(c->fd, c->buf + c->n, sizeof c->buf - 1 - c->n);
    if (k < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (k > 0)
        c->n += (size_t)k;
    int ready = client_ready(c);
    if (ready || k <= 0)
        client_finish(c, ready > 0);
}

static void accept_all(const struct listener *l, struct client *cl, size_t *nc)
{
    for (int k = 0; k < 64; k++) {
        Addr from;
        socklen_t fl = sizeof from;
        int fd = accept4(l->fd, (struct sockaddr *)&from, &fl, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0 && (errno == EINTR || errno == ECONNABORTED))
            continue;
        if (fd < 0)
            return;
        struct client *c = &cl[*nc];
        if (*nc == MAX_CLIENTS) { /* full: the oldest client makes room */
            c = cl;
            for (size_t i = 1; i < MAX_CLIENTS; i++)
                if (cl[i].end < c->end)
                    c = &cl[i];
            client_finish(c, 0);
        } else {
            (*nc)++;
        }
        memset(c, 0, sizeof *c);
        c->fd = fd;
        c->l = l;
        c->end = now_ms() + CLIENT_MS;
        fmt_addr(&from, c->peer, sizeof c->peer);
    }
}

static int canary_bind(const struct listener *l)
{
    Addr a;
    const char *spec = l->spec;
    int one = 1, st = l->type == L_DNS_UDP || l->type == L_UDP_LINE ? SOCK_DGRAM : SOCK_STREAM;
    if (parse_addr(spec, &a) != 0)
        fatal(2, "bad address (want IP:PORT): %s", spec);
    int fd = socket(a.ss_family, st | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        fatal(2, "socket for %s: %s", spec, strerror(errno));
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (a.ss_family == AF_INET6)
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    if (bind(fd, (struct sockaddr *)&a, addr_len(&a)) != 0
        || (st == SOCK_STREAM && listen(fd, 512) != 0)) {
        if (!l->optional)
            fatal(2, "bind(%s %s): %s", st == SOCK_DGRAM ? "udp" : "tcp", spec, strerror(errno));
        Buf b = { .n = 0 };
        bput(&b, "{\"event\":\"unbound\",\"proto\":\"%s\"", st == SOCK_DGRAM ? "udp" : "tcp");
        bkv(&b, "listen", spec);
        bkv(&b, "error", strerror(errno));
        bput(&b, "}");
        emit(&b);
        close(fd);
        return -1;
    }
    return fd;
}

static int init_ifup(int sock, const char *ifname, const char *addr, int prefix);
static int net_default_route(int sock, const char *gw);

/* --daemon: the readiness pipe's write end, in the daemon; -1 otherwise. */
static int g_ready_fd = -1;

/*
 * Fork a daemon that logs to `log` in a session of its own; the caller's process
 * waits until the daemon says it is ready, then prints "pid=N" and exits 0. If
 * the daemon fails first (or takes over 10 s), its log goes to stderr and the
 * exit status is 86. No polling: the daemon closes the pipe by writing a byte,
 * or by dying. Returns in the daemon only.
 */
static void canary_daemonize(const char *log)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC))
        fatal(2, "pipe: %s", strerror(errno));
    pid_t pid = fork();
    if (pid < 0)
        fatal(2, "fork: %s", strerror(errno));
    if (pid == 0) {
        close(p[0]);
        setsid();
        int out = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (out < 0 || in < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0)
            _exit(2); /* the caller reports the missing log */
        close(out);
        close(in);
        g_ready_fd = p[1];
        return;
    }
    close(p[1]);
    struct pollfd pf = { .fd = p[0], .events = POLLIN };
    char c;
    int waited = poll(&pf, 1, 10000);
    if (waited > 0 && read(p[0], &c, 1) == 1) {
        dprintf(1, "pid=%d\n", (int)pid);
        _exit(0);
    }
    if (waited == 0) {
        kill(pid, SIGKILL);
        dprintf(2, "canary did not report ready within 10s\n");
    }
    char buf[4096];
    int fd = open(log, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf) : -1;
    if (n > 0)
        (void)!write(2, buf, (size_t)n);
    else
        dprintf(2, "canary failed before writing %s\n", log);
    _exit(86);
}

/* --netns/--iface: move into the outside namespace and configure its end. */
static void canary_network(const char *netns, const char *iface, const char *cidr, const char *gw)
{
    if (netns) {
        int fd = open(netns, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || setns(fd, CLONE_NEWNET))
            fatal(2, "setns %s: %s", netns, strerror(errno));
        close(fd);
    }
    if (!iface)
        return;
    char addr[64];
    int prefix = 0;
    const char *slash = cidr ? strchr(cidr, '/') : NULL;
    if (!slash || (size_t)(slash - cidr) >= sizeof addr || sscanf(slash + 1, "%d", &prefix) != 1
        || prefix < 1 || prefix > 32)
        fatal(2, "bad --iface-addr (want IPV4/PREFIX): %s", cidr ? cidr : "(none)");
    memcpy(addr, cidr, (size_t)(slash - cidr));
    addr[slash - cidr] = '\0';
    int sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (sock < 0 || init_ifup(sock, "lo", NULL, 0))
        fatal(2, "lo: %s", strerror(errno));
    if (init_ifup(sock, iface, addr, prefix))
        fatal(2, "%s: %s", iface, strerror(errno));
    if (gw && net_default_route(sock, gw))
        fatal(2, "default route via %s: %s", gw, strerror(errno));
    close(sock);
}

/* struct in6_ifreq (linux/ipv6.h, which musl's headers cannot include). */
struct probe_in6_ifreq { struct in6_addr addr; uint32_t prefixlen; int ifindex; };

/* --iface-addr6/--gateway6: the outside end's IPv6 address (no duplicate address
 * detection: the address must be usable at once) and a default route back. */
static void canary_network6(const char *iface, const char *cidr, const char *gw)
{
    char addr[64], path[128];
    int prefix = 0;
    const char *slash = cidr ? strchr(cidr, '/') : NULL;
    if (!iface)
        fatal(2, "--iface-addr6 needs --iface");
    if (!slash || (size_t)(slash - cidr) >= sizeof addr || sscanf(slash + 1, "%d", &prefix) != 1
        || prefix < 1 || prefix > 128)
        fatal(2, "bad --iface-addr6 (want IPV6/PREFIX): %s", cidr);
    memcpy(addr, cidr, (size_t)(slash - cidr));
    addr[slash - cidr] = '\0';
    snprintf(path, sizeof path, "/proc/sys/net/ipv6/conf/%s/accept_dad", iface);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
        (void)!write(fd, "0\n", 2);
        close(fd);
    }
    struct probe_in6_ifreq r = { .prefixlen = (uint32_t)prefix, .ifindex = (int)if_nametoindex(iface) };
    int sock = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (sock < 0)
        fatal(2, "IPv6 socket: %s", strerror(errno));
    if (!r.ifindex || inet_pton(AF_INET6, addr, &r.addr) != 1 || ioctl(sock, SIOCSIFADDR, &r))
        fatal(2, "%s: IPv6 address %s: %s", iface, addr, strerror(errno));
    /* Until the kernel has seen the link come up (its link watch may lag a second
     * under load), the address stays tentative and cannot be bound: wait for it. */
    char hex[33], table[8192];
    for (int i = 0; i < 16; i++)
        snprintf(hex + 2 * i, 3, "%02x", r.addr.s6_addr[i]);
    for (int tries = 0;; tries++) {
        ssize_t n = read_file("/proc/net/if_inet6", table, sizeof table - 1);
        table[n > 0 ? n : 0] = '\0';
        char *line = strstr(table, hex);
        unsigned flags = 0x40;
        if (line && sscanf(line, "%*32s %*x %*x %*x %x", &flags) != 1)
            flags = 0x40;
        if (!(flags & 0x40 /* IFA_F_TENTATIVE */))
            break;
        if (tries == 500)
            fatal(2, "%s: IPv6 address %s still tentative after 10 s", iface, addr);
        usleep(20000);
    }
    if (gw) {
        struct in6_rtmsg rt;
        memset(&rt, 0, sizeof rt);
        rt.rtmsg_flags = RTF_UP | RTF_GATEWAY;
        rt.rtmsg_metric = 1;
        rt.rtmsg_ifindex = r.ifindex;
        if (inet_pton(AF_INET6, gw, &rt.rtmsg_gateway) != 1 || ioctl(sock, SIOCADDRT, &rt))
            fatal(2, "IPv6 default route via %s: %s", gw, strerror(errno));
    }
    close(sock);
}

/* --capture: every packet arriving in the outside namespace, on any interface but
 * lo, on any port and protocol, is logged ("packet" events): TCP SYNs, every UDP
 * datagram and ICMP echo request, and any packet whose payload names harness (its
 * marker, with some context). Attempts to ports nobody listens on count too. */
static int capture_open(void)
{
    int fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, htons(0x0003 /* ETH_P_ALL */));
    if (fd < 0)
        fatal(2, "packet capture: %s", strerror(errno));
    int size = 4 << 20;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
    return fd;
}

/* The printable text around the first "harness" in p (case-insensitive), or "". */
static void capture_mark(const unsigned char *p, size_t n, char *out, size_t cap)
{
    out[0] = '\0';
    for (size_t i = 0; i + 7 <= n; i++) {
        if (strncasecmp((const char *)p + i, "harness", 7))
            continue;
        size_t from = i > 48 ? i - 48 : 0, k = 0;
        for (size_t j = from; j < n && k + 1 < cap && j < i + 120; j++)
            out[k++] = p[j] >= 0x21 && p[j] < 0x7f ? (char)p[j] : '.';
        out[k] = '\0';
        return;
    }
}

static void capture_read(int fd)
{
    static unsigned char pkt[65536];
    static int lo;
    if (!lo)
        lo = (int)if_nametoindex("lo");
    for (int k = 0; k < 256; k++) {
        struct sockaddr_ll from;
        socklen_t fl = sizeof from;
        ssize_t n = recvfrom(fd, pkt, sizeof pkt, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return;
        if (from.sll_pkttype == PACKET_OUTGOING || from.sll_ifindex == lo)
            continue;
        unsigned proto_eth = ntohs(from.sll_protocol), l4 = 0;
        size_t hl = 0;
        char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];
        if (proto_eth == 0x0800 && n >= 20 && (pkt[0] >> 4) == 4) {
            hl = (size_t)(pkt[0] & 15) * 4;
            l4 = pkt[9];
            inet_ntop(AF_INET, pkt + 12, src, sizeof src);
            inet_ntop(AF_INET, pkt + 16, dst, sizeof dst);
        } else if (proto_eth == 0x86dd && n >= 40 && (pkt[0] >> 4) == 6) {
            hl = 40;
            l4 = pkt[6]; /* no extension headers expected here */
            inet_ntop(AF_INET6, pkt + 8, src, sizeof src);
            inet_ntop(AF_INET6, pkt + 24, dst, sizeof dst);
        } else {
            continue;
        }
        if (hl > (size_t)n)
            continue;
        const unsigned char *t = pkt + hl;
        size_t tn = (size_t)n - hl, off = 0;
        const char *name;
        int sport = -1, dport = -1, keep = 0;
        if (l4 == 6 && tn >= 20) {
            name = "tcp";
            sport = t[0] << 8 | t[1];
            dport = t[2] << 8 | t[3];
            off = (size_t)(t[12] >> 4) * 4;
            keep = (t[13] & 0x12) == 0x02; /* SYN without ACK: a new connection */
        } else if (l4 == 17 && tn >= 8) {
            name = "udp";
            sport = t[0] << 8 | t[1];
            dport = t[2] << 8 | t[3];
            off = 8;
            keep = 1;
        } else if ((l4 == 1 && tn >= 8 && t[0] == 8) || (l4 == 58 && tn >= 8 && t[0] == 128)) {
            name = l4 == 1 ? "icmp" : "icmp6";
            sport = t[4] << 8 | t[5]; /* the echo identifier */
            off = 8;
            keep = 1;
        } else {
            continue;
        }
        char mark[200] = "";
        if (off < tn)
            capture_mark(t + off, tn - off, mark, sizeof mark);
        if (!keep && !mark[0])
            continue;
        Buf b = { .n = 0 };
        bput(&b, "{\"event\":\"packet\"");
        bkv(&b, "proto", name);
        bkv(&b, "src", src);
        bkv(&b, "dst", dst);
        bput(&b, ",\"sport\":%d,\"dport\":%d", sport, dport);
        if (mark[0])
            bkv(&b, "mark", mark);
        bput(&b, "}");
        emit(&b);
    }
}

/* The run's lease (a file whose first line is the epoch second it ends at) is
 * still running: the file is there, readable, and its end is not past. A run that
 * was killed stops renewing it, and the canary then exits by itself. */
static int lease_alive(const char *path)
{
    char text[64] = { 0 };
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n <= 0)
        return 0;
    char *end = NULL;
    long long until = strtoll(text, &end, 10);
    if (end == text)
        return 0;
    return (long long)time(NULL) <= until;
}

/* Single-threaded poll loop; never waits on one client. */
__attribute__((noreturn))
static void canary_main(int argc, char **argv)
{
    static struct listener ls[MAX_LISTEN];
    static struct client cl[MAX_CLIENTS];
    static struct pollfd pf[MAX_LISTEN + MAX_CLIENTS + 1];
    size_t nl = 0, nc = 0;
    const char *answer = NULL, *daemon_log = NULL, *netns = NULL, *iface = NULL, *cidr = NULL,
               *gw = NULL, *cidr6 = NULL, *gw6 = NULL, *lease = NULL;
    int capture = 0, cap_fd = -1;
    double lease_checked = 0;

    g_fatal_type = "event";
    signal(SIGPIPE, SIG_IGN);
    for (int i = 2; i < argc; i += 2) {
        const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        int dns = !strcmp(opt, "--dns");
        if (!strcmp(opt, "--capture")) {
            capture = 1;
            i--; /* a flag: no value */
            continue;
        }
        if (!val)
            fatal(2, "bad argument: %s", opt);
        if ((dns || !strcmp(opt, "--tcp")) && nl + 2 <= MAX_LISTEN) {
            ls[nl++] = (struct listener){ -1, dns ? L_DNS_UDP : L_LINE, val, 0 };
            if (dns)
                ls[nl++] = (struct listener){ -1, L_DNS_TCP, val, 0 };
        } else if (!strcmp(opt, "--sweep-tcp") && nl + 1 <= MAX_LISTEN) {
            ls[nl++] = (struct listener){ -1, L_LINE, val, 1 };
        } else if (!strcmp(opt, "--sweep-dns") && nl + 2 <= MAX_LISTEN) {
            ls[nl++] = (struct listener){ -1, L_DNS_UDP, val, 1 };
            ls[nl++] = (struct listener){ -1, L_DNS_TCP, val, 1 };
        } else if (!strcmp(opt, "--sweep-udp") && nl + 1 <= MAX_LISTEN) {
            ls[nl++] = (struct listener){ -1, L_UDP_LINE, val, 1 };
        } else if (!strcmp(opt, "--iface-addr6"))
            cidr6 = val;
        else if (!strcmp(opt, "--gateway6"))
            gw6 = val;
        else if (!strcmp(opt, "--nonce"))
            g_canary_nonce = val;
        else if (!strcmp(opt, "--answer"))
            answer = val;
        else if (!strcmp(opt, "--daemon"))
            daemon_log = val;
        else if (!strcmp(opt, "--netns"))
            netns = val;
        else if (!strcmp(opt, "--iface"))
            iface = val;
        else if (!strcmp(opt, "--iface-addr"))
            cidr = val;
        else if (!strcmp(opt, "--gateway"))
            gw = val;
        else if (!strcmp(opt, "--lease"))
            lease = val;
        else
            fatal(2, "bad argument: %s", opt);
    }
    if (!g_canary_nonce || !*g_canary_nonce || strlen(g_canary_nonce) > 200)
        fatal(2, "--nonce not given (or longer than 200)");
    if (nl > MAX_LISTEN - 2)
        fatal(2, "too many listeners (at most %d)", MAX_LISTEN - 2);
    if (answer && inet_pton(AF_INET, answer, &g_answer) != 1)
        fatal(2, "bad --answer (want an IPv4 address): %s", answer);
    g_have_answer = answer != NULL;
    if (nl == 0)
        fatal(2, "no --tcp or --dns given");
    if (daemon_log)
        canary_daemonize(daemon_log);
    canary_network(netns, iface, cidr, gw);
    if (cidr6)
        canary_network6(iface, cidr6, gw6);
    if (capture)
        cap_fd = capture_open();
    for (size_t k = 0; k < nl; k++)
        ls[k].fd = canary_bind(&ls[k]);

    Buf b = { .n = 0 };
    bput(&b, "{\"event\":\"ready\",\"pid\":%d}", (int)getpid());
    emit(&b);
    if (g_ready_fd >= 0) {
        (void)!write(g_ready_fd, "r", 1);
        close(g_ready_fd);
    }

    for (;;) {
        double now = now_ms(), next = -1;
        for (size_t k = 0; k < nl; k++)
            pf[k] = (struct pollfd){ .fd = ls[k].fd, .events = POLLIN };
        for (size_t k = 0; k < nc; k++) {
            pf[nl + k] = (struct pollfd){ .fd = cl[k].fd, .events = POLLIN };
            if (next < 0 || cl[k].end < next)
                next = cl[k].end;
        }
        int wait = next < 0 ? -1 : next <= now ? 0 : (int)(next - now + 1);
        if (lease && (wait < 0 || wait > 1000))
            wait = 1000;
        if (lease && now - lease_checked >= 1000) {
            lease_checked = now;
            if (!lease_alive(lease)) {
                b.n = 0;
                bput(&b, "{\"event\":\"lease-ended\",\"pid\":%d}", (int)getpid());
                emit(&b);
                _exit(0);
            }
        }
        pf[nl + nc] = (struct pollfd){ .fd = cap_fd, .events = POLLIN };
        if (poll(pf, nl + nc + 1, wait) < 0 && errno != EINTR)
            fatal(2, "poll: %s", strerror(errno));
        if (pf[nl + nc].revents)
            capture_read(cap_fd);
        /* Clients first, then drop the finished ones, then take new ones. */
        for (size_t k = 0; k < nc; k++) {
            if (pf[nl + k].revents)
                client_read(&cl[k]);
            if (cl[k].fd >= 0 && now_ms() >= cl[k].end)
                client_finish(&cl[k], 0);
        }
        size_t kept = 0;
        for (size_t k = 0; k < nc; k++)
            if (cl[k].fd >= 0)
                cl[kept++] = cl[k];
        nc = kept;
        for (size_t k = 0; k < nl; k++)
            if (pf[k].revents) {
                if (ls[k].type == L_DNS_UDP)
                    serve_udp(&ls[k]);
                else if (ls[k].type == L_UDP_LINE)
                    serve_udp_line(&ls[k]);
                else
                    accept_all(&ls[k], cl, &nc);
            }
    }
}

/* ---- main ---------------------------------------------------------------- */

static void on_deadline(int sig)
{
    static const char msg[] = "{\"type\":\"fatal\",\"detail\":\"deadline\"}\n";
    pid_t c = g_child;
    (void)sig;
    if (c > 0) {
        kill(-c, SIGKILL);
        kill(c, SIGKILL);
    }
    write_all(STDOUT_FILENO, msg, sizeof msg - 1);
    _exit(3);
}

/* SIGTERM/SIGINT/SIGHUP (e.g. from `timeout` at the cell deadline): take the
 * running check's process group down too, then go. */
static void on_term(int sig)
{
    pid_t c = g_child;
    if (c > 0) {
        kill(-c, SIGKILL);
        kill(c, SIGKILL);
    }
    _exit(128 + sig);
}

static long parse_num(const char *opt, const char *s, long max)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v <= 0 || v > max)
        fatal(2, "bad value for %s: %s", opt, s);
    return v;
}

static int scenario_known(const char *name)
{
    for (size_t i = 0; i < NCHECKS; i++)
        if (!strcmp(checks[i].scenario, name))
            return 1;
    return 0;
}

/* ---- mode "init": PID 1 of a microVM guest ------------------------------------
 * The harness boots a guest kernel with an initramfs whose /init is this binary,
 * started as `/init init` (the words after "--" on the kernel command line). It
 * prepares the guest from the files under /harness, runs `/init run ARGS...` as
 * its child with stdout on the serial console, then reboots, which ends the VMM
 * (reboot=t with -no-reboot; firecracker exits on reboot). Its own messages are
 * plain text on the console, never JSON, so the harness keeps only probe lines.
 *   /harness/args      the arguments of `probe run`, NUL-separated
 *   /harness/modules   kernel modules to load in order, one path per line; the
 *                      kernel command line's "NAME.param=value" words are passed on
 *   /harness/net       "IFACE ADDRESS PREFIX GATEWAY": configure the NIC
 *   /harness/nnp       present: the probe runs with no_new_privs
 *   /harness/nosuid    present: /helpers is remounted nosuid and read-only
 * /helpers/fcap gets CAP_NET_RAW as a file capability here: a cpio cannot carry one.
 */

__attribute__((format(printf, 1, 2)))
static void init_say(const char *fmt, ...)
{
    char line[600];
    int n = snprintf(line, sizeof line, "harness-init: ");
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (k > 0)
        n += k < (int)(sizeof line - (size_t)n - 1) ? k : (int)(sizeof line - (size_t)n - 2);
    line[n++] = '\n';
    write_all(STDERR_FILENO, line, (size_t)n);
}

__attribute__((noreturn))
static void init_reboot(void)
{
    sync();
    reboot(RB_AUTOBOOT);
    for (;;)
        pause();
}

/* A small file, whole and NUL-terminated: its length, or -1. */
static ssize_t init_slurp(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t n = 0;
    ssize_t k;
    while (n < size - 1 && (k = read(fd, buf + n, size - 1 - n)) > 0)
        n += (size_t)k;
    close(fd);
    buf[n] = 0;
    return (ssize_t)n;
}

static void init_modules(void)
{
    static char list[8192], cmdline[4096], words[4096];
    if (init_slurp("/harness/modules", list, sizeof list) <= 0)
        return;
    if (init_slurp("/proc/cmdline", cmdline, sizeof cmdline) < 0)
        cmdline[0] = 0;
    char *save = NULL;
    for (char *path = strtok_r(list, "\n", &save); path; path = strtok_r(NULL, "\n", &save)) {
        /* The module's name: the file name up to ".ko", with '-' read as '_'. */
        const char *base = strrchr(path, '/');
        char name[64];
        snprintf(name, sizeof name, "%s", base ? base + 1 : path);
        char *ext = strstr(name, ".ko");
        if (ext)
            *ext = 0;
        for (char *c = name; *c; c++)
            if (*c == '-')
                *c = '_';
        char params[2048] = "";
        size_t len = strlen(name), used = 0;
        memcpy(words, cmdline, sizeof words);
        char *wsave = NULL;
        for (char *w = strtok_r(words, " \n", &wsave); w; w = strtok_r(NULL, " \n", &wsave)) {
            if (strncmp(w, name, len) || w[len] != '.')
                continue;
            int k = snprintf(params + used, sizeof params - used, "%s%s", used ? " " : "", w + len + 1);
            if (k > 0 && (size_t)k < sizeof params - used)
                used += (size_t)k;
        }
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || (syscall(SYS_finit_module, fd, params, 0) != 0 && errno != EEXIST))
            init_say("module %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
    }
}

static int init_inet(struct sockaddr *out, const char *text)
{
    struct sockaddr_in sin = { .sin_family = AF_INET };
    if (text && inet_pton(AF_INET, text, &sin.sin_addr) != 1)
        return -1;
    memcpy(out, &sin, sizeof sin);
    return 0;
}

/* Bring an interface up, with an IPv4 address if one is given. */
static int init_ifup(int sock, const char *ifname, const char *addr, int prefix)
{
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", ifname);
    if (addr) {
        if (init_inet(&ifr.ifr_addr, addr))
            return errno = EINVAL, -1;
        /* A driver may still be registering the device: retry for a second. */
        int tries = 0;
        while (ioctl(sock, SIOCSIFADDR, &ifr) && errno == ENODEV && ++tries < 20)
            usleep(50000);
        if (tries == 20)
            return -1;
        struct sockaddr_in mask = { .sin_family = AF_INET };
        mask.sin_addr.s_addr = htonl(prefix > 0 ? 0xffffffffU << (32 - prefix) : 0);
        memcpy(&ifr.ifr_netmask, &mask, sizeof mask);
        if (ioctl(sock, SIOCSIFNETMASK, &ifr))
            return -1;
    }
    if (ioctl(sock, SIOCGIFFLAGS, &ifr))
        return -1;
    ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
    return ioctl(sock, SIOCSIFFLAGS, &ifr);
}

/* A default route via `gw` (IPv4). */
static int net_default_route(int sock, const char *gw)
{
    struct rtentry rt;
    memset(&rt, 0, sizeof rt);
    rt.rt_flags = RTF_UP | RTF_GATEWAY;
    if (init_inet(&rt.rt_dst, "0.0.0.0") || init_inet(&rt.rt_genmask, "0.0.0.0")
        || init_inet(&rt.rt_gateway, gw))
        return errno = EINVAL, -1;
    return ioctl(sock, SIOCADDRT, &rt);
}

/* Loopback, and the NIC /harness/net asks for: 0, or -1 (with `why`) if that failed. */
static int init_net(char *why, size_t size)
{
    char conf[256], ifname[IFNAMSIZ], addr[64], gw[64];
    int prefix = 0, asked = init_slurp("/harness/net", conf, sizeof conf) > 0;
    int sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (sock < 0)
        return snprintf(why, size, "socket: %s", strerror(errno)), asked ? -1 : 0;
    if (init_ifup(sock, "lo", NULL, 0))
        init_say("lo: %s", strerror(errno));
    int failed = 0;
    if (asked && sscanf(conf, "%15s %63s %d %63s", ifname, addr, &prefix, gw) != 4) {
        snprintf(why, size, "/harness/net: expected IFACE ADDRESS PREFIX GATEWAY");
        failed = 1;
    } else if (asked) {
        if (init_ifup(sock, ifname, addr, prefix)) {
            snprintf(why, size, "%s: %s", ifname, strerror(errno));
            failed = 1;
        } else if (net_default_route(sock, gw)) {
            snprintf(why, size, "default route via %s: %s", gw, strerror(errno));
            failed = 1;
        }
    }
    close(sock);
    return failed ? -1 : 0;
}

static void init_helpers(void)
{
    struct stat st;
    if (stat("/helpers", &st))
        return;
    /* struct vfs_cap_data, revision 2 (little-endian): CAP_NET_RAW permitted, effective. */
    uint32_t cap[5] = { 0x02000001U, 1U << PROBE_CAP_NET_RAW, 0, 0, 0 };
    if (!stat("/helpers/fcap", &st) && setxattr("/helpers/fcap", "security.capability", cap, sizeof cap, 0))
        init_say("setcap /helpers/fcap: %s", strerror(errno));
    if (!stat("/harness/nosuid", &st)
        && (mount("/helpers", "/helpers", NULL, MS_BIND, NULL)
            || mount(NULL, "/helpers", NULL, MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV | MS_RDONLY, NULL)))
        init_say("remount /helpers nosuid: %s", strerror(errno));
}

__attribute__((noreturn))
static void init_main(void)
{
    static char args[16384];
    char *argv[256] = { "/init" };
    int argc = 1;
    if (getpid() != 1)
        fatal(2, "init: must be process 1 of a guest");
    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
    mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777");
    syscall(SYS_syslog, 8 /* SYSLOG_ACTION_CONSOLE_LEVEL */, NULL, 1); /* keep probe lines whole */
    init_modules();
    char why[300], detail[400];
    if (init_net(why, sizeof why)) {
        /* A network that was asked for and is missing must not pass for confinement. */
        snprintf(detail, sizeof detail, "init: the guest network could not be set up: %s", why);
        Buf b = { .n = 0 };
        bput(&b, "{\"type\":\"fatal\",\"detail\":");
        bstr(&b, detail);
        bput(&b, "}");
        emit(&b);
        init_reboot();
    }
    init_helpers();
    ssize_t n = init_slurp("/harness/args", args, sizeof args);
    for (ssize_t i = 0; n > 0 && i < n && argc < 255; i += (ssize_t)strlen(args + i) + 1)
        argv[argc++] = args + i;
    argv[argc] = NULL;
    struct stat st;
    int nnp = !stat("/harness/nnp", &st);
    pid_t pid = fork();
    if (pid == 0) {
        if (nnp && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
            _exit(126);
        execv("/init", argv);
        _exit(127);
    }
    int status = 0;
    for (;;) { /* reap orphans too: this is PID 1 */
        pid_t w = waitpid(-1, &status, 0);
        if (w == pid || (w < 0 && errno != EINTR))
            break;
    }
    if (pid < 0)
        init_say("fork: %s", strerror(errno));
    else if (WIFSIGNALED(status))
        init_say("probe killed by signal %d", WTERMSIG(status));
    else
        init_say("probe exited with status %d", WEXITSTATUS(status));
    init_reboot();
}

int main(int argc, char **argv)
{
    if (argc > 0 && argv[0] && argv[0][0])
        g_argv0 = argv[0];
    if (argc == 2 && !strcmp(argv[1], "version")) {
        Buf b = { .n = 0 };
        bput(&b, "{\"type\":\"version\",\"probe\":\"%s\",\"protocol\":%d}", PROBE_NAME, PROTOCOL);
        emit(&b);
        return 0;
    }
    if (argc == 2 && !strcmp(argv[1], "whoami")) {
        Buf b = { .n = 0 };
        bput(&b, "{\"type\":\"whoami\",");
        put_creds(&b, 0);
        bput(&b, "}");
        emit(&b);
        return 0;
    }
    if (argc >= 2 && !strcmp(argv[1], "canary"))
        canary_main(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "init"))
        init_main();
    if (argc < 2 || strcmp(argv[1], "run"))
        fatal(2, "usage: probe run [--check-timeout-ms N] [--deadline-ms N] [--tag T] [OPTIONS] SCENARIO..."
                 " | probe canary --tcp IP:PORT... --dns IP:PORT... --nonce HEX --answer IP"
                 " [--netns PATH --iface NAME --iface-addr IP/N --gateway IP] [--daemon LOG] [--lease FILE]"
                 " | probe whoami | probe version");

    int i = 2;
    for (; i < argc && argv[i][0] == '-'; i++) {
        const char **slot = NULL;
        for (size_t k = 0; k < NRUNOPTS && !slot; k++)
            if (!strcmp(argv[i], run_opts[k].name))
                slot = run_opts[k].val;
        if (!strcmp(argv[i], "--check-timeout-ms") && i + 1 < argc)
            g_check_timeout_ms = (int)parse_num(argv[i], argv[i + 1], 86400000L), i++;
        else if (!strcmp(argv[i], "--deadline-ms") && i + 1 < argc)
            g_deadline_ms = parse_num(argv[i], argv[i + 1], 86400000L), i++;
        else if (slot && i + 1 < argc)
            *slot = argv[++i];
        else
            fatal(2, "bad argument: %s", argv[i]);
    }
    if (o.unpriv_uid)
        g_unpriv_uid = (unsigned)parse_num("--unpriv-uid", o.unpriv_uid, 4294967294L);
    if (i == argc)
        fatal(2, "no scenario given");
    for (int j = i; j < argc; j++)
        if (!scenario_known(argv[j]))
            fatal(2, "unknown scenario: %s", argv[j]);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_deadline;
    sigaction(SIGALRM, &sa, NULL);
    sa.sa_handler = on_term;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    struct itimerval itv = { .it_value = { .tv_sec = g_deadline_ms / 1000,
                                           .tv_usec = (g_deadline_ms % 1000) * 1000 } };
    setitimer(ITIMER_REAL, &itv, NULL);

    Buf b = { .n = 0 };
    bput(&b, "{\"type\":\"start\",\"probe\":\"%s\",\"protocol\":%d,\"pid\":%d,\"uid\":%u,\"euid\":%u,\"gid\":%u",
         PROBE_NAME, PROTOCOL, (int)getpid(), (unsigned)getuid(), (unsigned)geteuid(), (unsigned)getgid());
    if (o.cell_nonce)
        bkv(&b, "cell_nonce", o.cell_nonce);
    bput(&b, "}");
    emit(&b);
    /* The digest covers the nonce and then every line up to the done line, so
     * lines recorded in another cell cannot pass for this one's. */
    sha_init(&g_digest);
    if (o.cell_nonce) {
        sha_update(&g_digest, o.cell_nonce, strlen(o.cell_nonce));
        sha_update(&g_digest, "\n", 1);
    }
    g_digesting = 1;

    int count = 0;
    for (int j = i; j < argc; j++)
        for (size_t k = 0; k < NCHECKS; k++)
            if (!strcmp(checks[k].scenario, argv[j]))
                count += run_check(&checks[k]);

    g_digesting = 0;
    char digest[65];
    sha_hex(&g_digest, digest);
    b.n = 0;
    bput(&b, "{\"type\":\"done\",\"count\":%d", count);
    if (o.cell_nonce)
        bkv(&b, "cell_nonce", o.cell_nonce);
    bput(&b, ",\"digest\":\"%s\"}", digest);
    emit(&b);
    return 0;
}
