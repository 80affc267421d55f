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
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
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
    log: list[Request] = field(default_factory=list)
    ignore_range: bool = False
    endpoint: str = ""
    cdn: str = ""

    def add(self, repo: str, directory: Path, revision: str = "main") -> None:
        self.repos.setdefault(repo, {})[revision] = {
            p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()
        }

    def sent(self, server: str, suffix: str = "") -> int:
        return sum(r.sent for r in self.log if r.server == server and r.path.endswith(suffix))


_RESOLVE = re.compile(r"^/(?P<repo>[^/]+/[^/]+)/resolve/(?P<rev>[^/]+)/(?P<file>.+)$")
_TREE = re.compile(r"^/api/models/(?P<repo>[^/]+/[^/]+)/tree/(?P<rev>[^/]+)$")
_CDN = re.compile(r"^/cdn/(?P<repo>[^/]+/[^/]+)/(?P<rev>[^/]+)/(?P<file>.+)$")


def _handler(hub: FakeHub, role: str):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:  # quiet
            pass

        def do_HEAD(self) -> None:
            self._serve(head=True)

        def do_GET(self) -> None:
            self._serve(head=False)

        def _serve(self, head: bool) -> None:
            path = urlsplit(self.path).path
            sent = 0
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
            return self._send(
                200, json.dumps(listing).encode(), {"Content-Type": "application/json"}
            )

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
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):  # the client stopped reading
                return 0
            return len(body)

    return Handler


class running:
    """``with running(FakeHub()) as hub:`` starts the hub and CDN servers on free ports."""

    def __init__(self, hub: FakeHub) -> None:
        self.hub = hub
        self.servers: list[ThreadingHTTPServer] = []

    def __enter__(self) -> FakeHub:
        for role in ("hub", "cdn"):
            server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self.hub, role))
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
        for server in self.servers:
            server.shutdown()
            server.server_close()
