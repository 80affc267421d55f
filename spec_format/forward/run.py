"""``run_forward``: the library function behind ``specfmt forward``.

Imports torch only when called, so the rest of specfmt (and ``import spec_format.forward``)
works without the ``forward`` extra.
"""

from __future__ import annotations

import importlib
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from spec_format.base.errors import UsageError
from spec_format.base.extras import missing as missing_extra
from spec_format.facts import catalog
from spec_format.forward import limits
from spec_format.forward.config import FORWARD_CLASSES, DraftSpec, read_config, resolve
from spec_format.forward.result import (
    DEVICES,
    DTYPES,
    Candidate,
    ForwardOptions,
    ForwardResult,
    LogitStats,
    Row,
)

if TYPE_CHECKING:
    import torch

    from spec_format.forward.draft import DraftModel, DraftOutput


def _import_torch() -> Any:
    try:
        return importlib.import_module("torch")
    except ImportError as exc:
        raise UsageError(
            missing_extra(
                "specfmt forward",
                "forward",
                alternative=" (on a CPU-only machine, install torch from the CPU wheel index "
                "first: docs/guide/install.md)",
            )
        ) from exc


def model_class(model_type: str) -> type[DraftModel]:
    module, name = FORWARD_CLASSES[model_type].split(":")
    return getattr(importlib.import_module(f"spec_format.forward.{module}"), name)


def _device(torch: Any, name: str) -> torch.device:
    if name not in DEVICES:
        raise UsageError(f"--device must be one of {', '.join(DEVICES)} (got {name!r})")
    if name == "cuda" and not torch.cuda.is_available():
        raise UsageError("--device cuda: no CUDA device is available")
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    return torch.device(name)


def _dtype(torch: Any, name: str) -> torch.dtype | None:
    """None for ``auto``: the loader keeps the checkpoint's float dtype (the most common
    one), so on CPU the weights stay memory-mapped and are never copied."""
    if name not in DTYPES:
        raise UsageError(f"--dtype must be one of {', '.join(DTYPES)} (got {name!r})")
    return None if name == "auto" else getattr(torch, name)


def _check_options(opts: ForwardOptions, spec: DraftSpec, tokens: int) -> tuple[int, int | None]:
    """Validate ``--steps``/``--anchor``/``--top-k`` for this type; return (steps, anchor)."""
    if opts.top_k < 1:
        raise UsageError(f"--top-k must be at least 1 (got {opts.top_k})")
    steps = 0
    if spec.model_type in catalog.family("chain"):
        if opts.steps is None:
            steps = limits.default_steps(spec)
        elif opts.steps < 0:
            raise UsageError(f"--steps must be 0 or more (got {opts.steps})")
        else:
            limits.check_steps(opts.steps)
            steps = opts.steps
    elif opts.steps:
        raise UsageError(f"--steps applies to eagle3 and peagle, not {spec.model_type}")
    anchor = None
    if spec.model_type in catalog.family("block"):
        anchor = tokens - 1 if opts.anchor is None else opts.anchor
        if anchor < 0:
            anchor += tokens
        if not 0 <= anchor < tokens:
            raise UsageError(f"--anchor {opts.anchor} is outside the {tokens} input positions")
    elif opts.anchor is not None:
        raise UsageError(
            f"--anchor applies to the DFlash family ({', '.join(catalog.family('block'))}), "
            f"not {spec.model_type}"
        )
    return steps, anchor


def _rows(torch: Any, out: DraftOutput, top_k: int, to_target: Any) -> list[Row]:
    """Rows with top-k candidates; ``to_target`` maps draft ids to verifier ids."""
    rows = []

    def add(
        logits: torch.Tensor,
        draft_ids: torch.Tensor,
        token_ids: torch.Tensor,
        positions: list[int],
        slots: list[int] | None,
        step0: bool,
        extras: dict,
    ) -> None:
        probs = torch.softmax(logits.float(), dim=-1)
        k = min(top_k, logits.shape[-1])
        top_p, top_i = probs.topk(k, dim=-1)
        top_t = to_target(top_i)
        for r in range(logits.shape[0]):
            chosen = int(draft_ids[r])
            rows.append(
                Row(
                    position=positions[r],
                    slot=slots[r] if slots is not None else None,
                    step=0 if step0 else r + 1,
                    draft_id=chosen,
                    token_id=int(token_ids[r]),
                    prob=float(probs[r, chosen]),
                    top=[
                        Candidate(int(i), int(t), float(p))
                        for i, t, p in zip(top_i[r], top_t[r], top_p[r], strict=True)
                    ],
                    extras={name: float(v[r]) for name, v in extras.items()},
                )
            )

    add(out.logits, out.draft_ids, out.token_ids, out.positions, out.slots, True, out.extras)
    if out.chain_logits is not None:
        last = out.positions[-1]
        add(
            out.chain_logits,
            out.chain_draft_ids,
            out.chain_token_ids,
            [last + k for k in range(1, out.chain_logits.shape[0] + 1)],
            None,
            False,
            {},
        )
    return rows


