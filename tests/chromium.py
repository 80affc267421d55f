"""A headless Chromium driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``):
one browser for many pages, no websocket client and no downloaded browser. The binary is the
distribution's package (``apt-get install chromium``); :func:`find` returns None without it."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find() -> str | None:
    """The Chromium binary named by $SPECFMT_CHROMIUM or found on PATH."""
    named = os.environ.get("SPECFMT_CHROMIUM")
    if named:
        return shutil.which(named) or (named if Path(named).is_file() else None)
    return next((path for name in CANDIDATES if (path := shutil.which(name))), None)


def _above_9(fd: int) -> int:
    import fcntl

    moved = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
    os.close(fd)
    return moved


class BrowserError(RuntimeError):
    pass


class Chromium:
    """``with Chromium(binary) as browser: browser.open(url, width=1280)``."""

    def __init__(self, binary: str, timeout: float = 30.0) -> None:
        self.binary = binary
        self.timeout = timeout
        self._next_id = 0
        self._buffer = b""
        self.requests: list[str] = []  # every URL the page asked for since the last open()
        self._loaded = False

    def __enter__(self) -> Chromium:
        self._profile = tempfile.TemporaryDirectory(prefix="specfmt-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # the browser's ends move above 9, so mapping them onto 3 and 4 cannot clobber them
        to_browser_r, from_browser_w = (_above_9(fd) for fd in (to_browser_r, from_browser_w))
        args = [
            "--headless",
            "--remote-debugging-pipe",
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--disable-background-networking",
            f"--user-data-dir={self._profile.name}",
            "about:blank",
        ]
        if os.geteuid() == 0:  # Chromium refuses to run its sandbox as root
            args.insert(0, "--no-sandbox")

        def onto_3_and_4() -> None:  # in the child: the protocol runs on fds 3 (in) and 4 (out)
            os.dup2(to_browser_r, 3)
            os.dup2(from_browser_w, 4)

        self._proc = subprocess.Popen(
            [self.binary, *args],
            preexec_fn=onto_3_and_4,
            close_fds=False,  # dup2 leaves 3 and 4 inheritable; the rest is close-on-exec
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        target = self._call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self._session = self._call("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        for domain in ("Page", "Network", "Runtime"):
            self.call(f"{domain}.enable")
        return self

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(BrowserError, OSError):
            self._call("Browser.close")
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        for fd in (self._to_browser, self._from_browser):
            os.close(fd)
        self._profile.cleanup()

    # -- the protocol -----------------------------------------------------------------------

    def _send(self, message: dict[str, Any]) -> None:
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")

    def _receive(self) -> dict[str, Any]:
        import select

        while b"\0" not in self._buffer:
            ready, _, _ = select.select([self._from_browser], [], [], self.timeout)
            if not ready:
                raise BrowserError(f"no answer from Chromium within {self.timeout} s")
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise BrowserError("Chromium closed the DevTools pipe")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def _call(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self._send(message)
        while True:
            reply = self._receive()
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self._event(reply)

    def _event(self, event: dict[str, Any]) -> None:
        if event.get("method") == "Network.requestWillBeSent":
            self.requests.append(event["params"]["request"]["url"])
        elif event.get("method") == "Page.loadEventFired":
            self._loaded = True

    def call(self, method: str, params: dict | None = None) -> dict:
        """A command to the page."""
        return self._call(method, params, self._session)

    # -- what the tests use -----------------------------------------------------------------

    def open(self, url: str, *, width: int, height: int = 900) -> None:
        """Load ``url`` in a ``width`` x ``height`` viewport and wait for its load event."""
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )
        self.requests = []
        self._loaded = False
        self.call("Page.navigate", {"url": url})
        while not self._loaded:
            self._event(self._receive())

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression (a promise is awaited)."""
        result = self.call(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
        )
        if "exceptionDetails" in result:
            raise BrowserError(f"script failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, path: Path) -> None:
        data = self.call("Page.captureScreenshot", {"format": "png"})["data"]
        path.write_bytes(base64.b64decode(data))
