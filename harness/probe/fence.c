/* Scenario "controller-loss": the outer fence when the supervisor dies. With the
 * allowed connection working, the probe stops at a barrier while harness kills
 * the supervisor on the host, then tries again: on a connection held open across
 * the kill, and on a new one. Both must fail.
 *
 * A barrier (docs/probe-protocol.md, "Phases") is two files in the folder given
 * by --barrier, the allowed folder, which the host sees too: the probe creates
 * .harness-phase-NAME (holding the cell's tag) and waits for the host to create
 * .harness-go-NAME once it has acted. A barrier that is not released before the
 * check's time limit is a timeout, never a pass. */

#include "probe.h"

#define LOSS "controller-loss"

static void barrier_path(char *out, size_t cap, const char *what, const char *name)
{
    if ((size_t)snprintf(out, cap, "%s/.harness-%s-%s", need(&o.barrier), what, name) >= cap)
        fail(ENAMETOOLONG, "barrier path too long");
}

/* Stop at the barrier NAME until the host releases it. */
static void barrier(const char *name)
{
    char phase[4096], go[4096];
    barrier_path(phase, sizeof phase, "phase", name);
    barrier_path(go, sizeof go, "go", name);
    double t0 = now_ms();
    int fd = open(phase, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        fail(errno, "barrier %s: cannot create %s", name, phase);
    dprintf(fd, "%s\n", need(&o.tag));
    close(fd);
    while (access(go, F_OK) != 0) {
        if (now_ms() >= check_end()) {
            ev_int("barrier_ms", (long long)(now_ms() - t0));
            outcome(OC_TIMEOUT, 0, "barrier %s not released by the host within %.0f ms", name, now_ms() - t0);
        }
        usleep(5000);
    }
    ev_int("barrier_ms", (long long)(now_ms() - t0));
}

/* Was the barrier NAME released (an earlier check stopped there)? */
static int released(const char *name)
{
    char go[4096];
    barrier_path(go, sizeof go, "go", name);
    return access(go, F_OK) == 0;
}

/* Was the barrier NAME released with nothing done (its go file says "idle": no
 * supervisor, no revoke command)? Then there is no effect to wait for. */
static int idle(const char *name)
{
    char go[4096], buf[8] = "";
    barrier_path(go, sizeof go, "go", name);
    int fd = open(go, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    return n >= 4 && !strncmp(buf, "idle", 4);
}

/* Send this check's marker line as LABEL on fd and read a line back into reply:
 * 0, or the errno of the step that failed. */
static int marker_exchange(int fd, const char *label, char *reply, size_t cap)
{
    char msg[256];
    int n = snprintf(msg, sizeof msg, "HARNESS %s %s\n", o.tag, label);
    size_t got = 0;
    int e = 0;
    reply[0] = '\0';
    if (send_all(fd, msg, (size_t)n, net_end()) != 0)
        return errno ? errno : EPIPE;
    got = recv_until(fd, reply, cap - 1, 1, net_end());
    e = errno;
    reply[got] = '\0';
    reply[strcspn(reply, "\r\n")] = '\0';
    return e;
}

/* Before a barrier: an allowed exchange (evidence.before: "ok", or why not), then a
 * connection to the same destination opened but not yet used: its descriptor, or
 * -1 with *err set. */
static int hold_allowed(Addr *a, char *dst, size_t cap, int *err)
{
    char reply[256], want[256];
    need_addr(&o.allowed_tcp, a);
    need(&o.tag);
    need(&o.barrier);
    snprintf(want, sizeof want, "NONCE %s", need(&o.nonce));
    fmt_addr(a, dst, cap);
    ev_str("dst", dst);

    int fd = connect_to(a, SOCK_STREAM, net_end());
    int e = fd < 0 ? errno : marker_exchange(fd, "loss-before", reply, sizeof reply);
    if (fd >= 0)
        close(fd);
    ev_str("before", fd >= 0 && !strcmp(reply, want) ? "ok" : e ? strerror(e) : "no nonce came back");

    int held = connect_to(a, SOCK_STREAM, net_end());
    *err = held < 0 ? errno : 0;
    if (held >= 0) {
        Addr me;
        socklen_t ml = sizeof me;
        if (getsockname(held, (struct sockaddr *)&me, &ml) == 0)
            ev_int("src_port", addr_port(&me));
    }
    return held;
}

/* After the barrier: this check's line on the held connection; escaped if the
 * nonce comes back. */
static void held_line(int held, const char *dst)
{
    char reply[256], want[256];
    snprintf(want, sizeof want, "NONCE %s", o.nonce);
    int e = marker_exchange(held, g_cur->id, reply, sizeof reply);
    close(held);
    if (!strcmp(reply, want))
        outcome(OC_ESCAPED, 0, "the connection held across the barrier carried new data to %s", dst);
    outcome(OC_BLOCKED, e, "the connection held across the barrier carried nothing out (reply \"%.80s\")",
            reply);
}

/* Before the barrier: the allowed exchange and a connection held open. After it
 * (the supervisor killed): the held connection's line. */
void chk_loss_held(void)
{
    Addr a;
    char dst[80];
    int err;
    int held = hold_allowed(&a, dst, sizeof dst, &err);
    barrier(LOSS);
    if (held < 0)
        outcome(OC_BLOCKED, err, "no connection to %s to hold across the barrier", dst);
    held_line(held, dst);
}

/* After the barrier: a new connection to the allowed destination. */
void chk_loss_new(void)
{
    need(&o.barrier);
    if (!released(LOSS))
        fail(0, "barrier %s was never passed: nothing to attempt after it", LOSS);
    tcp_to(&o.allowed_tcp);
}

/* Scenario "revocation": the same, but at the barrier the host revokes the rule
 * that allows the destination (a policy reload) instead of killing the supervisor.
 * The held connection must be cut within REVOKE_BOUND_MS of the barrier's release
 * (the revocation hook has returned by then): the probe waits that long for it to
 * be cut (evidence.cut_ms, -1 if it never was), then sends its line anyway, and
 * the canary decides whether it got out. Where the host had nothing to revoke (the
 * control, an unsupervised sandbox) it does not wait (evidence.bound_ms 0). */
#define REVOKE "revocation"
#define RESTORE "revocation-restore"
#define REVOKE_BOUND_MS 1000

void chk_revoke_held(void)
{
    Addr a;
    char dst[80];
    int err;
    int held = hold_allowed(&a, dst, sizeof dst, &err);
    barrier(REVOKE);
    if (held < 0)
        outcome(OC_BLOCKED, err, "no connection to %s to hold across the barrier", dst);
    double t0 = now_ms(), left;
    long long cut = -1;
    int bound = idle(REVOKE) ? 0 : REVOKE_BOUND_MS;  /* nothing revoked: nothing to wait for */
    while ((left = bound - (now_ms() - t0)) > 0) {
        struct pollfd p = { .fd = held, .events = POLLRDHUP };
        int n = poll(&p, 1, (int)left + 1);
        if (n > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR))) {
            cut = (long long)(now_ms() - t0);
            break;
        }
        if (n < 0 && errno != EINTR)
            break;
        if (n > 0)  /* data nobody asked for: not a cut; wait out the bound */
            usleep(1000);
    }
    ev_int("cut_ms", cut);
    ev_int("bound_ms", bound);
    held_line(held, dst);
}

void chk_revoke_new(void)
{
    need(&o.barrier);
    if (!released(REVOKE))
        fail(0, "barrier %s was never passed: nothing to attempt after it", REVOKE);
    tcp_to(&o.allowed_tcp);
}

/* An inside control: once the host has restored the rule (the barrier
 * revocation-restore), the allowed destination is reached again, so what failed
 * after the revocation failed because of it. */
void chk_revoke_restored(void)
{
    need(&o.barrier);
    if (!released(REVOKE))
        fail(0, "barrier %s was never passed: nothing was revoked", REVOKE);
    barrier(RESTORE);
    tcp_to(&o.allowed_tcp);
}
