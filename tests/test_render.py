"""Renderers on hand-built reports: no CLI, no validation."""

from __future__ import annotations

import io
import json

from spec_format.render import RENDERERS, render
from spec_format.report import FileReport, Finding, Report, Severity


def _report() -> Report:
    ok = FileReport(path="a/", model_type="eagle3", format_version="0.9", version_source="declared")
    ok.findings.append(
        Finding(
            "C001",
            "implicit-default-disagreement",
            Severity.WARNING,
            "norm_before_residual is absent",
            "a/config.json",
            pointer="/norm_before_residual",
            line=1,
            column=1,
        )
    )
    bad = FileReport(
        path="b/", model_type="dflash", format_version="0.9", version_source="inferred"
    )
    bad.findings += [
        Finding(
            "X003",
            "speculative-tokens-block-mismatch",
            Severity.WARNING,
            "tokens 8 vs block 8",
            "b/config.json",
            pointer="/speculators_config/proposal_methods/0/speculative_tokens",
            line=30,
            column=31,
        ),
        Finding(
            "S103",
            "value-out-of-range",
            Severity.ERROR,
            "0 must be >= 1",
            "b/config.json",
            pointer="/block_size",
            line=12,
            column=17,
        ),
    ]
    broken = FileReport(path="c/config.json", unreadable=True)
    broken.findings.append(
        Finding(
            "I006",
            "invalid-json",
            Severity.ERROR,
            "c/config.json:1:2: not valid JSON",
            "c/config.json",
            line=1,
            column=2,
        )
    )
    return Report(files=[ok, bad, broken], notes=["verifier checks skipped"])


def test_text_lists_findings_errors_first_per_file_and_a_summary():
    out = io.StringIO()
    render(_report(), "text", out, color=False)
    text = out.getvalue()
    lines = text.splitlines()
    assert lines[0] == "ok a/ eagle3, format 0.9 (declared)"
    assert "  b/config.json:12:17: error S103 0 must be >= 1 (/block_size)" in lines
    assert lines.index("  b/config.json:12:17: error S103 0 must be >= 1 (/block_size)") < next(
        i for i, line in enumerate(lines) if "X003" in line
    )
    assert "note: verifier checks skipped" in lines
    assert (
        lines[-1] == "3 inputs checked: 1 ok, 1 failed, 1 unreadable, 2 errors, 2 warnings, 0 notes"
    )
    assert "\x1b[" not in text


def test_text_quiet_shows_only_errors():
    out = io.StringIO()
    render(_report(), "text", out, color=False, verbosity=0)
    assert "C001" not in out.getvalue() and "S103" in out.getvalue() and "I006" in out.getvalue()


def test_text_colour_when_forced():
    out = io.StringIO()
    render(_report(), "text", out, color=True)
    assert "\x1b[" in out.getvalue()


def test_json_document_shape():
    out = io.StringIO()
    render(_report(), "json", out)
    doc = json.loads(out.getvalue())
    assert doc["status"] == "fail" and doc["exit_code"] == 3
    assert doc["counts"] == {"error": 2, "warning": 2, "info": 0}
    assert [f["status"] for f in doc["files"]] == ["ok", "fail", "unreadable"]
    first = doc["files"][1]["findings"][0]
    assert first == {
        "rule": "S103",
        "name": "value-out-of-range",
        "severity": "error",
        "message": "0 must be >= 1",
        "file": "b/config.json",
        "pointer": "/block_size",
        "line": 12,
        "column": 17,
    }


def test_every_registered_renderer_handles_an_empty_report():
    for name in RENDERERS:
        out = io.StringIO()
        render(Report(), name, out, color=False)
        assert out.getvalue()
