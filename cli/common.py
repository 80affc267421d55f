"""Pieces shared by the CLI commands: exit codes, error translation, colour choice."""

from __future__ import annotations

import enum
import functools
import os
import re
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import typer

from spec_format.base.errors import SpecfmtError, UsageError

if TYPE_CHECKING:
    from rich.console import Console

F = TypeVar("F", bound=Callable[..., Any])


class ExitCode(enum.IntEnum):
    """The exit codes every specfmt command shares (documented in the README)."""

    OK = 0
    FINDINGS = 1  # errors found / --check found a difference
    USAGE = 2  # bad options or arguments
    UNREADABLE = 3  # an input could not be read or parsed
    INTERNAL = 70  # a bug in specfmt


class ReportFormat(str, enum.Enum):
    """``--format`` of the commands that print text or JSON."""

    text = "text"
    json = "json"


#: --engine, shared by validate, fix and migrate
ENGINE_HELP = (
    "An engine release the draft is served or trained with, as pip writes it (repeatable): "
    "NAME==VERSION (vllm==0.30 is 0.30.0), a range (vllm>=0.28,<0.33: every covered release "
    "in it) or NAME (its newest covered release); the releases covered are those of the "
    "reader table (schema/readers/), and a newer one is judged as the newest with a "
    "warning (C021). Default: the newest covered release of each engine, and an error "
    "when no covered vLLM release can load the draft (C022)."
)


def engine_option(help: str = ENGINE_HELP):
    return typer.Option(None, "--engine", "-e", help=help, metavar="NAME==VERSION")


_VERSIONISH = re.compile(r"[vV]?[0-9]+(\.[0-9]+)+")


def format_option(choices: type[enum.Enum], default: str, version_option: str, help: str):
    """``--format/-f``, the output format (case-insensitive), whose error for a value that
    looks like a version (``--format 0.5``) names the option that was meant. The command
    receives the name, lower-cased."""
    names = [c.value for c in choices]

    def parse(value: Any) -> str:
        text = str(getattr(value, "value", value)).strip()
        if text.lower() in names:
            return text.lower()
        hint = (
            f"; did you mean {version_option} {text}?"
            if version_option and _VERSIONISH.fullmatch(text)
            else ""
        )
        raise typer.BadParameter(f"{text!r} is not one of {', '.join(names)}{hint}")

    return typer.Option(
        default,
        "--format",
        "-f",
        help=f"{help.rstrip('.')}: {', '.join(names)}.",
        callback=parse,
        autocompletion=lambda: names,
        metavar="FORMAT",  # the choices are in the help text, which wraps between words
        show_default=True,
    )


#: --aux-layer-ids of fix and convert: a comma (or space) list, repeatable
def parse_aux_ids(values: list[str] | None) -> tuple[int, ...] | None:
    if not values:
        return None
    out = []
    for value in values:
        for part in value.replace(",", " ").split():
            try:
                out.append(int(part))
            except ValueError:
                raise UsageError(
                    f"--aux-layer-ids {value!r}: layer numbers of the verifier (each below its "
                    "num_hidden_layers), separated by commas"
                ) from None
    return tuple(out)


def verifier_option(help: str):
    """--verifier, shared by every command that takes one: a path or hf://ORG/NAME[@REV]."""
    return typer.Option(None, "--verifier", help=help, metavar="PATH|hf://ORG/NAME")


#: --config / --isolated, shared by validate, fix and migrate (see spec_format.engine.settings)
def config_option():
    return typer.Option(
        None,
        "--config",
        help="Read this specfmt.toml or pyproject.toml for every input instead of the closest "
        "one above each input.",
        metavar="PATH",
    )


def isolated_option():
    return typer.Option(
        False,
        "--isolated",
        "--no-config",
        help="Ignore every configuration file (specfmt.toml, the tool.specfmt table of "
        "pyproject.toml).",
    )


def quiet_option(help: str):
    """``--quiet/-q``: what needs attention and one summary line (every command that prints
    findings has it; ``help`` says what that command leaves out)."""
    return typer.Option(False, "--quiet", "-q", help=help)


class Color(str, enum.Enum):
    auto = "auto"
    always = "always"
    never = "never"

    def flag(self) -> bool | None:
        return {"auto": None, "always": True, "never": False}[self.value]


def use_color(stream: Any) -> bool:
    """Colour on a terminal unless ``NO_COLOR`` is set to anything (no-color.org)."""
    import os

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


