"""The catalog is the one list of model types and per-type facts.

Guards: no module of the library spells out a list of model types (it derives one from the
catalog); the catalog agrees with the schemas, the tensor contracts and the forward modules.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from spec_format.facts import catalog, schemas
from spec_format.facts.contract import available_types

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = [*sorted((ROOT / "spec_format").rglob("*.py")), *sorted((ROOT / "cli").rglob("*.py"))]
TYPE_NAMES = frozenset(catalog.records())


def _type_lists(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            names = [
                e.value
                for e in node.elts
                if isinstance(e, ast.Constant) and isinstance(e.value, str)
            ]
            if sum(n in TYPE_NAMES for n in names) >= 2:
                yield node.lineno, names


def test_no_literal_list_of_model_types_outside_the_catalog():
    found = [
        f"{path.relative_to(ROOT)}:{line}: {names}"
        for path in LIBRARY
        for line, names in _type_lists(path)
    ]
    assert not found, (
        "lists of model types belong in schema/catalog.json; derive them with "
        "spec_format.facts.catalog (family(), with_feature(), types_where()):\n" + "\n".join(found)
    )


def test_every_catalogued_version_type_has_a_record():
    for version in catalog.versions():
        for model_type in catalog.version_entry(version).types:
            assert catalog.record(model_type) is not None, (version, model_type)


def test_records_agree_with_schemas_and_contracts():
    for name, rec in catalog.records().items():
        lines = catalog.versions_with_type(name)
        assert lines and lines[0] == rec.since, (name, lines, rec.since)
        if rec.family == "legacy":
            continue
        assert name in available_types(), f"{name}: no tensor contract"
        latest = lines[-1]
        props = schemas.type_schema(latest, name)["properties"]
        if rec.aux_key:
            assert rec.aux_key in props, (name, rec.aux_key)
        assert ("mask_token_id" in props) == rec.mask_token, name
        for key in rec.fingerprint_keys:
            assert any(key in schemas.type_schema(v, name)["properties"] for v in lines), (
                name,
                key,
            )
        first_default = rec.default_layer[0][0] if rec.default_layer else None
        assert first_default == rec.since, f"{name}: default_layer must start at {rec.since}"


@pytest.mark.parametrize("model_type", catalog.forward_types())
def test_forward_class_exists(model_type):
    module, cls = catalog.record(model_type).forward.split(":")
    assert hasattr(importlib.import_module(f"spec_format.forward.{module}"), cls)


def test_families_and_features_are_declared():
    families = set(catalog.data()["families"])
    for rec in catalog.records().values():
        assert rec.family in families, rec.name
    for feature in {f for rec in catalog.records().values() for f in rec.features}:
        assert catalog.with_feature(feature)


def test_default_layer_follows_versions():
    assert catalog.default_layer("eagle3", "0.6") == "llama"
    assert catalog.default_layer("eagle3", "0.7") == "qwen3"
    assert catalog.default_layer("eagle", "0.4") is None
