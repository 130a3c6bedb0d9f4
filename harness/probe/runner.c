/* The child runner: each check runs in a forked child, in its own process group,
 * and sends one result fragment through a pipe; the parent waits with a time
 * limit, kills the whole group and prints the line. A run of consecutive light
 * rows (checks.def) shares one child: each row still has its own line, time and
 * time limit, and a row that crashes or overruns ends only itself (the rows
 * after it get a fresh child). */

#include "probe.h"

const struct check *g_cur;
static double g_t0; /* when the check now running started (now_ms) */
int g_resfd = -1;
pid_t g_target;
void (*g_cleanup)(void);
volatile sig_atomic_t g_child;
volatile sig_atomic_t g_kids[MAX_CONCURRENT];

static int sweep_lines(const struct check *c, const char *buf, size_t n, int *count);
static int print_line(const struct check *c, Buf *frag, double t0);

/* ---- in a check child: one row, or a run of light rows -------------------- */

static sigjmp_buf g_next; /* a light row's result returns here, to the next row */
static int g_light;       /* in a child of light rows: results return, not exit */

/* Run rows cs[0..n) one after another: each starts with no evidence, no target
 * and no cleanup of the row before, and gets its own time (check_end). */
__attribute__((noreturn))
static void child_rows(const struct check *cs, size_t n)
{
    static size_t k; /* static: read again after siglongjmp */
    g_light = cs[0].light;
    for (k = 0; k < n; k++) {
        g_cur = &cs[k];
        if (k > 0)
            g_t0 = now_ms(); /* the first row's is the parent's, from before the fork */
        g_ev.n = 0;
        g_target = 0;
        g_cleanup = NULL;
        writes_reset();
        if (sigsetjmp(g_next, 1) == 0) {
            cs[k].fn();
            fail(0, "check returned without a result");
        }
    }
    _exit(0);
}

/* After a row's result is in the pipe: the next light row, or the child's end. */
__attribute__((noreturn)) void row_done(void)
{
    if (g_light)
        siglongjmp(g_next, 1);
    _exit(0);
}

/* ---- the parent: rows in a child, each line printed as its result comes --- */

/* Print row c's line from its result (res, n bytes, if got) or from why it has
 * none; t0: when the row started. The number of fact and check lines printed. */
static int report(const struct check *c, const char *res, size_t n, int got, int timed_out, int st,
                  double t0)
{
    Buf frag = { .n = 0 };
    g_cur = c;
    /* A fact's result starts with "status", a check's with "outcome", an
     * info item's with any member. */
    const char *lead = c->kind == K_INFO ? "\"" : is_check_kind(c->kind) ? "\"outcome\":" : "\"status\":";
    if (got && n > strlen(lead) && !memcmp(res, lead, strlen(lead)) && n < sizeof frag.s) {
        memcpy(frag.s, res, n);
        frag.s[n] = '\0';
        frag.n = n;
    } else {
        char detail[128];
        if (got)
            snprintf(detail, sizeof detail, "child wrote a malformed result");
        else if (timed_out)
            snprintf(detail, sizeof detail, "check exceeded %d ms; child killed", row_limit_ms(c));
        else if (WIFSIGNALED(st))
            snprintf(detail, sizeof detail, "child killed by signal %d", WTERMSIG(st));
        else
            snprintf(detail, sizeof detail, "child exited %d without a result", WEXITSTATUS(st));
        frag_status(&frag, timed_out ? OC_TIMEOUT : OC_ERROR, 0, detail);
    }
    return print_line(c, &frag, t0);
}

/* Row c's line around its fragment, with its elapsed time since t0. */
static int print_line(const struct check *c, Buf *frag, double t0)
{
    /* The evidence (always last in a fragment) goes after elapsed_ms. A
     * quote inside a JSON string is escaped, so this cannot match inside one. */
    char *ev = strstr(frag->s, ",\"evidence\":{");
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
    bput(&line, ",%s", frag->s);
    if (c->kind != K_INFO)
        bput(&line, ",\"elapsed_ms\":%.3f", now_ms() - t0);
    if (ev)
        bput(&line, ",%s", ev);
    bput(&line, "}");
    emit(&line);
    return c->kind != K_INFO;
}

