"""The correct twins of the mutants (tests/e2e/test_properties.py): each the same shape
as a leaking mutant of matrices/mutants.toml with the one way it leaves open closed too
(a filter that checks the architecture, refuses io_uring, names every call), run on
its own and held `enforced`, so that what catches a mutant never calls a correct
sandbox violated. Kept apart from test_properties.py so that the suite's two lanes
share them (a module runs whole in one lane)."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.conftest import ROOT, harness_cli
from tests.e2e.helpers import cells_of, verdicts_of
from tests.e2e.test_properties import (
    EXEC_LIST_DENY_LISTS,
    I386,
    I386_LIST_WAYS,
    I386_WAYS,
    KILL_FILTER_LAUNCHER,
    MAKE_DENY_LISTS,
    PROPERTIES,
    URING,
    USERNS_RANGE_LAUNCHER,
    _ipc_twin,
    _landlock_twin_row,
    _matrix,
    _twin_check,
)
from tests.lab import require_tool


def test_tcp_without_connect_closed_by_the_filter_stays_enforced(tmp_path: Path) -> None:
    """The correct twins of the Fast Open and Multipath TCP mutants: a connect(2) ban
    whose filter refuses MSG_FASTOPEN on every send call, and Landlock's TCP connect
    right with the Multipath TCP socket refused too; the i386 entry's twin, every
    socket call of it refused, socketcall too; the held-netns twin, handed the
    host's network namespace without CAP_SYS_ADMIN; and the packet socket's twin, which
    keeps CAP_NET_RAW and refuses packet sockets too; the whole-type and named-protocol
    allow-lists with no network; and the unix socket ban and the connect(2) ban done
    right (architecture checked, io_uring refused) beside a host listener, and IP sockets
    refused right beside a sidecar proxy, relay and resolver (UDP and TCP), and connect(2)
    with the send calls refused right beside each, and beside a held network namespace,
    and connect(2) with Fast Open refused beside a held IPv6 TCP socket, and connect(2)
    with every addressed send call beside a held IPv6 UDP socket, and the i386 entry's
    addressed send calls refused, sendmmsg (345) among them, and unix datagram sockets
    alone, and a host datagram listener, with every addressed send call refused; a host
    process's abstract seqpacket and datagram sockets in the sandbox's network namespace
    behind Landlock's abstract unix scope, and a SOCKS4 relay that refuses every
    destination. Each way is
    refused by what the twin closes (its errno in the line), or reaches nothing, and the
    verdict is enforced."""
    for tool in ("bwrap", "ip"):
        require_tool(tool)
    script = ROOT / "scripts" / "mutant-sandbox"
    runtimes = "".join(
        f'[runtimes.{mode}]\nkind = "command"\n'
        f'argv = ["{script}", "{mode}", "{{allowed}}", "{{probe}}", "{{args}}"]\n'
        'allowed_inside = "/allowed"\nexpect = { egress_confinement = "enforced" }\n'
        for mode in (
            "fastopen-twin",
            "landlock-tcp",
            "i386-twin",
            "held-netns-twin",
            "packet-socket-twin",
            "firewall-packet-twin",
            "route-ioctl-twin",
            "socket-type-exact-twin",
            "socket-proto-exact-twin",
            "host-listener-twin",
            "host-listener-connect-twin",
            "loopback-proxy-twin",
            "udp-sidecar-twin",
            "held-netns-filter-twin",
            "sidecar-resolver-twin",
            "sidecar-resolver-tcp-twin",
            "loopback-proxy-connect-twin",
            "udp-sidecar-connect-twin",
            "sidecar-resolver-connect-twin",
            "sidecar-resolver-tcp-connect-twin",
            "held-inet6-connect-twin",
            "held-inet6-sendmsg-twin",
            "held-inet6-connect-keyed-twin",
            "i386-sendmmsg-twin",
            "abstract-unix-dgram-twin",
            "host-listener-sendmsg-twin",
            "netns-listener-twin",
            "loopback-proxy-socks4-twin",
        )
    )
    matrix = _matrix(
        tmp_path, runtimes, scenarios='["egress-confinement"]', canary='[canary]\nmode = "netns"\n'
    )
    result = harness_cli("run", matrix, "--out", tmp_path / "out")
    assert result.code == 0, result.stdout + result.stderr
    v = verdicts_of(tmp_path / "out")
    for mode, connect_errno in (("fastopen-twin", "EPERM"), ("landlock-tcp", "EACCES")):
        row = v[("localhost", mode, "egress_confinement")]
        assert (row["observed"], row["verdict"]) == ("enforced", "pass"), row
        checks = {c["id"]: c for c in row["checks"]}
        for call in ("sendto", "sendmsg", "sendmmsg"):
            line = checks[f"tfo4-{call}"]
            assert line["outcome"] == "blocked" and line["errno"] == "EPERM", line
            assert f"{call} with MSG_FASTOPEN to " in line["detail"], line
        assert checks["tfo4-connect"]["errno"] == connect_errno, checks["tfo4-connect"]
        assert checks["mptcp4"]["outcome"] == "blocked", checks["mptcp4"]
        assert checks["mptcp4"]["detail"].startswith("socket for "), checks["mptcp4"]
    # The i386 entry's twin: each line refused at its socket, by both ways; the ring's
    # lines at io_uring_setup, by x86_64's entry and the i386 entry's.
    twin = {c["id"]: c for c in v[("localhost", "i386-twin", "egress_confinement")]["checks"]}
    assert v[("localhost", "i386-twin", "egress_confinement")]["observed"] == "enforced"
    for check_id in I386:
        line = twin[check_id]
        assert line["outcome"] == "blocked" and line["errno"] == "EPERM", line
        assert "(socketcall socket (i386)): " in line["detail"], line
    for check_id in URING:
        line = twin[check_id]
        assert line["outcome"] == "blocked" and line["errno"] == "EPERM", line
        assert "io_uring_setup)" in line["detail"], line
    # The held network namespace's twin: handed in, setns refused (no CAP_SYS_ADMIN).
    row = v[("localhost", "held-netns-twin", "egress_confinement")]
    assert (row["observed"], row["verdict"]) == ("enforced", "pass"), row
    held = {c["id"]: c for c in row["checks"]}["held-fds"]
    assert held["outcome"] == "blocked" and held["errno"] == "EPERM", held
    assert held["detail"].startswith("setns into held descriptor "), held
    row = v[("localhost", "packet-socket-twin", "egress_confinement")]
    assert (row["observed"], row["verdict"]) == ("enforced", "pass"), row
    packet = {c["id"]: c for c in row["checks"]}["packet4"]
    assert packet["outcome"] == "blocked" and packet["errno"] == "EPERM", packet
    assert packet["detail"].startswith("socket(AF_PACKET)"), packet
    # The firewall's twin: no CAP_NET_RAW, so no packet socket by any way.
    row = v[("localhost", "firewall-packet-twin", "egress_confinement")]
    assert (row["observed"], row["verdict"]) == ("enforced", "pass"), row
    packet = {c["id"]: c for c in row["checks"]}["packet4"]
    assert packet["outcome"] == "blocked" and packet["errno"] == "EPERM", packet
    assert "without CAP_NET_RAW (which every way asks)" in packet["detail"], packet
    # The route calls' twin: CAP_NET_ADMIN kept, the route ioctls refused by the low 32
    # bits of their request and netlink's route sockets refused: no route by any way.
    row = v[("localhost", "route-ioctl-twin", "egress_confinement")]
    assert (row["observed"], row["verdict"]) == ("enforced", "pass"), row
    route = {c["id"]: c for c in row["checks"]}["route-made"]
    assert route["outcome"] == "blocked" and route["errno"] == "EPERM", route
    # The whole-type filter's twin, with no network: the plain UDP socket is made (the
    # way named), and its datagram reaches nothing.
    row = v[("localhost", "socket-type-exact-twin", "egress_confinement")]
    assert (row["observed"], row["verdict"]) == ("enforced", "pass"), row
    udp = {c["id"]: c for c in row["checks"]}["udp4-high"]
    assert udp["outcome"] == "blocked", udp
    assert "(its socket made with no flag in its type" in udp["detail"], udp
    # curl's allow-list's twin, with no network: the TCP socket is made with its protocol
    # named (the way named), and reaches nothing.
    row = v[("localhost", "socket-proto-exact-twin", "egress_confinement")]
    assert (row["observed"], row["verdict"]) == ("enforced", "pass"), row
    tcp = {c["id"]: c for c in row["checks"]}["tcp4-high"]
    assert tcp["outcome"] == "blocked", tcp
    assert "(its socket made with protocol IPPROTO_TCP, not 0" in tcp["detail"], tcp
    # The unix socket ban's twin (architecture checked, io_uring refused): the host's
    # listener bound in stays out of reach, its socket refused by every entry.
    row = v[("localhost", "host-listener-twin", "egress_confinement")]
    assert (row["observed"], row["verdict"]) == ("enforced", "pass"), row
    host = {c["id"]: c for c in row["checks"]}["unix-host"]
    assert host["outcome"] == "blocked" and host["errno"] == "EPERM", host
    # connect(2)'s ban done right: no connect reaches the listener by any entry.
    row = v[("localhost", "host-listener-connect-twin", "egress_confinement")]
    assert (row["observed"], row["verdict"]) == ("enforced", "pass"), row
    host = {c["id"]: c for c in row["checks"]}["unix-host"]
    assert host["outcome"] == "blocked" and host["errno"] == "EPERM", host
    # IP sockets refused right (architecture checked, io_uring refused) beside a sidecar
    # proxy or relay inside: its socket refused by every entry.
    for mode, check_id in (
        ("loopback-proxy-twin", "tcp-proxy"),
        ("udp-sidecar-twin", "udp-relay"),
        ("sidecar-resolver-twin", "dns-own"),
        ("sidecar-resolver-tcp-twin", "dns-own-tcp"),
        # connect(2) and the send calls refused right beside each: no entry's connect, no
        # Fast Open, no unconnected datagram reaches the sidecar.
        ("loopback-proxy-connect-twin", "tcp-proxy"),
        ("udp-sidecar-connect-twin", "udp-relay"),
        ("sidecar-resolver-connect-twin", "dns-own"),
        ("sidecar-resolver-tcp-connect-twin", "dns-own-tcp"),
    ):
        row = v[("localhost", mode, "egress_confinement")]
        assert (row["observed"], row["verdict"]) == ("enforced", "pass"), row
        relay = {c["id"]: c for c in row["checks"]}[check_id]
        assert relay["outcome"] == "blocked" and relay["errno"] == "EPERM", relay
    # The same filter with the host's network namespace handed in and CAP_SYS_ADMIN kept:
    # setns goes through, and no socket is made there by any entry.
    row = v[("localhost", "held-netns-filter-twin", "egress_confinement")]
    assert (row["observed"], row["verdict"]) == ("enforced", "pass"), row
    held = {c["id"]: c for c in row["checks"]}["held-fds"]
    assert held["outcome"] == "blocked" and held["errno"] == "EPERM", held
    assert held["detail"].startswith("a socket in held descriptor "), held
    # connect(2) refused in every entry beside a held IPv6 TCP socket, and MSG_FASTOPEN
    # on every send call: neither its IPv6 address nor the v4-mapped one is reached.
    row = v[("localhost", "held-inet6-connect-twin", "egress_confinement")]
    assert (row["observed"], row["verdict"]) == ("enforced", "pass"), row
    held = {c["id"]: c for c in row["checks"]}["held-fds"]
    assert held["outcome"] == "blocked" and held["errno"] == "EPERM", held
    assert "then (EPERM) [::ffff:" in held["detail"], held
    # A host datagram listener bound in, every call that carries an address refused.
    row = v[("localhost", "host-listener-sendmsg-twin", "egress_confinement")]
    assert (row["observed"], row["verdict"]) == ("enforced", "pass"), row
    host = {c["id"]: c for c in row["checks"]}["unix-host"]
    assert host["outcome"] == "blocked" and host["errno"] == "EPERM", host
    # Unix datagram sockets alone, every call that carries an address refused: the
    # canary's abstract datagram name is sent nothing.
    row = v[("localhost", "abstract-unix-dgram-twin", "egress_confinement")]
    assert (row["observed"], row["verdict"]) == ("enforced", "pass"), row
    line = {c["id"]: c for c in row["checks"]}["unix-abstract-dgram"]
    assert line["outcome"] == "blocked" and line["errno"] == "EPERM", line
    # Every call that carries an address refused on both entries, sendmmsg (345) too:
    # the i386 lines' datagrams go by none of them.
    row = v[("localhost", "i386-sendmmsg-twin", "egress_confinement")]
    assert (row["observed"], row["verdict"]) == ("enforced", "pass"), row
    for check_id in ("i386-udp4", "i386-udp6"):
        line = {c["id"]: c for c in row["checks"]}[check_id]
        assert line["outcome"] == "blocked" and "sendmmsg (i386)" in line["detail"], line
    # connect(2) and every send call that carries an address refused beside a held IPv6
    # UDP socket: its datagram goes by none of them, to either address.
    row = v[("localhost", "held-inet6-sendmsg-twin", "egress_confinement")]
    assert (row["observed"], row["verdict"]) == ("enforced", "pass"), row
    held = {c["id"]: c for c in row["checks"]}["held-fds"]
    assert held["outcome"] == "blocked" and held["errno"] == "EPERM", held
    # The same namespace's TCP socket behind a filter keyed to its number, connect(2)
    # refused on every entry: no connect takes it anywhere.
    row = v[("localhost", "held-inet6-connect-keyed-twin", "egress_confinement")]
    assert (row["observed"], row["verdict"]) == ("enforced", "pass"), row
    held = {c["id"]: c for c in row["checks"]}["held-fds"]
    assert held["outcome"] == "blocked" and held["errno"] == "EPERM", held
    # A host process's abstract seqpacket listener and datagram socket in the sandbox's
    # network namespace, the workload scoped by Landlock from abstract unix sockets made
    # outside its domain: each name found, each refused.
    row = v[("localhost", "netns-listener-twin", "egress_confinement")]
    assert (row["observed"], row["verdict"]) == ("enforced", "pass"), row
    host = {c["id"]: c for c in row["checks"]}["unix-host"]
    assert host["outcome"] == "blocked" and "2 more found inside: " in host["detail"], host
    assert " refused, 0 the sandbox's own" in host["detail"], host  # (the host's listed too)
    # A SOCKS4 relay on the sandbox's loopback that refuses every destination (91).
    row = v[("localhost", "loopback-proxy-socks4-twin", "egress_confinement")]
    assert (row["observed"], row["verdict"]) == ("enforced", "pass"), row
    relay = {c["id"]: c for c in row["checks"]}["tcp-proxy"]
    assert relay["outcome"] == "blocked" and "127.0.0.1:1080" in relay["detail"], relay


def test_a_held_socket_and_an_i386_connect_behind_complete_filters_stay_enforced(
    tmp_path: Path,
) -> None:
    """The bwrap-held-socket-* mutants' correct twin: the same held TCP connection (to a
    host service on loopback that relays to the canary) behind the same filter, every way
    into its bytes refused: send, the write calls, sendmsg, sendmmsg, sendfile, splice
    (by the descriptor's number; dup, dup2, dup3 and fcntl's F_DUPFD too, so that no
    copy at another number is made), Linux AIO, io_uring and every other architecture.
    The held-fds line names the ways it tried, each refused
    (EPERM), and the verdict is enforced. And bwrap-host-listener-i386-iplen's: the i386
    entry's connect refused at every length, each asked once per length: the host's
    listener is reached by none."""
    for tool in ("bwrap", "ip"):
        require_tool(tool)
    script = ROOT / "scripts" / "mutant-sandbox"
    runtime = "".join(
        f'[runtimes.{mode}]\nkind = "command"\n'
        f'argv = ["{script}", "{mode}", "{{allowed}}", "{{probe}}", "{{args}}"]\n'
        'allowed_inside = "/allowed"\nexpect = { egress_confinement = "enforced" }\n'
        for mode in ("held-socket-twin", "host-listener-i386-iplen-twin")
    )
    matrix = _matrix(
        tmp_path, runtime, scenarios='["egress-confinement"]', canary='[canary]\nmode = "netns"\n'
    )
    result = harness_cli("run", matrix, "--out", tmp_path / "out")
    assert result.code == 0, result.stdout + result.stderr
    row = verdicts_of(tmp_path / "out")[("localhost", "held-socket-twin", "egress_confinement")]
    assert (row["observed"], row["verdict"]) == ("enforced", "pass"), row
    held = {c["id"]: c for c in row["checks"]}["held-fds"]
    assert held["outcome"] == "blocked" and held["errno"] == "EPERM", held
    assert "(each way refused: the send, write and copy calls, Linux AIO, io_uring" in str(
        held["detail"]
    ), held
    row = verdicts_of(tmp_path / "out")[
        ("localhost", "host-listener-i386-iplen-twin", "egress_confinement")
    ]
    assert (row["observed"], row["verdict"]) == ("enforced", "pass"), row
    host = {c["id"]: c for c in row["checks"]}["unix-host"]
    assert host["outcome"] == "blocked" and host["errno"] == "EPERM", host


def test_a_held_ring_behind_a_complete_filter_stays_enforced(tmp_path: Path) -> None:
    """landlock-held-ring's correct twin: the same leaked ring, its launcher's personality
    registered, into the Landlock reference whose filter refuses io_uring whole. Each
    request through the ring is refused (EPERM), and the verdict is enforced."""
    launcher = ROOT / "scripts" / "mutant-held-ring"
    argv = [
        *(str(launcher), "--personality", "3"),
        *("unshare", "--net", "--ipc", "--uts", "--pid", "--fork", "--mount-proc", "--"),
        *("{probe}", "confine", "--read", "/etc", "--read", "/proc"),
        *("--write", "/tmp", "--write", "/dev/null", "--read", "{probe}", "--read", "{helpers}"),
        *("--write", "{allowed}", "--", "{probe}", "{args}"),
    ]
    row = _landlock_twin_row(tmp_path, "landlock-held-ring-twin", argv, "ring")
    assert (row["observed"], row["verdict"]) == ("enforced", "pass"), row
    held = {c["id"]: c for c in row["checks"]}["fs-inherited-fds"]
    assert held["outcome"] == "blocked" and "3:[io_uring]" in held["detail"], held
    uring = {c["id"]: c for c in row["checks"]}["fs-io-uring"]  # the held ring tried too
    assert uring["outcome"] == "blocked", uring
    cell = cells_of(tmp_path / "out")[("localhost", "landlock-held-ring-twin")]
    line = next(
        json.loads(raw) for raw in cell["stdout"].splitlines() if '"fs-inherited-fds"' in raw
    )
    assert line["evidence"]["ring_refused"] == "EPERM", line


def test_a_cgroup_of_its_own_bound_read_only_stays_enforced(tmp_path: Path) -> None:
    """bwrap-cgroup-own-cpuset's correct twin: the same launcher's cpuset cgroup (one
    CPU) bound read-only: its usage shown, no limit of its own written back, and nothing
    else there is the host's; enforced, priv-root-kernel-state blocked."""
    require_tool("bwrap")
    script = str(ROOT / "scripts" / "mutant-cgroup-own")
    argv = [script, "--ro", "cpuset", "{probe}", "{helpers}", "{allowed}", "{args}"]
    check = _twin_check(
        tmp_path,
        argv,
        "privilege_floor",
        "priv-root-kernel-state",
        'allowed_inside = "/allowed"\nhelpers_inside = "/helpers"\n',
    )
    assert check["outcome"] == "blocked", check


