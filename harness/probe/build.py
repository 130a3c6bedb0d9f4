"""Compile the probe's C sources into a static binary for a host's architecture,
cached by the hash of what goes in and by that architecture.

Static so it runs in any sandbox, guest or empty rootfs. For the controller's own
architecture musl is preferred (small, truly static); glibc's `gcc -static` is a
fallback with a warning. For another architecture, Debian's cross compiler
(`aarch64-linux-gnu-gcc`, with its static glibc) builds it: measured against
the `ziglang` package (docs/benchmarks.md), its first build takes 1.6 s instead
of 40-60 s per architecture, from 155 MB of packages instead of 410 MB. Every build is
checked before it is cached: an ELF for the wanted machine, with no interpreter.
"""

from __future__ import annotations

import hashlib
import logging
import os
import platform
import shutil
import struct
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from harness.cache import PROBES, cache_dir
from harness.errors import ProbeBuildError

log = logging.getLogger(__name__)

SOURCE_DIR = Path(__file__).parent
# Every file of the probe's C project: the compiled .c files, and the header and
# check table they include (a change to any of them must change the cache key).
SOURCE_SUFFIXES = (".c", ".h", ".def")
CFLAGS = ("-static", "-Os", "-Wall", "-Wextra")  # tests/probe also builds with -Werror
# `uname -m` spellings of the architectures a probe can be built for.
ARCH_OF_MACHINE = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}
ARCHES = ("x86_64", "aarch64")
# ELF e_machine of each architecture: a build is refused unless it matches.
ELF_MACHINE = {"x86_64": 62, "aarch64": 183}
PT_INTERP = 3


def native_arch() -> str:
    machine = platform.machine()
    return ARCH_OF_MACHINE.get(machine.lower(), machine)


def normalise_arch(machine: str) -> str:
    """A host's `uname -m` as a probe architecture, or ProbeBuildError."""
    arch = ARCH_OF_MACHINE.get(machine.strip().lower())
    if arch is None:
        raise ProbeBuildError(
            f"no probe for machine {machine!r} (architectures: {', '.join(ARCHES)})"
        )
    return arch


def musl_extra(arch: str) -> tuple[str, ...]:
    """musl lacks the kernel UAPI headers; append the system's after musl's own."""
    return ("-idirafter", "/usr/include", "-idirafter", f"/usr/include/{arch}-linux-gnu")


MUSL_EXTRA = musl_extra(native_arch())


@dataclass(frozen=True, slots=True)
class BuiltProbe:
    """A compiled probe and the content hash it is staged under on hosts."""

    path: Path
    sha256: str
    compiler: str
    arch: str = ""

    def manifest(self) -> dict[str, str]:
        return {"sha256": self.sha256, "compiler": self.compiler, "arch": self.arch}


def sources(directory: Path = SOURCE_DIR) -> list[Path]:
    """The probe's source files in `directory`, by name: a stable order for the
    hash and the compiler's command line."""
    return sorted(
        (p for p in directory.iterdir() if p.suffix in SOURCE_SUFFIXES and p.is_file()),
        key=lambda p: p.name,
    )


def source_digest(files: list[Path]) -> bytes:
    """One digest over every file's name and content, so a renamed, added or
    removed file changes it as much as an edited one."""
    h = hashlib.sha256()
    for path in files:
        data = path.read_bytes()
        h.update(f"{path.name}\0{len(data)}\0".encode())
        h.update(data)
    return h.digest()


def _compilers(arch: str) -> list[tuple[str, list[str]]]:
    """The compilers that can build for `arch` here, preferred first."""
    found = []
    if arch == native_arch():
        if shutil.which("musl-gcc"):
            found.append(("musl-gcc", ["musl-gcc", *CFLAGS, *musl_extra(arch)]))
        for cc in ("gcc", "cc"):
            if shutil.which(cc):
                found.append((cc, [cc, *CFLAGS]))
                break
    cross = f"{arch}-linux-gnu-gcc"
    if shutil.which(cross):
        found.append((cross, [cross, *CFLAGS]))
    return found


