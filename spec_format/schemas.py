"""Bundled JSON Schemas: the catalog, lookup by (format version, type), and validators.

Schemas are read from the package (``spec_format.schema``, the repository's
``schema/`` folder) with :mod:`importlib.resources`, so an installed wheel works from any
directory. Every file has an absolute ``$id``; references between files are resolved by a
:mod:`referencing` registry built from the bundled files only: nothing is fetched.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from spec_format import catalog
from spec_format.errors import UsageError
from spec_format.numguard import IntegerValidator

SCHEMA_SUFFIX = ".schema.json"


# The catalog owns the version table; these names stay here for the many callers that
# look schemas up by version.
VersionEntry = catalog.VersionEntry
RetiredType = catalog.RetiredType
versions = catalog.versions
latest_version = catalog.latest_version
retired_types = catalog.retired_types
known_types = catalog.known_types
version_entry = catalog.version_entry


def _schema_root():
    return resources.files("spec_format.schema")


def schema_uri(version: str, name: str) -> str:
    return f"{catalog.data()['base_uri']}{version}/{name}"


@cache
def _all_documents() -> dict[str, dict[str, Any]]:
    """Every bundled schema document keyed by its ``$id``."""
    docs: dict[str, dict[str, Any]] = {}

    def walk(folder) -> None:
        for item in folder.iterdir():
            if item.is_dir():
                walk(item)
            elif item.name.endswith(SCHEMA_SUFFIX):
                doc = json.loads(item.read_text(encoding="utf-8"))
                docs[doc["$id"]] = doc

    walk(_schema_root())
    return docs


@cache
def registry() -> Registry:
    resources_ = [
        (uri, Resource.from_contents(doc, default_specification=DRAFT202012))
        for uri, doc in _all_documents().items()
    ]
    return Registry().with_resources(resources_)


def load_schema(version: str, name: str) -> dict[str, Any]:
    """The raw document of ``<version>/<name>`` (``name`` with or without the suffix)."""
    if not name.endswith(SCHEMA_SUFFIX):
        name += SCHEMA_SUFFIX
    uri = schema_uri(version, name)
    try:
        return _all_documents()[uri]
    except KeyError:
        raise UsageError(f"no bundled schema {version}/{name}") from None


def type_schema(version: str, model_type: str) -> dict[str, Any]:
    entry = version_entry(version)
    if model_type not in entry.types:
        raise UsageError(
            f"format version {version} has no type {model_type!r}; "
            f"it knows {', '.join(entry.types)}"
        )
    return load_schema(version, model_type)


@cache
def validator(version: str, model_type: str) -> Draft202012Validator:
    """A compiled validator for one type of one version (cached for the process).

    It validates an inlined copy of the schema (every ``$ref`` replaced by its target;
    the schemas have no recursive references), which spares the registry lookups that
    otherwise dominate validation time. Messages and paths are the same.
    """
    schema = type_schema(version, model_type)
    resolver = registry().resolver(base_uri=schema["$id"])
    return IntegerValidator(_inline(schema, resolver), registry=registry())


def _inline(node: Any, resolver) -> Any:
    if isinstance(node, dict):
        if "$ref" in node:
            target, target_resolver = _deref(node, resolver)
            return _inline(target, target_resolver)
        return {
            k: _inline(v, resolver) if k not in ("const", "enum", "default", "examples") else v
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_inline(v, resolver) for v in node]
    return node


@cache
def model_class(version: str, model_type: str):
    """The generated pydantic model of one type (imports spec_format.models lazily)."""
    import importlib

    module = importlib.import_module(f"spec_format.models.v{version.replace('.', '_')}")
    return getattr(module, type_schema(version, model_type)["title"])


def accepts_strictly(version: str, model_type: str, config: dict[str, Any]) -> bool:
    """True when the generated model accepts ``config`` in strict mode."""
    from pydantic import ValidationError

    try:
        model_class(version, model_type).model_validate(config, strict=True)
    except ValidationError:
        return False
    return True


@cache
def root_validator(version: str) -> Draft202012Validator:
    entry = version_entry(version)
    return IntegerValidator(load_schema(version, entry.root), registry=registry())


@cache
def resolve(version: str, model_type: str, pointer_parts: tuple[str, ...]) -> dict[str, Any]:
    """The (``$ref``-followed) subschema describing the property at ``pointer_parts``,
    with sibling keywords of a ``$ref`` merged over the referenced schema. Returns ``{}``
    when the path leaves the declared properties. Cached: callers must not mutate it."""
    schema = type_schema(version, model_type)
    resolver = registry().resolver(base_uri=schema["$id"])
    node, resolver = _deref(schema, resolver)
    for part in pointer_parts:
        props = node.get("properties", {})
        if part in props:
            node, resolver = _deref(props[part], resolver)
        elif part.isdigit() and "items" in node:
            node, resolver = _deref(node["items"], resolver)
        else:
            return {}
    return node


def _deref(node: dict[str, Any], resolver) -> tuple[dict[str, Any], Any]:
    while isinstance(node, dict) and "$ref" in node:
        resolved = resolver.lookup(node["$ref"])
        merged = dict(resolved.contents)
        merged.update({k: v for k, v in node.items() if k != "$ref"})
        node, resolver = merged, resolved.resolver
    return node, resolver
