"""What one verifier forward costs, in parameters read per token.

Two sources, best first:

* the verifier's safetensors headers (a local directory with its weights, or
  ``hf://ORG/NAME``): the sum of every tensor's element count;
* its ``config.json`` alone, for the decoder families of ``schema/decoders.json``
  (dense Llama / Mistral / Qwen2 / Qwen3 and the Qwen3-MoE, Mixtral and gpt-oss
  mixture-of-experts layouts).

For a mixture-of-experts verifier the count that matters per token is the *active* one:
every non-expert parameter plus ``k / E`` of the expert parameters (``k`` experts routed per
token out of ``E``). Both sources report it and name the formula.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from spec_format.base.errors import UsageError
from spec_format.base.jsonload import json_whole, spelled
from spec_format.parsers.checkpoint import HEADER_PADDING, STRAY_SAFETENSORS, load_checkpoint
from spec_format.parsers.verifier import VerifierInfo, load_verifier, open_remote_verifier

#: Checkpoint issues that leave every tensor's shape trustworthy.
HARMLESS_ISSUES = frozenset({HEADER_PADDING, STRAY_SAFETENSORS})


@cache
def decoders() -> dict[str, Any]:
    text = (resources.files("spec_format.schema") / "decoders.json").read_text(encoding="utf-8")
    return json.loads(text)


@dataclass(frozen=True)
class Experts:
    """The routed experts of a mixture-of-experts verifier."""

    count: int  # E
    routed: int  # k, experts per token
    parameters: int  # every expert of every layer
    count_key: str
    routed_key: str

    @property
    def inactive(self) -> int:
        """Expert parameters a token does not touch: (1 - k/E) of them."""
        return self.parameters - self.parameters * self.routed // self.count


@dataclass
class TargetParams:
    total: int  # every parameter of the verifier
    source: str  # "header" or "config"
    where: str  # what was read
    model_type: str | None
    formula: str  # how ``per_token`` was obtained, in words
    experts: Experts | None = None
    components: dict[str, int] = field(default_factory=dict)  # config formula parts
    notes: list[str] = field(default_factory=list)
    bytes_read: int = 0
    hidden_size: int | None = None  # as the config says, to check the pairing
    vocab_size: int | None = None

    @property
    def per_token(self) -> int:
        """The parameters one token's forward reads: all of them, or the active ones."""
        return self.total - (self.experts.inactive if self.experts else 0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "parameters": self.per_token,
            "total_parameters": self.total,
            "active": self.experts is not None,
            "source": self.source,
            "where": self.where,
            "model_type": self.model_type,
            "formula": self.formula,
            "experts": None
            if self.experts is None
            else {
                "count": self.experts.count,
                "per_token": self.experts.routed,
                "parameters": self.experts.parameters,
                "count_key": self.experts.count_key,
                "per_token_key": self.experts.routed_key,
            },
            "components": dict(self.components),
            "notes": list(self.notes),
        }


# -- entry point ---------------------------------------------------------------------------


def target_params(location: str | os.PathLike[str]) -> TargetParams:
    """Count the verifier at ``location`` (``--verifier``): a directory (its safetensors
    headers when it has weights, else its config), a ``config.json`` (always its formula) or
    ``hf://ORG/NAME[@REV]`` (headers when the repository has weights). Raises
    :class:`UsageError` naming the fix when it cannot."""
    text = os.fspath(location)
    if text.startswith("hf://"):
        info, ckpt = open_remote_verifier(text)
        with ckpt:
            if ckpt.has_weights:
                result = _from_header(ckpt, info, text)
            else:
                result = from_config(info, str(info.path))
            result.bytes_read = ckpt.bytes_read
        return _sizes(result, info)
    info = load_verifier(text)
    directory = Path(text)
    if not directory.is_dir() or not any(directory.glob("*.safetensors")):
        return _sizes(from_config(info, str(info.path)), info)  # a config.json named alone
    ckpt = load_checkpoint(directory)
    with ckpt:
        result = _from_header(ckpt, info, str(directory))
        result.bytes_read = ckpt.bytes_read
    return _sizes(result, info)


def _sizes(result: TargetParams, info: VerifierInfo) -> TargetParams:
    result.hidden_size, result.vocab_size = info.hidden_size, info.vocab_size
    return result


