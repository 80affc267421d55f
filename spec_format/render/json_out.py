"""``--format json``: one JSON document for the whole run (see Report.to_dict)."""

from __future__ import annotations

from typing import TextIO

from spec_format.jsonout import dump
from spec_format.report import Report


def render_json(
    report: Report, stream: TextIO, *, color: bool | None = None, verbosity: int = 1
) -> None:
    dump(report.to_dict(), stream, indent=2)
    stream.write("\n")
