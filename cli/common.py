"""What every command shares: error translation (:func:`handle_errors`) and the report
printed as JSON or as text (:func:`emit`). The options are :mod:`spec_format.cli.options`;
exit codes, streams and terminal text are the library's (base.errors, base.streams,
render.terminal)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import typer

from spec_format.base.errors import ExitCode, SpecfmtError
from spec_format.base.streams import flush_stdout, stdout
from spec_format.render.terminal import print_error, print_text

F = TypeVar("F", bound=Callable[..., Any])


def emit(fmt: str, doc: Callable[[], Any], text: Callable[[], str] = str) -> None:
    """A command's report on stdout: ``doc()`` as JSON with ``-f json``, else ``text()``
    (wrapped between words on a terminal)."""
    if fmt == "json":
        from spec_format.base.jsonout import dumps

        stdout().write(dumps(doc(), indent=2) + "\n")
    else:
        print_text(text(), stdout())


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
