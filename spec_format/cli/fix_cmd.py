"""``specfmt fix``: parse options, call spec_format.fix, write, render, exit."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from spec_format.cli.common import ExitCode, engine_option, format_option, handle_errors
from spec_format.cli.migrate_cmd import ReportFormat
from spec_format.cli.rewrite_common import (
    OUTPUT_HELP,
    FileResult,
    render_text,
    run_files,
    write_options,
)

if TYPE_CHECKING:
    from spec_format import rewrite
    from spec_format.fix import FixOptions


@handle_errors
def fix_command(
    paths: list[Path] = typer.Argument(
        ...,
        help="config.json files or checkpoint directories (several need --check, --dry-run or --in-place).",
    ),
    format_version: str = typer.Option(
        None,
        "--format-version",
        help="Use this format version's defaults instead of the detected one.",
    ),
    output: Path = typer.Option(None, "--output", "-o", help=OUTPUT_HELP),
    in_place: bool = typer.Option(False, "--in-place", "-i", help="Replace the input atomically."),
    backup: bool = typer.Option(
        False,
        "--backup",
        help="With --in-place: keep the original as <name>.bak (.bak.1, ... if taken).",
    ),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Print a unified diff and the report; write nothing."
    ),
    check: bool = typer.Option(
        False, "--check", help="Exit 1 when fixing would change the file; write nothing."
    ),
    verifier: Path = typer.Option(
        None,
        "--verifier",
        help="The verifier's config.json (or folder): aux layer ids and verifier.architectures.",
    ),
    report_format: str = format_option(ReportFormat, "text", "--format-version", "Report format."),
    engine: list[str] = engine_option(),
) -> None:
    """Write out the defaults readers disagree about, each with its reason (same version).

    Exit codes: 0 done (with --check: nothing would change); 1 --check found the file would
    change; 2 usage error; 3 the input could not be read.
    """
    opts = write_options(output, in_place, backup, dry_run, check)
    from spec_format.disputes import parse_engines
    from spec_format.fix import FixOptions
    from spec_format.verifier import load_verifier

    parse_engines(engine)  # a usage error before any file is touched
    options = FixOptions(
        format_version=format_version,
        verifier=load_verifier(verifier).config if verifier else None,
        engines=tuple(engine or ()),
    )
    raise typer.Exit(
        run_files(paths, opts, report_format, lambda p: _fix_one(p, options, opts, check))
    )


def _fix_one(
    path: Path, options: FixOptions, opts: rewrite.WriteOptions, check: bool
) -> FileResult:
    from spec_format import documents, rewrite
    from spec_format.fix import fix

    cfg = documents.read_config(path)
    result = fix(cfg.data, options)
    outcome = rewrite.commit(rewrite.prepare(cfg.path, cfg.text, result.document, cfg.raw), opts)
    head = f"{cfg.path}: format {result.detection.label()}"
    text = render_text(head, result.changes, result.problems, outcome, opts)
    code = ExitCode.FINDINGS if check and outcome.changed else ExitCode.OK
    return FileResult(text, {**result.to_dict(), "path": str(cfg.path)}, outcome, code)
