"""The schema layer's fast path must never accept what jsonschema rejects.

Every validation (``ValidateOptions(fast_path=None)``, the default, or True) first runs the
compiled accept-only check (spec_format.facts.schema_check via schemas.accepts); a config it
accepts skips the jsonschema walk (spec_format.rules.schema.schema_findings). That is only
sound if the check is never more lenient than jsonschema; this file checks it on every
fixture and on random mutations of the examples and of the release fixtures, at every format
version that has the config's type, and compares the findings of the fast and the explaining
(``fast_path=False``) paths on every fixture, every rule case's config and every migrate
golden: the fast path also runs the config rules as compiled plans and walks only the parts
of a failing config that the compiled check does not accept. The generated pydantic models
(the typed API) are held to the same rule.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spec_format.facts import catalog, schemas
from spec_format.facts.schema_check import generate, module_source
from spec_format.runner.validation import ValidateOptions, validate_config
from tests.common import EXAMPLES, INVALID, RELEASES, ROOT, VALID, load_case, load_script
from tests.mutations import mutated_config
from tests.rules.cases import all_cases


def _configs():
    for p in EXAMPLES:
        yield p.name, json.loads((p / "config.json").read_text())
    for p in VALID + RELEASES:
        yield p.stem, json.loads(p.read_text())
    for p in INVALID:
        yield f"{p.parent.name}/{p.name}", load_case(p)["config"]


def _schema_valid(config, version) -> bool:
    model_type = config["speculators_model_type"]
    return not any(True for _ in schemas.validator(version, model_type).iter_errors(config))


def _agree(config) -> None:
    """Where a version's model or compiled check accepts the config, that version's schema
    must too; the generated check says what the closures it is written from say."""
    model_type = config.get("speculators_model_type")
    if not isinstance(model_type, str):
        return
    for version in catalog.versions_with_type(model_type):
        accepted = schemas.accepts(version, model_type, config)
        closures = schemas._compiled(version, model_type)
        generated = schemas.generated(version, model_type)
        assert closures(config) == generated(config) == accepted, (version, model_type)
        if accepted:
            assert _schema_valid(config, version), ("check", version, json.dumps(config)[:2000])
        if schemas.accepts_strictly(version, model_type, config):
            assert _schema_valid(config, version), ("model", version, json.dumps(config)[:2000])


def test_every_bundled_schema_compiles():
    """No schema silently loses the fast path (compile_schema returns None on a keyword it
    cannot check soundly)."""
    for version, entry in catalog.versions().items():
        for model_type in entry.types:
            assert schemas._compiled(version, model_type) is not None, (version, model_type)


def test_the_check_accepts_every_valid_fixture():
    """The fast path is taken where it should be: a valid config never needs the walk."""
    for name, config in _configs():
        model_type = config.get("speculators_model_type")
        if not isinstance(model_type, str) or not name or "/" in name:
            continue
        for version in catalog.versions_with_type(model_type):
            if _schema_valid(config, version):
                assert schemas.accepts(version, model_type, config), (name, version)


@pytest.mark.parametrize(
    ("name", "config"), list(_configs()), ids=lambda x: x if isinstance(x, str) else ""
)
def test_fast_and_explaining_paths_give_the_same_findings(name, config):
    found = [
        [f.to_dict() for f in validate_config(config, ValidateOptions(fast_path=fast)).findings]
        for fast in (False, True, None)
    ]
    assert found[0] == found[1] == found[2]


GOLDENS = sorted((ROOT / "tests" / "migrate" / "golden").glob("*/*/*.json"))


def _case_configs():
    """Every rule case's config document (pass and fail, checkpoint cases' configs too) with
    the validate options it names, and every migrate golden."""
    for case in all_cases():
        try:
            config = case.config
        except ValueError:  # a raw input: no document
            continue
        options = {k: v for k, v in case.options.items() if k in ("engines", "format_version")}
        yield case.id, config, options
    for p in GOLDENS:
        yield (
            str(p.relative_to(ROOT / "tests" / "migrate" / "golden")),
            json.loads(p.read_text()),
            {},
        )


@pytest.mark.parametrize(
    ("name", "config", "options"),
    list(_case_configs()),
    ids=lambda x: x if isinstance(x, str) else "",
)
def test_fast_and_explaining_paths_agree_on_every_case_and_golden(name, config, options):
    """The fast path (compiled rule plans, the schema walk that skips what the compiled
    check accepts) and the explaining path (each rule through run_rule, the plain jsonschema
    walk) report the same findings (rule ids, pointers, severities, messages), in order."""
    found = [
        [
            f.to_dict()
            for f in validate_config(config, ValidateOptions(fast_path=fast, **options)).findings
        ]
        for fast in (False, True)
    ]
    assert found[0] == found[1]


@pytest.mark.parametrize(
    ("name", "config"), list(_configs()), ids=lambda x: x if isinstance(x, str) else ""
)
def test_fixture_verdicts_agree(name, config):
    _agree(config)


@pytest.mark.slow  # over 10 s: deselected by default; scripts/test.sh runs it
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mutations_never_pass_the_model_and_fail_the_schema(data):
    _agree(mutated_config(data, most=3))


def test_every_bundled_schema_is_generated():
    """Each type's check can be generated, not left to the closures (a batch uses it after
    its first configs of the type)."""
    for version, entry in catalog.versions().items():
        for model_type in entry.types:
            schema = schemas.type_schema(version, model_type)
            generate(schema, schema["$id"], schemas._deref)  # raises if it cannot
            assert schemas.generated(version, model_type).__code__.co_filename == (
                "<schema check>"
            ), (version, model_type)


def test_every_bundled_schema_is_checked_by_its_module():
    """Each type's check is imported from generated/checks (a process that validates one
    config builds no closures and compiles nothing), from the source module_source writes
    for it now (`scripts/generate.py --check` holds the files to the same source)."""
    for version, entry in catalog.versions().items():
        for model_type in entry.types:
            check = schemas.pregenerated(version, model_type)
            assert check is not None, (version, model_type)
            module = sys.modules[check.__module__]
            schema = schemas.type_schema(version, model_type)
            source = module_source(schema, schema["$id"], schemas._deref, "")
            assert Path(module.__file__).read_text(encoding="utf-8").endswith(source)


def test_generated_subschema_checks_agree_with_their_closures():
    """The walk of a failing config skips a property whose subschema's check accepts it,
    with the closures first and the generated function later: both say the same of every
    top-level value of every fixture, at every version with its type."""
    from spec_format.facts.schema_check import compile_schema

    for _, config in _configs():
        model_type = config.get("speculators_model_type")
        if not isinstance(model_type, str):
            continue
        for version in catalog.versions_with_type(model_type):
            props = schemas.inlined(version, model_type).get("properties", {})
            for key, value in config.items():
                if key in props:
                    closures = compile_schema(props[key], "", schemas._deref)
                    generated = generate(props[key], "", schemas._deref)
                    assert closures(value) == generated(value), (version, model_type, key)


def test_the_check_compiles_only_what_it_can_check_soundly():
    """A keyword whose strict reading would not be sound (``not``, a oneOf whose branches
    two documents could both match) leaves a schema to the jsonschema walk; a discriminated
    oneOf is an anyOf; a float is never an integer here (jsonschema takes 1.0 for one)."""
    from spec_format.facts.schema_check import compile_schema

    def compiled(schema):
        return compile_schema(schema, "https://example.test/s.json", schemas._deref)

    assert compiled({"not": {"type": "string"}}) is None
    assert compiled({"oneOf": [{"type": "integer"}, {"minimum": 0}]}) is None
    tagged = {
        "oneOf": [{"properties": {"kind": {"const": k}}, "required": ["kind"]} for k in ("a", "b")]
    }
    check = compiled(tagged)
    assert check is not None
    assert check({"kind": "a"}) and not check({"kind": "c"}) and not check({})
    integer = compiled({"type": "integer", "minimum": 1})
    assert integer(3) and not integer(1.0) and not integer(True) and not integer(0)
    # a const that a branch does not require tags nothing: {} matches both branches
    untagged = {"oneOf": [{"properties": {"kind": {"const": k}}} for k in ("a", "b")]}
    assert compiled(untagged) is None
    every = compiled({"allOf": [{"type": "object"}, {"required": ["a"]}]})
    assert every({"a": 1}) and not every({}) and not every([])
    some = compiled({"anyOf": [{"type": "string"}, {"required": ["a"]}]})
    assert some("x") and some({"a": 1}) and not some({})


def _bench_variants():
    """benches/bench_validate.py's generated configs (the benchmark's documents)."""
    return load_script(ROOT / "benches" / "bench_validate.py")._variants


def test_a_batch_of_distinct_documents_reports_what_each_alone_does(tmp_path):
    """validate() over distinct generated documents (each names a verifier of its own, one in
    ten broken: the benchmark's batch), where what depends only on the reader table, the
    type or the plan is worked out once and shared, reports for each file what the
    explaining path finds in that document alone."""
    from spec_format.runner.validation import Validation

    configs = list(_bench_variants()(150, seed=7, distinct=True))
    paths = []
    for i, config in enumerate(configs):
        path = tmp_path / f"c{i:03d}.json"
        path.write_text(json.dumps(config, indent=2))
        paths.append(str(path))

    def plain(findings):
        return [
            {k: v for k, v in f.to_dict().items() if k not in ("line", "column")} for f in findings
        ]

    reports = list(Validation(paths))
    assert [r.path for r in reports] == paths
    assert sum(r.status.value == "fail" for r in reports) >= 10  # the broken ones fail
    for path, config, report in zip(paths, configs, reports, strict=True):
        alone = validate_config(config, ValidateOptions(fast_path=False), name=path)
        assert plain(report.findings) == plain(alone.findings), path
