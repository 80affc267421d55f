"""Header-only access to a checkpoint on the Hugging Face Hub (``hf://ORG/NAME[@REV]``).

Needs the optional ``remote`` extra (``huggingface_hub``), which supplies the endpoint, the
token, the offline switch and an HTTP session that drops credentials on cross-host
redirects (the Hub redirects weight files to a CDN). We list the repository's top level
once, then fetch ``config.json`` and the shard index whole, and of each safetensors file
only the header: one range request for the first 64 KiB (enough for the header of any draft
checkpoint) and, for a larger header, one more for the rest. The weights are never
downloaded unless ``--deep``/``--scan-weights`` ask for tensor bytes, which are then read by
range as well.

Every remote checkpoint gets one :class:`Budget`: an overall deadline and a byte budget for
everything fetched (listing, config, index, headers, tensor bytes), checked between chunks
and used as the per-request timeout, so a server that never answers, drips one byte at a
time, asks to retry in an hour or paginates forever ends in a clear error within the
deadline. The listing is fetched here (not with ``HfApi.list_repo_tree``, whose back-off
honours any ``Retry-After``) with a cap on pages, bytes and entries, and at most
:data:`MAX_SAFETENSORS_FILES` weights files are opened.

Why not ``huggingface_hub.get_safetensors_metadata``: it parses headers itself (without the
checks of :mod:`spec_format.parsers.safetensors`), hides the byte ranges we need for ``--deep``, and
does not report stray files.
"""

from __future__ import annotations

import json
import os
import re
import time
from typing import Any
from urllib.parse import quote

from spec_format.base import extras
from spec_format.base.errors import InputError, UsageError
from spec_format.parsers.safetensors import ByteSource, HeaderError, HeaderErrorKind
from spec_format.parsers.storage import Storage, parse_hf_url

#: First request per safetensors file: the 8-byte length plus a typical header.
PREFETCH = 64 * 1024
#: the most of an answer's unread rest that is read to keep its connection (see _drain)
DRAIN_BYTES = 64 * 1024
TIMEOUT = 30.0  # per request, and never more than what is left of the deadline
#: overall limits per hf:// checkpoint (environment variables override them)
DEADLINE_S = 300.0  # SPECFMT_HF_DEADLINE
MAX_BYTES = 4 * 1024**3  # SPECFMT_HF_MAX_BYTES (tensor bytes of --deep/--scan-weights count)
MAX_LISTING_BYTES = 16 * 1024 * 1024
MAX_LISTING_PAGES = 50
MAX_LISTING_ENTRIES = 20_000
MAX_SAFETENSORS_FILES = 1_000
#: a Retry-After longer than this (or than the time left) is an error, not a wait
MAX_RETRY_WAIT_S = 10.0
MAX_RETRIES = 3
_CONTENT_RANGE = re.compile(r"bytes\s+(\d+)-(\d+)/(\d+|\*)")


def _hub():
    """The few huggingface_hub pieces we use (its package attributes are lazy, so import
    each one by name)."""
    try:
        from types import SimpleNamespace

        from huggingface_hub import HfApi, constants, get_session, hf_hub_url
        from huggingface_hub.utils import build_hf_headers
    except ImportError:  # pragma: no cover - depends on the environment
        raise UsageError(extras.missing("reading hf:// checkpoints", "remote")) from None
    return SimpleNamespace(
        HfApi=HfApi,
        constants=constants,
        get_session=get_session,
        hf_hub_url=hf_hub_url,
        build_hf_headers=build_hf_headers,
    )


def prepare() -> None:
    """Import huggingface_hub and make its HTTP client in the calling thread, before worker
    threads fetch drafts with it (they then share one client and its connections); a
    :class:`UsageError` when the remote extra is missing."""
    _hub().get_session()


class BudgetExceeded(Exception):
    """The deadline or the byte budget of one remote checkpoint is spent."""


