"""Header-only access to a checkpoint on the Hugging Face Hub (``hf://ORG/NAME[@REV]``).

Needs the optional ``remote`` extra (``huggingface_hub``), which supplies the endpoint, the
token, the offline switch and an HTTP session that drops credentials on cross-host
redirects (the Hub redirects weight files to a CDN). We list the repository's top level
once, then fetch ``config.json`` and the shard index whole, and of each safetensors file
only the header: one range request for the first 64 KiB (enough for the header of any draft
checkpoint) and, for a larger header, one more for the rest. The weights are never
downloaded unless ``--deep``/``--scan-weights`` ask for tensor bytes, which are then read by
range as well.

Why not ``huggingface_hub.get_safetensors_metadata``: it parses headers itself (without the
checks of :mod:`spec_format.safetensors`), hides the byte ranges we need for ``--deep``, and
does not report stray files.
"""

from __future__ import annotations

import os
import re
from typing import Any

from spec_format.checkpoint import Storage, parse_hf_url
from spec_format.errors import InputError, UsageError
from spec_format.safetensors import ByteSource, HeaderError, HeaderErrorKind

#: First request per safetensors file: the 8-byte length plus a typical header.
PREFETCH = 64 * 1024
TIMEOUT = 30.0
_CONTENT_RANGE = re.compile(r"bytes\s+(\d+)-(\d+)/(\d+|\*)")


def _hub():
    """The few huggingface_hub pieces we use (its package attributes are lazy, so import
    each one by name)."""
    try:
        from types import SimpleNamespace

        from huggingface_hub import HfApi, constants, get_session, hf_hub_url
        from huggingface_hub.utils import build_hf_headers
    except ImportError:  # pragma: no cover - depends on the environment
        raise UsageError(
            "reading hf:// checkpoints needs the optional dependency huggingface_hub: "
            "pip install 'specfmt[remote]'"
        ) from None
    return SimpleNamespace(
        HfApi=HfApi,
        constants=constants,
        get_session=get_session,
        hf_hub_url=hf_hub_url,
        build_hf_headers=build_hf_headers,
    )


class HttpSource(ByteSource):
    """A remote file read with HTTP range requests (redirects followed, bytes counted).

    Works with the session of ``huggingface_hub`` whatever its flavour (httpx-style
    ``.stream()`` in huggingface_hub >= 1.0, requests-style ``.get(stream=True)`` before).
    A server that ignores ``Range`` is handled by reading only the bytes needed from the
    start of the body and closing the connection.
    """

    def __init__(self, url: str, session: Any, headers: dict[str, str], name: str) -> None:
        self.url = url
        self.name = name
        self.bytes_read = 0
        self._session = session
        self._headers = headers
        self._cache_offset = 0
        self._cache = b""
        self.size = 0
        first = self._fetch(0, PREFETCH, learn_size=True)
        self._cache = first

    def _read(self, offset: int, length: int) -> bytes:
        end = offset + length
        cache_end = self._cache_offset + len(self._cache)
        if self._cache_offset <= offset and end <= cache_end:
            start = offset - self._cache_offset
            return self._cache[start : start + length]
        return self._fetch(offset, length)

    # -- HTTP ---------------------------------------------------------------------------
    def _fetch(self, offset: int, length: int, learn_size: bool = False) -> bytes:
        headers = dict(self._headers)
        headers["Range"] = f"bytes={offset}-{offset + length - 1}"
        try:
            with _stream(self._session, self.url, headers) as (status, response_headers, chunks):
                if status == 416:  # empty file, or offset past the end
                    if learn_size:
                        self.size = (
                            _total_from_range(response_headers.get("content-range", "")) or 0
                        )
                    return b""
                if status not in (200, 206):
                    raise HeaderError(
                        HeaderErrorKind.FILE_UNREADABLE,
                        "http",
                        file=self.name,
                        url=self.name,
                        status=status,
                    )
                skip = 0
                if status == 206:
                    total = _total_from_range(response_headers.get("content-range", ""))
                    if learn_size:
                        if total is None:
                            raise HeaderError(
                                HeaderErrorKind.FILE_UNREADABLE,
                                "no-size",
                                file=self.name,
                                url=self.name,
                            )
                        self.size = total
                else:  # the whole file, from byte 0: skip to offset, stop after length
                    skip = offset
                    if learn_size:
                        self.size = int(response_headers.get("content-length", "0") or 0)
                return self._collect(chunks, skip, length)
        except HeaderError:
            raise
        except Exception as e:  # network errors of either HTTP library
            raise HeaderError(
                HeaderErrorKind.FILE_UNREADABLE,
                "fetch",
                file=self.name,
                url=self.name,
                error=f"{type(e).__name__}: {e}",
            ) from None

    def _collect(self, chunks, skip: int, length: int) -> bytes:
        out = bytearray()
        for chunk in chunks:
            self.bytes_read += len(chunk)
            if skip:
                if len(chunk) <= skip:
                    skip -= len(chunk)
                    continue
                chunk = chunk[skip:]
                skip = 0
            out += chunk[: length - len(out)]
            if len(out) >= length:
                break
        return bytes(out)


