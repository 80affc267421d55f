"""Strict loading of a draft checkpoint into its reference model.

1. :func:`check_weights`: the checkpoint's headers are read by
   :func:`spec_format.parsers.checkpoint.load_checkpoint` (one file or shards with an index; no
   tensor bytes) and compared with the tensor contract evaluated on the config the forward
   uses (:mod:`spec_format.facts.contract`, ``DraftSpec.effective``); any difference is a
   :class:`CheckpointError` carrying the contract diff: every missing, unexpected,
   misshapen or mistyped tensor. The contract must evaluate completely (every loop
   expanded, every dimension known), so every size that shapes a tensor is bounded by
   the tensors actually present before anything is built or allocated.
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

import math
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from safetensors import safe_open

from spec_format.base import progress
from spec_format.base.errors import InputError, InternalError
from spec_format.facts.contract import ExpectedSet, diff_tensors, evaluate, expected_tensors
from spec_format.forward import limits
from spec_format.forward.config import DraftSpec
from spec_format.forward.draft import DraftModel
from spec_format.forward.errors import CheckpointError
from spec_format.parsers.checkpoint import HEADER_PADDING, STRAY_SAFETENSORS, load_checkpoint
from spec_format.parsers.verifier import load_verifier

#: Contract roles of the tensors a checkpoint may leave out because they are the verifier's.
VERIFIER_ROLES = ("embed", "lm_head")
#: Checkpoint issues that do not stop a strict load (the files the readers use are sound).
_HARMLESS_ISSUES = (HEADER_PADDING, STRAY_SAFETENSORS)

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
    """The tensors of a checkpoint directory as :func:`load_checkpoint` finds them (one file,
    or the shards of an index), opened lazily through safetensors' memory map."""

    def __init__(self, directory: Path, what: str = "checkpoint") -> None:
        self.directory = directory
        checkpoint = load_checkpoint(directory)
        checkpoint.close()
        if not checkpoint.has_weights:
            raise InputError(f"{directory}: no model.safetensors or shard index in the {what}")
        problems = [
            issue.message for issue in checkpoint.issues if issue.rule not in _HARMLESS_ISSUES
        ]
        if problems or not checkpoint.complete:
            raise CheckpointError(
                f"{directory}: the {what}'s safetensors files are not sound",
                problems or ["some weights could not be read"],
            )
        self.records = checkpoint.tensors
        self.location = {name: directory / r.file for name, r in checkpoint.tensors.items()}
        self._stack = ExitStack()
        self._handles: dict[Path, Any] = {}

    def _open(self, path: Path) -> Any:
        if path not in self._handles:
            try:
                self._handles[path] = self._stack.enter_context(safe_open(str(path), "pt"))
            except Exception as exc:  # safetensors raises its own error types
                raise InputError(f"{path}: not a readable safetensors file ({exc})") from exc
        return self._handles[path]

    def header(self) -> dict[str, tuple[str, tuple[int, ...]]]:
        """``name -> (safetensors dtype, shape)``, from the headers only."""
        return {name: (r.dtype, tuple(r.shape)) for name, r in self.records.items()}

    def get(self, name: str) -> torch.Tensor:
        return self._open(self.location[name]).get_tensor(name)

    def close(self) -> None:
        self._stack.close()


# ----------------------------------------------------------------------------- contract


@dataclass
class CheckedWeights:
    """A checkpoint whose headers match the contract of the spec (nothing read yet)."""

    directory: Path
    files: WeightFiles
    verifier_owned: set[str]  # names the checkpoint may leave to the verifier

    @property
    def values(self) -> int:
        return sum(math.prod(r.shape) for r in self.files.records.values())

    def close(self) -> None:
        self.files.close()


def check_weights(directory: Path, spec: DraftSpec) -> CheckedWeights:
    """Read the headers of ``directory`` and check them against the contract (module doc)."""
    files = WeightFiles(directory)
    try:
        return CheckedWeights(directory, files, check_contract(spec, files))
    except BaseException:
        files.close()
        raise


