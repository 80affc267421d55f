"""Helpers of the forward tests: tiny checkpoints, loading, running.

Checkpoints come from the shared builder (``spec_format.builder``) when it is available;
until then an interim writer fills the reference model's own state dict.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import save_file

from spec_format.forward.config import resolve
from spec_format.forward.loader import load_draft
from spec_format.forward.run import model_class

try:  # the shared builder
    from spec_format.builder import build_checkpoint as _build
    from spec_format.builder import tiny_config as _tiny_config
except ImportError:  # pragma: no cover - interim until the builder lands
    _build = _tiny_config = None


def set_path(config: dict[str, Any], path: str, value: Any) -> None:
    parts = path.split(".")
    node = config
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = value


def _interim_tiny_config(model_type: str) -> dict[str, Any]:
    layer = {
        "model_type": "llama", "vocab_size": 256, "hidden_size": 64, "intermediate_size": 128,
        "num_hidden_layers": 1, "num_attention_heads": 4, "num_key_value_heads": 2,
        "head_dim": 32, "hidden_act": "silu", "rms_norm_eps": 1e-6, "rope_theta": 10000.0,
        "max_position_embeddings": 256, "attention_bias": False, "mlp_bias": False,
        "tie_word_embeddings": False,
    }
    config: dict[str, Any] = {
        "speculators_model_type": model_type, "draft_vocab_size": 64,
        "transformer_layer_config": layer,
        "speculators_config": {
            "algorithm": model_type,
            "proposal_methods": [{"proposal_type": "greedy", "speculative_tokens": 3}],
            "default_proposal_method": "greedy",
            "verifier": {"name_or_path": None, "architectures": []},
        },
    }
    if model_type in ("eagle3", "peagle"):
        config.update(eagle_aux_hidden_state_layer_ids=[2, 4, 5], norm_before_residual=True,
                      norm_before_fc=False, fc_norm=False, norm_output=False)
        if model_type == "peagle":
            config["mask_token_id"] = 255
    elif model_type == "mtp":
        layer.update(model_type="qwen3", num_hidden_layers=8)
        config.update(draft_vocab_size=256, num_nextn_predict_layers=1)
    else:
        layer.update(model_type="qwen3", num_hidden_layers=2, use_sliding_window=False,
                     layer_types=["full_attention", "full_attention"])
        anchor = model_type == "dspark"
        config.update(block_size=4, aux_hidden_state_layer_ids=[2, 4, 5], mask_token_id=255,
                      sliding_window_non_causal=model_type == "dflash2",
                      sample_from_anchor=anchor)
        if model_type == "dflash2":
            config.update(draft_vocab_size=256, conv_kernel_size=2, conv_group_size=16,
                          selector_rank=16, selector_top_k=4)
        if model_type == "dspark":
            config.update(markov_rank=8, markov_head_type="vanilla",
                          enable_confidence_head=True, confidence_head_with_markov=True)
        if model_type == "xpress":
            config.update(xpress_rank=16, xpress_mlp_ratio=2, num_jacobi_passes=6)
    return config


def tiny_config(model_type: str, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """The shared tiny config (V=256, H=64, nH=4, nKV=2, hd=32, D=64) with dotted overrides."""
    if _tiny_config is not None:
        return _tiny_config(model_type, overrides)
    config = _interim_tiny_config(model_type)
    for path, value in (overrides or {}).items():
        set_path(config, path, value)
    return config


def _interim_build(directory: Path, config: dict[str, Any], *, seed: int = 0,
                   dtype: str = "F32", drop=(), nan=(), extra=None,
                   include_optional=None) -> Path:
    spec = resolve(config)
    with torch.device("meta"):
        model = model_class(spec.model_type)(spec)
    generator = torch.Generator().manual_seed(seed)
    float_dtype = {"F32": torch.float32, "BF16": torch.bfloat16, "F16": torch.float16}[dtype]
    state: dict[str, torch.Tensor] = {}
    for name, meta in model.state_dict().items():
        if name == "d2t":
            ids = torch.sort(torch.randperm(spec.V, generator=generator)[:spec.D]).values
            state["d2t"] = ids - torch.arange(spec.D)
            state["t2d"] = torch.zeros(spec.V, dtype=torch.bool)
            state["t2d"][ids] = True
        elif name != "t2d":
            noise = torch.randn(meta.shape, generator=generator)
            value = 1 + 0.01 * noise if meta.dim() == 1 and "norm" in name else 0.02 * noise
            state[name] = value.to(float_dtype)
    if include_optional is None and spec.model_type == "mtp":
        drop = (*drop, "embed_tokens.weight", "lm_head.weight")
    for name in drop:
        del state[name]
    for name in nan:
        state[name].view(-1)[0] = float("nan")
    for name, (t_dtype, shape) in (extra or {}).items():
        state[name] = torch.zeros(shape, dtype={"F32": torch.float32}[t_dtype])
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "config.json").write_text(json.dumps(config))
    save_file(state, str(directory / "model.safetensors"))
    return directory


def build(directory: Path, config: dict[str, Any], **kwargs: Any) -> Path:
    """Write ``config`` and its tensors into ``directory`` (float32 unless ``dtype``)."""
    kwargs.setdefault("dtype", "F32")
    if _build is not None:
        return _build(directory, copy.deepcopy(config), **kwargs).path
    return _interim_build(directory, copy.deepcopy(config), **kwargs)


def load(directory: Path, dtype: torch.dtype = torch.float32, **kwargs: Any):
    """The loaded reference model of a checkpoint directory."""
    config = json.loads((directory / "config.json").read_text())
    spec = resolve(config)
    return load_draft(directory, config, spec, model_class(spec.model_type),
                      device=torch.device("cpu"), dtype=dtype, **kwargs).model


def inputs(model, tokens: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Seeded token ids and verifier hidden states for ``model``."""
    from spec_format.forward.inputs import random_inputs

    data = random_inputs(model.spec, tokens, seed)
    return data.input_ids, data.hidden_states
