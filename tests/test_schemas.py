"""The canonical schemas: catalog consistency, conventions, and the codegen round trip."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

from spec_format.facts import catalog, schemas
from tests.common import ROOT

SCHEMA_DIR = ROOT / "schema"
VERSION_TYPES = [(v, t) for v, e in catalog.versions().items() for t in e.types]
#: informational keys with no meaningful default (required keys never need one)
NO_DEFAULT = {"auto_map", "transformers_version", "speculators_config", "transformer_layer_config"}
FORBIDDEN_KEYWORDS = {
    "$dynamicRef",
    "$dynamicAnchor",
    "prefixItems",
    "unevaluatedProperties",
    "unevaluatedItems",
    "$recursiveRef",
}


#: only the format versions' folders (not tensors/, defs/ or readers/)
VERSION_SCHEMAS = [
    p for p in SCHEMA_DIR.glob("*/*.schema.json") if p.parent.name in catalog.versions()
]


def test_catalog_matches_files_one_to_one():
    on_disk = {
        (p.parent.name, p.name.removesuffix(".schema.json"))
        for p in VERSION_SCHEMAS
        if not p.name.startswith("speculators.")
    }
    roots = {(p.parent.name, p.name) for p in VERSION_SCHEMAS} - {
        (v, f"{t}.schema.json") for v, t in on_disk
    }
    catalogued = set(VERSION_TYPES)
    assert on_disk == catalogued
    assert roots == {(v, e.root) for v, e in catalog.versions().items()}


def _walk(node, path=()):
    yield path, node
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _walk(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _walk(v, (*path, i))


@pytest.mark.parametrize(
    "path", sorted(SCHEMA_DIR.glob("*/*.schema.json")), ids=lambda p: f"{p.parent.name}/{p.name}"
)
def test_schema_conventions(path):
    doc = json.loads(path.read_text())
    assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert doc["$id"] == schemas.schema_uri(path.parent.name, path.name)
    for where, node in _walk(doc):
        if isinstance(node, dict):
            bad = FORBIDDEN_KEYWORDS & node.keys()
            assert not bad, f"{where}: {bad} is outside the draft-07-compatible subset"
    from jsonschema import Draft202012Validator

    Draft202012Validator.check_schema(doc)


@pytest.mark.parametrize(("version", "model_type"), VERSION_TYPES)
def test_every_property_is_documented_typed_and_defaulted(version, model_type):
    schema = schemas.type_schema(version, model_type)
    required = set(schema.get("required", ()))
    assert schema["properties"]["speculators_model_type"]["const"] == model_type
    for key in schema["properties"]:
        node = schemas.resolve(version, model_type, (key,))
        assert node.get("description"), f"{key}: no description"
        assert {"type", "const", "anyOf", "enum"} & node.keys(), f"{key}: no type"
        if key not in required and key not in NO_DEFAULT:
            assert "default" in node, f"{key}: optional without a default"


@pytest.mark.parametrize("version", list(catalog.versions()))
def test_root_schema_dispatches_with_a_discriminator(version):
    entry = catalog.version_entry(version)
    root = schemas.load_schema(version, entry.root)
    assert root["discriminator"]["propertyName"] == "speculators_model_type"
    assert set(root["discriminator"]["mapping"]) == set(entry.types)
    assert len(root["oneOf"]) == len(entry.types)


@pytest.mark.parametrize("version", list(catalog.versions()))
def test_root_schema_accepts_the_examples_of_its_version(version):
    from tests.common import EXAMPLES

    validator = schemas.root_validator(version)
    for example in EXAMPLES:
        config = json.loads((example / "config.json").read_text())
        if (
            config["speculators_model_type"] in catalog.version_entry(version).types
            and version == catalog.latest_version()
        ):
            assert not list(validator.iter_errors(config)), example.name


@pytest.mark.slow  # over 10 s: deselected by default; scripts/test.sh runs it
def test_generated_models_are_up_to_date():
    proc = subprocess.run(
        [sys.executable, "scripts/generate.py", "--check", "--only", "models"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


# -- codegen round trip: schema -> datamodel-codegen -> pydantic -> model_json_schema --------


def _types(node: dict, defs: dict) -> frozenset[str]:
    if "$ref" in node:
        target = defs.get(node["$ref"].rsplit("/", 1)[-1], {})
        return _types(target, defs) if target else frozenset({"object"})
    if "const" in node:
        return frozenset({_json_type(node["const"])})
    out: set[str] = set()
    if "type" in node:
        out.update([node["type"]] if isinstance(node["type"], str) else node["type"])
    elif "enum" in node:
        out.update(_json_type(v) for v in node["enum"])
    for branch in node.get("anyOf", []) + node.get("oneOf", []):
        out |= _types(branch, defs)
    if "integer" in out and "number" in out:
        out.discard("integer")
    return frozenset(out)


def _json_type(value) -> str:
    return {
        bool: "boolean",
        int: "integer",
        float: "number",
        str: "string",
        type(None): "null",
    }.get(type(value), "object" if isinstance(value, dict) else "array")


@pytest.mark.parametrize(("version", "model_type"), VERSION_TYPES)
def test_codegen_round_trip(version, model_type):
    canonical = schemas.type_schema(version, model_type)
    module = importlib.import_module(f"spec_format.models.v{version.replace('.', '_')}")
    model = getattr(module, canonical["title"])
    generated = model.model_json_schema()
    defs = generated.get("$defs", {})
    assert set(generated.get("required", [])) == set(canonical.get("required", []))
    assert set(generated["properties"]) == set(canonical["properties"])
    for key in canonical["properties"]:
        want = schemas.resolve(version, model_type, (key,))
        got = generated["properties"][key]
        got_types = _types(got, defs)
        if "default" not in want and key not in canonical.get("required", []):
            # an optional key without a default becomes `X | None = None` in pydantic
            got_types -= {"null"}
        assert got_types == _types(want, {}), key
        if "const" in want:
            assert got.get("const") == want["const"], key
        if "default" in want:
            assert got.get("default") == want["default"], key
        if "enum" in want:
            got_enum = set(got.get("enum", [])) | {
                v for b in got.get("anyOf", []) for v in b.get("enum", [])
            }
            assert got_enum == {v for v in want["enum"] if v is not None}, key


def test_generated_models_parse_examples_into_typed_objects():
    from tests.common import EXAMPLES

    module = importlib.import_module(
        f"spec_format.models.v{catalog.latest_version().replace('.', '_')}"
    )
    for example in EXAMPLES:
        config = json.loads((example / "config.json").read_text())
        model = module.SpeculatorsDraftConfig.model_validate(config).root
        assert model.speculators_model_type == config["speculators_model_type"]
        assert (
            model.transformer_layer_config.hidden_size
            == config["transformer_layer_config"]["hidden_size"]
        )
