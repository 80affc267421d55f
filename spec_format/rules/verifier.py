"""Verifier rules (V): the draft config against the target model's ``config.json``.

They run when ``specfmt validate --verifier PATH`` names the verifier (a ``config.json`` or
its directory; multimodal configs are read through their text config, see
:mod:`spec_format.parsers.verifier`). Without ``--verifier`` the run notes once which of them were
skipped.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from spec_format.base.jsonload import json_int, json_number, json_strings
from spec_format.base.report import Severity
from spec_format.facts import catalog, pairing, writers
from spec_format.parsers.verifier import VerifierInfo
from spec_format.rules.base import Context, Hit, Layer, Rule


def verifier_info(ctx: Context) -> VerifierInfo:
    info = ctx.options.get("verifier_info")
    if isinstance(info, VerifierInfo):
        return info
    return VerifierInfo(path=ctx.verifier_path, config=dict(ctx.verifier or {}))


def _where(info: VerifierInfo, key: str) -> str:
    return f"{info.where(key)} in {info.path}"


class _VerifierRule(Rule):
    abstract = True
    layer = Layer.VERIFIER
    severity = Severity.ERROR
    requires = frozenset({"verifier"})


class VerifierHiddenSizeMismatch(_VerifierRule):
    """The draft expects verifier hidden states of another width than the verifier has."""

    id = "V001"
    name = "verifier-hidden-size-mismatch"
    since = "0.1.0"
    references = ("vllm-project/vllm#18906", "vllm-project/vllm#38073")

    def check(self, ctx: Context) -> Iterator[Hit]:
        info = verifier_info(ctx)
        target = json_int(ctx.config.get("target_hidden_size"))
        key, pointer = "target_hidden_size", "/target_hidden_size"
        if target is None:
            target = json_int(ctx.layer_config.get("hidden_size"))
            key, pointer = (
                "transformer_layer_config.hidden_size",
                "/transformer_layer_config/hidden_size",
            )
        theirs = info.hidden_size
        if target is None or theirs is None or target == theirs:
            return
        yield Hit(
            f"{key} is {target}, but the verifier's hidden_size is {theirs} ({_where(info, 'hidden_size')}); "
            "the draft consumes the verifier's hidden states, so it was built for another model: "
            "pair it with its own verifier",
            pointer=pointer,
        )


class VerifierVocabMismatch(_VerifierRule):
    """The draft's `vocab_size` is not the verifier's vocabulary size."""

    id = "V002"
    name = "verifier-vocab-mismatch"
    since = "0.1.0"
    references = ("vllm-project/speculators#188",)

    def check(self, ctx: Context) -> Iterator[Hit]:
        info = verifier_info(ctx)
        ours, theirs = json_int(ctx.layer_config.get("vocab_size")), info.vocab_size
        if ours is None or theirs is None or ours == theirs:
            return
        yield Hit(
            f"transformer_layer_config.vocab_size is {ours}, but the verifier's vocab_size is "
            f"{theirs} ({_where(info, 'vocab_size')}); it must be the verifier's vocabulary "
            "(the draft's own size goes in draft_vocab_size)",
            pointer="/transformer_layer_config/vocab_size",
        )


def _aux_ids(ctx: Context) -> tuple[str, list[int]] | None:
    key = catalog.aux_key(ctx.model_type)
    ids = ctx.config.get(key) if key else None
    if not isinstance(ids, list):
        return None
    return key, [i for i in ids if isinstance(i, int) and not isinstance(i, bool)]


class AuxLayerBeyondVerifier(_VerifierRule):
    """An aux layer id is larger than the verifier's number of layers."""

    id = "V003"
    name = "aux-layer-beyond-verifier"
    since = "0.1.0"
    applies_to = catalog.aux_types()
    references = ("NVIDIA/Model-Optimizer#2149", "sgl-project/sglang#25454")

    def check(self, ctx: Context) -> Iterator[Hit]:
        info = verifier_info(ctx)
        found, n = _aux_ids(ctx), info.num_hidden_layers
        if found is None or n is None:
            return
        key, ids = found
        for i, value in enumerate(ctx.config.get(key)):
            if isinstance(value, int) and not isinstance(value, bool) and value > n:
                yield Hit(
                    f"{key}[{i}] is {value}, but the verifier has {n} layers "
                    f"({_where(info, 'num_hidden_layers')}); ids run from 0 to {n}: this draft was "
                    "built for a deeper verifier",
                    pointer=f"/{key}/{i}",
                )


