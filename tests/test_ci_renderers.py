"""`--format github` and `--format sarif`: each checked against its format's expectations."""

from __future__ import annotations

import io
import json
import re

import pytest
from jsonschema import Draft4Validator

from spec_format.base.links import rule_doc_url
from spec_format.base.report import FileReport, Finding, Report, Severity
from spec_format.render import RENDERERS
from spec_format.render.github import render_github
from spec_format.render.sarif import render_sarif, sarif_log
from spec_format.rules import registry
from tests.common import EXAMPLES, INVALID, ROOT, load_case

SARIF_SCHEMA = json.loads((ROOT / "tests" / "data" / "sarif-2.1.0-rtm.5.json").read_text())


def _report() -> Report:
    fr = FileReport(path="drafts/a", model_type="eagle3", format_version="0.9")
    fr.findings = [
        Finding(
            "S101",
            "required-property-missing",
            Severity.ERROR,
            "/speculators_config: required key 'speculators_config' is missing",
            "drafts/a/config.json",
            pointer="/speculators_config",
            line=1,
            column=1,
        ),
        Finding(
            "C001",
            "implicit-default-disagreement",
            Severity.WARNING,
            "norm_before_residual is absent: 100% of readers, a:b, c\nnext line",
            "drafts/a/config.json",
            pointer="/norm_before_residual",
        ),
        Finding(
            "C009",
            "obsolete-key",
            Severity.INFO,
            "has_no_defaults_at_init is noise",
            "drafts/a/config.json",
            pointer="/has_no_defaults_at_init",
            line=9,
            column=3,
        ),
    ]
    unreadable = FileReport(path="drafts/b,c", unreadable=True)
    unreadable.findings = [
        Finding(
            "I006",
            "invalid-json",
            Severity.ERROR,
            "not valid JSON",
            "drafts/b,c/config.json",
            line=2,
            column=40,
        )
    ]
    return Report(files=[fr, unreadable])


def _render(fn, report, **kw) -> str:
    out = io.StringIO()
    fn(report, out, **kw)
    return out.getvalue()


def test_both_formats_are_registered():
    assert {"github", "sarif"} <= set(RENDERERS)


# -- github --------------------------------------------------------------------------------------

COMMAND = re.compile(r"^::(error|warning|notice) ([^:]*)::(.*)$")


def test_github_annotations():
    lines = _render(render_github, _report()).splitlines()
    assert lines == [
        "::error file=drafts/a/config.json,line=1,col=1,title=S101 (required-property-missing)::"
        "/speculators_config: required key 'speculators_config' is missing",
        "::warning file=drafts/a/config.json,title=C001 (implicit-default-disagreement)::"
        "norm_before_residual is absent: 100%25 of readers, a:b, c%0Anext line (/norm_before_residual)",
        "::notice file=drafts/a/config.json,line=9,col=3,title=C009 (obsolete-key)::"
        "has_no_defaults_at_init is noise (/has_no_defaults_at_init)",
        "::error file=drafts/b%2Cc/config.json,line=2,col=40,title=I006 (invalid-json)::not valid JSON",
        "2 inputs checked: 0 ok, 1 failed, 1 unreadable, 2 errors, 1 warning, 1 note",
    ]
    for line in lines[:-1]:
        level, props, _ = COMMAND.match(line).groups()
        keys = [p.split("=", 1)[0] for p in props.split(",")]
        assert keys[0] == "file" and keys[-1] == "title"


def test_github_quiet_keeps_errors_only():
    lines = _render(render_github, _report(), verbosity=0).splitlines()
    assert [line.split(" ", 1)[0] for line in lines[:-1]] == ["::error", "::error"]


def test_github_from_the_cli(cli):
    import tempfile
    from pathlib import Path

    case = next(load_case(p) for p in INVALID if p.parent.name.startswith("S1"))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "config.json"
        path.write_text(json.dumps(case["config"], indent=2))
        result = cli("validate", path, "--format", "github")
    assert result.exit_code == 1
    annotations = [line for line in result.output.splitlines() if line.startswith("::")]
    assert any(a.startswith("::error ") for a in annotations)
    assert all(COMMAND.match(a) for a in annotations)


# -- sarif ---------------------------------------------------------------------------------------


