"""The rule registry: stable, unique ids; complete metadata; page texts in fixed sections."""

from __future__ import annotations

import inspect

import pytest

from spec_format.base.report import Severity
from spec_format.rules import registry
from spec_format.rules.base import DOC_SECTIONS, LAYER_PREFIX, Layer, Rule
from tests.common import ROOT


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


def test_docstrings_are_one_statement_and_every_page_text_has_its_rule():
    for rule in registry.RULES:
        assert "\n\n" not in inspect.cleandoc(rule.__doc__), (
            f"{rule.id}: the docstring is the one-line statement; the sections go in "
            f"spec_format/rules/docs/{rule.id}.md"
        )
    pages = {p.stem for p in (ROOT / "spec_format" / "rules" / "docs").glob("*.md")}
    assert pages == set(registry.BY_ID), "a page text without a rule, or a rule without one"


def test_a_rule_without_a_page_text_is_refused_when_documented():
    class Undocumented(Rule):
        """Says nothing useful."""

        id = "X999"
        name = "undocumented"
        layer = Layer.CROSS_FIELD
        severity = Severity.ERROR
        since = "0.1.0"

        def check(self, ctx):
            return ()

    with pytest.raises(TypeError, match="no page text: write spec_format/rules/docs/X999.md"):
        Undocumented.summary()


#: a well-formed rule class body; each case below breaks one thing
_WELL_FORMED = {
    "__doc__": "X.",
    "id": "X998",
    "name": "malformed",
    "layer": Layer.CROSS_FIELD,
    "severity": Severity.ERROR,
    "since": "0.1.0",
    "check": lambda self, ctx: (),
}


@pytest.mark.parametrize(
    ("broken", "error"),
    [
        ({"__doc__": None}, "no docstring"),
        ({"layer": Layer.CONSUMER}, "must be CNNN"),
        ({"since": None}, "since"),  # since is set on the rule class itself
        ({"name": "Not_Kebab"}, "kebab-case"),
    ],
    ids=["no-docstring", "id-of-another-layer", "no-own-since", "name-not-kebab-case"],
)
def test_a_malformed_rule_is_rejected_at_import(broken, error):
    body = {k: v for k, v in {**_WELL_FORMED, **broken}.items() if v is not None or k == "__doc__"}
    with pytest.raises(TypeError, match=error):
        type("Malformed", (Rule,), body)


def test_lookup_follows_redirects(monkeypatch):
    monkeypatch.setitem(registry.REDIRECTS, "X900", "X001")
    assert registry.get("x900") is registry.BY_ID["X001"]
    monkeypatch.setitem(registry.REDIRECTS, "X901", None)
    with pytest.raises(KeyError):
        registry.get("X901")