class AuxLayerIsFinalOutput(_VerifierRule):
    """An aux layer id equals the verifier's number of layers (its final output)."""

    id = "V004"
    name = "aux-layer-is-final-output"
    since = "0.1.0"
    severity = Severity.WARNING
    applies_to = catalog.aux_types()

    def check(self, ctx: Context) -> Iterator[Hit]:
        info = verifier_info(ctx)
        found, n = _aux_ids(ctx), info.num_hidden_layers
        if found is None or n is None:
            return
        key, _ = found
        for i, value in enumerate(ctx.config.get(key)):
            if value == n and not isinstance(value, bool):
                yield Hit(
                    f"{key}[{i}] is {n}, the verifier's final layer output "
                    f"({_where(info, 'num_hidden_layers')} = {n}); not every engine captures it, "
                    "and speculators reserves it for the training target",
                    pointer=f"/{key}/{i}",
                )


def _head_dim(cfg: dict[str, Any]) -> int | None:
    hd = json_int(cfg.get("head_dim"))
    if hd is not None:
        return hd
    hidden, heads = json_int(cfg.get("hidden_size")), json_int(cfg.get("num_attention_heads"))
    return hidden // heads if hidden and heads and hidden % heads == 0 else None


def _own_attention(ctx: Context, ours: dict, theirs: dict) -> bool:
    """The draft's attention geometry is its own, not a copy of the verifier's: an EAGLE-3
    draft of its own hidden size (``target_hidden_size`` names the verifier's, which fc
    projects from), or a verifier with multi-head latent attention (DeepSeek-V3, Kimi K2:
    ``kv_lora_rank``), whose attention no draft layer class copies (drafts beside it use
    grouped-query attention of their own)."""
    if json_int(theirs.get("kv_lora_rank")) or json_int(theirs.get("q_lora_rank")):
        return True
    hidden, verifier_hidden = json_int(ours.get("hidden_size")), json_int(theirs.get("hidden_size"))
    target = json_int(ctx.config.get("target_hidden_size"))
    return bool(hidden and target and hidden != target and target == verifier_hidden)


class VerifierAttentionMismatch(_VerifierRule):
    """Attention settings the draft copies from its verifier differ from the verifier's."""

    id = "V005"
    name = "verifier-attention-mismatch"
    since = "0.1.0"
    severity = Severity.WARNING
    applies_to = catalog.current_types()

    def check(self, ctx: Context) -> Iterator[Hit]:
        info = verifier_info(ctx)
        ours, theirs = ctx.layer_config, info.config
        keys: tuple[str, ...] = ("num_attention_heads", "num_key_value_heads", "head_dim")
        if _own_attention(ctx, ours, theirs):
            keys = ()  # a draft of its own width, or beside MLA: its heads are its own design
        for key in (*keys, "rms_norm_eps"):
            if key == "head_dim":
                a, b = json_int(ours.get("head_dim")), _head_dim(theirs)
            else:
                a, b = ours.get(key), theirs.get(key)
            if a is None or b is None or isinstance(a, bool) or isinstance(b, bool):
                continue
            x, y = json_number(a), json_number(b)  # None for 1e400, strings, lists
            if x is not None and y is not None and math.isclose(x, y, rel_tol=1e-9):
                continue
            yield Hit(
                f"transformer_layer_config.{key} is {a}, the verifier's is {b} "
                f"({_where(info, key)}); drafts copy it from their verifier, so this draft was "
                "probably built for another model",
                pointer=f"/transformer_layer_config/{key}",
            )


