"""Where a checkpoint's files are: the storage interface shared by the local directory
(:mod:`spec_format.parsers.checkpoint`) and the Hugging Face Hub (:mod:`spec_format.parsers.remote`), and the
``hf://`` address."""

from __future__ import annotations

import re

from spec_format.base.errors import UsageError
from spec_format.parsers.safetensors import ByteSource


class Storage:
    """Where the files are. Subclasses list the top-level files and open them."""

    def __init__(self) -> None:
        self._sources: dict[str, ByteSource] = {}
        self._closed_bytes = 0

    def list_files(self) -> dict[str, int | None]:  # pragma: no cover - abstract
        raise NotImplementedError

    def display(self, name: str) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def open(self, name: str) -> ByteSource:  # pragma: no cover - abstract
        raise NotImplementedError

    def read_small(self, name: str, limit: int) -> bytes | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def source(self, name: str) -> ByteSource:
        if name not in self._sources:
            self._sources[name] = self.open(name)
        return self._sources[name]

    @property
    def bytes_read(self) -> int:
        return self._closed_bytes + sum(s.bytes_read for s in self._sources.values())

    def close(self) -> None:
        for s in self._sources.values():
            self._closed_bytes += s.bytes_read
            s.close()
        self._sources.clear()


_HF_URL = re.compile(r"^hf://(?P<repo>[A-Za-z0-9][\w.-]*/[\w.-]+)(?:@(?P<rev>[^\s@]+))?/?$")


def parse_hf_url(url: str) -> tuple[str, str | None]:
    """``hf://ORG/NAME[@REV]`` -> ``(ORG/NAME, REV or None)``; raises :class:`UsageError`."""
    m = _HF_URL.match(url)
    if not m or not all(_hub_name(part) for part in m.group("repo").split("/")):
        raise UsageError(
            f"{url!r} is not hf://ORG/NAME or hf://ORG/NAME@REVISION (names are letters, "
            "digits, '-', '_' and '.', neither starting nor ending with '-' or '.', without "
            "'--' or '..')"
        )
    return m.group("repo"), m.group("rev")


def _hub_name(part: str) -> bool:
    """An ORG or NAME the Hub accepts: ``..`` or ``.`` would address another endpoint."""
    return not (
        ".." in part or "--" in part or part[0] in ".-" or part[-1] in ".-" or len(part) > 96
    )
