"""``specfmt rules`` and ``specfmt explain``: the rule registry for people and machines
(:mod:`spec_format.rules.explain` looks the rules up, :mod:`spec_format.render.rules`
prints them)."""

from __future__ import annotations

import typer

from spec_format.base.streams import stdout
from spec_format.cli.common import emit, handle_errors
from spec_format.cli.options import ListFormat, OldJson


@handle_errors
def rules_command(
    selectors: list[str] = typer.Argument(
        None,
        help="Only these rules: ids (C001), prefixes (C: every consumer rule, C00: C001-C009) "
        "or layer names (consumer), as --select takes them. Default: every rule.",
        show_default=False,
    ),
    output_format: ListFormat = "text",
    as_json: OldJson = False,
) -> None:
    """List the rules with their id, layer and severity."""
    from spec_format.render.rules import rules_table
    from spec_format.rules.explain import record, selected

    rules = selected(selectors or [])
    if as_json or output_format == "json":
        emit("json", lambda: [record(r) for r in rules])
    else:
        rules_table(rules, stdout())


@handle_errors
def explain_command(
    rule_id: str = typer.Argument(..., help="A rule id such as C001 (or its name)."),
    output_format: ListFormat = "text",
    as_json: OldJson = False,
) -> None:
    """Explain one rule: what it checks, why, and how to fix a finding."""
    from spec_format.render.rules import explained_page
    from spec_format.rules.explain import explain

    found = explain(rule_id)
    if as_json or output_format == "json":
        emit("json", found.to_dict)
    else:
        explained_page(found, stdout())
