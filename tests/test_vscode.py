"""VS Code's JSON engine (vscode-json-languageservice) with the exported schemas.

What a person editing a draft config.json in VS Code sees, for both exports (2020-12 and
draft-07), with each file mapped to its format version's root schema as the `json.schemas`
setting from `specfmt schema vscode` does it:

* every negative fixture of the schema layer: a diagnostic exactly on the offending key (its
  value, or for a missing key the key of the object that lacks it), worded so a person can
  act on it, and no diagnostic anywhere else; the specfmt verdict decides what the schema
  must flag (see _expected);
* every example, valid fixture and release fixture: no diagnostic;
* completion inside a config of each type of each version offers every field of the type
  with its description, and the known types as values of speculators_model_type;
* hover over each key of every positive config shows that field's description.

All documents go through one Node process (tests/vscode/languageservice.mjs).
"""

from __future__ import annotations

import json
import re
from functools import cache

import pytest
from nodetools import require_node, run_node

from spec_format.api import write_schemas
from spec_format.facts import catalog, export
from spec_format.runner.validation import ValidateOptions, validate, validate_config
from tests.common import EXAMPLES, INVALID, RELEASES, ROOT, VALID, load_case

SCRIPT = "tests/vscode/languageservice.mjs"
SCHEMAS = ROOT / "generated" / "schemas"
DIALECTS = {"2020-12": "", "draft-07": "draft-07/"}
DISCRIMINATOR = "speculators_model_type"


def _parent(pointer: str) -> str:
    return pointer.rsplit("/", 1)[0]


def _last(pointer: str) -> str:
    return pointer.rsplit("/", 1)[-1].replace("~1", "/").replace("~0", "~")


@cache
def _type_schema(version: str, model_type: str) -> dict:
    return json.loads((SCHEMAS / version / f"{model_type}.schema.json").read_text("utf-8"))


def _target(schema: dict, node: dict) -> dict:
    ref = node.get("$ref", "")
    return schema["$defs"].get(ref.removeprefix("#/$defs/"), {}) if ref else {}


def _descriptions(version: str, model_type: str) -> dict[str, str]:
    """Each top-level field of the type with its description (through its $ref)."""
    schema = _type_schema(version, model_type)
    return {
        name: prop.get("description") or _target(schema, prop).get("description")
        for name, prop in schema["properties"].items()
    }


def _hover_descriptions(version: str, model_type: str) -> dict[str, set[str]]:
    """What hover may show for each field: its description, or, for a field whose schema
    extends another with allOf, the extended schema's (VS Code's hover takes the first
    description among the matching schemas, and an allOf member matches before the schema
    that holds it; completion shows the field's own, see the completion test)."""
    schema = _type_schema(version, model_type)
    out = {}
    for name, description in _descriptions(version, model_type).items():
        resolved = _target(schema, schema["properties"][name])
        extended = [_target(schema, m).get("description") for m in resolved.get("allOf", [])]
        out[name] = {description, *filter(None, extended)}
    return out


def _plain(markdown: str) -> str:
    """Hover text without VS Code's markdown escapes and line breaks."""
    return " ".join(re.sub(r"\\(.)", r"\1", markdown).split())


def _document(kind: str, name: str, dialect: str, version: str, text: str, **ops) -> dict:
    sub = DIALECTS[dialect]
    return {
        "uri": f"file:///specfmt-vscode/{kind}/{dialect}/{name}/config.json",
        "schema": str(SCHEMAS / version / f"{sub}{export.root_name(version)}.schema.json"),
        "text": text,
        **ops,
    }


def _expected(config: dict, options: ValidateOptions):
    """(version, findings the root schema must flag) by specfmt's schema-layer verdict."""
    report = validate_config(config, options)
    findings = [f for f in report.findings if f.rule.startswith("S")]
    keyword = [f for f in findings if f.rule.startswith("S1")]
    has_type = (
        report.model_type
        in catalog.version_entry(report.format_version or catalog.latest_version()).types
    )
    if keyword:
        return report, keyword
    return report, ([] if has_type else findings)