# -- from the headers ----------------------------------------------------------------------


def _from_header(ckpt, info: VerifierInfo, shown: str) -> TargetParams:
    problems = [i for i in ckpt.issues if i.rule not in HARMLESS_ISSUES]
    if problems or not ckpt.complete:
        first = problems[0].message if problems else "some weights could not be read"
        raise UsageError(
            f"--verifier {shown}: the safetensors headers cannot be counted ({first}); fix the "
            "checkpoint, or pass its config.json alone to count from the config"
        )
    total = sum(t.numel for t in ckpt.tensors.values())
    pattern = re.compile(decoders()["expert_tensor_pattern"])
    expert_params = sum(t.numel for t in ckpt.tensors.values() if pattern.search(t.name))
    model_type = info.get("model_type") if isinstance(info.get("model_type"), str) else None
    notes = []
    packed = sorted(
        {t.dtype for t in ckpt.tensors.values() if t.dtype[0] in "IU" and t.dtype != "BOOL"}
    )
    if packed:
        notes.append(
            f"some tensors are stored as {', '.join(packed)} (quantized or packed weights such "
            "as MXFP4 blocks): their element count is not their parameter count"
        )
    result = TargetParams(
        total=total,
        source="header",
        where=shown,
        model_type=model_type,
        formula="sum of the element counts of every tensor in the safetensors headers",
        notes=notes,
    )
    routing = _routing(info, _family(model_type).get("moe") if model_type else None)
    if routing is not None:
        if expert_params == 0:
            notes.append(
                "the config routes tokens to experts but no tensor name matches "
                f"{decoders()['expert_tensor_pattern']!r}: every parameter counted as active"
            )
        else:
            result.experts = Experts(routing[0], routing[1], expert_params, routing[2], routing[3])
            result.formula = _active_formula(result.experts, "tensors named *.experts.*")
    return result


# -- from config.json ----------------------------------------------------------------------


def _family(model_type: str) -> dict[str, Any]:
    return decoders()["families"].get(model_type, {})


def _routing(info: VerifierInfo, moe: dict[str, Any] | None) -> tuple[int, int, str, str] | None:
    """(E, k, E's key, k's key) when the config routes tokens to experts."""
    keys = decoders()["moe_keys"]
    count_keys = [moe["experts"]] if moe else keys["experts"]
    routed_keys = [moe["top_k"]] if moe else keys["top_k"]
    count_key = next((k for k in count_keys if info.get(k) not in (None, 0)), None)
    if count_key is None:
        return None
    if json_whole(info.get(count_key), low=1) is None:  # 10**30, 8.5, "8": not a count
        raise UsageError(
            f"--verifier {info.path}: {info.where(count_key)} = {spelled(info.get(count_key))} "
            "is not a number of experts (a whole number from 1 to 2**63-1); fix the config"
        )
    routed_key = next((k for k in routed_keys if json_whole(info.get(k)) is not None), None)
    if routed_key is None:
        raise UsageError(
            f"--verifier {info.path}: {info.where(count_key)} says the verifier has experts "
            f"but none of {', '.join(routed_keys)} says how many a token uses; add it"
        )
    count, routed = json_whole(info.get(count_key)), json_whole(info.get(routed_key))
    assert count is not None and routed is not None
    if not 0 < routed <= count:
        raise UsageError(
            f"--verifier {info.path}: {info.where(routed_key)} = {routed} is not between 1 and "
            f"{info.where(count_key)} = {count}"
        )
    return count, routed, info.where(count_key), info.where(routed_key)


def _active_formula(experts: Experts, what: str) -> str:
    return (
        f"active parameters per token = total - (1 - k/E) x expert parameters ({what}; "
        f"E = {experts.count} experts from {experts.count_key}, k = {experts.routed} per "
        f"token from {experts.routed_key})"
    )


