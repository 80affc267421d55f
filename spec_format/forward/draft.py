"""What every draft model has in common: the vocabulary maps and the shape of its output."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import nn

from spec_format.forward.blocks import draft_to_target
from spec_format.forward.config import BLOCK, DraftSpec


@dataclass
class DraftOutput:
    """The rows a forward reports, in draft-vocabulary logits.

    ``logits`` ``(N, D)``: EAGLE family / MTP one row per input position (step 0); DFlash
    family one row per drafted block slot. ``draft_ids``/``token_ids`` are the ids the
    algorithm chooses for each row, in the draft and the verifier vocabulary. ``chain_*``
    hold the ``--steps`` rows drafted after the last position (EAGLE family only).
    ``proposal`` is what a speculator would hand the verifier, as verifier ids.
    """

    logits: torch.Tensor
    positions: list[int]
    draft_ids: torch.Tensor
    token_ids: torch.Tensor
    proposal: list[int]
    slots: list[int] | None = None
    chain_logits: torch.Tensor | None = None
    chain_draft_ids: torch.Tensor | None = None
    chain_token_ids: torch.Tensor | None = None
    extras: dict[str, torch.Tensor] = field(default_factory=dict)  # per-row values


class DraftModel(nn.Module):
    """Base of the per-algorithm models. ``d2t`` (int64 ``[D]``) and ``t2d`` (bool ``[V]``)
    are buffers exactly when the checkpoint carries them (``D != V``)."""

    d2t: torch.Tensor | None
    t2d: torch.Tensor | None

    def __init__(self, spec: DraftSpec) -> None:
        super().__init__()
        self.spec = spec
        if spec.uses_vocab_map:
            self.register_buffer("d2t", torch.zeros(spec.D, dtype=torch.int64))
            self.register_buffer("t2d", torch.zeros(spec.V, dtype=torch.bool))
        else:
            self.d2t = self.t2d = None

    def to_target(self, draft_ids: torch.Tensor) -> torch.Tensor:
        return draft_to_target(draft_ids, self.d2t)

    def draft(
        self,
        input_ids: torch.Tensor,
        hidden_states: torch.Tensor,
        *,
        steps: int = 0,
        anchor: int | None = None,
    ) -> DraftOutput:
        """One draft pass over the verifier's ``input_ids`` and ``hidden_states``: the block
        family drafts the block after position ``anchor`` (:meth:`draft_block`), the others
        a row per position and then ``steps`` more after the last (:meth:`draft_rows`)."""
        if self.spec.model_type in BLOCK:
            assert anchor is not None
            return self.draft_block(input_ids, hidden_states, anchor)
        return self.draft_rows(input_ids, hidden_states, steps)

    def draft_rows(self, input_ids: torch.Tensor, hidden_states: torch.Tensor, steps: int):
        raise NotImplementedError

    def draft_block(self, input_ids: torch.Tensor, hidden_states: torch.Tensor, anchor: int):
        raise NotImplementedError
