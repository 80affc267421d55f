"""The facts a draft/verifier pairing depends on, read the way transformers reads a config.

One reader for both sides (the verifier's merged text config and the draft's
``transformer_layer_config``): RoPE from ``rope_parameters`` (transformers 5, possibly one
block per attention type) or ``rope_scaling`` + ``rope_theta`` (transformers 4), with the
defaults of the config's ``model_type`` for missing keys; the positional range an engine
derives from them; the dtype; the quantization block; a rotated residual stream. The
per-model_type defaults and the known quantization methods are data:
``schema/verifiers.json``. Every reader takes any JSON value and never raises.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from spec_format.base.jsonload import json_int, json_number
from spec_format.facts import package_data

#: the attention type whose RoPE a draft's (full-attention) layers correspond to
FULL_ATTENTION = "full_attention"
_NOT_SCALING = ("rope_theta", "rope_type", "type")
#: rope types whose max_position_embeddings already states the extended range (vLLM)
_RANGE_STATED = ("su", "longrope", "llama3")


@cache
def table() -> dict[str, Any]:
    text = (package_data.schema_folder() / "verifiers.json").read_text(encoding="utf-8")
    return json.loads(text)


def defaults(model_type: Any) -> dict[str, Any]:
    """transformers' defaults for ``model_type`` (``{}`` for a type not in the table)."""
    found = table()["defaults"].get(model_type) if isinstance(model_type, str) else None
    return found if isinstance(found, dict) else {}


@dataclass(frozen=True)
class Rope:
    """What a full-attention layer rotates with."""

    theta: float | None
    kind: str
    scaling: dict[str, float] = field(default_factory=dict)  # factor, original range, ...
    where: str = "rope_theta"  # the key it was read from, or "the llama defaults"

    @property
    def rescales(self) -> bool:
        return self.kind in table()["scaling_rope_types"]

    def describe(self) -> str:
        theta = "theta unknown" if self.theta is None else f"theta {self.theta:g}"
        if self.kind == "default":
            return theta
        extra = ", ".join(f"{k} {v:g}" for k, v in sorted(self.scaling.items()))
        return f"{theta}, {self.kind} scaling" + (f" ({extra})" if extra else "")


def rope_of(cfg: Mapping[str, Any], model_type: Any = None) -> Rope:
    """The RoPE of ``cfg`` (either spelling), missing keys from the model type's defaults."""
    mt = model_type if model_type is not None else cfg.get("model_type")
    base = defaults(mt)
    params = cfg.get("rope_parameters")
    node: Mapping[str, Any] | None
    if isinstance(params, Mapping) and params:
        node, where = params, "rope_parameters"
        per_type = {k: v for k, v in params.items() if isinstance(v, Mapping)}
        if per_type and len(per_type) == len(params):  # one block per attention type
            key = FULL_ATTENTION if FULL_ATTENTION in per_type else sorted(per_type)[0]
            node, where = per_type[key], f"rope_parameters.{key}"
    elif "rope_scaling" in cfg or "rope_theta" in cfg:
        node = cfg.get("rope_scaling") if isinstance(cfg.get("rope_scaling"), Mapping) else None
        where = "rope_scaling" if node else "rope_theta"
        if "rope_scaling" not in cfg and isinstance(base.get("rope_scaling"), Mapping):
            node = base["rope_scaling"]
    else:
        node = base.get("rope_scaling") if isinstance(base.get("rope_scaling"), Mapping) else None
        where = f"the {mt} defaults" if base else "rope_theta"
    node = node or {}
    theta = json_number(node.get("rope_theta"))
    if theta is None:
        theta = json_number(cfg.get("rope_theta"))
    if theta is None:
        theta = json_number(base.get("rope_theta"))
    kind = node.get("rope_type", node.get("type")) or "default"
    scaling = {
        k: float(n)
        for k, v in node.items()
        if k not in _NOT_SCALING and (n := json_number(v)) is not None
    }
    # transformers 5 moved partial_rotary_factor into rope_parameters; 4 kept it top level
    partial = json_number(cfg.get("partial_rotary_factor", base.get("partial_rotary_factor")))
    if partial is not None and "partial_rotary_factor" not in scaling:
        scaling["partial_rotary_factor"] = partial
    return Rope(theta, kind if isinstance(kind, str) else repr(kind), scaling, where)


