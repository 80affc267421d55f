"""Options and rendering shared by ``specfmt migrate`` and ``specfmt fix``; the pipeline
itself (read, rewrite, write, batch, per-file errors) is the library's
:mod:`spec_format.rewrites.rewrite`."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from spec_format.base.jsonout import dumps
from spec_format.cli.common import ExitCode, print_error, use_color

if TYPE_CHECKING:  # the library is imported when a command runs, not at CLI start-up
    from spec_format.rewrites import rewrite
    from spec_format.rewrites.migration.records import Change, Problem


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


#: what the report says when the content is the same and only the formatting differs
FORMATTING_ONLY = (
    "formatting differs only (key order, indentation, final newline): not a change, the "
    "file is left as it is"
)


def render_text(
    head: str,
    changes: list[Change],
    problems: list[Problem],
    outcome: rewrite.Outcome,
    opts: rewrite.WriteOptions,
    extra: list[str] | None = None,
    quiet: bool = False,
) -> str:
    """The report of one input. ``quiet`` (-q): its problems only, under its headline, and
    nothing when it has none (the diff of --dry-run and --check's last line stay)."""
    from spec_format.base.wording import severity_word
    from spec_format.render.text import output_width, wrap

    stream = sys.stderr if opts.to_stdout else sys.stdout  # where run_files writes the report
    width = output_width(stream)  # a terminal's, colour or not (NO_COLOR): was unwrapped
    if quiet:  # -q: the errors and warnings, and the diff that --dry-run asked for
        changes, extra = [], []
        problems = [p for p in problems if p.severity != "info"]
        if not problems and not (opts.dry_run and outcome.changed):
            return ""
    rows = [(c.step, f"{c.describe()}{' [lossy]' if c.lossy else ''}") for c in changes]
    rows += [(severity_word(p.severity), f"{p.rule} {p.code}: {p.message}") for p in problems]

    def fit(text: str) -> list[str]:
        return ["".join(t for t, _ in line) for line in wrap([(text, "")], width, 4)]

    lines = [line for text in (head, *(extra or [])) for line in fit(text)]
    for label, text in rows:  # on a terminal, wrapped and continued under the description
        prefix = f"  {label:<9} "
        body = wrap([(text, "")], max(width - len(prefix), 20) if width else 0, 0)
        for i, line in enumerate(body):
            lines.append((prefix if i == 0 else " " * len(prefix)) + "".join(t for t, _ in line))
    if not changes and not problems and not quiet:
        lines.append("  no changes")
    if outcome.formatting_only and not quiet:  # not a change: say so once, and what differs
        lines += fit(f"  {FORMATTING_ONLY}")
    if opts.dry_run and outcome.changed:
        from spec_format.rewrites.migration.output import colour_diff

        diff = outcome.diff()
        lines.append("")
        lines.append((colour_diff(diff) if use_color(sys.stdout) else diff).rstrip("\n"))
    if opts.check and not quiet:
        lines += fit(
            f"  would change {outcome.path}"
            if outcome.changed
            else f"  {outcome.path} is up to date"
        )
    if quiet:
        pass  # the check's summary line (run_files) says what was done
    elif outcome.written_to is not None:
        lines += fit(
            f"  wrote {outcome.written_to}"
            + (f" (backup {outcome.backup})" if outcome.backup else "")
        )
    elif opts.in_place and not outcome.changed:
        lines += fit(f"  {outcome.path} already up to date; not rewritten")
    return "\n".join(lines) + "\n"


def engines_by_input(
    paths: list[Path], flag: list[str] | None, config: Path | None, isolated: bool
) -> dict[str, tuple[str, ...]]:
    """The engines of each input: --engine, else ``engine`` of its configuration file
    (spec_format.engine.settings); an unknown engine is a usage error here, before any write."""
    from spec_format.engine import settings
    from spec_format.facts.disputes import parse_engines

    parse_engines(flag or ())
    return {
        name: tuple(settings.merged(flag, conf.engine) or ())
        for conf, names in settings.for_inputs(paths, config, isolated)
        for name in names
    }


def run_files(
    paths: list[Path],
    opts: rewrite.WriteOptions,
    fmt: str,
    rewrite_one: Callable[[Path], rewrite.FileResult],
    render: Callable[[rewrite.FileResult], str],
) -> int:
    """Rewrite every input with the library's pipeline and print each as it is done; return
    the exit code.

    One input keeps the single-file contract: the document on stdout unless another
    destination is named. Several inputs need a mode that writes no document to stdout
    (--check, --dry-run, --in-place). The JSON report is always a list with one object per
    input, one input or many (a script reads one shape).
    """
    from spec_format.rewrites import rewrite

    results = []
    would_change = failed = stuck = 0
    for result in rewrite.rewrite_files(paths, rewrite_one, opts):
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
                sys.stderr.write(render(result))
            else:
                sys.stdout.write(render(result))
    if fmt == "json":
        payloads = [r.to_dict() for r in results]
        sys.stdout.write(dumps(payloads, indent=2, sort_keys=True) + "\n")
    elif opts.check:
        sys.stdout.write(check_summary(len(paths), would_change, failed, stuck) + "\n")
    return rewrite.exit_code(results)


def check_summary(total: int, would_change: int, failed: int, stuck: int = 0) -> str:
    """The last line of ``--check``: how many of the inputs would change, and how many fail
    although nothing would change (a disagreement no value removes, named above)."""
    inputs = f"{total} input{'s' if total != 1 else ''}"
    left = f"; {stuck} with a disagreement no value removes" if stuck else ""
    if not would_change and not failed:
        return f"{inputs} up to date{left}"
    line = f"{would_change} of {inputs} would change"
    return line + (f"; {failed} could not be processed" if failed else "") + left
