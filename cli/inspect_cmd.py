"""``specfmt inspect``: parse options, call spec_format.inspect.run_inspect, render, exit."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from spec_format.base.errors import UsageError
from spec_format.cli.common import emit, handle_errors
from spec_format.cli.options import TextOrJson, quiet_option, verifier_option


def _floats(values: list[str] | None) -> tuple[float, ...]:
    out = []
    for value in values or []:
        for part in value.split(","):
            if part.strip():
                try:
                    out.append(float(part))
                except ValueError:
                    raise UsageError(f"--acceptance {part.strip()!r} is not a number") from None
    return tuple(out)


@handle_errors
def inspect_command(
    checkpoint: str = typer.Argument(
        ...,
        help="Draft checkpoint directory (or a file in it), or hf://ORG/NAME[@REV] "
        "(header-only, needs the remote extra).",
        show_default=False,
    ),
    verifier: Annotated[
        str | None,
        verifier_option(
            "The target model: its config.json, its directory (with safetensors: counted from "
            "the headers) or hf://ORG/NAME (headers only)."
        ),
    ] = None,
    token_freq: Path = typer.Option(
        None,
        "--token-freq",
        help="Token counts of your workload (speculators' token_freq.pt, a .npy array, or a "
        "JSON list/map of counts): the acceptance ceiling of the draft vocabulary.",
    ),
    acceptance: list[str] = typer.Option(
        None,
        "--acceptance",
        "-a",
        help="Acceptance rates to evaluate (repeat or comma list; default 0.5 ... 0.9).",
    ),
    gamma: list[int] = typer.Option(
        None, "--gamma", "-g", help="Also evaluate these speculative token counts (repeat)."
    ),
    cost_ratio: float = typer.Option(
        None,
        "--cost-ratio",
        help="Use this draft/target cost ratio instead of the parameter proxy (e.g. measured).",
    ),
    output_format: TextOrJson = "text",
    plot: Path = typer.Option(
        None, "--plot", help="Draw speedup vs acceptance to FILE.svg or FILE.png (plot extra)."
    ),
    quiet: Annotated[
        bool,
        quiet_option("Only the break-even acceptance of each gamma and the notes (no tables)."),
    ] = False,
) -> None:
    """What a draft costs against its target, the acceptance it needs to pay off, and the
    ceiling its draft vocabulary puts on acceptance (header-only).

    Exit codes: 0 reported, 2 usage error (bad option, unusable verifier, missing optional
    dependency), 3 the checkpoint or the token counts could not be read.
    """
    from spec_format.inspect.render import render_text
    from spec_format.inspect.run import InspectOptions, run_inspect

    options = InspectOptions(
        checkpoint=checkpoint,
        verifier=verifier,
        token_freq=token_freq,
        acceptance=_floats(acceptance),
        gammas=tuple(gamma or ()),
        cost_ratio=cost_ratio,
        plot=plot,
    )
    report = run_inspect(options)  # checks, reports, plots
    plotted = str(plot) if plot is not None else None
    emit(
        output_format,
        lambda: {**report.to_dict(), "plot": plotted},
        lambda: render_text(report, quiet=quiet),
    )
    if plotted and output_format == "text":
        sys.stdout.write(f"\nplot written to {plot}\n")
    raise typer.Exit(0)
