"""The text report of ``specfmt migrate`` and ``specfmt fix``, one input at a time: its
head line, every change and problem with its reason, the diff of ``--dry-run``, what was
written; and the closing line of ``--check``. ``-f json`` is
:meth:`~spec_format.rewrites.rewrite.FileResult.to_dict`."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any

from spec_format.base.errors import ExitCode
from spec_format.base.jsonout import dumps
from spec_format.render.terminal import print_error, use_color


def migrate_text(file: Any, opts: Any, quiet: bool = False) -> str:
    """One migrated input (a :class:`~spec_format.rewrites.rewrite.FileResult`)."""
    result, outcome = file.result, file.outcome
    det = result.detection
    head = f"{file.path}: format {det.label()} -> {result.target} ({result.target_release})"
    extra = [f"  steps: {', '.join(s.id for s in result.steps) or 'none'}"]
    if not det.agrees:
        extra.append(
            f"  note: speculators_version says {det.declared_line}, the keys say {det.inferred_span}"
        )
    return render_text(head, result.changes, result.problems, outcome, opts, extra, quiet)


def fix_text(file: Any, opts: Any, quiet: bool = False) -> str:
    """One fixed input."""
    result = file.result
    head = f"{file.path}: format {result.detection.label()}"
    return render_text(head, result.changes, result.problems, file.outcome, opts, quiet=quiet)


#: what the report says when the content is the same and only the formatting differs
FORMATTING_ONLY = (
    "formatting differs only (key order, indentation, final newline): not a change, the "
    "file is left as it is"
)


#: the report of one input, per rewrite
TEXT = {"migrate": migrate_text, "fix": fix_text}


def render_text(
    head: str,
    changes: list[Any],
    problems: list[Any],
    outcome: Any,
    opts: Any,
    extra: list[str] | None = None,
    quiet: bool = False,
) -> str:
    """The report of one input. ``quiet`` (-q): its problems only, under its headline, and
    nothing when it has none (the diff of --dry-run and --check's last line stay)."""
    from spec_format.base.wording import severity_word
    from spec_format.render.text import output_width, wrap

    stream = sys.stderr if opts.to_stdout else sys.stdout  # where render_batch writes it
    width = output_width(stream)  # a terminal's, colour or not (NO_COLOR)
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
        pass  # the check's summary line (render_batch) says what was done
    elif outcome.written_to is not None:
        lines += fit(
            f"  wrote {outcome.written_to}"
            + (f" (backup {outcome.backup})" if outcome.backup else "")
        )
    elif opts.in_place and not outcome.changed:
        lines += fit(f"  {outcome.path} already up to date; not rewritten")
    return "\n".join(lines) + "\n"


def check_summary(total: int, would_change: int, failed: int, stuck: int = 0) -> str:
    """The last line of ``--check``: how many of the inputs would change, and how many fail
    although nothing would change (a disagreement no value removes, named above)."""
    inputs = f"{total} input{'s' if total != 1 else ''}"
    left = f"; {stuck} with a disagreement no value removes" if stuck else ""
    if not would_change and not failed:
        return f"{inputs} up to date{left}"
    line = f"{would_change} of {inputs} would change"
    return line + (f"; {failed} could not be processed" if failed else "") + left


def render_batch(kind: str, job: Iterable[Any], opts: Any, fmt: str, quiet: bool = False) -> list:
    """Print each result of a ``migrate``/``fix`` job (:func:`~spec_format.rewrites.rewrite.
    rewrite_job`) as it is done and return them all (their exit code:
    :func:`~spec_format.rewrites.rewrite.exit_code`).

    One input keeps the single-file contract: the document on stdout unless another
    destination is named (the report then goes to stderr). Several inputs need a mode that
    writes no document to stdout (--check, --dry-run, --in-place). The JSON report is always
    a list with one object per input, one input or many (a script reads one shape); --check
    ends with :func:`check_summary`'s line."""
    render = TEXT[kind]
    results = []
    would_change = failed = stuck = 0
    for result in job:
        results.append(result)
        if not result.ok:
            print_error(result.error)
            failed += 1
            continue
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
        total = len(results)
        sys.stdout.write(check_summary(total, would_change, failed, stuck) + "\n")
    return results