def positional_range(cfg: Mapping[str, Any], model_type: Any = None) -> tuple[int | None, str]:
    """The longest sequence an engine serves with ``cfg``, and how it was derived, as vLLM
    derives it: ``max_position_embeddings`` times the rope factor, for yarn
    ``original_max_position_embeddings`` times the factor; llama3, longrope (su) and the
    model types of ``positions_already_scaled`` (Gemma 3) state the extended range."""
    mt = model_type if model_type is not None else cfg.get("model_type")
    stated = json_int(cfg.get("max_position_embeddings"), low=1)
    key = "max_position_embeddings"
    if stated is None:
        stated = json_int(defaults(mt).get("max_position_embeddings"), low=1)
        key = f"max_position_embeddings (the {mt} default)"
    rope = rope_of(cfg, mt)
    factor = rope.scaling.get("factor")
    stated_scaled = isinstance(mt, str) and any(
        name in mt for name in table()["positions_already_scaled"]
    )
    if rope.kind in _RANGE_STATED or rope.kind == "default" or stated_scaled or not factor:
        return stated, f"{key} {stated}"
    origin = rope.scaling.get("original_max_position_embeddings") if rope.kind == "yarn" else None
    if origin:
        key = "original_max_position_embeddings"
    else:
        origin = stated
    if origin is None or factor <= 0 or origin * factor > 2**53:
        return stated, f"{key} {stated}"
    return int(origin * factor), f"{key} {origin:g} x {rope.kind} factor {factor:g}"


_DTYPES = {"bf16": "bfloat16", "fp16": "float16", "half": "float16", "fp32": "float32"}


def dtype_of(cfg: Mapping[str, Any]) -> tuple[str | None, str]:
    """(dtype, key): transformers 5 ``dtype`` first, then 4's ``torch_dtype``."""
    for key in ("dtype", "torch_dtype"):
        value = cfg.get(key)
        if isinstance(value, str) and value:
            value = value.removeprefix("torch.")
            return _DTYPES.get(value, value), key
    return None, "dtype"


@dataclass(frozen=True)
class Quant:
    """The verifier's ``quantization_config``."""

    method: str | None  # quant_method as written (None: missing or not a string)
    known: bool
    detail: str  # what the method stores, from the table, plus bits when stated
    key: str = "quantization_config"

    def describe(self) -> str:
        name = repr(self.method) if self.method is not None else "with no quant_method"
        return f"{name} ({self.detail})" if self.detail else name


_BITS = ("bits", "num_bits", "w_bit", "weight_bits")


def quantization_of(cfg: Mapping[str, Any]) -> Quant | None:
    """The quantization block (``quantization_config``, or ``compression_config`` as early
    compressed-tensors wrote it); ``None`` for an unquantized config."""
    key = next((k for k in ("quantization_config", "compression_config") if k in cfg), None)
    if key is None or cfg[key] is None:
        return None
    block = cfg[key]
    if not isinstance(block, Mapping):
        return Quant(None, False, f"{key} is not an object", key)
    method = block.get("quant_method")
    if not isinstance(method, str) or not method:
        return Quant(None, False, "", key)
    known = table()["quantization"].get(method.lower())
    bits = _bits(block)
    detail = known or "a method specfmt does not know"
    if bits:
        detail += f", {bits}-bit"
    return Quant(method, known is not None, detail, key)


def _bits(block: Mapping[str, Any]) -> int | None:
    for k in _BITS:
        if (b := json_int(block.get(k), low=1, high=64)) is not None:
            return b
    if block.get("load_in_4bit") is True:
        return 4
    if block.get("load_in_8bit") is True:
        return 8
    groups = block.get("config_groups")
    if isinstance(groups, Mapping):
        for group in groups.values():
            weights = group.get("weights") if isinstance(group, Mapping) else None
            if isinstance(weights, Mapping) and (b := _bits(weights)) is not None:
                return b
    return None


