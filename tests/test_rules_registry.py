"""The rule registry: stable, unique ids; complete metadata; docs in fixed sections."""

from __future__ import annotations

import pytest

from spec_format.report import Severity
from spec_format.rules import registry
from spec_format.rules.base import DOC_SECTIONS, LAYER_PREFIX, Layer, Rule


def test_ids_and_names_are_unique():
    ids = [r.id for r in registry.RULES]
    names = [r.name for r in registry.RULES]
    assert len(ids) == len(set(ids))
    assert len(names) == len(set(names))


def test_redirects_never_point_at_live_ids_or_reuse_them():
    for old, new in registry.REDIRECTS.items():
        assert old not in registry.BY_ID, f"{old} is both retired and live"
        assert new is None or new in registry.BY_ID


@pytest.mark.parametrize("rule", registry.RULES, ids=lambda r: r.id)
def test_rule_metadata(rule):
    assert rule.id[0] == LAYER_PREFIX[rule.layer]
    assert isinstance(rule.severity, Severity)
    assert rule.summary() and not rule.summary().startswith("#")
    for section in DOC_SECTIONS:
        assert rule.section(section), f"{rule.id}: empty '{section}'"
    assert rule.source_file.endswith(".py") and rule.source_line > 0


def test_a_rule_without_docs_sections_is_rejected_at_import():
    with pytest.raises(TypeError, match="docstring needs the sections"):

        class Undocumented(Rule):  # noqa: F841
            """Says nothing useful."""

            id = "X999"
            name = "undocumented"
            layer = Layer.CROSS_FIELD
            severity = Severity.ERROR
            since = "0.1.0"

            def check(self, ctx):
                return ()


def test_a_rule_id_must_match_its_layer():
    with pytest.raises(TypeError, match="must be CNNN"):

        class Misfiled(Rule):  # noqa: F841
            """X.

            ## What it checks
            x
            ## Why it matters
            x
            ## Example
            x
            ## Use instead
            x
            """

            id = "X998"
            name = "misfiled"
            layer = Layer.CONSUMER
            severity = Severity.ERROR
            since = "0.1.0"

            def check(self, ctx):
                return ()


def test_lookup_follows_redirects(monkeypatch):
    monkeypatch.setitem(registry.REDIRECTS, "X900", "X001")
    assert registry.get("x900") is registry.BY_ID["X001"]
    monkeypatch.setitem(registry.REDIRECTS, "X901", None)
    with pytest.raises(KeyError):
        registry.get("X901")
