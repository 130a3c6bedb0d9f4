/* The child runner: each check runs in a forked child, in its own process group,
 * and sends one result fragment through a pipe; the parent waits with a time
 * limit, kills the whole group and prints the line. */

#include "probe.h"

const struct check *g_cur;
static double g_t0; /* when the check now running started (now_ms) */
int g_resfd = -1;
pid_t g_target;
void (*g_cleanup)(void);
volatile sig_atomic_t g_child;

static int sweep_lines(const struct check *c, const char *buf, size_t n, int *count);

/* ---- the parent: run one check in a child ------------------------------- */

/* Run one row of the table; the number of fact and check lines printed. */
int run_check(const struct check *c)
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

/* ---- in a check child: helpers shared by several scenarios -------------- */

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
