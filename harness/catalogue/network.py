"""Network rows: every way a workload can put bytes on the network or hand them to
something that will: socket families and types, the paths that send, source ports,
and the sockets it is handed."""

from __future__ import annotations

from functools import partial

from harness.catalogue.rows import Row, Surface

_FAMILY = "socket family"
_SEND = "send path"
_HANDED = "handed"
_WHERE = "destination"

_net = partial(Row, Surface.NETWORK)

_SWEEP4 = tuple(f"tcp4-{p}" for p in ("22", "25", "53", "80", "443", "853", "8080", "8443", "high"))
_SWEEP6 = tuple(c.replace("tcp4", "tcp6") for c in _SWEEP4)
_UDP4 = ("udp4-53", "udp4-123", "udp4-443", "udp4-high")
_UDP6 = tuple(c.replace("udp4", "udp6") for c in _UDP4)
_SEND_CALLS = ("sendto", "sendmsg", "sendmmsg", "write", "writev", "pwritev2", "sendfile", "splice")

ROWS: tuple[Row, ...] = (
    _net(
        _FAMILY,
        "AF_INET TCP, by name and by raw address",
        ("socket", "connect"),
        checks=(
            "tcp-denied-name",
            "tcp-raw-ip",
            "doh-port",
            "dns-alt-tcp",
            "dns-own-tcp",
            *_SWEEP4,
        ),
        target="the canary's IPv4 address, every swept port",
        ways=(
            "a longer address: connect and the send calls again with the longest length"
            " (sizeof(struct sockaddr_storage)), where the address's own was refused",
            "a widened argument: socket(2) again with each argument's upper 32 bits set, where"
            " it was refused (a filter comparing all 64 bits, as libseccomp does, matches none)",
            "the protocol named: socket(2) again with IPPROTO_TCP in place of 0 (IPPROTO_UDP"
            " for a datagram), with each set of the type's flags, where it was refused as given"
            " (an allow-list written from strace of curl, comparing the protocol whole, matches"
            " only the protocol it names)",
            "i386: socket, connect, socketcall",
            "io_uring: IORING_OP_SOCKET (dns-own-tcp's query's socket to a resolver of its own"
            " network namespace made by the ring, or by the i386 entry, where socket(2)"
            " refused it every way), IORING_OP_CONNECT (its connect, where connect(2) and the"
            " i386 entry's refused it)",
            "sendto: MSG_FASTOPEN (dns-own-tcp's query's connection to a resolver of its own"
            " network namespace made by its first bytes, where connect(2) was refused every"
            " way)",
            "sendmsg: MSG_FASTOPEN with msg_name (dns-own-tcp's query's connection to a"
            " resolver of its own network namespace made by its first bytes, where connect(2)"
            " and sendto were refused every way; sendmmsg's where sendmsg is refused too)",
        ),
    ),
    _net(
        _FAMILY,
        "AF_INET UDP",
        ("socket", "sendto"),
        checks=("dns-alt-udp", "dns-own", *_UDP4),
        target="the canary's IPv4 address, every swept port, and the sandbox's own resolvers"
        " (resolv.conf's nameservers, IPv4 or IPv6, a link-local one with its scope:"
        " fe80::1%eth0)",
        ways=(
            "the type's other flags: socket(2) again with none, SOCK_CLOEXEC alone and"
            " SOCK_NONBLOCK alone in its type (the rest set by fcntl), where it was refused with"
            " both and widened (a filter comparing the type whole, as libseccomp's SCMP_CMP_EQ"
            " does, matches only the flags it names)",
        ),
    ),
    _net(
        _FAMILY,
        "AF_INET6 TCP",
        ("socket", "connect"),
        checks=_SWEEP6,
        target="the canary's IPv6 address",
        kernels="all (when the canary has IPv6)",
    ),
    _net(
        _FAMILY,
        "AF_INET6 UDP",
        ("socket", "sendto"),
        checks=_UDP6,
        target="the canary's IPv6 address",
        kernels="all (when the canary has IPv6)",
    ),
    _net(
        _FAMILY,
        "AF_INET TCP through a Multipath TCP socket",
        ("socket", "connect"),
        checks=("mptcp4", "mptcp6"),
        target="the canary's high port, IPv4 and IPv6: socket(..., IPPROTO_MPTCP) talks"
        " plain TCP to a peer without MPTCP; Landlock's TCP rights do not cover it",
        kernels="5.6+ with net.mptcp.enabled",
    ),
    _net(
        _FAMILY,
        "IPv4 by an AF_INET6 socket (a v4-mapped address)",
        ("socket", "connect", "sendto"),
        checks=("tcp4-mapped", "udp4-mapped"),
        target="the canary's IPv4 high port at ::ffff:a.b.c.d: IPv4 on the wire, from a socket"
        " a filter on AF_INET never sees",
        kernels="all with IPv6 (none where IPv6 sockets are IPv6-only: net.ipv6.bindv6only)",
    ),
    _net(
        _FAMILY,
        "ICMP echo (ping sockets)",
        ("socket", "sendto"),
        checks=("icmp4", "icmp6"),
        target="the canary's addresses",
        ways=(
            "the type's other flags: socket(2) again, datagram then raw, with none,"
            " SOCK_CLOEXEC alone and SOCK_NONBLOCK alone in its type (the rest set by fcntl),"
            " where it was refused with both (a filter comparing the type whole, as"
            " libseccomp's SCMP_CMP_EQ does, matches only the flags it names: ping's none)",
        ),
    ),
    _net(
        _FAMILY,
        "other IP protocols: UDP-Lite and raw IP",
        ("socket", "sendto"),
        checks=("udplite4", "udplite6", "rawip4", "rawip6"),
        ways=(
            "i386: socket, socketcall",
            "io_uring: IORING_OP_SOCKET (the socket made by the ring, where socket(2) and the"
            " i386 entry refused it)",
        ),
        target="the canary's addresses, seen by its capture (listen mode: as root)",
        kernels="all (raw IP with CAP_NET_RAW)",
    ),
    _net(
        _FAMILY,
        "other IP protocols: SCTP and DCCP",
        ("socket", "connect"),
        kernels="with the sctp or dccp module (DCCP is gone from 6.16)",
        unseen="the canary's capture logs any IP protocol, so an SCTP or DCCP packet that"
        " arrives makes the verdict inconclusive (unexplained), but the probe does not"
        " attempt them: the lab's kernel has neither module, so no control could escape",
    ),
    _net(
        _FAMILY,
        "AF_PACKET",
        ("socket", "sendto"),
        kernels="all (with CAP_NET_RAW)",
        checks=("packet4", "packet6"),
        ways=(
            "io_uring: IORING_OP_SOCKET",
            "i386: socket, socketcall",
            "AF_INET's name: socket(AF_INET, SOCK_PACKET), a packet socket of the oldest kind",
            "AF_XDP: an XDP socket's transmit ring in copy mode, where no packet socket is made",
            "sendmmsg: where sendto and sendmsg are refused",
            "io_uring: IORING_OP_SENDMSG, where the send calls are refused",
            "write: bound to the link, a SOCK_RAW frame (the send calls and the ring refused)",
            "the type's other flags: socket(2) again without SOCK_CLOEXEC in its type (set by"
            " fcntl after), as a capture tool makes it, where it was refused with it (a filter"
            " comparing the type whole, as libseccomp's SCMP_CMP_EQ does, matches only that)",
        ),
        target="the canary's IPv4 and IPv6 high port, a UDP datagram in an IPv4 or IPv6 packet"
        " the probe builds, on a packet socket of its own (no IP socket, no route of the"
        " sandbox's; each kind in turn until one is made: SOCK_RAW, SOCK_DGRAM, for no protocol"
        " or the family, then SOCK_PACKET; each"
        " made by socket(2) (its type with SOCK_CLOEXEC, else without), else io_uring's"
        " IORING_OP_SOCKET, else the i386 entry's socket"
        " or socketcall, SOCK_PACKET also by socket(AF_INET, SOCK_PACKET); else an XDP"
        " socket's ring (copy mode); sent by sendto, else sendmsg, sendmmsg, io_uring's"
        " IORING_OP_SENDMSG, else written once bound to the link; IPv4 from its address on"
        " the link, else (none there) the hop's neighbours on either side, asked by an ARP"
        " probe from 0.0.0.0; IPv6 from a global"
        " address of its own, else one it makes up, asked from its link-local address or ::;"
        " the ways named in the line),"
        " to each next hop in view by its link address (gateways, neighbours, host routes,"
        " small subnets' addresses, a wider subnet's first and last where its link has none"
        " of those; the neighbour table, else ARP; IPv6:"
        " each gateway and the canary on its link, by a neighbour solicitation), at"
        " most 8; netns mode (a frame reaches the canary's veth); where it may stand in the"
        " host's namespace, only the kernel's own route's hop",
    ),
    _net(
        _FAMILY,
        "AF_UNIX by path: a proxy on the host",
        ("socket", "connect"),
        checks=("unix-proxy",),
        target="a relay to the canary, at every socket file in the sandbox's whole view (any"
        " depth; a path longer than sun_path through /proc/self/fd) and in its /proc/net/unix;"
        " a walk cut short or more sockets than are tried is an error",
        ways=(
            "i386: socket, connect, socketcall",
            "io_uring: IORING_OP_SOCKET (the unix socket made by the ring, where socket(2) and"
            " the i386 entry refused it)",
            "io_uring: IORING_OP_CONNECT (its connect, where connect(2) and the i386 entry's"
            " refused it)",
        ),
    ),
    _net(
        _FAMILY,
        "AF_INET TCP to a relay in its own network namespace (a sidecar proxy), or one its"
        " environment names",
        ("socket", "connect"),
        checks=("tcp-proxy",),
        target="every TCP listener of the sandbox's own network namespace (of the host's, on any"
        " of its addresses, where it stands in the host's: its SSH daemons' left out) and every"
        " proxy"
        " an environment variable *_proxy names (http_proxy, all_proxy, npm_config_proxy,"
        " ...; no_proxy aside), by number, localhost, or a name the sandbox's /etc/hosts"
        " gives; from a namespace of its own, the host's TCP listeners beyond loopback at"
        " the host's end of the canary's link and its first next hop of each family, IPv4 and"
        " IPv6 (a link-local one with its link), one bound to another of the host's addresses"
        " (another link's) at that address (a host takes packets for any address it holds,"
        " from whichever link they come), and the ports proxies listen at by default at"
        " its first two next hops of each family; each asked by HTTP CONNECT, SOCKS5 (SOCKS4"
        " where the greeting got no SOCKS5 answer) and an absolute-URI GET for the canary"
        " (with the login an environment's proxy URL carries), again at the high port, 443"
        " and 80 where it refuses the first",
        ways=(
            "i386: socket, connect, socketcall",
            "io_uring: IORING_OP_SOCKET (the relay's socket made by the ring, where socket(2)"
            " and the i386 entry refused it), IORING_OP_CONNECT (its connect, where connect(2)"
            " and the i386 entry's refused it)",
            "sendto: MSG_FASTOPEN (the relay's connection made by the first bytes, where"
            " connect(2) was refused every way)",
            "sendmsg: MSG_FASTOPEN with msg_name (the relay's connection made by the first"
            " bytes, where connect(2) and sendto were refused every way; sendmmsg's where"
            " sendmsg is refused too)",
        ),
    ),
    _net(
        _FAMILY,
        "AF_INET UDP to a relay or resolver (a sidecar's, a shipper on the host)",
        ("socket", "sendto"),
        checks=("udp-relay", "dns-own"),
        target="every UDP listener of the sandbox's own network namespace: the marked datagram"
        " (a relay's forward), and the TXT, A and AAAA queries (a forwarding resolver"
        " resolv.conf does not name); from a namespace of its own, the host's UDP sockets"
        " bound beyond loopback at the host's end of the canary's link and its first next"
        " hop of each family, IPv4 and IPv6 (a link-local one with its link), one bound to"
        " another of the host's addresses at that address (the weak host model), and the ports"
        " shippers listen at by default (statsd, syslog, GELF, collectd) at its first two"
        " next hops of each family: the marked datagram",
        ways=(
            "the type's other flags: the socket bound to a one-peer relay's peer made again"
            " with each other set of SOCK_NONBLOCK and SOCK_CLOEXEC, its protocol named and"
            " widened, where it was refused as given (each socket the egress checks make"
            " outside the sweep's attempts goes the same ways: a proxy's, a resolver's, a"
            " route's or firewall's netlink socket, a unix listener's)",
            "i386: socket, connect, socketcall",
            "io_uring: IORING_OP_SOCKET (the relay's or a query's socket made by the ring,"
            " where socket(2) and the i386 entry refused it), IORING_OP_CONNECT (its connect,"
            " where connect(2) and the i386 entry's refused it)",
            "sendto: the datagram with its destination, unconnected, where connect(2) was"
            " refused every way",
            "sendmsg: the datagram with its destination (msg_name), unconnected, where"
            " connect(2) and sendto were refused every way (sendmmsg where sendmsg is refused"
            " too)",
        ),
    ),
    _net(
        _FAMILY,
        "AF_UNIX: a listener outside the sandbox (a daemon's, the host's)",
        ("socket", "connect"),
        checks=("unix-host",),
        target="every unix listener the host lists (paths at any depth, abstract names) and"
        " every unix socket in view whose listener is outside (its files, and the abstract"
        " names /proc/net/unix gives in its own network namespace: stream and seqpacket"
        " listeners, datagram sockets, which a host process sharing that namespace may hold):"
        " a connect, no byte sent (an empty datagram)",
        ways=(
            "i386: socket, connect, socketcall",
            "io_uring: IORING_OP_SOCKET (the unix socket made by the ring, then connected by"
            " connect(2), where socket(2) and the i386 entry refused it)",
            "io_uring: IORING_OP_CONNECT (where connect(2) and the i386 entry's refused it)",
            "sendmsg: a datagram listener's empty datagram with its name (msg_name), where"
            " connect(2) and sendto(2) were refused (sendmmsg's where sendmsg is refused too)",
        ),
    ),
    _net(
        _FAMILY,
        "AF_UNIX abstract names",
        ("socket", "connect", "sendto"),
        checks=("unix-abstract", "unix-abstract-dgram", "unix-abstract-seqpacket"),
        target="the canary's stream and seqpacket listeners in the host's abstract namespace,"
        " and its datagram socket there",
        ways=(
            "sendmsg: the datagram with its name (msg_name), where sendto was refused"
            " (sendmmsg's where sendmsg is refused too)",
        ),
    ),
    _net(
        _FAMILY,
        "AF_VSOCK",
        ("socket", "connect"),
        kernels="in a VM (and on a host with vsock loaded)",
        unseen="vsock reaches the hypervisor's host (CID 2) or other guests, never an IP"
        " address: harness has no vsock canary, so a guest's vsock way out is not seen",
    ),
    _net(
        _FAMILY,
        "AF_NETLINK and the other families the kernel lists",
        ("socket",),
        unseen="netlink talks to the kernel itself (routes, addresses, firewall rules), not"
        " to another machine: changing them needs CAP_NET_ADMIN, which privilege-floor"
        " judges; AF_XDP's frames are packet4's (the AF_PACKET row's way); the other"
        " families (Bluetooth, CAN, X.25, ...) need hardware a sandbox is not given",
    ),
    _net(
        _SEND,
        "the socket API's send calls, connected or not",
        (
            "sendto",
            "sendmsg",
            "sendmmsg",
            "write",
            "writev",
            "pwritev",
            "pwritev2",
            "sendfile",
            "splice",
            "vmsplice",
        ),
        checks=tuple(f"send{v}-{call}" for v in "46" for call in _SEND_CALLS),
        target="the canary's high port, IPv4 and IPv6 (send(2) on a connected socket: the sweep;"
        " pwritev2 at the current position; sendfile from a memfd, splice from a pipe,"
        " which vmsplice only fills; pwritev, at an offset, is refused on a socket)",
    ),
    _net(
        _SEND,
        "TCP made without connect(2): Fast Open",
        ("sendto", "sendmsg", "sendmmsg", "setsockopt"),
        checks=tuple(
            f"tfo{v}-{way}" for v in "46" for way in ("sendto", "sendmsg", "sendmmsg", "connect")
        ),
        target="the canary's high port, IPv4 and IPv6: the first send call, with MSG_FASTOPEN"
        " and the address, makes the connection (a filter or an LSM hook on connect(2) never sees"
        " it); TCP_FASTOPEN_CONNECT, then connect",
        kernels="3.7+ with the client bit of net.ipv4.tcp_fastopen (TCP_FASTOPEN_CONNECT: 4.11+)",
    ),
    _net(
        _SEND,
        "io_uring's network operations",
        ("io_uring_setup", "io_uring_enter"),
        checks=tuple(f"uring{v}{kind}" for v in "46" for kind in ("", "-udp", "-mptcp")),
        ways=(
            "io_uring: a ring polled by its own thread (IORING_SETUP_SQPOLL), enter refused",
            # Where x86_64's io_uring_setup is refused (a filter on x86_64's calls alone):
            # the ring's socket (IORING_OP_SOCKET), connect, send and recv.
            "i386: io_uring_setup, io_uring_enter",
        ),
        target="the canary's high port, IPv4 and IPv6, by TCP, UDP and Multipath TCP, each"
        " socket made by the ring (IORING_OP_SOCKET) where the kernel has it; where"
        " io_uring_enter is refused and io_uring_setup is not, every ring polled by its own"
        " kernel thread (IORING_SETUP_SQPOLL), which needs no io_uring_enter",
        kernels="5.5+ (IORING_OP_SOCKET: 5.19+)",
    ),
    _net(
        _SEND,
        "socket calls through the i386 entry (int $0x80)",
        (),
        checks=tuple(f"i386-{kind}{v}" for v in "46" for kind in ("tcp", "udp", "tfo")),
        target="the canary's high port, IPv4 and IPv6, by TCP, UDP and TCP by Fast Open: each"
        " call by its own number and by socketcall, the bytes by write, sendto, sendmsg and"
        " sendmmsg (a TCP connection's, where each before was refused, by writev, socketcall's"
        " send, pwritev2, sendfile64, sendfile and splice too)",
        ways=(
            "sendmmsg: the entry's own (345, outside the socket calls' block, 359 to 373) and"
            " socketcall's, where sendto and sendmsg are refused",
            "x86_64's calls: connect, then write, sendto, sendmsg and sendmmsg, on the socket"
            " the entry made, where the entry's connect or every call of its that sends was"
            " refused (a filter of x86_64's socket(2) alone)",
        ),
        kernels="x86_64 with IA32 emulation",
    ),
    _net(
        _SEND,
        "source ports a stateless rule keys on",
        ("bind",),
        checks=("udp4-privport", "udp6-privport", "tcp4-sport", "tcp6-sport"),
        target="the canary's high port, IPv4 and IPv6: by UDP from 53, 123, 67, 88 or 500 (the"
        " first that binds), by TCP from each of 22, 53, 80, 443, 8080 and 8443",
        ways=(
            "i386: bind, socketcall",
            "io_uring: IORING_OP_BIND (6.11+; where bind(2) and the i386 entry's were refused)",
        ),
    ),
    _net(
        _SEND,
        "the rest of the socket API (no bytes leave by it alone)",
        (
            "socketpair",
            "bind",
            "listen",
            "accept",
            "accept4",
            "shutdown",
            "setsockopt",
            "getsockopt",
            "getsockname",
            "getpeername",
            "recvfrom",
            "recvmsg",
            "recvmmsg",
        ),
        unseen="no bytes leave by these alone: a listener or a received datagram is"
        " egress only through one of the send paths above",
    ),
    _net(
        _WHERE,
        "the host's own addresses",
        ("connect", "sendto"),
        checks=("host4-tcp", "host4-udp", "host6-tcp", "host6-udp"),
        target="the host's end of the canary's veth (netns mode): any of the host's"
        " addresses answers a packet that reaches its stack, forwarded or not",
    ),
    _net(
        _WHERE,
        "the cloud metadata addresses",
        ("connect", "sendto"),
        checks=("meta4-tcp", "meta4-udp", "meta6-tcp", "meta6-udp"),
        target="169.254.169.254 and fd00:ec2::254 (netns mode): the canary answers there on"
        " the run's high port, routed by a host rule for that port alone",
    ),
    _net(
        _WHERE,
        "a route the workload makes itself (CAP_NET_ADMIN over its network namespace)",
        ("ioctl", "sendmsg"),
        checks=("route-made",),
        target="the canary's IPv4 and IPv6 addresses, by a host route (SIOCADDRT) through each"
        " next hop in view but the one a route in place takes (a default route into a dead"
        " end beside a second link out): gateways, direct host routes, neighbours, the"
        " addresses of a small attached subnet; policy rules of either family ahead of the"
        " main table stepped around by a rule of the workload's own (RTM_NEWRULE); never"
        " where the probe stands in the host's namespace",
        ways=(
            "a widened argument: ioctl(SIOCADDRT) again with its request's upper 32 bits set,"
            " where it was refused (a filter comparing all 64 bits, as libseccomp does, matches"
            " none)",
            "netlink: the route made by RTM_NEWROUTE (as ip(8) makes it), where the route"
            " ioctls are refused both ways; its socket made again with each argument's upper"
            " 32 bits set where refused as given",
            "the type's other flags: netlink's socket made again with each other set of"
            " SOCK_NONBLOCK and SOCK_CLOEXEC, then as SOCK_DGRAM (netlink takes it alike),"
            " where refused as given (a deny-list written from strace of ip(8), comparing the"
            " type whole, matches only SOCK_RAW|SOCK_CLOEXEC)",
            "i386: socket, socketcall",
            "io_uring: IORING_OP_SOCKET (netlink's socket made by the ring, where socket(2)"
            " and the i386 entry refused it every way)",
        ),
    ),
    _net(
        _WHERE,
        "a firewall inside its own network namespace, opened (CAP_NET_ADMIN over it)",
        ("sendmsg",),
        checks=("firewall-opened",),
        target="the canary's IPv4 and IPv6 addresses, by a rule accepting each at the head of"
        " every nftables base chain of the sandbox's namespace (ip, ip6, inet, bridge, netdev,"
        " arp; NETLINK_NETFILTER), taken back at once; never where the probe stands in the"
        " host's namespace; an iptables-legacy table that may drop, or an nftables table"
        " another process owns, is an error (not opened); tc and cgroup BPF are not tried",
        ways=(
            "i386: socket, socketcall",
            "io_uring: IORING_OP_SOCKET (netfilter's netlink socket made by the ring, where"
            " socket(2) and the i386 entry refused it)",
        ),
    ),
    _net(
        _WHERE,
        "destinations other than the canary, the host and the metadata addresses",
        ("connect", "sendto"),
        checks=(
            "elsewhere4-tcp",
            "elsewhere4-udp",
            "elsewhere6-tcp",
            "elsewhere6-udp",
            "web4-tcp",
            "web4-udp",
            "web6-tcp",
            "web6-udp",
        ),
        target="the canary's stand-ins (netns mode): a random address of each range"
        " `[canary] elsewhere` names, per run (by default the private, shared, link-local and"
        " benchmarking ranges, outside the canary's own; a fleet adds a global address, the"
        " host's default gateways and its resolvers), where the canary answers on the run's"
        " high port and, at those picked from ranges, on the web's ports, 443 and 80, routed by"
        " a host rule for each"
        " such port alone",
    ),
    _net(
        _WHERE,
        "the host's addresses on its other interfaces, and destinations no stand-in is for",
        ("connect", "sendto"),
        unseen="an address the host holds itself answers before any rule of harness's (the"
        " local table), so no stand-in is put there: only the host's end of the canary's veth"
        " is tried (`host4-tcp`); and a sandbox that lets out one address alone, other than"
        " the canary's, the host's and its stand-ins, is not seen (the canary's own subnets"
        " and the stand-ins are picked at random per run, so no fixed list can single them"
        " out); nor one that lets out only ports other than the run's high port, 443 and 80"
        " (22, say) to addresses beyond harness's own: the stand-ins answer on those alone;"
        " nor, by default, one that lets out global addresses alone (the default stand-ins"
        " are none: a fleet's matrix adds 0.0.0.0/0 and 2000::/3)",
    ),
    _net(
        _HANDED,
        "sockets the workload holds when it starts",
        ("dup", "dup2", "dup3", "setns", "pidfd_getfd", "io_setup", "io_submit"),
        checks=("held-fds",),
        target="every descriptor held at the start, at any number, named with its kind and"
        " network namespace (SO_NETNS_COOKIE): whatever the socket leads to (connected), or"
        " the canary (unconnected; an IPv6 one also at the v4-mapped address where IPv6 has"
        " no route; a raw IP socket's own protocol; a packet socket's frame on its link; a"
        " unix stream, seqpacket or datagram socket to the canary's abstract names, which"
        " are the socket's namespace's, not the caller's); a TCP and a UDP socket per swept"
        " port made in every other network namespace it can enter (through its owning user"
        " namespace where need be), to the canary on that port; at most 160, more make the"
        " line an error",
        ways=(
            "a held TUN or TAP device: a UDP packet (a frame) written to it, to the host's address",
            "a held io_uring ring's registered files: IORING_OP_FIXED_FD_INSTALL, then as held",
            "a held namespace descriptor (nsfs) or pidfd: setns, then socket",
            "a held folder of a proc filesystem (a /proc, a /proc/<pid>): <pid>/ns/net, setns,"
            " then socket",
            "/proc/<pid>/ns/net of every visible process and thread: setns, then socket",
            "a proc filesystem mounted elsewhere (a host's at /host/proc): <pid>/ns/net, setns,"
            " then socket",
            "another process's socket of another network namespace: pidfd_getfd (ptrace's"
            " permission), then as held",
            "i386: socket, socketcall, setns, write, writev, sendto, sendmsg, sendmmsg,"
            " pwritev2, sendfile64, sendfile, splice",
            "io_uring: IORING_OP_SOCKET (the socket in a namespace entered made by the ring,"
            " where socket(2) and the i386 entry refused it)",
            "io_uring: IORING_OP_SENDMSG (a held connected socket's bytes, where each call that"
            " sends, writes or copies them was refused, and Linux AIO)",
            "io_uring: IORING_OP_SENDMSG with msg_name (a held unconnected socket's datagram,"
            " where every call that carries an address was refused, the i386 entry's sendto,"
            " sendmsg and sendmmsg too, each by its own number and by socketcall, which go"
            " first)",
            "write: a held connected socket's bytes by write(2), then writev, pwritev2 and"
            " sendmsg, where send(2) was refused",
            "sendmmsg: a held connected socket's bytes, where send(2), the write calls and"
            " sendmsg were refused (a filter keyed to its descriptor's number)",
            "sendfile: a held connected socket's bytes from a memfd, where each send and write"
            " call was refused",
            "splice: a held connected socket's bytes from a pipe, where each send and write"
            " call and sendfile were refused",
            "Linux AIO: io_submit's IOCB_CMD_PWRITE on a held connected socket (its descriptor"
            " in the iocb, where no filter looks), where each call that sends, writes or copies"
            " was refused",
            "renumbered: a copy of a held connected socket at another number (fcntl's"
            " F_DUPFD_CLOEXEC, F_DUPFD, dup, dup3), then send or write on it, where every way"
            " was refused at its own number",
            "sendto: MSG_FASTOPEN (a held unconnected TCP socket's connection made by its first"
            " bytes, where connect(2) and the i386 entry's and the ring's connect were refused;"
            " an IPv6 one's to the v4-mapped address too, its IPv6 SYN undone by shutdown(2);"
            " sendmsg's, then sendmmsg's, where sendto is refused too)",
            "connect: a held unconnected TCP socket's, where connect(2) was refused, by the i386"
            " entry's connect (then socketcall's), then io_uring's IORING_OP_CONNECT; once"
            " connected, its bytes go each way a held connected socket's do (a filter keyed to"
            " its number: the i386 entry's write)",
            "sendmsg: a held unconnected socket's datagram with its destination (msg_name),"
            " where sendto was refused (sendmmsg's where sendmsg is refused too)",
        ),
    ),
    _net(
        _HANDED,
        "System V and POSIX IPC shared with the host",
        (
            "msgget",
            "msgsnd",
            "msgrcv",
            "msgctl",
            "semget",
            "semop",
            "semtimedop",
            "semctl",
            "shmget",
            "shmat",
            "shmdt",
            "shmctl",
            "mq_open",
            "mq_unlink",
            "mq_timedsend",
            "mq_timedreceive",
            "mq_notify",
            "mq_getsetattr",
        ),
        checks=("ipc-sysv-msg", "ipc-sysv-shm", "ipc-posix-mq"),
        ways=(
            "i386: msgget, msgsnd, shmget, shmat, mq_open, mq_timedsend",
            "the i386 entry's ipc multiplexer: MSGGET and MSGSND, SHMGET and SHMAT by ipc (117),"
            " where the entry's own calls were refused too",
            "the i386 entry's time64 call: mq_timedsend_time64 (418), where mq_timedsend was"
            " refused on both entries",
        ),
        target="the canary's message queue and shared memory under the run's SysV key, and"
        " its POSIX queue under the run's name, in the host's IPC namespace, writable by any"
        " uid (semaphores carry a count, not bytes: a channel of a few bits, not tried)",
    ),
    # Issue 25: a policy's endpoint is allowed to the binaries it names, no other.
    _net(
        _FAMILY,
        "AF_INET TCP to an allowed destination, from a program the policy does not name",
        ("execve", "connect"),
        checks=("egress-other-binary",),
        target="the canary's allowed destination (where the policy names binaries)",
        ways=(
            "by name: started with the probe's argv[0] and named as the probe (PR_SET_NAME:"
            " the comm an eBPF hook reads), where as itself it did not get through (a"
            " supervisor that names programs by their file, its path or sha256, refuses it)",
            "by file name: a copy of its file under the probe's file name, in a folder of the"
            " allowed folder's (or /tmp's, /dev/shm's) it may run from, where by name it did"
            " not get through",
            "a socket it was handed: as itself, on a socket the probe made, inherited at its"
            " start, the probe holding it meanwhile (a supervisor that names the first"
            " process holding a socket names the probe; the reference names none where"
            " processes of two programs hold it)",
        ),
    ),
)
