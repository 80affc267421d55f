"""``specfmt migrate`` and ``specfmt fix``: parse options, run the library's job
(:func:`spec_format.rewrites.rewrite.rewrite_job`: configuration files, engines, read,
rewrite, write, batch, per-file errors), print it (:func:`spec_format.rewrites.render.
render_batch`), exit."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from spec_format.cli.common import handle_errors
from spec_format.cli.options import (
    REPORT_FORMATS,
    Config,
    Engine,
    Isolated,
    Report,
    format_option,
    parse_aux_ids,
    quiet_option,
    verifier_option,
)

Paths = Annotated[
    list[Path],
    typer.Argument(
        help="config.json files or checkpoint directories (several need --check, --dry-run or "
        "--in-place), or - for a config on standard input (the result goes to stdout).",
    ),
]
Output = Annotated[
    Path | None,
    typer.Option(
        "--output",
        "-o",
        help="Write the result to FILE instead of stdout (- for stdout).",
        # `-o -`: standard output, as `-` reads stdin
        callback=lambda value: None if value is not None and str(value) == "-" else value,
    ),
]
InPlace = Annotated[bool, typer.Option("--in-place", "-i", help="Replace the input atomically.")]
Backup = Annotated[
    bool,
    typer.Option(
        "--backup", help="With --in-place: keep the original as <name>.bak (.bak.1, ... if taken)."
    ),
]
Quiet = Annotated[
    bool,
    quiet_option(
        "Only the errors and warnings each input still has (no list of changes); the diff "
        "with --dry-run, one summary line with --check."
    ),
]


def _run(kind: str, paths: list[Path], options: Any, flags: dict[str, Any]) -> None:
    """The job of ``kind`` with the command's ``flags`` (its parameters), each result
    printed as it is done; exit with the batch's code. The write flags are checked first:
    --in-place with -o is a usage error before any input is read."""
    from spec_format.rewrites import rewrite
    from spec_format.rewrites.render import render_batch

    names = ("output", "in_place", "backup", "dry_run", "check")
    write = rewrite.WriteOptions(**{name: flags[name] for name in names})
    job = rewrite.rewrite_job(
        kind, paths, options, write, settings=not flags["isolated"], config=flags["config"]
    )
    results = render_batch(kind, job, write, flags["report_format"], flags["quiet"])
    raise typer.Exit(rewrite.exit_code(results))


@handle_errors
def fix_command(
    paths: Paths,
    format_version: str = typer.Option(
        None,
        "--format-version",
        help="Use this format version's defaults instead of the detected one.",
    ),
    output: Output = None,
    in_place: InPlace = False,
    backup: Backup = False,
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Print a unified diff and the report; write nothing."
    ),
    check: bool = typer.Option(
        False,
        "--check",
        help="Exit 1 when fixing would change the file, or when a named --engine still "
        "disagrees in a way no value removes; write nothing.",
    ),
    verifier: Annotated[
        str | None,
        verifier_option(
            "The verifier's config.json, its folder, or hf://ORG/NAME[@REV] (only config.json is fetched): aux layer ids and verifier.architectures."
        ),
    ] = None,
    report_format: Report = "text",
    engine: Engine = None,
    aux_layer_ids: list[str] = typer.Option(
        None,
        "--aux-layer-ids",
        help="The verifier layers the draft was trained on, e.g. 2,18,33: written as the aux "
        "layer ids (fix never writes the default layers, which are a guess).",
    ),
    config: Config = None,
    isolated: Isolated = False,
    quiet: Quiet = False,
) -> None:
    """Fix what is fixable in place, each change with its reason (same format version).

    Exit codes: 0 done (with --check: nothing would change); 1 --check found the file would
    change or an error no value removes; 2 usage error; 3 the input could not be read.
    """
    from spec_format.rewrites.fixing import FixOptions

    options = FixOptions(
        format_version=format_version,
        verifier=verifier,
        engines=tuple(engine or ()),
        aux_layer_ids=parse_aux_ids(aux_layer_ids),
    )
    _run("fix", paths, options, locals())


@handle_errors
def migrate_command(
    paths: Paths,
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
    output: Output = None,
    in_place: InPlace = False,
    backup: Backup = False,
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Print a unified diff and the change report; write nothing."
    ),
    check: bool = typer.Option(
        False, "--check", help="Exit 1 when migrating would change the file; write nothing."
    ),
    allow_lossy: bool = typer.Option(
        False, "--allow-lossy", help="Accept a downgrade that loses information."
    ),
    verifier: Annotated[
        str | None,
        verifier_option(
            "The verifier's config.json, its folder, or hf://ORG/NAME[@REV] (only config.json is fetched): fills verifier.architectures."
        ),
    ] = None,
    report_format: Annotated[str, format_option(REPORT_FORMATS, "--to", "Report format.")] = "text",
    engine: Engine = None,
    config: Config = None,
    isolated: Isolated = False,
    quiet: Quiet = False,
) -> None:
    """Convert a config to another format version, step by step, listing every change.

    Exit codes: 0 done (with --check: nothing would change); 1 --check found the file would
    change, or the input fails its own schema; 2 usage error or a refused migration (lossy
    without --allow-lossy, a type the target lacks); 3 the input could not be read; 70 a bug
    (the result fails the target schema although the input passed).
    """
    from spec_format.rewrites.migration import MigrateOptions

    options = MigrateOptions(
        to=to or format_version,
        source_version=source,
        allow_lossy=allow_lossy,
        verifier=verifier,
        engines=tuple(engine or ()),
    )
    _run("migrate", paths, options, locals())
