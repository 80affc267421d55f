"""``specfmt serving``: parse options, call spec_format.inspect.serving, render, exit."""

from __future__ import annotations

from typing import Annotated

import typer

from spec_format.cli.common import emit, handle_errors
from spec_format.cli.options import TextOrJson, engine_option, quiet_option


@handle_errors
def serving_command(
    checkpoint: str = typer.Argument(
        ...,
        help="Draft checkpoint directory, its config.json (the tensors the config implies), "
        "or hf://ORG/NAME[@REV] (headers only, needs the remote extra).",
        show_default=False,
    ),
    engine: Annotated[
        list[str] | None,
        engine_option(  # its own help: judged, not read
            "The engine releases to judge, as pip writes them (repeatable): NAME==VERSION, a "
            "range (vllm>=0.28,<0.33: every covered release group in it) or NAME (its newest "
            "covered release). Default: every covered vLLM release group."
        ),
    ] = None,
    output_format: TextOrJson = "text",
    quiet: Annotated[
        bool,
        quiet_option(
            "Only the release groups that do not serve the draft as trained (degraded or refused)."
        ),
    ] = False,
) -> None:
    """Which engine releases serve this draft: per release group of the reader table (default:
    every covered vLLM release), whether it serves the draft as trained, serves it degraded
    (what it ignores or leaves at its initial value) or refuses it (the field or tensor), and
    the first release that serves it as trained.

    Exit codes: 0 reported (whatever the verdicts), 2 usage error (a malformed --engine),
    3 the checkpoint or config could not be read.
    """
    from spec_format.inspect.serving import render_text, serving_report

    report = serving_report(checkpoint, engine)
    emit(output_format, report.to_dict, lambda: render_text(report, quiet=quiet))
    raise typer.Exit(0)
