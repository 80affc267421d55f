"""``specfmt rules`` and ``specfmt explain``: the rule registry for people and machines."""

from __future__ import annotations

import json

import typer

from spec_format.cli.common import handle_errors, stdout
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

    table = Table("id", "name", "layer", "severity", "summary", box=None, pad_edge=False)
    for r in registry.RULES:
        table.add_row(r.id, r.name, r.layer.value, r.severity.value, r.summary())
    Console(file=stdout(), soft_wrap=False).print(table)


@handle_errors
def explain_command(
    rule_id: str = typer.Argument(..., help="A rule id such as C001 (or its name)."),
    as_json: bool = typer.Option(False, "--json", help="Print the explanation as JSON."),
) -> None:
    """Explain one rule: what it checks, why, and how to fix a finding."""
    rule = _lookup(rule_id)
    if as_json:
        json.dump(rule_record(rule), stdout(), indent=2)
        stdout().write("\n")
        return
    from rich.console import Console
    from rich.markdown import Markdown

    console = Console(file=stdout())
    console.print(f"[bold]{rule.id} {rule.name}[/bold] ({rule.layer.value}, {rule.severity.value})")
    console.print(Markdown(rule.doc))


def _lookup(rule_id: str) -> type[Rule]:
    try:
        return registry.get(rule_id)
    except KeyError:
        by_name = {r.name: r for r in registry.RULES}
        if rule_id in by_name:
            return by_name[rule_id]
        raise UsageError(f"unknown rule {rule_id!r}; `specfmt rules` lists the known ids") from None
