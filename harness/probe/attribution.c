/* Scenario "attribution": an allowed connection, whose decision record (kept by
 * the sandbox's supervisor) must name the binary that made it; then connections
 * from two binaries, interleaved (the probe, the helpers' `other`, the probe), each
 * with its own marker, whose records must each name their own binary. And the
 * allowed destination per binary (egress-confinement, judged where the sandbox's
 * policy names the binaries that may reach it): the probe, a binary the policy
 * allows, reaches it; another program (the helpers' `other`, the probe with other
 * bytes appended: another name and another sha256) must not, whatever name it takes. */

#include "probe.h"
#include <limits.h>

void chk_attr_allowed_connect(void) { tcp_to(&o.allowed_tcp); }

void chk_egress_policy_binary(void) { tcp_to(&o.allowed_tcp); }

/* One exchange with the canary from this process, its line `HARNESS TAG MARKER`:
 * 0 or connect's errno; `*port` the source port (-1: unknown), `*back` whether
 * the nonce came back. */
static int marked_connect(const Addr *a, const char *tag, const char *marker, const char *nonce,
                          double end, long *port, int *back, char *reply, size_t cap, int held)
{
    char msg[256];
    *port = -1;
    *back = 0;
    reply[0] = '\0';
    int fd = held >= 0 ? connect_fd(held, a, end) : connect_to(a, SOCK_STREAM, end);
    if (fd < 0)
        return errno ? errno : EIO;
    Addr me;
    socklen_t ml = sizeof me;
    if (getsockname(fd, (struct sockaddr *)&me, &ml) == 0)
        *port = addr_port(&me);
    int n = snprintf(msg, sizeof msg, "HARNESS %s %s\n", tag, marker);
    size_t got = 0;
    if (send_all(fd, msg, (size_t)n, end) == 0)
        got = recv_until(fd, reply, cap - 1, 1, end);
    reply[got] = '\0';
    reply[strcspn(reply, "\r\n")] = '\0';
    close(fd);
    snprintf(msg, sizeof msg, "NONCE %s", nonce);
    *back = !strcmp(reply, msg);
    return 0;
}

/* `probe connect TAG CHECK-ID IP:PORT NONCE [NAME [FD]]`: one exchange with the canary,
 * as `probe run` would make it, printed as one line for the program that ran it; named
 * NAME ("-": its own), on the socket it was handed at FD where one is given. */
void connect_main(int argc, char **argv)
{
    Addr a;
    Buf b = { .n = 0 };
    char reply[256];
    long port;
    int back;
    if (argc < 6 || argc > 8 || parse_addr(argv[4], &a) != 0)
        fatal(2, "usage: probe connect TAG CHECK-ID IP:PORT NONCE [NAME [FD]]");
    if (argc >= 7 && strcmp(argv[6], "-")) /* the process's name (comm) it takes on */
        prctl(PR_SET_NAME, argv[6], 0, 0, 0);
    int held = argc == 8 ? atoi(argv[7]) : -1;
    /* One network step's limit, as every attempt of `probe run` has (net_end):
     * a connect that no one answers is refused by then, and the caller (which
     * waits until its own check's end) hears so instead of killing it. */
    double limit = g_check_timeout_ms < 2000 ? g_check_timeout_ms : 2000.0;
    int e = marked_connect(&a, argv[2], argv[3], argv[5], now_ms() + limit, &port, &back, reply,
                           sizeof reply, held);
    bput(&b, "{\"type\":\"connect\",\"connect_errno\":%d,\"src_port\":%ld,\"nonce_back\":%d,", e, port,
         back);
    bkv(&b, "reply", reply);
    bput(&b, "}");
    emit(&b);
    exit(0);
}

/* A program makes one exchange with the allowed destination, its line `HARNESS TAG
 * MARKER`, started as `argv0` and named `name` (NULL: its own): its connect errno (0:
 * connected), `*port` its source port (-1: unknown), `*back` whether the nonce came back;
 * -1 where it did not start (`*exec_errno` why). */
