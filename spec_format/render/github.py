"""``--format github``: GitHub Actions workflow commands, one annotation per finding.

Each finding becomes ``::error file=F,line=L,col=C,title=ID (name)::message`` (``warning``
for warnings, ``notice`` for notes), which GitHub shows on the pull request's diff and in
the run summary. Values are escaped as the Actions toolkit does: ``%``, CR and LF in every
value, and ``:`` and ``,`` inside properties as well. A plain summary line ends the output.
"""

from __future__ import annotations

from typing import TextIO

from spec_format.base.report import Finding, Report, Severity
from spec_format.base.wording import severity_word
from spec_format.render.paths import display_path

_COMMAND = {s: severity_word(s, "github") for s in Severity}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(finding: Finding) -> str:
    """The workflow command for one finding."""
    props = [f"file={escape_property(display_path(finding.file))}"]
    if finding.line:
        props.append(f"line={finding.line}")
        if finding.column:
            props.append(f"col={finding.column}")
    props.append(f"title={escape_property(f'{finding.rule} ({finding.name})')}")
    where = finding.pointer or finding.tensor
    message = finding.message
    if where and where not in message:
        message += f" ({where})"
    return f"::{_COMMAND[finding.severity]} {','.join(props)}::{escape_data(message)}"


def render_github(
    report: Report, stream: TextIO, *, color: bool | None = None, verbosity: int = 1
) -> None:
    """verbosity 0: only errors; otherwise every finding."""
    for file_report in report.files:
        for finding in file_report.sorted_findings():
            if verbosity == 0 and finding.severity is not Severity.ERROR:
                continue
            stream.write(annotation(finding) + "\n")
    for note in report.notes:
        stream.write(f"note: {note}\n")
    stream.write(report.summary() + "\n")
