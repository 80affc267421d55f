"""DFlash2: DFlash with local convolutions and a candidate reranker (speculators
``DFlash2DraftModel``, after z-lab's DFlash2).

Difference from :mod:`dflash`:

* each layer wraps its attention and its MLP in a *grouped dynamic causal convolution*
  over the block: ``attention_conv`` / ``mlp_conv`` hold ``base_kernel`` ``[2, K, H]``
  (input side, output side) and ``kernel_projection`` (H -> 2*K*G, G = H / group_size),
  which adds a per-token, per-group delta to the kernel. Output slot i sums taps
  ``i, i-1, .., i-K+1`` of its own block (causal, zero before slot 0). The context is not
  convolved;
* ``candidate_selector`` reranks each slot's top-k unary candidates (``selector_top_k``) by
  ``unary + <predecessor_codebook[prev] * hidden_projection(hidden), successor_codebook[c]>``,
  slot by slot, ``prev`` being the token drafted before (the anchor first). The vocabulary
  is always the verifier's (no ``d2t``).

The dumped ``logits`` are the unary (backbone) logits; the chosen ids are the reranked ones.
"""

from __future__ import annotations

import torch
from torch import nn

from spec_format.forward.config import DraftSpec, LayerSpec
from spec_format.forward.dflash import DFlashDraft, DFlashLayer, Rope
from spec_format.forward.draft import DraftOutput


def grouped_causal_conv(
    x: torch.Tensor, delta: torch.Tensor, base: torch.Tensor, group_size: int
) -> torch.Tensor:
    """``x`` (B, H), ``delta`` (B, K, G), ``base`` (K, H) -> (B, H):
    ``out[i] = sum_tap x[i - tap] * (base[tap] + delta[i, tap, group])``."""
    B, H = x.shape
    G, K = H // group_size, base.shape[0]
    xg = x.view(B, G, group_size)
    out = torch.zeros_like(xg)
    for tap in range(K):
        shifted = torch.cat([xg.new_zeros(tap, G, group_size), xg[: B - tap]])  # x[i - tap]
        coefficient = base[tap].to(x.dtype).view(1, G, group_size) + delta[:, tap, :, None]
        out = out + shifted * coefficient
    return out.view(B, H)


class DynamicConv(nn.Module):
    """``GroupedDynamicCausalConv``: one kernel projection drives an input-side and an
    output-side convolution around a sublayer."""

    def __init__(self, H: int, kernel_size: int, group_size: int) -> None:
        super().__init__()
        self.K, self.group_size, self.G = kernel_size, group_size, H // group_size
        self.base_kernel = nn.Parameter(torch.zeros(2, kernel_size, H))
        self.kernel_projection = nn.Linear(H, 2 * kernel_size * self.G, bias=False)

    def prepare(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        kernels = self.kernel_projection(x).view(x.shape[0], 2, self.K, self.G)
        convolved = grouped_causal_conv(x, kernels[:, 0], self.base_kernel[0], self.group_size)
        return convolved, kernels[:, 1]

    def finish(self, x: torch.Tensor, delta: torch.Tensor) -> torch.Tensor:
        return grouped_causal_conv(x, delta, self.base_kernel[1], self.group_size)


class DFlash2Layer(DFlashLayer):
    def __init__(self, spec: LayerSpec, kernel_size: int, group_size: int) -> None:
        super().__init__(spec)
        self.attention_conv = DynamicConv(spec.H, kernel_size, group_size)  # diff
        self.mlp_conv = DynamicConv(spec.H, kernel_size, group_size)  # diff

    def forward(
        self, x: torch.Tensor, ctx: torch.Tensor, rope_ctx: Rope, rope_blk: Rope, mask: torch.Tensor
    ) -> torch.Tensor:
        # Self Attention, convolved on both sides
        h, kernel = self.attention_conv.prepare(self.input_layernorm(x))
        h = self.self_attn(h, ctx, rope_ctx, rope_blk, mask)
        x = x + self.attention_conv.finish(h, kernel)
        # Fully Connected, convolved on both sides
        h, kernel = self.mlp_conv.prepare(self.post_attention_layernorm(x))
        return x + self.mlp_conv.finish(self.mlp(h), kernel)


class CandidateSelector(nn.Module):
    def __init__(self, spec: DraftSpec) -> None:
        super().__init__()
        r = int(spec.flag("selector_rank"))
        self.top_k = int(spec.flag("selector_top_k"))
        self.predecessor_codebook = nn.Parameter(torch.zeros(spec.V, r))
        self.successor_codebook = nn.Parameter(torch.zeros(spec.V, r))
        self.hidden_projection = nn.Linear(spec.H, r, bias=False)

    def select(self, unary: torch.Tensor, hidden: torch.Tensor, prev: int) -> torch.Tensor:
        """Rerank the top-k of ``unary`` (V,) for one slot; returns the chosen id."""
        candidates = unary.topk(min(self.top_k, unary.shape[-1])).indices
        context = self.predecessor_codebook[prev] * self.hidden_projection(hidden).to(
            self.predecessor_codebook.dtype
        )
        transition = (context[None, :] * self.successor_codebook[candidates]).sum(-1)
        scores = unary[candidates] + transition.to(unary.dtype)
        return candidates[scores.argmax()]


class DFlash2Draft(DFlashDraft):
    def __init__(self, spec: DraftSpec) -> None:
        super().__init__(spec)
        self.candidate_selector = CandidateSelector(spec)  # diff

    def make_layer(self, index: int) -> DFlash2Layer:
        return DFlash2Layer(
            self.spec.layer,
            int(self.spec.flag("conv_kernel_size")),
            int(self.spec.flag("conv_group_size")),
        )

    def draft_block(
        self, input_ids: torch.Tensor, hidden_states: torch.Tensor, anchor: int
    ) -> DraftOutput:
        hidden, unary = self.backbone(input_ids, hidden_states, anchor)
        anchor_token = int(input_ids[anchor])
        chosen: list[int] = []
        for s in range(self.block_size):
            prev = self.previous_token(s, anchor_token, chosen)
            chosen.append(int(self.candidate_selector.select(unary[s], hidden[s], prev)))
        ids = torch.tensor(chosen, device=input_ids.device)  # verifier ids: no d2t here
        return self.block_output(anchor, unary, ids, ids)