def _stats(torch: Any, logits: torch.Tensor) -> LogitStats:
    x = logits.float()
    finite = torch.isfinite(x)
    values = x[finite]
    if not values.numel():
        return LogitStats(
            float("nan"),
            float("nan"),
            float("nan"),
            float("nan"),
            int((~finite).sum()),
            float("nan"),
        )
    row_std = x.std(dim=-1) if x.shape[-1] > 1 else torch.zeros(x.shape[0])
    return LogitStats(
        min=float(values.min()),
        max=float(values.max()),
        mean=float(values.mean()),
        std=float(values.std()) if values.numel() > 1 else 0.0,
        nonfinite=int((~finite).sum()),
        min_row_std=float(row_std.min()),
    )


def _local_verifier(verifier: object) -> None:
    """The forward reads the verifier's weights: an ``hf://`` name is refused with the
    command that fetches them (specfmt downloads headers, never weights)."""
    if isinstance(verifier, str) and verifier.startswith("hf://"):
        repo, _, rev = verifier.removeprefix("hf://").partition("@")
        revision = f" --revision {rev}" if rev else ""
        raise UsageError(
            f"--verifier {verifier}: forward reads the verifier's weights (embed_tokens, "
            "lm_head), which specfmt does not download; fetch them first (huggingface-cli "
            f"download {repo}{revision} --local-dir DIR) and pass --verifier DIR"
        )


def run_forward(opts: ForwardOptions) -> ForwardResult:
    """Load ``opts.checkpoint`` strictly, run its reference forward, return the result.

    Raises :class:`~spec_format.base.errors.UsageError` (bad option), ``InputError`` (a file that
    cannot be read), :class:`~spec_format.forward.errors.CheckpointError` (the checkpoint
    cannot run: missing/unexpected/misshapen tensor, NaN, a verifier that does not fit) or
    :class:`~spec_format.forward.errors.UnsupportedError` (a feature without a port).
    """
    _local_verifier(opts.verifier)
    checkpoint = Path(opts.checkpoint)
    checked = read_config(checkpoint)  # validate's reader and checks; refuses on errors
    spec = resolve(checked)
    limits.check_seed(opts.seed)
    limits.check_model_loops(spec)
    if opts.verifier is not None and not Path(opts.verifier).is_dir():
        raise UsageError(f"--verifier {opts.verifier}: not a directory")
    torch = _import_torch()
    from spec_format.forward import dump as dumping
    from spec_format.forward.blocks import check_rope
    from spec_format.forward.inputs import inputs_length, random_inputs, read_inputs
    from spec_format.forward.loader import check_weights, load_draft

    directory = checkpoint if checkpoint.is_dir() else checkpoint.parent
    device = _device(torch, opts.device)
    dtype = _dtype(torch, opts.dtype)
    if opts.inputs is None and opts.tokens < 1:
        raise UsageError(f"--tokens must be at least 1 (got {opts.tokens})")
    # every size is checked before anything is allocated: the config's against the
    # weights' headers (the tensor contract), the run's against the limits
    weights = check_weights(directory, spec)
    try:
        tokens = inputs_length(Path(opts.inputs), spec) if opts.inputs else opts.tokens
        steps, anchor = _check_options(opts, spec, tokens)
        limits.check_work(spec, tokens, steps, what="--inputs T" if opts.inputs else "--tokens")
        block = spec.flag("block_size") if anchor is not None else 0
        check_rope(spec.layer, tokens + steps + block)
    except BaseException:
        weights.close()
        raise

    def sync() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    start = time.perf_counter()
    loaded = load_draft(
        weights,
        spec,
        model_class(spec.model_type),
        device=device,
        dtype=dtype,
        verifier_dir=Path(opts.verifier) if opts.verifier is not None else None,
        seed=opts.seed,
    )
    sync()
    load_seconds = time.perf_counter() - start
    inputs = (
        read_inputs(Path(opts.inputs), spec)
        if opts.inputs is not None
        else random_inputs(spec, tokens, opts.seed)
    )

    ids = inputs.input_ids.to(device)
    hidden = inputs.hidden_states.to(device=device, dtype=loaded.dtype)
    start = time.perf_counter()
    with torch.inference_mode():
        out = loaded.model.draft(ids, hidden, steps=steps, anchor=anchor)
        sync()
    forward_seconds = time.perf_counter() - start

    result = ForwardResult(
        checkpoint=str(checkpoint),
        model_type=spec.model_type,
        layer_type=spec.layer.model_type,
        device=str(device),
        dtype=str(loaded.dtype).removeprefix("torch."),
        torch_version=torch.__version__,
        inputs=inputs.source,
        tokens=inputs.tokens,
        rows=_rows(torch, out, opts.top_k, loaded.model.to_target),
        proposal=out.proposal,
        stats=_stats(torch, out.logits),
        load_seconds=load_seconds,
        forward_seconds=forward_seconds,
        weights={src: loaded.count(src) for src in ("file", "verifier", "random")},
        anchor=anchor,
        steps=steps,
        warnings=loaded.warnings,
        notes=spec.notes,
        findings=checked.findings,
    )
    tensors = dumping.dump_tensors(out)
    if opts.dump is not None:
        dumping.write_dump(
            Path(opts.dump),
            tensors,
            {
                "model_type": spec.model_type,
                "device": str(device),
                "dtype": result.dtype,
                "inputs": inputs.source,
            },
        )
        result.dump = str(opts.dump)
    if opts.compare is not None:
        result.comparison = dumping.compare(Path(opts.compare), tensors, opts.atol)
    return result
