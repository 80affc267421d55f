"""MTP: a verifier's own multi-token-prediction layer (speculators ``MTPDraftModel``).

Difference from the shared decoder layer: its input is
``input_proj(cat(token_layernorm(embed(x)), hidden_layernorm(h)))`` (embedding first), where
``h`` is the verifier's last hidden state, and its output passes ``final_layernorm`` before
the verifier's ``lm_head`` (full vocabulary V; no ``d2t``). The checkpoint holds only
``mtp_layers.0.*``: ``embed_tokens`` and ``lm_head`` are the verifier's (``--verifier``).

Row t pairs ``hidden_states[t]`` with ``input_ids[t]`` (the following token) and predicts
the token after it, under a causal mask at position t: training's step 0. Only Qwen3 MTP
layers are implemented (Qwen3-Next / Qwen3.5 layers use gated attention and (1+w) norms).
"""

from __future__ import annotations

import torch
from torch import nn

from spec_format.forward.blocks import (
    DecoderLayer,
    Embedding,
    RMSNorm,
    RotaryEmbedding,
    causal_mask,
)
from spec_format.forward.config import DraftSpec, LayerSpec
from spec_format.forward.draft import DraftModel, DraftOutput


class MTPLayer(DecoderLayer):
    def __init__(self, spec: LayerSpec) -> None:
        super().__init__(spec)
        self.hidden_layernorm = RMSNorm(spec.H, spec.eps)  # diff: input norms and projection
        self.token_layernorm = RMSNorm(spec.H, spec.eps)
        self.input_proj = nn.Linear(2 * spec.H, spec.H, bias=False)
        self.final_layernorm = RMSNorm(spec.H, spec.eps)  # diff: output norm

    def forward(
        self,
        hidden: torch.Tensor,
        embeds: torch.Tensor,
        cos: torch.Tensor,
        sin: torch.Tensor,
        mask: torch.Tensor,
    ) -> torch.Tensor:
        u = self.input_proj(
            torch.cat([self.token_layernorm(embeds), self.hidden_layernorm(hidden)], dim=-1)
        )
        x, _ = super().forward(u, cos, sin, mask)
        return self.final_layernorm(x)


class MTPDraft(DraftModel):
    def __init__(self, spec: DraftSpec) -> None:
        super().__init__(spec)
        L = spec.layer
        self.embed_tokens = Embedding(L.V, L.H)
        self.mtp_layers = nn.ModuleList([MTPLayer(L)])
        self.lm_head = nn.Linear(L.H, L.V, bias=False)
        self.rotary_emb = RotaryEmbedding(L.rope, L.hd)

    def draft_rows(
        self, input_ids: torch.Tensor, hidden_states: torch.Tensor, steps: int
    ) -> DraftOutput:
        T, device = input_ids.shape[0], input_ids.device
        cos, sin = self.rotary_emb(torch.arange(T, device=device), hidden_states.dtype)
        # speculators builds the MTP mask with create_causal_mask: causal, no window
        s = self.mtp_layers[0](
            hidden_states, self.embed_tokens(input_ids), cos, sin, causal_mask(T, None, device)
        )
        logits = self.lm_head(s)  # (T, V)
        ids = logits.argmax(-1)
        return DraftOutput(
            logits=logits,
            positions=list(range(T)),
            draft_ids=ids,
            token_ids=ids,
            proposal=[int(ids[-1])],
        )
