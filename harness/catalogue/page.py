"""docs/attack-surface.md, generated from the catalogue's rows so that the page
cannot drift from the code (tests/catalogue/ holds it).

Regenerate it with `python -m harness.catalogue.page > docs/attack-surface.md`.
"""

from __future__ import annotations

from harness.catalogue.enumerations import (
    CAPABILITIES,
    DESCRIPTOR_KINDS,
    IO_URING_OPS,
    NAMESPACES,
    Member,
)
from harness.catalogue.proof import NO_MUTANT, mutants_of
from harness.catalogue.rows import NOT_YET, Row, Surface
from harness.catalogue.syscalls import GROUPS
from harness.catalogue.table import all_rows

_TITLES = {
    Surface.FILESYSTEM: "Filesystem: reading or changing a file that was not granted",
    Surface.PRIVILEGE: "Privilege: gaining credentials or capabilities",
    Surface.NETWORK: "Network: bytes out, or handed to something that sends them",
}


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _line(row: Row) -> str:
    calls = ", ".join(f"`{s}`" for s in row.syscalls) or "-"
    if row.checks:
        how = ", ".join(f"`{c}`" for c in row.checks)
    elif row.unseen == NOT_YET:
        how = "**not attempted yet**"
    else:
        how = f"not attempted: {row.unseen}"
    proof = ", ".join(f"`{m}`" for m in mutants_of(row)) or _cell(NO_MUTANT.get(row.key, "-"))
    return (
        f"| {_cell(row.group)} | {_cell(row.operation)} | {calls}"
        f" | {_cell('; '.join(row.ways)) or 'native'} | {how}"
        f" | {_cell(row.target) or '-'} | {_cell(row.kernels)} | {proof} |"
    )


def markdown() -> str:
    out = [
        "# Attack surface",
        "",
        "Every way the kernel lets a workload reach what its sandbox did not grant, and the",
        "check that attempts it. Generated from `harness/catalogue/` by",
        "`python -m harness.catalogue.page > docs/attack-surface.md`; do not edit by hand.",
        "A test holds the catalogue complete: every syscall of the kernel's table is in a",
        "row below or in the last table with the reason it reaches nothing (x86_64's; the",
        "i386 entry's, aarch64's and the arm32 entry's names are each x86_64's, the same",
        "operation as one of its, or said to reach nothing: `harness/catalogue/abis.py`;",
        "the running kernel's io_uring opcodes, capabilities and namespace types are counted",
        "too, past the installed headers); every attempt",
        "of the filesystem, privilege and egress scenarios names a row; every row has a",
        "check or says why harness cannot see it. Each row with checks names the sandbox of",
        "`matrices/mutants.toml` that leaves exactly it open (its mutant), which a test holds",
        "caught by one of the row's own checks. Checks are listed in [checks.md](checks.md).",
        "**ways** are the entries the checks take besides the native syscalls (`native`: those",
        "alone): the i386 entry (`int $0x80`) of an x86_64 kernel, whose numbers a filter",
        "without an architecture check does not match, each with its own mutant; a",
        "descriptor opened for reading where a grant allows it; a descriptor held (a",
        "namespace handle, an io_uring ring's personalities and registered files). Not",
        "attempted: the arm32 entry of an aarch64 kernel (the probe is an AArch64 program,",
        "and only a 32-bit one can make those calls) and x32 (a kernel option this lab's",
        "kernel lacks): a filter without an architecture check leaves them open unseen.",
    ]
    for surface in Surface:
        out += [
            "",
            f"## {_TITLES[surface]}",
            "",
            "| group | operation | syscalls | ways | checks | against | kernels | mutant |",
            "|---|---|---|---|---|---|---|---|",
        ]
        out += [_line(r) for r in all_rows() if r.surface is surface]
    out += [
        "",
        "## Syscalls that reach none of them",
        "",
        "| why | syscalls |",
        "|---|---|",
    ]
    out += [
        f"| {_cell(why)} | {', '.join(f'`{n}`' for n in names)} |" for why, names in GROUPS.items()
    ]
    for title, members in _ENUMERATIONS:
        out += ["", f"## {title}", "", "| member | checks | why |", "|---|---|---|"]
        out += [_member(name, m) for name, m in members.items()]
    return "\n".join(out) + "\n"


_ENUMERATIONS: tuple[tuple[str, dict[str, Member]], ...] = (
    ("Every capability (linux/capability.h, to CAP_LAST_CAP)", CAPABILITIES),
    ("Every namespace type (linux/sched.h)", NAMESPACES),
    ("Every io_uring opcode (linux/io_uring.h, to IORING_OP_LAST)", IO_URING_OPS),
    (
        "Every kind of descriptor it may hold (fdkinds.def, as /proc/self/fd names it)",
        DESCRIPTOR_KINDS,
    ),
)


def _member(name: str, member: Member) -> str:
    checks = ", ".join(f"`{c}`" for c in member.checks) or "-"
    return f"| `{name}` | {checks} | {_cell(member.reason) or '-'} |"


if __name__ == "__main__":
    print(markdown(), end="")
