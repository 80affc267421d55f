"""Options and rendering shared by ``specfmt migrate`` and ``specfmt fix``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer

from spec_format import rewrite
from spec_format.migrate.records import Change, Problem

OUTPUT_HELP = "Write the result to FILE instead of stdout."


def write_options(
    output: Path | None, in_place: bool, backup: bool, dry_run: bool, check: bool
) -> rewrite.WriteOptions:
    opts = rewrite.WriteOptions(output, in_place, backup, dry_run, check)
    opts.validate()
    return opts


def render_text(
    head: str,
    changes: list[Change],
    problems: list[Problem],
    outcome: rewrite.Outcome,
    opts: rewrite.WriteOptions,
    extra: list[str] | None = None,
) -> str:
    lines = [head, *(extra or [])]
    for c in changes:
        mark = " [lossy]" if c.lossy else ""
        lines.append(f"  {c.step:<9} {c.describe()}{mark}")
    for p in problems:
        lines.append(f"  {p.severity:<9} {p.code}: {p.message}")
    if not changes and not problems:
        lines.append("  no changes")
    if opts.dry_run and outcome.changed:
        lines.append("")
        lines.append(outcome.diff().rstrip("\n"))
    if opts.check:
        lines.append(
            f"  would change {outcome.path}"
            if outcome.changed
            else f"  {outcome.path} is up to date"
        )
    if outcome.written_to is not None:
        lines.append(
            f"  wrote {outcome.written_to}"
            + (f" (backup {outcome.backup})" if outcome.backup else "")
        )
    elif opts.in_place and not outcome.changed:
        lines.append(f"  {outcome.path} already up to date; not rewritten")
    return "\n".join(lines) + "\n"


def emit(
    report_text: str,
    report_json: dict[str, Any],
    outcome: rewrite.Outcome,
    opts: rewrite.WriteOptions,
    fmt: str,
) -> None:
    """The document goes to stdout when no other destination was named; the report then
    goes to stderr (text) or wraps the document (json)."""
    if fmt == "json":
        payload = dict(report_json)
        payload["would_change" if opts.check or opts.dry_run else "changed"] = outcome.changed
        if outcome.written_to is not None:
            payload["written_to"] = str(outcome.written_to)
        if opts.dry_run:
            payload["diff"] = outcome.diff()
        if opts.to_stdout:
            payload["document"] = json.loads(outcome.after)
        sys.stdout.write(json.dumps(payload, indent=2, sort_keys=True) + "\n")
        return
    if opts.to_stdout:
        sys.stdout.write(outcome.after)
        sys.stderr.write(report_text)
    else:
        sys.stdout.write(report_text)


def fail(message: str, code: int) -> None:
    from spec_format.cli.common import err_console

    err_console().print(f"[bold red]specfmt:[/bold red] {message}", markup=True, highlight=False)
    raise typer.Exit(code)
