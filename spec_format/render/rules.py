"""``specfmt rules`` and ``specfmt explain`` as text: the rule table and one rule's page
(:mod:`spec_format.rules.explain` gives them as values; ``-f json`` prints those)."""

from __future__ import annotations

from typing import Any

from spec_format.base.wording import severity_word
from spec_format.render.terminal import print_error, print_rich, print_text
from spec_format.render.text import isatty, terminal_width


def rules_table(rules: list[Any], out: Any) -> None:
    """One rule per line: id, name, layer, severity, summary. Piped: columns aligned,
    nothing padded; on a terminal too narrow for a summary column, the summary below each
    rule, wrapped between words; else a table."""
    rows = [(r.id, r.name, r.layer.value, severity_word(r.severity), r.summary()) for r in rules]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    if not isatty(out):
        for row in rows:
            cells = [c.ljust(w) for c, w in zip(row[:4], widths, strict=True)]
            out.write("  ".join([*cells, row[4]]) + "\n")
        return
    if terminal_width(out) < sum(widths) + 8 + 40:  # too narrow for a summary column
        print_text(
            "\n".join(
                f"{'  '.join(c.ljust(w) for c, w in zip(row[:4], widths, strict=True))}"
                f"\n      {row[4]}"
                for row in rows
            )
        )
        return
    from rich.table import Table
    from rich.text import Text

    table = Table("id", "name", "layer", "severity", "summary", box=None, pad_edge=False)
    for row in rows:  # Text cells: a summary's [brackets] are text, not markup
        table.add_row(*map(Text, row))
    print_rich(table)


def explained_page(found: Any, out: Any) -> None:
    """One rule (:class:`~spec_format.rules.explain.Explained`): its headline and page (the
    Markdown as written when piped), a removed id's replacement, or a run note."""
    note, rule, removed = found.note, found.rule, found.removed
    if note is not None:  # a run note (N001...): selected and ignored like a rule
        print_text(f"{note.id} {note.name} (run note)\n\n{note.doc}")
        return
    if removed:
        now = f"; it was replaced by {removed.redirect}" if removed.redirect else ""
        print_error(
            f"was removed in specfmt {removed.removed_in}: {removed.why}{now}",
            f"{removed.id} {removed.name}",
            stream=out,
            label_style="bold",
        )
        if rule is None:
            return
        out.write("\n")
    print_error(
        f"({rule.layer.value}, {severity_word(rule.severity)}; {rule.status.value}, since format "
        f"{rule.since})",
        f"{rule.id} {rule.name}",
        stream=out,
        label_style="bold",
    )
    if not isatty(out):  # piped: the page's Markdown as written
        out.write("\n" + rule.doc.rstrip("\n") + "\n")
        return
    from rich.markdown import Markdown

    print_rich(Markdown(rule.doc))
