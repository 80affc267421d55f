"""Third-party source checkpoints for ``specfmt convert`` tests and benchmarks: z-lab DFlash
drafts and verifier checkpoints with native MTP layers, as their projects write them.

Configs carry real model sizes where a test asks for them; ``data="sparse"`` makes the
weights holes, so a multi-GB source costs nothing (only its header is read by a plan).
The z-lab draft body is the dflash tensor contract's (the two formats share it); the MTP
names are those of the Hugging Face checkpoints of Qwen3-Next / Qwen3.5 (``mtp.*``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from spec_format.testing.builder import (
    BuiltCheckpoint,
    TensorData,
    _random_values,
    _write_weights,
    build_checkpoint,
    replace_keys,
    tiny_config,
    to_bytes,
)

#: z-lab/Qwen3-8B-DFlash-b16 (the layout speculators' converter tests mimic), verifier Qwen3-8B
QWEN3_8B_DFLASH = {
    "architectures": ["DFlashDraftModel"],
    "auto_map": {"AutoModel": "dflash.DFlashDraftModel"},
    "model_type": "qwen3",
    "block_size": 16,
    "num_target_layers": 36,
    "dflash_config": {"mask_token_id": 151669, "target_layer_ids": [1, 9, 17, 25, 33]},
    "vocab_size": 151936,
    "hidden_size": 4096,
    "intermediate_size": 12288,
    "num_hidden_layers": 5,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "hidden_act": "silu",
    "rms_norm_eps": 1e-6,
    "rope_theta": 1000000.0,
    "max_position_embeddings": 40960,
    "attention_bias": False,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
}


def zlab_dflash_config(overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A tiny z-lab DFlash config (H=64, V=256, 2 layers, block 4) tapping z-lab layers
    1, 3, 5 of an 8-layer verifier; ``overrides`` replace top-level keys (None deletes)."""
    tlc = tiny_config("dflash")["transformer_layer_config"]
    config = {
        "architectures": ["DFlashDraftModel"],
        "auto_map": {"AutoModel": "dflash.DFlashDraftModel"},
        "block_size": 4,
        "num_target_layers": 8,
        "dflash_config": {"mask_token_id": 255, "target_layer_ids": [1, 3, 5]},
        **tlc,
        "torch_dtype": "bfloat16",
    }
    return replace_keys(config, overrides)


def build_zlab_dflash(
    directory: str | os.PathLike[str],
    config: Mapping[str, Any],
    *,
    data: str = "random",
    extra: Mapping[str, tuple[str, tuple[int, ...]]] | None = None,
    **kwargs: Any,
) -> BuiltCheckpoint:
    """Write a z-lab DFlash draft: its config and the draft body (no embeddings, head or
    vocabulary maps). ``kwargs`` break it as :func:`build_checkpoint` does."""
    z = dict(config)
    ids = z.get("dflash_config", {}).get("target_layer_ids") or [1]
    layer = {k: v for k, v in z.items() if k not in ("architectures", "auto_map", "dflash_config")}
    layer.pop("block_size", None)
    layer.pop("num_target_layers", None)
    spec = tiny_config("dflash")
    spec["transformer_layer_config"] = layer
    spec["draft_vocab_size"] = layer["vocab_size"]
    spec["aux_hidden_state_layer_ids"] = [i + 1 for i in ids]
    built = build_checkpoint(
        directory,
        spec,
        include_optional=False,
        write_config=False,
        data=data,
        extra=extra,
        **kwargs,
    )
    Path(directory, "config.json").write_text(json.dumps(z, indent=2) + "\n")
    built.config = z
    return built


