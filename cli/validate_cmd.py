"""``specfmt validate``: parse options, call spec_format.validate, render, exit."""

from __future__ import annotations

import contextlib
import enum
from pathlib import Path

import typer

from spec_format.base import progress
from spec_format.base.jsonout import dumps
from spec_format.base.report import Report
from spec_format.cli.common import (
    Color,
    config_option,
    engine_option,
    format_option,
    handle_errors,
    isolated_option,
    progress_display,
    stdout,
    verifier_option,
)
from spec_format.engine.validate_options import DEFAULT_JOBS, MAX_JOBS
from spec_format.engine.validation import ValidateOptions, Validation
from spec_format.render import RENDERERS, render
from spec_format.rules.base import Profile

OutputFormat = enum.Enum("OutputFormat", {name: name for name in RENDERERS}, type=str)


def _ids(values: list[str] | None, option: str) -> frozenset[str] | None:
    """None when the flag was not given (the configuration's value applies)."""
    from spec_format.engine.validation import rule_ids

    return None if values is None else rule_ids(values, option)


@handle_errors
def validate_command(
    paths: list[str] = typer.Argument(
        ...,
        help="config.json files, checkpoint directories, .safetensors files, "
        "hf://ORG/NAME or hf://ORG/NAME@REV (header-only, needs the remote extra), or - for a "
        "config on standard input.",
        show_default=False,
    ),
    output_format: str = format_option(OutputFormat, "text", "--format-version", "Output format."),
    profile: Profile = typer.Option(
        None,
        "--profile",
        help="legacy: what was validly published at the time passes; current (default): the "
        "current contract; strict: warnings become errors.",
        show_default=False,
        case_sensitive=False,
    ),
    format_version: str = typer.Option(
        None, "--format-version", help="Validate against this format version (e.g. 0.9)."
    ),
    recursive: bool = typer.Option(
        False, "--recursive", "-r", help="Search directories for draft checkpoints."
    ),
    select: list[str] = typer.Option(
        None, "--select", help="Only these rules: ids, prefixes (C, C00) or ALL (comma list)."
    ),
    ignore: list[str] = typer.Option(
        None, "--ignore", help="Skip these rules: ids, prefixes (C, C00) or ALL (comma list)."
    ),
    verifier: str = verifier_option(
        "The target model's config.json, its directory, or hf://ORG/NAME[@REV] (only its "
        "config.json is fetched): check the draft against it."
    ),
    deep: bool = typer.Option(
        False, "--deep", help="Also read the vocabulary maps (t2d/d2t, a few MB) and check them."
    ),
    scan_weights: bool = typer.Option(
        False,
        "--scan-weights",
        help="Stream every tensor and report NaN/Inf values (reads the whole checkpoint).",
    ),
    color: Color = typer.Option(Color.auto, "--color", help="Colour in text output."),
    quiet: bool = typer.Option(
        False, "--quiet", "-q", help="Only the errors and one summary line (no closing notes)."
    ),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Also list skipped checks."),
    engine: list[str] = engine_option(),
    statistics: bool = typer.Option(
        False, "--statistics", help="Count the findings per rule instead of listing them."
    ),
    config: Path = config_option(),
    isolated: bool = isolated_option(),
    jobs: int = typer.Option(
        DEFAULT_JOBS,
        "--jobs",
        "-j",
        help=f"hf:// drafts fetched at once (1-{MAX_JOBS}); the report is the same, in the "
        "same order.",
    ),
) -> None:
    """Check draft configs (and checkpoints) against the format, the rules and their readers.

    Exit codes: 0 no errors, 1 errors found, 2 usage error, 3 an input could not be read.

    --deep and --scan-weights need numpy, the deep extra (else exit 2, with the command
    that adds it to this installation).

    An input without weights for them exits 3 (I013).
    """
    from spec_format.engine import settings, source_readers

    source_readers.provide(_convert_readers)  # third-party drafts seen through convert

    select_ids, ignore_ids = _ids(select, "--select"), _ids(ignore, "--ignore")
    # every run is set up (its usage errors raised) before any input is checked or printed
    runs = [
        (
            conf,
            Validation(
                inputs,
                ValidateOptions(
                    profile=settings.merged(profile, conf.profile) or Profile.CURRENT,
                    format_version=format_version,
                    recursive=recursive,
                    select=settings.merged(select_ids, conf.select) or (),
                    ignore=settings.merged(ignore_ids, conf.ignore) or (),
                    verifier=verifier,
                    deep=deep,
                    scan_weights=scan_weights,
                    engines=tuple(settings.merged(engine, conf.engine) or ()),
                    jobs=jobs,
                    interface="cli",
                ),
            ),
        )
        for conf, inputs in settings.for_inputs(paths, config, isolated)
    ]
    verbosity = 0 if quiet else (2 if verbose else 1)
    if output_format in ("text", "json") and not statistics:
        raise typer.Exit(_streamed(runs, output_format, color.flag(), verbosity))
    report = Report()
    for conf, run in runs:
        with progress.showing(progress_display(output_format == "text")):
            report.files.extend(run)
        settings.drop_per_file_ignores(report, conf)
        report.notes.extend(n for n in run.notes() if n not in report.notes)
    if statistics:
        render_statistics(report, output_format, stdout())
    else:
        render(report, output_format, stdout(), color=color.flag(), verbosity=verbosity)
    raise typer.Exit(report.exit_code)


def _streamed(runs: list, output_format: str, color: bool | None, verbosity: int) -> int:
    """Text or JSON output, written as each input is checked; only the tally and the notes
    are kept, never a reported input. Returns the exit status. A JSON document stopped
    part-way (Ctrl-C, SIGTERM) is still closed, so it stays valid JSON."""
    from spec_format.base.report import Tally
    from spec_format.engine import settings

    if output_format == "json":
        from spec_format.render.json_out import JsonStream as Stream
    else:
        from spec_format.render.text import TextStream as Stream
    out = Stream(stdout(), color=color, verbosity=verbosity)
    tally, notes = Tally(), []
    try:
        for conf, run in runs:
            with progress.showing(progress_display(output_format == "text")):
                for file_report in run:
                    settings.drop_ignored(file_report, conf)
                    out.file(file_report)
                    tally.add(file_report)
            notes.extend(n for n in run.notes() if n not in notes)
    except BaseException:
        if output_format == "json":
            # a closed pipe cannot take the end either: the first error stands
            with contextlib.suppress(OSError):
                out.finish(notes, tally, interrupted=True)
        raise
    out.finish(notes, tally)
    return tally.exit_code


def render_statistics(report: Report, fmt: str, out) -> None:
    """``--statistics``: one row per rule code, most frequent first (as ruff prints them)."""

    from spec_format.base.errors import UsageError

    rows = report.statistics()
    if fmt == "json":
        out.write(dumps(rows, indent=2) + "\n")
        return
    if fmt != "text":
        raise UsageError(f"--statistics prints text or json, not --format {fmt}")
    width = max((len(str(r["count"])) for r in rows), default=1)
    for r in rows:
        out.write(f"{r['count']:>{width}}  {r['code']}  {r['severity']:<7}  {r['name']}\n")
    out.write(report.summary() + "\n")


def _convert_readers() -> None:
    from spec_format.convert import see_through  # noqa: F401  (registers its reader)
