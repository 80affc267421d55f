"""DFlash: one parallel pass drafts a whole block (speculators ``DFlashDraftModel``).

Difference from the shared blocks:

* the context is the verifier's aux hidden states of positions ``0..c-1`` (``c`` = the
  anchor), projected once: ``hidden_norm(fc(aux))``. It only supplies keys and values
  (through each layer's own ``k_proj``/``v_proj``/``k_norm`` at the context positions); it
  is never a query and never passes ``input_layernorm``;
* the queries are a block of B tokens at positions ``c..c+B-1``: the anchor token
  ``input_ids[c]`` followed by ``mask_token_id`` B-1 times, embedded by ``embed_tokens``;
* each query sees the whole context (within ``sliding_window`` of the anchor on sliding
  layers) and its own block: all of it on full-attention layers (bidirectional), slots
  ``<= q`` on sliding layers unless ``sliding_window_non_causal``;
* the layers are always Qwen3-style (``q_norm``/``k_norm``), whatever ``model_type`` says.

Slot s's logits predict the token at position ``c+s`` (``sample_from_anchor`` false:
slot 0 is the anchor and is not drafted, B-1 drafts) or ``c+s+1`` (true: B drafts).
DSpark, DFlash2 and XPress reuse :meth:`DFlashDraft.backbone` and add their heads.
"""

from __future__ import annotations

import torch
from torch import nn

from spec_format.forward.blocks import (
    Attention,
    DecoderLayer,
    Embedding,
    RMSNorm,
    RotaryEmbedding,
    anchored_block_mask,
    eager_attention,
)
from spec_format.forward.config import DraftSpec, LayerSpec
from spec_format.forward.draft import DraftModel, DraftOutput

Rope = tuple[torch.Tensor, torch.Tensor]


class DFlashAttention(Attention):
    """Keys/values from the context *and* the block; queries from the block only."""

    def __init__(self, spec: LayerSpec, in_features: int | None = None) -> None:
        super().__init__(spec, in_features, qk_norm=True)

    def forward(
        self, x: torch.Tensor, ctx: torch.Tensor, rope_ctx: Rope, rope_blk: Rope, mask: torch.Tensor
    ) -> torch.Tensor:
        q = self.project_q(x, *rope_blk)  # (nH, B, hd)
        k_ctx, v_ctx = self.project_kv(ctx, *rope_ctx)  # diff: context keys/values
        k_blk, v_blk = self.project_kv(x, *rope_blk)
        k = torch.cat([k_ctx, k_blk], dim=1)  # (nKV, c + B, hd): context first
        v = torch.cat([v_ctx, v_blk], dim=1)
        return self.o_proj(eager_attention(q, k, v, mask, self.hd**-0.5))


class DFlashLayer(DecoderLayer):
    attention_class = DFlashAttention

    def forward(
        self, x: torch.Tensor, ctx: torch.Tensor, rope_ctx: Rope, rope_blk: Rope, mask: torch.Tensor
    ) -> torch.Tensor:
        # Self Attention (the context enters as keys/values, not normed here)
        x = x + self.self_attn(self.input_layernorm(x), ctx, rope_ctx, rope_blk, mask)
        # Fully Connected
        return x + self.mlp(self.post_attention_layernorm(x))


class DFlashDraft(DraftModel):
    layer_class: type[DFlashLayer] = DFlashLayer

    def __init__(self, spec: DraftSpec) -> None:
        super().__init__(spec)
        L = spec.layer
        self.block_size = int(spec.flag("block_size"))
        self.embed_tokens = Embedding(L.V, L.H)
        self.fc = nn.Linear(spec.A * spec.Ht, L.H, bias=False)
        self.hidden_norm = RMSNorm(L.H, L.eps)
        self.layers = nn.ModuleList([self.make_layer(i) for i in range(L.L)])
        self.norm = RMSNorm(L.H, L.eps)
        self.lm_head = nn.Linear(L.H, spec.D, bias=False)
        self.rotary_emb = RotaryEmbedding(L.rope, L.hd)

    def make_layer(self, index: int) -> DFlashLayer:
        return self.layer_class(self.spec.layer)

    def block_mask(self, layer_index: int, context: int, device: torch.device) -> torch.Tensor:
        L = self.spec.layer
        sliding = L.is_sliding(layer_index)
        causal = sliding and not self.spec.flag("sliding_window_non_causal")
        return anchored_block_mask(
            context, self.block_size, L.sliding_window if sliding else None, causal, device
        )

    @property
    def drafted_slots(self) -> list[int]:
        first = 0 if self.spec.flag("sample_from_anchor") else 1
        return list(range(first, self.block_size))

    def backbone(
        self, input_ids: torch.Tensor, hidden_states: torch.Tensor, anchor: int
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Post-``norm`` hidden ``(B, H)`` and draft logits ``(B, D)`` of every block slot."""
        B, c, device = self.block_size, anchor, input_ids.device
        ctx = self.hidden_norm(self.fc(hidden_states[:c]))  # (c, H)
        block_ids = torch.full((B,), int(self.spec.flag("mask_token_id")), device=device)
        block_ids[0] = input_ids[c]
        x = self.embed_tokens(block_ids)  # (B, H)
        cos, sin = self.rotary_emb(torch.arange(c + B, device=device), hidden_states.dtype)
        rope_ctx, rope_blk = (cos[:c], sin[:c]), (cos[c:], sin[c:])
        for i, layer in enumerate(self.layers):
            x = layer(x, ctx, rope_ctx, rope_blk, self.block_mask(i, c, device))
        hidden = self.norm(x)
        return hidden, self.lm_head(hidden)

    def previous_token(self, slot: int, anchor_token: int, chosen: list[int]) -> int:
        """The verifier id that precedes slot ``slot``'s target: the anchor for the first
        drafted slot, then the token drafted at the slot before."""
        first = self.drafted_slots[0]
        return anchor_token if slot <= first else chosen[slot - 1]

    def draft_block(
        self, input_ids: torch.Tensor, hidden_states: torch.Tensor, anchor: int
    ) -> DraftOutput:
        _, logits = self.backbone(input_ids, hidden_states, anchor)
        return self.block_output(anchor, logits, logits.argmax(-1))

    def block_output(
        self,
        anchor: int,
        logits: torch.Tensor,
        draft_ids: torch.Tensor,
        token_ids: torch.Tensor | None = None,
    ) -> DraftOutput:
        """The drafted slots of a block whose ``logits`` and ``draft_ids`` hold a row per
        block slot; ``token_ids`` (verifier ids) default to the mapped ``draft_ids``."""
        slots = self.drafted_slots
        draft_ids = draft_ids[slots]
        token_ids = self.to_target(draft_ids) if token_ids is None else token_ids[slots]
        return DraftOutput(
            logits=logits[slots],
            positions=[anchor + s for s in slots],
            slots=slots,
            draft_ids=draft_ids,
            token_ids=token_ids,
            proposal=[int(t) for t in token_ids],
        )
