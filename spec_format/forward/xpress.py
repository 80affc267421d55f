"""XPress: the DFlash backbone plus a causal refiner head iterated Jacobi-style (speculators
``XPressDraftModel``).

Difference from :mod:`dflash`, applied after ``backbone``: ``refiner_head`` adds a bias to
the block's draft logits from the tokens drafted so far, in a low-rank space r:

* per block, once: ``hcache = cat(down_h(hidden), down_g(mean of hidden over the block))``;
* per pass: ``x = in_proj(cat(hcache, token_embed[prev]))``, then a causal mix over slots
  ``x[k] += sum_{j<=k} mix_l[:, k, j] * x[j]``, a SwiGLU MLP residual, and ``readout`` to D.

``prev`` for slot k is the verifier id before slot k's target: with ``sample_from_anchor``
false (the XPress layout) slot 0 reads the token before the anchor, slot 1 the anchor,
slot k the draft of slot k-1; with true, slot 0 reads the anchor. Drafts start as the
backbone's argmax and are refined ``num_jacobi_passes`` times (each pass re-reads the
previous pass's drafts), as in training's consistency rounds. The reported logits are the
last pass's refined logits.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F  # noqa: N812
from torch import nn

from spec_format.forward.blocks import Embedding
from spec_format.forward.config import DraftSpec
from spec_format.forward.dflash import DFlashDraft
from spec_format.forward.draft import DraftOutput


class RefinerHead(nn.Module):
    def __init__(self, spec: DraftSpec, block_size: int) -> None:
        super().__init__()
        r, H = int(spec.flag("xpress_rank")), spec.H
        hidden = r * int(spec.flag("xpress_mlp_ratio"))
        self.token_embed = Embedding(spec.V, r)  # indexed by verifier ids
        self.down_h = nn.Linear(H, r, bias=False)
        self.down_g = nn.Linear(H, r, bias=False)
        self.in_proj = nn.Linear(3 * r, r, bias=False)
        self.mix_l = nn.Parameter(torch.zeros(r, block_size, block_size))
        self.mlp_gate = nn.Linear(r, hidden, bias=False)
        self.mlp_up = nn.Linear(r, hidden, bias=False)
        self.mlp_down = nn.Linear(hidden, r, bias=False)
        self.readout = nn.Linear(r, spec.D, bias=False)

    def hidden_cache(self, hidden: torch.Tensor) -> torch.Tensor:
        """(B, H) -> (B, 2r): the per-block part, the same in every pass."""
        hidden = hidden.to(self.down_h.weight.dtype)
        mean = hidden.mean(dim=0, keepdim=True).expand_as(hidden)
        return torch.cat([self.down_h(hidden), self.down_g(mean)], dim=-1)

    def bias(self, prev: torch.Tensor, hcache: torch.Tensor) -> torch.Tensor:
        """Logit bias (B, D) for the previous-token ids ``prev`` (B,)."""
        x = self.in_proj(torch.cat([hcache, self.token_embed(prev).to(hcache.dtype)], dim=-1))
        mix = self.mix_l * torch.tril(torch.ones_like(self.mix_l[0]))  # (r, B, B), j <= k
        x = x + torch.einsum("ckj,jc->kc", mix, x)
        x = x + self.mlp_down(F.silu(self.mlp_gate(x)) * self.mlp_up(x))
        return self.readout(x)


class XPressDraft(DFlashDraft):
    def __init__(self, spec: DraftSpec) -> None:
        super().__init__(spec)
        self.refiner_head = RefinerHead(spec, self.block_size)  # diff

    def draft_block(
        self, input_ids: torch.Tensor, hidden_states: torch.Tensor, anchor: int
    ) -> DraftOutput:
        hidden, base = self.backbone(input_ids, hidden_states, anchor)
        hcache = self.refiner_head.hidden_cache(hidden)
        anchor_token = input_ids[anchor : anchor + 1]
        before_anchor = input_ids[anchor - 1 : anchor] if anchor > 0 else anchor_token
        from_anchor = bool(self.spec.flag("sample_from_anchor"))

        logits = base
        tokens = self.to_target(base.argmax(-1))  # (B,) verifier ids
        for _ in range(int(self.spec.flag("num_jacobi_passes"))):
            if from_anchor:
                prev = torch.cat([anchor_token, tokens[:-1]])
            else:
                tokens = torch.cat([anchor_token, tokens[1:]])  # slot 0 is the anchor
                prev = torch.cat([before_anchor, tokens[:-1]])
            logits = base + self.refiner_head.bias(prev, hcache)
            tokens = self.to_target(logits.argmax(-1))

        return self.block_output(anchor, logits, logits.argmax(-1))
