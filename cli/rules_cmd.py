"""``specfmt rules`` and ``specfmt explain``: the rule registry for people and machines."""

from __future__ import annotations

import json

import typer

from spec_format.base.wording import severity_word
from spec_format.cli.common import ReportFormat, format_option, handle_errors, stdout


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
    from spec_format.rules.explain import record

    rules = _selected(selectors or [])
    if as_json or output_format == "json":
        json.dump([record(r) for r in rules], stdout(), indent=2)
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
    from spec_format.rules.explain import explain

    found = explain(rule_id)
    if as_json:
        json.dump(found.to_dict(), stdout(), indent=2)
        stdout().write("\n")
        return
    note, rule, removed = found.note, found.rule, found.removed
    if note is not None:  # a run note (N001...): selected and ignored like a rule
        from spec_format.cli.common import print_text

        print_text(f"{note.id} {note.name} (run note)\n\n{note.doc}")
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


def _selected(selectors: list[str]) -> list:
    """The rules ``selectors`` name, in registry order (run notes are listed by explain)."""
    from spec_format.rules import registry

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
