"""The walk that explains a failing config (schemas.explained_errors) must yield exactly the
errors of jsonschema's plain walk (schemas.validator): the same messages, in the same order,
with the same paths, schema paths, keywords, values and schemas, and under anyOf/oneOf the
same branch errors (best_match words the finding after them). It skips what the compiled
check accepts and descends without jsonschema where an object's own keywords pass, so this
compares every attribute, on every fixture, on configs with errors at several depths and
under anyOf/oneOf, and on random mutations."""

from __future__ import annotations

import copy
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema.exceptions import best_match

from spec_format.facts import catalog, schemas
from tests.common import EXAMPLES, INVALID, RELEASES, ROOT, VALID, load_case
from tests.mutations import mutated_config


def _shape(error) -> tuple:
    """Everything of an error a finding or best_match could read, its branches included."""
    return (
        error.message,
        error.validator,
        repr(error.validator_value),
        repr(error.instance),  # parts of the one config both walk: the same order
        id(error.schema),
        list(error.relative_path),
        list(error.relative_schema_path),
        list(error.absolute_path),
        list(error.absolute_schema_path),
        error.json_path,
        repr(error.cause),
        [(_shape(e), e.parent is error) for e in error.context],
        _shape(best_match(error.context)) if error.context else None,
    )


def _same_errors(config, version: str, model_type: str) -> int:
    plain = [_shape(e) for e in schemas.validator(version, model_type).iter_errors(config)]
    walked = [_shape(e) for e in schemas.explained_errors(version, model_type, config)]
    assert walked == plain, (version, model_type, json.dumps(config)[:2000])
    return len(plain)


def _everywhere(config) -> int:
    """Compares the walks at every version with the config's type; the errors found."""
    model_type = config.get("speculators_model_type")
    if not isinstance(model_type, str):
        return 0
    return sum(
        _same_errors(config, version, model_type)
        for version in catalog.versions_with_type(model_type)
    )


def _configs():
    for p in EXAMPLES:
        yield json.loads((p / "config.json").read_text())
    for p in VALID + RELEASES:
        yield json.loads(p.read_text())
    for p in INVALID:
        yield load_case(p)["config"]


def test_every_fixture_gives_the_plain_walks_errors():
    # run twice past GENERATE_AFTER: the closures first, then the generated checks
    found = sum(_everywhere(c) for _ in range(2) for c in _configs())
    assert found > 100  # the other versions of each type reject many of them


def _broken(base: dict) -> dict:
    """Errors at several depths: a root value, a nested required key, a bound inside an
    array item, a value under rope_scaling's anyOf, an object where a number belongs."""
    config = copy.deepcopy(base)
    config["draft_vocab_size"] = "many"
    spec = config["speculators_config"]
    spec["verifier"].pop("name_or_path", None)
    for method in spec["proposal_methods"]:
        method["speculative_tokens"] = 0
        method["proposal_type"] = "nonsense"
    layer = config["transformer_layer_config"]
    layer["rope_scaling"] = {"rope_type": 5, "factor": "x"}
    layer["hidden_size"] = {"a": 1}
    layer["num_hidden_layers"] = -1
    return config


def test_errors_at_several_depths_and_under_any_of_and_one_of():
    base = json.loads((ROOT / "examples" / "qwen3-8b-eagle3" / "config.json").read_text())
    config = _broken(base)
    contexts = 0
    for version in catalog.versions_with_type("eagle3"):
        assert _same_errors(config, version, "eagle3") >= 5
        errors = list(schemas.explained_errors(version, "eagle3", config))
        contexts += sum(1 for e in errors if e.context)
        # two array items, each wrong twice: all of them, in the plain walk's order
        assert (
            _same_errors(
                {
                    **config,
                    "speculators_config": {
                        **config["speculators_config"],
                        "proposal_methods": config["speculators_config"]["proposal_methods"] * 2,
                    },
                },
                version,
                "eagle3",
            )
            >= 5
        )
    assert contexts >= 2  # anyOf (rope_scaling) and, at 0.1 and 0.2, oneOf (proposal methods)


def test_generated_levels_reject_what_the_parts_reject():
    """After GENERATE_AFTER uses, one generated function per ``properties`` says which
    values to walk: it names the same entries, in schema order, as each part's check."""
    levels = {}  # id of a properties value (the inlined schemas are cached) -> both kinds
    for config in _configs():
        model_type = config.get("speculators_model_type")
        if not isinstance(model_type, str):
            continue
        for version in catalog.versions_with_type(model_type):
            todo = [(schemas.inlined(version, model_type), config)]
            while todo:
                schema, value = todo.pop()
                if not isinstance(schema, dict) or not isinstance(value, dict):
                    continue
                props = schema.get("properties")
                if not isinstance(props, dict):
                    continue
                if id(props) not in levels:
                    generated = schemas._Properties(props)
                    generated._generate()
                    assert generated.table is not generated.parts, (version, model_type)
                    levels[id(props)] = (schemas._Properties(props), generated)
                parts, generated = levels[id(props)]
                assert generated.rejected(value) == parts.rejected(value), (version, model_type)
                todo += [(sub, value[name]) for name, sub in props.items() if name in value]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mutations_give_the_plain_walks_errors(data):
    _everywhere(mutated_config(data, most=6))


def test_scalar_enums_and_closed_objects_check_exactly():
    """A mixed enum of scalars is tested by (type, value), as _same compares: 1 is not True
    nor 1.0; a closed object's keys are tested as one set, with the closures as with the
    generated function."""
    from spec_format.facts.schema_check import compile_schema, generate

    def both(schema):
        return compile_schema(schema, "", schemas._deref), generate(schema, "", schemas._deref)

    for check in both({"enum": ["a", None, 1, False]}):
        assert check("a") and check(None) and check(1) and check(False)
        assert not check(True) and not check(1.0) and not check(0) and not check([1])
        assert not check({"a": 1}) and not check("b")
    closed = {
        "properties": {"a": {"type": "integer"}, "b": True},
        "additionalProperties": False,
    }
    for check in both(closed):
        assert check({}) and check({"a": 1, "b": [None]}) and check([1])
        assert not check({"a": "x"}) and not check({"c": 1}) and not check({"a": 1, "c": 1})
