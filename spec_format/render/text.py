"""``--format text``: readable findings, one per line, coloured only on a terminal.

Colour (and any other terminal styling) only when the stream is a terminal and the
``NO_COLOR`` environment variable is unset or empty; ``--color always|never`` overrides.
Lines are built as (text, style) segments: with colour they go through rich, without it
they are written directly (rich's per-line markup work dominates large runs otherwise).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TextIO

from spec_format.report import FileReport, Finding, Report, Severity, Status

Segment = tuple[str, str]  # (text, rich style or "")

_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}
_STATUS_STYLE = {Status.OK: "green", Status.FAIL: "bold red", Status.UNREADABLE: "bold magenta"}


def render_text(
    report: Report, stream: TextIO, *, color: bool | None = None, verbosity: int = 1
) -> None:
    """verbosity 0: errors and the summary; 1: every finding; 2: also skipped checks."""
    if color is None:  # auto: a terminal, and NO_COLOR unset (no-color.org: any value)
        color = _isatty(stream) and not os.environ.get("NO_COLOR")
    lines = _lines(report, verbosity)
    if not color:
        stream.write("".join("".join(text for text, _ in line) + "\n" for line in lines))
        return
    from rich.console import Console
    from rich.text import Text

    console = Console(file=stream, force_terminal=True, highlight=False, soft_wrap=True)
    for line in lines:
        console.print(Text.assemble(*line))


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _lines(report: Report, verbosity: int) -> list[list[Segment]]:
    out: list[list[Segment]] = []
    for file_report in report.files:
        out.extend(_file(file_report, verbosity))
    out.extend([("note: ", "dim"), (note, "")] for note in report.notes)
    style = "green" if report.exit_code == 0 else "bold red"
    out.append([(report.summary(), style)])
    return out


def _file(fr: FileReport, verbosity: int) -> Iterator[list[Segment]]:
    findings = fr.sorted_findings()
    shown = [f for f in findings if verbosity > 0 or f.severity is Severity.ERROR]
    if not shown and verbosity == 0:
        return
    what = []
    if fr.model_type:
        what.append(fr.model_type)
    if fr.format_version:
        what.append(f"format {fr.format_version} ({fr.version_source})")
    head: list[Segment] = [
        (fr.status.value, _STATUS_STYLE[fr.status]),
        (" ", ""),
        (fr.path, "bold"),
    ]
    if what:
        head += [(" ", ""), (", ".join(what), "dim")]
    yield head
    for f in shown:
        yield [("  ", ""), *_finding(f)]
    if verbosity >= 2:
        for skipped in fr.skipped:
            yield [("  ", ""), (f"skipped: {skipped}", "dim")]


def _finding(f: Finding) -> list[Segment]:
    where = f.file
    if f.line:
        where += f":{f.line}" + (f":{f.column}" if f.column else "")
    segments: list[Segment] = [
        (f"{where}: ", ""),
        (f.severity.value, _STYLE[f.severity]),
        (" ", ""),
        (f.rule, "bold"),
        (f" {f.message}", ""),
    ]
    if f.pointer or f.tensor:
        segments.append((f" ({f.pointer or f.tensor})", "dim"))
    return segments