/* A row that never got a child: its error line. */
static size_t no_child(const struct check *c, int e, const char *detail, double t0, int *count)
{
    Buf frag = { .n = 0 };
    g_cur = c;
    frag_status(&frag, OC_ERROR, e, detail);
    *count += print_line(c, &frag, t0);
    return 1;
}

/* A forked check child: its pid (= its process group), the read end of its
 * result pipe, and when its first row started; or, if it could not be made,
 * why (err, why). */
struct kid { pid_t pid; int fd; double t0; int err; const char *why; };

/* The read ends of the concurrent rows' children already started: a sibling
 * forked after them closes its copies, so no row sees another's pipe. */
static int g_open[MAX_CONCURRENT];
static size_t g_nopen;

/* Fork the child for rows cs[0..n) (n > 1: light rows); 0, or -1 with the
 * reason in kid (its line is the caller's to print, in table order). */
static int start_child(const struct check *cs, size_t n, struct kid *kid)
{
    int p[2];
    double t0 = now_ms();
    pid_t pid;

    g_cur = cs;
    g_t0 = t0;
    *kid = (struct kid){ .pid = 0, .fd = -1, .t0 = t0 };
    if (pipe(p) != 0) {
        kid->err = errno, kid->why = "pipe() for the check child failed";
        return -1;
    }
    pid_t parent = getpid();
    if ((pid = fork()) < 0) {
        kid->err = errno, kid->why = "fork() of the check child failed";
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid == 0) {
        setpgid(0, 0);
        /* Die with the parent: a probe killed at the cell timeout must not
         * leave a check child behind in its own process group. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(1); /* the parent died before PDEATHSIG was armed */
        close(p[0]);
        for (size_t i = 0; i < g_nopen; i++)
            close(g_open[i]);
        g_resfd = p[1];
        fcntl(g_resfd, F_SETFD, FD_CLOEXEC); /* not for exec'd helpers */
        child_rows(cs, n);
    }
    setpgid(pid, pid); /* also here, so the group exists before we may kill it */
    close(p[1]);
    *kid = (struct kid){ .pid = pid, .fd = p[0], .t0 = t0 };
    return 0;
}

/* Print each row's line of a started child as its result comes, each row with
 * its own time limit counted from the line of the row before. The number of
 * rows done: after a row's crash or timeout the child is gone, and the rows
 * after it are the caller's again. `reap`: also reap orphaned grandchildren
 * (not while concurrent siblings may still be running: they are children too). */
static size_t finish_child(const struct check *cs, size_t n, struct kid kid, int reap, int *count)
{
    static char buf[65536];
    size_t len = 0, k = 0;
    int timed_out = 0, st = 0, late = 0;
    double t0 = kid.t0, end = t0 + row_limit_ms(&cs[0]);
    pid_t pid = kid.pid;
    int p[2] = { kid.fd, -1 };

    g_cur = cs;
    g_child = pid;
    /* Read the results until EOF (the child exited: the target grandchild
     * closes its copy of the pipe) or the row's timeout. A row before the last
     * is printed as soon as its line is in: the child has gone on to the next. */
    for (;;) {
        char *nl;
        while (k + 1 < n && (nl = memchr(buf, '\n', len)) != NULL) {
            size_t m = (size_t)(nl - buf);
            *count += report(&cs[k], buf, m, 1, 0, 0, t0);
            memmove(buf, nl + 1, len - m - 1);
            len -= m + 1;
            k++;
            t0 = now_ms();
            end = t0 + row_limit_ms(&cs[k]);
            late = 0;
        }
        int left = (int)(end - now_ms() + 0.999);
        /* Past the limit, still take what is already in the pipe (one look): a
         * concurrent row's child may have answered in time while this parent was
         * busy with the rows before it. */
        if (left <= 0 && late++) {
            timed_out = 1;
            break;
        }
        struct pollfd pfd = { .fd = p[0], .events = POLLIN };
        int r = poll(&pfd, 1, left > 0 ? left : 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r == 0)
            timed_out = 1;
        if (r <= 0)
            break;
        char scratch[256], *dst = len < sizeof buf - 1 ? buf + len : scratch;
        size_t room = len < sizeof buf - 1 ? sizeof buf - 1 - len : sizeof scratch;
        ssize_t got = read(p[0], dst, room);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        if (dst != scratch)
            len += (size_t)got;
    }
    const char *nl = memchr(buf, '\n', len);
    int got = nl != NULL;
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
    while (reap && waitpid(-1, NULL, WNOHANG) > 0)
        ; /* orphaned grandchildren are ours when we are pid 1 (e.g. in runsc) */

    const struct check *c = &cs[k];
    if (c->kind == K_SWEEP) { /* many lines: one per attempt */
        int lines = 0;
        g_cur = c;
        if (!sweep_lines(c, buf, len, &lines)) {
            Buf frag = { .n = 0 };
            timed_out = timed_out || !WIFEXITED(st);
            frag_status(&frag, timed_out ? OC_TIMEOUT : OC_ERROR, 0,
                        timed_out ? "the sweep exceeded its time limit; child killed" : "the sweep ended early");
            lines += print_line(c, &frag, t0);
        }
        *count += lines;
    } else {
        *count += report(c, buf, got ? (size_t)(nl - buf) : 0, got, timed_out, st, t0);
    }
    return k + 1;
}

