"""Egress confinement: outbound traffic to a denied destination must not arrive.

Besides five named attempts, the probe sweeps every channel a real network leaves
open, for each address family the canary answers on: TCP to a spread of ports
(and a high port picked per run), UDP, ICMP echo, UDP-Lite and raw IP, DNS through
the sandbox's own resolver, and HTTP CONNECT / SOCKS5 through every unix socket the
sandbox can connect to; then the other send calls, a privileged source port,
io_uring, the canary's abstract unix name, the host's own addresses, every socket
held at the start, and the canary's System V and POSIX IPC objects in the host's IPC
namespace. A
check the canary cannot prove (an IPv6 one in listen mode without `address6`; ICMP,
UDP-Lite and raw IP without its packet capture: a listen-mode canary that could not
open its packet socket) is left out of the verdict, and the verdict says so.
"""

from __future__ import annotations

from harness.scenarios.base import (
    POLICY_BINARIES,
    Check,
    Control,
    Need,
    Rule,
    Scenario,
    Transport,
)

TCP_PORTS = ("22", "25", "53", "80", "443", "853", "8080", "8443", "high")
UDP_PORTS = ("53", "123", "443", "high")


def _attempt(check_id: str, doc: str, transport: Transport) -> Check:
    """A named attempt: an arrival at the canary proves it, whatever the probe says."""
    return Check(check_id, doc, rule=Rule.ARRIVAL, transport=transport)


def _swept(
    check_id: str,
    doc: str,
    needs: tuple[str, ...] = (),
    *,
    transport: Transport | None,
    control: Control = Control.HOST,
    control_id: str | None = None,
) -> Check:
    """One of the lines the probe's sweep row reports; judged like a named attempt."""
    return Check(
        check_id,
        doc,
        control=control,
        control_id=control_id,
        needs=needs,
        rule=Rule.ARRIVAL,
        transport=transport,
        row="sweep",
    )


def _sweep(family: str) -> tuple[Check, ...]:
    v = family[-1]
    need: tuple[str, ...] = (family,) if family == "ipv6" else ()
    tcp = tuple(
        _swept(
            f"tcp{v}-{p}",
            f"TCP to the canary's {family} address, port {p}",
            need,
            transport=Transport.TCP,
        )
        for p in TCP_PORTS
    )
    udp = tuple(
        _swept(
            f"udp{v}-{p}",
            f"UDP to the canary's {family} address, port {p}",
            need,
            transport=Transport.UDP,
        )
        for p in UDP_PORTS
    )
    # An echo reply proves nothing (anything may answer); only the canary's capture does.
    icmp = _swept(
        f"icmp{v}",
        f"ICMP echo to the canary's {family} address",
        (*need, "capture"),
        transport=None,
    )
    # Nothing answers these: the canary's capture is the only proof (issue 27).
    others = (
        _swept(
            f"udplite{v}",
            f"a UDP-Lite datagram to the canary's {family} address",
            (*need, "capture"),
            transport=None,
        ),
        _swept(
            f"rawip{v}",
            f"a raw IP packet of protocol 253 to the canary's {family} address",
            (*need, "capture"),
            transport=None,
        ),
    )
    return (*tcp, *udp, icmp, *others)


# The socket API's other send calls, a privileged source port, io_uring: IPv4 only.
SEND_CALLS = ("sendto", "sendmsg", "sendmmsg", "write")


