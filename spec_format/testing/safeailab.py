"""SafeAILab/EAGLE-3 style source checkpoints for the ``specfmt convert`` tests and benches:
the config.json their training code writes (``LlamaForCausalLMEagle3``) and the tensors it
saves (``midlayer.*`` for the one decoder layer, ``fc``, ``norm``, ``lm_head``, the ``d2t``/
``t2d`` vocabulary maps, ``embed_tokens`` when trained)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from spec_format.testing.builder import (
    TensorData,
    replace_keys,
    to_bytes,
    vocab_maps,
    write_safetensors,
)

TINY = {"H": 64, "I": 128, "nH": 4, "nKV": 2, "hd": 16, "V": 1000, "D": 256}
#: the draft of RedHatAI/Qwen3-8B-speculator.eagle3 (with embed_tokens: about 2 GB in bf16)
QWEN3_8B = {"H": 4096, "I": 12288, "nH": 32, "nKV": 8, "hd": 128, "V": 151936, "D": 32000}


def safeailab_config(
    sizes: Mapping[str, int] = TINY, overrides: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """A SafeAILab EAGLE-3 config.json (keys with value None in ``overrides`` are removed)."""
    config: dict[str, Any] = {
        "architectures": ["LlamaForCausalLMEagle3"],
        "bos_token_id": 1,
        "eos_token_id": 2,
        "hidden_act": "silu",
        "hidden_size": sizes["H"],
        "initializer_range": 0.02,
        "intermediate_size": sizes["I"],
        "max_position_embeddings": 2048,
        "model_type": "llama",
        "num_attention_heads": sizes["nH"],
        "num_key_value_heads": sizes["nKV"],
        "head_dim": sizes["hd"],
        "num_hidden_layers": 1,
        "pad_token_id": 0,
        "rms_norm_eps": 1e-05,
        "rope_theta": 500000.0,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        "transformers_version": "4.28.1",
        "use_cache": True,
        "vocab_size": sizes["V"],
        "draft_vocab_size": sizes["D"],
    }
    return replace_keys(config, overrides)


def safeailab_shapes(
    sizes: Mapping[str, int] = TINY,
    *,
    aux: int = 3,
    target_hidden: int | None = None,
    embed: bool = False,
    maps: bool = True,
) -> dict[str, tuple[str, tuple[int, ...]]]:
    """name -> (dtype family, shape) of what SafeAILab's EAGLE-3 model saves."""
    H, I, nH, nKV, hd = sizes["H"], sizes["I"], sizes["nH"], sizes["nKV"], sizes["hd"]  # noqa: E741
    Ht = target_hidden or H
    out: dict[str, tuple[str, tuple[int, ...]]] = {
        "fc.weight": ("float", (H, aux * Ht)),
        "norm.weight": ("float", (H,)),
        "lm_head.weight": ("float", (sizes["D"], H)),
        "midlayer.hidden_norm.weight": ("float", (H,)),
        "midlayer.input_layernorm.weight": ("float", (H,)),
        "midlayer.post_attention_layernorm.weight": ("float", (H,)),
        "midlayer.self_attn.q_proj.weight": ("float", (nH * hd, 2 * H)),
        "midlayer.self_attn.k_proj.weight": ("float", (nKV * hd, 2 * H)),
        "midlayer.self_attn.v_proj.weight": ("float", (nKV * hd, 2 * H)),
        "midlayer.self_attn.o_proj.weight": ("float", (H, nH * hd)),
        "midlayer.mlp.gate_proj.weight": ("float", (I, H)),
        "midlayer.mlp.up_proj.weight": ("float", (I, H)),
        "midlayer.mlp.down_proj.weight": ("float", (H, I)),
    }
    if embed:
        out["embed_tokens.weight"] = ("float", (sizes["V"], H))
    if maps:
        out["d2t"] = ("int64", (sizes["D"],))
        out["t2d"] = ("bool", (sizes["V"],))
    return out


def build_safeailab(
    directory: str | os.PathLike[str],
    config: Mapping[str, Any],
    shapes: Mapping[str, tuple[str, tuple[int, ...]]],
    *,
    dtype: str = "BF16",
    seed: int = 0,
    dense: bool = True,
) -> Path:
    """Write ``config.json`` and ``model.safetensors``: seeded random floats and a valid
    vocabulary map (``dense=False``: a repeated byte pattern instead of random floats, for
    multi-GB benches)."""
    import numpy as np

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    V, D = config["vocab_size"], config.get("draft_vocab_size", config["vocab_size"])
    t2d, d2t = vocab_maps(V, D, seed)
    tensors = {}
    for name, (family, shape) in shapes.items():
        if family == "bool":
            tensors[name] = TensorData("BOOL", shape, to_bytes(t2d, "BOOL"))
        elif family == "int64":
            tensors[name] = TensorData("I64", shape, to_bytes(d2t, "I64"))
        elif not dense:
            tensors[name] = TensorData(dtype, shape, pattern=bytes(range(1, 255)))
        else:
            base = 1.0 if len(shape) == 1 and "norm" in name else 0.0
            values = base + 0.05 * rng.standard_normal(shape, dtype=np.float32)
            tensors[name] = TensorData(dtype, shape, to_bytes(values, dtype))
    write_safetensors(directory / "model.safetensors", tensors)
    (directory / "config.json").write_text(json.dumps(dict(config), indent=2) + "\n")
    return directory


def verifier_config(sizes: Mapping[str, int] = TINY, layers: int = 8) -> dict[str, Any]:
    """A Llama verifier config matching ``sizes`` (the draft's hidden size and vocabulary)."""
    return {
        "_name_or_path": "test-org/tiny-llama",  # save_pretrained records the hub id
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": sizes["H"],
        "num_hidden_layers": layers,
        "intermediate_size": 2 * sizes["I"],
        "num_attention_heads": sizes["nH"],
        "num_key_value_heads": sizes["nKV"],
        "head_dim": sizes["hd"],
        "vocab_size": sizes["V"],
        "max_position_embeddings": 8192,
        "rope_theta": 500000.0,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
    }