def handle_errors(func: F) -> F:
    """Turn specfmt's own errors into one clean line on stderr and the matching exit code.

    Anything else is a bug: print it plainly with a request to report it, unless the
    SPECFMT_DEBUG environment variable asks for the traceback.
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from spec_format.base.oserror import as_error
        from spec_format.base.signals import Terminated, terminate_like_interrupt

        try:
            try:
                with terminate_like_interrupt():  # SIGTERM/SIGHUP clean up like Ctrl-C
                    return func(*args, **kwargs)
            finally:
                flush_stdout()  # a full stdout fails here, before the exit code is final
        except (typer.Exit, typer.Abort, BrokenPipeError):
            raise
        except Terminated as exc:  # temporary outputs are removed by now
            raise typer.Exit(exc.exit_code) from None
        except KeyboardInterrupt:
            raise typer.Exit(130) from None
        except Exception as exc:
            # an OSError of the environment (ENOSPC, EACCES, EROFS ...) is not a bug: exit 3
            error = exc if isinstance(exc, SpecfmtError) else as_error(exc)
            if error is not None:
                print_error(error_line(error))
                raise typer.Exit(error.exit_code) from None
            import os

            if os.environ.get("SPECFMT_DEBUG"):
                raise
            print_error(
                f"{type(exc).__name__}: {exc}\nThis is a bug in specfmt; rerun with "
                "SPECFMT_DEBUG=1 for the traceback and report it.",
                "specfmt: internal error:",
            )
            raise typer.Exit(ExitCode.INTERNAL) from None

    return wrapper  # type: ignore[return-value]


def error_line(error: BaseException) -> str:
    """An error's message for stderr, cut like every finding's message (a hostile input's
    tensor names or values never make a 300 KB line)."""
    from spec_format.rules.base import MAX_MESSAGE, bounded

    return bounded(str(error), MAX_MESSAGE)


def stdout() -> Any:
    return sys.stdout


def flush_stdout() -> None:
    """Flush standard output; a failure (``> /dev/full``, a closed stdout) is a
    :class:`~spec_format.base.oserror.StreamFailure` (exit 3), and the rest of the output is
    discarded so that the interpreter's own flush at exit does not fail again."""
    from spec_format.base.oserror import stdout_failure

    stream = sys.stdout
    if stream is None:
        return
    try:
        stream.flush()
    except BrokenPipeError:  # the reader left (`| head`): not an error
        _discard_fd(stream)
    except OSError as exc:
        _discard_fd(stream)
        raise stdout_failure(exc) from None
    except ValueError:  # a closed file object
        pass


def _discard_fd(stream: Any) -> None:
    import os

    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)  # later writes and the final flush go nowhere
    os.close(devnull)


class PipeSafeStdout:
    """``sys.stdout`` for the ``specfmt`` program: when the reader of a pipe goes away
    (``specfmt explain C001 | head -1``) the rest of the output is discarded instead of
    raising, so the command finishes its work (``--in-place`` rewrites every file) and
    exits with the status it would have had, whether or not the reader left early."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        #: the failure, kept for the exit code even when a library swallows the exception
        #: (click's --help writes from inside its parser)
        self.failure: Exception | None = None

    def _failed(self, exc: OSError) -> Exception:
        from spec_format.base.oserror import stdout_failure

        _discard_fd(self._stream)
        self.failure = self.failure or stdout_failure(exc)
        return self.failure

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            _discard_fd(self._stream)
            return len(text)
        except OSError as exc:  # ENOSPC (`> /dev/full`), EIO ...: exit 3, not a bug
            raise self._failed(exc) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            _discard_fd(self._stream)
        except OSError as exc:
            raise self._failed(exc) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class _ClosedStream:
    """A standard stream the program started without: not a terminal, no descriptor."""

    which = "a standard stream"

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        import io

        raise io.UnsupportedOperation(f"{self.which} is closed")


class ClosedStderr(_ClosedStream):
    """``sys.stderr`` when the program started with standard error closed (``2>&-``):
    messages have nowhere to go and are dropped; the exit code still says what happened."""

    which = "standard error"

    def write(self, text: str) -> int:
        return len(text)


class ClosedStdout(_ClosedStream):
    """``sys.stdout`` when the program started with standard output closed (``>&-``):
    every write fails as a write to a closed descriptor does (exit 3, not a crash)."""

    which = "standard output"

    def write(self, text: str) -> int:
        import errno

        raise OSError(errno.EBADF, "closed (the program was started without one)")
