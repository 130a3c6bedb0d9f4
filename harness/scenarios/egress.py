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


# What the probe does for the sweep's families of lines, one description each
# (docs/probe-protocol.md shows them as one row: `tcp4-P`, `tcp6-P`).
TCP_HOW = (
    "Connect, then the HARNESS/NONCE exchange (port 53: a TXT query over TCP; `write` where a "
    "filter refuses `send`, on this and every connected socket of the sweep; where `socket` "
    "itself is refused, on every line of the sweep that makes one, it is made again with each "
    "argument's upper 32 bits set, which the kernel ignores and a filter comparing all 64 bits "
    "matches to no rule: the detail names it). Escaped on the nonce; `succeeded` if connected "
    "without it."
)

UDP_HOW = (
    "One datagram `HARNESS <tag> <id>\\n` (port 53: a TXT query); escaped if `NONCE <nonce>` "
    "(or the TXT nonce) comes back. No answer: blocked, ETIMEDOUT."
)

ICMP_HOW = (
    "An echo request with `HARNESS <tag> <id>` as payload, on a datagram ICMP socket or else a "
    "raw one; neither: blocked with the errno. A reply is only `succeeded`: the canary's "
    "capture is the proof."
)

UDPLITE_HOW = (
    "A UDP-Lite datagram `HARNESS <tag> <id>` (sent by `sendto`) to the high port. Its "
    "socket is made every way `socket(2)` may be asked (sockways.c), and where each is "
    "refused as a filter refuses (EPERM, EACCES), by the i386 entry's `socket` (359) or "
    "`socketcall` (102), then io_uring's IORING_OP_SOCKET, the way named (`its socket made "
    "by ...`): no other line aims at these protocols. Nothing answers: `succeeded` once "
    "sent; only the canary's capture proves a crossing."
)

RAWIP_HOW = (
    "A raw IP packet of protocol 253 (for experiments) carrying `HARNESS <tag> <id>`; needs "
    "CAP_NET_RAW (else blocked, EPERM). Its socket made, and judged, like UDP-Lite's."
)

SEND_HOW = (
    "The HARNESS datagram to the IPv4 high port by `sendto`, `sendmsg` or `sendmmsg` on an "
    "unconnected socket, or on a connected one by `write`, `writev`, `pwritev2` (at the current "
    "position, offset -1), `sendfile` (from a memfd holding the line) or `splice` (from a pipe "
    "holding it); escaped if the nonce comes back."
)

FASTOPEN_HOW = (
    "TCP to the IPv4 high port with no `connect`: the first `sendto`, `sendmsg` or `sendmmsg` of "
    "the HARNESS line carries `MSG_FASTOPEN` and the canary's address, and so makes the "
    "connection (the line rides on the SYN where the kernel holds a cookie, else it is sent "
    "once the handshake is done); `tfo4-connect` sets `TCP_FASTOPEN_CONNECT` and then "
    "connects. Escaped on the nonce; refused (the call, or the option): blocked with the errno "
    "(EOPNOTSUPP where the client side of `net.ipv4.tcp_fastopen` is off). Its control is "
    "`tcp4-high`, the same destination."
)

HOST_HOW = (
    "The HARNESS exchange (TCP line, or datagram) with `--host4`/`--host6` at the high port: "
    "the host's own address (netns mode: the host's end of the canary's veth, where the canary "
    "listens before it enters its namespace). Escaped on the nonce."
)

META_HOW = (
    "The HARNESS exchange (TCP line, or datagram) with `--meta4`/`--meta6` at the high port: "
    "a cloud's metadata address (169.254.169.254, fd00:ec2::254), where the netns canary "
    "answers too, on the run's high port alone (a host rule for that port routes it to the "
    "canary; a real metadata service's port is untouched). A sandbox that refuses the private "
    "ranges and forgets link-local leaves the host's cloud credentials in reach. Escaped on "
    "the nonce; the control (the host) shows the route is there."
)

ELSEWHERE_HOW = (
    "The HARNESS exchange (TCP line, or datagram), all at once and from one source port a "
    "line (where `bind(2)` is refused as a filter refuses, bound by the i386 entry's `bind` or "
    "io_uring's `IORING_OP_BIND`, and where each refuses too, each attempt from an ephemeral "
    "port of its own), with the canary's stand-ins: a random address of each range "
    "`[canary] elsewhere` "
    "names (`--elsewhere4`/`--elsewhere6`, comma lists; by default the private, shared, "
    "link-local and benchmarking ranges, outside the canary's own; a fleet adds a global "
    "address), at the high port (`elsewhere*`) and at the web's ports, 443 and 80 (`web*`), "
    "and the host's default "
    "gateways and resolvers where the matrix names them (`--elsewhere4-high`/"
    "`--elsewhere6-high`), at the high port alone (their real services keep their ports). "
    "The netns canary answers at each, on those ports alone (a host rule for each port "
    "routes it there; an address the host holds itself is left out). "
    "A sandbox that refuses harness's own ranges, or the private ones, "
    "and lets the rest out, or one of the web's ports alone, is seen. One line for all: "
    "escaped if "
    "any nonce came back (the detail names the address and port), else the outcome that "
    "leaves most doubt, with the attempts made."
)

PACKET_HOW = (
    "A packet socket of the probe's own (`socket(AF_PACKET, SOCK_RAW, 0)` with a link header "
    "it writes, else SOCK_DGRAM, else either kind for IPv4, else the oldest kind, SOCK_PACKET: "
    "CAP_NET_RAW over its network "
    "namespace; one for the line, its ARP asked on it too: each packet socket closed costs an "
    "RCU grace period; none where no route leaves loopback; each kind made by `socket`, else "
    "io_uring's "
    "`IORING_OP_SOCKET` (tried in a child first: a filter that kills on the ring kills that "
    "child), else the i386 entry's `socket` or `socketcall`, SOCK_PACKET also by "
    "`socket(AF_INET, SOCK_PACKET)`, which the kernel makes a packet socket; where no kind is "
    "made, an XDP socket per link in copy mode (`AF_XDP`, its transmit ring; it receives "
    "nothing, so a hop's link address is learnt by an echo request in a broadcast frame, "
    "which the hop answers after asking this namespace by ARP); without CAP_NET_RAW in its "
    "effective set, `socket` alone) sends the HARNESS line in a UDP datagram to "
    "the canary's IPv4 high port, in an IPv4 packet the probe builds (from its own address on "
    "the link, or where it holds none there from the hop's neighbour on either side, made "
    "up, the hop asked by an ARP probe from 0.0.0.0), to each next hop in view by its link "
    "address (the kernel's neighbour table, "
    "else an ARP request, a second at most): gateways, neighbours, host routes and the "
    "addresses of small attached subnets, and on a link where none of those is found, its "
    "wider subnet's first and last host addresses (a router's usual places), at most 8; "
    "where the probe may stand in the host's "
    "network namespace, only the hop of the kernel's own route to the canary. No IP socket "
    "and no route of the sandbox's is needed: a filter on IP sockets, or a route that refuses "
    "the canary, leaves it open wherever the workload keeps CAP_NET_RAW. Each frame (and "
    "ARP request) goes by `sendto`, else `sendmsg`, `sendmmsg`, io_uring's "
    "`IORING_OP_SENDMSG` (the ring tried in a child first), else, on a SOCK_RAW socket, "
    "`write` once bound to the link; the attempt names a way other than `socket` and "
    "`sendto` (`made by IORING_OP_SOCKET`, `sent by write after bind`, `from 10.0.0.2, made "
    "up`), and so does the verdict's reason. "
    "One line for all; "
    "sent is `succeeded` (nothing answers a packet socket): the canary's log of the marked "
    "datagram decides. Refused (`socket(AF_PACKET)`), or no hop answering: blocked; more "
    "hops than are tried: an error unless one was sent. Netns mode only (the host control's "
    "frame goes to the canary's veth; a listen canary on the host's own address has no link "
    "a frame could reach it by)."
)

