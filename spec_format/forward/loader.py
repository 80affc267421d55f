"""Strict loading of a draft checkpoint into its reference model.

1. The safetensors header (names, shapes, dtypes; no tensor bytes) is compared with the
   tensor contract of the config; any difference is a :class:`CheckpointError` listing
   every missing, unexpected or misshapen tensor.
2. The model is built on the meta device (no memory), and every parameter and buffer is
   assigned straight from the memory-mapped file: on CPU at the file's dtype the model's
   weights *are* the file's pages, so peak memory stays near the checkpoint size.
3. Tensors the format leaves out (``embed_tokens``, a full-vocabulary ``lm_head``) come
   from the verifier given with ``--verifier DIR``, or are filled randomly (seeded), which
   makes the run a smoke test only and is said loudly.
4. ``load_state_dict(strict=True, assign=True)`` then guarantees that every parameter came
   from one of those sources, and every float tensor is scanned for NaN/Inf (without
   allocating a copy).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from safetensors import safe_open

from spec_format.errors import InputError
from spec_format.forward.config import DraftSpec
from spec_format.forward.draft import DraftModel
from spec_format.forward.errors import CheckpointError

#: Tensors a checkpoint may leave out because they are the verifier's own.
VERIFIER_OWNED = ("embed_tokens.weight", "lm_head.weight")

_FILL_CHUNK = 1 << 24  # elements per random-fill step


_FLOAT_DTYPES = {"F32": torch.float32, "BF16": torch.bfloat16, "F16": torch.float16}


@dataclass
class LoadedDraft:
    model: DraftModel
    dtype: torch.dtype
    sources: dict[str, str]  # tensor name -> "file" | "verifier" | "random"
    warnings: list[str] = field(default_factory=list)

    def count(self, source: str) -> int:
        return sum(1 for s in self.sources.values() if s == source)


# ----------------------------------------------------------------------------- files


class WeightFiles:
    """The tensors of a checkpoint directory (one file, or shards with an index), opened
    lazily through safetensors' memory map."""

    def __init__(self, directory: Path, what: str = "checkpoint") -> None:
        self.directory = directory
        self.location: dict[str, Path] = {}
        index = directory / "model.safetensors.index.json"
        single = directory / "model.safetensors"
        if single.is_file():
            files = [single]
        elif index.is_file():
            try:
                weight_map = json.loads(index.read_text())["weight_map"]
            except (OSError, ValueError, KeyError, TypeError) as exc:
                raise InputError(f"{index}: unreadable shard index ({exc})") from exc
            files = sorted({directory / name for name in weight_map.values()})
        else:
            files = sorted(directory.glob("*.safetensors"))
        if not files:
            raise InputError(f"{directory}: no safetensors weights found in the {what}")
        self._stack = ExitStack()
        self._handles: dict[Path, Any] = {}
        for path in files:
            handle = self._open(path)
            for name in handle.keys():  # noqa: SIM118 (a safe_open handle)
                self.location[name] = path

    def _open(self, path: Path) -> Any:
        if path not in self._handles:
            try:
                self._handles[path] = self._stack.enter_context(safe_open(str(path), "pt"))
            except Exception as exc:  # safetensors raises its own error types
                raise InputError(f"{path}: not a readable safetensors file ({exc})") from exc
        return self._handles[path]

    def names(self) -> list[str]:
        return sorted(self.location)

    def header(self) -> dict[str, tuple[str, list[int]]]:
        """``name -> (safetensors dtype, shape)`` without reading tensor bytes."""
        out = {}
        for name, path in self.location.items():
            view = self._open(path).get_slice(name)
            out[name] = (view.get_dtype(), list(view.get_shape()))
        return out

    def get(self, name: str) -> torch.Tensor:
        return self._open(self.location[name]).get_tensor(name)

    def close(self) -> None:
        self._stack.close()


# ----------------------------------------------------------------------------- contract


