"""``specfmt rules`` and ``specfmt explain``: the rule registry for people and machines."""

from __future__ import annotations

import json

import typer

from spec_format.cli.common import handle_errors, stdout


@handle_errors
def rules_command(
    as_json: bool = typer.Option(False, "--json", help="Print the registry as JSON."),
) -> None:
    """List every rule with its id, layer and severity."""
    from spec_format.rules.explain import record
    from spec_format.rules.registry import RULES

    if as_json:
        json.dump([record(r) for r in RULES], stdout(), indent=2)
        stdout().write("\n")
        return
    from rich.table import Table
    from rich.text import Text

    from spec_format.cli.common import print_rich

    rows = [(r.id, r.name, r.layer.value, r.severity.value, r.summary()) for r in RULES]
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
    as_json: bool = typer.Option(False, "--json", help="Print the explanation as JSON."),
) -> None:
    """Explain one rule: what it checks, why, and how to fix a finding."""
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
        f"({rule.layer.value}, {rule.severity.value}; {rule.status.value}, since format "
        f"{rule.since})",
        f"{rule.id} {rule.name}",
        stream=stdout(),
        label_style="bold",
    )
    if not _isatty(stdout()):  # piped: the page's Markdown as written
        stdout().write("\n" + rule.doc.rstrip("\n") + "\n")
        return
    print_rich(Markdown(rule.doc))


def _isatty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