def check_contract(spec: DraftSpec, files: WeightFiles) -> set[str]:
    """Raise :class:`CheckpointError` with the contract diff unless the headers match the
    tensor contract of ``spec.effective``; return the names the checkpoint may leave to the
    verifier."""
    expected = expected_tensors(spec.effective, spec.model_type)
    header = files.header()
    _require_evaluated(expected, header, files.directory)
    diff = diff_tensors(expected, header)
    if not diff.ok:
        raise CheckpointError(
            f"{files.directory}: the tensors do not match the {expected.model_type} contract",
            diff.format().splitlines(),
        )
    return {
        t.name for t in expected.tensors.values() if not t.required and t.role in VERIFIER_ROLES
    }


def _require_evaluated(expected: ExpectedSet, header: dict, directory: Path) -> None:
    """The contract left a loop unexpanded (more than MAX_LOOP iterations) or a dimension
    unknown: the config claims sizes the weights cannot confirm; refuse before building."""
    problems = []
    for _pattern, tensor_spec, _variables in expected.patterns:
        env = dict(expected.symbols.values)
        bounds = [(var, evaluate(stop, env)) for var, _start, stop in tensor_spec.loops]
        found = sum(1 for name in header if _pattern.fullmatch(name))
        claimed = ", ".join(f"{var} < {value!r}" for var, value in bounds)
        problems.append(
            f"{tensor_spec.name} for {claimed}: the checkpoint holds {found} such tensors"
        )
    for t in expected.tensors.values():
        if None in t.shape and (t.required or t.name in header):
            problems.append(f"{t.name}: shape {t.describe_shape()} cannot be evaluated")
    if problems:
        problems.extend(expected.symbols.problems)
        raise CheckpointError(
            f"{directory}: the config's sizes do not describe these weights "
            f"({', '.join(expected.symbols.describe(n) for n in ('L', 'H'))})",
            problems,
        )


# ----------------------------------------------------------------------------- verifier


_EMBED_NAMES = (
    "model.embed_tokens.weight",
    "embed_tokens.weight",
    "model.language_model.embed_tokens.weight",
    "language_model.model.embed_tokens.weight",
)
_LM_HEAD_NAMES = (
    "lm_head.weight",
    "language_model.lm_head.weight",
    "model.language_model.lm_head.weight",
)


class Verifier:
    """The verifier's ``embed_tokens`` and ``lm_head``, checked against the draft."""

    def __init__(self, directory: Path, spec: DraftSpec) -> None:
        info = load_verifier(directory)
        problems = []
        if info.hidden_size != spec.H:
            found = info.hidden_size if info.hidden_size is not None else info.get("hidden_size")
            problems.append(
                f"verifier {info.where('hidden_size')} is {found!r}"
                + (" (not an integer)" if info.hidden_size is None else "")
                + f", the draft's hidden_size is {spec.H}"
            )
        if info.vocab_size is not None and info.vocab_size != spec.V:
            problems.append(
                f"verifier {info.where('vocab_size')} is {info.vocab_size}, the "
                f"draft's vocab_size is {spec.V}"
            )
        if problems:
            raise CheckpointError(f"{directory}: the verifier does not fit this draft", problems)
        self.files = WeightFiles(directory, "verifier")
        self.tied = bool(info.get("tie_word_embeddings"))

    def _find(self, names: tuple[str, ...]) -> str | None:
        return next((n for n in names if n in self.files.location), None)

    def tensor(self, name: str, spec: DraftSpec) -> torch.Tensor:
        """``embed_tokens.weight`` or the full-vocabulary ``lm_head.weight`` (the contract
        requires a reduced-vocabulary draft to carry its own head)."""
        if name == "embed_tokens.weight":
            source = self._find(_EMBED_NAMES)
        else:
            source = self._find(_LM_HEAD_NAMES) or (self._find(_EMBED_NAMES) if self.tied else None)
        if source is None:
            raise CheckpointError(
                f"{name}: absent from the draft and not found in the verifier "
                f"({self.files.directory})"
            )
        shape = list(self.files.records[source].shape)  # from the header: nothing read yet
        if shape != [spec.V, spec.H]:
            raise CheckpointError(
                f"verifier {source} has shape {shape}, expected [{spec.V}, {spec.H}]"
            )
        return self.files.get(source)

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


