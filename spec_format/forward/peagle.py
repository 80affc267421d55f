"""P-EAGLE: EAGLE-3 that drafts several tokens in one parallel pass (speculators
``PEagleDraftModel``).

Difference from :mod:`eagle3`: a learned ``mask_hidden`` ``[1, 1, A*Ht]`` stands in for the
aux hidden states of positions not yet verified. After the T ordinary rows (depth 0), K
mask rows (depths 1..K) follow the last row: token ``mask_token_id``, hidden
``fc(norms(mask_hidden))``, position ``T-1+d``. One pass under training's mask: a depth-0
row sees depth-0 rows ``<= t``; mask row d sees every depth-0 row (within the sliding window
measured from its own position ``T-1+d``) and the mask rows before it. Mask row d's logits
are draft ``d+1``. There is no recurrence, so ``norm_output`` plays no part.
"""

from __future__ import annotations

import torch
from torch import nn

from spec_format.forward.config import DraftSpec
from spec_format.forward.draft import DraftOutput
from spec_format.forward.eagle3 import Eagle3Draft


class PEagleDraft(Eagle3Draft):
    def __init__(self, spec: DraftSpec) -> None:
        super().__init__(spec)
        self.mask_hidden = nn.Parameter(torch.zeros(1, 1, spec.A * spec.Ht))  # diff

    def _mask(self, T: int, K: int, window: int | None, device: torch.device) -> torch.Tensor:
        """(T+K, T+K) mask of ``create_peagle_mask_mod`` for one rollout from row T-1."""
        n = T + K
        i = torch.arange(n, device=device)[:, None]
        j = torch.arange(n, device=device)[None, :]
        q_pos = torch.where(i < T, i, T - 1 + (i - T + 1))  # a + d
        depth0_key = (j < T) & (j <= torch.clamp(i, max=T - 1))
        if window is not None:
            depth0_key &= j > q_pos - window
        # the rollout of row T-1: its mask rows see that row and the mask rows before them
        same_rollout = (i >= T) & (j >= T - 1) & (j <= i)
        return depth0_key | same_rollout

    def draft_rows(
        self, input_ids: torch.Tensor, hidden_states: torch.Tensor, steps: int
    ) -> DraftOutput:
        T, K, device = input_ids.shape[0], steps, input_ids.device
        mask_id = int(self.spec.flag("mask_token_id"))
        ids = torch.cat([input_ids, torch.full((K,), mask_id, device=device)])
        aux = torch.cat([hidden_states, self.mask_hidden[0].expand(K, -1)])  # diff
        cos, sin = self.rotary_emb(torch.arange(T + K, device=device), hidden_states.dtype)
        masks = [self._mask(T, K, self.window(i), device) for i in range(len(self.layers))]
        x, _ = self.run_layers(self.embed_tokens(ids), self.combine_aux(aux), cos, sin, masks)
        logits = self.lm_head(self.norm(x))  # (T+K, D)
        draft_ids = logits.argmax(-1)
        token_ids = self.to_target(draft_ids)
        out = DraftOutput(
            logits=logits[:T],
            positions=list(range(T)),
            draft_ids=draft_ids[:T],
            token_ids=token_ids[:T],
            proposal=[int(t) for t in token_ids[T - 1 :]],
        )
        if K:
            out.chain_logits, out.chain_draft_ids = logits[T:], draft_ids[T:]
            out.chain_token_ids = token_ids[T:]
        return out
