"""A second validator in another language agrees with specfmt's schema layer.

Ajv (strict mode, draft 2020-12 and draft-07) validates the exported schemas against every
positive fixture and every negative fixture, at the format version specfmt detects for the
file. Every positive config and every schema-layer (S1xx) negative case carries a fixed
expectation (pass, fail); for all of them Ajv's verdict must equal what `specfmt validate`
says (see _specfmt_verdicts). A disagreement fails with both verdicts printed.
"""

from __future__ import annotations

import json

import pytest
from conftest import EXAMPLES, INVALID, ROOT, VALID, load_case
from nodetools import require_node, run_node

from spec_format import schemas
from spec_format.validation import ValidateOptions, validate

SCRIPT = "tests/ajv/check-fixtures.mjs"


def _cases(tmp_path):
    """(path Ajv reads, wrapped?, expected validity or None, ValidateOptions, config path)."""
    out = []
    for example in EXAMPLES:
        out.append(
            (example / "config.json", False, True, ValidateOptions(), example / "config.json")
        )
    for path in VALID:
        out.append((path, False, True, ValidateOptions(), path))
    for path in INVALID:
        case = load_case(path)
        schema_layer = any(rule.startswith("S1") for rule in case["expect"])
        # every negative case is compared; only the schema-layer ones must fail in Ajv
        target = tmp_path / path.parent.name / path.stem / "config.json"
        target.parent.mkdir(parents=True)
        target.write_text(json.dumps(case["config"]), encoding="utf-8")
        expected = False if schema_layer else None
        out.append((path, True, expected, ValidateOptions(**case.get("options", {})), target))
    return out


def _specfmt_verdicts(config_path, options):
    """What specfmt's schema layer says, in the terms of the two schemas Ajv checks.

    * the type's own schema: valid unless a JSON Schema rule (S1xx) fired;
    * the version's root schema (``oneOf`` over its types): also invalid when dispatch found
      no type of that version to check against (missing, unknown, third-party, or not in the
      version). A retired type checked at a version that still has it (S003 there) is a
      policy finding, not a schema verdict: its schemas accept it.
    """
    report = validate([config_path], options).files[0]
    schema_findings = [f for f in report.findings if f.rule.startswith("S")]
    keyword = [f for f in schema_findings if f.rule.startswith("S1")]
    has_type = report.model_type in schemas.version_entry(report.format_version).types
    root_valid = not keyword and has_type
    return report, schema_findings, {"root": root_valid, "typed": not keyword}, has_type


def test_ajv_agrees_with_specfmt(tmp_path):
    require_node("ajv")
    cases = _cases(tmp_path)
    manifest, specfmt = [], []
    for ajv_path, wrapped, expected, options, config_path in cases:
        report, findings, verdicts, has_type = _specfmt_verdicts(config_path, options)
        specfmt.append((report, findings, verdicts))
        entry = {"file": str(ajv_path), "wrapped": wrapped, "version": report.format_version}
        if has_type:
            entry["type"] = report.model_type
        if expected is not None:
            entry["expect_valid"] = expected
        manifest.append(entry)
    (tmp_path / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    proc = run_node([SCRIPT, "--manifest", str(tmp_path / "manifest.json"), "--json"])
    assert proc.returncode in (0, 1), proc.stderr
    results = json.loads(proc.stdout)
    assert len(results) == len(cases)

    problems = []
    for (ajv_path, _, expected, _, _), (report, findings, verdicts), result in zip(
        cases, specfmt, results, strict=True
    ):
        ajv = result["verdicts"]
        assert ajv, f"Ajv checked nothing for {ajv_path}"
        # "root"/"typed" (2020-12) and "root_07"/"typed_07" (draft-07)
        for which, v in ajv.items():
            want = verdicts[which.removesuffix("_07")]
            if v["valid"] == want and (expected is None or v["valid"] == expected):
                continue
            shown = "; ".join(f"{f.rule} {f.message}" for f in findings) or "no S finding"
            problems.append(
                f"{ajv_path.relative_to(ROOT)} (format {report.format_version}, "
                f"{report.model_type}):\n"
                f"  Ajv {which}: {'valid' if v['valid'] else 'invalid: ' + '; '.join(v['errors'])}\n"
                f"  specfmt: {'valid' if want else 'invalid'} ({shown})"
                + (
                    ""
                    if expected is None
                    else f"\n  fixture expects: {'valid' if expected else 'invalid'}"
                )
            )
    assert not problems, "Ajv and specfmt disagree:\n" + "\n".join(problems)


def test_standalone_script_passes_on_the_fixtures():
    """`npm run test:ajv` (the script finding fixtures itself) passes on the committed tree."""
    require_node("ajv")
    proc = run_node([SCRIPT])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().endswith("0 failed")


@pytest.mark.parametrize("keyword", ["minimun"])
def test_strict_mode_rejects_unknown_keywords(tmp_path, keyword):
    """The Ajv check is strict: a misspelt keyword in an exported schema fails the run."""
    require_node("ajv")
    import shutil

    copy = tmp_path / "schemas"
    shutil.copytree(ROOT / "generated" / "schemas", copy)
    target = sorted(copy.glob("*/*.schema.json"))[0]
    schema = json.loads(target.read_text(encoding="utf-8"))
    schema["properties"]["speculators_version"] = {keyword: 1}
    target.write_text(json.dumps(schema), encoding="utf-8")
    proc = run_node([SCRIPT, "--schemas", str(copy)])
    assert proc.returncode == 1
    assert "unknown keyword" in proc.stderr
