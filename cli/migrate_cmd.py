"""``specfmt migrate``: parse options, run the library's rewrite pipeline, render, exit."""

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
    opts = write_options(output, in_place, backup, dry_run, check)
    from spec_format.parsers.verifier import load_verifier
    from spec_format.rewrites import rewrite
    from spec_format.rewrites.migration import MigrateOptions

    engines = engines_by_input(paths, engine, config, isolated)  # usage errors before any write
    verifier_config = load_verifier(verifier).config if verifier else None

    def one(path: Path) -> rewrite.FileResult:
        options = MigrateOptions(
            to=to or format_version,
            source_version=source,
            allow_lossy=allow_lossy,
            verifier=verifier_config,
            engines=engines[str(path)],
        )
        return rewrite.migrate_file(path, options, opts)

    raise typer.Exit(run_files(paths, opts, report_format, one, lambda r: _render(r, opts, quiet)))


def _render(file: rewrite.FileResult, opts: rewrite.WriteOptions, quiet: bool = False) -> str:
    result, outcome = file.result, file.outcome
    det = result.detection
    head = f"{file.path}: format {det.label()} -> {result.target} ({result.target_release})"
    extra = [f"  steps: {', '.join(s.id for s in result.steps) or 'none'}"]
    if not det.agrees:
        extra.append(
            f"  note: speculators_version says {det.declared_line}, the keys say {det.inferred_span}"
        )
    return render_text(head, result.changes, result.problems, outcome, opts, extra, quiet)
