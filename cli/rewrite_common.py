"""The options and the skeleton ``specfmt migrate`` and ``specfmt fix`` share; the job
(configuration files, engines, read, rewrite, write, batch, per-file errors) is the
library's :func:`spec_format.rewrites.rewrite.rewrite_job`, the text report
:mod:`spec_format.rewrites.render`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from spec_format.base.jsonout import dumps
from spec_format.cli.common import ExitCode, print_error

if TYPE_CHECKING:  # the library is imported when a command runs, not at CLI start-up
    from spec_format.rewrites import rewrite


def paths_argument():
    return typer.Argument(
        ...,
        help="config.json files or checkpoint directories (several need --check, --dry-run or "
        "--in-place), or - for a config on standard input (the result goes to stdout).",
    )


def output_option():
    return typer.Option(
        None, "--output", "-o", help="Write the result to FILE instead of stdout (- for stdout)."
    )


def in_place_option():
    return typer.Option(False, "--in-place", "-i", help="Replace the input atomically.")


def backup_option():
    return typer.Option(
        False,
        "--backup",
        help="With --in-place: keep the original as <name>.bak (.bak.1, ... if taken).",
    )


def write_options(
    output: Path | None, in_place: bool, backup: bool, dry_run: bool, check: bool
) -> rewrite.WriteOptions:
    from spec_format.rewrites import rewrite

    if output is not None and str(output) == "-":  # `-o -`: standard output, as `-` reads stdin
        output = None
    opts = rewrite.WriteOptions(output, in_place, backup, dry_run, check)
    opts.validate()
    return opts


def run_rewrite(
    kind: str,
    paths: list[Path],
    options: Any,
    opts: rewrite.WriteOptions,
    fmt: str,
    config: Path | None,
    isolated: bool,
    quiet: bool = False,
) -> int:
    """The skeleton of ``specfmt migrate`` and ``specfmt fix``: run the library's job
    (:func:`spec_format.rewrites.rewrite.rewrite_job`: configuration files, engines, every
    usage error before a write, the batch) and print each result as it is done; return the
    exit code.

    One input keeps the single-file contract: the document on stdout unless another
    destination is named. Several inputs need a mode that writes no document to stdout
    (--check, --dry-run, --in-place). The JSON report is always a list with one object per
    input, one input or many (a script reads one shape).
    """
    from spec_format.rewrites import rewrite
    from spec_format.rewrites.render import TEXT, check_summary

    render = TEXT[kind]
    job = rewrite.rewrite_job(kind, paths, options, opts, settings=not isolated, config=config)
    results = []
    would_change = failed = stuck = 0
    for result in job:
        results.append(result)
        if not result.ok:
            print_error(result.error)
            failed += 1
        else:
            would_change += result.changed
            stuck += result.exit_code == ExitCode.FINDINGS and not result.changed
            if fmt == "json":  # one document at the end
                continue
            if opts.to_stdout:
                sys.stdout.write(result.outcome.after)
                sys.stderr.write(render(result, opts, quiet))
            else:
                sys.stdout.write(render(result, opts, quiet))
    if fmt == "json":
        payloads = [r.to_dict() for r in results]
        sys.stdout.write(dumps(payloads, indent=2, sort_keys=True) + "\n")
    elif opts.check:
        sys.stdout.write(check_summary(len(paths), would_change, failed, stuck) + "\n")
    return rewrite.exit_code(results)
