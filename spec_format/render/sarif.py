"""``--format sarif``: a SARIF 2.1.0 log for code scanning (GitHub, GitLab, IDE viewers).

One run; ``tool.driver.rules`` describes every rule that produced a result, built from the
rule registry (summary, "What it checks", the whole explanation as help, and the rule's doc
page as ``helpUri`` where the docs site is served: ``SPECFMT_DOCS_URL``, see
spec_format.base.links), sorted by id so the
output is stable. Each finding is a result with the
rule's effective level (profiles change severities), the message, and the file position when
known. Columns count Unicode code points, which the run declares in ``columnKind``.
"""

from __future__ import annotations

from typing import Any, TextIO

from spec_format import __version__
from spec_format.base.jsonout import dump
from spec_format.base.links import docs_url, rule_doc_url
from spec_format.base.report import Finding, Report, Severity
from spec_format.base.wording import severity_word
from spec_format.render.paths import display_path
from spec_format.rules import registry
from spec_format.rules.base import Rule

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"

_LEVEL = {s: severity_word(s, "sarif") for s in Severity}


def rule_descriptor(rule: type[Rule]) -> dict[str, Any]:
    """The ``reportingDescriptor`` of one rule."""
    checks = rule.section("What it checks") or rule.summary()
    descriptor: dict[str, Any] = {
        "id": rule.id,
        "name": rule.name,
        "shortDescription": {"text": rule.summary()},
        "fullDescription": {"text": " ".join(checks.split())},
        "help": {"text": rule.doc, "markdown": rule.doc},
        "defaultConfiguration": {"level": _LEVEL[rule.severity]},
        "properties": {
            "tags": [rule.layer.value],
            "layer": rule.layer.value,
            "since": rule.since,
        },
    }
    url = rule_doc_url(rule.id)
    if url:
        descriptor["helpUri"] = url
        descriptor["help"]["markdown"] += f"\n\n[Documentation of {rule.id}]({url})"
    if rule.references:
        descriptor["properties"]["references"] = list(rule.references)
    return descriptor


def _location(finding: Finding) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": {"uri": display_path(finding.file)}}
    if finding.line:
        region: dict[str, Any] = {"startLine": finding.line}
        if finding.column:
            region["startColumn"] = finding.column
        physical["region"] = region
    return {"physicalLocation": physical}


def _result(finding: Finding, index: int) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": finding.rule,
        "ruleIndex": index,
        "level": _LEVEL[finding.severity],
        "message": {"text": finding.message},
        "locations": [_location(finding)],
    }
    props = {
        k: v for k, v in (("pointer", finding.pointer), ("tensor", finding.tensor)) if v is not None
    }
    if props:
        result["properties"] = props
    return result


def sarif_log(report: Report, verbosity: int = 1) -> dict[str, Any]:
    """The SARIF document for a report (verbosity 0 keeps only errors)."""
    findings = [
        f
        for fr in report.files
        for f in fr.sorted_findings()
        if verbosity > 0 or f.severity is Severity.ERROR
    ]
    fired = sorted({f.rule for f in findings})
    rules = [rule_descriptor(registry.get(rule_id)) for rule_id in fired]
    index = {rule_id: i for i, rule_id in enumerate(fired)}
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "specfmt",
                "version": __version__,
                "semanticVersion": __version__,
                "rules": rules,
            }
        },
        "invocations": [{"executionSuccessful": True, "exitCode": report.exit_code}],
        "columnKind": "unicodeCodePoints",
        "results": [_result(f, index[f.rule]) for f in findings],
    }
    if docs_url():
        run["tool"]["driver"]["informationUri"] = docs_url()
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}


def render_sarif(
    report: Report, stream: TextIO, *, color: bool | None = None, verbosity: int = 1
) -> None:
    dump(sarif_log(report, verbosity), stream, indent=2)
    stream.write("\n")