PACKET6_HOW = (
    "`packet4` for IPv6: a packet socket of the probe's own (`ETH_P_IPV6`, each kind and "
    "each way as `packet4`'s) sends the HARNESS line in a UDP datagram (its checksum over "
    "the pseudo-header, as IPv6 requires) to the canary's IPv6 high port, in an IPv6 packet "
    "the probe builds from its own global address on the link, or where it holds none (a "
    "link-local or tentative one alone) from one it makes up (a link-local source is not "
    "forwarded; the hop is asked from its link-local address, or from `::` as a duplicate "
    "address probe), to each IPv6 next hop in view by its link address, asked by a neighbour "
    "solicitation of its own (a second at most): every gateway of the IPv6 routing table, "
    "and the canary itself where the kernel's route to it is on a link; at most 8. Where "
    "the probe may stand in the host's network namespace, only the canary on its link. A "
    "link with IPv6 alone, behind a filter on IP sockets, is seen. Judged as `packet4`; "
    "netns mode, where the canary has IPv6."
)

IPC_HOW = (
    "After the rest of the sweep, the HARNESS line to the canary's IPC objects in this IPC "
    "namespace: `msgget(KEY)` and `msgsnd`; `shmget(KEY)`, `shmat`, and a free slot of the "
    "segment claimed (an atomic compare-and-swap, so concurrent cells never overwrite each "
    "other) and filled; `mq_open(NAME)` and `mq_send`, and where that finds no queue, an "
    "`open` of NAME on every mqueue mount in view (the host's `/dev/mqueue` bound in shows the "
    "host's queues whatever the sandbox's IPC namespace) and `mq_timedsend` on that "
    "descriptor. Where one of x86_64's calls is refused as a filter refuses (EPERM, EACCES, "
    "ENOSYS), the same through the i386 entry (`int $0x80`), each way in a child: System V's "
    "own calls (`msgget` 399 and `msgsnd` 400, `shmget` 395 and `shmat` 397), then the `ipc` "
    "multiplexer (117: MSGGET and MSGSND, SHMGET and SHMAT); for the POSIX queue `mq_open` "
    "(277, unless a descriptor is already open) and `mq_timedsend` (279), then "
    "`mq_timedsend_time64` (418); the way that got through named (`sent by ...`). Not found "
    "(ENOENT: an IPC namespace of the sandbox's own) or refused: "
    "blocked with the errno. Nothing answers: `succeeded` once "
    "written; only the canary's log (`ipc` events) proves a crossing."
)


def _attempt(check_id: str, doc: str, transport: Transport, *, how: str) -> Check:
    """A named attempt: an arrival at the canary proves it, whatever the probe says."""
    return Check(check_id, doc, rule=Rule.ARRIVAL, transport=transport, how=how)


def _swept(
    check_id: str,
    doc: str,
    needs: tuple[str, ...] = (),
    *,
    transport: Transport | None,
    control: Control = Control.HOST,
    control_id: str | None = None,
    how: str,
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
        how=how,
        section="sweep",
    )


def _per_family(
    prefix: str, what: str, needs4: tuple[str, ...], needs6: tuple[str, ...], how: str
) -> tuple[Check, ...]:
    """A sweep line for each family and transport (`{prefix}4-tcp` ... `{prefix}6-udp`),
    aimed at `what` (its `{family}` the family's name)."""
    return tuple(
        _swept(
            f"{prefix}{v}-{proto.value}",
            f"{proto.value.upper()} to {what.format(family=family)}",
            needs6 if v == "6" else needs4,
            transport=proto,
            how=how,
        )
        for v, family in (("4", "IPv4"), ("6", "IPv6"))
        for proto in (Transport.TCP, Transport.UDP)
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
            how=TCP_HOW,
        )
        for p in TCP_PORTS
    )
    udp = tuple(
        _swept(
            f"udp{v}-{p}",
            f"UDP to the canary's {family} address, port {p}",
            need,
            transport=Transport.UDP,
            how=UDP_HOW,
        )
        for p in UDP_PORTS
    )
    # An echo reply proves nothing (anything may answer); only the canary's capture does.
    icmp = _swept(
        f"icmp{v}",
        f"ICMP echo to the canary's {family} address",
        (*need, "capture"),
        transport=None,
        how=ICMP_HOW,
    )
    # Nothing answers these: the canary's capture is the only proof (issue 27).
    others = (
        _swept(
            f"udplite{v}",
            f"a UDP-Lite datagram to the canary's {family} address",
            (*need, "capture"),
            transport=None,
            how=UDPLITE_HOW,
        ),
        _swept(
            f"rawip{v}",
            f"a raw IP packet of protocol 253 to the canary's {family} address",
            (*need, "capture"),
            transport=None,
            how=RAWIP_HOW,
        ),
    )
    return (*tcp, *udp, icmp, *others)


