"""Helpers of the forward tests: tiny checkpoints (the shared builder), loading, inputs."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import torch

from spec_format.forward.config import read_config, resolve
from spec_format.forward.loader import check_weights, load_draft
from spec_format.forward.run import model_class
from spec_format.testing import builder


def tiny_config(model_type: str, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """The shared tiny config (V=256, H=64, nH=4, nKV=2, hd=32, D=64) with dotted overrides."""
    return builder.tiny_config(model_type, overrides)


def build(directory: Path, config: dict[str, Any], **kwargs: Any) -> Path:
    """Write ``config`` and its tensors into ``directory`` with the shared builder (float32
    unless ``dtype`` says otherwise)."""
    kwargs.setdefault("dtype", "F32")
    return builder.build_checkpoint(directory, copy.deepcopy(config), **kwargs).path


def load(directory: Path, dtype: torch.dtype = torch.float32, **kwargs: Any):
    """The loaded reference model of a checkpoint directory."""
    spec = resolve(read_config(directory))
    return load_draft(
        check_weights(directory, spec),
        spec,
        model_class(spec.model_type),
        device=torch.device("cpu"),
        dtype=dtype,
        **kwargs,
    ).model


def inputs(model, tokens: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Seeded token ids and verifier hidden states for ``model``."""
    from spec_format.forward.inputs import random_inputs

    data = random_inputs(model.spec, tokens, seed)
    return data.input_ids, data.hidden_states
