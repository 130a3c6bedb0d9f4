/* Output: JSON lines on stdout, and the result fragment a check child sends its
 * parent (each result function ends the child). */

#include "probe.h"

/* ---- lines ----------------------------------------------------------- */

__attribute__((format(printf, 2, 3)))
void bput(Buf *b, const char *fmt, ...)
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
void bstr(Buf *b, const char *str)
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
void bkv(Buf *b, const char *key, const char *val)
{
    bput(b, ",\"%s\":", key);
    bstr(b, val);
}

Sha256 g_digest;
int g_digesting;
const char *g_fatal_type = "type";

/* All n bytes, or as many as fd takes before a real error. A descriptor left
 * O_NONBLOCK (by a runtime sharing the open file description) whose reader is behind
 * answers EAGAIN, or a short write of a line longer than PIPE_BUF: wait until it
 * takes more, never drop the rest of a line (the next line would run into it). */
void write_all(int fd, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t k = write(fd, s, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            struct pollfd p = { .fd = fd, .events = POLLOUT };
            if (poll(&p, 1, -1) < 0 && errno != EINTR)
                return;
            continue;
        }
        if (k <= 0)
            return;
        s += k;
        n -= (size_t)k;
    }
}

/* Print a line; SIGALRM (deadline) is blocked so it cannot cut a line in half. */
void emit(Buf *b)
{
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGALRM);
    sigprocmask(SIG_BLOCK, &set, &old);
    if (b->n >= sizeof b->s - 1) /* cut by bput: still one line, never two run together */
        b->n = sizeof b->s - 2;
    bput(b, "\n");
    if (g_digesting)
        sha_update(&g_digest, b->s, b->n);
    write_all(STDOUT_FILENO, b->s, b->n);
    sigprocmask(SIG_SETMASK, &old, NULL);
}

__attribute__((format(printf, 2, 3), noreturn))
void fatal(int code, const char *fmt, ...)
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

double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

const char *errname(int e)
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

void frag_errno(Buf *b, int e)
{
    bput(b, ",\"errno\":");
    bstr(b, errname(e));
    bput(b, ",\"errno_num\":%d", e);
}

/* The word a line carries for an outcome or status, as docs/probe-protocol.md
 * names them. */
const char *outcome_word(enum outcome oc)
{
    static const char *const words[] = {
        [OC_OK] = "ok", [OC_UNAVAILABLE] = "unavailable", [OC_ERROR] = "error",
        [OC_TIMEOUT] = "timeout", [OC_BLOCKED] = "blocked", [OC_ESCAPED] = "escaped",
        [OC_SUCCEEDED] = "succeeded", [OC_FAILED] = "failed",
    };
    return (unsigned)oc < sizeof words / sizeof words[0] ? words[oc] : "error";
}

int is_check_kind(int kind) { return kind == K_ATTEMPT || kind == K_CONTROL || kind == K_SWEEP; }

/* The start of a result fragment: "status" for facts, "outcome" for checks. */
void frag_status(Buf *b, enum outcome status, int e, const char *detail)
{
    bput(b, "\"%s\":", g_cur && is_check_kind(g_cur->kind) ? "outcome" : "status");
    bstr(b, outcome_word(status));
    if (e)
        frag_errno(b, e);
    bput(b, ",\"detail\":");
    bstr(b, detail);
}

/* ---- results, as written by a check child (each ends its row) ---------- */

Buf g_ev;

void ev_int(const char *key, long long v)
{
    bput(&g_ev, "%s\"%s\":%lld", g_ev.n ? "," : "", key, v);
}

void ev_str(const char *key, const char *v)
{
    bput(&g_ev, "%s\"%s\":", g_ev.n ? "," : "", key);
    bstr(&g_ev, v);
}

__attribute__((noreturn))
void send_result(Buf *b)
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
    row_done();
}

__attribute__((noreturn))
void ok_int(long long v)
{
    Buf b = { .n = 0 };
    bput(&b, "\"status\":\"%s\",\"value\":%lld", outcome_word(OC_OK), v);
    send_result(&b);
}

__attribute__((noreturn))
void ok_bool(int v, const char *detail)
{
    Buf b = { .n = 0 };
    bput(&b, "\"status\":\"%s\",\"value\":%s", outcome_word(OC_OK), v ? "true" : "false");
    if (detail) {
        bput(&b, ",\"detail\":");
        bstr(&b, detail);
    }
    send_result(&b);
}

/* ok, value false: the mechanism exists but misbehaved, as the detail says. */
__attribute__((format(printf, 1, 2), noreturn))
void ok_false(const char *fmt, ...)
{
    char detail[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    ok_bool(0, detail);
}

__attribute__((noreturn))
void ok_str(const char *v)
{
    Buf b = { .n = 0 };
    bput(&b, "\"status\":\"%s\",\"value\":", outcome_word(OC_OK));
    bstr(&b, v);
    send_result(&b);
}

/* The kernel refused `call` with errno e. */
__attribute__((noreturn))
void unavail(const char *call, int e)
{
    char detail[256];
    snprintf(detail, sizeof detail, "%s: %s", call, strerror(e));
    Buf b = { .n = 0 };
    frag_status(&b, OC_UNAVAILABLE, e, detail);
    send_result(&b);
}

/* A status/outcome with errno e (if nonzero, also appended to the detail)
 * and the evidence gathered so far. */
__attribute__((noreturn))
static void vresult(enum outcome status, int e, const char *fmt, va_list ap)
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
void fail(int e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vresult(OC_ERROR, e, fmt, ap);
}

/* A check's outcome: OC_BLOCKED, OC_ESCAPED, OC_SUCCEEDED, OC_OK, OC_FAILED. */
__attribute__((format(printf, 3, 4), noreturn))
void outcome(enum outcome oc, int e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vresult(oc, e, fmt, ap);
}

/* One check line's fragment for the parent: "id":..,"kind":"attempt",... with the
 * evidence the judge matches arrivals by (destination, source port, query name). */
void att_line(const char *id, enum outcome oc, int e, const char *detail, double t0,
              const char *dst, int src_port, const char *qname)
{
    Buf b = { .n = 0 };
    bput(&b, "\"id\":");
    bstr(&b, id);
    bput(&b, ",\"kind\":\"attempt\",\"outcome\":");
    bstr(&b, outcome_word(oc));
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