def contract_problems(spec: DraftSpec, config: dict[str, Any], model: DraftModel,
                      header: dict[str, tuple[str, list[int]]]) -> list[str]:
    """Expected-vs-actual differences between the checkpoint and the config.

    Interim check against the meta model's own state dict; replaced by the shared tensor
    contract (``spec_format.contract``) once it lands.
    """
    problems = []
    expected = {name: list(t.shape) for name, t in model.state_dict().items()}
    for name, shape in expected.items():
        if name not in header:
            if name not in VERIFIER_OWNED:
                problems.append(f"{name}: missing (expected shape {shape})")
        elif header[name][1] != shape:
            problems.append(f"{name}: shape {header[name][1]}, expected {shape}")
    for name in header:
        if name not in expected:
            problems.append(f"{name}: unexpected tensor for {spec.model_type}")
    return problems


# ----------------------------------------------------------------------------- verifier


_EMBED_NAMES = ("model.embed_tokens.weight", "embed_tokens.weight",
                "model.language_model.embed_tokens.weight",
                "language_model.model.embed_tokens.weight")
_LM_HEAD_NAMES = ("lm_head.weight", "language_model.lm_head.weight",
                  "model.language_model.lm_head.weight")


def _verifier_text_config(directory: Path) -> dict[str, Any]:
    path = directory / "config.json"
    try:
        config = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: cannot read the verifier's config.json ({exc})") from exc
    if not isinstance(config, dict):
        raise InputError(f"{path}: not a JSON object")
    return config.get("text_config") or config


class Verifier:
    """The verifier's ``embed_tokens`` and ``lm_head``, checked against the draft."""

    def __init__(self, directory: Path, spec: DraftSpec) -> None:
        self.config = _verifier_text_config(directory)
        problems = []
        hidden, vocab = self.config.get("hidden_size"), self.config.get("vocab_size")
        if hidden != spec.H:
            problems.append(
                f"verifier hidden_size is {hidden}, the draft's hidden_size is {spec.H}"
            )
        if vocab is not None and vocab != spec.V:
            problems.append(f"verifier vocab_size is {vocab}, the draft's vocab_size is {spec.V}")
        if problems:
            raise CheckpointError(f"{directory}: the verifier does not fit this draft", problems)
        self.files = WeightFiles(directory, "verifier")
        self.tied = bool(self.config.get("tie_word_embeddings", False))

    def _find(self, names: tuple[str, ...]) -> str | None:
        return next((n for n in names if n in self.files.location), None)

    def tensor(self, name: str, spec: DraftSpec, t2d: torch.Tensor | None) -> torch.Tensor:
        if name == "embed_tokens.weight":
            source = self._find(_EMBED_NAMES)
        else:
            source = self._find(_LM_HEAD_NAMES) or (self._find(_EMBED_NAMES)
                                                     if self.tied else None)
        if source is None:
            raise CheckpointError(
                f"{name}: absent from the draft and not found in the verifier "
                f"({self.files.directory})"
            )
        tensor = self.files.get(source)
        if list(tensor.shape) != [spec.V, spec.H]:
            raise CheckpointError(
                f"verifier {source} has shape {list(tensor.shape)}, expected "
                f"[{spec.V}, {spec.H}]"
            )
        if name == "lm_head.weight" and spec.uses_vocab_map:
            if t2d is None:
                raise CheckpointError("lm_head.weight: absent, and no t2d to select its rows")
            tensor = tensor[t2d.to(torch.bool)]
        return tensor

    def close(self) -> None:
        self.files.close()


# ----------------------------------------------------------------------------- loading


def _nonfinite(tensor: torch.Tensor) -> bool:
    """Whether a float tensor holds a NaN or an Inf. ``aminmax`` propagates NaN, reaches
    +-Inf, and is one pass without a full-size temporary: 0.12 s for 6e8 bfloat16 values
    here, where ``isfinite(...).all()`` takes 4 s."""
    if tensor.numel() == 0:
        return False
    low, high = torch.aminmax(tensor)
    return not (bool(torch.isfinite(low)) and bool(torch.isfinite(high)))


def _random_fill(shape: list[int], dtype: torch.dtype, device: torch.device,
                 generator: torch.Generator) -> torch.Tensor:
    """normal(0, 0.02), drawn in float32 chunks on CPU so the values do not depend on the
    dtype or device chosen (a bfloat16 run and a float32 run see the same weights)."""
    out = torch.empty(shape, dtype=dtype, device=device)
    flat = out.view(-1)
    for i in range(0, flat.numel(), _FILL_CHUNK):
        n = min(_FILL_CHUNK, flat.numel() - i)
        flat[i:i + n] = (torch.randn(n, generator=generator) * 0.02).to(device, dtype)
    return out