def _total_from_range(value: str) -> int | None:
    m = _CONTENT_RANGE.search(value or "")
    if not m or m.group(3) == "*":
        return None
    return int(m.group(3))


class _stream:
    """``with _stream(session, url, headers) as (status, headers, chunks)`` for both
    httpx-style and requests-style sessions; the connection is closed on exit."""

    def __init__(self, session: Any, url: str, headers: dict[str, str]) -> None:
        self.session, self.url, self.headers = session, url, headers
        self._ctx = None
        self._response = None

    def __enter__(self):
        if hasattr(self.session, "stream"):  # httpx
            self._ctx = self.session.stream(
                "GET", self.url, headers=self.headers, follow_redirects=True, timeout=TIMEOUT
            )
            r = self._ctx.__enter__()
            chunks = r.iter_bytes()
        else:  # requests
            r = self.session.get(
                self.url, headers=self.headers, stream=True, allow_redirects=True, timeout=TIMEOUT
            )
            chunks = r.iter_content(chunk_size=64 * 1024)
        self._response = r
        lowered = {k.lower(): v for k, v in r.headers.items()}
        return r.status_code, lowered, chunks

    def __exit__(self, *exc: object) -> None:
        if self._ctx is not None:
            self._ctx.__exit__(*exc)
        elif self._response is not None:
            self._response.close()


class HubStorage(Storage):
    """The top level of one Hub repository at one revision."""

    def __init__(self, repo_id: str, revision: str | None, endpoint: str | None = None) -> None:
        super().__init__()
        hub = _hub()
        if _offline(hub):
            raise UsageError(
                f"hf://{repo_id}: HF_HUB_OFFLINE is set; unset it or validate a local copy"
            )
        self.repo_id = repo_id
        self.revision = revision or "main"
        self.endpoint = (
            endpoint or os.environ.get("HF_ENDPOINT") or hub.constants.ENDPOINT
        ).rstrip("/")
        self._hub = hub
        self._headers = hub.build_hf_headers(library_name="specfmt")
        self._session = hub.get_session()
        self._small = 0
        self._listing: dict[str, int | None] | None = None

    @classmethod
    def from_url(cls, url: str, endpoint: str | None = None) -> HubStorage:
        repo, rev = parse_hf_url(url)
        return cls(repo, rev, endpoint)

    @property
    def url_prefix(self) -> str:
        rev = f"@{self.revision}" if self.revision != "main" else ""
        return f"hf://{self.repo_id}{rev}"

    def display(self, name: str) -> str:
        return f"{self.url_prefix}/{name}"

    def file_url(self, name: str) -> str:
        return self._hub.hf_hub_url(
            self.repo_id, name, revision=self.revision, endpoint=self.endpoint
        )

    def list_files(self) -> dict[str, int | None]:
        if self._listing is not None:
            return self._listing
        api = self._hub.HfApi(endpoint=self.endpoint, library_name="specfmt")
        try:
            entries = list(
                api.list_repo_tree(self.repo_id, revision=self.revision, recursive=False)
            )
        except Exception as e:  # RepositoryNotFoundError, RevisionNotFoundError, HTTP errors
            raise InputError(
                f"{self.url_prefix}: cannot list the repository ({_hub_error(e)})"
            ) from None
        self._listing = {
            e.path: getattr(e, "size", None)
            for e in entries
            if type(e).__name__ == "RepoFile" and "/" not in e.path
        }
        return self._listing

    def open(self, name: str) -> ByteSource:
        return HttpSource(self.file_url(name), self._session, self._headers, self.display(name))

    def read_small(self, name: str, limit: int) -> bytes | None:
        if name not in self.list_files():
            return None
        headers = dict(self._headers)
        try:
            with _stream(self._session, self.file_url(name), headers) as (status, _, chunks):
                if status != 200:
                    raise InputError(f"{self.display(name)}: HTTP {status}")
                data = bytearray()
                for chunk in chunks:
                    data += chunk
                    if len(data) > limit:
                        raise InputError(f"{self.display(name)}: over the {limit:,}-byte limit")
        except InputError:
            raise
        except Exception as e:
            raise InputError(f"{self.display(name)}: cannot be fetched ({_hub_error(e)})") from None
        self._small += len(data)
        return bytes(data)

    @property
    def bytes_read(self) -> int:
        return super().bytes_read + self._small


def _offline(hub) -> bool:
    check = getattr(hub.constants, "is_offline_mode", None)
    return (
        bool(check()) if callable(check) else bool(getattr(hub.constants, "HF_HUB_OFFLINE", False))
    )


def _hub_error(e: Exception) -> str:
    name = type(e).__name__
    if name == "RepositoryNotFoundError":
        return "repository not found, or private without a token"
    if name == "RevisionNotFoundError":
        return "revision not found"
    text = str(e).splitlines()[0] if str(e) else name
    return text[:200]
