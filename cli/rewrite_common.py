"""Options and rendering shared by ``specfmt migrate`` and ``specfmt fix``."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from spec_format.cli.common import ExitCode, print_error, use_color
from spec_format.errors import SpecfmtError, UsageError
from spec_format.jsonout import dumps

if TYPE_CHECKING:  # the library is imported when a command runs, not at CLI start-up
    from spec_format import rewrite
    from spec_format.migration.records import Change, Problem


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
    from spec_format import rewrite

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
) -> str:
    from spec_format.render.text import terminal_width, wrap

    stream = sys.stderr if opts.to_stdout else sys.stdout  # where run_files writes the report
    width = terminal_width(stream) if use_color(stream) or os.environ.get("COLUMNS") else 0
    rows = [(c.step, f"{c.describe()}{' [lossy]' if c.lossy else ''}") for c in changes]
    rows += [(p.severity, f"{p.rule} {p.code}: {p.message}") for p in problems]

    def fit(text: str) -> list[str]:
        return ["".join(t for t, _ in line) for line in wrap([(text, "")], width, 4)]

    lines = [line for text in (head, *(extra or [])) for line in fit(text)]
    for label, text in rows:  # on a terminal, wrapped and continued under the description
        prefix = f"  {label:<9} "
        body = wrap([(text, "")], max(width - len(prefix), 20) if width else 0, 0)
        for i, line in enumerate(body):
            lines.append((prefix if i == 0 else " " * len(prefix)) + "".join(t for t, _ in line))
    if not changes and not problems:
        lines.append("  no changes")
    if outcome.formatting_only:  # not a change: say so once, and what differs
        lines += fit(f"  {FORMATTING_ONLY}")
    if opts.dry_run and outcome.changed:
        from spec_format.migration.output import colour_diff

        diff = outcome.diff()
        lines.append("")
        lines.append((colour_diff(diff) if use_color(sys.stdout) else diff).rstrip("\n"))
    if opts.check:
        lines += fit(
            f"  would change {outcome.path}"
            if outcome.changed
            else f"  {outcome.path} is up to date"
        )
    if outcome.written_to is not None:
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
    (spec_format.settings); an unknown engine is a usage error here, before any write."""
    from spec_format import settings
    from spec_format.disputes import parse_engines

    parse_engines(flag or ())
    return {
        name: tuple(settings.merged(flag, conf.engine) or ())
        for conf, names in settings.for_inputs(paths, config, isolated)
        for name in names
    }


@dataclass
class FileResult:
    """What processing one input produced, for rendering and the exit code."""

    text: str
    payload: dict[str, Any]
    outcome: rewrite.Outcome
    exit_code: int


class FileFailed(Exception):
    """One input could not be processed; the message names the file and the fix."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


#: which exit code wins when several inputs end differently (a bug, then unreadable input,
#: then a refusal or usage problem, then "would change" / findings)
_PRECEDENCE = (ExitCode.INTERNAL, ExitCode.UNREADABLE, ExitCode.USAGE, ExitCode.FINDINGS)


def run_files(
    paths: list[Path],
    opts: rewrite.WriteOptions,
    fmt: str,
    process: Callable[[Path], FileResult],
) -> int:
    """Process every input (one failing input never stops the others); return the exit code.

    One input keeps the single-file contract: the document on stdout unless another
    destination is named, a JSON report as one object. Several inputs need a mode that
    writes no document to stdout (--check, --dry-run, --in-place); their JSON report is a
    list with one object per input.
    """
    if opts.in_place and any(str(p) == "-" for p in paths):
        raise UsageError(
            "- (standard input) cannot be rewritten in place; drop --in-place (the result "
            "goes to stdout) or pass -o FILE"
        )
    if len(paths) > 1 and (opts.to_stdout or opts.output is not None):
        raise UsageError(
            f"{len(paths)} inputs given: stdout and -o take one file; use --check, --dry-run or "
            "--in-place for several"
        )
    payloads: list[dict[str, Any]] = []
    codes: list[int] = []
    would_change = failed = stuck = 0
    for path in paths:
        try:
            result = process(path)
        except (FileFailed, SpecfmtError) as exc:
            code, message = exc.exit_code, str(exc)
        except Exception as exc:  # a bug: report it for this input, go on with the others
            from spec_format.oserror import as_error

            environment = as_error(exc)  # ENOSPC, EACCES ...: exit 3, not a bug
            if environment is not None:
                code, message = environment.exit_code, f"{path}: {environment}"
            elif os.environ.get("SPECFMT_DEBUG"):
                raise
            else:
                code = ExitCode.INTERNAL
                message = (
                    f"{path}: internal error: {type(exc).__name__}: {str(exc)[:300]}; this is a "
                    "bug in specfmt (nothing was written for this input); rerun with "
                    "SPECFMT_DEBUG=1 for the traceback and report it"
                )
        else:
            code = None
        if code is not None:
            from spec_format.rules.base import MAX_MESSAGE, bounded

            message = bounded(message, MAX_MESSAGE)
            print_error(message)
            payloads.append({"path": str(path), "error": message, "exit_code": int(code)})
            codes.append(code)
            failed += 1
            continue
        codes.append(result.exit_code)
        would_change += result.outcome.changed
        stuck += result.exit_code == ExitCode.FINDINGS and not result.outcome.changed
        if fmt == "json":
            payloads.append(_json_payload(result, opts))
        elif opts.to_stdout:
            sys.stdout.write(result.outcome.after)
            sys.stderr.write(result.text)
        else:
            sys.stdout.write(result.text)
    if fmt == "json":
        doc: Any = payloads[0] if len(paths) == 1 else payloads
        sys.stdout.write(dumps(doc, indent=2, sort_keys=True) + "\n")
    elif opts.check:
        sys.stdout.write(check_summary(len(paths), would_change, failed, stuck) + "\n")
    return next((int(c) for c in _PRECEDENCE if c in codes), int(ExitCode.OK))


def check_summary(total: int, would_change: int, failed: int, stuck: int = 0) -> str:
    """The last line of ``--check``: how many of the inputs would change, and how many fail
    although nothing would change (a disagreement no value removes, named above)."""
    inputs = f"{total} input{'s' if total != 1 else ''}"
    left = f"; {stuck} with a disagreement no value removes" if stuck else ""
    if not would_change and not failed:
        return f"{inputs} up to date{left}"
    line = f"{would_change} of {inputs} would change"
    return line + (f"; {failed} could not be processed" if failed else "") + left


def _json_payload(result: FileResult, opts: rewrite.WriteOptions) -> dict[str, Any]:
    payload = dict(result.payload)
    outcome = result.outcome
    payload["would_change" if opts.check or opts.dry_run else "changed"] = outcome.changed
    payload["formatting_only"] = outcome.formatting_only
    if outcome.written_to is not None:
        payload["written_to"] = str(outcome.written_to)
    if opts.dry_run:
        payload["diff"] = outcome.diff()
    if opts.to_stdout:
        payload["document"] = json.loads(outcome.after)
    return payload
