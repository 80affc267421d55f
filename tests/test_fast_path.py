"""The schema layer's fast path must never accept what jsonschema rejects.

Every validation (``ValidateOptions(fast_path=None)``, the default, or True) first runs an
accept-only fast check (schemas.accepts: the closures of spec_format.facts.schema_check for
the first configs of a process, jsonschema-rs via spec_format.facts.schema_check_rs after);
a config it accepts skips the jsonschema walk (spec_format.rules.schema.schema_findings).
That is only sound if neither check is ever more lenient than jsonschema; this file checks
both on
every fixture, every rule case's config, Python values the two libraries read differently
and random mutations of the examples and of the release fixtures, at every format version
that has the config's type, and compares the findings of the fast and the explaining
(``fast_path=False``) paths on every fixture, every rule case's config and every migrate
golden: the fast path also runs the config rules as compiled plans and walks only the parts
of a failing config that the fast check does not accept. The generated pydantic models
(the typed API) are held to the same rule.
"""

from __future__ import annotations

import collections
import copy
import enum
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spec_format.base.numguard import IntegerValidator
from spec_format.engine.validation import ValidateOptions, validate_config
from spec_format.facts import catalog, schema_check, schema_check_rs, schemas
from tests.common import EXAMPLES, INVALID, ROOT, VALID, load_case
from tests.rules.cases import all_cases

RELEASES = sorted((ROOT / "tests" / "fixtures" / "releases").glob("*/*/*.json"))


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


def _checks(version, model_type):
    """Both fast checks of a type: the closures of the first configs, jsonschema-rs after."""
    return {
        "closures": schemas.closures(version, model_type),
        "rs": schemas.rs_check(version, model_type),
    }


_SUBS: dict[int, tuple] = {}


def _sub_checks(sub):
    """Both fast checks of an inlined subschema (the pruned walk skips what they accept)."""
    if id(sub) not in _SUBS:
        checks = {
            "closures": schema_check.compile_schema(sub, "", schemas._deref),
            "rs": schema_check_rs.compile_schema(sub),
        }
        _SUBS[id(sub)] = (sub, checks)
    return _SUBS[id(sub)][1]


def _agree(config) -> None:
    """Where a version's model or a fast check accepts the config, that version's schema
    must too; so must the schema of each property whose own fast check accepts its value
    (the walk of a failing config skips those)."""
    model_type = config.get("speculators_model_type")
    if not isinstance(model_type, str):
        return
    for version in catalog.versions_with_type(model_type):
        for name, check in _checks(version, model_type).items():
            if check(config):
                assert _schema_valid(config, version), (name, version, json.dumps(config)[:2000])
        if schemas.accepts_strictly(version, model_type, config):
            assert _schema_valid(config, version), ("model", version, json.dumps(config)[:2000])
        props = schemas.inlined(version, model_type).get("properties", {})
        for key, value in config.items():
            if key in props:
                for name, check in _sub_checks(props[key]).items():
                    if check(value):
                        assert _sub_valid(props[key], value), (name, version, key)


def _sub_valid(schema, value) -> bool:
    return not any(True for _ in IntegerValidator(schema).iter_errors(value))


def test_every_bundled_schema_has_both_fast_checks():
    """No schema silently loses the fast path (a check is None where a keyword could not be
    checked soundly)."""
    for version, entry in catalog.versions().items():
        for model_type in entry.types:
            for name, check in _checks(version, model_type).items():
                assert check is not None, (name, version, model_type)


def test_the_checks_accept_every_valid_fixture():
    """The fast path is taken where it should be: a valid config never needs the walk."""
    for name, config in _configs():
        model_type = config.get("speculators_model_type")
        if not isinstance(model_type, str) or not name or "/" in name:
            continue
        for version in catalog.versions_with_type(model_type):
            if _schema_valid(config, version):
                for which, check in _checks(version, model_type).items():
                    assert check(config), (which, name, version)


def test_the_first_configs_use_the_closures_then_jsonschema_rs(monkeypatch):
    """A run of a few configs never imports jsonschema-rs; a batch switches to it, for the
    whole config and for the subschemas the walk of a failing one skips."""
    monkeypatch.setattr(schemas, "_checked", 0)
    monkeypatch.setattr(schemas, "RS_AFTER", 2)
    config = json.loads((EXAMPLES[0] / "config.json").read_text())
    model_type = config["speculators_model_type"]
    version = catalog.versions_with_type(model_type)[-1]
    sub = schemas.inlined(version, model_type)["properties"]["speculators_config"]
    picked = []
    for _ in range(3):
        picked.append(schemas._subschema_check(sub))
        schemas.accepts(version, model_type, config)
    assert schemas._checked == 2
    assert picked[0] is picked[1] is schemas._SUB_CHECKS[id(sub)][1]
    assert picked[2] is schemas._SUB_CHECKS[id(sub)][2] is not None


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
    ("name", "config", "options"),
    list(_case_configs()),
    ids=lambda x: x if isinstance(x, str) else "",
)
def test_case_verdicts_agree(name, config, options):
    if isinstance(config, dict):
        _agree(config)


@pytest.mark.parametrize(
    ("name", "config"), list(_configs()), ids=lambda x: x if isinstance(x, str) else ""
)
def test_fixture_verdicts_agree(name, config):
    _agree(config)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 10**6)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)
BASES = [json.loads((p / "config.json").read_text()) for p in EXAMPLES] + [
    json.loads(p.read_text()) for p in RELEASES
]