def _ways(v: str) -> tuple[Check, ...]:
    """The other ways to the canary's high port over one family (v: "4" or "6"): each
    send call, a privileged source port, TCP made without connect(2), io_uring on
    each kind of socket the ring makes. A filter that closes the others leaves the
    one; a network that carries only IPv6 leaves it there."""
    family = f"IPv{v}"
    need: tuple[str, ...] = ("ipv6",) if v == "6" else ()
    tcp_control, udp_control = f"tcp{v}-high", f"udp{v}-high"
    sends = tuple(
        _swept(
            f"send{v}-{call}",
            f"a UDP datagram to the canary's {family} high port by {call}"
            + (
                " on a connected socket" if call in CONNECTED_CALLS else " on an unconnected socket"
            ),
            need,
            transport=Transport.UDP,
            how=SEND_HOW,
        )
        for call in SEND_CALLS
    )
    # Issue 38: TCP made without connect(2), which a filter or an LSM hook on
    # connect alone never sees.
    fastopen = tuple(
        _swept(
            f"tfo{v}-{call}",
            f"TCP to the canary's {family} high port made by {call} with MSG_FASTOPEN, no connect",
            need,
            transport=Transport.TCP,
            control_id=tcp_control,
            how=FASTOPEN_HOW,
        )
        for call in ("sendto", "sendmsg", "sendmmsg")
    )
    return (
        *sends,
        *fastopen,
        _swept(
            f"tfo{v}-connect",
            f"TCP to the canary's {family} high port with TCP_FASTOPEN_CONNECT set before connect",
            need,
            transport=Transport.TCP,
            control_id=tcp_control,
            how=FASTOPEN_HOW,
        ),
        _swept(
            f"mptcp{v}",
            f"TCP to the canary's {family} high port through a Multipath TCP socket"
            " (IPPROTO_MPTCP)",
            need,
            transport=Transport.TCP,
            control_id=tcp_control,
            how=(
                "The HARNESS exchange with the high port through "
                "`socket(AF_INET or AF_INET6, SOCK_STREAM, IPPROTO_MPTCP)`: a Multipath TCP "
                "socket speaks plain TCP to a peer without MPTCP (the canary), and Landlock's "
                "TCP rights do not cover it. Escaped on the nonce; no such socket (a kernel "
                "without MPTCP, `net.mptcp.enabled` 0, gVisor): blocked with the errno. Its "
                f"control is `{tcp_control}`."
            ),
        ),
        _swept(
            f"udp{v}-privport",
            f"a UDP datagram to the canary's {family} high port from a privileged source port"
            " (53, 123, 67, 88 or 500, the first that binds)",
            need,
            transport=Transport.UDP,
            how=(
                "The same from a privileged source port: the first of 53, 123, 67, 88, 500 that "
                "binds (taken ports are skipped); none binds: blocked with the errno (EACCES "
                "without CAP_NET_BIND_SERVICE). Where `bind(2)` is refused as a filter refuses "
                '(`EPERM`, `EACCES`, `ENOSYS`: a filter of "no servers" keeps every source '
                "port ephemeral), the port is bound by the i386 entry's `bind` (361), then its "
                "`socketcall`, then io_uring's `IORING_OP_BIND` (6.11+), the way named after "
                "the destination; a way refused too is not asked again."
            ),
        ),
        _swept(
            f"tcp{v}-sport",
            f"TCP to the canary's {family} high port from each source port servers listen at"
            " (22, 53, 80, 443, 8080, 8443)",
            need,
            transport=Transport.TCP,
            control_id=tcp_control,
            how=(
                "The HARNESS exchange with the high port once from each of source ports 22, "
                "53, 80, 443, 8080 and 8443, each its own connection, one line for them all: a "
                "stateless rule written for a server's replies (`tcp sport 8080 accept`, a "
                "policy route keyed on the source port) lets out any connection made from that "
                "port. Escaped if one brings the nonce back (the detail names its port); a port "
                "that does not bind (privileged without CAP_NET_BIND_SERVICE, or taken) is that "
                "attempt blocked with the errno; one whose `bind(2)` is refused as a filter "
                f"refuses is bound by the other entries, as `udp{v}-privport`'s. Its control is "
                f"`{tcp_control}`."
            ),
        ),
        _swept(
            f"uring{v}",
            f"TCP to the canary's {family} high port by io_uring alone (socket, connect, send,"
            " recv)",
            need,
            transport=Transport.TCP,
            how=(
                "TCP to the high port by io_uring alone: the socket by `IORING_OP_SOCKET` "
                "(socket(2) where the kernel has no such operation), then `IORING_OP_CONNECT`, "
                "`IORING_OP_SEND` and `IORING_OP_RECV` linked in one submission, in a child the "
                "sweep kills at the attempt's end; where x86_64's `io_uring_setup` is refused, "
                "the ring set up and entered through the i386 entry (`int $0x80`), the way named; "
                "blocked with the errno of the first operation that failed (`io_uring_setup` "
                "refused by both: ENOSYS, EPERM)."
            ),
        ),
        _swept(
            f"uring{v}-udp",
            f"UDP to the canary's {family} high port by io_uring alone, on a socket the ring makes",
            need,
            transport=Transport.UDP,
            control_id=udp_control,
            how=(
                f"The same exchange as `uring{v}` on a UDP socket made by the ring "
                "(`IORING_OP_SOCKET`: a filter on socket(2)'s arguments never sees it), "
                "connected and sent to by the ring; escaped on the nonce. Its control is "
                f"`{udp_control}`."
            ),
        ),
        _swept(
            f"uring{v}-mptcp",
            f"TCP to the canary's {family} high port by io_uring alone, on a Multipath TCP"
            " socket the ring makes",
            need,
            transport=Transport.TCP,
            control_id=tcp_control,
            how=(
                f"The same exchange as `uring{v}` on a Multipath TCP socket made by the ring "
                "(`IORING_OP_SOCKET` with `IPPROTO_MPTCP`), which Landlock's TCP rights do not "
                f"govern; escaped on the nonce. Its control is `{tcp_control}`."
            ),
        ),
        *_i386(v, need),
    )


def _i386(v: str, need: tuple[str, ...]) -> tuple[Check, ...]:
    """The exchanges through the i386 entry (issue 38: every way into a socket): TCP, UDP
    and TCP by Fast Open over one family, each call by both of its ways, and x86_64's
    calls on its socket where its own are refused."""
    family = f"IPv{v}"
    ways = (
        "in a child the sweep kills at the attempt's end, each call tried by its own number "
        "(`socket` 359, `connect` 362, `sendto` 369, `sendmsg` 370) and by the `socketcall` "
        "multiplexer (102), and the bytes by every call that sends them, each way in a child of "
        "its own (a filter that kills on one way does not hide the next); the detail names the "
        "ways that answered, or the last that was refused. Where the entry's connect or every "
        "call of its that sends is refused as a filter refuses, x86_64's `connect`, then "
        "`write`, `sendto`, `sendmsg` and `sendmmsg` on the socket the entry made (a filter that "
        "refuses x86_64's `socket` alone, and the entry's calls but its `socket`, leaves them), "
        "each named `(x86_64)`. Where the host has no such entry "
        "(aarch64, a kernel without IA32 emulation, gVisor): blocked with ENOSYS, nothing tried."
    )
    kinds = (
        ("tcp", "TCP", "`socket`, `connect`, then `write`, else (each where the one before was "
         "refused as a filter refuses) `writev`, `socketcall`'s `send`, `sendto`, `sendmsg`, "
         "`sendmmsg`, `pwritev2`, `sendfile64` and `sendfile` from a memfd, `splice` from a pipe, "
         "and `read`", Transport.TCP, f"tcp{v}-high"),
        ("udp", "UDP", "`socket`, then `sendto` or `sendmsg` with the address, and `read`",
         Transport.UDP, f"udp{v}-high"),
        ("tfo", "TCP made by Fast Open's first send (no connect)",
         "`socket`, then `sendto` or `sendmsg` with `MSG_FASTOPEN` and the address, and `read`",
         Transport.TCP, f"tcp{v}-high"),
    )  # fmt: skip
    return tuple(
        _swept(
            f"i386-{kind}{v}",
            f"{what} to the canary's {family} high port by a socket of the i386 entry's"
            " (int $0x80: each call by its own number or by socketcall; x86_64's where the"
            " entry's own are refused)",
            need,
            transport=transport,
            control_id=control,
            how=f"{what} to the {family} high port through the i386 entry (`int $0x80`): "
            f"{calls}, {ways} Escaped on the nonce. Its control is `{control}`.",
        )
        for kind, what, calls, transport, control in kinds
    )


# The socket API's other send calls, a privileged source port, io_uring: each family.
SEND_CALLS = ("sendto", "sendmsg", "sendmmsg", "write", "writev", "pwritev2", "sendfile", "splice")
CONNECTED_CALLS = ("write", "writev", "pwritev2", "sendfile", "splice")