def test_sarif_document_matches_the_sarif_schema():
    log = json.loads(_render(render_sarif, _report()))
    Draft4Validator(SARIF_SCHEMA).validate(log)
    (run,) = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == ["C001", "C009", "I006", "S101"]
    for rule in rules:
        source = registry.get(rule["id"])
        assert rule["name"] == source.name
        assert rule["shortDescription"]["text"] == source.summary()
        assert rule["help"]["text"] == source.doc
        # no helpUri while the docs are published nowhere (spec_format.base.links)
        assert rule.get("helpUri") == rule_doc_url(source.id)
    levels = [(r["ruleId"], r["level"]) for r in run["results"]]
    assert levels == [("S101", "error"), ("C001", "warning"), ("C009", "note"), ("I006", "error")]
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
    first = run["results"][0]["locations"][0]["physicalLocation"]
    assert first == {
        "artifactLocation": {"uri": "drafts/a/config.json"},
        "region": {"startLine": 1, "startColumn": 1},
    }
    assert "region" not in run["results"][1]["locations"][0]["physicalLocation"]


def test_sarif_links_every_rule_to_its_page_where_the_docs_are_served(monkeypatch):
    """The CI guide promises a link from each alert to its rule page: with the site's
    address in SPECFMT_DOCS_URL every rule carries helpUri (and the run informationUri)."""
    monkeypatch.setenv("SPECFMT_DOCS_URL", "https://docs.example.org/specfmt")
    log = json.loads(_render(render_sarif, _report()))
    Draft4Validator(SARIF_SCHEMA).validate(log)
    (run,) = log["runs"]
    assert run["tool"]["driver"]["informationUri"] == "https://docs.example.org/specfmt/"
    for rule in run["tool"]["driver"]["rules"]:
        assert rule["helpUri"] == f"https://docs.example.org/specfmt/rules/{rule['id']}/"
        assert rule["helpUri"] in rule["help"]["markdown"]
    # the page each link names is one the site builds (docs/rules/<ID>.md -> rules/<ID>/)
    for rule in run["tool"]["driver"]["rules"]:
        assert (ROOT / "docs" / "rules" / f"{rule['id']}.md").is_file()
    monkeypatch.delenv("SPECFMT_DOCS_URL")
    bare = json.loads(_render(render_sarif, _report()))["runs"][0]["tool"]["driver"]
    assert "informationUri" not in bare and all("helpUri" not in r for r in bare["rules"])


def test_sarif_of_a_clean_run_is_valid_and_empty():
    log = sarif_log(Report(files=[FileReport(path="x")]))
    Draft4Validator(SARIF_SCHEMA).validate(log)
    assert log["runs"][0]["results"] == [] and log["runs"][0]["tool"]["driver"]["rules"] == []


def test_sarif_from_the_cli_on_every_negative_case(cli, tmp_path):
    paths = []
    for i, case_path in enumerate(INVALID):
        folder = tmp_path / f"{i:03d}"
        folder.mkdir()
        (folder / "config.json").write_text(json.dumps(load_case(case_path)["config"], indent=1))
        paths.append(folder)
    result = cli("validate", *paths, *EXAMPLES, "--format", "sarif")
    assert result.exit_code == 1
    log = json.loads(result.output)
    Draft4Validator(SARIF_SCHEMA).validate(log)
    run = log["runs"][0]
    fired = {r["ruleId"] for r in run["results"]}
    assert fired == {r["id"] for r in run["tool"]["driver"]["rules"]}
    # cases that need options (--engine) are run with them by tests/test_fixtures.py
    plain = {p.parent.name for p in INVALID if not load_case(p).get("options")}
    assert plain <= fired
    assert all(
        r["locations"][0]["physicalLocation"].get("region", {}).get("startLine", 1) >= 1
        for r in run["results"]
    )


@pytest.mark.parametrize("fmt", ["github", "sarif"])
def test_paths_inside_the_working_directory_are_relative(fmt, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    report = Report(
        files=[
            FileReport(
                path="x",
                findings=[
                    Finding(
                        "S001",
                        "missing-model-type",
                        Severity.ERROR,
                        "m",
                        str(tmp_path / "d" / "config.json"),
                        pointer="",
                    )
                ],
            )
        ]
    )
    text = _render(RENDERERS[fmt], report)
    assert "d/config.json" in text and str(tmp_path) not in text
