"""EAGLE-3: a decoder stack fed with the verifier's aux hidden states (speculators
``Eagle3DraftModel``).

Difference from the shared blocks:

* the aux hidden states ``[T, A*Ht]`` are optionally normalised (``input_norm`` over all of
  them with ``norm_before_fc``, or ``fc_norm.i`` per chunk with ``fc_norm``) and projected
  to H by ``fc`` (no bias);
* layer 0 is widened: its q/k/v read ``2H = cat(input_layernorm(embeddings),
  hidden_norm(hidden))`` (embeddings first), and its residual is the hidden state (normed
  first with ``norm_before_residual``); layers 1.. are ordinary decoder layers;
* ``lm_head`` maps ``norm(h)`` to the draft vocabulary D, mapped to verifier ids by
  ``d2t``.

Alignment (speculators' ``shift_batch``, vLLM's proposer): row t pairs ``hidden_states[t]``
(the verifier's aux states at position t) with ``input_ids[t]`` (the token that followed
it, the verifier's bonus token in the last row); row t predicts the token after that.

Step 0 runs every row under a causal (or sliding-window) mask. Steps 1..K (``--steps``)
continue from the last row as a chain: the input hidden state is the previous step's
output (after ``norm`` with ``norm_output``, before it otherwise; no ``fc``), the input token
is the previous draft mapped to a verifier id, the position advances by one, and the query
attends to the step-0 keys of rows ``<= T-1`` plus the chain's own keys. That is exactly
what training's test-time-training steps compute for the last row (the window, when
sliding, is measured from the row index as in training).
"""

from __future__ import annotations

import torch
from torch import nn

from spec_format.forward.blocks import (
    KV,
    DecoderLayer,
    Embedding,
    RMSNorm,
    RotaryEmbedding,
    causal_mask,
)
from spec_format.forward.config import DraftSpec, LayerSpec
from spec_format.forward.draft import DraftModel, DraftOutput


class Eagle3FirstLayer(DecoderLayer):
    """Layer 0: q/k/v take ``2H``; an extra ``hidden_norm``; the residual is the hidden."""

    def __init__(self, spec: LayerSpec, norm_before_residual: bool) -> None:
        super().__init__(spec, attn_in_features=2 * spec.H)  # diff: 2H input
        self.hidden_norm = RMSNorm(spec.H, spec.eps)  # diff: norm for the hidden half
        self.norm_before_residual = norm_before_residual

    def forward(
        self,
        embeds: torch.Tensor,
        hidden: torch.Tensor,
        cos: torch.Tensor,
        sin: torch.Tensor,
        mask: torch.Tensor,
        past: KV | None = None,
    ) -> tuple[torch.Tensor, KV]:
        e = self.input_layernorm(embeds)  # diff: input_layernorm normalises the embeddings
        g = self.hidden_norm(hidden)
        residual = g if self.norm_before_residual else hidden  # diff: residual = hidden
        # Self Attention over cat([embeddings, hidden]) (2H)
        h, kv = self.self_attn(torch.cat([e, g], dim=-1), cos, sin, mask, past)
        x = residual + h
        # Fully Connected
        x = x + self.mlp(self.post_attention_layernorm(x))
        return x, kv


