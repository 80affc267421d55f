"""``specfmt rules`` and ``specfmt explain``: the rule registry for people and machines."""

from __future__ import annotations

import json

import typer

from spec_format.cli.common import escape, handle_errors, stdout
from spec_format.errors import UsageError
from spec_format.rules import registry
from spec_format.rules.base import Rule


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
    as_json: bool = typer.Option(False, "--json", help="Print the registry as JSON."),
) -> None:
    """List every rule with its id, layer and severity."""
    if as_json:
        json.dump([rule_record(r) for r in registry.RULES], stdout(), indent=2)
        stdout().write("\n")
        return
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table("id", "name", "layer", "severity", "summary", box=None, pad_edge=False)
    for r in registry.RULES:  # Text cells: a summary's [brackets] are text, not markup
        table.add_row(*map(Text, (r.id, r.name, r.layer.value, r.severity.value, r.summary())))
    Console(file=stdout(), soft_wrap=False).print(table)


@handle_errors
def explain_command(
    rule_id: str = typer.Argument(..., help="A rule id such as C001 (or its name)."),
    as_json: bool = typer.Option(False, "--json", help="Print the explanation as JSON."),
) -> None:
    """Explain one rule: what it checks, why, and how to fix a finding."""
    from spec_format.notes import NOTES

    note = NOTES.get(rule_id.upper()) or next(
        (n for n in NOTES.values() if n.name == rule_id), None
    )
    if note is not None:  # a run note (N001...): selected and ignored like a rule
        if as_json:
            json.dump({**note._asdict(), "kind": "run note"}, stdout(), indent=2)
            stdout().write("\n")
        else:
            stdout().write(f"{note.id} {note.name} (run note)\n\n{note.doc}\n")
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
    from rich.console import Console
    from rich.markdown import Markdown

    console = Console(file=stdout())
    if removed:
        now = f"; it was replaced by {removed.redirect}" if removed.redirect else ""
        console.print(
            f"[bold]{removed.id} {removed.name}[/bold] was removed in specfmt "
            f"{escape(f'{removed.removed_in}: {removed.why}{now}')}"
        )
        if rule is None:
            return
        console.print()
    console.print(
        f"[bold]{rule.id} {rule.name}[/bold] ({rule.layer.value}, {rule.severity.value}; "
        f"{rule.status.value}, since format {escape(rule.since)})"
    )
    console.print(Markdown(rule.doc))


def _removed(rule_id: str) -> registry.Removed | None:
    try:
        return registry.entry(rule_id).removed
    except KeyError:
        return None


def _lookup(rule_id: str, removed: registry.Removed | None = None) -> type[Rule] | None:
    try:
        return registry.get(rule_id)
    except KeyError:
        if removed is not None:
            return None
        by_name = {r.name: r for r in registry.RULES}
        if rule_id in by_name:
            return by_name[rule_id]
        raise UsageError(f"unknown rule {rule_id!r}; `specfmt rules` lists the known ids") from None
