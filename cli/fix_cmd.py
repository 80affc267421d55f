"""``specfmt fix``: parse options, run the library's rewrite pipeline, render, exit."""

from __future__ import annotations

from pathlib import Path

import typer

from spec_format.cli.common import (
    ReportFormat,
    config_option,
    engine_option,
    format_option,
    handle_errors,
    isolated_option,
    parse_aux_ids,
    quiet_option,
    verifier_option,
)
from spec_format.cli.rewrite_common import (
    backup_option,
    in_place_option,
    output_option,
    paths_argument,
    run_rewrite,
    write_options,
)


@handle_errors
def fix_command(
    paths: list[Path] = paths_argument(),
    format_version: str = typer.Option(
        None,
        "--format-version",
        help="Use this format version's defaults instead of the detected one.",
    ),
    output: Path = output_option(),
    in_place: bool = in_place_option(),
    backup: bool = backup_option(),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Print a unified diff and the report; write nothing."
    ),
    check: bool = typer.Option(
        False,
        "--check",
        help="Exit 1 when fixing would change the file, or when a named --engine still "
        "disagrees in a way no value removes; write nothing.",
    ),
    verifier: str = verifier_option(
        "The verifier's config.json, its folder, or hf://ORG/NAME[@REV] (only config.json is fetched): aux layer ids and verifier.architectures."
    ),
    report_format: str = format_option(ReportFormat, "text", "--format-version", "Report format."),
    engine: list[str] = engine_option(),
    aux_layer_ids: list[str] = typer.Option(
        None,
        "--aux-layer-ids",
        help="The verifier layers the draft was trained on, e.g. 2,18,33: written as the aux "
        "layer ids (fix never writes the default layers, which are a guess).",
    ),
    config: Path = config_option(),
    isolated: bool = isolated_option(),
    quiet: bool = quiet_option(
        "Only the errors and warnings each input still has (no list of changes); the diff "
        "with --dry-run, one summary line with --check."
    ),
) -> None:
    """Fix what is fixable in place, each change with its reason (same format version).

    Exit codes: 0 done (with --check: nothing would change); 1 --check found the file would
    change or an error no value removes; 2 usage error; 3 the input could not be read.
    """
    from spec_format.rewrites.fixing import FixOptions

    opts = write_options(output, in_place, backup, dry_run, check)
    options = FixOptions(
        format_version=format_version,
        verifier=verifier,
        engines=tuple(engine or ()),
        aux_layer_ids=parse_aux_ids(aux_layer_ids),
    )
    raise typer.Exit(
        run_rewrite("fix", paths, options, opts, report_format, config, isolated, quiet)
    )
