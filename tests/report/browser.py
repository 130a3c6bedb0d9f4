"""A real headless Chromium, driven over the DevTools protocol on a pipe.

`--remote-debugging-pipe` speaks CDP on fds 3 and 4 (NUL-terminated JSON), so no
port is opened and no websocket library is needed. The browser runs in a network
namespace of its own (`unshare --net`) when that works, and with a dead proxy and
resolver otherwise: a page that tried to fetch anything could not, and every
request it made is recorded in `requests` for the test to inspect.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--no-default-browser-check",
    "--proxy-server=socks5://127.0.0.1:9",
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--hide-scrollbars",
    "--remote-debugging-pipe",
]


FD_WRAPPER = (  # move both ends clear of 3 and 4 first, so neither clobbers the other
    "import fcntl, os, sys; a, b = (fcntl.fcntl(int(x), fcntl.F_DUPFD, 10) for x in sys.argv[1:3]);"
    " os.dup2(a, 3); os.dup2(b, 4); os.execvp(sys.argv[3], sys.argv[3:])"
)


class BrowserError(RuntimeError):
    pass


def _own_netns_works() -> bool:
    unshare = shutil.which("unshare")
    if unshare is None:
        return False
    done = subprocess.run([unshare, "--net", "true"], capture_output=True)
    return done.returncode == 0


class Chromium:
    """One browser with one page. Use as a context manager."""

    def __init__(self, binary: str, folder: Path, *, timeout: float = 20.0) -> None:
        self.binary = binary
        self.folder = folder
        self.timeout = timeout
        self.requests: list[str] = []
        self.isolated = False
        self._buffer = b""
        self._next = 0
        self._session: str | None = None
        self._events: list[dict[str, Any]] = []

    def __enter__(self) -> Chromium:
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        argv = [self.binary, *FLAGS, f"--user-data-dir={self.folder / 'profile'}", "about:blank"]
        # The browser reads commands on fd 3 and writes replies on fd 4; a tiny exec
        # wrapper puts the pipe ends there (dash cannot redirect fds above 9).
        wrapped = [sys.executable, "-c", FD_WRAPPER, str(to_browser_r), str(from_browser_w), *argv]
        if _own_netns_works():
            wrapped = ["unshare", "--net", *wrapped]
            self.isolated = True
        self._log = open(self.folder / "chromium.log", "wb")
        self.process = subprocess.Popen(
            wrapped,
            pass_fds=(to_browser_r, from_browser_w),
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=self._log,
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        try:
            target = self.call("Target.createTarget", {"url": "about:blank"}, page=False)
            attached = self.call(
                "Target.attachToTarget",
                {"targetId": target["targetId"], "flatten": True},
                page=False,
            )
            self._session = attached["sessionId"]
            for domain in ("Page", "Network", "Runtime"):
                self.call(f"{domain}.enable")
        except Exception:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        try:
            if self.process.poll() is None:
                with contextlib.suppress(BrowserError, OSError):
                    self.call("Browser.close", page=False)
                try:
                    self.process.wait(10)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait()
        finally:
            for fd in (self._to_browser, self._from_browser):
                with contextlib.suppress(OSError):
                    os.close(fd)
            self._log.close()

    # -- protocol -----------------------------------------------------------------

    def _receive(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError("no answer from chromium in time")
            ready, _, _ = select.select([self._from_browser], [], [], left)
            if ready:
                chunk = os.read(self._from_browser, 1 << 16)
                if not chunk:
                    raise BrowserError("chromium closed the pipe (see chromium.log)")
                self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        data: dict[str, Any] = json.loads(message)
        if data.get("method") == "Network.requestWillBeSent":
            self.requests.append(data["params"]["request"]["url"])
        return data

    def call(
        self, method: str, params: dict[str, Any] | None = None, *, page: bool = True
    ) -> dict[str, Any]:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if page and self._session:
            message["sessionId"] = self._session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            data = self._receive(deadline)
            if data.get("id") == self._next:
                if "error" in data:
                    raise BrowserError(f"{method}: {data['error']}")
                result: dict[str, Any] = data.get("result", {})
                return result
            if "method" in data:
                self._events.append(data)

    def wait_event(self, method: str) -> dict[str, Any]:
        deadline = time.monotonic() + self.timeout
        while True:
            for index, event in enumerate(self._events):
                if event["method"] == method:
                    del self._events[: index + 1]
                    return event
            self._events.clear()
            data = self._receive(deadline)
            if data.get("method") == method:
                return data

    # -- what a test does -----------------------------------------------------------

    def open(self, path: Path, *, width: int = 1280, height: int = 900) -> None:
        """Load a local file and wait until it has loaded."""
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )
        self._events.clear()
        self.call("Page.navigate", {"url": path.resolve().as_uri()})
        self.wait_event("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        result = self.call(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
        )
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str) -> Any:
        """Poll until `expression` is truthy (a click's navigation lands a moment later)."""
        deadline = time.monotonic() + self.timeout
        while True:
            value = self.evaluate(expression)
            if value or time.monotonic() > deadline:
                return value
            time.sleep(0.05)

    def click(self, selector: str) -> None:
        """A real mouse click (press and release) at the middle of the element."""
        box = self.evaluate(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
            " if (!e) return null; e.scrollIntoView({block: 'center'});"
            " const r = e.getBoundingClientRect();"
            " return {x: r.left + r.width / 2, y: r.top + r.height / 2}; })()"
        )
        if box is None:
            raise BrowserError(f"no element matches {selector}")
        for kind in ("mousePressed", "mouseReleased"):
            self.call(
                "Input.dispatchMouseEvent",
                {"type": kind, "x": box["x"], "y": box["y"], "button": "left", "clickCount": 1},
            )

    def screenshot(self, path: Path) -> Path:
        shot = self.call("Page.captureScreenshot", {"format": "png"})
        path.write_bytes(base64.b64decode(shot["data"]))
        return path
