"""``specfmt fix``: parse options, run the library's rewrite pipeline, render, exit."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

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
    engines_by_input,
    in_place_option,
    output_option,
    paths_argument,
    render_text,
    run_files,
    write_options,
)

if TYPE_CHECKING:
    from spec_format.rewrites import rewrite


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
    """Write out the defaults readers disagree about, each with its reason (same version).

    Exit codes: 0 done (with --check: nothing would change); 1 --check found the file would
    change or an error no value removes; 2 usage error; 3 the input could not be read.
    """
    opts = write_options(output, in_place, backup, dry_run, check)
    from spec_format.parsers.verifier import load_verifier
    from spec_format.rewrites import rewrite
    from spec_format.rewrites.fixing import FixOptions

    engines = engines_by_input(paths, engine, config, isolated)  # usage errors before any write
    verifier_config = load_verifier(verifier).config if verifier else None
    aux_ids = parse_aux_ids(aux_layer_ids)

    def one(path: Path) -> rewrite.FileResult:
        options = FixOptions(
            format_version=format_version,
            verifier=verifier_config,
            engines=engines[str(path)],
            aux_layer_ids=aux_ids,
        )
        return rewrite.fix_file(path, options, opts)

    raise typer.Exit(run_files(paths, opts, report_format, one, lambda r: _render(r, opts, quiet)))


def _render(file: rewrite.FileResult, opts: rewrite.WriteOptions, quiet: bool = False) -> str:
    result = file.result
    head = f"{file.path}: format {result.detection.label()}"
    return render_text(head, result.changes, result.problems, file.outcome, opts, quiet=quiet)