def _jobs():
    documents, checks = [], []
    for path in INVALID:
        case = load_case(path)
        if not any(rule.startswith("S") for rule in case["expect"]):
            continue
        report, flagged = _expected(case["config"], ValidateOptions(**case.get("options", {})))
        text = json.dumps(case["config"], indent=2)
        pointers = sorted({p for f in flagged for p in (f.pointer, _parent(f.pointer))})
        for dialect in DIALECTS:
            name = f"{path.parent.name}/{path.stem}"
            documents.append(
                _document(
                    "negative",
                    name,
                    dialect,
                    (report.format_version or catalog.latest_version()),
                    text,
                    locate=pointers,
                )
            )
            checks.append(
                (
                    "negative",
                    f"{name} ({dialect}, format {(report.format_version or catalog.latest_version())})",
                    report,
                    flagged,
                )
            )
    positives = [e / "config.json" for e in EXAMPLES] + VALID + RELEASES
    for path in positives:
        report = validate([path]).files[0]
        text = path.read_text(encoding="utf-8")
        keys = list(json.loads(text))
        hover = [text.index(json.dumps(k)) + 1 for k in keys]
        for dialect in DIALECTS:
            name = path.relative_to(ROOT).as_posix()
            documents.append(
                _document(
                    "positive",
                    name,
                    dialect,
                    (report.format_version or catalog.latest_version()),
                    text,
                    hover=hover,
                )
            )
            checks.append(
                (
                    "positive",
                    f"{name} ({dialect}, format {(report.format_version or catalog.latest_version())})",
                    report,
                    keys,
                )
            )
    for version, entry in catalog.versions().items():
        for model_type in entry.types:
            text = f'{{\n  "{DISCRIMINATOR}": "{model_type}",\n  \n}}'
            value_text = f'{{\n  "{DISCRIMINATOR}": \n}}'
            for dialect in DIALECTS:
                name = f"{version}/{model_type}"
                offset = text.index("\n  \n") + 3
                documents.append(
                    _document("complete", name, dialect, version, text, complete=[offset])
                )
                checks.append(("complete", f"{name} ({dialect})", version, model_type))
            if model_type == entry.types[0]:
                for dialect in DIALECTS:
                    offset = value_text.index(": ") + 2
                    documents.append(
                        _document(
                            "values", version, dialect, version, value_text, complete=[offset]
                        )
                    )
                    checks.append(("values", f"{version} ({dialect})", version, entry.types))
    return documents, checks


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    require_node(
        "vscode-json-languageservice", "vscode-languageserver-textdocument", "jsonc-parser"
    )
    documents, checks = _jobs()
    jobs = tmp_path_factory.mktemp("vscode") / "jobs.json"
    jobs.write_text(json.dumps({"documents": documents}), encoding="utf-8")
    proc = run_node([SCRIPT, str(jobs)])
    assert proc.returncode == 0, proc.stderr
    results = json.loads(proc.stdout)
    assert len(results) == len(documents)
    return list(zip(checks, results, strict=True))


def _of(service, kind):
    got = [(check[1:], result) for check, result in service if check[0] == kind]
    assert got, f"no {kind} documents"
    return got


def _ranges(pointer: str, located: dict) -> set[tuple[int, int]]:
    """Where a diagnostic about ``pointer`` may land: the key or value of that property; for
    a key that is absent, the key of the object that lacks it (its opening brace at the top)."""
    here = located.get(pointer) or {}
    if here.get("value") and pointer:
        return {tuple(r) for r in (here["key"], here["value"]) if r}
    parent = located.get(_parent(pointer)) if pointer else None
    if pointer and parent and parent.get("key"):
        return {tuple(parent["key"])}
    return {(0, 1)}


_SPECIFIC = re.compile(
    r'^(Missing property "[^"]+"\.|Incorrect type\. Expected "[^"]+"\.|'
    r"Value is (below|above) the (exclusive )?(minimum|maximum) of -?[\d.]+\.|"
    r'Value is not accepted\. Valid values: ".+"\.|Value must be "[^"]+"\.|'
    r"Array has too (few|many) items\. Expected \d+ or (more|fewer)\.)$"
)


def _actionable(finding, message: str, version: str) -> str | None:
    """Why ``message`` does not tell a person what to change (None when it does)."""
    if not _SPECIFIC.match(message):
        return "not one of VS Code's specific messages (expected type, bound, values, key)"
    missing = message.startswith("Missing property")
    if missing and f'"{_last(finding.pointer or "/" + DISCRIMINATOR)}"' not in message:
        return "does not name the missing key"
    if finding.pointer == f"/{DISCRIMINATOR}" and not missing:
        types = catalog.version_entry(version).types
        if not all(f'"{t}"' in message for t in types):
            return f"does not list the known types {', '.join(types)}"
    return None