static int connect_as(const char *path, const char *argv0, const char *name, int held, const char *marker,
                      long *port, int *back, int *exec_errno)
{
    const char *dst = need(&o.allowed_tcp);
    char out[1024], fd[16];
    snprintf(fd, sizeof fd, "%d", held);
    char *const argv[] = { (char *)argv0, "connect", (char *)need(&o.tag), (char *)marker, (char *)dst,
                           (char *)need(&o.nonce), (char *)name, held >= 0 ? fd : NULL, NULL };
    int st = run_program(path, argv, NULL, 0, 1, out, sizeof out);
    const char *ee = strstr(out, "\"exec_errno\":"), *ce = strstr(out, "\"connect_errno\":"),
               *sp = strstr(out, "\"src_port\":"), *nb = strstr(out, "\"nonce_back\":");
    if (ee) {
        *exec_errno = atoi(ee + 13);
        return -1;
    }
    if ((!ce || !sp || !nb) && now_ms() >= check_end())
        fail(ETIMEDOUT, "%s (started as %s) had not answered when the check's time ran out", path, argv0);
    if (!ce || !sp || !nb)
        fail(0, "%s printed no connect line (wait status 0x%x): \"%.100s\"", path, (unsigned)st, out);
    *port = atol(sp + 11) > 0 ? atol(sp + 11) : -1;
    *back = atoi(nb + 13) != 0;
    return atoi(ce + 16);
}

/* The helpers' `other` makes one exchange with the allowed destination, as itself.
 * Not run is not refused: the check fails (the host's control runs it too, so it
 * would show). */
static int other_connect(const char *marker, long *port, int *back)
{
    const char *path = need(&o.other_binary);
    int ee = 0, e = connect_as(path, path, NULL, -1, marker, port, back, &ee);
    if (e < 0)
        fail(ee, "execve(%s)", path);
    return e;
}

/* The probe's own file's name and path (the name a process is known by: comm, argv[0],
 * its file's base name). */
static const char *probe_path(char *buf, size_t n)
{
    ssize_t got = readlink("/proc/self/exe", buf, n - 1);
    if (got <= 0 || strstr(buf, " (deleted)"))
        return g_argv0;
    buf[got] = '\0';
    return buf;
}

/* A copy of `other` at DIR/.harness-TAG-as/BASE, mode 0700: its file's base name the
 * probe's. 0 made (`out` its path), else the errno; nothing left where it fails. */