def tiny_mtp_verifier_config(model_type: str = "qwen3") -> dict[str, Any]:
    """A tiny verifier config with one MTP layer: dense ``qwen3`` / ``qwen3_5_text`` or MoE
    ``qwen3_next`` (4 experts). Hybrid families end with a full-attention layer."""
    config: dict[str, Any] = {
        "_name_or_path": f"test-org/tiny-{model_type}",  # save_pretrained records the hub id
        "architectures": [_ARCHS[model_type]],
        "model_type": model_type,
        "hidden_size": 64,
        "num_hidden_layers": 4,
        "intermediate_size": 128,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 32,
        "vocab_size": 256,
        "rms_norm_eps": 1e-6,
        "max_position_embeddings": 256,
        "rope_theta": 10000.0,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        "mtp_num_hidden_layers": 1,
    }
    if model_type != "qwen3":
        config["layer_types"] = ["linear_attention"] * 3 + ["full_attention"]
        config.update(
            linear_num_key_heads=2,
            linear_num_value_heads=4,
            linear_key_head_dim=16,
            linear_value_head_dim=16,
            partial_rotary_factor=0.25,
        )
    if model_type == "qwen3_next":
        config.update(
            num_experts=4,
            num_experts_per_tok=2,
            moe_intermediate_size=32,
            shared_expert_intermediate_size=48,
            decoder_sparse_step=1,
            mlp_only_layers=[],
        )
    return config


#: Qwen/Qwen3-Next-80B-A3B-Instruct: the values that fix its MTP layer's shapes
QWEN3_NEXT_80B = {
    "architectures": ["Qwen3NextForCausalLM"],
    "model_type": "qwen3_next",
    "hidden_size": 2048,
    "num_hidden_layers": 48,
    "intermediate_size": 5120,
    "num_attention_heads": 16,
    "num_key_value_heads": 2,
    "head_dim": 256,
    "vocab_size": 151936,
    "num_experts": 512,
    "num_experts_per_tok": 10,
    "moe_intermediate_size": 512,
    "shared_expert_intermediate_size": 512,
    "layer_types": ["linear_attention", "linear_attention", "linear_attention", "full_attention"]
    * 12,
    "rms_norm_eps": 1e-6,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "mtp_num_hidden_layers": 1,
}

_ARCHS = {
    "qwen3": "Qwen3ForCausalLM",
    "qwen3_next": "Qwen3NextForCausalLM",
    "qwen3_5_text": "Qwen3_5ForCausalLM",
}


def mtp_source_tensors(config: Mapping[str, Any]) -> dict[str, tuple[int, ...]]:
    """The ``mtp.*`` tensors of a checkpoint with one native MTP layer, plus the verifier's
    embeddings, final norm and head (its decoder layers are left out: a converter drops
    them all alike)."""
    H, V = config["hidden_size"], config["vocab_size"]
    nH, nKV = config["num_attention_heads"], config["num_key_value_heads"]
    hd = config.get("head_dim") or H // nH
    gated = config["model_type"] != "qwen3"  # Qwen3-Next / 3.5 attention gates its output
    out: dict[str, tuple[int, ...]] = {
        "model.embed_tokens.weight": (V, H),
        "model.norm.weight": (H,),
        "lm_head.weight": (V, H),
        "mtp.fc.weight": (H, 2 * H),
        "mtp.norm.weight": (H,),
        "mtp.pre_fc_norm_hidden.weight": (H,),
        "mtp.pre_fc_norm_embedding.weight": (H,),
    }
    p = "mtp.layers.0."
    out[p + "input_layernorm.weight"] = (H,)
    out[p + "post_attention_layernorm.weight"] = (H,)
    out[p + "self_attn.q_proj.weight"] = (nH * hd * (2 if gated else 1), H)
    out[p + "self_attn.k_proj.weight"] = (nKV * hd, H)
    out[p + "self_attn.v_proj.weight"] = (nKV * hd, H)
    out[p + "self_attn.o_proj.weight"] = (H, nH * hd)
    out[p + "self_attn.q_norm.weight"] = (hd,)
    out[p + "self_attn.k_norm.weight"] = (hd,)
    experts = config.get("num_experts")
    if experts:
        im, si = config["moe_intermediate_size"], config["shared_expert_intermediate_size"]
        out[p + "mlp.gate.weight"] = (experts, H)
        for e in range(experts):
            out[p + f"mlp.experts.{e}.gate_proj.weight"] = (im, H)
            out[p + f"mlp.experts.{e}.up_proj.weight"] = (im, H)
            out[p + f"mlp.experts.{e}.down_proj.weight"] = (H, im)
        out[p + "mlp.shared_expert.gate_proj.weight"] = (si, H)
        out[p + "mlp.shared_expert.up_proj.weight"] = (si, H)
        out[p + "mlp.shared_expert.down_proj.weight"] = (H, si)
        out[p + "mlp.shared_expert_gate.weight"] = (1, H)
    else:
        I = config["intermediate_size"]  # noqa: E741
        out[p + "mlp.gate_proj.weight"] = (I, H)
        out[p + "mlp.up_proj.weight"] = (I, H)
        out[p + "mlp.down_proj.weight"] = (H, I)
    return out