def build_probe(
    *, arch: str | None = None, source_dir: Path = SOURCE_DIR, cache: Path | None = None
) -> BuiltProbe:
    """Return the cached probe for these sources and architecture (default: this
    machine's), compiling it first if needed."""
    arch = normalise_arch(arch) if arch is not None else native_arch()
    try:
        files = sources(source_dir)
        inputs = source_digest(files)
    except OSError as exc:
        raise ProbeBuildError(f"cannot read the probe's sources in {source_dir}: {exc}") from exc
    units = [p for p in files if p.suffix == ".c"]
    if not units:
        raise ProbeBuildError(f"no probe sources (*.c) in {source_dir}")
    compilers = _compilers(arch)
    if not compilers:
        hint = (
            "install musl-tools (musl-gcc) or gcc"
            if arch == native_arch()
            else f"install gcc-{arch.replace('_', '-')}-linux-gnu (scripts/setup does)"
        )
        raise ProbeBuildError(f"no C compiler for {arch}: {hint}")
    errors: list[str] = []
    for name, argv in compilers:
        key = hashlib.sha256(inputs + "\0".join(argv).encode()).hexdigest()[:20]
        target = (cache or cache_dir(PROBES)) / arch / key / "probe"
        if not target.is_file():
            if arch == native_arch() and name != "musl-gcc":
                why = "musl-gcc failed" if errors else "musl-gcc not found"
                log.warning("%s; building the probe with %s -static", why, name)
            try:
                _compile(argv, units, target, arch=arch)
            except ProbeBuildError as exc:
                errors.append(str(exc))
                continue
        digest = hashlib.sha256(target.read_bytes()).hexdigest()
        return BuiltProbe(path=target, sha256=digest, compiler=name, arch=arch)
    raise ProbeBuildError("; ".join(errors))


def check_static_elf(path: Path, *, arch: str) -> None:
    """Refuse a binary that is not a static ELF for `arch`: a host must never be
    sent a probe it cannot run, nor one that needs a loader a sandbox lacks."""
    data = path.read_bytes()[:65536]
    if len(data) < 64 or data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ProbeBuildError(f"{path}: not a 64-bit little-endian ELF")
    machine = struct.unpack_from("<H", data, 18)[0]
    if machine != ELF_MACHINE[arch]:
        raise ProbeBuildError(f"{path}: ELF machine {machine}, expected {arch}")
    (phoff,) = struct.unpack_from("<Q", data, 32)
    phentsize, phnum = struct.unpack_from("<HH", data, 54)
    for i in range(phnum):
        at = phoff + i * phentsize
        if at + 4 > len(data):
            raise ProbeBuildError(f"{path}: program headers out of reach")
        if struct.unpack_from("<I", data, at)[0] == PT_INTERP:
            raise ProbeBuildError(f"{path}: dynamically linked (has an interpreter)")


def _compile(argv: list[str], units: list[Path], target: Path, *, arch: str) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".probe-")
    os.close(fd)
    try:
        done = subprocess.run(
            [*argv, "-o", tmp, *map(str, units)], capture_output=True, text=True, timeout=300
        )
        if done.returncode != 0:
            first = (done.stderr.strip().splitlines() or ["no output"])[0]
            raise ProbeBuildError(f"{argv[0]} failed to build the probe: {first}")
        check_static_elf(Path(tmp), arch=arch)
        os.chmod(tmp, 0o755)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


class Probes:
    """The probe for each host architecture of a run, built on first need.

    A run starts with the controller's own build; a host of another architecture
    gets its own, compiled (or found in the cache) when that host is prepared.
    """

    def __init__(self, first: BuiltProbe | None = None, *, cache: Path | None = None) -> None:
        self.cache = cache
        self.first = first if first is not None else build_probe(cache=cache)
        self._built: dict[str, BuiltProbe] = {self.first.arch or native_arch(): self.first}
        self._failed: dict[str, ProbeBuildError] = {}
        self._lock = threading.Lock()

    @classmethod
    def of(cls, probe: BuiltProbe | Probes) -> Probes:
        return probe if isinstance(probe, Probes) else cls(probe)

    def for_arch(self, arch: str) -> BuiltProbe:
        """The probe for `arch` (a `uname -m` spelling); blocking: call it in a thread.

        Raises:
            ProbeBuildError: no compiler for it, or the build failed (remembered:
                every host of that architecture gets the same error at once).
        """
        arch = normalise_arch(arch)
        with self._lock:
            if arch in self._built:
                return self._built[arch]
            if arch in self._failed:
                raise self._failed[arch]
            try:
                built = build_probe(arch=arch, cache=self.cache)
            except ProbeBuildError as exc:
                self._failed[arch] = exc
                raise
            self._built[arch] = built
            return built

    def manifest(self) -> dict[str, dict[str, str]]:
        with self._lock:
            return {arch: p.manifest() for arch, p in sorted(self._built.items())}