/* Run rows cs[0..n) in one forked child (n > 1: light rows); see finish_child. */
static size_t run_child(const struct check *cs, size_t n, int *count)
{
    struct kid kid;
    if (start_child(cs, n, &kid) != 0)
        return no_child(cs, kid.err, kid.why, kid.t0, count);
    return finish_child(cs, n, kid, 1, count);
}

/* Run concurrent rows cs[0..n) (checks.def's _NET: each only waits on the
 * network, on sockets of its own), each in its own child, all started at once:
 * the scenario waits for its slowest attempt, not for the sum of them. Lines are
 * printed in table order, each row with its own time and time limit, counted
 * from its own fork; a row that crashes or overruns ends only itself. */
static int run_concurrent(const struct check *cs, size_t n)
{
    struct kid kids[MAX_CONCURRENT];
    int count = 0, started[MAX_CONCURRENT];
    g_nopen = 0;
    for (size_t k = 0; k < n; k++) {
        started[k] = start_child(&cs[k], 1, &kids[k]) == 0;
        g_kids[k] = started[k] ? kids[k].pid : 0;
        if (started[k])
            g_open[g_nopen++] = kids[k].fd;
    }
    g_nopen = 0;
    for (size_t k = 0; k < n; k++) {
        if (started[k])
            finish_child(&cs[k], 1, kids[k], k + 1 == n, &count);
        else
            no_child(&cs[k], kids[k].err, kids[k].why, kids[k].t0, &count);
        g_kids[k] = 0; /* k's group is gone (finish_child killed it) */
    }
    return count;
}

/* Run rows cs[0..n): one row in its own child, a run of light rows in one
 * child (a fresh one for the rest after a row that crashed or overran), or a
 * run of concurrent rows at once. The number of fact and check lines printed. */