class Budget:
    """One deadline and one byte budget, shared by every request for one checkpoint."""

    def __init__(self, seconds: float | None = None, max_bytes: int | None = None) -> None:
        self.seconds = (
            seconds if seconds is not None else _env_number("SPECFMT_HF_DEADLINE", DEADLINE_S)
        )
        self.max_bytes = int(
            max_bytes if max_bytes is not None else _env_number("SPECFMT_HF_MAX_BYTES", MAX_BYTES)
        )
        self.deadline = time.monotonic() + self.seconds
        self.used = 0

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def timeout(self) -> float:
        """The timeout of the next request: never past the deadline."""
        self.check()
        return max(0.05, min(TIMEOUT, self.remaining()))

    def check(self) -> None:
        if self.remaining() <= 0:
            raise BudgetExceeded(
                f"stopped: the {self.seconds:g}-second deadline for one hf:// checkpoint is "
                "spent (a slow or unresponsive server; raise SPECFMT_HF_DEADLINE to wait longer)"
            )

    def spend(self, n: int) -> None:
        self.used += n
        if self.used > self.max_bytes:
            raise BudgetExceeded(
                f"stopped: more than {self.max_bytes:,} bytes fetched for one hf:// checkpoint "
                "(raise SPECFMT_HF_MAX_BYTES, or download it and validate the local copy)"
            )
        self.check()

    def retry_wait(self, status: int, headers: dict[str, str], attempt: int) -> float | None:
        """Seconds to wait before retrying a 429/503 answer, or None when not retrying;
        raises when the server asks for a wait the budget does not allow."""
        if status not in (429, 503) or attempt >= MAX_RETRIES:
            return None
        raw = headers.get("retry-after", "1")
        try:
            wait = max(0.0, float(raw))
        except ValueError:
            wait = MAX_RETRY_WAIT_S + 1  # an HTTP date: assume long
        if not wait < min(MAX_RETRY_WAIT_S, self.remaining()):
            raise BudgetExceeded(
                f"the server answered HTTP {status} and asked to retry after {raw[:40]} s, "
                f"longer than specfmt waits ({MAX_RETRY_WAIT_S:g} s); try again later"
            )
        return wait


