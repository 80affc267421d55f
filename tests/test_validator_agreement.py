"""Three independent validators agree with specfmt's schema layer on every fixture.

Ajv (JavaScript, strict mode, with and without its discriminator option),
@hyperjump/json-schema (JavaScript, by a JSON Schema spec author) and jsonschema-rs (Rust)
validate every positive fixture and every negative fixture against the exported schemas
(2020-12 and draft-07, the version's root and the type's own schema), at the format version
specfmt detects for the file. Every positive config and every schema-layer (S1xx) negative
case carries a fixed expectation (pass, fail); for all of them each verdict must equal what
`specfmt validate` says (see _specfmt_verdicts). A disagreement fails naming the fixture,
the validator and both verdicts. The Node validators run once each over all fixtures.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema_rs
import pytest
from nodetools import require_node, run_node

from spec_format.facts import catalog
from spec_format.runner.validation import ValidateOptions, validate
from tests.common import EXAMPLES, INVALID, RELEASES, ROOT, VALID, load_case

SCRIPTS = {
    "ajv": "tests/validators/ajv.mjs",
    "@hyperjump/json-schema": "tests/validators/hyperjump.mjs",
}
SCHEMAS = ROOT / "generated" / "schemas"


def _cases(tmp_path):
    """(path Ajv reads, wrapped?, expected validity or None, ValidateOptions, config path)."""
    out = []
    for example in EXAMPLES:
        out.append(
            (example / "config.json", False, True, ValidateOptions(), example / "config.json")
        )
    for path in VALID + RELEASES:
        out.append((path, False, True, ValidateOptions(), path))
    for path in INVALID:
        case = load_case(path)
        schema_layer = any(rule.startswith("S1") for rule in case["expect"])
        # every negative case is compared; only the schema-layer ones must fail in Ajv
        target = tmp_path / path.parent.name / path.name / "config.json"
        target.parent.mkdir(parents=True)
        target.write_text(json.dumps(case["config"]), encoding="utf-8")
        expected = False if schema_layer else None
        wrapped = target.with_name("case.json")  # what the Node scripts read: {"config": ...}
        wrapped.write_text(json.dumps(case), encoding="utf-8")
        out.append((wrapped, True, expected, ValidateOptions(**case.get("options", {})), target))
    return out


def _specfmt_verdicts(config_path, options):
    """What specfmt's schema layer says, in the terms of the two schemas Ajv checks.

    * the type's own schema: valid unless a JSON Schema rule (S1xx) fired;
    * the version's root schema (dispatching over its types): also invalid when dispatch found
      no type of that version to check against (missing, unknown, third-party, or not in the
      version). A retired type checked at a version that still has it (S003 there) is a
      policy finding, not a schema verdict: its schemas accept it.
    """
    report = validate([config_path], options).files[0]
    schema_findings = [f for f in report.findings if f.rule.startswith("S")]
    keyword = [f for f in schema_findings if f.rule.startswith("S1")]
    has_type = (
        report.model_type
        in catalog.version_entry(report.format_version or catalog.latest_version()).types
    )
    root_valid = not keyword and has_type
    return report, schema_findings, {"root": root_valid, "typed": not keyword}, has_type


def _jsonschema_rs(manifest):
    """jsonschema-rs's verdicts, in the shape the Node scripts print."""
    validators = {}

    def check(version, sub, name, config):
        path = SCHEMAS / version / sub / f"{name}.schema.json"
        if not path.is_file():
            return None
        if path not in validators:
            validators[path] = jsonschema_rs.validator_for(json.loads(path.read_text("utf-8")))
        errors = [
            f"/{'/'.join(map(str, e.instance_path))} {e.message}"
            for e in validators[path].iter_errors(config)
        ]
        return {"valid": not errors, "errors": errors}

    results = []
    for entry in manifest:
        raw = json.loads(Path(entry["file"]).read_text(encoding="utf-8"))
        config = raw["config"] if entry["wrapped"] else raw
        verdicts = {}
        for suffix, sub in (("", ""), ("_07", "draft-07")):
            for which, name in (("root", "speculators"), ("typed", entry.get("type"))):
                v = name and check(entry["version"], sub, name, config)
                if v:
                    verdicts[f"jsonschema-rs/{which}{suffix}"] = v
        results.append({"verdicts": verdicts})
    return results


