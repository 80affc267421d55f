"""Renderers: turn a :class:`~spec_format.base.report.Report` into text for people or machines.

One registry, ``RENDERERS``, supplies the ``--format`` choices. Each renderer is a plain
function ``(report, stream, *, color, verbosity) -> None`` so it can be tested on a
hand-built report without the CLI. A renderer's module is imported when it is first used
(SARIF reads the rule registry, which a command that only prints text must not pay for).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from typing import TextIO

from spec_format.base.report import Report

Renderer = Callable[..., None]

#: format name -> (module of spec_format.render, function), in --format choice order
_WHERE: dict[str, tuple[str, str]] = {
    "text": ("text", "render_text"),
    "json": ("json_out", "render_json"),
    "github": ("github", "render_github"),
    "sarif": ("sarif", "render_sarif"),
}


class _Renderers(Mapping[str, Renderer]):
    """``RENDERERS[name]`` imports the renderer's module; the names need no import."""

    def __getitem__(self, name: str) -> Renderer:
        module, function = _WHERE[name]
        return getattr(importlib.import_module(f"{__name__}.{module}"), function)

    def __iter__(self) -> Iterator[str]:
        return iter(_WHERE)

    def __len__(self) -> int:
        return len(_WHERE)


RENDERERS: Mapping[str, Renderer] = _Renderers()


def render(
    report: Report, fmt: str, stream: TextIO, *, color: bool | None = None, verbosity: int = 1
) -> None:
    RENDERERS[fmt](report, stream, color=color, verbosity=verbosity)