def draft_model_type(ctx: Context) -> str:
    """The draft layer's model_type as readers take it (vLLM: an absent one is llama)."""
    mt = ctx.layer_config.get("model_type")
    return mt if isinstance(mt, str) else "llama"


class VerifierRopeMismatch(_VerifierRule):
    """The draft's RoPE settings differ from the verifier's."""

    id = "V006"
    name = "verifier-rope-mismatch"
    since = "0.1.0"
    severity = Severity.WARNING
    applies_to = catalog.current_types()

    def check(self, ctx: Context) -> Iterator[Hit]:
        info = verifier_info(ctx)
        ours = pairing.rope_of(ctx.layer_config, draft_model_type(ctx))
        theirs = pairing.rope_of(info.config)
        theta_differs = (
            ours.theta is not None
            and theirs.theta is not None
            and not math.isclose(ours.theta, theirs.theta)
        )
        # a rescaling type (llama3, yarn, ...) changes every angle past the original range;
        # others (partial rotary "proportional", mrope) are the verifier's layer design,
        # which a draft layer cannot copy: compared by theta only
        kind_differs = (ours.rescales or theirs.rescales) and (
            ours.kind != theirs.kind or not _same_scaling(ours, theirs)
        )
        if not theta_differs and not kind_differs:
            return
        if writers.trained_with_default_rope(ctx.config, ours.theta, ours.rescales):
            return  # written by a training run that used this rope: serving matches training
        yield Hit(
            f"the draft's rope is {ours.describe()} ({draft_place(ours.where)}), the "
            f"verifier's {theirs.describe()} ({verifier_place(info, theirs.where)}); the draft "
            "attends "
            "over the verifier's positions with its own rotation, so past the shorter range "
            "(or at every position, for theta) its attention differs from training unless it "
            "was trained this way (speculators 0.2-0.5 training configs kept theta 10000); "
            "check that it was; otherwise copy the verifier's rope settings",
            pointer=_rope_pointer(ctx),
        )


def draft_place(key: str) -> str:
    """``transformer_layer_config.KEY``, or "the llama defaults" as is."""
    return key if " " in key else f"transformer_layer_config.{key}"


def verifier_place(info: VerifierInfo, key: str) -> str:
    """``text_config.KEY in PATH`` (where the merged view read the key's head from)."""
    if " " in key:
        return f"{key}, {info.path}"
    head, _, rest = key.partition(".")
    return f"{info.where(head)}{'.' + rest if rest else ''} in {info.path}"


def _same_scaling(a: pairing.Rope, b: pairing.Rope) -> bool:
    shared = set(a.scaling) & set(b.scaling)
    return all(math.isclose(a.scaling[k], b.scaling[k], rel_tol=1e-6) for k in shared)


def _rope_pointer(ctx: Context) -> str:
    if isinstance(ctx.layer_config.get("rope_parameters"), dict):
        return "/transformer_layer_config/rope_parameters"
    return "/transformer_layer_config/rope_theta"


class VerifierArchitectureMismatch(_VerifierRule):
    """The draft names other verifier architectures than the verifier has."""

    id = "V007"
    name = "verifier-architecture-mismatch"
    since = "0.1.0"
    legacy_severity = Severity.WARNING

    def check(self, ctx: Context) -> Iterator[Hit]:
        info = verifier_info(ctx)
        block = ctx.spec_config.get("verifier")
        declared = json_strings(block.get("architectures")) if isinstance(block, dict) else []
        theirs = info.architectures
        if not declared or not theirs:
            return
        if set(declared) & set(theirs):
            return
        yield Hit(
            f"speculators_config.verifier.architectures is {declared}, the verifier's is "
            f"{theirs} ({info.path}); pair the draft with the verifier it was trained for, or "
            "fix the list (speculators 0.3.0 wrote LlamaForCausalLM for every verifier)",
            pointer="/speculators_config/verifier/architectures",
        )