class Eagle3Draft(DraftModel):
    def __init__(self, spec: DraftSpec) -> None:
        super().__init__(spec)
        L, A, Ht = spec.layer, spec.A, spec.Ht
        self.embed_tokens = Embedding(L.V, L.H)
        if spec.flag("norm_before_fc"):
            self.input_norm = RMSNorm(A * Ht, L.eps)
        if spec.flag("fc_norm"):
            self.fc_norm = nn.ModuleList([RMSNorm(Ht, L.eps) for _ in range(A)])
        self.fc = nn.Linear(A * Ht, L.H, bias=False)
        self.layers = nn.ModuleList(
            [Eagle3FirstLayer(L, bool(spec.flag("norm_before_residual")))]
            + [DecoderLayer(L) for _ in range(1, L.L)]
        )
        self.norm = RMSNorm(L.H, L.eps)
        self.lm_head = nn.Linear(L.H, spec.D, bias=False)
        self.rotary_emb = RotaryEmbedding(L.rope, L.hd)

    # ------------------------------------------------------------------ pieces

    def combine_aux(self, aux: torch.Tensor) -> torch.Tensor:
        """``[T, A*Ht]`` aux hidden states -> ``[T, H]`` (optional norms, then ``fc``)."""
        if hasattr(self, "input_norm"):
            aux = self.input_norm(aux)
        if hasattr(self, "fc_norm"):
            chunks = aux.chunk(len(self.fc_norm), dim=-1)
            aux = torch.cat([norm(c) for norm, c in zip(self.fc_norm, chunks, strict=True)], dim=-1)
        return self.fc(aux)

    def window(self, layer_index: int) -> int | None:
        L = self.spec.layer
        return L.sliding_window if L.is_sliding(layer_index) else None

    def run_layers(
        self,
        embeds: torch.Tensor,
        hidden: torch.Tensor,
        cos: torch.Tensor,
        sin: torch.Tensor,
        masks: list[torch.Tensor],
        caches: list[KV] | None = None,
    ) -> tuple[torch.Tensor, list[KV]]:
        """All layers; ``caches[l]`` are earlier keys/values of layer l (or None)."""
        past = caches or [None] * len(self.layers)
        x, kv = self.layers[0](embeds, hidden, cos, sin, masks[0], past[0])
        new_caches = [kv]
        for layer, mask, layer_past in zip(self.layers[1:], masks[1:], past[1:], strict=True):
            x, kv = layer(x, cos, sin, mask, layer_past)
            new_caches.append(kv)
        return x, new_caches

    # ------------------------------------------------------------------ forward

    def draft_rows(
        self, input_ids: torch.Tensor, hidden_states: torch.Tensor, steps: int
    ) -> DraftOutput:
        T, device = input_ids.shape[0], input_ids.device
        cos, sin = self.rotary_emb(torch.arange(T, device=device), hidden_states.dtype)
        masks = [causal_mask(T, self.window(i), device) for i in range(len(self.layers))]

        # step 0: every row in parallel
        x, caches = self.run_layers(
            self.embed_tokens(input_ids), self.combine_aux(hidden_states), cos, sin, masks
        )
        h = self.norm(x)
        logits = self.lm_head(h)  # (T, D)
        draft_ids = logits.argmax(-1)
        token_ids = self.to_target(draft_ids)

        # steps 1..K: a chain from the last row
        chain_logits, chain_draft = [], []
        hidden = h[-1:] if self.spec.flag("norm_output") else x[-1:]
        token = token_ids[-1:]
        for k in range(1, steps + 1):
            cos_k, sin_k = self.rotary_emb(
                torch.tensor([T - 1 + k], device=device), hidden_states.dtype
            )
            masks_k = [
                self._chain_mask(T, k, self.window(i), device) for i in range(len(self.layers))
            ]
            x, caches = self.run_layers(
                self.embed_tokens(token), hidden, cos_k, sin_k, masks_k, caches
            )
            h = self.norm(x)
            step_logits = self.lm_head(h)  # (1, D)
            chain_logits.append(step_logits)
            chain_draft.append(step_logits.argmax(-1))
            hidden = h if self.spec.flag("norm_output") else x
            token = self.to_target(chain_draft[-1])

        out = DraftOutput(
            logits=logits,
            positions=list(range(T)),
            draft_ids=draft_ids,
            token_ids=token_ids,
            proposal=[int(token_ids[-1])],
        )
        if steps:
            out.chain_logits = torch.cat(chain_logits)
            out.chain_draft_ids = torch.cat(chain_draft)
            out.chain_token_ids = self.to_target(out.chain_draft_ids)
            out.proposal += [int(t) for t in out.chain_token_ids]
        return out

    @staticmethod
    def _chain_mask(T: int, k: int, window: int | None, device: torch.device) -> torch.Tensor:
        """Chain step k (query = last row): step-0 keys ``0..T-1`` (within the window of
        row T-1) and the chain's keys of steps 1..k."""
        j = torch.arange(T, device=device)
        step0 = j <= T - 1 if window is None else j > T - 1 - window
        return torch.cat([step0, torch.ones(k, dtype=torch.bool, device=device)])[None, :]