def test_negative_fixtures_get_a_diagnostic_on_the_offending_key(service):
    problems = []
    for (name, report, flagged), result in _of(service, "negative"):
        diagnostics = result["diagnostics"]
        unexplained = list(diagnostics)
        for f in flagged:
            where = _ranges(f.pointer, result["located"])
            hits = [d for d in diagnostics if tuple(d["range"]) in where]
            if not hits:
                shown = "; ".join(f"{d['range']} {d['message']}" for d in diagnostics) or "none"
                problems.append(f"{name}: nothing at {f.pointer} ({f.rule}); got {shown}")
                continue
            for d in hits:
                if d in unexplained:
                    unexplained.remove(d)
                why = _actionable(
                    f, d["message"], (report.format_version or catalog.latest_version())
                )
                if why:
                    problems.append(f"{name}: {d['message']!r} at {f.pointer}: {why}")
        problems += [f"{name}: stray diagnostic {d['range']} {d['message']}" for d in unexplained]
    assert not problems, "\n".join(problems)


def test_dispatch_findings_are_covered():
    """The negative set includes an unknown type and a missing type (the dispatch cases)."""
    rules = {
        f.rule
        for path in INVALID
        for f in _expected(load_case(path)["config"], ValidateOptions())[1]
        if path.parent.name.startswith("S0")
    }
    assert {"S001", "S002"} <= rules


def test_valid_configs_get_no_diagnostic(service):
    noisy = {
        name: [f"{d['range']} {d['message']}" for d in result["diagnostics"]]
        for (name, _, _), result in _of(service, "positive")
        if result["diagnostics"]
    }
    assert not noisy, noisy


def test_completion_offers_every_field_with_its_description(service):
    problems = []
    for (name, version, model_type), result in _of(service, "complete"):
        (items,) = result["completions"]
        offered = {i["label"]: i["documentation"] for i in items}
        for field, description in _descriptions(version, model_type).items():
            if field == DISCRIMINATOR:
                continue  # already in the document
            if field not in offered:
                problems.append(f"{name}: {field} not offered")
            elif not description or offered[field] != description:
                problems.append(f"{name}: {field} documented as {offered[field]!r}")
    assert not problems, "\n".join(problems)


def test_completion_offers_the_known_types(service):
    for (name, _, types), result in _of(service, "values"):
        (items,) = result["completions"]
        assert [i["label"] for i in items] == [json.dumps(t) for t in types], name


def test_hover_shows_each_fields_description(service):
    problems = []
    for (name, report, keys), result in _of(service, "positive"):
        described = _hover_descriptions(report.format_version, report.model_type)
        for key, hover in zip(keys, result["hovers"], strict=True):
            wanted = described.get(key)
            if wanted is None:
                continue  # a key the type does not declare (extra keys are allowed)
            shown = _plain(hover or "")
            if not any(w and " ".join(w.split()) in shown for w in wanted):
                problems.append(f"{name}: hover over {key!r} shows {hover!r}")
    assert not problems, "\n".join(problems)


# -- the editor variant (specfmt schema vscode --strict) -----------------------------------------


def test_strict_variant_flags_unknown_top_level_keys_as_warnings_with_the_known_keys(tmp_path):
    """The --strict schema makes VS Code underline a top-level typo (C014 in specfmt) as a
    warning that lists the known keys, and leaves every valid config without a diagnostic."""
    from typer.testing import CliRunner

    from spec_format.cli.app import app
    from spec_format.facts.export_strict import SUFFIX, strict_file

    require_node(
        "vscode-json-languageservice", "vscode-languageserver-textdocument", "jsonc-parser"
    )
    out = tmp_path / "schemas"
    ran = CliRunner().invoke(app, ["schema", "vscode", "--strict", "--schema-dir", str(out)])
    assert ran.exit_code == 0, ran.output
    assert list(out.rglob(f"*{SUFFIX}")), "--strict writes the editor variant"

    write_schemas([strict_file(v) for v in catalog.versions()], out)

    def doc(kind, name, version, text, **ops):
        path = out / strict_file(version).path
        uri = f"file:///specfmt-strict/{kind}/{name}/config.json"
        return {"uri": uri, "schema": str(path), "text": text, **ops}

    documents, checks = [], []
    for path in INVALID:
        case = load_case(path)
        if path.parent.name != "C014":
            continue
        report = validate_config(case["config"])
        typos = [
            f.pointer for f in report.findings if f.rule == "C014" and f.pointer.count("/") == 1
        ]
        if not typos:
            continue  # a typo inside transformer_layer_config: that object stays open
        text = json.dumps(case["config"], indent=2)
        documents.append(doc("typo", path.stem, report.format_version, text, locate=typos))
        checks.append(("typo", path.stem, report, typos))
    assert checks, "no C014 fixture with a top-level typo"
    for path in [e / "config.json" for e in EXAMPLES] + VALID + RELEASES:
        report = validate([path]).files[0]
        if report.format_version is None:
            continue
        name = path.relative_to(ROOT).as_posix()
        documents.append(doc("ok", name, report.format_version, path.read_text("utf-8")))
        checks.append(("ok", name, report, []))
    jobs = tmp_path / "jobs.json"
    jobs.write_text(json.dumps({"documents": documents}), encoding="utf-8")
    proc = run_node([SCRIPT, str(jobs)])
    assert proc.returncode == 0, proc.stderr
    for (kind, name, report, typos), result in zip(checks, json.loads(proc.stdout), strict=True):
        if kind == "ok":
            assert result["diagnostics"] == [], (name, result["diagnostics"])
            continue
        known = _descriptions(report.format_version, report.model_type)
        for pointer in typos:
            key = tuple(result["located"][pointer]["key"])
            (hit,) = [d for d in result["diagnostics"] if tuple(d["range"]) == key]
            assert hit["severity"] == 2, hit  # a warning, as VS Code shows schema problems
            assert all(f'"{k}"' in hit["message"] for k in known), hit["message"]


