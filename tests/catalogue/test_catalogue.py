"""The catalogue is complete: against the kernel's syscall table, against the
scenarios' checks, and against its own page (docs/attack-surface.md)."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest

from harness.catalogue import abis, enumerations
from harness.catalogue.page import markdown
from harness.catalogue.proof import MUTANTS, NO_MUTANT, mutants_of
from harness.catalogue.rows import NOT_YET, Surface
from harness.catalogue.syscalls import HEADER, UNRELATED, header_syscalls
from harness.catalogue.table import all_rows
from harness.scenarios import SCENARIOS

DOCS = Path(__file__).resolve().parents[2] / "docs"
JUDGED = ("egress-confinement", "filesystem-confinement", "privilege-floor")


def _attempts() -> dict[str, str]:
    """Every attempt of a judged scenario: id -> scenario."""
    return {c.id: name for name in JUDGED for c in SCENARIOS[name].checks if not c.inside_control}


def test_the_page_is_generated_from_the_catalogue() -> None:
    """Regenerate with `python -m harness.catalogue.page > docs/attack-surface.md`."""
    assert (DOCS / "attack-surface.md").read_text(encoding="utf-8") == markdown()


def test_every_syscall_of_the_kernels_table_is_in_a_row_or_said_to_reach_nothing() -> None:
    """A syscall a newer kernel adds is in neither, and this names it."""
    if not HEADER.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{HEADER} is missing (linux-libc-dev)")
        pytest.skip(f"{HEADER} is missing (linux-libc-dev)")
    in_rows = {s for r in all_rows() for s in r.syscalls}
    missing = [n for n in header_syscalls() if n not in in_rows and n not in UNRELATED]
    assert missing == []
    assert sorted(in_rows & set(UNRELATED)) == []


def test_the_syscall_table_is_read_as_the_kernel_writes_it(tmp_path: Path) -> None:
    header = tmp_path / "unistd_64.h"
    header.write_text(
        "#ifndef _ASM_UNISTD_64_H\n#define __NR_read 0\n#define __NR_cachestat 451\n"
        "#define __NR_fchmodat2 452\n#endif\n"
    )
    assert header_syscalls(header) == ["read", "cachestat", "fchmodat2"]
    assert "cachestat" not in UNRELATED  # a newer one: the completeness test would name it


def test_every_attempt_names_a_row_and_every_row_names_real_checks() -> None:
    attempts = _attempts()
    named = {c for r in all_rows() for c in r.checks}
    assert sorted(set(attempts) - named) == []
    assert sorted(named - set(attempts)) == []


def test_a_rows_checks_belong_to_its_own_property() -> None:
    """Filesystem rows name filesystem checks, and so on; a device node is made
    through privilege (`priv-root-mknod`), the one crossing."""
    surface_of = {
        "filesystem-confinement": Surface.FILESYSTEM,
        "privilege-floor": Surface.PRIVILEGE,
        "egress-confinement": Surface.NETWORK,
    }
    attempts = _attempts()
    crossing = {"priv-root-mknod", "priv-root-handle"}
    for row in all_rows():
        for check in row.checks:
            if check not in crossing:
                assert surface_of[attempts[check]] is row.surface, (row.key, check)


def test_every_row_has_a_check_or_a_reason() -> None:
    for row in all_rows():
        assert row.checks or row.unseen, row.key
        assert not (row.checks and row.unseen), row.key


def test_no_row_is_merely_not_attempted_yet() -> None:
    """Issues 26 and 27 closed every surface: each row is attempted by a check or says
    why harness cannot see it; a new row must come with one or the other."""
    assert [r.key for r in all_rows() if r.unseen == NOT_YET] == []


def test_row_keys_are_unique() -> None:
    keys = [r.key for r in all_rows()]
    assert len(keys) == len(set(keys))


def test_every_row_with_checks_names_its_mutant_or_why_it_has_none() -> None:
    """The checks of a row are proven by a sandbox that leaves exactly that row open
    (tests/e2e/test_properties.py runs them); a row without one says why."""
    rows = {r.key: r for r in all_rows() if r.checks}
    assert sorted(k for k, r in rows.items() if not mutants_of(r) and k not in NO_MUTANT) == []
    assert sorted(set(MUTANTS) & set(NO_MUTANT)) == []
    assert sorted((set(MUTANTS) | set(NO_MUTANT)) - set(rows)) == []
    shipped = tomllib.loads((DOCS.parent / "matrices" / "mutants.toml").read_text())["runtimes"]
    named = {m for names in MUTANTS.values() for m in names}
    assert sorted(named - set(shipped)) == []


def test_the_targets_a_row_names_are_the_target_tables() -> None:
    """A row's target that names a file harness makes outside (`chmod-me`, `dir-TAG`) is
    a row of harness/probe/targets.def, and each of that table's targets is named by a
    row of its check: the catalogue never names a target nobody makes."""
    import re

    from harness.probe.targets import targets

    table = {t.name: t for t in targets()}
    rows = [r for r in all_rows() if r.target]
    for row in rows:
        for name in re.findall(r"\b([a-z]+-me)\b", row.target):
            assert name in table, (row.key, name)
        for name in re.findall(r"\boutside/([a-z]+)-TAG\b", row.target):
            assert name in table and table[name].kind == "MADE", (row.key, name)
    for target in targets():
        spelt = f"outside/{target.name}-TAG" if target.kind == "MADE" else target.name
        assert any(spelt in r.target and target.check in r.checks for r in rows), (
            target.name,
            target.check,
        )


KERNEL_LISTS = (
    ("capability.h", enumerations.capabilities, enumerations.CAPABILITIES),
    ("sched.h", enumerations.namespaces, enumerations.NAMESPACES),
    ("io_uring.h", enumerations.io_uring_ops, enumerations.IO_URING_OPS),
)


@pytest.mark.parametrize(("header", "read", "held"), KERNEL_LISTS, ids=[k[0] for k in KERNEL_LISTS])
def test_every_member_of_the_kernels_lists_has_a_check_or_a_reason(header, read, held) -> None:
    """Every capability, namespace type and io_uring opcode the installed headers define
    is held to checks that exist or to a written reason; a newer header's member fails
    here until someone decides."""
    if not (enumerations.INCLUDE / header).exists():
        if os.environ.get("CI"):
            pytest.fail(f"{header} is missing (linux-libc-dev)")
        pytest.skip(f"{header} is missing (linux-libc-dev)")
    members = read()
    assert members, header
    assert [m for m in members if m not in held] == []
    checks = {c.id for s in SCENARIOS.values() for c in s.checks}
    for name, member in held.items():
        assert member.checks or member.reason, name
        assert sorted(set(member.checks) - checks) == [], name


def test_the_kernels_lists_are_read_as_its_headers_write_them(tmp_path: Path) -> None:
    """A member a newer header adds is read, so the test above names it."""
    (tmp_path / "capability.h").write_text(
        "#define CAP_CHOWN            0\n#define CAP_NEW_ONE 41\n#define CAP_LAST_CAP CAP_NEW_ONE\n"
    )
    (tmp_path / "io_uring.h").write_text(
        "enum io_uring_op {\n\tIORING_OP_NOP,\n\tIORING_OP_TOMORROW,\n\n\tIORING_OP_LAST,\n};\n"
        "#define IORING_OP_NOT_AN_OP 1\n"
    )
    (tmp_path / "sched.h").write_text("#define CLONE_NEWNS\t0x00020000\n#define CLONE_VM 1\n")
    assert enumerations.capabilities(tmp_path) == ["CAP_CHOWN", "CAP_NEW_ONE"]
    assert enumerations.io_uring_ops(tmp_path) == ["IORING_OP_NOP", "IORING_OP_TOMORROW"]
    assert enumerations.namespaces(tmp_path) == ["CLONE_NEWNS"]
    assert "IORING_OP_TOMORROW" not in enumerations.IO_URING_OPS


def test_the_running_kernels_own_counts_are_all_named() -> None:
    """The kernel this runs on says how many io_uring opcodes (IORING_REGISTER_PROBE) and
    capabilities (cap_last_cap) it has, and which namespace types (/proc/self/ns): each is
    named and held to a member, even past the installed headers; a newer kernel's
    opcode, capability or namespace type fails here until someone decides."""
    header = enumerations.io_uring_ops() if (enumerations.INCLUDE / "io_uring.h").exists() else []
    numbering = enumerations.IO_URING_NUMBERING
    assert list(numbering[: len(header)]) == header  # the header's order is the kernel's
    assert sorted(set(numbering) ^ set(enumerations.IO_URING_OPS)) == []
    ops = enumerations.running_io_uring_ops()
    if ops is None and os.environ.get("CI"):
        pytest.fail("this kernel refused io_uring: its opcode count is unknown")
    assert ops is None or ops <= len(numbering), numbering[len(numbering) - 1]
    caps = enumerations.running_capabilities()
    assert caps is not None and caps <= len(enumerations.CAPABILITIES)
    entries = {p.name for p in Path("/proc/self/ns").iterdir()}
    assert sorted(entries - set(enumerations.NS_ENTRIES)) == []
    assert set(enumerations.NS_ENTRIES.values()) <= set(enumerations.NAMESPACES)


def test_every_kind_of_descriptor_has_a_check_or_a_reason() -> None:
    """Each kind the probe tells apart (fdkinds.def) is held here: one it tries names the
    checks that go through it, one that reaches nothing says why, and one harness cannot
    judge says so (the probe makes holding it an error); no kind is in one table alone."""
    kinds = dict(enumerations.descriptor_kinds())
    assert len(kinds) > 20
    held = enumerations.DESCRIPTOR_KINDS
    assert sorted(set(kinds) ^ set(held)) == []
    checks = {c.id for s in SCENARIOS.values() for c in s.checks}
    for name, route in kinds.items():
        member = held[name]
        assert bool(member.checks) == (route == "TRIED"), name
        assert member.checks or member.reason, name
        assert (route == "UNJUDGED") == member.reason.startswith("not judged"), name
        assert sorted(set(member.checks) - checks) == [], name


def test_descriptor_kinds_are_read_as_the_table_writes_them() -> None:
    """A row of fdkinds.def is read whole, and a comment is not a row."""
    text = '/* FDKIND(old, "gone", OWN) */\nFDKIND(io_uring, "anon_inode:[io_uring]", TRIED)\n'
    assert enumerations.descriptor_kinds(text) == [("anon_inode:[io_uring]", "TRIED")]


# What a mutant's name says of the way it leaves open: a row's way is proven only by a
# mutant of that very way (every other way closed), not by the row's mutant at large.
WAY_MUTANTS = {
    "i386: ": ("-i386", "-any-arch"),
    "the i386 entry's ipc multiplexer: ": ("-multiplexer",),
    "the i386 entry's time64 call: ": ("-time64",),
    "io_uring: ": ("-uring",),
    "socketpair: ": ("-socketpair",),
    "write: ": ("-write",),
    "sendmmsg: ": ("-sendmmsg",),
    "sendfile: ": ("-sendfile",),
    "splice: ": ("-splice",),
    "Linux AIO: ": ("-aio",),
    "renumbered: ": ("-dup",),
    "x86_64's calls: ": ("-native",),
    "mknod: ": ("-mknod",),
    "sendto: ": ("-sendto",),
    "sendmsg: ": ("-sendmsg", "-sendmmsg"),
    "connect: ": ("-connect-i386", "-connect-uring"),
    "AF_INET's name: ": ("-socket-inet",),
    "AF_XDP: ": ("-xdp-",),
    "a longer address: ": ("-addrlen",),
    "a descriptor opened for reading: ": ("-fd-",),
    "an open for reading with O_TRUNC: ": ("-truncate-filtered",),
    "a held namespace descriptor": ("-held-netns", "-leaked-mntns"),
    "a held io_uring ring: ": ("-held-ring",),
    "a held io_uring ring's registered files": ("-held-ring-file", "-held-ring-socket"),
    "a held unix socket's queued descriptors": ("-queued-",),
    "a held file's owner: ": ("-held-token-chown",),
    "a working folder on a host tree": ("-private-tmp",),
    "pid 1's root on a host tree": ("-private-tmp",),
    "another process's root or working folder on a host tree": ("-private-tmp",),
    "a held file's metadata by another call": ("-held-token-fchmodat2",),
    "a held file's metadata through the i386 entry": ("-held-token-i386",),
    "/proc/<pid>/ns/": ("-pid-netns",),
    "a held folder of a proc filesystem": ("-held-procfs",),
    "a proc filesystem mounted elsewhere": ("-bound-procfs",),
    "a held TUN or TAP device": ("-held-tun",),
    "a bind mount of a host folder": ("-host-at-host", "-helpers-rw"),
    "an overlay of the sandbox's own": ("-overlay-host",),
    "a write grant deeper than": ("-write-deeper",),
    "a grant of removal alone": ("-remove-deeper", "-rmdir-deeper"),
    "a grant of truncation alone": ("-truncate-deeper",),
    "a grant of one kind of node alone": ("-whiteout-deeper", "-socknode-deeper"),
    "harness's decoys": ("-remove-leaf", "-truncate-bin", "-rmdir-unlisted"),
    "clone3(CLONE_INTO_CGROUP): ": ("-clone3",),
    "clone3(CLONE_INTO_CGROUP) through the i386 entry": ("-clone3-i386",),
    "a read-only mount remounted": ("-userns-sysadmin",),
    "mount_setattr: ": ("-mount-setattr",),
    "fsmount: ": ("-fsmount",),
    "open_tree: ": ("-open-tree",),
    "fspick: ": ("-fspick",),
    "another process's socket": ("-sibling-socket",),
    "kill(pid, 0): ": ("-host-pid",),
    "pidfd_send_signal, tkill, ": ("-signal-pidfd",),
    "/proc/<pid>/mem: ": ("-proc-mem",),
    "a held pidfd: ": ("-held-pidfd",),
    "a pid by number: ": ("-noproc",),
    "prlimit64: ": ("-prlimit",),
    "clock_adjtime: ": ("-clock-adjtime",),
    "settimeofday: ": ("-settimeofday",),
    "a descriptor's owner: ": ("-sigio",),
    "by name: ": ("-by-comm", "-by-argv0"),
    "by file name: ": ("-by-basename",),
    "a socket it was handed: ": ("-first-holder",),
    "scheduling: ": ("-nice",),
    "oom_score_adj: ": ("-oom",),
    "a held pty master: ": ("-held-pty",),
    "the controlling terminal of a host session: ": ("-tty-session",),
    "a widened argument: ": ("-hibits",),
    "netlink: ": ("-ioctl-netlink", "-netlink-hibits"),
    "the type's other flags: ": (
        "-type-exact",
        "-type-cloexec",
        "-socket-exact",
        "-ping-exact",
        "-sidecar-exact",
    ),
    "the protocol named: ": ("-proto-exact",),
}


def test_every_way_of_a_row_has_a_mutant_of_its_own() -> None:
    """Each (row, way): the row names a mutant that closes the other ways and leaves this
    one, held caught by the row's own check in tests/e2e/test_properties.py."""
    missing = []
    for row in all_rows():
        for way in row.ways:
            kind = next((k for k in WAY_MUTANTS if way.startswith(k)), None)
            assert kind is not None, f"{row.key}: way {way!r} of no known kind"
            if not any(m in name for name in mutants_of(row) for m in WAY_MUTANTS[kind]):
                missing.append(f"{row.key}: {way}")
    assert missing == []


@pytest.mark.parametrize(
    "header",
    [abis.I386_HEADER, abis.GENERIC_HEADER, abis.ARM32_HEADER],
    ids=["i386", "generic", "arm32"],
)
def test_every_syscall_of_the_other_abis_is_x86_64s_or_said_to_reach_nothing(header: Path) -> None:
    """The i386 entry's table, aarch64's (the generic one) and the arm32 entry aarch64
    keeps: each name is x86_64's (its row or reason holds), the same operation as one of
    x86_64's, or reaches nothing; a newer header's name is in none and fails here."""
    if not header.exists() or not HEADER.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{header} is missing (scripts/setup --dev installs it)")
        pytest.skip(f"{header} is missing (scripts/setup --dev installs it)")
    x86_64 = set(header_syscalls())
    names = abis.table(header)
    assert len(names) > 300
    missing = [
        n for n in names if n not in x86_64 and n not in abis.SAME_AS and n not in abis.NOTHING
    ]
    assert missing == []
    assert sorted(set(abis.SAME_AS.values()) - x86_64) == []
    assert sorted(set(abis.SAME_AS) & x86_64) == []  # a name x86_64 has needs no mapping