def test_a_jail_entered_behind_a_private_tmp_stays_enforced(tmp_path: Path) -> None:
    """jail-keep-cwd-private-tmp's correct twin: the same launcher (its /tmp, /var/tmp,
    /root and /home private tmpfs mounts, standing at the host's /) entering its jail:
    the working folder is the jail's own root, on a filesystem of the sandbox's own,
    which fs-cwd does not judge; enforced, fs-cwd blocked."""
    spec = tomllib.loads((ROOT / "matrices" / "mutants.toml").read_text())["runtimes"][
        "jail-keep-cwd-private-tmp"
    ]
    assert "--keep-cwd" in spec["argv"]
    argv = ["" if a == "--keep-cwd" else a for a in spec["argv"]]
    check = _twin_check(
        tmp_path, argv, "filesystem_confinement", "fs-cwd", 'allowed_inside = "/allowed"\n'
    )
    assert check["outcome"] == "blocked", check


def test_a_jails_init_inside_it_behind_a_private_tmp_stays_enforced(tmp_path: Path) -> None:
    """chroot-init-outside-private-tmp's correct twin: the same launcher (its /tmp,
    /var/tmp, /root and /home private) execs the chroot, so the workload is pid 1 and
    /proc/1/root is its own jail, a filesystem of the sandbox's own that fs-proc-1-root
    does not judge; enforced, fs-proc-1-root blocked."""
    spec = tomllib.loads((ROOT / "matrices" / "mutants.toml").read_text())["runtimes"][
        "chroot-init-outside-private-tmp"
    ]
    assert "outside" in spec["argv"]
    argv = ["inside" if a == "outside" else a for a in spec["argv"]]
    check = _twin_check(
        tmp_path, argv, "filesystem_confinement", "fs-proc-1-root", 'allowed_inside = "/allowed"\n'
    )
    assert check["outcome"] == "blocked", check