def _random_fill(
    shape: list[int], dtype: torch.dtype, device: torch.device, generator: torch.Generator
) -> torch.Tensor:
    """normal(0, 0.02), drawn in float32 chunks on CPU so the values do not depend on the
    dtype or device chosen (a bfloat16 run and a float32 run see the same weights)."""
    out = torch.empty(shape, dtype=dtype, device=device)
    flat = out.view(-1)
    for i in range(0, flat.numel(), _FILL_CHUNK):
        n = min(_FILL_CHUNK, flat.numel() - i)
        flat[i : i + n] = (torch.randn(n, generator=generator) * 0.02).to(device, dtype)
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


def load_draft(
    weights: CheckedWeights,
    spec: DraftSpec,
    model_class: type[DraftModel],
    *,
    device: torch.device,
    dtype: torch.dtype | None = None,
    verifier_dir: Path | None = None,
    seed: int = 0,
) -> LoadedDraft:
    """Build ``model_class(spec)`` on the meta device and fill it strictly (module doc) from
    checked ``weights`` (closed on return). ``dtype`` None keeps the checkpoint's float
    dtype: on CPU nothing is then copied."""
    files, directory = weights.files, weights.directory
    verifier = None
    try:
        dtype = dtype or checkpoint_dtype(files)
        with torch.device("meta"):
            model = model_class(spec)
        model.requires_grad_(False).eval()
        _check_model_agrees(model, files, weights.verifier_owned)

        if verifier_dir is not None:  # checked against the draft even when nothing is missing
            verifier = Verifier(verifier_dir, spec)
        else:
            limits.check_random_fill(
                {
                    name: meta.numel()
                    for name, meta in _iter_state(model)
                    if name not in files.location
                },
                weights.values,
            )
        state: dict[str, torch.Tensor] = {}
        sources: dict[str, str] = {}
        nonfinite: list[str] = []
        generator = torch.Generator().manual_seed(seed)
        tensors = sum(1 for _ in _iter_state(model))
        with progress.task(f"loading {directory.name}", tensors, unit="tensors"):
            for name, meta in _iter_state(model):
                want = dtype if meta.dtype.is_floating_point else meta.dtype
                if name in files.location:
                    tensor = files.get(name)
                    if tensor.dtype.is_floating_point and _nonfinite(tensor):
                        nonfinite.append(name)
                    sources[name] = "file"
                elif verifier is not None:
                    tensor = verifier.tensor(name, spec)
                    if _nonfinite(tensor):
                        nonfinite.append(f"{name} (from the verifier)")
                    sources[name] = "verifier"
                else:
                    tensor = _random_fill(list(meta.shape), want, device, generator)
                    sources[name] = "random"
                state[name] = tensor.to(device=device, dtype=want)
                progress.advance(1)
        if nonfinite:
            raise CheckpointError(
                f"{directory}: NaN or Inf values (speculators leaves never-loaded weights as NaN)",
                [f"{name}: contains NaN or Inf" for name in nonfinite],
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
        weights.close()
        if verifier is not None:
            verifier.close()


def _check_model_agrees(model: DraftModel, files: WeightFiles, verifier_owned: set[str]) -> None:
    """After the contract check: every tensor of the reference model is in the file (at the
    model's shape: the contract leaves dimensions it cannot evaluate open) or is one the
    verifier may supply. File tensors the model has no use for are optional ones (identity
    ``d2t``/``t2d`` of a full-vocabulary draft), which the readers ignore too."""
    wrong = []
    for name, meta in _iter_state(model):
        if name in files.records:
            shape = tuple(files.records[name].shape)
            if shape != tuple(meta.shape):
                wrong.append(f"{name}: shape {list(shape)}, the config implies {list(meta.shape)}")
        elif name not in verifier_owned:
            raise InternalError(
                f"the reference {type(model).__name__} needs {name}, which the tensor "
                "contract does not require: a bug in specfmt"
            )
    if wrong:
        raise CheckpointError(f"{files.directory}: tensors of the wrong shape", wrong)


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
