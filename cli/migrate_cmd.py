"""``specfmt migrate``: parse options, run the library's rewrite pipeline, render, exit."""

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
def migrate_command(
    paths: list[Path] = paths_argument(),
    to: str = typer.Option(
        None,
        "--to",
        help="Target format version or release (default: latest), e.g. 0.5, 0.5.0 or latest.",
    ),
    # --to, not --format-version: migrate names two versions (--from, --to); the spelling of
    # the other commands is accepted too
    format_version: str = typer.Option(None, "--format-version", hidden=True),
    source: str = typer.Option(
        None, "--from", help="Treat the input as this format version instead of detecting it."
    ),
    output: Path = output_option(),
    in_place: bool = in_place_option(),
    backup: bool = backup_option(),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Print a unified diff and the change report; write nothing."
    ),
    check: bool = typer.Option(
        False, "--check", help="Exit 1 when migrating would change the file; write nothing."
    ),
    allow_lossy: bool = typer.Option(
        False, "--allow-lossy", help="Accept a downgrade that loses information."
    ),
    verifier: str = verifier_option(
        "The verifier's config.json, its folder, or hf://ORG/NAME[@REV] (only config.json is fetched): fills verifier.architectures."
    ),
    report_format: str = format_option(ReportFormat, "text", "--to", "Report format."),
    engine: list[str] = engine_option(),
    config: Path = config_option(),
    isolated: bool = isolated_option(),
    quiet: bool = quiet_option(
        "Only the errors and warnings each input still has (no list of changes); the diff "
        "with --dry-run, one summary line with --check."
    ),
) -> None:
    """Convert a config to another format version, step by step, listing every change.

    Exit codes: 0 done (with --check: nothing would change); 1 --check found the file would
    change, or the input fails its own schema; 2 usage error or a refused migration (lossy
    without --allow-lossy, a type the target lacks); 3 the input could not be read; 70 a bug
    (the result fails the target schema although the input passed).
    """
    from spec_format.rewrites.migration import MigrateOptions

    opts = write_options(output, in_place, backup, dry_run, check)
    options = MigrateOptions(
        to=to or format_version,
        source_version=source,
        allow_lossy=allow_lossy,
        verifier=verifier,
        engines=tuple(engine or ()),
    )
    raise typer.Exit(
        run_rewrite("migrate", paths, options, opts, report_format, config, isolated, quiet)
    )
