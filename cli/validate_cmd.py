"""``specfmt validate``: parse options, run the library's Job, render it (render.job), exit."""

from __future__ import annotations

import importlib
from typing import Annotated, Literal

import typer

from spec_format.base.streams import stdout
from spec_format.cli.common import handle_errors
from spec_format.cli.options import Config, Engine, Isolated, format_option, verifier_option
from spec_format.render import RENDERERS
from spec_format.rules.base import Profile
from spec_format.runner.validate_options import DEFAULT_JOBS, MAX_JOBS, rule_ids
from spec_format.runner.validation import ValidateOptions


@handle_errors
def validate_command(
    paths: list[str] = typer.Argument(
        ...,
        help="config.json files, checkpoint directories, .safetensors files, "
        "hf://ORG/NAME or hf://ORG/NAME@REV (header-only, needs the remote extra), or - for a "
        "config on standard input.",
        show_default=False,
    ),
    output_format: Annotated[
        str, format_option(RENDERERS, "--format-version", "Output format.")
    ] = "text",
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
    verifier: Annotated[
        str | None,
        verifier_option(
            "The target model's config.json, its directory, or hf://ORG/NAME[@REV] (only its "
            "config.json is fetched): check the draft against it."
        ),
    ] = None,
    deep: bool = typer.Option(
        False, "--deep", help="Also read the vocabulary maps (t2d/d2t, a few MB) and check them."
    ),
    scan_weights: bool = typer.Option(
        False,
        "--scan-weights",
        help="Stream every tensor and report NaN/Inf values (reads the whole checkpoint).",
    ),
    color: Literal["auto", "always", "never"] = typer.Option(
        "auto", "--color", help="Colour in text output."
    ),
    quiet: bool = typer.Option(
        False, "--quiet", "-q", help="Only the errors and one summary line (no closing notes)."
    ),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Also list skipped checks."),
    engine: Engine = None,
    statistics: bool = typer.Option(
        False, "--statistics", help="Count the findings per rule instead of listing them."
    ),
    config: Config = None,
    isolated: Isolated = False,
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
    from spec_format.render.job import render_job
    from spec_format.runner import source_readers
    from spec_format.runner.validation import Job

    # third-party drafts are seen through convert, which registers its reader when imported
    source_readers.provide(lambda: importlib.import_module("spec_format.convert.see_through"))

    flags = {"profile": profile, "select": select, "ignore": ignore, "engines": engine}
    options = ValidateOptions(
        profile=profile or Profile.CURRENT,
        format_version=format_version,
        recursive=recursive,
        select=rule_ids(select, "--select"),
        ignore=rule_ids(ignore, "--ignore"),
        verifier=verifier,
        deep=deep,
        scan_weights=scan_weights,
        engines=tuple(engine or ()),
        jobs=jobs,
        interface="cli",
    )
    # the library's job: configuration files, merging, every usage error before any input
    job = Job(
        paths,
        options,
        settings=not isolated,
        config=config,
        given=[name for name, flag in flags.items() if flag is not None],
    )
    verbosity = 0 if quiet else (2 if verbose else 1)
    code = render_job(
        job,
        output_format,
        stdout(),
        color={"always": True, "never": False}.get(color),
        verbosity=verbosity,
        statistics=statistics,
    )
    raise typer.Exit(code)
