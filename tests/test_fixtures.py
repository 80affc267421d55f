"""The bundled examples and the valid fixtures pass; the profiles grade them.

What each rule must flag and leave alone is its cases file, tests/rules/cases/<ID>.json,
run by tests/rules/test_rule_cases.py.
"""

from __future__ import annotations

import pytest

from spec_format.base.report import Severity
from spec_format.rules.base import Profile
from spec_format.runner.validation import ValidateOptions, validate
from tests.common import EXAMPLES, VALID


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
