"""Renderers on hand-built reports: no CLI, no validation."""

from __future__ import annotations

import io
import json

from spec_format.base.report import FileReport, Finding, Report, Severity
from spec_format.render import RENDERERS, render
from spec_format.render.text import render_text


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
    return Report(files=[ok, bad, broken], notes=["N001 verifier checks skipped"])


def test_text_lists_findings_errors_first_per_file_and_a_summary():
    out = io.StringIO()
    render(_report(), "text", out, color=False)
    text = out.getvalue()
    lines = text.splitlines()
    assert lines[0] == "fail b/: dflash, format 0.9 (inferred)"  # what matters first
    assert lines.index("ok a/: eagle3, format 0.9 (declared)") > lines.index(
        "unreadable c/config.json"
    )
    assert "b/config.json:12:17: error S103 0 must be >= 1" in lines  # no repeated pointer
    assert lines.index("b/config.json:12:17: error S103 0 must be >= 1") < next(
        i for i, line in enumerate(lines) if "X003" in line
    )
    assert "c/config.json:1:2: error I006 not valid JSON" in lines  # location shown once
    assert "note N001 verifier checks skipped" in lines
    assert (
        lines[-1] == "3 inputs checked: 1 ok, 1 failed, 1 unreadable, 2 errors, 2 warnings, 0 notes"
    )
    assert "\x1b[" not in text


def test_message_parts_headline_why_help():
    from spec_format.render.text import split_message

    assert split_message(
        "verifier.architectures is empty, so no reader can check the target (x; y); fill it "
        "from the verifier's config.json, for example with `specfmt migrate --verifier DIR`"
    ) == (
        "verifier.architectures is empty",
        "no reader can check the target (x; y)",
        "fill it from the verifier's config.json, for example with `specfmt migrate "
        "--verifier DIR`",
    )
    assert split_message(
        "a is a field up to 0.6; no reader uses it; `specfmt migrate` drops it"
    ) == (
        "a is a field up to 0.6",
        "no reader uses it",
        "`specfmt migrate` drops it",
    )
    assert split_message("converted by 0.2.0: it lost a rename. Re-convert the original") == (
        "converted by 0.2.0: it lost a rename",
        "",
        "Re-convert the original",
    )
    assert split_message("ids start at 1; if these are z-lab ids, add 1 to each") == (
        "ids start at 1",
        "",
        "if these are z-lab ids, add 1 to each",
    )
    assert split_message("a: b. So c. It d; e. Re-train it") == (
        "a: b",
        "So c. It d; e.",
        "Re-train it",
    )
    assert split_message(
        "w holds 1 NaN value; NaN marks lost weights: load them, or re-export"
    ) == (
        "w holds 1 NaN value",
        "NaN marks lost weights",
        "load them, or re-export",
    )
    assert split_message("0 must be >= 1") == ("0 must be >= 1", "", "")


def test_wrap_breaks_between_words_with_a_hanging_indent():
    from spec_format.render.text import wrap

    words = "alpha beta gamma delta epsilon zeta eta theta"
    lines = ["".join(t for t, _ in line) for line in wrap([("  help: ", ""), (words, "")], 24, 8)]
    assert lines == ["  help: alpha beta gamma", "        delta epsilon", "        zeta eta theta"]
    long = "x" * 40
    lines = ["".join(t for t, _ in line) for line in wrap([(f"a {long} b", "")], 20, 4)]
    assert lines == ["a", f"    {long}", "    b"]  # a word longer than a line stays whole


def test_text_wraps_to_the_given_width_and_styles_code_only_with_colour():
    report = Report(files=[FileReport(path="a/", model_type="eagle3")])
    report.files[0].findings.append(
        Finding(
            "M004",
            "older-format",
            Severity.INFO,
            "format 0.5 is older than 0.9; `specfmt migrate --to 0.9` converts it and lists "
            "every change",
            "a/config.json",
            pointer="/speculators_version",
            line=3,
            column=4,
        )
    )
    plain = io.StringIO()
    render_text(report, plain, color=False, width=40)
    assert plain.getvalue().splitlines()[1:4] == [
        "a/config.json:3:4: note M004 format 0.5",
        "    is older than 0.9",
        "  help: `specfmt migrate --to 0.9`",
    ]
    coloured = io.StringIO()
    render_text(report, coloured, color=True, width=0)
    assert "`" not in coloured.getvalue() and "specfmt migrate --to 0.9" in coloured.getvalue()


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


def test_json_stream_writes_the_report_document_files_first():
    """The streamed document is Report.to_dict() with ``files`` first, laid out as
    json.dumps(indent=2) lays it out, for one input, several and none."""
    from spec_format.base.jsonout import dumps

    for report in (_report(), Report(), Report(files=_report().files[:1])):
        expected = report.to_dict()
        expected = {"files": expected.pop("files"), **expected}
        out = io.StringIO()
        render(report, "json", out)
        assert out.getvalue() == dumps(expected, indent=2) + "\n"


def test_json_stream_stopped_part_way_is_still_a_json_document():
    from spec_format.base.report import Tally
    from spec_format.render.json_out import JsonStream

    out, tally = io.StringIO(), Tally()
    stream = JsonStream(out)
    first = _report().files[1]
    stream.file(first)
    tally.add(first)
    stream.finish([], tally, interrupted=True)
    stream.finish([], tally)  # a second finish writes nothing
    doc = json.loads(out.getvalue())
    assert doc["interrupted"] is True and doc["status"] == "fail"
    assert [f["path"] for f in doc["files"]] == [first.path]


def test_every_registered_renderer_handles_an_empty_report():
    for name in RENDERERS:
        out = io.StringIO()
        render(Report(), name, out, color=False)
        assert out.getvalue()
