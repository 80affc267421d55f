"""Renderers: turn a :class:`~spec_format.report.Report` into text for people or machines.

One registry, ``RENDERERS``, supplies the ``--format`` choices. Each renderer is a plain
function ``(report, stream, *, color, verbosity) -> None`` so it can be tested on a
hand-built report without the CLI.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TextIO

from spec_format.render.github import render_github
from spec_format.render.json_out import render_json
from spec_format.render.sarif import render_sarif
from spec_format.render.text import render_text
from spec_format.report import Report

Renderer = Callable[..., None]

RENDERERS: dict[str, Renderer] = {
    "text": render_text,
    "json": render_json,
    "github": render_github,
    "sarif": render_sarif,
}


def render(
    report: Report, fmt: str, stream: TextIO, *, color: bool | None = None, verbosity: int = 1
) -> None:
    RENDERERS[fmt](report, stream, color=color, verbosity=verbosity)
