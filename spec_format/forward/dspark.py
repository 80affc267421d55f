"""DSpark: the DFlash backbone plus a Markov logit bias and a confidence head (speculators
``DSparkDraftModel``).

Difference from :mod:`dflash`, applied after ``backbone`` (``hidden`` is post-``norm``):

* ``markov_head``: a low-rank bias ``markov_w2(e)`` on slot s's draft logits, where
  ``e = markov_w1[prev_s]`` embeds the verifier id of the token before slot s's target
  (``vanilla``); ``gated`` multiplies ``e`` by ``sigmoid(gate_proj(cat(hidden_s, e)))``;
  ``rnn`` carries a state over the block through ``joint_proj``. Slots are drafted left to
  right, since ``prev_s`` is the token drafted at slot s-1 (the anchor for the first slot);
* ``confidence_head``: ``sigmoid(proj(cat(hidden_s, e)))`` (or of ``hidden_s`` alone), the
  predicted acceptance probability of slot s; reported, not used to draft.

``markov_rank = 0`` removes the Markov head (plain DFlash drafting).
"""

from __future__ import annotations

import torch
from torch import nn

from spec_format.forward.blocks import Embedding
from spec_format.forward.config import DraftSpec
from spec_format.forward.dflash import DFlashDraft
from spec_format.forward.draft import DraftOutput


class MarkovHead(nn.Module):
    def __init__(self, spec: DraftSpec) -> None:
        super().__init__()
        r, H = int(spec.flag("markov_rank")), spec.H
        self.kind, self.rank = spec.flag("markov_head_type"), r
        self.markov_w1 = Embedding(spec.V, r)  # indexed by verifier ids
        self.markov_w2 = nn.Linear(r, spec.D, bias=False)
        if self.kind == "gated":
            self.gate_proj = nn.Linear(H + r, r)
        elif self.kind == "rnn":
            self.joint_proj = nn.Linear(2 * r + H, 3 * r)  # [gate; candidate; output]

    def step(
        self, prev: torch.Tensor, hidden: torch.Tensor, state: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Bias ``(D,)`` for one slot, the previous-token embedding and the new state."""
        e = self.markov_w1(prev).to(self.markov_w2.weight.dtype)  # (r,)
        hidden = hidden.to(e.dtype)
        if self.kind == "vanilla":
            return self.markov_w2(e), e, state
        if self.kind == "gated":
            gate = torch.sigmoid(self.gate_proj(torch.cat([hidden, e])))
            return self.markov_w2(gate * e), e, state
        gate_raw, cand_raw, out_raw = self.joint_proj(torch.cat([state, e, hidden])).chunk(3)
        gate = torch.sigmoid(gate_raw)
        state = gate * state + (1.0 - gate) * torch.tanh(cand_raw)
        return self.markov_w2(torch.tanh(out_raw)), e, state


class ConfidenceHead(nn.Module):
    def __init__(self, in_features: int) -> None:
        super().__init__()
        self.proj = nn.Linear(in_features, 1)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(self.proj(features).squeeze(-1).float())


class DSparkDraft(DFlashDraft):
    def __init__(self, spec: DraftSpec) -> None:
        super().__init__(spec)
        r = int(spec.flag("markov_rank"))
        if r > 0:
            self.markov_head = MarkovHead(spec)
        if spec.flag("enable_confidence_head"):
            with_markov = bool(spec.flag("confidence_head_with_markov"))
            self.confidence_head = ConfidenceHead(spec.H + (r if with_markov else 0))

    def draft_block(
        self, input_ids: torch.Tensor, hidden_states: torch.Tensor, anchor: int
    ) -> DraftOutput:
        hidden, logits = self.backbone(input_ids, hidden_states, anchor)
        markov = getattr(self, "markov_head", None)
        confidence = getattr(self, "confidence_head", None)
        anchor_token = int(input_ids[anchor])
        chosen: list[int] = []  # verifier id drafted at each slot
        rows, draft_ids, confidences = [], [], []
        state = hidden.new_zeros(markov.rank) if markov is not None else None
        for s in range(self.block_size):
            prev = torch.tensor(
                self.previous_token(s, anchor_token, chosen), device=input_ids.device
            )
            row, e = logits[s], None
            if markov is not None:
                bias, e, state = markov.step(prev, hidden[s], state)
                row = row + bias
            draft_id = row.argmax(-1)
            chosen.append(int(self.to_target(draft_id)))
            rows.append(row)
            draft_ids.append(draft_id)
            if confidence is not None:
                features = (
                    hidden[s]
                    if e is None or not self.spec.flag("confidence_head_with_markov")
                    else torch.cat([hidden[s], e.to(hidden.dtype)])
                )
                confidences.append(confidence(features))

        out = self.block_output(anchor, torch.stack(rows), torch.stack(draft_ids))
        if confidences:
            out.extras["confidence"] = torch.stack(confidences)[out.slots]
        return out
