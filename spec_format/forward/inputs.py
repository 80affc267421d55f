"""The verifier-side inputs of a forward: token ids and hidden states.

Either seeded random values of a chosen length, or ``--inputs FILE.safetensors`` with

* ``input_ids``: int64 ``[T]``;
* ``hidden_states``: float ``[T, A*Ht]``, the verifier's aux hidden states in the order of
  the config's aux layer ids, concatenated on the last dimension (MTP: the verifier's last
  hidden state ``[T, H]``).

EAGLE family and MTP read row t as (``hidden_states[t]``, ``input_ids[t]``) where
``input_ids[t]`` is the token that *followed* the position of ``hidden_states[t]``
(speculators' ``shift_batch`` pairing). The DFlash family reads them unshifted: the anchor
token is ``input_ids[P]`` and the context is ``hidden_states[:P]``.

Inputs are made and kept in float32 on the CPU; the model casts them to its dtype, so a
float32 run and a bfloat16 run see the same numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch
from safetensors import safe_open

from spec_format.errors import InputError, UsageError
from spec_format.forward.config import DraftSpec


@dataclass
class DraftInputs:
    input_ids: torch.Tensor  # int64 [T]
    hidden_states: torch.Tensor  # float32 [T, W]
    source: str

    @property
    def tokens(self) -> int:
        return int(self.input_ids.shape[0])


def hidden_width(spec: DraftSpec) -> int:
    return spec.H if spec.model_type == "mtp" else spec.A * spec.Ht


def random_inputs(spec: DraftSpec, tokens: int, seed: int) -> DraftInputs:
    if tokens < 1:
        raise UsageError(f"--tokens must be at least 1 (got {tokens})")
    generator = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, spec.V, (tokens,), generator=generator, dtype=torch.int64)
    hidden = torch.randn(tokens, hidden_width(spec), generator=generator)
    return DraftInputs(ids, hidden, f"random (seed {seed})")


def read_inputs(path: Path, spec: DraftSpec) -> DraftInputs:
    try:
        with safe_open(str(path), "pt") as f:
            names = set(f.keys())
            missing = {"input_ids", "hidden_states"} - names
            if missing:
                raise InputError(f"{path}: missing tensor(s) {', '.join(sorted(missing))}")
            ids, hidden = f.get_tensor("input_ids"), f.get_tensor("hidden_states")
    except InputError:
        raise
    except Exception as exc:  # safetensors raises its own error types
        raise InputError(f"{path}: not a readable safetensors file ({exc})") from exc

    width = hidden_width(spec)
    what = "[T, H]" if spec.model_type == "mtp" else f"[T, A*Ht] = [T, {spec.A}*{spec.Ht}]"
    if ids.dtype != torch.int64 or ids.dim() != 1 or ids.numel() == 0:
        raise InputError(
            f"{path}: input_ids must be a non-empty int64 [T] tensor "
            f"(got {ids.dtype} {list(ids.shape)})"
        )
    if not hidden.dtype.is_floating_point or hidden.dim() != 2:
        raise InputError(
            f"{path}: hidden_states must be a float {what} tensor "
            f"(got {hidden.dtype} {list(hidden.shape)})"
        )
    if hidden.shape != (ids.shape[0], width):
        raise InputError(
            f"{path}: hidden_states has shape {list(hidden.shape)}, expected "
            f"{what} = [{ids.shape[0]}, {width}]"
        )
    bad = ((ids < 0) | (ids >= spec.V)).nonzero().flatten()
    if bad.numel():
        raise InputError(
            f"{path}: input_ids[{int(bad[0])}] = {int(ids[bad[0]])} is outside "
            f"the vocabulary [0, {spec.V})"
        )
    hidden = hidden.float()
    if not bool(torch.isfinite(hidden).all()):
        raise InputError(f"{path}: hidden_states contains NaN or Inf")
    return DraftInputs(ids.clone(), hidden.clone(), str(path))