def test_a_jail_with_no_helper_left_behind_a_private_tmp_stays_enforced(tmp_path: Path) -> None:
    """chroot-helper-outside-private-tmp's correct twin: the same launcher (its /tmp,
    /var/tmp, /root and /home private) leaves no helper in the jail's PID namespace, so
    the only process there is the workload, pid 1 in its own jail; enforced, fs-proc-fds
    blocked."""
    spec = tomllib.loads((ROOT / "matrices" / "mutants.toml").read_text())["runtimes"][
        "chroot-helper-outside-private-tmp"
    ]
    assert "helper" in spec["argv"]
    argv = ["" if a == "helper" else a for a in spec["argv"]]
    check = _twin_check(
        tmp_path, argv, "filesystem_confinement", "fs-proc-fds", 'allowed_inside = "/allowed"\n'
    )
    assert check["outcome"] == "blocked", check


def test_a_chroot_filter_that_checks_the_architecture_keeps_the_jail(tmp_path: Path) -> None:
    """jail-chroot-i386's correct twin: the same jail keeping CAP_SYS_CHROOT, chroot(2)
    refused by a filter that checks the architecture (the i386 entry's calls refused):
    x86_64's chroot and the i386 entry's are both refused, enforced, fs-chroot-escape
    blocked."""
    spec = tomllib.loads((ROOT / "matrices" / "mutants.toml").read_text())["runtimes"][
        "jail-chroot-i386"
    ]
    argv = [a for a in spec["argv"] if a != "--any-arch"]
    assert "--deny-chroot" in argv and "--keep-chroot" in argv
    check = _twin_check(
        tmp_path,
        argv,
        "filesystem_confinement",
        "fs-chroot-escape",
        'allowed_inside = "/allowed"\n',
    )
    assert check["outcome"] == "blocked", check


def test_a_truncate_filter_behind_landlocks_truncate_right_stays_enforced(tmp_path: Path) -> None:
    """landlock-truncate-filtered's and landlock-i386-truncate's correct twin: the same
    filter (truncate and ftruncate refused by x86_64's numbers, the i386 entry's let
    through) behind Landlock handling TRUNCATE (ABI 3+). truncate(2) is refused by the
    filter, so the i386 ways are tried too; Landlock refuses them and the open for reading
    with O_TRUNC: enforced, both of the row's checks blocked."""
    argv = [
        *("unshare", "--net", "--ipc", "--uts", "--pid", "--fork", "--mount-proc", "--"),
        *("{probe}", "confine", "--deny", "truncate", "--deny", "ftruncate"),
        *("--i386-open", "truncate", "--read", "/etc", "--read", "/proc"),
        *("--write", "/tmp", "--write", "/dev/null", "--read", "{probe}", "--read", "{helpers}"),
        *("--write", "{allowed}", "--", "{probe}", "{args}"),
    ]
    row = _landlock_twin_row(tmp_path, "truncate-twin", argv, "truncate")
    assert (row["observed"], row["verdict"]) == ("enforced", "pass"), row
    checks = {c["id"]: c for c in row["checks"]}
    for check_id in ("fs-truncate-outside", "fs-write-read-only"):
        assert checks[check_id]["outcome"] == "blocked", checks[check_id]


def test_a_removal_filter_that_checks_the_architecture_stays_enforced(tmp_path: Path) -> None:
    """landlock-remove-file-filtered-i386's and landlock-remove-dir-filtered-i386's correct
    twin: REMOVE_FILE and REMOVE_DIR unhandled, unlink, unlinkat and rmdir refused by a
    filter that checks the architecture and refuses io_uring. x86_64's calls are refused
    as a filter refuses, so the i386 entry's and IORING_OP_UNLINKAT are tried too, each
    refused: enforced, both rows' checks blocked."""
    argv = [
        *("unshare", "--net", "--ipc", "--uts", "--pid", "--fork", "--mount-proc", "--"),
        *("{probe}", "confine", "--unhandled", "remove-file", "--unhandled", "remove-dir"),
        *("--deny", "unlink", "--deny", "unlinkat", "--deny", "rmdir"),
        *("--read", "/etc", "--read", "/proc", "--write", "/tmp", "--write", "/dev/null"),
        *("--read", "{probe}", "--read", "{helpers}", "--write", "{allowed}"),
        *("--", "{probe}", "{args}"),
    ]
    row = _landlock_twin_row(tmp_path, "remove-twin", argv, "remove")
    assert (row["observed"], row["verdict"]) == ("enforced", "pass"), row
    checks = {c["id"]: c for c in row["checks"]}
    for check_id in ("fs-unlink-outside", "fs-rmdir-outside", "fs-write-read-only"):
        assert checks[check_id]["outcome"] == "blocked", checks[check_id]


@pytest.mark.parametrize("right", sorted(MAKE_DENY_LISTS))
def test_a_make_deny_list_that_checks_the_architecture_stays_enforced(
    tmp_path: Path, right: str
) -> None:
    """The landlock-make-*-filtered mutants' correct twin: the right left unhandled and
    the same deny-list of x86_64's calls, the filter checking the architecture and
    refusing io_uring (the reference's). Every native call is refused as a filter
    refuses (EPERM), so the i386 entry's calls and io_uring's opcodes are tried too, and
    each is refused: enforced, the row's check blocked."""
    check_id, calls = MAKE_DENY_LISTS[right]
    deny = [arg for call in calls for arg in ("--deny", call)]
    argv = [
        *("unshare", "--net", "--ipc", "--uts", "--pid", "--fork", "--mount-proc", "--"),
        *("{probe}", "confine", "--unhandled", right, *deny, "--read", "/etc", "--read", "/proc"),
        *("--write", "/tmp", "--write", "/dev/null", "--read", "{probe}", "--read", "{helpers}"),
        *("--write", "{allowed}", "--", "{probe}", "{args}"),
    ]
    row = _landlock_twin_row(tmp_path, f"{right}-twin", argv, right)
    assert (row["observed"], row["verdict"]) == ("enforced", "pass"), row
    check = {c["id"]: c for c in row["checks"]}[check_id]
    assert check["outcome"] == "blocked", check