def test_validators_agree_with_specfmt(tmp_path):
    require_node("ajv", "@hyperjump/json-schema")
    cases = _cases(tmp_path)
    manifest, specfmt = [], []
    for path, wrapped, expected, options, config_path in cases:
        report, findings, verdicts, has_type = _specfmt_verdicts(config_path, options)
        specfmt.append((report, findings, verdicts))
        entry = {
            "file": str(path),
            "wrapped": wrapped,
            "version": report.format_version or catalog.latest_version(),
        }
        if has_type:
            entry["type"] = report.model_type
        if expected is not None:
            entry["expect_valid"] = expected
        manifest.append(entry)
    (tmp_path / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    per_tool = {"jsonschema-rs": _jsonschema_rs(manifest)}
    for tool, script in SCRIPTS.items():
        proc = run_node([script, "--manifest", str(tmp_path / "manifest.json"), "--json"])
        assert proc.returncode in (0, 1), f"{tool}: {proc.stderr}"
        per_tool[tool] = json.loads(proc.stdout)
        assert len(per_tool[tool]) == len(cases), tool

    problems = []
    engines_seen = set()
    for i, (path, _, expected, _, _) in enumerate(cases):
        report, findings, verdicts = specfmt[i]
        for tool, results in per_tool.items():
            checked = results[i]["verdicts"]
            assert checked, f"{tool} checked nothing for {path}"
            # "<engine>/root", "<engine>/typed" (2020-12), "<engine>/root_07", ... (draft-07)
            for key, v in checked.items():
                engine, which = key.split("/")
                engines_seen.add(engine)
                want = verdicts[which.removesuffix("_07")]
                if v["valid"] == want and (expected is None or v["valid"] == expected):
                    continue
                shown = "; ".join(f"{f.rule} {f.message}" for f in findings) or "no S finding"
                got = "valid" if v["valid"] else "invalid: " + "; ".join(v["errors"])
                problems.append(
                    f"{path.relative_to(ROOT)} (format {report.format_version}, "
                    f"{report.model_type}):\n  {engine} {which}: {got}\n"
                    f"  specfmt: {'valid' if want else 'invalid'} ({shown})"
                    + (
                        ""
                        if expected is None
                        else f"\n  fixture expects: {'valid' if expected else 'invalid'}"
                    )
                )
    assert not problems, "validators and specfmt disagree:\n" + "\n".join(problems)
    assert engines_seen == {"ajv", "ajv-discriminator", "hyperjump", "jsonschema-rs"}


@pytest.mark.parametrize("tool", SCRIPTS)
def test_standalone_scripts_pass_on_the_fixtures(tool):
    """`npm run test:validators` (the scripts finding fixtures themselves) passes."""
    require_node("ajv", "@hyperjump/json-schema")
    proc = run_node([SCRIPTS[tool]])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().endswith("0 failed")


@pytest.mark.parametrize("keyword", ["minimun", "discriminator"])
def test_strict_mode_rejects_unknown_keywords(tmp_path, keyword):
    """The Ajv check is strict: a misspelt keyword in an exported schema fails the run, and
    so would an OpenAPI discriminator coming back into the exports."""
    require_node("ajv")
    import shutil

    copy = tmp_path / "schemas"
    shutil.copytree(SCHEMAS, copy)
    target = sorted(copy.glob("*/*.schema.json"))[0]
    schema = json.loads(target.read_text(encoding="utf-8"))
    schema["properties"]["speculators_version"] = {keyword: 1}
    target.write_text(json.dumps(schema), encoding="utf-8")
    proc = run_node([SCRIPTS["ajv"], "--schemas", str(copy)])
    assert proc.returncode == 1
    assert "unknown keyword" in proc.stderr


def test_readme_lists_the_pinned_versions():
    """The README's interop table names each tool with the version that is pinned."""
    import tomllib

    pinned = json.loads((ROOT / "package.json").read_text(encoding="utf-8"))["devDependencies"]
    dev = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    for req in dev["optional-dependencies"]["dev"]:
        name, _, version = req.partition("==")
        if version:
            pinned[name] = version
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    rows = {
        line.split("|")[1].strip(): line.split("|")[2].strip()
        for line in readme.splitlines()
        if line.startswith("| ") and line.count("|") == 4
    }
    tools = {
        "ajv": "Ajv",
        "@hyperjump/json-schema": "@hyperjump/json-schema",
        "jsonschema-rs": "jsonschema-rs",
        "vscode-json-languageservice": "vscode-json-languageservice",
        "typescript": "TypeScript",
        "json-schema-to-typescript": "json-schema-to-typescript",
    }
    for package, label in tools.items():
        (version,) = [v for row, v in rows.items() if row.startswith(label)]
        assert version == pinned[package], (
            f"README lists {label} {version}, pinned {pinned[package]}"
        )
