"""Rule pages from their page texts (spec_format/rules/docs/ID.md), docstrings and registry
metadata, and the rules index."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from docgen.schema_walk import BANNER, _cell
from spec_format.rules import registry
from spec_format.rules.base import DOC_FOLDER, LAYER_PREFIX, Layer, Rule

GITHUB_REF = re.compile(r"\b([A-Za-z0-9][\w.-]*/[\w.-]+)#(\d+)\b")


def _linkify(text: str) -> str:
    return GITHUB_REF.sub(
        lambda m: f"[{m.group(0)}](https://github.com/{m.group(1)}/issues/{m.group(2)})", text
    )


def _cases(root: Path, rule_id: str) -> list[dict[str, Any]]:
    """The rule's cases (``tests/rules/cases/<ID>.json``): what it must flag, leave alone and
    rewrite."""
    path = root / "tests" / "rules" / "cases" / f"{rule_id}.json"
    return json.loads(path.read_text(encoding="utf-8"))["cases"] if path.is_file() else []


def _rel_source(root: Path, rule: type[Rule]) -> str:
    try:
        return Path(rule.source_file).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return Path(rule.source_file).name


def doc_file(rule: type[Rule]) -> str:
    """Where the rule's page text lives, relative to the repository root."""
    return f"spec_format/rules/{DOC_FOLDER}/{rule.id}.md"


def rule_page(root: Path, rule: type[Rule]) -> str:
    severities = {
        "current": rule.severity.value,
        "legacy": (rule.legacy_severity or rule.severity).value,
        "strict": "error" if rule.severity.value == "warning" else rule.severity.value,
    }
    requires = ", ".join(sorted(rule.requires)) or "the config only"
    lines = [
        BANNER.format(source=f"{doc_file(rule)} and {rule.__name__} in {_rel_source(root, rule)}"),
        f"# {rule.id} {rule.name}",
        "",
        rule.summary(),
        "",
        "| Property | Value |",
        "|---|---|",
        f"| Layer | {rule.layer.value} ({LAYER_PREFIX[rule.layer]}) |",
        f"| Severity | {severities['current']} (legacy profile: {severities['legacy']}; strict: "
        f"{severities['strict']}) |",
        f"| Applies to | {', '.join(f'`{t}`' for t in rule.applies_to) or 'every type'} |",
        f"| Format versions | {f'`{rule.versions}`' if rule.versions else 'all'} |",
        f"| Needs | {requires} |",
        f"| Status | {rule.status.value} |",
        f"| Since | format {rule.since} |",
        f"| Source | `{_rel_source(root, rule)}` (`{rule.__name__}`); page text "
        f"`{doc_file(rule)}` |",
        "",
        f"`specfmt explain {rule.id}` prints this page; `--ignore {rule.id}` turns the rule off.",
        "",
    ]
    body = rule.doc.split("\n\n", 1)[1] if "\n\n" in rule.doc else ""
    body = re.sub(r"^## Example$", "## Example (fails)", body, flags=re.M)
    body = re.sub(r"^## Use instead$", "## Use instead (passes)", body, flags=re.M)
    lines.append(_linkify(body.strip()))
    if rule.references and "## References" not in rule.doc:
        lines += ["", "## References", ""]
        lines += [f"- {_linkify(r)}" for r in rule.references]
    cases = _cases(root, rule.id)
    if cases:
        lines += [
            "",
            "## Test cases",
            "",
            f"What the rule must flag (fails), leave alone (passes) and rewrite (fixed), as "
            f"`tests/rules/cases/{rule.id}.json` states it, each from a real report where one "
            "is known:",
            "",
            "| Case | Expect | What | Reproduces |",
            "|---|---|---|---|",
        ]
        verdict = {"fail": "fails", "pass": "passes", "fix": "fixed"}
        for case in cases:
            reproduces = case.get("reproduces", "")
            lines.append(
                f"| `{case['name']}` | {verdict[case['expect']]} | "
                f"{_cell(case['description'])} | "
                f"{_cell(_linkify(reproduces)) if reproduces else '—'} |"
            )
    return "\n".join(lines) + "\n"


def rules_index() -> str:
    lines = [
        BANNER.format(source="spec_format/rules/registry.py"),
        "# Rules",
        "",
        "Every finding names a rule by a stable id; the first letter is its layer (see "
        "[Validate](../guide/validate.md#what-is-checked-layers)). Ids are never reused. "
        "`specfmt rules` prints this list, `specfmt explain ID` one page.",
    ]
    for layer in Layer:
        rules = [r for r in registry.RULES if r.layer is layer]
        if not rules:
            continue
        lines += [
            "",
            f"## {layer.value.capitalize()} ({LAYER_PREFIX[layer]})",
            "",
            "| Id | Name | Severity | Summary |",
            "|---|---|---|---|",
        ]
        for r in rules:
            lines.append(
                f"| [{r.id}]({r.id}.md) | {r.name} | {r.severity.value} | {_cell(r.summary())} |"
            )
    if registry.REMOVED:
        lines += ["", "## Removed ids", "", "| Id | Name | Removed in | Why | Now |"]
        lines.append("|---|---|---|---|---|")
        for gone in sorted(registry.REMOVED, key=lambda r: r.id):
            now = f"[{gone.redirect}]({gone.redirect}.md)" if gone.redirect else "—"
            lines.append(
                f"| {gone.id} | {gone.name} | {gone.removed_in} | {_cell(gone.why)} | {now} |"
            )
    return "\n".join(lines) + "\n"