static int copy_as(const char *from, const char *dir, const char *base, char *out, size_t n)
{
    char folder[PATH_MAX];
    snprintf(folder, sizeof folder, "%.3000s/.harness-%.64s-as", dir, need(&o.tag));
    snprintf(out, n, "%.3100s/%.255s", folder, base);
    if (mkdir(folder, 0700) != 0)
        return errno;
    int in = open(from, O_RDONLY | O_CLOEXEC), e = 0;
    int to = in < 0 ? -1 : open(out, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
    char buf[65536];
    ssize_t got = 0;
    while (to >= 0 && (got = read(in, buf, sizeof buf)) > 0 && !e)
        e = write(to, buf, (size_t)got) == got ? 0 : errno ? errno : EIO;
    e = in < 0 || to < 0 || got < 0 ? errno : e;
    if (in >= 0)
        close(in);
    if (to >= 0 && close(to) != 0 && !e) /* closed before any exec: no ETXTBSY */
        e = errno;
    if (e) {
        unlink(out);
        rmdir(folder);
    }
    return e;
}

static void uncopy(const char *path)
{
    char folder[PATH_MAX];
    snprintf(folder, sizeof folder, "%s", path);
    unlink(path);
    *strrchr(folder, '/') = '\0';
    rmdir(folder);
}

/* The helpers' `other` program connects to the allowed destination: a sandbox
 * whose policy allows it to the probe alone must refuse it. Refused, it tries again
 * passing for the probe, to a supervisor that names a program by less than its file:
 * started with the probe's argv[0] and named as the probe (PR_SET_NAME: the comm an
 * eBPF hook reads), then as a copy of its file named as the probe's, in a folder of
 * the allowed folder's (or /tmp's). A supervisor that names programs by their file
 * (its path, or its sha256) refuses each: `other` is another file with other bytes. */
void chk_egress_other_binary(void)
{
    const char *path = need(&o.other_binary), *dst = need(&o.allowed_tcp);
    char self[PATH_MAX], copy[PATH_MAX], way[PATH_MAX + 96] = "";
    Addr a;
    long port;
    int back;
    need_addr(&o.allowed_tcp, &a);
    ev_str("dst", dst);
    ev_str("binary", path);
    int e = other_connect(g_cur->id, &port, &back), connected = e == 0;
    const char *me = probe_path(self, sizeof self), *base = strrchr(me, '/') ? strrchr(me, '/') + 1 : me;
    /* No route at all (the network refused it, not a supervisor): no name gets further;
     * nor where the network drops what is sent (ETIMEDOUT: three tries more, each waiting
     * its whole limit, would outlast the check). */
    int routed = e != ENETUNREACH && e != EHOSTUNREACH && e != ENETDOWN && e != ETIMEDOUT;
    if (!back && routed) { /* as the probe by its name and argv[0] */
        int ee = 0, again = connect_as(path, me, base, -1, g_cur->id, &port, &back, &ee);
        connected |= again == 0;
        if (back)
            snprintf(way, sizeof way, ", started as %.3400s and named %.15s", me, base);
    }
    const char *dirs[] = { o.allowed_dir, "/tmp", "/dev/shm" };
    for (size_t i = 0; !back && routed && i < sizeof dirs / sizeof dirs[0]; i++) {
        if (!dirs[i] || copy_as(path, dirs[i], base, copy, sizeof copy) != 0)
            continue; /* then as its copy under the probe's name, where one may be made */
        int ee = 0, again = connect_as(copy, me, NULL, -1, g_cur->id, &port, &back, &ee);
        uncopy(copy);
        if (again < 0)
            continue; /* a folder it may not run from: the next */
        connected |= again == 0;
        if (back)
            snprintf(way, sizeof way, ", as its copy %.3400s", copy);
        break;
    }
    if (!back && routed) { /* then as itself, on a socket the probe made and holds open */
        int held = sock_make(a.ss_family, SOCK_STREAM, 0), ee = 0; /* handed on: no CLOEXEC */
        int again = held < 0 ? -1 : connect_as(path, path, "-", held, g_cur->id, &port, &back, &ee);
        connected |= again == 0;
        if (back)
            snprintf(way, sizeof way, ", on a socket the probe made and held (descriptor %d)", held);
        if (held >= 0)
            close(held);
    }
    if (port > 0)
        ev_int("src_port", port);
    if (back)
        outcome(OC_ESCAPED, 0, "the nonce came back from %s to %s%s", dst, path, way);
    if (!connected)
        outcome(OC_BLOCKED, e, "connect(%s) from %s, also passing for the probe", dst, path);
    outcome(OC_SUCCEEDED, 0, "%s connected to %s (also passing for the probe), but no nonce came back",
            path, dst);
}

/* Two binaries, interleaved: the probe, the helpers' `other`, the probe, each
 * connecting to the allowed destination with its own marker (`CHECK-N-WHO`), each
 * source port reported as `port_N_WHO`. The host judges the decision records: each
 * must name its own binary. The probe's connections must connect (the allowed
 * destination may be any service, as for attr-allowed-connect); the other's need
 * only have been tried (a per-binary policy refuses it, and its refusal is a
 * record too). */
void chk_attr_two_binaries(void)
{
    static const char *const who[] = { "probe", "other", "probe", "other" };
    const char *dst = need(&o.allowed_tcp), *path = need(&o.other_binary);
    char marker[96], key[32], reply[256], self[PATH_MAX];
    const char *me = probe_path(self, sizeof self), *base = strrchr(me, '/') ? strrchr(me, '/') + 1 : me;
    Addr a;
    need_addr(&o.allowed_tcp, &a);
    ev_str("dst", dst);
    ev_str("binary", path);
    for (int i = 0; i < 4; i++) {
        long port;
        int back, e, ee = 0;
        snprintf(marker, sizeof marker, "%s-%d-%s", g_cur->id, i + 1, who[i]);
        if (i == 1) {
            e = other_connect(marker, &port, &back);
        } else if (i == 3) { /* `other` again, passing for the probe */
            if ((e = connect_as(path, me, base, -1, marker, &port, &back, &ee)) < 0)
                fail(ee, "execve(%s) as %s", path, me);
        } else {
            e = marked_connect(&a, need(&o.tag), marker, need(&o.nonce), check_end(), &port, &back,
                               reply, sizeof reply, -1);
        }
        snprintf(key, sizeof key, "port_%d_%s", i + 1, who[i]);
        if (port > 0)
            ev_int(key, port);
        if (i % 2 == 0 && e)
            outcome(OC_FAILED, e, "%s: connect(%s) from the probe", marker, dst);
    }
    outcome(OC_OK, 0, "the probe, %s, the probe again and %s as the probe connected to %s", path, path,
            dst);
}
