"""What ``specfmt rules`` and ``specfmt explain`` say about the registry, as values: one
record per rule, and the lookup of an id or name (a run note, a rule, or a removed id with
the rule that replaced it). The commands only print these."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from spec_format.base.errors import UsageError
from spec_format.base.notes import NOTES
from spec_format.rules import registry
from spec_format.rules.base import Rule


def record(rule: type[Rule]) -> dict[str, Any]:
    """One rule as ``specfmt rules --json`` lists it."""
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


@dataclass(frozen=True)
class Explained:
    """What an id or name stands for: a run note, or a rule, or a removed id (with the rule
    that replaced it, if any)."""

    note: Any = None  # spec_format.base.notes.Note
    rule: type[Rule] | None = None
    removed: registry.Removed | None = None

    def to_dict(self) -> dict[str, Any]:
        """``specfmt explain --json``."""
        if self.note is not None:
            return {**self.note._asdict(), "kind": "run note"}
        now = record(self.rule) if self.rule else {}
        if self.removed is None:
            return now
        gone = self.removed
        return {
            "id": gone.id,
            "name": gone.name,
            "status": "removed",
            "since": gone.since,
            "removed_in": gone.removed_in,
            "why": gone.why,
            "redirect": gone.redirect,
            "now": now or None,
        }


def explain(rule_id: str) -> Explained:
    """Look ``rule_id`` up (an id such as C001, N001, or a name); :class:`UsageError` when
    nothing has it."""
    note = NOTES.get(rule_id.upper()) or next(
        (n for n in NOTES.values() if n.name == rule_id), None
    )
    if note is not None:
        return Explained(note=note)
    try:
        removed = registry.entry(rule_id).removed
    except KeyError:
        removed = None
    wanted = removed.redirect if removed and removed.redirect else rule_id
    try:
        return Explained(rule=registry.get(wanted), removed=removed)
    except KeyError:
        if removed is not None:
            return Explained(removed=removed)
    by_name = {r.name: r for r in registry.RULES}
    if rule_id in by_name:
        return Explained(rule=by_name[rule_id])
    raise UsageError(f"unknown rule {rule_id!r}; `specfmt rules` lists the known ids")


def selected(selectors: list[str]) -> list[type[Rule]]:
    """The rules ``selectors`` name (ids, prefixes, layer names; none: every rule), in
    registry order (run notes are listed by explain)."""
    if not selectors:
        return list(registry.RULES)
    layers = {layer.value: prefix for layer, prefix in registry.LAYER_PREFIX.items()}
    ids = registry.expand([layers.get(s.lower(), s) for s in selectors], "rules")
    return [r for r in registry.RULES if r.id in ids]
