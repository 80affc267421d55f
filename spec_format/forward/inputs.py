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

import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from safetensors import safe_open

from spec_format.base.errors import InputError, UsageError
from spec_format.facts import catalog
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
    return spec.H if spec.model_type in catalog.family("nextn") else spec.A * spec.Ht


def random_inputs(spec: DraftSpec, tokens: int, seed: int) -> DraftInputs:
    if tokens < 1:
        raise UsageError(f"--tokens must be at least 1 (got {tokens})")
    generator = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, spec.V, (tokens,), generator=generator, dtype=torch.int64)
    hidden = torch.randn(tokens, hidden_width(spec), generator=generator)
    return DraftInputs(ids, hidden, f"random (seed {seed})")


def open_regular(path: Path, option: str) -> Any:
    """``safe_open`` of a regular file: a FIFO or device would block or never end."""
    try:
        st = path.stat()
    except OSError as exc:
        raise InputError(f"{option} {path}: cannot read ({exc.strerror or exc})") from None
    if not stat.S_ISREG(st.st_mode):
        raise InputError(f"{option} {path}: not a regular file; expected a .safetensors file")
    try:
        return safe_open(str(path), "pt")
    except Exception as exc:  # safetensors raises its own error types
        raise InputError(f"{option} {path}: not a readable safetensors file ({exc})") from exc


def inputs_length(path: Path, spec: DraftSpec) -> int:
    """T of an ``--inputs`` file, from its header (the shapes are checked; nothing is read)."""
    with open_regular(path, "--inputs") as f:
        names = set(f.keys())
        missing = {"input_ids", "hidden_states"} - names
        if missing:
            raise InputError(f"{path}: missing tensor(s) {', '.join(sorted(missing))}")
        ids = f.get_slice("input_ids")
        hidden = f.get_slice("hidden_states")
        ids_shape, hidden_shape = list(ids.get_shape()), list(hidden.get_shape())
        ids_dtype, hidden_dtype = ids.get_dtype(), hidden.get_dtype()
    width = hidden_width(spec)
    what = (
        "[T, H]"
        if spec.model_type in catalog.family("nextn")
        else f"[T, A*Ht] = [T, {spec.A}*{spec.Ht}]"
    )
    if ids_dtype != "I64" or len(ids_shape) != 1 or ids_shape[0] == 0:
        raise InputError(
            f"{path}: input_ids must be a non-empty int64 [T] tensor (got {ids_dtype} {ids_shape})"
        )
    if hidden_dtype not in ("F64", "F32", "F16", "BF16") or len(hidden_shape) != 2:
        raise InputError(
            f"{path}: hidden_states must be a float {what} tensor "
            f"(got {hidden_dtype} {hidden_shape})"
        )
    if hidden_shape != [ids_shape[0], width]:
        raise InputError(
            f"{path}: hidden_states has shape {hidden_shape}, expected "
            f"{what} = [{ids_shape[0]}, {width}]"
        )
    return ids_shape[0]


def read_inputs(path: Path, spec: DraftSpec) -> DraftInputs:
    """Read an ``--inputs`` file whose header :func:`inputs_length` accepted."""
    inputs_length(path, spec)
    try:
        with open_regular(path, "--inputs") as f:
            ids, hidden = f.get_tensor("input_ids"), f.get_tensor("hidden_states")
    except InputError:
        raise
    except Exception as exc:  # safetensors raises its own error types
        raise InputError(f"--inputs {path}: not a readable safetensors file ({exc})") from exc
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