def build_mtp_source(
    directory: str | os.PathLike[str],
    config: Mapping[str, Any],
    *,
    seed: int = 0,
    dtype: str = "BF16",
    data: str = "random",
    shards: int | None = None,
    extra: Mapping[str, tuple[int, ...]] | None = None,
    drop: tuple[str, ...] = (),
    reshape: Mapping[str, tuple[int, ...]] | None = None,
    text_config: bool = False,
) -> BuiltCheckpoint:
    """A verifier checkpoint with native MTP tensors (random values, or holes with
    ``data="sparse"``), sharded with an index when ``shards``; ``text_config`` nests the
    config the way multimodal Qwen3.5 checkpoints do."""
    import numpy as np

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    shapes = {**mtp_source_tensors(config), **(extra or {})}
    shapes.update(reshape or {})
    tensors = {}
    for name, shape in shapes.items():
        if name in drop:
            continue
        payload = None if data == "sparse" else to_bytes(_random_values(name, shape, rng), dtype)
        tensors[name] = TensorData(dtype, tuple(shape), payload)
    files = _write_weights(directory, tensors, {"format": "pt"}, shards)
    doc: dict[str, Any] = dict(config)
    if text_config:
        doc = {
            "architectures": doc.pop("architectures"),
            "model_type": "qwen3_5",
            "text_config": doc,
            "torch_dtype": doc.get("torch_dtype"),
        }
    (directory / "config.json").write_text(json.dumps(doc, indent=2) + "\n")
    built = {n: (t.dtype, t.shape) for n, t in tensors.items()}
    return BuiltCheckpoint(directory, doc, built, files)


def build_dense_verifier(
    directory: str | os.PathLike[str], config: Mapping[str, Any], *, seed: int = 0
) -> BuiltCheckpoint:
    """A small verifier with *random* weights (:func:`builder.build_verifier` writes holes):
    forwards that borrow its embeddings and head then produce real logits."""
    import numpy as np

    from spec_format.testing.builder import verifier_tensors

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    tensors = {
        name: TensorData("BF16", shape, to_bytes(_random_values(name, shape, rng), "BF16"))
        for name, shape in verifier_tensors(config).items()
    }
    files = _write_weights(directory, tensors, {"format": "pt"}, None)
    (directory / "config.json").write_text(json.dumps(dict(config), indent=2) + "\n")
    return BuiltCheckpoint(
        directory, dict(config), {n: ("BF16", t.shape) for n, t in tensors.items()}, files
    )


def tiny_dflash_verifier_config() -> dict[str, Any]:
    """The 8-layer Qwen3 verifier the tiny z-lab draft was built for (H=64, V=256)."""
    tlc = tiny_config("dflash")["transformer_layer_config"]
    keys = (
        "hidden_size",
        "intermediate_size",
        "num_attention_heads",
        "num_key_value_heads",
        "head_dim",
        "vocab_size",
        "rms_norm_eps",
        "max_position_embeddings",
        "rope_theta",
    )
    return {
        "_name_or_path": "test-org/tiny-qwen3",  # save_pretrained records the hub id
        "architectures": ["Qwen3ForCausalLM"],
        "model_type": "qwen3",
        "num_hidden_layers": 8,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        **{k: tlc[k] for k in keys},
    }
