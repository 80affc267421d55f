"""The editor variant of the exported schemas: unknown keys flagged where the format is closed.

The exported schemas accept unknown keys, as every reader does (transformers keeps them as
attributes), so an editor shows nothing for ``norm_before_residul`` while ``specfmt validate``
reports it (C014). This variant adds, at the top level of each type's object (where the
format names every key a reader acts on), ``propertyNames`` with the enum of the known keys:
VS Code then underlines an unknown key as a warning (schema problems are warnings there) with
the known keys listed. The nested objects the format defines completely are closed the same
way (:data:`CLOSED`: ``speculators_config``, its ``verifier`` and each proposal method, whose
unlisted keys speculators drops on load). It is for editors only; ``specfmt validate`` and
the published schemas keep accepting unknown keys. ``transformer_layer_config`` stays open:
it is a transformers config with keys of every model family, so an editor cannot tell a typo
there from a key of another family (``specfmt validate`` reports the near-misses, C014).
"""

from __future__ import annotations

import copy
from typing import Any

from spec_format.facts import catalog, export, schemas

SUFFIX = ".strict" + schemas.SCHEMA_SUFFIX

#: the nested objects the format defines completely, as property paths below a type (``*``:
#: every item of a list); the places C014 checks, less ``transformer_layer_config``
CLOSED: tuple[tuple[str, ...], ...] = (
    ("speculators_config",),
    ("speculators_config", "verifier"),
    ("speculators_config", "proposal_methods", "*"),
)


def _resolve(schema: dict[str, Any], node: Any) -> Any:
    while isinstance(node, dict) and "$ref" in node:
        node = schema["definitions"][node["$ref"].removeprefix("#/definitions/")]
    return node


def _objects(schema: dict[str, Any], node: Any, path: tuple[str, ...]) -> list[dict[str, Any]]:
    """The object schemas at ``path`` below ``node``; a list item dispatched by ``if``/``then``
    (the proposal types of 0.1-0.2) gives each dispatched schema."""
    node = _resolve(schema, node)
    if not isinstance(node, dict):
        return []
    if not path:
        thens = [_resolve(schema, b["then"]) for b in node.get("allOf", ()) if "then" in b]
        return [n for n in thens if isinstance(n, dict)] or [node]
    head, rest = path[0], path[1:]
    child = node.get("items") if head == "*" else node.get("properties", {}).get(head)
    return _objects(schema, child, rest) if child is not None else []


def _close(node: dict[str, Any]) -> None:
    if isinstance(node.get("properties"), dict):
        node["propertyNames"] = {"enum": sorted(node["properties"])}


def strict_root(version: str) -> dict[str, Any]:
    """The draft-07 root schema of ``version`` with every type's top-level keys, and the keys
    of the nested objects of :data:`CLOSED`, closed."""
    schema = copy.deepcopy(export.bundle_root(version, export.Draft.D07))
    definitions = schema.get("definitions", {})
    for model_type in catalog.version_entry(version).types:
        node = definitions.get(model_type)
        if not isinstance(node, dict) or not isinstance(node.get("properties"), dict):
            continue  # pragma: no cover - every type schema lists its properties
        node["propertyNames"] = {"enum": sorted(node["properties"])}
        for path in CLOSED:
            for nested in _objects(schema, node, path):
                _close(nested)
    schema["$id"] = schema["$id"].removesuffix(schemas.SCHEMA_SUFFIX) + SUFFIX
    schema["$comment"] = (
        schema.get("$comment", "") + " Editor variant (specfmt schema vscode --strict): unknown "
        "keys are flagged at the top level and in speculators_config, its verifier and its "
        "proposal methods; readers and specfmt validate accept them."
    ).strip()
    return schema


def strict_file(version: str) -> export.ExportedFile:
    name = export.root_name(version)
    path = export.export_path(version, name, export.Draft.D07)
    return export.ExportedFile(
        path.removesuffix(schemas.SCHEMA_SUFFIX) + SUFFIX,
        version,
        name,
        export.Draft.D07,
        strict_root(version),
    )