def _iter_state(model: DraftModel) -> Iterator[tuple[str, torch.Tensor]]:
    yield from model.state_dict(keep_vars=True).items()


def checkpoint_dtype(files: WeightFiles) -> torch.dtype:
    """The checkpoint's most common float dtype (float32 when it has none)."""
    counts: dict[str, int] = {}
    for dtype, _ in files.header().values():
        if dtype in _FLOAT_DTYPES:
            counts[dtype] = counts.get(dtype, 0) + 1
    return _FLOAT_DTYPES[max(counts, key=counts.__getitem__)] if counts else torch.float32


def load_draft(directory: Path, config: dict[str, Any], spec: DraftSpec,
               model_class: type[DraftModel], *, device: torch.device,
               dtype: torch.dtype | None = None, verifier_dir: Path | None = None,
               seed: int = 0) -> LoadedDraft:
    """Build ``model_class(spec)`` on the meta device and fill it strictly (module doc).
    ``dtype`` None keeps the checkpoint's float dtype: on CPU nothing is then copied."""
    files = WeightFiles(directory)
    verifier = None
    try:
        dtype = dtype or checkpoint_dtype(files)
        with torch.device("meta"):
            model = model_class(spec)
        model.requires_grad_(False).eval()

        problems = contract_problems(spec, config, model, files.header())
        if problems:
            raise CheckpointError(
                f"{directory}: the tensors do not match the {spec.model_type} contract",
                problems,
            )

        state: dict[str, torch.Tensor] = {}
        sources: dict[str, str] = {}
        nonfinite: list[str] = []
        if verifier_dir is not None:  # checked against the draft even when nothing is missing
            verifier = Verifier(verifier_dir, spec)
        generator = torch.Generator().manual_seed(seed)
        for name, meta in _iter_state(model):
            want = dtype if meta.dtype.is_floating_point else meta.dtype
            if name in files.location:
                tensor = files.get(name)
                if tensor.dtype.is_floating_point and _nonfinite(tensor):
                    nonfinite.append(name)
                sources[name] = "file"
            elif verifier is not None:
                t2d = state.get("t2d")
                tensor = verifier.tensor(name, spec, t2d)
                if _nonfinite(tensor):
                    nonfinite.append(f"{name} (from the verifier)")
                sources[name] = "verifier"
            else:
                tensor = _random_fill(list(meta.shape), want, device, generator)
                sources[name] = "random"
            state[name] = tensor.to(device=device, dtype=want)
        if nonfinite:
            raise CheckpointError(
                f"{directory}: NaN or Inf values (speculators leaves never-loaded weights "
                "as NaN)", [f"{name}: contains NaN or Inf" for name in nonfinite]
            )
        model.load_state_dict(state, strict=True, assign=True)
        _check_vocab_map(model, spec)

        warnings = []
        randoms = [n for n, s in sources.items() if s == "random"]
        if randoms:
            warnings.append(
                "SMOKE TEST ONLY: " + ", ".join(randoms) + " not in the checkpoint and no "
                "--verifier given; filled with seeded random values, so the logits and "
                "drafts mean nothing beyond 'the weights load and compute'"
            )
        return LoadedDraft(model, dtype, sources, warnings)
    finally:
        # safetensors tensors keep their own reference to the memory map; closing the
        # handles here does not unmap the weights the model holds.
        files.close()
        if verifier is not None:
            verifier.close()


def _check_vocab_map(model: DraftModel, spec: DraftSpec) -> None:
    if model.d2t is None:
        return
    targets = torch.arange(spec.D, device=model.d2t.device) + model.d2t
    bad = ((targets < 0) | (targets >= spec.V)).nonzero().flatten()
    if bad.numel():
        first = int(bad[0])
        raise CheckpointError(
            f"d2t maps {bad.numel()} draft ids outside the verifier vocabulary [0, {spec.V}) "
            f"(first: draft id {first} -> {int(targets[first])})"
        )
