"""``specfmt validate``: parse options, call spec_format.validate, render, exit."""

from __future__ import annotations

import enum
from pathlib import Path

import typer
from spec_format.cli.common import Color, handle_errors, stdout

from spec_format.render import RENDERERS, render
from spec_format.rules.base import Profile
from spec_format.validate import ValidateOptions, validate

OutputFormat = enum.Enum("OutputFormat", {name: name for name in RENDERERS}, type=str)


def _ids(values: list[str] | None) -> frozenset[str]:
    out: set[str] = set()
    for value in values or []:
        out.update(v.strip().upper() for v in value.split(",") if v.strip())
    return frozenset(out)


@handle_errors
def validate_command(
    paths: list[Path] = typer.Argument(
        ..., help="config.json files or checkpoint directories.", show_default=False
    ),
    output_format: OutputFormat = typer.Option(
        "text", "--format", "-f", help="Output format.", case_sensitive=False
    ),
    profile: Profile = typer.Option(
        Profile.CURRENT,
        "--profile",
        help="legacy: what was validly published at the time passes; current: the current "
        "contract; strict: warnings become errors.",
        case_sensitive=False,
    ),
    format_version: str = typer.Option(
        None, "--format-version", help="Validate against this format version (e.g. 0.9)."
    ),
    recursive: bool = typer.Option(
        False, "--recursive", "-r", help="Search directories for draft checkpoints."
    ),
    select: list[str] = typer.Option(None, "--select", help="Only these rule ids (comma list)."),
    ignore: list[str] = typer.Option(None, "--ignore", help="Skip these rule ids (comma list)."),
    color: Color = typer.Option(Color.auto, "--color", help="Colour in text output."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Only errors and the summary."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Also list skipped checks."),
) -> None:
    """Check draft configs (and checkpoints) against the format, the rules and their readers.

    Exit codes: 0 no errors, 1 errors found, 2 usage error, 3 an input could not be read.
    """
    options = ValidateOptions(
        profile=profile,
        format_version=format_version,
        recursive=recursive,
        select=_ids(select),
        ignore=_ids(ignore),
    )
    report = validate([str(p) for p in paths], options)
    render(
        report,
        output_format.value,
        stdout(),
        color=color.flag(),
        verbosity=0 if quiet else (2 if verbose else 1),
    )
    raise typer.Exit(report.exit_code)
