"""``specfmt rules`` and ``specfmt explain``: the rule registry for people and machines."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import typer

from spec_format.base.errors import UsageError
from spec_format.base.wording import severity_word
from spec_format.cli.common import ReportFormat, format_option, handle_errors, stdout

if TYPE_CHECKING:
    from spec_format.rules import registry
    from spec_format.rules.base import Rule


def _registry():
    """The rule registry, imported when a command runs (it imports every rule module)."""
    from spec_format.rules import registry

    return registry


def rule_record(rule: type[Rule]) -> dict:
    return {
        "id": rule.id,
        "name": rule.name,
        "layer": rule.layer.value,
        "severity": rule.severity.value,
        "legacy_severity": (rule.legacy_severity or rule.severity).value,
        "status": rule.status.value,
        "since": rule.since,
        "applies_to": list(rule.applies_to),
        "versions": rule.versions,
        "requires": sorted(rule.requires),
        "summary": rule.summary(),
        "references": list(rule.references),
        "explanation": rule.doc,
    }


@handle_errors
def rules_command(
    selectors: list[str] = typer.Argument(
        None,
        help="Only these rules: ids (C001), prefixes (C: every consumer rule, C00: C001-C009) "
        "or layer names (consumer), as --select takes them. Default: every rule.",
        show_default=False,
    ),
    output_format: str = format_option(ReportFormat, "text", "", "Output format."),
    as_json: bool = typer.Option(False, "--json", hidden=True),  # the old spelling of -f json
) -> None:
    """List the rules with their id, layer and severity."""
    rules = _selected(selectors or [])
    if as_json or output_format == "json":
        json.dump([rule_record(r) for r in rules], stdout(), indent=2)
        stdout().write("\n")
        return
    from rich.table import Table
    from rich.text import Text

    from spec_format.cli.common import print_rich

    rows = [(r.id, r.name, r.layer.value, severity_word(r.severity), r.summary()) for r in rules]
    if not _isatty(stdout()):  # piped: one rule per line, columns aligned, nothing padded
        widths = [max(len(row[i]) for row in rows) for i in range(4)]
        for row in rows:
            cells = [c.ljust(w) for c, w in zip(row[:4], widths, strict=True)]
            stdout().write("  ".join([*cells, row[4]]) + "\n")
        return
    from spec_format.render.text import terminal_width

    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    if terminal_width(stdout()) < sum(widths) + 8 + 40:  # too narrow for a summary column
        from spec_format.cli.common import print_text

        print_text(  # each rule on one line, its summary below it, wrapped between words
            "\n".join(
                f"{'  '.join(c.ljust(w) for c, w in zip(row[:4], widths, strict=True))}"
                f"\n      {row[4]}"
                for row in rows
            )
        )
        return
    table = Table("id", "name", "layer", "severity", "summary", box=None, pad_edge=False)
    for row in rows:  # Text cells: a summary's [brackets] are text, not markup
        table.add_row(*map(Text, row))
    print_rich(table)


@handle_errors
def explain_command(
    rule_id: str = typer.Argument(..., help="A rule id such as C001 (or its name)."),
    output_format: str = format_option(ReportFormat, "text", "", "Output format."),
    as_json: bool = typer.Option(False, "--json", hidden=True),  # the old spelling of -f json
) -> None:
    """Explain one rule: what it checks, why, and how to fix a finding."""
    as_json = as_json or output_format == "json"
    from spec_format.base.notes import NOTES

    note = NOTES.get(rule_id.upper()) or next(
        (n for n in NOTES.values() if n.name == rule_id), None
    )
    if note is not None:  # a run note (N001...): selected and ignored like a rule
        if as_json:
            json.dump({**note._asdict(), "kind": "run note"}, stdout(), indent=2)
            stdout().write("\n")
        else:
            from spec_format.cli.common import print_text

            print_text(f"{note.id} {note.name} (run note)\n\n{note.doc}")
        return
    removed = _removed(rule_id)
    rule = _lookup(removed.redirect if removed and removed.redirect else rule_id, removed)
    if as_json:
        record = rule_record(rule) if rule else {}
        if removed:
            record = {
                "id": removed.id,
                "name": removed.name,
                "status": "removed",
                "since": removed.since,
                "removed_in": removed.removed_in,
                "why": removed.why,
                "redirect": removed.redirect,
                "now": record or None,
            }
        json.dump(record, stdout(), indent=2)
        stdout().write("\n")
        return
    from rich.markdown import Markdown

    from spec_format.cli.common import print_error, print_rich

    if removed:
        now = f"; it was replaced by {removed.redirect}" if removed.redirect else ""
        print_error(
            f"was removed in specfmt {removed.removed_in}: {removed.why}{now}",
            f"{removed.id} {removed.name}",
            stream=stdout(),
            label_style="bold",
        )
        if rule is None:
            return
        stdout().write("\n")
    print_error(
        f"({rule.layer.value}, {severity_word(rule.severity)}; {rule.status.value}, since format "
        f"{rule.since})",
        f"{rule.id} {rule.name}",
        stream=stdout(),
        label_style="bold",
    )
    if not _isatty(stdout()):  # piped: the page's Markdown as written
        stdout().write("\n" + rule.doc.rstrip("\n") + "\n")
        return
    print_rich(Markdown(rule.doc))


def _selected(selectors: list[str]) -> list[type[Rule]]:
    """The rules ``selectors`` name, in registry order (run notes are listed by explain)."""
    registry = _registry()
    if not selectors:
        return list(registry.RULES)
    layers = {layer.value: prefix for layer, prefix in registry.LAYER_PREFIX.items()}
    ids = registry.expand([layers.get(s.lower(), s) for s in selectors], "rules")
    return [r for r in registry.RULES if r.id in ids]


def _isatty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _removed(rule_id: str) -> registry.Removed | None:
    try:
        return _registry().entry(rule_id).removed
    except KeyError:
        return None


def _lookup(rule_id: str, removed: registry.Removed | None = None) -> type[Rule] | None:
    try:
        return _registry().get(rule_id)
    except KeyError:
        if removed is not None:
            return None
        by_name = {r.name: r for r in _registry().RULES}
        if rule_id in by_name:
            return by_name[rule_id]
        raise UsageError(f"unknown rule {rule_id!r}; `specfmt rules` lists the known ids") from None
