"""``--format text``: readable findings, one per line, coloured only on a terminal.

Colour (and any other terminal styling) only when the stream is a terminal and the
``NO_COLOR`` environment variable is unset or empty; ``--color always|never`` overrides.
"""

from __future__ import annotations

import os
from typing import TextIO

from rich.console import Console
from rich.markup import escape

from spec_format.report import FileReport, Finding, Report, Severity, Status

_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}
_STATUS_STYLE = {Status.OK: "green", Status.FAIL: "bold red", Status.UNREADABLE: "bold magenta"}


def render_text(
    report: Report, stream: TextIO, *, color: bool | None = None, verbosity: int = 1
) -> None:
    """verbosity 0: errors and the summary; 1: every finding; 2: also skipped checks."""
    if color is None:  # auto: a terminal, and NO_COLOR unset (no-color.org: any value)
        color = _isatty(stream) and not os.environ.get("NO_COLOR")
    console = Console(
        file=stream,
        force_terminal=color,
        color_system="auto" if color else None,
        highlight=False,
        soft_wrap=True,
    )
    for file_report in report.files:
        _file(console, file_report, verbosity)
    for note in report.notes:
        console.print(f"[dim]note:[/dim] {escape(note)}")
    style = "green" if report.exit_code == 0 else "bold red"
    console.print(f"[{style}]{escape(report.summary())}[/{style}]")


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _file(console: Console, fr: FileReport, verbosity: int) -> None:
    findings = fr.sorted_findings()
    shown = [f for f in findings if verbosity > 0 or f.severity is Severity.ERROR]
    if not shown and verbosity == 0:
        return
    what = []
    if fr.model_type:
        what.append(fr.model_type)
    if fr.format_version:
        what.append(f"format {fr.format_version} ({fr.version_source})")
    style = _STATUS_STYLE[fr.status]
    head = f"[{style}]{fr.status.value}[/{style}] [bold]{escape(fr.path)}[/bold]"
    if what:
        head += f" [dim]{escape(', '.join(what))}[/dim]"
    console.print(head)
    for f in shown:
        console.print("  " + _line(f))
    if verbosity >= 2:
        for skipped in fr.skipped:
            console.print(f"  [dim]skipped: {escape(skipped)}[/dim]")


def _line(f: Finding) -> str:
    where = f.file
    if f.line:
        where += f":{f.line}" + (f":{f.column}" if f.column else "")
    style = _STYLE[f.severity]
    loc = f" [dim]({escape(f.pointer or f.tensor or '')})[/dim]" if (f.pointer or f.tensor) else ""
    return (
        f"{escape(where)}: [{style}]{f.severity.value}[/{style}] "
        f"[bold]{f.rule}[/bold] {escape(f.message)}{loc}"
    )
