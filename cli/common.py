"""Pieces shared by the CLI commands: the options several take, error translation. Exit
codes (base.errors.ExitCode), streams (base.streams) and terminal text (render.terminal)
are the library's, imported here under the names the commands use."""

from __future__ import annotations

import enum
import functools
import re
from collections.abc import Callable
from typing import Any, TypeVar

import typer

from spec_format.base.errors import ExitCode, SpecfmtError, UsageError
from spec_format.base.streams import (  # noqa: F401 - the commands import them from here
    ClosedStderr,
    ClosedStdout,
    PipeSafeStdout,
    flush_stdout,
    stdout,
)
from spec_format.render.terminal import (  # noqa: F401
    err_console,
    escape,
    print_error,
    print_rich,
    print_text,
    progress_display,
    use_color,
)

F = TypeVar("F", bound=Callable[..., Any])


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


#: --config / --isolated, shared by validate, fix and migrate (see spec_format.runner.settings)
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
