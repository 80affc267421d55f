"""A local HTTP server that serves checkpoints the way the Hugging Face Hub does.

* ``GET /api/models/ORG/NAME/tree/REV`` lists the top-level files (as ``list_repo_tree``
  expects them);
* ``GET /ORG/NAME/resolve/REV/FILE`` serves small files directly and redirects
  ``*.safetensors`` (LFS files on the Hub) to a *second* server standing in for the CDN, so
  the redirect crosses origins like the real one;
* both honour ``Range`` with ``206 Partial Content`` and ``Content-Range``, unless told to
  ignore ranges;
* unknown repositories, revisions and files get 404 with the Hub's ``X-Error-Code``.

Every request is logged with the bytes sent, so tests can prove that only headers travel.
Nothing here touches the network beyond 127.0.0.1.

It can also lie (``FakeHub.hostile``), for the remote bounds: ``"stall"`` (the listing never
answers), ``"drip"`` (bodies sent one byte per ``drip_s``), ``"drip-cdn"`` (only the weights files drip), ``"retry-after"`` (429 with
``Retry-After: 3600``), ``"endless-pages"`` (every listing page links to another),
``"huge-listing"`` (a listing of ``huge_bytes`` bytes). ``stall_repos`` stalls the listing
of those repositories only (the others answer). Every wait ends when the servers stop or
after ``max_wait_s``, so a test can never leave a thread hanging.

``latency_s`` delays every answer (a Hub across a network, for the audit bench), and
``connections`` counts the connections each server accepted (a client that reuses its
connections opens few).
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit


@dataclass
class Request:
    server: str  # "hub" or "cdn"
    method: str
    path: str
    range: str | None
    sent: int
    authorization: bool


@dataclass
class FakeHub:
    repos: dict[str, dict[str, dict[str, bytes]]] = field(
        default_factory=dict
    )  # repo -> rev -> files
    log: list[Request] = field(default_factory=list)  # each request once answered
    started: list[str] = field(default_factory=list)  # each request's path as it arrives
    ignore_range: bool = False
    endpoint: str = ""
    cdn: str = ""
    hostile: str | None = None  # see the module docstring
    drip_s: float = 10.0
    huge_bytes: int = 300 * 1024 * 1024
    max_wait_s: float = 60.0
    stall_repos: set[str] = field(default_factory=set)
    latency_s: float = 0.0
    connections: dict[str, int] = field(default_factory=lambda: {"hub": 0, "cdn": 0})
    stopped: threading.Event = field(default_factory=threading.Event)

    def add(self, repo: str, directory: Path, revision: str = "main") -> None:
        self.repos.setdefault(repo, {})[revision] = {
            p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()
        }

    def sent(self, server: str, suffix: str = "") -> int:
        return sum(r.sent for r in self.log if r.server == server and r.path.endswith(suffix))


_COUNT = threading.Lock()
_RESOLVE = re.compile(r"^/(?P<repo>[^/]+/[^/]+)/resolve/(?P<rev>[^/]+)/(?P<file>.+)$")
_TREE = re.compile(r"^/api/models/(?P<repo>[^/]+/[^/]+)/tree/(?P<rev>[^/]+)$")
_CDN = re.compile(r"^/cdn/(?P<repo>[^/]+/[^/]+)/(?P<rev>[^/]+)/(?P<file>.+)$")


def _handler(hub: FakeHub, role: str):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:  # quiet
            pass

        def setup(self) -> None:  # one call per accepted connection
            super().setup()
            with _COUNT:
                hub.connections[role] += 1

        def do_HEAD(self) -> None:
            self._serve(head=True)

        def do_GET(self) -> None:
            self._serve(head=False)

        def _serve(self, head: bool) -> None:
            path = urlsplit(self.path).path
            hub.started.append(path)
            sent = 0
            if hub.latency_s:
                hub.stopped.wait(hub.latency_s)
            try:
                if role == "hub" and (m := _TREE.match(path)):
                    sent = self._tree(m["repo"], unquote(m["rev"]))
                elif role == "hub" and (m := _RESOLVE.match(path)):
                    sent = self._resolve(m["repo"], unquote(m["rev"]), unquote(m["file"]), head)
                elif role == "cdn" and (m := _CDN.match(path)):
                    sent = self._file(m["repo"], unquote(m["rev"]), unquote(m["file"]), head)
                else:
                    sent = self._error(404, "EntryNotFound")
            finally:
                hub.log.append(
                    Request(
                        role,
                        self.command,
                        path,
                        self.headers.get("Range"),
                        sent,
                        "authorization" in {k.lower() for k in self.headers},
                    )
                )

        def _files(self, repo: str, rev: str) -> dict[str, bytes] | int:
            if repo not in hub.repos:
                return self._error(404, "RepoNotFound")
            if rev not in hub.repos[repo]:
                return self._error(404, "RevisionNotFound")
            return hub.repos[repo][rev]

        def _tree(self, repo: str, rev: str) -> int:
            if hub.hostile == "stall" or repo in hub.stall_repos:
                hub.stopped.wait(hub.max_wait_s)
                return 0
            if hub.hostile == "retry-after":
                return self._send(429, b"slow down", {"Retry-After": "3600"})
            if hub.hostile == "huge-listing":
                return self._huge_listing()
            files = self._files(repo, rev)
            if isinstance(files, int):
                return files
            listing = []
            for name, data in files.items():
                entry = {
                    "type": "file",
                    "oid": hashlib.sha1(data).hexdigest(),
                    "size": len(data),
                    "path": name,
                }
                if name.endswith(".safetensors"):
                    entry["lfs"] = {
                        "oid": hashlib.sha256(data).hexdigest(),
                        "size": len(data),
                        "pointerSize": 134,
                    }
                listing.append(entry)
            headers = {"Content-Type": "application/json"}
            if hub.hostile == "endless-pages":
                page = (
                    int(re.search(r"cursor=(\d+)", self.path or "")[1])
                    if "cursor=" in self.path
                    else 0
                )
                listing = [
                    {"type": "file", "path": f"junk-{page}-{i}.txt", "size": 1} for i in range(200)
                ]
                headers["Link"] = (
                    f'<{hub.endpoint}{urlsplit(self.path).path}?cursor={page + 1}>; rel="next"'
                )
            return self._send(200, json.dumps(listing).encode(), headers)

        def _huge_listing(self) -> int:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(hub.huge_bytes))
            self.end_headers()
            entry = b'{"type":"file","path":"x.txt","size":1},'
            sent = 0
            try:
                self.wfile.write(b"[")
                chunk = entry * 4096
                while sent < hub.huge_bytes - len(chunk) and not hub.stopped.is_set():
                    self.wfile.write(chunk)
                    sent += len(chunk)
            except (BrokenPipeError, ConnectionResetError):
                pass
            return sent

        def _resolve(self, repo: str, rev: str, name: str, head: bool) -> int:
            files = self._files(repo, rev)
            if isinstance(files, int):
                return files
            if name not in files:
                return self._error(404, "EntryNotFound")
            if name.endswith(".safetensors"):
                location = f"{hub.cdn}/cdn/{repo}/{rev}/{name}"
                return self._send(
                    302, b"", {"Location": location, "X-Linked-Size": str(len(files[name]))}
                )
            return self._file(repo, rev, name, head)

        def _file(self, repo: str, rev: str, name: str, head: bool) -> int:
            files = self._files(repo, rev)
            if isinstance(files, int):
                return files
            data = files.get(name)
            if data is None:
                return self._error(404, "EntryNotFound")
            wanted = self.headers.get("Range")
            if wanted and not hub.ignore_range:
                m = re.fullmatch(r"bytes=(\d+)-(\d*)", wanted)
                start = int(m[1])
                end = min(int(m[2]) if m[2] else len(data) - 1, len(data) - 1)
                if start >= len(data):
                    return self._send(416, b"", {"Content-Range": f"bytes */{len(data)}"})
                body = data[start : end + 1]
                return self._send(
                    206, body, {"Content-Range": f"bytes {start}-{end}/{len(data)}"}, head
                )
            return self._send(200, data, {}, head)

        def _error(self, status: int, code: str) -> int:
            return self._send(status, json.dumps({"error": code}).encode(), {"X-Error-Code": code})

        def _send(self, status: int, body: bytes, headers: dict, head: bool = False) -> int:
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if head:
                return 0
            try:
                if body and (
                    hub.hostile == "drip" or (hub.hostile == "drip-cdn" and role == "cdn")
                ):
                    return self._drip(body)
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):  # the client stopped reading
                return 0
            return len(body)

        def _drip(self, body: bytes) -> int:
            start = time.monotonic()
            for i in range(len(body)):
                self.wfile.write(body[i : i + 1])
                self.wfile.flush()
                if hub.stopped.wait(hub.drip_s) or time.monotonic() - start > hub.max_wait_s:
                    return i + 1
            return len(body)

    return Handler


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # many clients at once (an audit's jobs) are not turned away


class running:
    """``with running(FakeHub()) as hub:`` starts the hub and CDN servers on free ports."""

    def __init__(self, hub: FakeHub) -> None:
        self.hub = hub
        self.servers: list[ThreadingHTTPServer] = []

    def __enter__(self) -> FakeHub:
        for role in ("hub", "cdn"):
            server = _Server(("127.0.0.1", 0), _handler(self.hub, role))
            server.daemon_threads = True
            threading.Thread(
                target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
            ).start()
            self.servers.append(server)
            url = f"http://127.0.0.1:{server.server_address[1]}"
            if role == "hub":
                self.hub.endpoint = url
            else:
                self.hub.cdn = url
        return self.hub

    def __exit__(self, *exc: object) -> None:
        self.hub.stopped.set()  # ends every stalled or dripping answer
        for server in self.servers:
            server.shutdown()
            server.server_close()
