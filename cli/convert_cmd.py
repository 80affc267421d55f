"""``specfmt convert``: parse options, call spec_format.convert.run.convert, render, exit."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from spec_format.base.errors import ExitCode
from spec_format.cli.common import emit, handle_errors
from spec_format.cli.options import Report, parse_aux_ids, quiet_option, verifier_option


@handle_errors
def convert_command(
    src: Path = typer.Argument(..., help="The source checkpoint directory.", show_default=False),
    output: Path = typer.Option(
        None, "--output", "-o", help="The new checkpoint directory (absent or empty)."
    ),
    verifier: Annotated[
        str | None,
        verifier_option("The verifier's config.json, its directory, or hf://ORG/NAME[@REV]."),
    ] = None,
    verifier_name: str = typer.Option(
        None,
        "--verifier-name",
        help="The verifier's hub id (ORG/NAME), written as the verifier's name_or_path in "
        "speculators_config (default: from hf://, or the local config's _name_or_path).",
    ),
    aux_layer_ids: list[str] = typer.Option(
        None,
        "--aux-layer-ids",
        help="Verifier layers the draft taps, a comma list (when the source does not say; a "
        "refusal names the ones readers would guess for your verifier).",
    ),
    format_version: str = typer.Option(
        None, "--format-version", help="Target format version (default: the latest)."
    ),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Print the config and the tensor mapping; write nothing."
    ),
    allow_lossy: bool = typer.Option(
        False, "--allow-lossy", help="Drop tensors the format does not carry (listed)."
    ),
    dtype: str = typer.Option(
        None, "--dtype", help="Re-cast float tensors (bfloat16, float16, float32); default: copy."
    ),
    max_shard_size: str = typer.Option(
        None,
        "--max-shard-size",
        help="Shard the weights above this size (default: save_pretrained's for the target "
        "format's transformers: 5GB for 4.x, 50GB for 5.x).",
    ),
    report_format: Report = "text",
    quiet: Annotated[
        bool,
        quiet_option(
            "Only the notes, what is dropped, the validation's findings and what was written (no "
            "config origins or tensor mapping)."
        ),
    ] = False,
) -> None:
    """Convert a third-party draft checkpoint (SafeAILab EAGLE-3, ...) into the speculators
    format: every tensor mapped or dropped with its reason, every config value with its
    origin, written atomically and validated.

    Exit codes: 0 converted (or --dry-run); 1 the converted checkpoint fails validation
    (nothing written); 2 usage error or a refused conversion (nothing written); 3 the source
    could not be read.
    """
    from spec_format.convert.render import render_text
    from spec_format.convert.run import convert, make_request
    from spec_format.convert.write import parse_size

    request = make_request(
        verifier=verifier,
        verifier_name=verifier_name,
        aux_layer_ids=parse_aux_ids(aux_layer_ids),
        format_version=format_version,
        allow_lossy=allow_lossy,
        dtype=dtype,
    )
    result = convert(
        src, output, request, dry_run=dry_run, max_shard_size=parse_size(max_shard_size)
    )
    emit(report_format, result.to_dict, lambda: render_text(result, dry_run, quiet))
    raise typer.Exit(ExitCode.OK)
