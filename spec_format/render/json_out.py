"""``--format json``: one JSON document for the whole run, written as each input is checked.

The document is ``{"files": [...], "status", "exit_code", "summary", "counts", "notes"}``
(the fields of Report.to_dict, files first): :class:`JsonStream` writes each input's object
into ``files`` when it is reported and keeps nothing of it, then closes the document with
the run's tally and notes. A run stopped part-way (Ctrl-C, SIGTERM) still closes the
document, with ``"interrupted": true`` and the tally of the inputs written so far, so a
reader always gets valid JSON.
"""

from __future__ import annotations

from typing import TextIO

from spec_format.base.jsonout import dumps
from spec_format.base.report import FileReport, Report, Tally


def render_json(
    report: Report, stream: TextIO, *, color: bool | None = None, verbosity: int = 1
) -> None:
    out = JsonStream(stream)
    for file_report in report.files:
        out.file(file_report)
    out.finish(report.notes, report.tally())


class JsonStream:
    """The JSON document of a run, one input at a time (what :func:`render_json` writes
    for a whole report): :meth:`file` per input, then :meth:`finish`."""

    def __init__(self, stream: TextIO, *, color: bool | None = None, verbosity: int = 1) -> None:
        self.stream = stream
        self._files = 0
        self._open = True
        stream.write('{\n  "files": [')

    def file(self, file_report: FileReport) -> None:
        # indented as json.dumps(indent=2) places an item of the top-level "files" list
        # (a JSON string never holds a raw newline, so prefixing lines is safe)
        item = dumps(file_report.to_dict(), indent=2).replace("\n", "\n    ")
        self.stream.write(("," if self._files else "") + "\n    " + item)
        self._files += 1

    def finish(self, notes: list[str], tally: Tally, *, interrupted: bool = False) -> None:
        if not self._open:
            return
        self._open = False
        tail = {
            "status": "ok" if tally.ok and not interrupted else "fail",
            "exit_code": tally.exit_code,
            "summary": tally.summary(),
            "counts": {k: tally.severities.get(k, 0) for k in ("error", "warning", "info")},
            "notes": list(notes),
        }
        if interrupted:
            tail["interrupted"] = True
        rest = dumps(tail, indent=2)[1:]  # the fields after "files", and the closing brace
        self.stream.write(("\n  ]," if self._files else "],") + rest + "\n")
