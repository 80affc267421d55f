"""Render a validation as it runs: ``specfmt validate``'s print loop over the library's
:class:`~spec_format.runner.validation.Job` (any iterable of file reports with
``notes()``), with the progress bar on a terminal."""

from __future__ import annotations

import contextlib
from typing import Any, TextIO

from spec_format.base import progress
from spec_format.base.errors import UsageError
from spec_format.base.jsonout import dumps
from spec_format.base.report import Report, Tally
from spec_format.base.wording import severity_word
from spec_format.render import render
from spec_format.render.terminal import print_text, progress_display


def render_job(
    job: Any,
    fmt: str,
    out: TextIO,
    *,
    color: bool | None = None,
    verbosity: int = 1,
    statistics: bool = False,
) -> int:
    """Check every input of ``job`` and render it in ``fmt``; returns the exit code. Text
    and JSON are written as each input is checked (only the tally and the notes are kept);
    the other formats, and ``statistics``, from the whole report. Verbose text
    (``verbosity`` 2) starts with the configuration file each group of inputs got."""
    if verbosity == 2 and fmt == "text":
        from spec_format.render.text import configuration_lines

        paths = [conf.path for conf, _ in job.runs]
        print_text(configuration_lines(paths, job.isolated), out)
    if fmt in ("text", "json") and not statistics:
        return _streamed(job, fmt, out, color, verbosity)
    with progress.showing(progress_display(fmt == "text")):
        report = Report(files=list(job))
    report.notes = job.notes()
    if statistics:
        render_statistics(report, fmt, out)
    else:
        render(report, fmt, out, color=color, verbosity=verbosity)
    return report.exit_code


def _streamed(job: Any, fmt: str, out: TextIO, color: bool | None, verbosity: int) -> int:
    """A JSON document stopped part-way (Ctrl-C, SIGTERM) is still closed, so it stays
    valid JSON."""
    if fmt == "json":
        from spec_format.render.json_out import JsonStream as Stream
    else:
        from spec_format.render.text import TextStream as Stream
    stream = Stream(out, color=color, verbosity=verbosity)
    tally = Tally()
    try:
        with progress.showing(progress_display(fmt == "text")):
            for file_report in job:
                stream.file(file_report)
                tally.add(file_report)
    except BaseException:
        if fmt == "json":
            # a closed pipe cannot take the end either: the first error stands
            with contextlib.suppress(OSError):
                stream.finish(job.notes(), tally, interrupted=True)
        raise
    stream.finish(job.notes(), tally)
    return tally.exit_code


def render_statistics(report: Report, fmt: str, out: TextIO) -> None:
    """``--statistics``: one row per rule code, most frequent first (as ruff prints them)."""
    rows = report.statistics()
    if fmt == "json":
        out.write(dumps(rows, indent=2) + "\n")
        return
    if fmt != "text":
        raise UsageError(f"--statistics prints text or json, not --format {fmt}")
    width = max((len(str(r["count"])) for r in rows), default=1)
    for r in rows:
        word = severity_word(r["severity"])
        out.write(f"{r['count']:>{width}}  {r['code']}  {word:<7}  {r['name']}\n")
    out.write(report.summary() + "\n")