@pytest.mark.parametrize("mutant", sorted(EXEC_LIST_DENY_LISTS))
def test_an_exec_or_list_deny_list_that_checks_the_architecture_stays_enforced(
    tmp_path: Path, mutant: str
) -> None:
    """landlock-exec-filtered-i386's and landlock-list-filtered-i386's correct twin (and
    their -execveat-i386 and -getdents-i386 siblings'): the same launcher, the right left
    unhandled and the same deny-list of x86_64's execve and execveat (or getdents and
    getdents64), the filter checking the architecture (the reference's). The native calls
    are refused as a filter refuses (EPERM), so the i386 entry's are tried too, and
    refused: enforced, the row's check blocked."""
    argv = list(
        tomllib.loads((ROOT / "matrices" / "mutants.toml").read_text())["runtimes"][mutant]["argv"]
    )
    at = argv.index("--i386-open")
    del argv[at : at + 2]
    row = _landlock_twin_row(tmp_path, "deny-twin", argv, mutant.split("-")[1])
    assert (row["observed"], row["verdict"]) == ("enforced", "pass"), row
    check_id = EXEC_LIST_DENY_LISTS[mutant]
    check = {c["id"]: c for c in row["checks"]}[check_id]
    assert check["outcome"] == "blocked", check
    # the i386 entry's ways were tried, and refused by the filter
    cell = cells_of(tmp_path / "out")[("localhost", "deny-twin")]
    line = next(json.loads(raw) for raw in cell["stdout"].splitlines() if f'"{check_id}"' in raw)
    assert line["evidence"]["i386"] == "EPERM", line


def test_a_make_reg_deny_list_that_checks_the_architecture_makes_no_file(tmp_path: Path) -> None:
    """The landlock-make-reg-filtered mutants' correct twin: MAKE_REG unhandled, the
    creating opens (by their flags), creat, openat2, mknod and mknodat refused by a filter
    that checks the architecture and refuses io_uring. Every way fs-create-outside tries
    (x86_64's, the i386 entry's, io_uring's) is refused and no file is made: not
    violated. The list refuses the allowed folder's own creations too, so the inside
    control fails (the control file never shows on the host) and the verdict is
    inconclusive, never enforced."""
    deny = ("open-creat", "creat", "openat2", "mknod", "mknodat")
    argv = [
        *("unshare", "--net", "--ipc", "--uts", "--pid", "--fork", "--mount-proc", "--"),
        *("{probe}", "confine", "--unhandled", "make-reg"),
        *(arg for call in deny for arg in ("--deny", call)),
        *("--read", "/etc", "--read", "/proc", "--write", "/tmp", "--write", "/dev/null"),
        *("--read", "{probe}", "--read", "{helpers}", "--write", "{allowed}"),
        *("--", "{probe}", "{args}"),
    ]
    policy = ROOT / "policies" / "landlock-offline-etc.yaml"
    runtime = (
        f'[runtimes.reg-twin]\nkind = "command"\nargv = {json.dumps(argv)}\n'
        f'policy = "{policy}"\nexpect = {{ filesystem_confinement = "enforced" }}\n'
    )
    matrix = _matrix(tmp_path, runtime, scenarios='["filesystem-confinement"]')
    work = Path("/var/tmp") / f"harness-t-reg-{os.getpid()}"
    inventory = tmp_path / "inv.toml"
    inventory.write_text(inventory.read_text().replace(f"{tmp_path}/work", str(work)))
    try:
        result = harness_cli("run", matrix, "--out", tmp_path / "out")
    finally:
        subprocess.run(["rm", "-rf", "--one-file-system", str(work)], check=False)
    assert result.code == 3, result.stdout + result.stderr
    row = verdicts_of(tmp_path / "out")[("localhost", "reg-twin", "filesystem_confinement")]
    assert row["observed"] == "inconclusive", row
    checks = {c["id"]: c for c in row["checks"]}
    assert checks["fs-allowed-write"]["outcome"] == "failed", checks["fs-allowed-write"]
    assert checks["fs-create-outside"]["outcome"] == "blocked", checks["fs-create-outside"]


def test_a_truncate_filter_behind_a_handled_truncate_right_stays_enforced(tmp_path: Path) -> None:
    """landlock-truncate-bin-filtered's correct twin: the same two layers and filter, the
    first layer handling TRUNCATE too, so that nothing in the host's /usr/sbin may be cut.
    harness's decoy there is tried by every way (truncate refused by the filter, an open
    with O_TRUNC by Landlock, the i386 entry by the filter): enforced."""
    mutant = tomllib.loads((ROOT / "matrices" / "mutants.toml").read_text())["runtimes"][
        "landlock-truncate-bin-filtered"
    ]
    argv = list(mutant["argv"])
    at = argv.index("--unhandled")
    del argv[at : at + 2]
    assert "--unhandled" not in argv and argv.count("--deny") == 2
    policy = ROOT / "policies" / "landlock-offline.yaml"
    runtime = (
        f'[runtimes.bin-twin]\nkind = "command"\nargv = {json.dumps(argv)}\n'
        f'policy = "{policy}"\nexpect = {{ filesystem_confinement = "enforced" }}\n'
    )
    # The default work folder, as for matrices/mutants.toml: one below /tmp, which
    # Landlock lets the workload write, would hold the outside folder.
    matrix = tmp_path / "m.toml"
    matrix.write_text(
        f'name = "t"\ninventory = "{ROOT / "hosts" / "local.toml"}"\n'
        f'scenarios = ["filesystem-confinement"]\n[settings]\ntimeout = 60\n{runtime}'
    )
    result = harness_cli("run", matrix, "--out", tmp_path / "out")
    assert result.code == 0, result.stdout + result.stderr
    row = verdicts_of(tmp_path / "out")[("localhost", "bin-twin", "filesystem_confinement")]
    assert (row["observed"], row["verdict"]) == ("enforced", "pass"), row
    reach = {c["id"]: c for c in row["checks"]}["fs-write-reach"]
    assert reach["outcome"] == "blocked", reach
    cell = cells_of(tmp_path / "out")[("localhost", "bin-twin")]
    decoys = cell["host_side"]["decoys"]
    assert decoys["planted"] == ["/usr/sbin"], decoys


def test_a_deny_list_of_every_metadata_call_beside_a_held_token_stays_enforced(
    tmp_path: Path,
) -> None:
    """bwrap-held-token-fchmodat2's, -i386's and -chown's correct twin: the same leaked
    token, CAP_CHOWN kept, behind a deny-list naming every call that changes a file's
    metadata (fchmodat2 and the owner's too) which checks the architecture. Each way
    through the descriptor is refused (EPERM): enforced."""
    require_tool("bwrap")
    mutant = tomllib.loads((ROOT / "matrices" / "mutants.toml").read_text())["runtimes"][
        "bwrap-held-token-chown"
    ]
    argv = list(mutant["argv"])
    at = argv.index("scripts/mutant-seccomp")
    argv[at] = str(ROOT / "scripts" / "mutant-seccomp")
    argv[at + 1] += ",chown,fchown,lchown,fchownat"
    assert "fchmodat2" in argv[at + 1] and "--any-arch" not in argv
    runtime = (
        f'[runtimes.token-twin]\nkind = "command"\nargv = {json.dumps(argv)}\n'
        'allowed_inside = "/allowed"\nhelpers_inside = "/helpers"\n'
        'expect = { filesystem_confinement = "enforced" }\n'
    )
    matrix = _matrix(tmp_path, runtime, scenarios='["filesystem-confinement"]')
    result = harness_cli("run", matrix, "--out", tmp_path / "out")
    assert result.code == 0, result.stdout + result.stderr
    row = verdicts_of(tmp_path / "out")[("localhost", "token-twin", "filesystem_confinement")]
    assert (row["observed"], row["verdict"]) == ("enforced", "pass"), row
    held = {c["id"]: c for c in row["checks"]}["fs-inherited-fds"]
    assert held["outcome"] == "blocked" and "3:file" in held["detail"], held


def test_a_user_namespace_of_unprivileged_host_ids_stays_enforced(tmp_path: Path) -> None:
    """bwrap as root of a user namespace mapped to unprivileged host ids (100000 and
    up), with a PID namespace and a writable /proc of its own: since 6.14 its pid_max
    is its PID namespace's own (the host's is unchanged), and every other sysctl is
    the host's and refused. It was called violated by the pid_max it may write."""
    require_tool("bwrap")
    argv = [
        *(sys.executable, "-c", USERNS_RANGE_LAUNCHER),
        *("bwrap", "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts"),
        *("--unshare-cgroup", "--die-with-parent", "--new-session"),
        *("--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"),
        *("--ro-bind", "{probe}", "/probe", "--bind", "{allowed}", "/allowed"),
        *("--ro-bind", "{helpers}", "/helpers", "--proc", "/proc", "--dev", "/dev"),
        *("--tmpfs", "/tmp", "--", "/probe", "{args}"),
    ]
    runtime = (
        f'[runtimes.bwrap-userns-range]\nkind = "command"\nargv = {json.dumps(argv)}\n'
        'allowed_inside = "/allowed"\nhelpers_inside = "/helpers"\n'
        'expect = { privilege_floor = "enforced" }\n'
    )
    matrix = _matrix(tmp_path, runtime, scenarios='["privilege-floor"]')
    # The namespace's root is host uid 100000: the work folder must be one it can reach.
    work = Path("/var/tmp") / f"harness-t-userns-{os.getpid()}"
    inventory = tmp_path / "inv.toml"
    inventory.write_text(inventory.read_text().replace(f"{tmp_path}/work", str(work)))
    try:
        result = harness_cli("run", matrix, "--out", tmp_path / "out")
    finally:
        subprocess.run(["rm", "-rf", "--one-file-system", str(work)], check=False)
    assert result.code == 0, result.stdout + result.stderr
    row = verdicts_of(tmp_path / "out")[("localhost", "bwrap-userns-range", "privilege_floor")]
    assert (row["observed"], row["verdict"]) == ("enforced", "pass"), row
    state = {c["id"]: c for c in row["checks"]}["priv-root-kernel-state"]
    assert state["outcome"] == "blocked", state