def from_config(info: VerifierInfo, shown: str) -> TargetParams:
    """Count a verifier from its config.json by the layout of its decoder family."""
    model_type = info.get("model_type")
    families = decoders()["families"]
    if not isinstance(model_type, str) or model_type not in families:
        raise UsageError(
            f"--verifier {shown}: model_type {model_type!r} is not a decoder family specfmt "
            f"can count from config.json alone ({', '.join(families)}); pass the verifier's "
            "directory with its safetensors files, or hf://ORG/NAME, to count its headers"
        )
    family = families[model_type]

    def need(key: str) -> int:
        number = json_whole(info.get(key))  # 64.0 is 64, as the V rules read it
        if number is None or number < 0:
            raise UsageError(
                f"--verifier {shown}: {info.where(key)} must be a non-negative integer to "
                f"count a {model_type} decoder (found {info.get(key)!r})"
            )
        return number

    def flag(key: str | None) -> bool:
        return bool(key) and info.get(key) is True

    H, L, V = need("hidden_size"), need("num_hidden_layers"), need("vocab_size")
    nH = need("num_attention_heads")
    nKV = need("num_key_value_heads") if info.get("num_key_value_heads") is not None else nH
    if info.get("head_dim") is not None:
        hd = need("head_dim")
    elif nH and H % nH == 0:
        hd = H // nH
    else:
        raise UsageError(f"--verifier {shown}: no head_dim, and hidden_size / heads is not whole")
    tied = info.get("tie_word_embeddings")
    if not isinstance(tied, bool):
        tied = decoders()["tie_word_embeddings_default"]

    q, kv = nH * hd, nKV * hd
    attention = H * q + 2 * H * kv + q * H
    if flag(family.get("attention_bias")):
        attention += q + 2 * kv + H
    elif family.get("qkv_bias"):
        attention += q + 2 * kv
    if family.get("qk_norm"):
        attention += 2 * hd
    if family.get("attention_sinks"):
        attention += nH
    norms = 2 * H

    moe = family.get("moe")
    routing = _routing(info, moe) if moe else None
    sparse_layers = 0
    dense_mlp = 0
    router = expert_params = 0
    if routing is not None:
        E = routing[0]
        Ie = need(moe["expert_intermediate"])
        step = (
            need(moe["sparse_step"])
            if moe.get("sparse_step") and info.get(moe["sparse_step"]) is not None
            else 1
        )
        dense_only = info.get(moe["dense_layers"]) if moe.get("dense_layers") else None
        dense_only = (
            {i for i in dense_only if isinstance(i, int)} if isinstance(dense_only, list) else set()
        )
        # layer i routes to experts when (i + 1) % step == 0 and it is not listed as dense
        # (Qwen-MoE's schedule; counted without a loop: L can be anything a config says)
        if step > 0:
            listed = sum(1 for i in dense_only if 0 <= i < L and (i + 1) % step == 0)
            sparse_layers = L // step - listed
        per_expert = 3 * H * Ie + (2 * Ie + H if moe.get("expert_bias") else 0)
        router = sparse_layers * (H * E + (E if moe.get("router_bias") else 0))
        expert_params = sparse_layers * E * per_expert
    dense_layers = L - sparse_layers
    if dense_layers:
        Id = need("intermediate_size")
        mlp = 3 * H * Id + (2 * Id + H if flag(family.get("mlp_bias")) else 0)
        dense_mlp = dense_layers * mlp

    components = {
        "embed_tokens": V * H,
        "lm_head": 0 if tied else V * H,
        "attention": L * attention,
        "mlp": dense_mlp,
        "router": router,
        "experts": expert_params,
        "norms": L * norms + H,
    }
    total = sum(components.values())
    head = "tied to the embedding" if tied else "V x H"
    if not sparse_layers:
        layers = f"{L} layers x (attention + 2 norms + MLP)"
    elif not dense_layers:
        layers = f"{L} layers x (attention + 2 norms + router + {routing[0]} experts)"
    else:
        layers = (
            f"{L} layers x (attention + 2 norms) + MLP in {dense_layers} dense layers + "
            f"router + {routing[0]} experts in {sparse_layers} layers"
        )
    formula = (
        f"{model_type} decoder from config.json: embedding V x H + lm_head ({head}) + "
        f"{layers} + final norm"
    )
    result = TargetParams(
        total=total,
        source="config",
        where=shown,
        model_type=model_type,
        formula=formula,
        components=components,
    )
    if routing is not None and expert_params:
        result.experts = Experts(routing[0], routing[1], expert_params, routing[2], routing[3])
        result.formula = formula + "; " + _active_formula(result.experts, "the experts' MLPs")
    return result
