"""Which speculators_model_type values share an architecture, and what each can build.

Kept in one place because rules, the contract, migrations and the forward all branch on
these groupings.
"""

from __future__ import annotations

from typing import Any

from spec_format import schemas

#: EAGLE-3 and its parallel variant: a chain draft fed by aux hidden states through fc
EAGLE_FAMILY = ("eagle3", "peagle")
#: block drafts that predict block_size positions in one pass
DFLASH_FAMILY = ("dflash", "dflash2", "dspark", "xpress")

#: decoder families each type's readers can build (vLLM and speculators agree)
BUILDABLE_LAYER_TYPES: dict[str, tuple[str, ...]] = {
    "eagle3": ("llama", "qwen3"),
    "peagle": ("llama", "qwen3"),
    "mtp": ("qwen3", "qwen3_next", "qwen3_5_text", "qwen3_5_moe_text"),
}

#: aux layer ids key per family
AUX_IDS_KEY = {
    **{t: "eagle_aux_hidden_state_layer_ids" for t in EAGLE_FAMILY},
    **{t: "aux_hidden_state_layer_ids" for t in DFLASH_FAMILY},
}


def schema_default(version: str, model_type: str, key: str) -> Any:
    """The ``default`` the type schema declares for a top-level key (``None`` if none)."""
    try:
        return schemas.resolve(version, model_type, (key,)).get("default")
    except Exception:  # unknown version/type: no default to speak of
        return None


def effective(ctx, key: str) -> Any:
    """The value a config holds for ``key``, or the schema default when absent."""
    if key in ctx.config:
        return ctx.config[key]
    return schema_default(ctx.format_version, ctx.model_type, key)
