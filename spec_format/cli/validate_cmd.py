"""``specfmt validate``: parse options, call spec_format.validate, render, exit."""

from __future__ import annotations

import enum
from pathlib import Path

import typer

from spec_format.cli.common import Color, engine_option, format_option, handle_errors, stdout
from spec_format.render import RENDERERS, render
from spec_format.rules.base import Profile
from spec_format.validation import ValidateOptions, validate

OutputFormat = enum.Enum("OutputFormat", {name: name for name in RENDERERS}, type=str)


def _ids(values: list[str] | None) -> frozenset[str]:
    out: set[str] = set()
    for value in values or []:
        out.update(v.strip() for v in value.split(",") if v.strip())
    return frozenset(out)


@handle_errors
def validate_command(
    paths: list[str] = typer.Argument(
        ...,
        help="config.json files, checkpoint directories, .safetensors files or "
        "hf://ORG/NAME[@REV] (header-only, needs the remote extra).",
        show_default=False,
    ),
    output_format: str = format_option(OutputFormat, "text", "--format-version", "Output format."),
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
    select: list[str] = typer.Option(
        None, "--select", help="Only these rules: ids, prefixes (C, C00) or ALL (comma list)."
    ),
    ignore: list[str] = typer.Option(
        None, "--ignore", help="Skip these rules: ids, prefixes (C, C00) or ALL (comma list)."
    ),
    verifier: Path = typer.Option(
        None,
        "--verifier",
        help="The target model's config.json (or its directory): check the draft against it.",
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
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Only errors and the summary."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Also list skipped checks."),
    engine: list[str] = engine_option(),
) -> None:
    """Check draft configs (and checkpoints) against the format, the rules and their readers.

    Exit codes: 0 no errors, 1 errors found, 2 usage error, 3 an input could not be read.

    --deep and --scan-weights need numpy: pip install 'specfmt\\[deep]' (else exit 2).

    An input without weights for them exits 3 (I013).
    """
    options = ValidateOptions(
        profile=profile,
        format_version=format_version,
        recursive=recursive,
        select=_ids(select),
        ignore=_ids(ignore),
        verifier=str(verifier) if verifier is not None else None,
        deep=deep,
        scan_weights=scan_weights,
        engines=tuple(engine or ()),
    )
    report = validate(paths, options)
    render(
        report,
        output_format,
        stdout(),
        color=color.flag(),
        verbosity=0 if quiet else (2 if verbose else 1),
    )
    raise typer.Exit(report.exit_code)