int run_rows(const struct check *cs, size_t n)
{
    int count = 0;
    if (cs[0].light == ROW_CONCURRENT)
        count = run_concurrent(cs, n);
    else
        for (size_t k = 0; k < n;)
            k += run_child(cs + k, n - k, &count);
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

/* ---- in a check child: helpers shared by several scenarios -------------- */

/* A row's time limit: the check's, or SLOW_ROW_FACTOR times it for a row that walks
 * the host's whole tree (fs-write-reach: on a busy host a co-located sandbox's walk of
 * every folder and file it can reach takes seconds, and a walk cut short is no proof). */
int row_limit_ms(const struct check *c)
{
    return strcmp(c->id, "fs-write-reach") ? g_check_timeout_ms
                                           : SLOW_ROW_FACTOR * g_check_timeout_ms;
}

/* A check must report before its timeout (200 ms to spare). */
double check_end(void) { return g_t0 + g_check_timeout_ms - 200.0; }

/* Wait until fd is ready for `events`; 0, or -1 with errno (ETIMEDOUT at end). */
int wait_io(int fd, short events, double end)
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
ssize_t read_file(const char *path, char *buf, size_t cap)
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

/* selftest: only for testing the harness's own fault handling. */
void chk_selftest_hang(void)
{
    for (;;)
        pause();
}

/* Light rows: which child ran them (rows sharing a child say the same pid), one
 * that hangs and one that crashes (each must end only itself), and evidence left
 * behind by the row before must not show in the next row's line. */
void chk_selftest_light_pid(void)
{
    ev_int("left_by_a_row", 1);
    ok_int(getpid());
}
void chk_selftest_light_hang(void) { chk_selftest_hang(); }
void chk_selftest_light_crash(void)
{
    raise(SIGSEGV);
    fail(0, "SIGSEGV did not end the child");
}
void chk_selftest_light_evidence(void) { fail(0, "pid %d", (int)getpid()); }

int run_program(const char *path, char *const argv[], char *const envp[], int by_handle,
                int one_line, char *out, size_t size)
{
    int p[2], st;
    if (pipe2(p, O_CLOEXEC) != 0)
        fail(errno, "pipe");
    if ((g_target = fork()) < 0)
        fail(errno, "fork");
    if (g_target == 0) {
        char *const *env = envp ? envp : environ;
        dup2(p[1], STDOUT_FILENO);
        if (by_handle & RUN_I386) {
            exec_i386(path, argv, env, by_handle & 1);
        } else if (by_handle) {
            int fd = open(path, O_PATH); /* not close-on-exec: execveat runs it */
            if (fd >= 0)
                syscall(SYS_execveat, fd, "", argv, env, AT_EMPTY_PATH);
        } else {
            execve(path, argv, env);
        }
        dprintf(STDOUT_FILENO, "{\"exec_errno\":%d}\n", errno);
        _exit(127);
    }
    close(p[1]);
    size_t n = recv_until(p[0], out, size - 1, one_line, check_end());
    out[n] = '\0';
    close(p[0]);
    kill(g_target, SIGKILL); /* done with it, or the deadline passed */
    while (waitpid(g_target, &st, 0) < 0)
        if (errno != EINTR)
            fail(errno, "waitpid(%s)", path);
    g_target = 0;
    return st;
}

/* The network namespace's table `name` of /proc: /proc/net/NAME, or where the sandbox's
 * /proc does not show it (a proc mounted subset=pid shows no /proc/net symlink) the
 * same table as /proc/self/net/NAME, which /proc/net only links to. */
static const char *proc_net_path(const char *name, char *path, size_t n)
{
    snprintf(path, n, "/proc/net/%s", name);
    if (access(path, F_OK) != 0)
        snprintf(path, n, "/proc/self/net/%s", name);
    return path;
}

FILE *proc_net_fopen(const char *name)
{
    char path[96];
    FILE *f = fopen(proc_net_path(name, path, sizeof path), "r");
    if (!f && errno == ENOENT && access("/proc/self", F_OK) != 0) /* no /proc at all */
        f = proc_net_diag(name);
    return f;
}

ssize_t proc_net_read(const char *name, char *buf, size_t cap)
{
    char path[96];
    return read_file(proc_net_path(name, path, sizeof path), buf, cap);
}

/* Whether a seccomp filter kills the process on fn(arg) (SECCOMP_RET_KILL_PROCESS or
 * _THREAD, or RET_TRAP unhandled: SIGSYS, as systemd's SystemCallFilter= does): fn is
 * called in a child that exits at once after, so the call must change nothing that
 * outlives it. 1 killed, errno EPERM (the refusal it is: the kernel never ran the
 * call); 0 not, and the caller makes the call itself, so that the next way is tried
 * where a filter killed on one. */
int killed_on(void (*fn)(void *), void *arg)
{
    pid_t pid = fork();
    if (pid < 0)
        return 0;
    if (pid == 0) {
        fn(arg);
        _exit(0);
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS)
        return errno = EPERM, 1;
    return 0;
}

static long g_call[4]; /* killed_on_call's: the call's number and arguments */
static void call_it(void *arg)
{
    (void)arg;
    syscall(g_call[0], g_call[1], g_call[2], g_call[3]);
}

/* killed_on for syscall(nr, a, b, c). */
int killed_on_call(long nr, long a, long b, long c)
{
    g_call[0] = nr, g_call[1] = a, g_call[2] = b, g_call[3] = c;
    return killed_on(call_it, NULL);
}
