"""A deny-list of scripts/mutant-seccomp's, loaded before a command runs: what the
mutants' bwrap loads (`--seccomp`), for the probe-level tests of the ways it leaves."""

from __future__ import annotations

import ctypes
import importlib.util
from collections.abc import Callable
from importlib.machinery import SourceFileLoader

from tests.conftest import ROOT


def deny_list(
    calls: str, *, any_arch: bool = False, i386: list[str] | None = None
) -> Callable[[], None]:
    """A preexec that loads scripts/mutant-seccomp's deny-list of `calls` (the mutants'
    bwrap loads the same program), no_new_privs first."""
    loader = SourceFileLoader("mutant_seccomp", str(ROOT / "scripts" / "mutant-seccomp"))
    spec = importlib.util.spec_from_loader("mutant_seccomp", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    program = module.program(calls.split(","), any_arch, i386)

    def load() -> None:
        class Fprog(ctypes.Structure):
            _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

        libc = ctypes.CDLL(None, use_errno=True)
        code = ctypes.create_string_buffer(program, len(program))
        fprog = Fprog(len(program) // 8, ctypes.addressof(code))
        # PR_SET_NO_NEW_PRIVS, then PR_SET_SECCOMP with SECCOMP_MODE_FILTER
        if libc.prctl(38, 1, 0, 0, 0) != 0 or libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "seccomp")

    return load
