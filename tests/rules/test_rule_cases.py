"""Every rule's cases, from its file tests/rules/cases/<ID>.json (see tests/rules/README.md).

One parametrised test runs them all: a ``fail`` case must raise the rule (and the rules it
names in ``also``) and a ``pass`` case must not; a ``fix`` case's input must raise it, the
rewrite (``specfmt fix``, or ``migrate``) must write the document the case states, and
``validate`` must then be quiet about the rule. The checks below keep the case files and
the registry in step: a rule without a cases file, or a file of no rule, fails.
"""

from __future__ import annotations

import json

import jsonschema
import pytest

from spec_format.rules import registry
from tests.rules.cases import (
    SCHEMA,
    all_cases,
    case_files,
    edited,
    load_file,
    run,
    validated,
    write_document,
)

CASES = all_cases()


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    """One folder per distinct checkpoint build, shared by the cases of this module."""
    return tmp_path_factory.mktemp("rule-case-builds")


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_rule_case(case, tmp_path, builds, monkeypatch):
    outcome = run(case, tmp_path / "run", builds, monkeypatch)
    check_findings(case, outcome)
    if case.expect == "pass":
        assert case.rule not in outcome.rules, (case.description, outcome.messages[case.rule])
        return
    assert outcome.error is None, f"{case.description}: {outcome.error}"
    if case.expect == "fix":
        engines = {"engines": case.options.get("engines", ())}
        before = validated(write_document(case.config, tmp_path / "before"), engines)
        assert case.rule in before.rules, f"{case.description}: the input does not raise it"
        fixed = case.data["fixed"]
        expected = edited(case.config, fixed.get("set"), fixed.get("unset"))
        assert outcome.document == expected, json.dumps(outcome.document, indent=1)
        after = validated(write_document(outcome.document, tmp_path / "after"), engines)
        assert case.rule not in after.rules, after.messages[case.rule]
        return
    raised = outcome.rules
    assert case.rule in raised, f"{case.description}: {case.rule} not raised; got {sorted(raised)}"
    missing = set(case.data.get("also", [])) - raised
    assert not missing, f"{case.description}: expected {sorted(missing)} too; got {sorted(raised)}"
    texts = case.data.get("message", [])
    for text in [texts] if isinstance(texts, str) else texts:
        assert any(text in m for m in outcome.messages[case.rule]), (text, outcome.messages)


#: findings that depend on which format line is the latest (M004: the config is at an older
#: one): exact in their own rule's cases only, since adding a format version
#: (scripts/new_version.py) gives every case at the former latest line an M004
LATEST_RELATIVE = frozenset({"M004"})


def check_findings(case, outcome) -> None:
    """The case's ``findings`` (exactly these rules, each with its severity), ``severity``
    (the rule's own) and ``without`` (neighbours it must not raise)."""
    got = {rule: "/".join(sev) for rule, sev in outcome.findings.items()}
    if "findings" in case.data:
        stated = dict(case.data["findings"])
        for rule in LATEST_RELATIVE - {case.rule}:
            got.pop(rule, None)
            stated.pop(rule, None)
        assert got == stated, (
            f"{case.description}: findings {got}, the case states {stated}",
            {r: outcome.messages[r] for r in got.keys() ^ stated.keys()},
        )
    if "severity" in case.data:
        assert got.get(case.rule) == case.data["severity"], (case.description, got)
    raised = sorted(set(case.data.get("without", ())) & outcome.rules)
    assert not raised, (f"{case.description}: must not raise {raised}", outcome.messages)


def test_every_rule_has_its_cases_file_and_every_file_names_a_rule():
    names = {p.stem for p in case_files()}
    live = set(registry.BY_ID)
    assert not live - names, (
        f"rules without cases: {sorted(live - names)}; add tests/rules/cases/<ID>.json "
        "(tests/rules/README.md)"
    )
    retired = sorted(names & {r.id for r in registry.REMOVED})
    assert not names - live, f"cases files of no live rule: {sorted(names - live)}" + (
        f" (retired: {retired}; a retired rule keeps its REMOVED entry, not its cases)"
        if retired
        else ""
    )


@pytest.mark.parametrize("path", case_files(), ids=lambda p: p.stem)
def test_a_cases_file_is_well_formed(path):
    jsonschema.validate(json.loads(path.read_text(encoding="utf-8")), _schema())
    rule, cases = load_file(path)
    assert rule == path.stem, f"{path.name} names {rule}"
    kinds = {c.expect for c in cases}
    assert "pass" in kinds and kinds & {"fail", "fix"}, f"{rule}: a failing and a passing case"
    names = [c.name for c in cases]
    assert len(names) == len(set(names)), f"{rule}: two cases of one name"
    for case in cases:
        stated = case.data.get("findings")
        if stated is None:
            continue
        own = stated.get(rule)
        if case.expect != "fix":  # a fix case's findings are the rewrite's problems
            assert (own is None) == (case.expect == "pass"), f"{case.id}: findings, expect"
        assert case.data.get("severity", own) == own, f"{case.id}: severity and findings differ"
        assert not set(case.data.get("also", ())) - stated.keys(), f"{case.id}: also not found"
        assert not set(case.data.get("without", ())) & stated.keys(), f"{case.id}: without"


def test_retired_rules_stay_documented():
    for gone in registry.REMOVED:
        assert registry.entry(gone.id).removed is gone and gone.why


_SCHEMA: dict = {}


def _schema() -> dict:
    if not _SCHEMA:
        _SCHEMA.update(json.loads(SCHEMA.read_text(encoding="utf-8")))
        jsonschema.Draft202012Validator.check_schema(_SCHEMA)
    return _SCHEMA
