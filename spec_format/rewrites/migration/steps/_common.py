"""Edits several steps share: adding and dropping fields, dtype spelling, RoPE spelling.

Each helper works on an :class:`~spec_format.rewrites.migration.records.Editor`, so what it does is
recorded with the calling step's id.
"""

from __future__ import annotations

from typing import Any

from spec_format.base.errors import MigrationRefused
from spec_format.base.jsonload import spelled
from spec_format.facts import catalog
from spec_format.rewrites.migration.records import ABSENT, Editor, pointer

EAGLE3_FAMILY = catalog.family("chain")
TLC = "transformer_layer_config"


def layer_config(ed: Editor) -> dict[str, Any] | None:
    tlc = ed.doc.get(TLC)
    return tlc if isinstance(tlc, dict) else None


def add_field(ed: Editor, types: tuple[str, ...], key: str, value: Any, why: str) -> None:
    """Upgrade: write a field the target declares, with the value that keeps the old meaning."""
    if ed.model_type in types:
        ed.add_default(pointer(key), value, why)


def drop_field(ed: Editor, types: tuple[str, ...], key: str, old_meaning: Any, why: str) -> None:
    """Downgrade: remove a field the target does not declare. Lossy unless the value is what
    the older reader does anyway (``old_meaning``)."""
    if ed.model_type not in types or key not in ed.doc:
        return
    value = ed.doc[key]
    lossy = not (value == old_meaning and type(value) is type(old_meaning))
    ed.remove(
        pointer(key),
        why if not lossy else f"{why}; the value {spelled(value)} is lost",
        lossy=lossy,
    )


def refuse_type(ed: Editor, target: str) -> None:
    """Downgrade: stop when the target line has no such type (no fallback exists)."""

    t = ed.model_type
    available = catalog.version_entry(target).types
    if t not in available:
        raise MigrationRefused(
            f"speculators_model_type {t!r} does not exist in format {target} "
            f"(it knows {', '.join(available)}); no release of that line can load this "
            "checkpoint, so --allow-lossy cannot help"
        )


# -- dtype spelling ---------------------------------------------------------------------------
def respell_dtype(ed: Editor, to_key: str, why: str) -> None:
    """Use ``to_key`` (``dtype`` or ``torch_dtype``) at the top level and in the layer config."""
    from_key = "torch_dtype" if to_key == "dtype" else "dtype"
    if ed.model_type == "mlp" and to_key == "dtype":
        return  # mlp declares torch_dtype as a field of its own: never rename it
    places = [()]
    if layer_config(ed) is not None:
        places.append((TLC,))
    for base in places:
        node = ed.get(pointer(*base)) if base else ed.doc
        if not isinstance(node, dict) or from_key not in node:
            continue
        old = node[from_key]
        if to_key in node and node[to_key] != old and node[to_key] is not None and old is not None:
            ed.problem(
                "X012",
                f"{pointer(*base, from_key)} is {spelled(old)} but {pointer(*base, to_key)} is "
                f"{spelled(node[to_key])}; transformers refuses two different values. Keep the one "
                "that matches the tensors in model.safetensors and delete the other",
                pointer=pointer(*base, from_key),
                severity="error",
            )
            continue
        ed.remove(pointer(*base, from_key), why)
        if old is not None or to_key not in node:
            ed.set(pointer(*base, to_key), old, why)


# -- RoPE spelling ----------------------------------------------------------------------------
def rope_to_parameters(ed: Editor, why: str) -> None:
    """transformers 4 keys (rope_theta, rope_scaling) -> transformers 5 ``rope_parameters``."""
    tlc = layer_config(ed)
    if tlc is None or "rope_parameters" in tlc:
        return
    if "rope_theta" not in tlc and "rope_scaling" not in tlc:
        return
    theta = tlc.get("rope_theta", ABSENT)
    scaling = tlc.get("rope_scaling")
    params: dict[str, Any] = {}
    if isinstance(scaling, dict):
        params.update(scaling)
        if "type" in params and "rope_type" not in params:
            params["rope_type"] = params.pop("type")
    params.setdefault("rope_type", "default")
    if theta is not ABSENT:
        params["rope_theta"] = theta
    ed.remove(pointer(TLC, "rope_scaling"), why)
    ed.remove(pointer(TLC, "rope_theta"), why)
    ed.set(pointer(TLC, "rope_parameters"), params, why)


def rope_from_parameters(ed: Editor, why: str) -> None:
    """transformers 5 ``rope_parameters`` -> rope_theta + rope_scaling (what 4.x reads)."""
    tlc = layer_config(ed)
    if tlc is None or "rope_parameters" not in tlc:
        return
    params = tlc["rope_parameters"]
    if isinstance(params, dict) and params and all(isinstance(v, dict) for v in params.values()):
        # per-layer-type parameters ({"full_attention": {...}, "sliding_attention": {...}})
        distinct = {repr(sorted(v.items())) for v in params.values()}
        if len(distinct) != 1:
            ed.remove(
                pointer(TLC, "rope_parameters"),
                "per-layer-type RoPE settings differ and transformers 4 has one setting for "
                "all layers",
                lossy=True,
            )
            return
        params = next(iter(params.values()))
    if not isinstance(params, dict):
        ed.problem("R004", pointer=pointer(TLC, "rope_parameters"))
        return
    rest = {k: v for k, v in params.items() if k != "rope_theta"}
    scaling = None if rest.get("rope_type", "default") == "default" and len(rest) <= 1 else rest
    ed.remove(pointer(TLC, "rope_parameters"), why)
    if "rope_theta" in params:
        ed.set(pointer(TLC, "rope_theta"), params["rope_theta"], why)
    ed.set(pointer(TLC, "rope_scaling"), scaling, why)


def uses_sliding_window(tlc: dict[str, Any] | None) -> bool:
    if not tlc:
        return False
    layer_types = tlc.get("layer_types")
    if isinstance(layer_types, list) and "sliding_attention" in layer_types:
        return True
    return bool(tlc.get("use_sliding_window")) and tlc.get("sliding_window") is not None
