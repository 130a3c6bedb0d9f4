"""Compile probe.c into a static binary, cached by the hash of what goes in.

Static so it runs in any sandbox, guest or empty rootfs. musl is preferred
(small, truly static); glibc's `gcc -static` is a fallback with a warning.
"""

from __future__ import annotations

import hashlib
import logging
import os
import platform
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from harness.errors import ProbeBuildError

log = logging.getLogger(__name__)

SOURCE = Path(__file__).with_name("probe.c")
CFLAGS = ("-static", "-Os", "-Wall", "-Wextra")  # tests/probe also builds with -Werror
# musl lacks the kernel UAPI headers; append the system's after musl's own.
MUSL_EXTRA = (
    "-idirafter",
    "/usr/include",
    "-idirafter",
    f"/usr/include/{platform.machine()}-linux-gnu",
)


@dataclass(frozen=True, slots=True)
class BuiltProbe:
    """A compiled probe and the content hash it is staged under on hosts."""

    path: Path
    sha256: str
    compiler: str


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(base) / "harness" / "probe"


def _compilers() -> list[tuple[str, list[str]]]:
    found = []
    if shutil.which("musl-gcc"):
        found.append(("musl-gcc", ["musl-gcc", *CFLAGS, *MUSL_EXTRA]))
    for cc in ("gcc", "cc"):
        if shutil.which(cc):
            found.append((cc, [cc, *CFLAGS]))
            break
    return found


def build_probe(*, source: Path = SOURCE, cache: Path | None = None) -> BuiltProbe:
    """Return the cached probe for this source, compiling it first if needed."""
    try:
        text = source.read_bytes()
    except OSError as exc:
        raise ProbeBuildError(f"cannot read probe source {source}: {exc}") from exc
    compilers = _compilers()
    if not compilers:
        raise ProbeBuildError("no C compiler found: install musl-tools (musl-gcc) or gcc")
    errors: list[str] = []
    for name, argv in compilers:
        key = hashlib.sha256(text + "\0".join(argv).encode()).hexdigest()[:20]
        target = (cache or cache_root()) / key / "probe"
        if not target.is_file():
            if name != "musl-gcc":
                why = "musl-gcc failed" if errors else "musl-gcc not found"
                log.warning("%s; building the probe with %s -static", why, name)
            try:
                _compile(argv, source, target)
            except ProbeBuildError as exc:
                errors.append(str(exc))
                continue
        digest = hashlib.sha256(target.read_bytes()).hexdigest()
        return BuiltProbe(path=target, sha256=digest, compiler=name)
    raise ProbeBuildError("; ".join(errors))


def _compile(argv: list[str], source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".probe-")
    os.close(fd)
    try:
        done = subprocess.run(
            [*argv, "-o", tmp, str(source)], capture_output=True, text=True, timeout=300
        )
        if done.returncode != 0:
            first = (done.stderr.strip().splitlines() or ["no output"])[0]
            raise ProbeBuildError(f"{argv[0]} failed to build the probe: {first}")
        os.chmod(tmp, 0o755)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
