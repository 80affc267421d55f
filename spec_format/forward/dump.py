"""``--dump`` and ``--compare``: forward outputs as a small safetensors file.

Keys: ``logits`` (float32 ``[N, D]``: ``[T, D]`` for the EAGLE family and MTP, one row per
drafted slot for the DFlash family) and ``draft_token_ids`` (int64 ``[N]``, verifier ids);
with ``--steps`` also ``chain_logits`` / ``chain_token_ids``.

Comparison: float tensors must agree within ``atol``. A chosen id may differ only where the
two candidates' logits are within ``atol`` of each other in this run (a tie at that
tolerance, e.g. between float32 and bfloat16), which is reported but not a mismatch.
"""

from __future__ import annotations

from pathlib import Path

import torch
from safetensors.torch import save

from spec_format.base.errors import InputError
from spec_format.forward.draft import DraftOutput
from spec_format.forward.inputs import open_regular
from spec_format.forward.result import Comparison
from spec_format.parsers.outfile import write_output

# (logits, chosen verifier ids, chosen draft ids) of the step-0 rows and of the chain
_GROUPS = (
    ("logits", "draft_token_ids", "draft_ids"),
    ("chain_logits", "chain_token_ids", "chain_draft_ids"),
)


def dump_tensors(out: DraftOutput) -> dict[str, torch.Tensor]:
    def own(tensor: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
        # a copy of its own: safetensors refuses tensors sharing memory (MTP and DFlash2
        # choose in the verifier vocabulary, so their draft and verifier ids are one tensor)
        return tensor.detach().to("cpu", dtype).clone().contiguous()

    tensors = {
        "logits": own(out.logits, torch.float32),
        "draft_token_ids": own(out.token_ids, torch.int64),
        "draft_ids": own(out.draft_ids, torch.int64),
    }
    if out.chain_logits is not None:
        tensors["chain_logits"] = own(out.chain_logits, torch.float32)
        tensors["chain_token_ids"] = own(out.chain_token_ids, torch.int64)
        tensors["chain_draft_ids"] = own(out.chain_draft_ids, torch.int64)
    return tensors


def write_dump(path: Path, tensors: dict[str, torch.Tensor], metadata: dict[str, str]) -> None:
    """Through the one output writer: a regular file (or a link to one) is replaced
    atomically, /dev/null or a FIFO is written through, a missing directory is exit 2."""
    write_output(path, save(tensors, metadata=metadata))


def _read(path: Path, ours: dict[str, torch.Tensor]) -> dict[str, torch.Tensor | list[int] | None]:
    """The tensors of a ``--compare`` file: those this run also has are read only when the
    header shape equals ours (else the shape, so a mismatch is reported from the header
    alone); the others as ``None`` (never read)."""
    out: dict[str, torch.Tensor | list[int] | None] = {}
    try:
        with open_regular(path, "--compare") as f:
            for name in f.keys():  # noqa: SIM118
                if name not in ours:
                    out[name] = None
                    continue
                shape = list(f.get_slice(name).get_shape())
                out[name] = f.get_tensor(name) if shape == list(ours[name].shape) else shape
    except InputError:
        raise
    except Exception as exc:  # safetensors raises its own error types
        raise InputError(f"--compare {path}: not a readable safetensors file ({exc})") from exc
    return out


def compare(path: Path, ours: dict[str, torch.Tensor], atol: float) -> Comparison:
    ref = _read(path, ours)
    result = Comparison(path=str(path), atol=atol, ok=True)
    for logits_key, ids_key, draft_key in _GROUPS:
        if logits_key not in ref and logits_key not in ours:
            continue
        if logits_key not in ref or logits_key not in ours:
            where = "the reference" if logits_key not in ref else "this run"
            result.problems.append(f"{logits_key}: absent from {where}")
            continue
        a, b = ours[logits_key], ref[logits_key]
        if not isinstance(b, torch.Tensor):
            result.problems.append(
                f"{logits_key}: shape {list(a.shape)} here, {b} in the reference"
            )
            continue
        b = b.float()
        diff = (a - b).abs()
        worst = float(diff.max()) if diff.numel() else 0.0
        result.max_abs_diff[logits_key] = worst
        if not worst <= atol:  # also catches NaN
            row, col = divmod(int(diff.argmax()), a.shape[1])
            result.problems.append(
                f"{logits_key}: max |diff| {worst:.3g} > atol {atol:g} (row {row}, draft id {col})"
            )
        if ids_key in ref:
            _compare_choices(ours, ref, logits_key, ids_key, draft_key, atol, result)
    result.ok = not result.problems
    return result


def _compare_choices(
    ours: dict[str, torch.Tensor],
    ref: dict[str, torch.Tensor],
    logits_key: str,
    ids_key: str,
    draft_key: str,
    atol: float,
    result: Comparison,
) -> None:
    mine, theirs = ours[ids_key], ref[ids_key]
    if not isinstance(theirs, torch.Tensor):
        result.problems.append(
            f"{ids_key}: shape {list(mine.shape)} here, {theirs} in the reference"
        )
        return
    logits = ours[logits_key]
    hard = []
    for row in (mine != theirs).nonzero().flatten().tolist():
        tie = False
        if isinstance(ref.get(draft_key), torch.Tensor) and draft_key in ours:
            a, b = int(ours[draft_key][row]), int(ref[draft_key][row])
            tie = 0 <= b < logits.shape[1] and abs(float(logits[row, a] - logits[row, b])) <= atol
        if not tie:
            hard.append(row)
    if hard:
        result.problems.append(
            f"{ids_key}: {len(hard)} row(s) choose another token (first: row {hard[0]}, "
            f"{int(mine[hard[0]])} here, {int(theirs[hard[0]])} in the reference)"
        )
