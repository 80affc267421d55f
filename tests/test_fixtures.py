"""The fixture matrix: every bundled example passes, every negative case fails as expected.

Negative cases live in tests/fixtures/invalid/<RULE-ID>/<case>.json; each names the real
report it reproduces. A new case is a new file.
"""

from __future__ import annotations

import pytest

from spec_format.report import Severity
from spec_format.rules import registry
from spec_format.rules.base import Profile
from spec_format.validation import ValidateOptions, validate, validate_config
from tests.common import EXAMPLES, INVALID, VALID, load_case


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
@pytest.mark.parametrize("profile", [Profile.CURRENT, Profile.LEGACY])
def test_examples_have_no_errors(example, profile):
    report = validate([example], ValidateOptions(profile=profile))
    errors = [f for f in report.files[0].findings if f.severity is Severity.ERROR]
    assert not errors, [f"{f.rule} {f.message}" for f in errors]
    assert report.exit_code == 0


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_valid_fixtures_have_no_errors(path):
    report = validate([path])
    assert report.exit_code == 0, report.to_dict()


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_strict_profile_turns_warnings_into_errors(example):
    current = validate([example]).files[0]
    strict = validate([example], ValidateOptions(profile=Profile.STRICT)).files[0]
    warned = {f.rule for f in current.findings if f.severity is Severity.WARNING}
    failed = {f.rule for f in strict.findings if f.severity is Severity.ERROR}
    assert warned <= failed
    assert (strict.status.value == "fail") == bool(warned)


@pytest.mark.parametrize("path", INVALID, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_invalid_fixture_reports_its_rules(path):
    case = load_case(path)
    assert path.parent.name in case["expect"], "a case lives in the folder of a rule it expects"
    options = ValidateOptions(**case.get("options", {}))
    report = validate_config(case["config"], options)
    found = {f.rule for f in report.findings}
    missing = set(case["expect"]) - found
    assert not missing, f"{case['description']}: expected {missing}, got {sorted(found)}"
    for f in report.findings:
        if f.rule in case["expect"]:
            assert f.message and f.pointer is not None


def test_every_checkable_rule_has_a_negative_fixture():
    covered = {p.parent.name for p in INVALID}
    # input rules are exercised with crafted bytes in test_jsonload / test_cli; header,
    # weights, data and verifier rules need checkpoints and verifiers, built by the tests in
    # tests/weights (which has the same coverage check for them); rewrite (R) rules come from
    # migrate and fix: tests/test_registry_contract.py runs the documented example of each
    needed = {r.id for r in registry.RULES if r.id[0] not in "IHWDVR"}
    needed -= {"S005"}  # needs an older format version; see tests/test_cli.py
    assert needed <= covered, sorted(needed - covered)
