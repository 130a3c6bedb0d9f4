"""A loopback stand-in for gVisor's release bucket, and stand-in releases to put in it.

`Bucket` serves a folder over HTTP on 127.0.0.1 the way the GCS XML API does:
`GET /<bucket>?prefix=...&delimiter=/` lists (paginated with NextMarker or
NextContinuationToken), `GET /<bucket>/<key>` downloads. It counts requests.

The releases are NOT real gVisor builds. Each "runsc" is a shell script that
execs the real runsc installed on this machine; the ones marked bad behave like
a regressed build by running the sandbox with host networking.
"""

from __future__ import annotations

import base64
import bz2
import datetime
import hashlib
import io
import shutil
import sys
import tarfile
import threading
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit
from xml.sax.saxutils import escape

NS = "http://doc.s3.amazonaws.com/2006-03-01"


class Bucket:
    """An HTTP server on 127.0.0.1:0 laid out like `storage.googleapis.com/<name>`."""

    def __init__(
        self, root: Path, *, name: str = "gvisor", page_size: int = 4, style: str = "marker"
    ) -> None:
        self.root = root
        self.name = name
        self.page_size = page_size
        self.style = style  # "marker" (V1: NextMarker) or "token" (V2: NextContinuationToken)
        self.requests: list[str] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/{self.name}"

    def downloads(self) -> Counter[str]:
        """Object GETs (not listings) by key."""
        prefix = f"/{self.name}/"
        with self._lock:
            return Counter(r.removeprefix(prefix) for r in self.requests if r.startswith(prefix))

    def listings(self) -> int:
        with self._lock:
            return sum(1 for r in self.requests if r.startswith(f"/{self.name}?"))

    def _keys(self) -> list[str]:
        return sorted(str(p.relative_to(self.root)) for p in self.root.rglob("*") if p.is_file())

    def listing(self, query: dict[str, list[str]]) -> bytes:
        prefix = query.get("prefix", [""])[0]
        delimiter = query.get("delimiter", [""])[0]
        after = query.get("marker", [""])[0]
        if token := query.get("continuation-token", [""])[0]:
            after = base64.urlsafe_b64decode(token).decode()
        entries: dict[str, bool] = {}  # name -> is a common prefix
        for key in self._keys():
            if not key.startswith(prefix):
                continue
            rest = key[len(prefix) :]
            if delimiter and delimiter in rest:
                entries[prefix + rest.split(delimiter)[0] + delimiter] = True
            else:
                entries[key] = False
        names = [n for n in sorted(entries) if n > after]
        page, more = names[: self.page_size], len(names) > self.page_size
        parts = [f'<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="{NS}">']
        parts.append(f"<Name>{self.name}</Name><Prefix>{escape(prefix)}</Prefix>")
        parts.append(f"<IsTruncated>{'true' if more else 'false'}</IsTruncated>")
        if more and self.style == "marker":
            parts.append(f"<NextMarker>{escape(page[-1])}</NextMarker>")
        elif more:
            token = base64.urlsafe_b64encode(page[-1].encode()).decode()
            parts.append(f"<NextContinuationToken>{token}</NextContinuationToken>")
        for n in page:
            if entries[n]:
                parts.append(f"<CommonPrefixes><Prefix>{escape(n)}</Prefix></CommonPrefixes>")
            else:
                size = (self.root / n).stat().st_size
                parts.append(f"<Contents><Key>{escape(n)}</Key><Size>{size}</Size></Contents>")
        parts.append("</ListBucketResult>")
        return "".join(parts).encode()

    def start(self) -> Bucket:
        bucket = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                with bucket._lock:
                    bucket.requests.append(self.path)
                url = urlsplit(self.path)
                path = unquote(url.path)
                if path == f"/{bucket.name}":
                    self._send(200, bucket.listing(parse_qs(url.query)), "application/xml")
                    return
                file = bucket.root / path.removeprefix(f"/{bucket.name}/")
                if not path.startswith(f"/{bucket.name}/") or ".." in path or not file.is_file():
                    self._send(404, b"<Error><Code>NoSuchKey</Code></Error>", "application/xml")
                    return
                self._send(200, file.read_bytes(), "application/octet-stream")

            def _send(self, status: int, body: bytes, kind: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(5)


# --- stand-in releases ---------------------------------------------------------------

GOOD = """#!/bin/sh
# Stand-in for gVisor {channel} {version}: NOT a real release. It wraps the real
# runsc installed on this machine and behaves exactly like it.
exec {runsc} "$@"
"""

# Host networking needs the bundle to have no network namespace: harness only
# omits it when the runtime's own flags say --network=host, so a build that
# "regressed" to host networking has to take the namespace out itself.
BAD = """#!/bin/sh
# Stand-in for gVisor {channel} {version}: NOT a real release. It wraps the real
# runsc and behaves like a regressed build: the sandbox gets host networking.
{flaky}
prev=""
for a in "$@"; do
  if [ "$prev" = "--bundle" ] && [ -f "$a/config.json" ]; then
    {python} -c 'import json, sys
path = sys.argv[1]
config = json.load(open(path))
spaces = config["linux"]["namespaces"]
config["linux"]["namespaces"] = [n for n in spaces if n["type"] != "network"]
json.dump(config, open(path, "w"))' "$a/config.json"
  fi
  prev=$a
done
for a do
  shift
  case $a in
    --network=none) set -- "$@" --network=host ;;
    *) set -- "$@" "$a" ;;
  esac
done
exec {runsc} "$@"
"""

# Alternates: every other `run` behaves like the good build.
FLAKY = """case " $* " in *" run "*)
  n=$(cat {state} 2>/dev/null || echo 0); n=$((n + 1)); echo "$n" > {state}
  if [ $((n % 2)) -eq 1 ]; then exec {runsc} "$@"; fi ;;
esac"""

BROKEN = """#!/bin/sh
# Stand-in for gVisor {channel} {version}: NOT a real release. A build that
# cannot start at all.
echo "runsc: stand-in for a broken build, exiting" >&2
exit 1
"""


@dataclass
class Releases:
    """What was published, and the facts the tests check against."""

    root: Path
    versions: list[str]
    first_bad: int
    broken: int
    corrupt: int
    flaky: int
    styles: dict[str, str] = field(default_factory=dict)


def _sha512_line(data: bytes, name: str) -> bytes:
    return f"{hashlib.sha512(data).hexdigest()}  {name}\n".encode()


def _tarball(runsc: bytes, *, folder: str | None) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in (("README", b"stand-in build\n"), ("runsc", runsc)):
            info = tarfile.TarInfo(f"{folder}/{name}" if folder else name)
            info.size, info.mode = len(data), 0o755
            tar.addfile(info, io.BytesIO(data))
    return bz2.compress(buf.getvalue())


def publish(
    root: Path,
    *,
    count: int,
    first_bad: int,
    broken: int,
    corrupt: int,
    flaky: int,
    runsc: str,
    python: str,
    state: Path,
    arch: str,
    start: datetime.date = datetime.date(2026, 9, 1),
) -> Releases:
    """Nightlies `start`, `start+1`... under `root/releases/nightly/`, alternating
    the two artifact styles; the tarballs put runsc at the top or in a folder."""
    names = [(start + datetime.timedelta(days=i)).isoformat() for i in range(count)]
    out = Releases(root, names, first_bad, broken, corrupt, flaky)
    for i, version in enumerate(names):
        fill = {"channel": "nightly", "version": version, "runsc": runsc, "python": python}
        if i == broken:
            script = BROKEN.format(**fill)
        elif i == flaky:
            script = BAD.format(**fill, flaky=FLAKY.format(state=state, runsc=runsc))
        elif i >= first_bad:
            script = BAD.format(**fill, flaky="")
        else:
            script = GOOD.format(**fill)
        data = script.encode()
        folder = root / "releases" / "nightly" / version / arch
        folder.mkdir(parents=True)
        if i % 2 == 0:
            name, body = "runsc", data
        else:
            name, body = (
                "gvisor.tar.bz2",
                _tarball(data, folder=f"gvisor-{version}" if i % 4 == 1 else None),
            )
        out.styles[version] = name
        (folder / name).write_bytes(body)
        (folder / name).chmod(0o755)
        checked = body + b"tampered" if i == corrupt else body
        (folder / f"{name}.sha512").write_bytes(_sha512_line(checked, name))
    (root / "releases" / "nightly" / "latest").mkdir()  # the bucket has one; not a version
    return out


ARCH = "x86_64"


def stand_ins(root: Path, **overrides: int) -> Releases:
    """13 nightlies; first bad at 9; broken at 5; checksum wrong at 6; flaky at 11."""
    layout = {"count": 13, "first_bad": 9, "broken": 5, "corrupt": 6, "flaky": 11, **overrides}
    return publish(
        root,
        runsc=shutil.which("runsc") or "/usr/bin/runsc",
        python=sys.executable,
        state=root.parent / "flaky-state",
        arch=ARCH,
        **layout,
    )
