"""Hostile and broken JSON: every case is a finding with the right rule, never a traceback."""

from __future__ import annotations

import pytest

from spec_format.runner.validation import validate

GOOD = b'{"speculators_model_type": "eagle3"}'


@pytest.mark.parametrize(
    ("raw", "rule", "exit_code"),
    [
        (b"", "I003", 3),
        (b"   \n", "I003", 3),
        (b'{"a": 1,}', "I006", 3),
        (b"[1, 2]", "I007", 3),
        (b'"text"', "I007", 3),
        (b"\xff\xfe{}", "I004", 3),
        (b'{"a": "caf\xe9"}', "I004", 3),
        (b"[" * 100_000 + b"]" * 100_000, "I008", 3),
        (b'{"a":' * 80 + b"1" + b"}" * 80, "I008", 3),
    ],
    ids=[
        "empty",
        "blank",
        "trailing-comma",
        "array",
        "string",
        "utf16",
        "latin1",
        "deep",
        "deep-objects",
    ],
)
def test_unreadable_inputs(write_config, raw, rule, exit_code):
    path = write_config(raw)
    report = validate([path])
    assert report.exit_code == exit_code
    assert [f.rule for f in report.files[0].findings] == [rule]
    assert report.files[0].status.value == "unreadable"


def test_invalid_json_names_line_and_column(write_config):
    path = write_config(b'{\n  "speculators_model_type": "eagle3",\n  "x": tru\n}')
    finding = validate([path]).files[0].findings[0]
    assert finding.rule == "I006"
    assert (finding.line, finding.column) == (3, 8)
    assert f"{path}:3:8" in finding.message


def test_bom_is_an_error_but_the_rest_is_checked(write_config):
    path = write_config(b"\xef\xbb\xbf" + GOOD)
    fr = validate([path]).files[0]
    rules = [f.rule for f in fr.findings]
    assert "I005" in rules
    assert "S101" in rules  # schema checks still ran on the rest
    assert fr.status.value == "fail"


def test_duplicate_key_is_located(write_config):
    raw = b'{\n "speculators_model_type": "eagle3",\n "norm_before_residual": false,\n "norm_before_residual": true\n}'
    fr = validate([write_config(raw)]).files[0]
    dup = [f for f in fr.findings if f.rule == "I009"]
    assert len(dup) == 1
    assert dup[0].pointer == "/norm_before_residual"
    assert dup[0].line == 4
    assert dup[0].severity.value == "warning"


def test_nan_literal_is_an_error_with_pointer(write_config):
    raw = (
        b'{"speculators_model_type": "eagle3", "speculators_config": {"proposal_methods": '
        b'[{"proposal_type": "greedy", "accept_tolerance": NaN}]}}'
    )
    fr = validate([write_config(raw)]).files[0]
    nan = [f for f in fr.findings if f.rule == "I010"]
    assert nan and nan[0].pointer == "/speculators_config/proposal_methods/0/accept_tolerance"


def test_huge_file_is_refused_without_reading_it(write_config, monkeypatch):
    import spec_format.base.jsonload as jl

    monkeypatch.setattr(jl, "MAX_JSON_BYTES", 64)
    path = write_config(GOOD + b" " * 100)
    fr = validate([path]).files[0]
    assert [f.rule for f in fr.findings] == ["I002"]
    assert "limit" in fr.findings[0].message


def test_one_bad_file_does_not_hide_the_others(write_config, tmp_path):
    bad = write_config(b"{", name="bad")
    from tests.common import EXAMPLES

    report = validate([bad, EXAMPLES[0]])
    assert [f.status.value for f in report.files] == ["unreadable", "ok"]
    assert report.exit_code == 3


def test_a_fifo_named_config_json_is_refused_without_blocking(tmp_path):
    import os

    folder = tmp_path / "ckpt"
    folder.mkdir()
    os.mkfifo(folder / "config.json")
    fr = validate([folder / "config.json"]).files[0]
    assert [f.rule for f in fr.findings] == ["I002"]
    assert "not a regular file" in fr.findings[0].message