#: a slip of the finger at each nested place the strict variant closes, and a key of another
#: model family in transformer_layer_config, which stays open
NESTED_TYPOS = {
    ("speculators_config",): ("default_proposal_methd", "default_proposal_method"),
    ("speculators_config", "verifier"): ("name_or_pth", "name_or_path"),
    ("speculators_config", "proposal_methods", "*"): ("speculative_token", "speculative_tokens"),
}


def test_strict_variant_closes_the_nested_objects_the_format_defines_completely(tmp_path):
    """A typo inside speculators_config, its verifier or a proposal method is C014 in specfmt
    and a warning listing that object's known keys in VS Code; an unknown key of
    transformer_layer_config (any transformers family's key is legal there) is neither."""
    from spec_format.facts import misspell
    from spec_format.facts.export_strict import CLOSED, strict_file

    require_node(
        "vscode-json-languageservice", "vscode-languageserver-textdocument", "jsonc-parser"
    )
    places = {parts for _, parts in misspell.OBJECTS if parts} - {("transformer_layer_config",)}
    assert {tuple("0" if p == "*" else p for p in c) for c in CLOSED} == places
    assert set(NESTED_TYPOS) == set(CLOSED)
    out = tmp_path / "schemas"
    write_schemas([strict_file(v) for v in catalog.versions()], out)
    documents, checks = [], []
    for example in EXAMPLES:
        config = json.loads((example / "config.json").read_text("utf-8"))
        version = validate_config(config).format_version
        strict = strict_file(version)
        for parts, (typo, meant) in NESTED_TYPOS.items():
            broken = json.loads(json.dumps(config))
            node = broken
            for part in parts:
                node = node[0] if part == "*" else node[part]
            known = sorted(node)
            node[typo] = node.pop(meant, 1)
            pointer = "/" + "/".join("0" if p == "*" else p for p in parts) + "/" + typo
            found = [f.pointer for f in validate_config(broken).findings if f.rule == "C014"]
            assert pointer in found, (example.name, pointer, found)  # the CLI reports it
            uri = f"file:///specfmt-strict/nested/{example.name}/{typo}/config.json"
            documents.append(
                {
                    "uri": uri,
                    "schema": str(out / strict.path),
                    "text": json.dumps(broken, indent=2),
                    "locate": [pointer],
                }
            )
            checks.append((example.name, pointer, known, meant))
        open_ = json.loads(json.dumps(config))
        open_["transformer_layer_config"]["moe_router_topk"] = 2  # another family's key
        uri = f"file:///specfmt-strict/open/{example.name}/config.json"
        documents.append(
            {"uri": uri, "schema": str(out / strict.path), "text": json.dumps(open_, indent=2)}
        )
        checks.append((example.name, None, [], None))
    jobs = tmp_path / "jobs.json"
    jobs.write_text(json.dumps({"documents": documents}), encoding="utf-8")
    proc = run_node([SCRIPT, str(jobs)])
    assert proc.returncode == 0, proc.stderr
    for (name, pointer, known, meant), result in zip(checks, json.loads(proc.stdout), strict=True):
        if pointer is None:
            assert result["diagnostics"] == [], (name, result["diagnostics"])
            continue
        key = tuple(result["located"][pointer]["key"])
        hits = [d for d in result["diagnostics"] if tuple(d["range"]) == key]
        assert len(hits) == 1 and hits[0]["severity"] == 2, (name, pointer, result)
        assert all(f'"{k}"' in hits[0]["message"] for k in known), hits[0]["message"]
        others = [d["message"] for d in result["diagnostics"] if d not in hits]
        assert others in ([], [f'Missing property "{meant}".']), (name, pointer, others)
