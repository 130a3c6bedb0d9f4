/* Scenario "attribution": an allowed connection, whose decision record (kept by
 * the sandbox's supervisor) must name the binary that made it. And the allowed
 * destination per binary (egress-confinement, judged where the sandbox's policy
 * names the binaries that may reach it): the probe, a binary the policy allows,
 * reaches it; another program (the helpers' `other`, the probe with other bytes
 * appended: another name and another sha256) must not. */

#include "probe.h"

void chk_attr_allowed_connect(void) { tcp_to(&o.allowed_tcp); }

void chk_egress_policy_binary(void) { tcp_to(&o.allowed_tcp); }

/* `probe connect TAG CHECK-ID IP:PORT NONCE`: one exchange with the canary, as
 * `probe run` would make it, printed as one line for the program that ran it. */
void connect_main(int argc, char **argv)
{
    Addr a;
    Buf b = { .n = 0 };
    char msg[256], reply[256] = "";
    double end = now_ms() + g_check_timeout_ms;
    int e = 0;
    long port = -1;
    if (argc != 6 || parse_addr(argv[4], &a) != 0)
        fatal(2, "usage: probe connect TAG CHECK-ID IP:PORT NONCE");
    int fd = connect_to(&a, SOCK_STREAM, end);
    if (fd < 0) {
        e = errno ? errno : EIO;
    } else {
        Addr me;
        socklen_t ml = sizeof me;
        if (getsockname(fd, (struct sockaddr *)&me, &ml) == 0)
            port = addr_port(&me);
        int n = snprintf(msg, sizeof msg, "HARNESS %s %s\n", argv[2], argv[3]);
        size_t got = 0;
        if (send_all(fd, msg, (size_t)n, end) == 0)
            got = recv_until(fd, reply, sizeof reply - 1, 1, end);
        reply[got] = '\0';
        reply[strcspn(reply, "\r\n")] = '\0';
        close(fd);
    }
    snprintf(msg, sizeof msg, "NONCE %s", argv[5]);
    bput(&b, "{\"type\":\"connect\",\"connect_errno\":%d,\"src_port\":%ld,\"nonce_back\":%d,", e, port,
         fd >= 0 && !strcmp(reply, msg));
    bkv(&b, "reply", reply);
    bput(&b, "}");
    emit(&b);
    exit(0);
}

/* The helpers' `other` program connects to the allowed destination: a sandbox
 * whose policy allows it to the probe alone must refuse it. */
void chk_egress_other_binary(void)
{
    const char *path = need(&o.other_binary), *dst = need(&o.allowed_tcp);
    char out[1024];
    int p[2], st;
    Addr a;
    need_addr(&o.allowed_tcp, &a);
    ev_str("dst", dst);
    ev_str("binary", path);
    if (pipe2(p, O_CLOEXEC) != 0)
        fail(errno, "pipe");
    if ((g_target = fork()) < 0)
        fail(errno, "fork");
    if (g_target == 0) {
        char *const argv[] = { (char *)path, "connect", (char *)need(&o.tag), (char *)g_cur->id,
                               (char *)dst, (char *)need(&o.nonce), NULL };
        dup2(p[1], STDOUT_FILENO);
        execv(path, argv);
        dprintf(STDOUT_FILENO, "{\"exec_errno\":%d}\n", errno);
        _exit(127);
    }
    close(p[1]);
    size_t n = recv_until(p[0], out, sizeof out - 1, 1, check_end());
    out[n] = '\0';
    if (errno == ETIMEDOUT)
        kill(g_target, SIGKILL);
    while (waitpid(g_target, &st, 0) < 0)
        if (errno != EINTR)
            fail(errno, "waitpid(other)");
    g_target = 0;
    const char *ee = strstr(out, "\"exec_errno\":"), *ce = strstr(out, "\"connect_errno\":"),
               *sp = strstr(out, "\"src_port\":"), *nb = strstr(out, "\"nonce_back\":");
    /* Not run is not refused: the host's control runs it too, so it would show. */
    if (ee)
        fail(atoi(ee + 13), "execve(%s)", path);
    if (!ce || !sp || !nb)
        fail(0, "%s printed no connect line (wait status 0x%x): \"%.100s\"", path, (unsigned)st, out);
    if (atoi(sp + 11) > 0)
        ev_int("src_port", atoi(sp + 11));
    if (atoi(ce + 16))
        outcome("blocked", atoi(ce + 16), "connect(%s) from %s", dst, path);
    if (atoi(nb + 13))
        outcome("escaped", 0, "the nonce came back from %s to %s", dst, path);
    outcome("succeeded", 0, "%s connected to %s, but no nonce came back", path, dst);
}
