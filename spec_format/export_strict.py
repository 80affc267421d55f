"""The editor variant of the exported schemas: unknown keys flagged where the format is closed.

The exported schemas accept unknown keys, as every reader does (transformers keeps them as
attributes), so an editor shows nothing for ``norm_before_residul`` while ``specfmt validate``
reports it (C014). This variant adds, at the top level of each type's object (where the
format names every key a reader acts on), ``propertyNames`` with the enum of the known keys:
VS Code then underlines an unknown key as a warning (schema problems are warnings there) with
the known keys listed. It is for editors only; ``specfmt validate`` and the published schemas
keep accepting unknown keys. Nested objects stay open: ``transformer_layer_config`` is a
transformers config with keys of every model family.
"""

from __future__ import annotations

import copy
from typing import Any

from spec_format import catalog, export, schemas

SUFFIX = ".strict" + schemas.SCHEMA_SUFFIX


def strict_root(version: str) -> dict[str, Any]:
    """The draft-07 root schema of ``version`` with every type's top-level keys closed."""
    schema = copy.deepcopy(export.bundle_root(version, export.Draft.D07))
    definitions = schema.get("definitions", {})
    for model_type in catalog.version_entry(version).types:
        node = definitions.get(model_type)
        if not isinstance(node, dict) or not isinstance(node.get("properties"), dict):
            continue  # pragma: no cover - every type schema lists its properties
        node["propertyNames"] = {"enum": sorted(node["properties"])}
    schema["$id"] = schema["$id"].removesuffix(schemas.SCHEMA_SUFFIX) + SUFFIX
    schema["$comment"] = (
        schema.get("$comment", "") + " Editor variant (specfmt schema vscode --strict): unknown "
        "top-level keys are flagged; readers and specfmt validate accept them."
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