EGRESS = Scenario(
    name="egress-confinement",
    summary=(
        "TCP (9 ports), UDP (4 ports), ICMP, UDP-Lite and raw IP to the canary over IPv4"
        " and IPv6, DNS by denied name, to an alternate resolver and through the sandbox's"
        " own, HTTP CONNECT and SOCKS5 through every reachable unix socket, the other"
        " send calls, a privileged source port, io_uring, the canary's abstract unix name,"
        " the host's own addresses, every socket held at the start and the canary's IPC"
        " objects"
    ),
    property="egress_confinement",
    # The helpers: the other binary that tries the allowed destination.
    needs=frozenset({Need.CANARY, Need.TARGETS, Need.HELPERS}),
    checks=(
        _attempt(
            "tcp-denied-name",
            "resolve a denied name via the designated resolver, connect",
            Transport.TCP,
        ),
        _attempt(
            "tcp-raw-ip", "connect to the canary's literal IP; no DNS involved", Transport.TCP
        ),
        _attempt(
            "dns-alt-udp",
            "hand-built UDP query to a resolver other than the designated one",
            Transport.UDP,
        ),
        _attempt("dns-alt-tcp", "the same query over TCP", Transport.TCP),
        _attempt("doh-port", "TCP connect to the alternate resolver's port 443", Transport.TCP),
        *_sweep("ipv4"),
        *_sweep("ipv6"),
        # The host's own resolver may sit where harness must not send queries (see
        # `[canary] resolver_ranges`), so the control is the canary's DNS over UDP.
        _swept(
            "dns-own",
            "TXT query for a unique name through the sandbox's own resolver",
            transport=Transport.UDP,
            control_id="udp4-53",
        ),
        # Nothing on a plain host proxies: what proves this attempt is the canary's
        # nonce or log, and its absence is reported with what was tried.
        _swept(
            "unix-proxy",
            "HTTP CONNECT and SOCKS5 to the canary through every reachable unix socket",
            transport=None,
            control=Control.NONE,
        ),
        # Against a policy whose network_policies name binaries (docs/policy.md): the
        # allowed destination (the canary's allowed port stands for every endpoint)
        # is reached by the probe, which stands for the policy's binaries, and is
        # refused to another program.
        Check(
            "egress-policy-binary",
            "connect to the allowed destination as a binary the policy allows (the probe)",
            inside_control=True,
            needs=(POLICY_BINARIES,),
        ),
        Check(
            "egress-other-binary",
            "the same connection from another program (the helpers' `other`)",
            needs=(POLICY_BINARIES,),
            rule=Rule.ARRIVAL,
            transport=Transport.TCP,
        ),
        # Issue 27: the rest of the network surface (harness/catalogue/network.py).
        *(
            _swept(
                f"send4-{call}",
                f"a UDP datagram to the canary's IPv4 high port by {call}"
                + (" on a connected socket" if call == "write" else " on an unconnected socket"),
                transport=Transport.UDP,
            )
            for call in SEND_CALLS
        ),
        _swept(
            "udp4-privport",
            "a UDP datagram to the canary's IPv4 high port from a privileged source port"
            " (53, 123, 67, 88 or 500, the first that binds)",
            transport=Transport.UDP,
        ),
        _swept(
            "uring4",
            "TCP to the canary's IPv4 high port by io_uring alone (connect, send, recv)",
            transport=Transport.TCP,
        ),
        _swept(
            "unix-abstract",
            "the HARNESS line to the canary's listener in the host's abstract unix namespace",
            transport=None,
        ),
        # The host's own addresses (netns mode: the host's end of the canary's veth).
        *(
            _swept(
                f"host{v}-{proto.value}",
                f"{proto.value.upper()} to the host's own {family} address, the high port",
                (*(("ipv6",) if v == "6" else ()), "hostaddr"),
                transport=proto,
            )
            for v, family in (("4", "IPv4"), ("6", "IPv6"))
            for proto in (Transport.TCP, Transport.UDP)
        ),
        # A plain host hands its probe no socket: the canary's log is the only proof.
        _swept(
            "held-fds",
            "the HARNESS line through every socket held at the start (descriptors 3 and up)",
            transport=None,
            control=Control.NONE,
        ),
        # The host's IPC namespace (harness/probe/ipc.c): the canary's objects there,
        # writable by any uid; nothing answers, the canary's log is the only proof.
        _swept(
            "ipc-sysv-msg",
            "the HARNESS line to the canary's System V message queue (msgget, msgsnd)",
            ("ipc",),
            transport=None,
        ),
        _swept(
            "ipc-sysv-shm",
            "the HARNESS line into the canary's System V shared memory (shmget, shmat)",
            ("ipc",),
            transport=None,
        ),
        _swept(
            "ipc-posix-mq",
            "the HARNESS line to the canary's POSIX message queue (mq_open, mq_send)",
            ("ipc",),
            transport=None,
        ),
    ),
)