EGRESS = Scenario(
    name="egress-confinement",
    summary=(
        "TCP (9 ports), UDP (4 ports), ICMP, UDP-Lite and raw IP to the canary over IPv4"
        " and IPv6, DNS by denied name, to an alternate resolver and through the sandbox's"
        " own, HTTP CONNECT, SOCKS5 and an absolute-URI GET through every reachable unix"
        " socket and TCP proxy, the other"
        " send calls, TCP without connect (Fast Open, Multipath TCP), a privileged source"
        " port, io_uring, the canary's abstract unix name,"
        " the host's own addresses, every socket held at the start and the canary's IPC"
        " objects"
    ),
    property="egress_confinement",
    # The helpers: the other binary that tries the allowed destination.
    # The host's unix listeners: the ones `unix-host` tries.
    needs=frozenset({Need.CANARY, Need.TARGETS, Need.HELPERS, Need.HOST_UNIX}),
    checks=(
        _attempt(
            "tcp-denied-name",
            "resolve a denied name via the designated resolver, connect",
            Transport.TCP,
            how=(
                "Resolve `t-<tag>.<denied-name>` (type A) with a hand-built UDP query to "
                "`--resolver`, then connect to the answer on the `--canary-tcp` port. If the "
                "lookup fails, the attempt is blocked (`detail` names the DNS step)."
            ),
        ),
        _attempt(
            "tcp-raw-ip",
            "connect to the canary's literal IP; no DNS involved",
            Transport.TCP,
            how="Connect to `--canary-tcp`. No DNS is involved.",
        ),
        _attempt(
            "dns-alt-udp",
            "hand-built UDP query to a resolver other than the designated one",
            Transport.UDP,
            how=(
                "Send a UDP query of type TXT for `dns-alt-udp.<tag>.<denied-name>` to "
                "`--alt-dns`. A TXT answer `nonce=<nonce>` means escaped. No answer means blocked "
                "with ETIMEDOUT, and the harness checks the canary log."
            ),
        ),
        _attempt(
            "dns-alt-tcp",
            "the same query over TCP",
            Transport.TCP,
            how="The same over TCP, with the 2-byte length prefix.",
        ),
        _attempt(
            "doh-port",
            "TCP connect to the alternate resolver's port 443",
            Transport.TCP,
            how=(
                "Connect to `--doh` (the alternate resolver's port 443) and exchange the HARNESS "
                "and NONCE lines."
            ),
        ),
        *_sweep("ipv4"),
        *_sweep("ipv6"),
        # The host's own resolver may sit where harness must not send queries (see
        # `[canary] resolver_ranges`), so the control is the canary's DNS over UDP.
        _swept(
            "dns-own",
            "TXT, A and AAAA queries for a unique name through the sandbox's own resolver",
            transport=Transport.UDP,
            control_id="udp4-53",
            how=(
                "TXT `dns-own.<tag>.<denied-name>` through each nameserver in `/etc/resolv.conf` "
                "(at most 3; none: 127.0.0.1, as libc does; a link-local IPv6 one with its scope, "
                "a link's name or number, as router-advertised DNS writes it: `fe80::1%eth0`; a "
                "nameserver the probe cannot parse makes the line an `error` that names it, never "
                "libc's default asked in its place), and through every UDP listener of "
                "the sandbox's own network namespace that `udp-relay` lists (a sidecar's "
                "forwarding resolver that resolv.conf does not name; never where the probe may "
                "stand in the host's namespace). A nameserver outside "
                "`--resolver-ranges` is asked only if a UDP `connect` (which sends nothing) fails; "
                "otherwise `error` (a listener of the sandbox's own namespace is always asked: "
                "the query is delivered there; so is a link-local nameserver where the probe "
                "stands in a network namespace not the host's: link-local is never routed, the "
                "query goes no further than the far end of one of the sandbox's own links, the "
                "host's end of a link its launcher made; where the probe may stand in the "
                "host's namespace, it is gated as any other). Then A and AAAA of the same name, "
                "each its own "
                'query: a stub that refuses TXT ("no tunnelling") still forwards those, and the '
                "canary's log of the name is the proof (their answers bring no nonce back: "
                "`succeeded`). One line for all: escaped, else succeeded, else error, else "
                "blocked."
            ),
        ),
        _swept(
            "dns-own-tcp",
            "the same query over TCP through the sandbox's own resolver",
            transport=Transport.TCP,
            control_id="tcp4-53",
            how=(
                "TXT, A and AAAA `dns-own-tcp.<tag>.<denied-name>` over TCP (the 2-byte length "
                "prefix) "
                "through each nameserver `dns-own` asks, gated the same way: a stub that "
                "forwards what it is asked over TCP is a way out where UDP is refused. One line "
                "for all, ranked like `dns-own`."
            ),
        ),
        # Nothing on a plain host proxies: what proves this attempt is the canary's
        # nonce or log, and its absence is reported with what was tried.
        _swept(
            "unix-proxy",
            "HTTP CONNECT, SOCKS5 and an absolute-URI GET to the canary through every reachable"
            " unix socket",
            transport=None,
            control=Control.NONE,
            how=(
                "Every listening stream socket in `/proc/net/unix` (abstract names too; only the "
                "sandbox's own network namespace's) and every socket file in its view, found "
                "breadth first (never through a symlink, `/proc` or `/sys`): `/run`, `/var/run`, "
                "`/tmp`, `/var/tmp` and `/dev/shm` first, then every mount point (a bind lands "
                "there, however deep), then the rest of `/` level by level. In a mount namespace "
                "other than the host's (`--host-ns`; without it, the host's where the probe is in"
                " the kernel's first PID namespace, as an unsandboxed process is) the"
                " walk is whole: 64 levels, 3,000,000 entries, 6 seconds (2 less than the sweep's"
                " time, `settings.check_timeout`, where that is shorter: a view of a whole host's"
                " tree on a loaded machine may need more); a path longer than `sun_path` is "
                "reached through "
                "an `O_PATH` descriptor of its folder (`/proc/self/fd/N/name`); a walk cut short,"
                " a folder it may pass through but not list, a path that cannot be reached, or "
                "more than 48 live sockets (a file nothing listens on is refused and not counted,"
                " nor one `unix-host` connects to) make the line an error unless one escaped or "
                "no unix socket can be made at all. In the host's own (the control, a co-located "
                "sandbox, whose host listeners `unix-host` names by path) it reads 20,000 entries"
                " to 8 levels and goes on. For each socket, an HTTP `CONNECT` (with the marker in"
                " an `X-Harness: HARNESS <tag> unix-proxy` header, so that a proxy of another "
                "dialect that forwards the request carries it), then, once that is done, a SOCKS5"
                " request to `--canary-tcp` (not where the HTTP request was relayed, nor where it"
                " met silence: a SOCKS5 server closes on it, and a relay that answers nothing "
                "would carry the bare greeting on, unmarked), or, where its greeting got no "
                "SOCKS5 answer (closed, or another first byte), a SOCKS4 request on a new "
                "connection (the marker as its user id: an older relay's dialect), then the "
                "HARNESS line; and at the "
                "same time, on a connection of its own, a forward proxy's request: `GET "
                "http://<canary>/harness/<tag>/<id> HTTP/1.1` with the `X-Harness` header (a "
                "proxy that refuses CONNECT but sends plain HTTP anywhere: the canary answers an "
                "HTTP request in HTTP, the nonce its body). A proxy "
                "that refuses the canary at that port (an HTTP status other than 200, or than "
                "2xx for the GET; a SOCKS5 or SOCKS4 refusal) is asked again, on a new "
                "connection, for the"
                " canary at the high port, then, in netns mode, at 443 and 80 (squid's stock rule"
                " lets CONNECT to 443 alone). One that asks for a login (HTTP 407, SOCKS5 `05 "
                "ff`) none is known for (a unix socket's never is; `tcp-proxy` sends the one an "
                "environment's proxy URL carries) makes the line an error unless one escaped: "
                "the workload may hold it elsewhere. Escaped if "
                "the nonce comes back anywhere in what the socket answers, at any step; otherwise"
                " blocked, with what was tried. Each socket is made as a workload may make one:"
                " where `socket(AF_UNIX)` is refused every way as a filter refuses (`EPERM`,"
                " `EACCES`), by the i386 entry's `socket` (359) or `socketcall` (102), then by"
                " io_uring's `IORING_OP_SOCKET` (a filter of x86_64's calls alone leaves them;"
                " the way named in the line: a proxy's socket in a granted folder is this line's"
                " alone, `unix-host` leaving it as one the workload may have made); and where"
                " `connect(2)` is refused, by the i386 entry's `connect`, then the ring's"
                " `IORING_OP_CONNECT`. No unix socket can be made at all where none of these"
                " makes one."
            ),
        ),
        # A sidecar relay on TCP: bound in the sandbox's own network namespace (its
        # loopback), its outgoing side elsewhere; and the proxies its environment names.
        _swept(
            "tcp-proxy",
            "HTTP CONNECT, SOCKS5 (or SOCKS4) and an absolute-URI GET to the canary through"
            " every TCP listener of the sandbox's own network namespace and every proxy its"
            " environment names",
            transport=None,
            control=Control.NONE,
            how=(
                "Every listening TCP socket of `/proc/net/tcp` and `/proc/net/tcp6` (or "
                "`/proc/self/net`'s, where a proc mounted `subset=pid` shows no `/proc/net`; the "
                "sandbox's own network namespace, every port; a wildcard address by loopback, "
                "tcp6's at `::1` and at 127.0.0.1, since it may be dual-stack), and every proxy "
                "named in an environment variable `*_proxy` (`http_proxy`, `https_proxy`, "
                "`all_proxy`, `socks_proxy`, `npm_config_proxy`, ..., either case; `no_proxy` "
                "aside): by address, `localhost` as 127.0.0.1, or a name the sandbox's own "
                "`/etc/hosts` gives (a name only DNS knows is not looked up); port 1080 where "
                "none is given; the login its URL carries (`user:password@`, percent-encoded) "
                "goes to that proxy alone, as a Basic `Proxy-Authorization` header on the HTTP "
                "requests and SOCKS5 username/password (RFC 1929) where the server asks for it,"
                " and is never printed nor logged (the canary withholds a "
                "`Proxy-Authorization` line a relay passes on); a 407 or SOCKS5 `05 ff` where no"
                " login is known is an error, not blocked; the reason names a login used (`with "
                "the credentials http_proxy names`); from a network namespace of its "
                "own, the host's TCP listeners bound beyond loopback that the host's listing "
                "names (`--host-tcp`, held by a process it can see, less its SSH daemons' and "
                "the canary's; at most 8, more make the line an error unless one escaped) at "
                "the host's end of the canary's link and at the first next hop of its family "
                "(one on `::` at the IPv4 ones too: dual-stack), one bound to a next hop's own "
                "address there, one bound to another address of the host's (another link's: "
                "its LAN's, a bridge's; not link-local) at that address (a host takes packets "
                "for any address it holds from whichever link they come, so a sandbox whose "
                "routes lead through it reaches them; where none does, the connect fails at "
                "once), and at its first two next hops of each family the ports proxies "
                "listen at by default (3128, 8080, 8888, 8118, 1080, 9050), an IPv6 next hop "
                "being a gateway of its IPv6 routes, a neighbour or an attached prefix's first "
                "address (a link's far end, as `[net::1]` on a link with an IPv6 ULA alone), a "
                "link-local one asked with its link (`fe80::1%eth0`); never at the canary's own "
                "addresses: an HTTP "
                "`CONNECT`, then a SOCKS5 request to `--canary-tcp` (SOCKS4 where the greeting "
                "got no SOCKS5 answer), then the HARNESS line, and "
                "an absolute-URI `GET`, as `unix-proxy`. Where the probe may stand in the "
                "host's network namespace (the "
                "control, a co-located sandbox) its listeners are the host's: every one is asked, "
                "on any of the host's addresses (a host egress proxy the sandbox may reach; a "
                "v4-mapped one, as a Java proxy binds 127.0.0.1, at its IPv4 address), "
                "less those the host's listing names as an SSH daemon's own (held by the daemon, "
                "not a port a session under it forwards, which is a relay) or a harness "
                "canary's (`--host-tcp-skip`: newer OpenSSH penalises a source that never "
                "authenticates) and the addresses the canary listens at; without that "
                "listing, only the proxies the environment names are tried, and the line is an "
                "error unless one escaped. In a sandbox that shows no `/proc` the listeners come "
                "from `sock_diag` and the namespace is told by a pidfd of the probe's own "
                "(`PIDFD_GET_NET_NAMESPACE`, 6.11); where neither can be, the line is an error. At "
                "most 48 relays: more make the line an error unless one escaped. A relay that "
                "refuses the canary's port is asked again, on a new connection within the first "
                "asking's deadline (each of the three ways alike), for the canary's high port "
                "and, where the canary stands in "
                "a namespace of its own (it answers every port there), 443 and 80 (a proxy "
                "that lets some ports out alone, as squid's stock rule does), never for the "
                "port the policy lets out (`--allowed-tcp`: a proxy enforcing the policy "
                "rightly lets that out). A proxy its environment names by `https://` is spoken "
                "to over TLS, which harness does not speak: the line is an error unless one "
                "escaped. Escaped if the nonce comes back; otherwise blocked, "
                "with what was tried."
            ),
        ),
        # A sidecar relay on UDP: bound in the sandbox's own network namespace, its
        # outgoing side elsewhere (a statsd or syslog shipper aimed anywhere).
        _swept(
            "udp-relay",
            "the marked HARNESS datagram to every UDP listener of the sandbox's own network"
            " namespace, and to the host's and the usual shippers' at its next hops",
            transport=None,
            control=Control.NONE,
            how=(
                "Every UDP socket of `/proc/net/udp` and `/proc/net/udp6` bound and connected "
                "to nothing (state 07: the sandbox's own network namespace, every port; a "
                "wildcard address by loopback, udp6's at `::1` and at 127.0.0.1) is sent the "
                "HARNESS line as a datagram; a relay forwards it to the canary, which answers "
                "with the nonce or logs its arrival. One connected to a loopback peer (a relay "
                "that answers one client, as socat's `UDP4:127.0.0.1:5000,bind=...` does) is "
                "sent it from that peer's address where that port is free to bind. Where the "
                "probe may stand in the host's network namespace its listeners are the host's "
                "services and are never sent anything; a sandbox that shows no "
                "`/proc/net/udp` (nor `/proc/self/net/udp`, nor, without `/proc`, `sock_diag`'s "
                "table) is an error. At most 16 "
                "listeners: more make the line (and `dns-own`'s) an error unless one escaped. "
                "From a network namespace of its own, also the host's UDP sockets bound beyond "
                "loopback that the host's listing names (`--host-udp`, held by a process it can "
                "see, no canary's; at most 8, more make the line an error unless one escaped) "
                "at the host's end of the canary's link and at the first next hop of its family "
                "where bound to every address (IPv4's, and IPv6's, as `tcp-proxy` finds them, "
                "a link-local one with its link), at one of the first two next hops where bound "
                "to its address, at its own address where bound to another address of the "
                "host's (another link's, not link-local: a host takes datagrams for any address "
                "it holds), and the ports datagram shippers listen at by default (8125 "
                "statsd, 514 syslog, 12201 GELF, 25826 collectd) at the first two next hops of "
                "each family (IPv4 and IPv6): a "
                "shipper on the host aimed anywhere, the one port a host firewall lets in. "
                "Escaped if the nonce comes back or the canary logs the line; otherwise "
                "blocked, with what was tried."
            ),
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
            how=(
                "Connect to `--allowed-tcp` and exchange the HARNESS and NONCE lines, as the probe."
            ),
            section="binaries",
        ),
        Check(
            "egress-other-binary",
            "the same connection from another program (the helpers' `other`)",
            needs=(POLICY_BINARIES,),
            rule=Rule.ARRIVAL,
            transport=Transport.TCP,
            how=(
                "Exec `--other-binary connect TAG egress-other-binary IP:PORT NONCE` and read its "
                "line. Where its nonce did not come back, and not for want of a route "
                "(`ENETUNREACH`, `EHOSTUNREACH`, `ENETDOWN`) nor of an answer (`ETIMEDOUT`: "
                "the network drops what is sent), it tries again passing for the "
                "probe, "
                "to a supervisor that names programs by less than their file: started with the "
                "probe's argv[0] and named as the probe (`PR_SET_NAME`, from an optional last "
                "argument but one, `-` for its own: the comm an eBPF hook reads), then as a "
                "copy of its file under the "
                "probe's file name, in a folder `.harness-TAG-as` of the allowed folder's (else "
                "`/tmp`'s, `/dev/shm`'s: the first it may write and run from; removed at once). "
                "Escaped if the nonce came back at any try, the detail naming the way (`started "
                "as ... and named ...`, `as its copy ...`, `on a socket the probe made and "
                "held`: last, `other` as itself connects a TCP socket the probe made and "
                "handed it at its start, as `connect`'s last argument, the probe holding it "
                "meanwhile); `blocked` with the first connect "
                "errno where none connected, else `succeeded` (the canary's log decides). A "
                "failed exec of `other` itself is `error`. `evidence` has `dst`, `binary` and "
                "`src_port` (the last try's)."
            ),
            section="binaries",
        ),
        # A route of its own (harness/probe/egress.c): CAP_NET_ADMIN over the sandbox's
        # network namespace makes the one the sandbox left out, or one around a dead end.
        # Never made where the probe stands in the host's namespace (the host's routes are
        # not touched): no control.
        Check(
            "route-made",
            "a host route to the canary through each next hop in view, made with CAP_NET_ADMIN",
            control=Control.NONE,
            rule=Rule.ARRIVAL,
            transport=Transport.TCP,
            how=(
                "After every other egress line, alone: where the probe does not stand in the "
                "host's network namespace (`--host-ns`, or else pid 1's; what cannot be told, "
                "without `/proc`, counts as the host's, and so does a stack that holds the "
                "host's end of the canary's link, `--host4` or `--host6`, among its own "
                "addresses: gVisor's `--network=host`, a namespace of its own over the host's "
                "stack; the same everywhere the probe asks where it stands), a host route to "
                "the canary's IPv4 "
                "address (`SIOCADDRT`) through each next hop in view but the one the route in "
                "place takes (the longest prefix of `/proc/net/route`: a default route into a "
                "dead end beside a second link out): every gateway of `/proc/net/route`, every "
                "direct host route's destination, every neighbour of `/proc/net/arp`, every "
                "address of a directly attached subnet of eight or fewer (gateways first, then "
                "neighbours, host routes and subnet addresses; at most 32, each once, none of the "
                "namespace's own); each tried with the HARNESS exchange (a second each) and taken "
                "back at once (`SIOCDELRT`); where the ioctl is refused, again with its "
                "request's upper 32 bits set, then by netlink's `RTM_NEWROUTE`, its socket made "
                "every way (widened, each set of the type's flags, as `SOCK_DGRAM`, by the i386 "
                "entry's `socket` or `socketcall`, by io_uring's `IORING_OP_SOCKET`), the way "
                "named. Escaped if the nonce comes back (`evidence.via`); "
                "blocked where no route can be made (`EPERM` without the capability: the first "
                "refusal's errno) or none leads there; an error where the check's time ran out "
                "or more hops than 32 were in view, with some untried. Where the namespace has "
                "policy routing rules of its own ahead of the main table (`RTM_GETRULE`: any "
                "IPv4 rule but the kernel's local, main and default), a rule of the workload's "
                "is first put ahead of them (priority 1, or 0 where theirs start at 1), sending "
                "the canary's address to the main table: the route in place is tried through "
                "it, then each hop as above; the rule is taken back before the line ends, and "
                "the sandbox's rules are never changed. A rule of theirs at priority 0, which "
                "none can precede, is an error where the workload may make rules. `evidence` "
                "has `hops`, `route_in_place`, `rules_ahead` and `rule_pref`. Then the same over "
                "IPv6, to the canary's IPv6 address (`--canary6`) on the same port, with "
                "`SIOCADDRT` on an IPv6 socket: every gateway of `/proc/net/ipv6_route`, every "
                "neighbour (`RTM_GETNEIGH`), and the first two addresses of each attached "
                "prefix of /64 to /126 (`evidence.hops6`), three seconds a hop (the first SYN "
                "through a new route is lost while the far end resolves this end); IPv6 "
                "policy rules ahead of the main table (any but the kernel's local and main) "
                "are stepped around first in the same way, with an IPv6 rule of the "
                "workload's (`rules_ahead6`, `rule_pref6`), the route in place tried through "
                "it, then each hop. Not tried: other tables' routes, a multipath route's "
                "later next hops."
            ),
        ),
        # A firewall of its own (harness/probe/firewall.c): CAP_NET_ADMIN over the
        # sandbox's network namespace opens the nftables rules that live there. Never in
        # the host's namespace (the host's firewall is not touched): no control.
        Check(
            "firewall-opened",
            "a rule accepting the canary at the head of every nftables base chain of the"
            " sandbox's own network namespace, made with CAP_NET_ADMIN",
            control=Control.NONE,
            rule=Rule.ARRIVAL,
            transport=Transport.TCP,
            how=(
                "After route-made, alone, and never where the probe may stand in the host's "
                "network namespace (as route-made): the namespace's nftables tables and base "
                "chains are listed (`NFT_MSG_GETTABLE`, `NFT_MSG_GETCHAIN` over "
                "`NETLINK_NETFILTER`, its socket made, where `socket(2)` refused it every way as "
                "a filter refuses, by the i386 entry's `socket` or `socketcall`, then io_uring's "
                "`IORING_OP_SOCKET`, the way named; ip, ip6, inet and bridge: every hook but "
                "forward; netdev: "
                "ingress and egress; arp: input and output), and one transaction puts at the "
                "head of each a rule accepting the canary's address on the way out (destination) "
                "or in (source), for each family the chain sees and the canary has (IPv4 from "
                "`--canary-tcp`, IPv6 from `--canary6`, the same port); an arp chain's accepts "
                "every ARP packet. The HARNESS exchange (two seconds a family), then each rule is "
                "deleted by its handle, one transaction each. Escaped if the nonce comes back; "
                "blocked where the chains cannot be listed or the rules are refused (`EPERM` "
                "without the capability), or none is there. An error where more than 256 chains "
                "or an unreadable one could not all be held, where a rule could not be taken "
                "back, where a table another process owns (`NFT_TABLE_F_OWNER`) holds a chain, or "
                "where an iptables-legacy table of the namespace may drop (a rule beyond its "
                "policies, or a DROP policy, read by `IPT_SO_GET_INFO`/`GET_ENTRIES`, which need "
                "the same capability; not opened). `evidence` has `chains`, `owned_chains` and "
                "`rules_taken_back`. Not tried: tc filters, cgroup BPF programs, policy routing "
                "rules, arptables and ebtables-legacy, a firewall and a missing route together."
            ),
        ),
        # Issue 27 and 38: the rest of the network surface (harness/catalogue/network.py),
        # every way over each family.
        *_ways("4"),
        *_ways("6"),
        *(
            _swept(
                f"{proto.value}4-mapped",
                f"{proto.value.upper()} to the canary's IPv4 high port by an IPv6 socket, at its"
                " v4-mapped address (::ffff:a.b.c.d)",
                transport=proto,
                control_id=f"{proto.value}4-high",
                how=(
                    "The HARNESS exchange with the IPv4 high port through an `AF_INET6` socket "
                    "addressed to `::ffff:<canary4>`: IPv4 on the wire, so a filter on `AF_INET` "
                    "sockets or a rule on IPv6 alone leaves it open. Escaped on the nonce; no "
                    "IPv6 socket, or one that is IPv6-only (`net.ipv6.bindv6only`): blocked. Its "
                    f"control is `{proto.value}4-high`."
                ),
            )
            for proto in (Transport.TCP, Transport.UDP)
        ),
        _swept(
            "unix-abstract",
            "the HARNESS line to the canary's listener in the host's abstract unix namespace",
            transport=None,
            how=(
                "The HARNESS line to `--canary-unix`'s abstract name (the canary's listener in the "
                "host's namespace); refused: blocked (ECONNREFUSED: no such name here)."
            ),
        ),
        _swept(
            "unix-abstract-dgram",
            "the HARNESS line as a datagram to the canary's datagram socket in the host's"
            " abstract unix namespace",
            transport=None,
            how=(
                "The HARNESS line by `sendto` from a unix datagram socket to the canary's "
                "datagram socket in the host's abstract namespace (`--canary-unix` with `-d` "
                "after it): a filter that lets only unix datagrams through still reaches the "
                "host's abstract names. Nothing answers: `succeeded` once sent; the canary's "
                "log proves a crossing; refused: blocked (ECONNREFUSED: no such name here)."
            ),
        ),
        _swept(
            "unix-abstract-seqpacket",
            "the HARNESS line over a unix seqpacket socket to the canary's seqpacket listener"
            " in the host's abstract unix namespace",
            transport=None,
            how=(
                "The HARNESS line as one message on a unix seqpacket socket connected to the "
                "canary's seqpacket listener in the host's abstract namespace (`--canary-unix` "
                "with `-q` after it): a filter that lets only unix seqpacket sockets through "
                "still reaches the host's abstract names. Escaped on the nonce; refused: "
                "blocked (ECONNREFUSED: no such name here)."
            ),
        ),
        # Issue 38: a unix listener outside the sandbox is an egress route (and a
        # privilege route where it is a runtime's, an init's or a bus's). No byte is
        # sent, so nothing arrives: its proof is whose listener answered the connect.
        _swept(
            "unix-host",
            "connect to a unix listener outside the sandbox: every one the host lists, and"
            " every unix socket in view",
            transport=None,
            control=Control.NONE,
            how=(
                "A connect (no byte sent; to a datagram socket where connect is refused, an empty "
                "datagram by `sendto`; its socket made every way `socket(2)` takes, and where "
                "each is refused, by the i386 entry's `socket` or `socketcall`, then by "
                "io_uring's `IORING_OP_SOCKET`; where `connect` is refused, the same connect "
                "through the i386 entry, then by io_uring's `IORING_OP_CONNECT`, each given up "
                "for an address's length once refused there (a filter sees the length, not the "
                "address), for all where the entry or the ring is refused whole; the way named) "
                "to each of the host's own unix "
                "listeners "
                "(`--host-unix`: listed once per host from its `/proc/net/unix`, stream, "
                "seqpacket and path-bound datagram sockets, paths at any depth and abstract "
                "names, less those under the policy's read-write grants and the allowed "
                "folder, and the canaries' names) and to every unix socket the sweep found in "
                "the sandbox's view (`unix-proxy`'s list, and the abstract names its own "
                "network namespace's `/proc/net/unix` gives to seqpacket listeners and to "
                "unconnected datagram sockets, which no walk finds: a host process that shares"
                " the namespace, a sidecar's or a shim's, may hold them; the datagram ones not "
                "where the probe may stand in the host's network namespace, whose canary "
                "`unix-abstract-dgram` tries), less those under `--unix-granted`. "
                "Escaped where one connects and its listener is shown to be outside the "
                "sandbox: its socket file is the host's (the same device and inode, at any "
                "path; a bind of any folder above it is found through the sandbox's mount "
                "table), its abstract name is in the host's network namespace (`--host-ns`), "
                "a datagram socket's file is bound by no socket of the sandbox's network "
                "namespace (`sock_diag`), a datagram socket of its own network namespace (by "
                "file or abstract name: its inode by `sock_diag`, else `/proc/net/unix`) is "
                "held by no process of the sandbox's own pid namespace (no descriptor of it in"
                " any `/proc/<pid>/fd`; where the holder cannot be told, a process in view whose"
                " descriptors it may not read, the line is an error unless one escaped), "
                "or `SO_PEERCRED` names a process outside the sandbox's pid namespace (pid 0), "
                "or, in the host's own pid namespace, the host's owner, a process whose socket "
                "file is on one of the host's own filesystems (`--host-devs`; the probe's "
                "ancestors too: a shim or monitor listening there is a host process), or one "
                "in another mount namespace that is not the probe's ancestor; the detail names "
                "the "
                "process. A listener of the sandbox's own is no escape, nor is any on a kernel of "
                "the sandbox's own (its boot id, or without one its release, is not the host's: "
                "there namespaces and devices are the guest's, and no unix socket reaches the "
                "host; gVisor's `--host-uds` is not seen). One line for all: "
                "blocked with the counts (refused, the sandbox's own); none to try: blocked. "
                "More names than it holds (320 of the host's, 4096 found inside), or a walk "
                "of the view cut short (as `unix-proxy` says it), leave some untried: an "
                "error, never blocked."
            ),
        ),
        # The host's own addresses (netns mode: the host's end of the canary's veth).
        *_per_family(
            "host",
            "the host's own {family} address, the high port",
            ("hostaddr",),
            ("ipv6", "hostaddr"),
            HOST_HOW,
        ),
        # Issue 38: destinations beyond the canary (netns mode: the metadata addresses).
        *_per_family(
            "meta",
            "the cloud metadata {family} address, the high port",
            ("metadata",),
            ("ipv6", "metadata"),
            META_HOW,
        ),
        # The canary's stand-ins elsewhere: an address of each range `[canary] elsewhere`
        # names, and the host's gateways and resolvers where it asks; at 443 and 80,
        # those picked from ranges.
        *_per_family(
            "elsewhere",
            "each of the canary's {family} stand-ins elsewhere, the high port",
            ("elsewhere",),
            ("ipv6", "elsewhere6"),
            ELSEWHERE_HOW,
        ),
        *_per_family(
            "web",
            "each of the canary's {family} stand-ins picked from ranges, ports 443 and 80",
            ("web",),
            ("ipv6", "web6"),
            ELSEWHERE_HOW,
        ),
        _swept(
            "packet4",
            "an IPv4 packet the probe builds, on a packet socket of its own, to each next hop",
            ("veth",),
            transport=None,
            how=PACKET_HOW,
        ),
        _swept(
            "packet6",
            "an IPv6 packet the probe builds, on a packet socket of its own, to each IPv6 next hop",
            ("veth", "ipv6"),
            transport=None,
            how=PACKET6_HOW,
        ),
        # A plain host hands its probe no socket: the canary's log is the only proof.
        _swept(
            "held-fds",
            "the HARNESS line through every socket held at the start (descriptors 3 and up,"
            " at any number)",
            transport=None,
            control=Control.NONE,
            how=(
                "Every socket open at descriptors 3 and up when the probe started (listed before "
                "it opens anything, at any number; stdin too where it is a network socket), at "
                "most 160 attempts in all (more: the line is an error): a connected one (stream, "
                "datagram or "
                "seqpacket) gets the HARNESS line (by `write`, `writev`, `pwritev2`, then "
                "`sendmsg` where `send` is refused; where each of those is refused as a filter "
                "refuses, as one keyed to the descriptor's number does, by `sendmmsg`, `sendfile` "
                "from a memfd, `splice` from a pipe, Linux AIO (`io_submit`'s `IOCB_CMD_PWRITE`), "
                "io_uring's `IORING_OP_SENDMSG`, then the i386 entry's `write`, `writev`, "
                "`socketcall`'s `send`, `sendto`, `sendmsg`, `sendmmsg`, `pwritev2`, `sendfile64`, "
                "`sendfile` and `splice`, each in a child, then on a copy at another number "
                "(`fcntl`'s `F_DUPFD_CLOEXEC`, `F_DUPFD`, `dup`, `dup3`): the way named), an "
                "unconnected IPv4 or IPv6 one is aimed at the canary's high port (a datagram, by "
                "`sendto`, and where a filter refuses it `sendmsg`, then `sendmmsg`, with its "
                "address; where each of those is refused as a filter refuses, the i386 entry's "
                "`sendto`, `sendmsg` and `sendmmsg`, each by its own number and by `socketcall`, "
                "in a child, then io_uring's `IORING_OP_SENDMSG` with `msg_name`, the way named; "
                "or a TCP connect, where `connect` is refused as a filter refuses by the i386 "
                "entry's, then io_uring's `IORING_OP_CONNECT`, its bytes then going each way a "
                "held connected socket's do; an IPv6 one also at `::ffff:<canary4>`, a datagram "
                "to both, a "
                "connect there where IPv6 has no route), an unconnected unix stream or seqpacket "
                "socket at the canary's listener of its kind, a unix datagram one at its "
                "datagram socket "
                "(`--canary-unix`: abstract names are those of the socket's network namespace, "
                "so one made in the host's reaches the host's), a raw IP one gets the line as its "
                "own protocol's payload, and a packet socket a UDP packet the probe builds (from "
                "0.0.0.0 to the canary's IPv4 high port, to the link's broadcast address on the "
                "interface it is bound to; the canary's capture decides); listeners are skipped. "
                "A held connected unix socket whose listener is shown to be outside the sandbox "
                "(judged as `unix-host` judges a connect to it: `SO_PEERCRED`, the host's list) "
                "is escaped where its line was not relayed: a daemon (a container runtime's API, "
                "a bus) answers requests, not the HARNESS line. "
                "A held TUN or TAP device (`TUNGETIFF` answers) is written a UDP packet (a frame "
                "to the broadcast address, for a TAP) to the host's own address on the high "
                "port, from the canary's address: it enters the stack of its interface's "
                "namespace as if from outside, and the canary's listener there logs it. "
                "A held io_uring ring's registered files are held too: each is installed as a "
                "descriptor of the probe's (`IORING_OP_FIXED_FD_INSTALL`), and a socket among "
                "them is tried the same way, named by its ring and slot (a ring it cannot "
                "drive: an error). "
                "Every handle to another network namespace is a way to sockets of that "
                "namespace's: a held namespace descriptor (nsfs, told by `NS_GET_NSTYPE`) or "
                "pidfd (at any number), a held folder of a proc filesystem (a `/proc`: each "
                "`<pid>/ns/net` below it; a `/proc/<pid>`: its `ns/net`), and "
                "`/proc/<pid>/ns/net` and `/proc/<pid>/task/<tid>/ns/net` of each visible "
                "process and thread, and `<pid>/ns/net` below every other proc mount (a host's at "
                "`/host/proc`), opened as its owner (at most 16 namespaces, the sandbox's "
                "own left out; none where it stands in the host's own, by `--host-ns` or, "
                "without it, pid 1's: a fleet host's containers are left alone). Each is "
                "entered by `setns` in a child (where x86_64's is refused as a filter refuses, "
                "`EPERM` or `ENOSYS`, by the i386 entry's, 346, named in the line; where `setns` "
                "alone is refused, through the user "
                "namespace that owns it: a rootless container's) that makes there a TCP socket "
                "per port the sweep tries by TCP and a UDP socket per port it tries by UDP (a "
                "namespace that lets out one port alone is a way out by that port), over IPv4 "
                "and IPv6, and hands them back, each aimed at the canary's address on its port "
                "(port 53 by a DNS query; `setns` refused, or its child killed by `SIGSYS`: "
                "blocked, with its "
                "errno; a child that gives no answer: an error). Each is named with its network "
                "namespace (`SO_NETNS_COOKIE` against a socket of the probe's own: the sandbox's, "
                "or another). And every IPv4 or IPv6 socket of another visible process (`/proc`, "
                "where it does not stand in the host's own namespace) that belongs to another "
                "network namespace and that `pidfd_getfd` takes (ptrace's permission: the same "
                "uid, no capability the workload lacks; every one, up to the line's 160 "
                "attempts, past which the line is an error): a host process's connection "
                "is the host's network, tried as one held, named by its process. One line for "
                "all, ranked like `unix-proxy`; none: blocked. Descriptors 1 and 2 carry the "
                "probe's own output and are not tried, nor is "
                "stdin unless it is an IP or packet socket."
            ),
        ),
        # The host's IPC namespace (harness/probe/ipc.c): the canary's objects there,
        # writable by any uid; nothing answers, the canary's log is the only proof.
        _swept(
            "ipc-sysv-msg",
            "the HARNESS line to the canary's System V message queue (msgget, msgsnd)",
            ("ipc",),
            transport=None,
            how=IPC_HOW,
        ),
        _swept(
            "ipc-sysv-shm",
            "the HARNESS line into the canary's System V shared memory (shmget, shmat)",
            ("ipc",),
            transport=None,
            how=IPC_HOW,
        ),
        _swept(
            "ipc-posix-mq",
            "the HARNESS line to the canary's POSIX message queue (mq_open, mq_send)",
            ("ipc",),
            transport=None,
            how=IPC_HOW,
        ),
    ),
)