def _paths(node, prefix=()):
    if isinstance(node, dict):
        for k, v in node.items():
            yield (*prefix, k)
            yield from _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield (*prefix, i)
            yield from _paths(v, (*prefix, i))


@pytest.mark.slow  # over 10 s: deselected by default; scripts/test.sh runs it
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mutations_never_pass_the_model_and_fail_the_schema(data):
    config = copy.deepcopy(data.draw(st.sampled_from(BASES)))
    paths = [p for p in _paths(config) if p != ("speculators_model_type",)]
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(paths))
        parent = config
        try:
            for part in path[:-1]:
                parent = parent[part]
            if data.draw(st.booleans()) and isinstance(parent, dict):
                parent.pop(path[-1], None)
            else:
                parent[path[-1]] = data.draw(json_values)
        except (KeyError, IndexError, TypeError):
            continue
    _agree(config)


#: Python values jsonschema-rs and jsonschema could read differently: integral floats past
#: 2**53 (an integer to JSON Schema, not to the reference), big ints, tuples (an array to
#: jsonschema-rs only), NaN and infinities, lone surrogates, subclasses, non-string keys
def _tricky():
    Pair = collections.namedtuple("Pair", "a b")

    class Text(str):
        pass

    class Small(enum.IntEnum):
        ONE = 1

    return [
        1e20, 2.0**53, 2.0**53 + 2, 2**53 + 1, 10**30, 1.0, float("nan"), float("inf"), True,
        ("a",), (1, 2), Pair(1, 2), [("a",)], collections.OrderedDict(a=1), {"x": ("a",)},
        {1: 2}, "\ud800", Text("llama"), Small.ONE,
    ]  # fmt: skip


def test_values_the_libraries_read_differently_never_pass_only_the_fast_check():
    """Each of :func:`_tricky` put in place of each value of one example of each type: each
    fast check (of the whole config, and of the property's own subschema) accepts it only
    where jsonschema does, at the newest version with the type (the fixtures, cases and
    mutations above try every version)."""
    tricky = _tricky()
    bases = {}
    for config in BASES:
        bases.setdefault(config["speculators_model_type"], config)
    for model_type, base in bases.items():
        for path in _paths(base):
            if path == ("speculators_model_type",):
                continue
            for value in tricky:
                config = copy.deepcopy(base)
                parent = config
                for part in path[:-1]:
                    parent = parent[part]
                parent[path[-1]] = value
                for version in catalog.versions_with_type(model_type)[-1:]:
                    # one walk where both checks accept
                    passed = [
                        n for n, check in _checks(version, model_type).items() if check(config)
                    ]
                    if passed:
                        assert _schema_valid(config, version), (passed, version, path, value)
                    sub = schemas.inlined(version, model_type).get("properties", {}).get(path[0])
                    if sub is None:
                        continue
                    passed = [n for n, check in _sub_checks(sub).items() if check(config[path[0]])]
                    if passed:
                        assert _sub_valid(sub, config[path[0]]), (passed, version, path, value)


def test_the_closures_compile_only_what_they_can_check_soundly():
    """A keyword whose strict reading would not be sound (``not``, a oneOf whose branches
    two documents could both match) leaves a schema to the jsonschema walk; a discriminated
    oneOf is an anyOf; a float is never an integer here (jsonschema takes 1.0 for one)."""

    def compiled(schema):
        return schema_check.compile_schema(schema, "https://example.test/s.json", schemas._deref)

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
    assert not compiled({"type": "array"})(("a",))


def test_jsonschema_rs_checks_only_what_it_reads_as_jsonschema_does():
    """A keyword whose stricter reading would not be sound (``not``, ``if``, a oneOf whose
    branches two documents could both match) or that the two libraries read differently
    (``pattern``, ``format``) leaves a schema to the jsonschema walk; a oneOf tagged by a
    const is fine. Integral floats are integers as in jsonschema, up to 2**53; a tuple is no
    array, as in jsonschema."""
    assert schema_check_rs.compile_schema({"not": {"type": "string"}}) is None
    assert (
        schema_check_rs.compile_schema({"if": {"type": "string"}, "then": {"minLength": 2}}) is None
    )
    assert schema_check_rs.compile_schema({"oneOf": [{"type": "integer"}, {"minimum": 0}]}) is None
    assert schema_check_rs.compile_schema({"type": "string", "pattern": "^a"}) is None
    assert schema_check_rs.compile_schema({"type": "string", "format": "date"}) is None
    tagged = {
        "oneOf": [{"properties": {"kind": {"const": k}}, "required": ["kind"]} for k in ("a", "b")]
    }
    check = schema_check_rs.compile_schema(tagged)
    assert check is not None
    assert check({"kind": "a"}) and not check({"kind": "c"}) and not check({})
    integer = schema_check_rs.compile_schema({"type": "integer", "minimum": 1})
    assert integer(3) and integer(1.0) and integer(2.0**53)
    assert not integer(True) and not integer(0) and not integer(1e20) and not integer(1.5)
    schema = {
        "type": "object",
        "properties": {"a": {"type": "array"}, "m": {"additionalProperties": {"type": "array"}}},
        "additionalProperties": {"items": {"anyOf": [{"type": "array"}]}},
    }
    arrays = schema_check_rs.compile_schema(schema)
    assert arrays({"a": [1], "m": {"k": []}, "z": [[1]]})
    for bad in ({"a": (1,)}, {"m": {"k": ()}}, {"z": [(1,)]}):
        assert not arrays(bad), bad
        assert not _sub_valid(schema, bad), bad  # what jsonschema says too