def test_a_proc_of_pid_entries_alone_stays_enforced(tmp_path: Path) -> None:
    """bwrap whose /proc is its own PID namespace's, mounted subset=pid (no /proc/net
    link: the network namespace's tables are at /proc/self/net), CAP_SYS_ADMIN dropped
    before the workload: its listeners are listed there, so tcp-proxy and udp-relay
    are judged, not errors, and egress is enforced. It was inconclusive."""
    require_tool("bwrap")
    drop = "-all,+setuid,+setgid"
    script = (
        "mount -t proc -o ro,hidepid=invisible,subset=pid proc /proc && exec setpriv"
        f' --bounding-set={drop} --inh-caps={drop} --ambient-caps={drop} -- /probe "$@"'
    )
    argv = [
        *("bwrap", "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts"),
        *("--unshare-cgroup", "--die-with-parent", "--new-session", "--cap-drop", "ALL"),
        *("--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SYS_ADMIN"),
        *("--cap-add", "CAP_SETPCAP", "--ro-bind", "/usr", "/usr"),
        *("--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib"),
        *("--symlink", "usr/lib64", "/lib64", "--ro-bind", "{probe}", "/probe"),
        *("--bind", "{allowed}", "/allowed", "--ro-bind", "{helpers}", "/helpers"),
        *("--dir", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"),
        *("--", "/bin/sh", "-c", script, "sh", "{args}"),
    ]
    runtime = (
        f'[runtimes.bwrap-proc-subset]\nkind = "command"\nargv = {json.dumps(argv)}\n'
        'allowed_inside = "/allowed"\nhelpers_inside = "/helpers"\n'
        'expect = { egress_confinement = "enforced" }\n'
    )
    matrix = _matrix(
        tmp_path, runtime, scenarios='["egress-confinement"]', canary='[canary]\nmode = "netns"\n'
    )
    result = harness_cli("run", matrix, "--out", tmp_path / "out")
    assert result.code == 0, result.stdout + result.stderr
    row = verdicts_of(tmp_path / "out")[("localhost", "bwrap-proc-subset", "egress_confinement")]
    assert (row["observed"], row["verdict"]) == ("enforced", "pass"), row
    checks = {c["id"]: c for c in row["checks"]}
    for check in ("tcp-proxy", "udp-relay"):
        assert checks[check]["outcome"] == "blocked", checks[check]


def test_a_filter_that_kills_on_refused_calls_stays_enforced(tmp_path: Path) -> None:
    """local.toml's bwrap behind a seccomp filter that kills the process (SIGSYS) on
    io_uring, file handles, the kernel's privileged operations (reboot, kexec_load,
    adjtimex, swapon, acct, syslog, ioperm, bpf, perf_event_open), unshare, chroot,
    personality, mount, setns, ptrace and capset, and on every other ABI: each call killed is
    refused, and the next way is still tried. fs-routes, fs-io-uring, fs-chroot-escape,
    fs-mounts (by personality, through uname), priv-root-handle, priv-root-kernel,
    priv-root-mount and more were errors ("child killed by signal 31"): inconclusive."""
    if platform.machine() != "x86_64":
        pytest.skip("the filter is written for x86_64's call numbers")
    require_tool("bwrap")
    # io_uring_setup, _enter, _register, bpf, perf_event_open, name_to_handle_at,
    # open_by_handle_at, kexec_load, kexec_file_load, swapon, reboot, acct, syslog,
    # iopl, ioperm, adjtimex, unshare, chroot, personality, mount, umount2, setns, ptrace,
    # capset
    calls = "425,426,427,321,298,303,304,246,320,167,169,163,103,172,173,159"
    calls += ",272,161,135,165,166,308,101,126"
    argv = [
        *(sys.executable, "-c", KILL_FILTER_LAUNCHER, calls),
        *("bwrap", "--seccomp", "@fd", "--unshare-net", "--unshare-pid", "--unshare-ipc"),
        *("--unshare-uts", "--unshare-cgroup", "--die-with-parent", "--new-session"),
        *("--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"),
        *("--ro-bind", "{probe}", "/probe", "--bind", "{allowed}", "/allowed"),
        *("--ro-bind", "{helpers}", "/helpers", "--proc", "/proc", "--remount-ro", "/proc"),
        *("--dev", "/dev", "--tmpfs", "/tmp", "--", "/probe", "{args}"),
    ]
    runtime = (
        f'[runtimes.bwrap-kill-filter]\nkind = "command"\nargv = {json.dumps(argv)}\n'
        'allowed_inside = "/allowed"\nhelpers_inside = "/helpers"\n'
        'expect = { filesystem_confinement = "enforced", privilege_floor = "enforced" }\n'
    )
    matrix = _matrix(tmp_path, runtime, scenarios='["filesystem-confinement", "privilege-floor"]')
    result = harness_cli("run", matrix, "--out", tmp_path / "out")
    assert result.code == 0, result.stdout + result.stderr
    verdicts = verdicts_of(tmp_path / "out")
    checks = {}
    for prop in ("filesystem_confinement", "privilege_floor"):
        row = verdicts[("localhost", "bwrap-kill-filter", prop)]
        assert (row["observed"], row["verdict"]) == ("enforced", "pass"), row
        checks.update({c["id"]: c for c in row["checks"]})
    for check in (
        *("fs-routes", "fs-io-uring", "fs-chroot-escape", "fs-mounts", "priv-start"),
        *("priv-root-handle", "priv-root-kernel", "priv-root-mount", "priv-root-kernel-state"),
        "priv-capset",
    ):
        assert checks[check]["outcome"] == "blocked", checks[check]
    assert "SIGSYS" in checks["priv-root-handle"]["detail"], checks["priv-root-handle"]
    assert "by killing the process" in checks["priv-root-kernel"]["detail"]


def test_a_sandbox_without_proc_is_judged_by_its_mount_table(tmp_path: Path) -> None:
    """local.toml's bwrap with no /proc at all: the mount table comes from listmount(2)
    and statmount(2), so fs-mounts and priv-root-handle judge it (enforced, where they
    were errors: "read /proc/self/mountinfo"), and its listeners from sock_diag, its
    network namespace from a pidfd, so tcp-proxy and udp-relay do (they were errors);
    its twin binding the host's /etc read-only beyond the grants is caught by
    fs-mounts, where it was inconclusive."""
    require_tool("bwrap")
    if tuple(map(int, platform.release().split(".")[:2])) < (6, 11):
        pytest.skip("listmount(2) and statmount(2) are 6.8's, PIDFD_GET_NET_NAMESPACE 6.11's")
    base = [
        *("bwrap", "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts"),
        *("--unshare-cgroup", "--die-with-parent", "--new-session", "--cap-drop", "ALL"),
        *("--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"),
    ]
    rest = [
        *("--ro-bind", "{probe}", "/probe", "--bind", "{allowed}", "/allowed"),
        *("--ro-bind", "{helpers}", "/helpers", "--dev", "/dev", "--tmpfs", "/tmp"),
        *("--", "/probe", "{args}"),
    ]
    runtimes = ""
    for name, extra in (("noproc", []), ("noproc-etc", ["--ro-bind", "/etc", "/etc"])):
        runtimes += (
            f'[runtimes.{name}]\nkind = "command"\nargv = {json.dumps(base + extra + rest)}\n'
            'allowed_inside = "/allowed"\nhelpers_inside = "/helpers"\n'
            'expect = { egress_confinement = "enforced", filesystem_confinement = "enforced",'
            ' privilege_floor = "enforced" }\n'
        )
    matrix = _matrix(
        tmp_path,
        runtimes,
        scenarios='["egress-confinement", "filesystem-confinement", "privilege-floor"]',
        canary='[canary]\nmode = "netns"\n',
    )
    result = harness_cli("run", matrix, "--out", tmp_path / "out")
    assert result.code == 1, result.stdout + result.stderr
    v = verdicts_of(tmp_path / "out")
    for prop in PROPERTIES:
        row = v[("localhost", "noproc", prop)]
        assert (row["observed"], row["verdict"]) == ("enforced", "pass"), row
    egress = {c["id"]: c for c in v[("localhost", "noproc", "egress_confinement")]["checks"]}
    for check in ("tcp-proxy", "udp-relay"):
        assert egress[check]["outcome"] == "blocked", egress[check]
    checks = {c["id"]: c for c in v[("localhost", "noproc", "filesystem_confinement")]["checks"]}
    assert "/allowed ext4" in checks["fs-mounts"]["detail"], checks["fs-mounts"]
    row = v[("localhost", "noproc-etc", "filesystem_confinement")]
    assert row["observed"] == "violated", row
    checks = {c["id"]: c for c in row["checks"]}
    assert checks["fs-mounts"]["outcome"] == "escaped", checks["fs-mounts"]
    assert "mount /etc" in checks["fs-mounts"]["detail"], checks["fs-mounts"]


def test_a_deny_list_of_every_mount_call_stays_enforced(tmp_path: Path) -> None:
    """bwrap-userns-mount-setattr's correct twin: the same namespaced root keeping
    CAP_SYS_ADMIN, behind a deny-list that names the new mount API's calls too
    (mount_setattr, open_tree, move_mount, fsopen, fsconfig, fsmount, fspick): its
    read-only grants stay read-only, and the verdict is enforced."""
    require_tool("bwrap")
    calls = "mount,umount2,pivot_root,open_tree,move_mount,fsopen,fsconfig,fsmount,fspick,"
    argv = [
        *(str(ROOT / "scripts" / "mutant-seccomp"), calls + "mount_setattr"),
        *("bwrap", "--seccomp", "@fd", "--unshare-user", "--uid", "0", "--gid", "0"),
        *("--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts"),
        *("--unshare-cgroup", "--die-with-parent", "--new-session"),
        *("--cap-drop", "ALL", "--cap-add", "CAP_SYS_ADMIN"),
        *("--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"),
        *("--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib"),
        *("--symlink", "usr/lib64", "/lib64", "--ro-bind", "{probe}", "/probe"),
        *("--bind", "{allowed}", "/workspace", "--ro-bind", "{helpers}", "/helpers"),
        *("--proc", "/proc", "--remount-ro", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"),
        *("--", "/probe", "{args}"),
    ]
    policy = ROOT / "policies" / "bwrap-userns-root.yaml"
    runtime = (
        f'[runtimes.bwrap-userns-mount-twin]\nkind = "command"\nargv = {json.dumps(argv)}\n'
        'allowed_inside = "/workspace"\nhelpers_inside = "/helpers"\n'
        f'policy = "{policy}"\nexpect = {{ filesystem_confinement = "enforced" }}\n'
    )
    matrix = _matrix(tmp_path, runtime, scenarios='["filesystem-confinement"]')
    result = harness_cli("run", matrix, "--out", tmp_path / "out")
    assert result.code == 0, result.stdout + result.stderr
    row = verdicts_of(tmp_path / "out")[
        ("localhost", "bwrap-userns-mount-twin", "filesystem_confinement")
    ]
    assert (row["observed"], row["verdict"]) == ("enforced", "pass"), row
    ro = {c["id"]: c for c in row["checks"]}["fs-write-read-only"]
    assert ro["outcome"] == "blocked", ro


def test_a_complete_deny_list_of_the_mount_calls_keeps_the_privilege_floor(
    tmp_path: Path,
) -> None:
    """bwrap-userns-fsmount's, bwrap-userns-open-tree's and bwrap-userns-mount-i386's
    correct twin: the same root of a user namespace mapping the host's uid 0, keeping
    CAP_SYS_ADMIN there, behind a deny-list naming mount(2) and every call of the new
    mount API, which checks the architecture: no way into a mount is left, and the
    privilege floor is enforced."""
    require_tool("bwrap")
    calls = "mount,umount2,pivot_root,open_tree,move_mount,fsopen,fsconfig,fsmount,fspick,"
    mutant = tomllib.loads((ROOT / "matrices" / "mutants.toml").read_text())["runtimes"][
        "bwrap-userns-fsmount"
    ]
    argv = [ROOT / "scripts" / "mutant-seccomp" if a == "scripts/mutant-seccomp" else a
            for a in mutant["argv"]]  # fmt: skip
    argv[argv.index("mount,umount2")] = calls + "mount_setattr"
    policy = ROOT / "policies" / "bwrap-userns-root.yaml"
    runtime = (
        f'[runtimes.bwrap-userns-mount-twin]\nkind = "command"\n'
        f"argv = {json.dumps([str(a) for a in argv])}\n"
        'allowed_inside = "/workspace"\nhelpers_inside = "/helpers"\n'
        f'policy = "{policy}"\nexpect = {{ privilege_floor = "enforced" }}\n'
    )
    matrix = _matrix(tmp_path, runtime, scenarios='["privilege-floor"]')
    result = harness_cli("run", matrix, "--out", tmp_path / "out")
    assert result.code == 0, result.stdout + result.stderr
    row = verdicts_of(tmp_path / "out")[("localhost", "bwrap-userns-mount-twin", "privilege_floor")]
    assert (row["observed"], row["verdict"]) == ("enforced", "pass"), row
    mount = {c["id"]: c for c in row["checks"]}["priv-root-mount"]
    assert mount["outcome"] == "blocked", mount


def test_a_securebits_filter_that_checks_the_architecture_stays_enforced(tmp_path: Path) -> None:
    """root-securebits-i386's correct twin (scripts/mutant-privilege securebits-filtered):
    the same root under SECBIT_NOROOT, unlocked, its filter refusing
    prctl(PR_SET_SECUREBITS) on every entry (the i386 entry's calls refused): the bit
    stays set, enforced, priv-securebits blocked."""
    require_tool("setpriv")
    argv = [str(ROOT / "scripts" / "mutant-privilege"), "securebits-filtered"]
    argv += ["{probe}", "{helpers}", "{args}"]
    check = _twin_check(tmp_path, argv, "privilege_floor", "priv-securebits")
    assert check["outcome"] == "blocked", check


@pytest.mark.parametrize("mutant", sorted(I386_LIST_WAYS))
def test_a_full_i386_list_keeps_the_privilege_floor(tmp_path: Path, mutant: str) -> None:
    """bwrap-sys-time-time64-i386's and bwrap-bpf-i386's correct twins: the same
    capabilities declared, the i386 entry's list naming every call of x86_64's and the
    i386 entry's own (clock_adjtime64, clock_settime64; bpf): enforced,
    priv-root-kernel blocked."""
    require_tool("bwrap")
    spec = tomllib.loads((ROOT / "matrices" / "mutants.toml").read_text())["runtimes"][mutant]
    argv = [str(ROOT / a) if a.startswith("scripts/") else a for a in spec["argv"]]
    argv[argv.index("--i386") + 1] = I386_LIST_WAYS[mutant][0]
    runtime = (
        f'[runtimes.twin]\nkind = "command"\nargv = {json.dumps(argv)}\n'
        'allowed_inside = "/allowed"\nhelpers_inside = "/helpers"\n'
        f"allowed_caps = {json.dumps(spec['allowed_caps'])}\n"
        'expect = { privilege_floor = "enforced" }\n'
    )
    matrix = _matrix(tmp_path, runtime, scenarios='["privilege-floor"]')
    result = harness_cli("run", matrix, "--out", tmp_path / "out")
    assert result.code == 0, result.stdout + result.stderr
    row = verdicts_of(tmp_path / "out")[("localhost", "twin", "privilege_floor")]
    assert (row["observed"], row["verdict"]) == ("enforced", "pass"), row
    check = {c["id"]: c for c in row["checks"]}["priv-root-kernel"]
    assert check["outcome"] == "blocked", check


def test_a_setns_filter_that_checks_the_architecture_stays_enforced(tmp_path: Path) -> None:
    """bwrap-leaked-mntns-i386's correct twin: the host's mount namespace held at fd 3,
    CAP_SYS_ADMIN and CAP_SYS_CHROOT kept, setns refused by a deny-list that checks the
    architecture (the i386 entry's calls refused): neither entry's setns enters it,
    enforced, fs-inherited-fds blocked."""
    require_tool("bwrap")
    spec = tomllib.loads((ROOT / "matrices" / "mutants.toml").read_text())["runtimes"][
        "bwrap-leaked-mntns-i386"
    ]
    argv = [
        str(ROOT / a) if a.startswith("scripts/") else a for a in spec["argv"] if a != "--any-arch"
    ]
    check = _twin_check(
        tmp_path,
        argv,
        "filesystem_confinement",
        "fs-inherited-fds",
        'allowed_inside = "/allowed"\nhelpers_inside = "/helpers"\n',
    )
    assert check["outcome"] == "blocked", check


def test_a_pidfd_and_memory_filter_written_for_both_entries_stays_enforced(
    tmp_path: Path,
) -> None:
    """bwrap-shared-pid-noproc-i386's and -pidfd-i386's correct twin: in the host's PID
    namespace with no
    /proc, pidfd_open, pidfd_getfd, ptrace, process_vm_readv and process_vm_writev
    refused by a deny-list written for both ABIs (the i386 entry's let through but for
    those): neither entry takes the decoy's descriptor nor reaches its memory, enforced,
    fs-proc-fds and priv-proc-access blocked having found the host's processes by
    number."""
    require_tool("bwrap")
    spec = tomllib.loads((ROOT / "matrices" / "mutants.toml").read_text())["runtimes"][
        "bwrap-shared-pid-noproc-i386"
    ]
    argv = [str(ROOT / a) if a.startswith("scripts/") else a for a in spec["argv"]]
    argv[argv.index("--i386") + 1] = argv[argv.index("--i386") + 2]
    runtime = (
        f'[runtimes.twin]\nkind = "command"\nargv = {json.dumps(argv)}\n'
        'allowed_inside = "/workspace"\nhelpers_inside = "/helpers"\n'
        'policy = { filesystem_policy = { read_only = ["/usr", "/etc"], read_write = '
        '["/workspace"] }, process = { run_as_user = "nobody", run_as_group = 65534 } }\n'
        'expect = { filesystem_confinement = "enforced", privilege_floor = "enforced" }\n'
    )
    matrix = _matrix(tmp_path, runtime, scenarios='["filesystem-confinement", "privilege-floor"]')
    result = harness_cli("run", matrix, "--out", tmp_path / "out")
    assert result.code == 0, result.stdout + result.stderr
    v = verdicts_of(tmp_path / "out")
    for prop, check_id, said in (
        ("filesystem_confinement", "fs-proc-fds", "host processes found by number"),
        ("privilege_floor", "priv-proc-access", "process(es) found by number refused"),
    ):
        row = v[("localhost", "twin", prop)]
        assert (row["observed"], row["verdict"]) == ("enforced", "pass"), row
        check = {c["id"]: c for c in row["checks"]}[check_id]
        assert check["outcome"] == "blocked", check
        assert said in str(check["detail"]), check


def test_a_setns_filter_beside_a_held_network_namespace_stays_enforced(tmp_path: Path) -> None:
    """bwrap-held-netns-setns-i386's correct twin (mutant-sandbox held-netns-setns-twin):
    the host's network namespace handed in, CAP_SYS_ADMIN kept, setns refused by a
    filter that checks the architecture (the i386 entry's calls refused): no entry's
    setns enters it, enforced, held-fds blocked."""
    for tool in ("bwrap", "ip"):
        require_tool(tool)
    script = ROOT / "scripts" / "mutant-sandbox"
    runtime = (
        '[runtimes.twin]\nkind = "command"\n'
        f'argv = ["{script}", "held-netns-setns-twin", "{{allowed}}", "{{probe}}", "{{args}}"]\n'
        'allowed_inside = "/allowed"\nexpect = { egress_confinement = "enforced" }\n'
    )
    matrix = _matrix(
        tmp_path, runtime, scenarios='["egress-confinement"]', canary='[canary]\nmode = "netns"\n'
    )
    result = harness_cli("run", matrix, "--out", tmp_path / "out")
    assert result.code == 0, result.stdout + result.stderr
    row = verdicts_of(tmp_path / "out")[("localhost", "twin", "egress_confinement")]
    assert (row["observed"], row["verdict"]) == ("enforced", "pass"), row
    held = {c["id"]: c for c in row["checks"]}["held-fds"]
    assert held["outcome"] == "blocked" and held["errno"] == "EPERM", held
    assert held["detail"].startswith("setns into held descriptor "), held


def test_a_deny_list_of_every_setter_of_the_clock_keeps_the_privilege_floor(
    tmp_path: Path,
) -> None:
    """bwrap-sys-time-clock-adjtime's and bwrap-sys-time-settimeofday's correct twin:
    CAP_SYS_TIME declared, the deny-list naming all four setters (adjtimex,
    clock_adjtime, settimeofday, clock_settime), the architecture checked: enforced,
    priv-root-kernel blocked (each setter refused, the i386 entry too)."""
    require_tool("bwrap")
    spec = tomllib.loads((ROOT / "matrices" / "mutants.toml").read_text())["runtimes"][
        "bwrap-sys-time-clock-adjtime"
    ]
    every = "adjtimex,clock_adjtime,settimeofday,clock_settime"
    argv = [str(ROOT / a) if a.startswith("scripts/") else a for a in spec["argv"]]
    argv[argv.index("adjtimex,settimeofday,clock_settime")] = every
    check = _twin_check(
        tmp_path,
        argv,
        "privilege_floor",
        "priv-root-kernel",
        'allowed_inside = "/allowed"\nhelpers_inside = "/helpers"\n'
        'allowed_caps = ["CAP_SYS_TIME"]\n',
    )
    assert check["outcome"] == "blocked", check


@pytest.mark.parametrize("mutant", sorted(I386_WAYS))
def test_a_deny_list_that_checks_the_architecture_keeps_the_privilege_floor(
    tmp_path: Path, mutant: str
) -> None:
    """bwrap-sys-time-i386's, bwrap-dac-read-search-i386's and bwrap-mknod-i386's
    correct twins: the same
    capability declared, the same deny-list, checking the architecture (the i386
    entry's calls refused): enforced, the row's check blocked."""
    require_tool("bwrap")
    spec = tomllib.loads((ROOT / "matrices" / "mutants.toml").read_text())["runtimes"][mutant]
    argv = [
        str(ROOT / a) if a.startswith("scripts/") else a for a in spec["argv"] if a != "--any-arch"
    ]
    runtime = (
        f'[runtimes.twin]\nkind = "command"\nargv = {json.dumps(argv)}\n'
        'allowed_inside = "/allowed"\nhelpers_inside = "/helpers"\n'
        f"allowed_caps = {json.dumps(spec['allowed_caps'])}\n"
        f"expect = {{ {', '.join(f'{k} = {json.dumps(x)}' for k, x in spec['expect'].items())} }}\n"
    )
    matrix = _matrix(tmp_path, runtime, scenarios=json.dumps(spec["scenarios"]))
    result = harness_cli("run", matrix, "--out", tmp_path / "out")
    assert result.code == 0, result.stdout + result.stderr
    verdicts = verdicts_of(tmp_path / "out")
    for prop in spec["expect"]:
        row = verdicts[("localhost", "twin", prop)]
        assert (row["observed"], row["verdict"]) == ("enforced", "pass"), row
    row = verdicts[("localhost", "twin", "privilege_floor")]
    check = {c["id"]: c for c in row["checks"]}[I386_WAYS[mutant][0]]
    assert check["outcome"] == "blocked", check


def test_a_protocol_filter_that_checks_the_architecture_stays_enforced(tmp_path: Path) -> None:
    """bwrap-other-protocols-i386's and -uring's correct twin: the relays for UDP-Lite and
    raw IP behind the same filter (sockets kept to TCP, UDP, unix and netlink), the
    architecture checked and io_uring refused: each line's socket refused by every entry
    (EPERM), and the verdict enforced."""
    for tool in ("bwrap", "ip"):
        require_tool(tool)
    script = ROOT / "scripts" / "mutant-sandbox"
    runtime = (
        '[runtimes.other-protocols-twin]\nkind = "command"\n'
        f'argv = ["{script}", "other-protocols-twin", "{{allowed}}", "{{probe}}", "{{args}}"]\n'
        'allowed_inside = "/allowed"\nexpect = { egress_confinement = "enforced" }\n'
    )
    matrix = _matrix(
        tmp_path, runtime, scenarios='["egress-confinement"]', canary='[canary]\nmode = "netns"\n'
    )
    result = harness_cli("run", matrix, "--out", tmp_path / "out")
    assert result.code == 0, result.stdout + result.stderr
    row = verdicts_of(tmp_path / "out")[("localhost", "other-protocols-twin", "egress_confinement")]
    assert (row["observed"], row["verdict"]) == ("enforced", "pass"), row
    checks = {c["id"]: c for c in row["checks"]}
    for check_id in ("udplite4", "udplite6", "rawip4", "rawip6"):
        line = checks[check_id]
        assert line["outcome"] == "blocked" and line["errno"] == "EPERM", line


def test_a_unix_socket_ban_that_checks_the_architecture_beside_a_proxy_stays_enforced(
    tmp_path: Path,
) -> None:
    """bwrap-unix-proxy-i386's, -uring's and -connect-*'s correct twins: the host's proxy
    socket in the granted folder behind the same filter (socket(AF_UNIX) refused, or
    connect(2) refused), the architecture checked and io_uring refused: unix-proxy's
    sockets, or their connects, refused by every entry (EPERM), and the verdict enforced."""
    for tool in ("bwrap", "ip"):
        require_tool(tool)
    script = ROOT / "scripts" / "mutant-sandbox"
    twins = ("unix-proxy-twin", "unix-proxy-connect-twin")
    runtimes = "".join(
        f'[runtimes.{mode}]\nkind = "command"\n'
        f'argv = ["{script}", "{mode}", "{{allowed}}", "{{probe}}", "{{args}}"]\n'
        'allowed_inside = "/allowed"\nexpect = { egress_confinement = "enforced" }\n'
        for mode in twins
    )
    matrix = _matrix(
        tmp_path, runtimes, scenarios='["egress-confinement"]', canary='[canary]\nmode = "netns"\n'
    )
    result = harness_cli("run", matrix, "--out", tmp_path / "out")
    assert result.code == 0, result.stdout + result.stderr
    v = verdicts_of(tmp_path / "out")
    for mode in twins:
        row = v[("localhost", mode, "egress_confinement")]
        assert (row["observed"], row["verdict"]) == ("enforced", "pass"), row
        line = {c["id"]: c for c in row["checks"]}["unix-proxy"]
        assert line["outcome"] == "blocked" and line["errno"] == "EPERM", line
        assert "/a/b/proxy.sock" in line["detail"], line


def test_a_bind_ban_that_checks_the_architecture_beside_a_source_port_rule_stays_enforced(
    tmp_path: Path,
) -> None:
    """bwrap-privport-bind-i386's and -uring's correct twin: the stateless rule that lets
    UDP from a source port below 1024 through, behind the same filter (bind(2) refused),
    the architecture checked and io_uring refused: no privileged source port is bound by
    any entry (EPERM), and the verdict enforced."""
    for tool in ("bwrap", "ip"):
        require_tool(tool)
    script = ROOT / "scripts" / "mutant-sandbox"
    runtime = (
        '[runtimes.privport-bind-twin]\nkind = "command"\n'
        f'argv = ["{script}", "privport-bind-twin", "{{allowed}}", "{{probe}}", "{{args}}"]\n'
        'allowed_inside = "/allowed"\nexpect = { egress_confinement = "enforced" }\n'
    )
    matrix = _matrix(
        tmp_path, runtime, scenarios='["egress-confinement"]', canary='[canary]\nmode = "netns"\n'
    )
    result = harness_cli("run", matrix, "--out", tmp_path / "out")
    assert result.code == 0, result.stdout + result.stderr
    row = verdicts_of(tmp_path / "out")[("localhost", "privport-bind-twin", "egress_confinement")]
    assert (row["observed"], row["verdict"]) == ("enforced", "pass"), row
    line = {c["id"]: c for c in row["checks"]}["udp4-privport"]
    assert line["outcome"] == "blocked" and line["errno"] == "EPERM", line
    assert "bind a privileged source port" in line["detail"], line


def test_a_netfilter_socket_ban_that_checks_the_architecture_keeps_the_firewall(
    tmp_path: Path,
) -> None:
    """bwrap-firewall-netlink-i386's and -uring's correct twin: the firewall inside the
    sandbox's own namespace, CAP_NET_ADMIN kept, behind the same filter (netfilter's
    netlink socket refused), the architecture checked and io_uring refused: no way makes
    that socket (EPERM), and the verdict is enforced."""
    for tool in ("bwrap", "ip", "nft"):
        require_tool(tool)
    script = ROOT / "scripts" / "mutant-sandbox"
    runtime = (
        '[runtimes.firewall-netlink-twin]\nkind = "command"\n'
        f'argv = ["{script}", "firewall-netlink-twin", "{{allowed}}", "{{probe}}", "{{args}}"]\n'
        'allowed_inside = "/allowed"\nexpect = { egress_confinement = "enforced" }\n'
    )
    matrix = _matrix(
        tmp_path, runtime, scenarios='["egress-confinement"]', canary='[canary]\nmode = "netns"\n'
    )
    result = harness_cli("run", matrix, "--out", tmp_path / "out")
    assert result.code == 0, result.stdout + result.stderr
    v = verdicts_of(tmp_path / "out")
    row = v[("localhost", "firewall-netlink-twin", "egress_confinement")]
    assert (row["observed"], row["verdict"]) == ("enforced", "pass"), row
    line = {c["id"]: c for c in row["checks"]}["firewall-opened"]
    assert line["outcome"] == "blocked" and line["errno"] == "EPERM", line
    assert "no nftables here (a netfilter netlink socket)" in line["detail"], line


def test_an_ipc_deny_list_that_checks_the_architecture_stays_enforced(tmp_path: Path) -> None:
    """bwrap-shared-ipc-i386's and bwrap-host-mqueue-time64's correct twins: the host's
    IPC namespace (or its mqueue mount) behind the same deny-list of the IPC calls,
    every other architecture refused, or the i386 list naming mq_timedsend_time64 too:
    each ipc line blocked by the filter (EPERM), and the verdict enforced."""
    require_tool("bwrap")
    mutants = tomllib.loads((ROOT / "matrices" / "mutants.toml").read_text())["runtimes"]
    twins = {"bwrap-shared-ipc-twin": "bwrap-shared-ipc-i386",
             "bwrap-host-mqueue-twin": "bwrap-host-mqueue-time64"}  # fmt: skip
    runtimes = "".join(
        f'[runtimes.{twin}]\nkind = "command"\n'
        f"argv = {json.dumps(_ipc_twin(mutants[mutant]['argv']))}\n"
        'allowed_inside = "/allowed"\nhelpers_inside = "/helpers"\n'
        'expect = { egress_confinement = "enforced" }\n'
        for twin, mutant in twins.items()
    )
    matrix = _matrix(
        tmp_path, runtimes, scenarios='["egress-confinement"]', canary='[canary]\nmode = "netns"\n'
    )
    result = harness_cli("run", matrix, "--out", tmp_path / "out")
    assert result.code == 0, result.stdout + result.stderr
    verdicts = verdicts_of(tmp_path / "out")
    for twin in twins:
        row = verdicts[("localhost", twin, "egress_confinement")]
        assert (row["observed"], row["verdict"]) == ("enforced", "pass"), row
        checks = {c["id"]: c for c in row["checks"]}
        for check_id in ("ipc-sysv-msg", "ipc-sysv-shm", "ipc-posix-mq"):
            assert checks[check_id]["outcome"] == "blocked", checks[check_id]
    # The POSIX queue opened on the bound mount: its send refused on both entries, by
    # both of the i386 entry's calls.
    mq = {
        c["id"]: c
        for c in verdicts[("localhost", "bwrap-host-mqueue-twin", "egress_confinement")]["checks"]
    }
    assert mq["ipc-posix-mq"]["errno"] == "EPERM", mq["ipc-posix-mq"]
    assert "the last way mq_timedsend_time64 (i386): " in mq["ipc-posix-mq"]["detail"], mq


def test_an_overlay_of_a_granted_folder_stays_enforced(tmp_path: Path) -> None:
    """bwrap-overlay-host's correct twin: the same launcher's overlay, read-only, its
    layers the host's /usr/share/doc and /usr/share/man, which the policy grants (/usr
    read-only). The host shows the same files there, and every layer is granted:
    enforced. (An upper layer of its own tmpfs would be no proof: its name is only
    the mounter's word.)"""
    require_tool("bwrap")
    mutant = tomllib.loads((ROOT / "matrices" / "mutants.toml").read_text())["runtimes"][
        "bwrap-overlay-host"
    ]
    script = (
        "mount -t tmpfs harness-ov /mnt && mkdir /mnt/m && mount -t overlay harness-ov"
        ' -o lowerdir="$0":/usr/share/man /mnt/m && exec "$@"'
    )
    argv = [{"/var/log": "/usr/share/doc", "/logs": "/docs"}.get(a, a) for a in mutant["argv"]]
    argv[argv.index("-c") + 1] = script
    assert "/usr/share/doc" in argv and "/docs" in argv
    policy = ROOT / "policies" / "bwrap-colocated.yaml"
    runtime = (
        f'[runtimes.overlay-twin]\nkind = "command"\nargv = {json.dumps(argv)}\n'
        f'allowed_inside = "/workspace"\nhelpers_inside = "/helpers"\npolicy = "{policy}"\n'
        'expect = { filesystem_confinement = "enforced" }\n'
    )
    matrix = _matrix(tmp_path, runtime, scenarios='["filesystem-confinement"]')
    result = harness_cli("run", matrix, "--out", tmp_path / "out")
    assert result.code == 0, result.stdout + result.stderr
    row = verdicts_of(tmp_path / "out")[("localhost", "overlay-twin", "filesystem_confinement")]
    assert (row["observed"], row["verdict"]) == ("enforced", "pass"), row
    cell = cells_of(tmp_path / "out")[("localhost", "overlay-twin")]
    # The host was asked about the layer, and found the sandbox's files there.
    seen = cell["host_side"]["held_paths"]
    assert any(p.startswith("/usr/share/doc/") and v for p, v in seen.items()), seen


def test_a_folder_granted_for_reading_alone_stays_enforced(tmp_path: Path) -> None:
    """landlock-remove-deeper's and landlock-truncate-deeper's correct twin: the same
    two Landlock layers, the first handling every right, the second granting
    everything on the host's /var/log and /var/lib/apt/lists, which the policy lets
    it read. Nothing can be removed or truncated there (unlink of a folder, rmdir of a
    file and truncate past the file-size limit are each refused by Landlock first):
    enforced."""
    mutant = tomllib.loads((ROOT / "matrices" / "mutants.toml").read_text())["runtimes"][
        "landlock-truncate-deeper"
    ]
    argv = list(mutant["argv"])
    at = argv.index("--unhandled")
    del argv[at : at + 2]
    at = argv.index("/var/log")
    argv[at + 1 : at + 1] = ["--write", "/var/lib/apt/lists"]
    assert argv.count("/var/log") == 1 and "--unhandled" not in argv
    policy = ROOT / "policies" / "landlock-logs.yaml"
    runtime = (
        f'[runtimes.logs-twin]\nkind = "command"\nargv = {json.dumps(argv)}\n'
        f'policy = "{policy}"\nexpect = {{ filesystem_confinement = "enforced" }}\n'
    )
    # The default work folder, as for matrices/mutants.toml: one below /tmp, which
    # Landlock lets the workload write, would hold the outside folder.
    matrix = tmp_path / "m.toml"
    matrix.write_text(
        f'name = "t"\ninventory = "{ROOT / "hosts" / "local.toml"}"\n'
        f'scenarios = ["filesystem-confinement"]\n[settings]\ntimeout = 60\n{runtime}'
    )
    result = harness_cli("run", matrix, "--out", tmp_path / "out")
    assert result.code == 0, result.stdout + result.stderr
    row = verdicts_of(tmp_path / "out")[("localhost", "logs-twin", "filesystem_confinement")]
    assert (row["observed"], row["verdict"]) == ("enforced", "pass"), row
