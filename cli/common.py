"""What every command shares: error translation (:func:`handle_errors`) and the report
printed as JSON or as text (:func:`emit`). The options are :mod:`spec_format.cli.options`;
exit codes, streams and terminal text are the library's (base.errors, base.streams,
render.terminal)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import typer

from spec_format.base.streams import flush_stdout, stdout
from spec_format.render.terminal import print_text, report_failure

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
    """A command that ends in an exception exits with one clean line on stderr and the
    matching exit code (:func:`spec_format.render.terminal.report_failure`); SIGTERM and
    SIGHUP clean up like Ctrl-C (exit 128+N)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from spec_format.base.signals import Terminated, terminate_like_interrupt

        try:
            try:
                with terminate_like_interrupt():
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
            raise typer.Exit(report_failure(exc)) from None

    return wrapper  # type: ignore[return-value]