def rotation_of(cfg: Mapping[str, Any], name: str | None) -> str | None:
    """Why the verifier's residual stream looks rotated (QuaRot/SpinQuant R1 merged into its
    weights), or ``None``."""
    rot = table()["rotations"]
    low = (name or "").lower()
    for marker in rot["name_markers"]:
        if marker in low:
            return f"its name {name!r} says {marker}"
    nodes = [cfg] + [v for v in cfg.values() if isinstance(v, Mapping)]
    for node in nodes:
        for flag in rot["config_flags"]:
            if node.get(flag) not in (None, False, 0, "", {}, []):
                return f"its config sets {flag}: {node.get(flag)!r}"
    quant = cfg.get("quantization_config")
    transform = quant.get("transform_config") if isinstance(quant, Mapping) else None
    groups = {}
    if isinstance(transform, Mapping):
        for key in ("config_groups", "transform_groups"):
            if isinstance(transform.get(key), Mapping):
                groups.update(transform[key])
    for gname, scheme in groups.items():
        applies = scheme.get("apply") if isinstance(scheme, Mapping) else None
        for args in applies if isinstance(applies, list) else []:
            targets = args.get("targets") if isinstance(args, Mapping) else None
            for target in targets if isinstance(targets, list) else []:
                if isinstance(target, str) and any(t in target for t in rot["residual_targets"]):
                    return (
                        f"quantization_config.transform_config group {gname!r} rotates "
                        f"{target!r}, the residual stream"
                    )
    return None


_HF_CACHE = re.compile(r"models--([^/\\]+?)--([^/\\]+)")


def identity(path: Any) -> str | None:
    """Which checkpoint a verifier path names: ``ORG/NAME`` for ``hf://ORG/NAME`` and the
    Hugging Face cache layout, else the folder that holds the ``config.json``."""
    text = str(path)
    if text.startswith("hf://"):
        return text[5:].split("@")[0].removesuffix("/config.json").strip("/") or None
    if m := _HF_CACHE.search(text):
        return f"{m.group(1)}/{m.group(2)}"
    parts = [p for p in re.split(r"[/\\]", text) if p and p != "."]
    if parts and parts[-1].endswith(".json"):
        parts = parts[:-1]
    return parts[-1] if parts else None


def released_quantized(verifier: Any, named: str | None) -> bool:
    """The verifier config is a model as its makers released it, quantized (``model_type``
    and ``quant_method`` as the table's ``released_quantized`` lists them), and the draft
    names a checkpoint of that model family (its repository name holds the model type,
    ``gpt-oss`` for ``gpt_oss``)."""
    if not isinstance(verifier, dict) or not isinstance(named, str):
        return False
    model_type = verifier.get("model_type")
    methods = (
        table().get("released_quantized", {}).get(model_type)
        if isinstance(model_type, str)
        else None
    )
    quant = quantization_of(verifier)
    if not methods or quant is None or not quant.method or quant.method.lower() not in methods:
        return False
    family = model_type.replace("_", "-").lower()
    return family in named.rsplit("/", 1)[-1].lower().replace("_", "-")


def same_checkpoint(named: str | None, given: str | None) -> bool:
    """Whether two names end in the same repository name (case-insensitive)."""
    if not named or not given:
        return False
    last = lambda s: s.rstrip("/").rsplit("/", 1)[-1].lower()  # noqa: E731
    return last(named) == last(given)


_SIZE = re.compile(r"(?<![a-z0-9.])(\d+(?:\.\d+)?)b(?![a-z0-9])")


def size_tag(name: str | None) -> str | None:
    """``8b``, ``70b``, ``80b-a3b``: the parameter count a repository name states."""
    if not name:
        return None
    low = name.rsplit("/", 1)[-1].lower()
    sizes = _SIZE.findall(low)
    active = re.findall(r"(?<![a-z0-9])a(\d+(?:\.\d+)?)b(?![a-z0-9])", low)
    if not sizes:
        return None
    return f"{sizes[0]}b" + (f"-a{active[0]}b" if active else "")