def _env_number(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise UsageError(f"{name}={raw!r}: expected a number") from None
    if not 0 < value < 1e15:
        raise UsageError(f"{name}={raw!r}: expected a positive number")
    return value


class HttpSource(ByteSource):
    """A remote file read with HTTP range requests (redirects followed, bytes counted).

    Works with the session of ``huggingface_hub`` whatever its flavour (httpx-style
    ``.stream()`` in huggingface_hub >= 1.0, requests-style ``.get(stream=True)`` before).
    A server that ignores ``Range`` is handled by reading only the bytes needed from the
    start of the body and closing the connection.
    """

    def __init__(
        self,
        url: str,
        session: Any,
        headers: dict[str, str],
        name: str,
        budget: Budget | None = None,
    ) -> None:
        self.url = url
        self.name = name
        self.bytes_read = 0
        self.budget = budget or Budget()
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
        for attempt in range(MAX_RETRIES + 1):
            try:
                return self._fetch_once(offset, length, learn_size, attempt)
            except _Retry as r:
                time.sleep(r.wait)
        raise AssertionError("unreachable")  # pragma: no cover - the last attempt raises

    def _fetch_once(self, offset: int, length: int, learn_size: bool, attempt: int) -> bytes:
        headers = dict(self._headers)
        headers["Range"] = f"bytes={offset}-{offset + length - 1}"
        try:
            with _stream(self._session, self.url, headers, self.budget) as (
                status,
                response_headers,
                chunks,
            ):
                wait = self.budget.retry_wait(status, response_headers, attempt)
                if wait is not None:
                    raise _Retry(wait)
                if status == 416:  # empty file, or offset past the end
                    self._drain(chunks)
                    if learn_size:
                        self.size = (
                            _total_from_range(response_headers.get("content-range", "")) or 0
                        )
                    return b""
                if status not in (200, 206):
                    self._drain(chunks)
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
                data = self._collect(chunks, skip, length)
                if status == 206:  # the rest of a range answer: the connection is reused
                    self._drain(chunks)
                return data
        except (HeaderError, _Retry):
            raise
        except BudgetExceeded as e:
            raise HeaderError(
                HeaderErrorKind.FILE_UNREADABLE, "budget", file=self.name, url=self.name, error=e
            ) from None
        except Exception as e:  # network errors of either HTTP library
            raise HeaderError(
                HeaderErrorKind.FILE_UNREADABLE,
                "fetch",
                file=self.name,
                url=self.name,
                error=_network_error(e, self.budget, full=True),
            ) from None

    def _collect(self, chunks, skip: int, length: int) -> bytes:
        out = bytearray()
        for chunk in chunks:
            self.bytes_read += len(chunk)
            self.budget.spend(len(chunk))
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

    def _drain(self, chunks) -> None:
        """Read what is left of an answer, up to :data:`DRAIN_BYTES`, so that the client
        keeps the connection for the next request (an answer left unread closes it: a new
        connection, over TLS a new handshake, for every file). More than that (a server
        that sends more than it was asked for) is left, and the connection closed."""
        left = DRAIN_BYTES
        for chunk in chunks:
            self.bytes_read += len(chunk)
            self.budget.spend(len(chunk))
            left -= len(chunk)
            if left < 0:
                return


def _total_from_range(value: str) -> int | None:
    m = _CONTENT_RANGE.search(value or "")
    if not m or m.group(3) == "*":
        return None
    return int(m.group(3))


class _Retry(Exception):
    def __init__(self, wait: float) -> None:
        self.wait = wait


class _stream:
    """``with _stream(session, url, headers, budget) as (status, headers, chunks)`` for
    both httpx-style and requests-style sessions; the connection is closed on exit. The
    request's timeout is what is left of ``budget``'s deadline (at most TIMEOUT)."""

    def __init__(self, session: Any, url: str, headers: dict[str, str], budget: Budget) -> None:
        self.session, self.url, self.headers, self.budget = session, url, headers, budget
        self._ctx = None
        self._response = None

    def __enter__(self):
        timeout = self.budget.timeout()
        if hasattr(self.session, "stream"):  # httpx
            self._ctx = self.session.stream(
                "GET", self.url, headers=self.headers, follow_redirects=True, timeout=timeout
            )
            r = self._ctx.__enter__()
            chunks = r.iter_bytes()
        else:  # requests
            r = self.session.get(
                self.url, headers=self.headers, stream=True, allow_redirects=True, timeout=timeout
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
        self.budget = Budget()  # starts now: everything below counts against the deadline
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
        self._opened = 0

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
        if self._listing is None:
            try:
                self._listing = self._list()
            except InputError:
                raise
            except BudgetExceeded as e:
                raise InputError(f"{self.url_prefix}: cannot list the repository ({e})") from None
            except Exception as e:  # network errors of either HTTP library
                raise InputError(
                    f"{self.url_prefix}: cannot list the repository "
                    f"({_network_error(e, self.budget)})"
                ) from None
        return self._listing

    def _list(self) -> dict[str, int | None]:
        """The top-level files and their sizes, page by page (``Link: <...>; rel="next"``),
        within MAX_LISTING_PAGES pages, MAX_LISTING_BYTES bytes and MAX_LISTING_ENTRIES."""
        url: str | None = (
            f"{self.endpoint}/api/models/{self.repo_id}/tree/{quote(self.revision, safe='')}"
            "?recursive=false"
        )
        listing: dict[str, int | None] = {}
        total = entries = 0
        for _page in range(MAX_LISTING_PAGES):
            if url is None:
                return listing
            body, url = self._list_page(url, total)
            total += len(body)
            try:
                page = json.loads(body)
            except (ValueError, RecursionError):
                raise InputError(
                    f"{self.url_prefix}: the repository listing is not valid JSON"
                ) from None
            if not isinstance(page, list):
                raise InputError(f"{self.url_prefix}: the repository listing is not a list")
            for e in page:
                entries += 1
                if entries > MAX_LISTING_ENTRIES:
                    raise InputError(
                        f"{self.url_prefix}: the repository has more than "
                        f"{MAX_LISTING_ENTRIES:,} top-level entries; a draft checkpoint has a "
                        "few (download it and validate the local copy)"
                    )
                if not isinstance(e, dict) or e.get("type") != "file":
                    continue
                path, size = e.get("path"), e.get("size")
                if isinstance(path, str) and "/" not in path:
                    listing[path] = size if type(size) is int and size >= 0 else None
        if url is None:
            return listing
        raise InputError(
            f"{self.url_prefix}: the repository listing goes on for more than "
            f"{MAX_LISTING_PAGES} pages; stopped"
        )

    def _list_page(self, url: str, so_far: int) -> tuple[bytes, str | None]:
        body, headers = self._get_capped(
            url,
            MAX_LISTING_BYTES - so_far,
            refused=lambda status, headers: (
                f"{self.url_prefix}: cannot list the repository ({_status_error(status, headers)})"
            ),
            too_big=f"{self.url_prefix}: the repository listing is larger than "
            f"{MAX_LISTING_BYTES:,} bytes; stopped",
        )
        return body, _next_link(headers.get("link", ""), url)

    def _get_capped(self, url: str, cap: int, *, refused, too_big: str) -> tuple[bytes, dict]:
        """GET ``url`` whole (retrying as the budget allows), at most ``cap`` bytes; a status
        other than 200 is ``refused(status, headers)``, a longer body ``too_big``."""
        for attempt in range(MAX_RETRIES + 1):
            with _stream(self._session, url, dict(self._headers), self.budget) as (
                status,
                headers,
                chunks,
            ):
                wait = self.budget.retry_wait(status, headers, attempt)
                if wait is None:
                    if status != 200:
                        raise InputError(refused(status, headers))
                    body = bytearray()
                    for chunk in chunks:
                        body += chunk
                        self.budget.spend(len(chunk))
                        if len(body) > cap:
                            raise InputError(too_big)
                    self._small += len(body)
                    return bytes(body), headers
            time.sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover - retry_wait raises first

    def open(self, name: str) -> ByteSource:
        if name.endswith(".safetensors"):
            self._opened += 1
            if self._opened > MAX_SAFETENSORS_FILES:
                raise HeaderError(
                    HeaderErrorKind.FILE_UNREADABLE,
                    "too-many-files",
                    file=self.display(name),
                    url=self.display(name),
                    limit=MAX_SAFETENSORS_FILES,
                )
        return HttpSource(
            self.file_url(name), self._session, self._headers, self.display(name), self.budget
        )

    def read_small(self, name: str, limit: int) -> bytes | None:
        if name not in self.list_files():
            return None
        try:
            data, _ = self._get_capped(
                self.file_url(name),
                limit,
                refused=lambda status, headers: f"{self.display(name)}: HTTP {status}",
                too_big=f"{self.display(name)}: over the {limit:,}-byte limit",
            )
        except InputError:
            raise
        except BudgetExceeded as e:
            raise InputError(f"{self.display(name)}: {e}") from None
        except Exception as e:
            raise InputError(
                f"{self.display(name)}: cannot be fetched ({_network_error(e, self.budget)})"
            ) from None
        return data

    @property
    def bytes_read(self) -> int:
        return super().bytes_read + self._small


def _offline(hub) -> bool:
    check = getattr(hub.constants, "is_offline_mode", None)
    return (
        bool(check()) if callable(check) else bool(getattr(hub.constants, "HF_HUB_OFFLINE", False))
    )


def _status_error(status: int, headers: dict[str, str]) -> str:
    code = headers.get("x-error-code", "")
    if code in ("RepoNotFound", "GatedRepo") or status in (401, 403):
        return "repository not found, or private without a token"
    if code == "RevisionNotFound":
        return "revision not found"
    return f"HTTP {status}" + (f" {code}" if code else "")


_LINK_NEXT = re.compile(r'<([^>]+)>\s*;\s*rel="?next"?')


def _next_link(value: str, base: str) -> str | None:
    from urllib.parse import urljoin

    m = _LINK_NEXT.search(value or "")
    return urljoin(base, m.group(1)) if m else None


def _network_error(e: Exception, budget: Budget, *, full: bool = False) -> str:
    """What went wrong; a timeout that used up the deadline says so."""
    if budget.remaining() <= 0.5:
        try:
            budget.check()
        except BudgetExceeded as spent:
            return str(spent)
        return str(BudgetExceeded(f"stopped at the {budget.seconds:g}-second deadline"))
    return f"{type(e).__name__}: {e}" if full else _hub_error(e)


def _hub_error(e: Exception) -> str:
    name = type(e).__name__
    if name == "RepositoryNotFoundError":
        return "repository not found, or private without a token"
    if name == "RevisionNotFoundError":
        return "revision not found"
    text = str(e).splitlines()[0] if str(e) else name
    return text[:200]
