"""The effective config: the value each top-level field has once the defaults of the
detected format version apply.

One function for the rules, ``fix``, ``migrate`` and ``forward``: a key the file holds
keeps its value; an absent key takes the ``default`` its type schema declares for that
format version; a key with no default stays absent. What *readers* make of an absent key
(where they disagree with the schema) is the reader table's business
(:mod:`spec_format.facts.readers`), not this module's.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from spec_format.facts import catalog, schemas

_MISSING = object()


@cache
def schema_defaults(version: str, model_type: str) -> dict[str, Any]:
    """``{key: default}`` for every top-level property of the type that declares one."""
    try:
        props = schemas.type_schema(version, model_type).get("properties", {})
    except Exception:  # unknown version/type: no defaults to speak of
        return {}
    out = {}
    for key in props:
        node = schemas.resolve(version, model_type, (key,))
        if "default" in node:
            out[key] = node["default"]
    return out


def schema_default(version: str, model_type: str, key: str) -> Any:
    """The ``default`` the type schema declares for a top-level key (``None`` if none)."""
    return schema_defaults(version, model_type).get(key)


def effective_config(config: dict[str, Any], version: str, model_type: str) -> dict[str, Any]:
    """``config`` with every schema default of ``version`` filled in (a new dict)."""
    return {**schema_defaults(version, model_type), **config}


def effective(ctx, key: str) -> Any:
    """The effective value of one top-level key for a rule's context."""
    value = ctx.config.get(key, _MISSING)
    if value is not _MISSING:
        return value
    return schema_default(ctx.format_version, ctx.model_type, key)


#: the aux layer ids key (chain family)
AUX_KEY = "eagle_aux_hidden_state_layer_ids"


def default_aux_ids(model_type: str, line: str, verifier: dict | None) -> list[int] | None:
    """The aux layer ids every reader derives from the verifier when the config has none
    (2, L//2, L-3), for the types and versions ``fix --verifier`` writes them for; None
    when it does not (another type, no verifier, no usable layer count)."""
    if model_type not in catalog.family("chain"):
        return None
    if not schemas.resolve(line, model_type, (AUX_KEY,)):
        return None
    n = verifier.get("num_hidden_layers") if isinstance(verifier, dict) else None
    return reader_default_aux_ids(n)


def reader_default_aux_ids(layers: object) -> list[int] | None:
    """2, L//2, L-3: the aux layers readers derive from a verifier of ``layers`` layers
    (None for a layer count that gives no three distinct layers)."""
    if isinstance(layers, int) and not isinstance(layers, bool) and layers >= 4:
        ids = [2, layers // 2, layers - 3]
        if ids[0] < ids[1] < ids[2]:  # 4 to 6 layers repeat or reverse one (4: [2, 2, 1])
            return ids
    return None
