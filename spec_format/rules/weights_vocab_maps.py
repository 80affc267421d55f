"""Weights rules (W) about the vocabulary maps' headers: `t2d`/`d2t` missing although the
draft vocabulary is reduced (W008), or of the wrong length (W007). Their values are the D
rules' (:mod:`spec_format.rules.vocab`).
"""

from __future__ import annotations

from collections.abc import Iterator

from spec_format.rules.base import Context, Hit
from spec_format.rules.weights import (
    VOCAB_MAP_TYPES,
    WeightsRule,
    contract_diff,
    expectations,
    fmt,
    role_mismatch,
    show,
    tensor_hit,
    weights_file,
)


class _VocabMapRule(WeightsRule):
    abstract = True
    applies_to = VOCAB_MAP_TYPES

    @staticmethod
    def size(ctx: Context, symbol: str) -> str:
        """The vocabulary size ``symbol`` (``V``, ``D``) as the config gives it."""
        return show(expectations(ctx).symbols.get(symbol))


class VocabMapMissing(_VocabMapRule):
    """`draft_vocab_size` is smaller than the verifier vocabulary but `t2d`/`d2t` are missing."""

    id = "W008"
    name = "vocab-map-missing"
    since = "0.1.0"
    references = ("NVIDIA-NeMo/Automodel#2447", "pytorch/executorch#20149")

    def check(self, ctx: Context) -> Iterator[Hit]:
        diff = contract_diff(ctx)
        if diff is None or not ctx.checkpoint.complete:
            return
        missing = [t for t in diff.missing if t.role in ("t2d", "d2t")]
        if not missing:
            return
        names = " and ".join(t.name for t in missing)
        yield Hit(
            f"{names} {'is' if len(missing) == 1 else 'are'} missing although draft_vocab_size "
            f"({self.size(ctx, 'D')}) < vocab_size ({self.size(ctx, 'V')}); without d2t vLLM maps "
            "draft token i to verifier token i and acceptance collapses. Save t2d (bool [V]) and "
            "d2t (int64 [D]) into the checkpoint",
            tensor=missing[0].name,
            file=weights_file(ctx),
        )


class VocabMapLengthMismatch(_VocabMapRule):
    """`t2d` is not `[vocab_size]` or `d2t` is not `[draft_vocab_size]`."""

    id = "W007"
    name = "vocab-map-length-mismatch"
    since = "0.1.0"
    references = ("sgl-project/SpecForge#76", "vllm-project/speculators#1081")

    def check(self, ctx: Context) -> Iterator[Hit]:
        for role, symbol, field in (("t2d", "V", "vocab_size"), ("d2t", "D", "draft_vocab_size")):
            for m in role_mismatch(ctx, role):
                yield tensor_hit(
                    ctx,
                    m.name,
                    f"{m.name} has shape {fmt(m.actual)}, but it needs one entry per "
                    f"{'verifier' if role == 't2d' else 'draft'} token: [{self.size(ctx, symbol)}] "
                    f"({field}); rebuild the vocabulary maps for the current sizes",
                )
