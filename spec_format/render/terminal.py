"""Text for a person at a terminal or a pipe: colour only on a terminal (``NO_COLOR``
honoured), lines wrapped between words to its width, one ``specfmt: MESSAGE`` line per
error, the progress bar on stderr. The commands of ``cli/`` render through these."""

from __future__ import annotations

import os
import re
import sys
from typing import TYPE_CHECKING, Any

from spec_format.base.streams import stdout

if TYPE_CHECKING:
    from rich.console import Console


def use_color(stream: Any) -> bool:
    """Colour on a terminal unless ``NO_COLOR`` is set to anything (no-color.org)."""

    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        return False
    return tty and not os.environ.get("NO_COLOR")


def progress_display(text_output: bool) -> Any:
    """The display of :mod:`spec_format.base.progress` for this run: a transient rich bar on
    stderr when stderr is a terminal and the output is text; otherwise None (nothing shown
    in pipes, CI logs, or next to JSON/SARIF/GitHub output)."""
    try:
        tty = sys.stderr.isatty()
    except (AttributeError, ValueError):
        tty = False
    if not (text_output and tty):
        return None

    def start(label: str, total: int, unit: str) -> Any:
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
        )

        amount = DownloadColumn() if unit == "bytes" else MofNCompleteColumn()
        bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            amount,
            TimeRemainingColumn(),
            console=err_console(),
            transient=True,  # the bar goes away when the work is done
        )
        bar.start()
        return _Bar(bar, bar.add_task(label, total=total))

    return start


class _Bar:
    def __init__(self, progress: Any, task_id: Any) -> None:
        self._progress, self._task = progress, task_id

    def advance(self, amount: int) -> None:
        self._progress.advance(self._task, amount)

    def close(self) -> None:
        self._progress.stop()


def err_console() -> Console:
    # rich is imported only when something is printed to stderr (it costs ~20 ms at start-up)
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=True)


def print_text(text: str, stream: Any = None) -> None:
    """Plain lines on ``stream`` (stdout): on a terminal (or with ``COLUMNS``) each wrapped
    between words to the width, continued 4 columns deeper than it starts; piped, as
    written, without trailing spaces."""
    from spec_format.render.text import terminal_width, wrap

    stream = stream or stdout()
    tty = stream.isatty() if hasattr(stream, "isatty") else False
    width = terminal_width(stream) if tty or os.environ.get("COLUMNS") else 0
    out = []
    for line in text.rstrip("\n").split("\n"):
        if not width or len(line) <= width:  # as written, its alignment included
            out.append(line.rstrip())
            continue
        indent = len(line) - len(line.lstrip(" ")) + 4
        lead, body = line[: indent - 4], line[indent - 4 :]
        body = re.sub(r" {2,}", lambda m: "\0" * len(m.group()), body)  # alignment: kept
        for part in wrap([(lead + body, "")], width, indent):
            out.append("".join(t for t, _ in part).replace("\0", " ").rstrip())
    stream.write("\n".join(out) + "\n")


def print_error(
    message: str, label: str = "specfmt:", stream: Any = None, label_style: str = "bold red"
) -> None:
    """One ``specfmt: MESSAGE`` (``label`` in bold) on stderr or ``stream``: on a terminal
    wrapped at its width between words (never inside a path, an ``hf://`` id or a command)
    and coloured; piped, as written."""
    from spec_format.render.text import HEAD_INDENT, code_spans, terminal_width, wrap

    stream = stream or sys.stderr
    color = use_color(stream)
    tty = stream.isatty() if hasattr(stream, "isatty") else False
    width = terminal_width(stream) if tty or os.environ.get("COLUMNS") else 0
    lines: list = []
    for i, part in enumerate(message.split("\n")):  # a message's own lines stay lines
        head = [(f"{label} ", label_style)] if i == 0 else []
        lines += wrap([*head, *code_spans(part, color)], width, HEAD_INDENT)
    if not color:
        stream.write("".join("".join(t for t, _ in line).rstrip() + "\n" for line in lines))
        return
    from rich.console import Console
    from rich.text import Text

    console = Console(file=stream, force_terminal=True, highlight=False, soft_wrap=True)
    for line in lines:
        console.print(Text.assemble(*line))


def print_rich(renderable: Any) -> None:
    """A rich table or Markdown on stdout at the terminal's width, every line without the
    trailing spaces rich pads it with."""
    from rich.console import Console

    from spec_format.render.text import terminal_width

    out = stdout()
    console = Console(
        width=terminal_width(out), force_terminal=use_color(out), no_color=not use_color(out)
    )
    with console.capture() as captured:
        console.print(renderable)
    out.write("".join(line.rstrip() + "\n" for line in captured.get().splitlines()))


def escape(text: str) -> str:
    """Escape rich markup in ``text`` (messages can contain [brackets])."""
    from rich.markup import escape as rich_escape

    return rich_escape(text)


def report_failure(exc: Exception) -> int:
    """One clean stderr line for an exception that ended a command; returns its exit code.
    specfmt's own errors, and an OSError of the environment (ENOSPC, EACCES, EROFS ...: not a
    bug, exit 3), are one line cut like every finding's message (a hostile input's tensor
    names never make a 300 KB line); anything else is a bug, printed plainly with a request
    to report it (exit 70), or raised again when SPECFMT_DEBUG asks for the traceback."""
    from spec_format.base.errors import ExitCode, SpecfmtError
    from spec_format.base.oserror import as_error
    from spec_format.rules.base import MAX_MESSAGE, bounded

    error = exc if isinstance(exc, SpecfmtError) else as_error(exc)
    if error is not None:
        print_error(bounded(str(error), MAX_MESSAGE))
        return error.exit_code
    if os.environ.get("SPECFMT_DEBUG"):
        raise exc
    print_error(
        f"{type(exc).__name__}: {exc}\nThis is a bug in specfmt; rerun with "
        "SPECFMT_DEBUG=1 for the traceback and report it.",
        "specfmt: internal error:",
    )
    return ExitCode.INTERNAL
