"""Weights rules (W020+) about layouts the speculators library loads but an engine refuses:
training-only verifier tensors, a Qwen3 `o_proj` bias, DFlash's `mask_hidden`, DSpark's
gated or rnn Markov head.
"""

from __future__ import annotations

from collections.abc import Iterator

from spec_format.base.report import Severity
from spec_format.facts import catalog
from spec_format.rules.base import Context, Hit
from spec_format.rules.weights import (
    WeightsRule,
    expectations,
    weights_file,
)


class VerifierTensorsInCheckpoint(WeightsRule):
    """The checkpoint holds training-only `verifier_*` tensors."""

    id = "W020"
    name = "verifier-tensors-in-checkpoint"
    since = "0.1.0"
    severity = Severity.WARNING

    def check(self, ctx: Context) -> Iterator[Hit]:
        for name in sorted(ctx.checkpoint.tensors):
            if name.startswith("verifier_"):
                yield Hit(
                    f"{name} is a training-only tensor; vLLM fails to load a draft that holds it. "
                    "Remove it (save_pretrained never writes it)",
                    tensor=name,
                    file=weights_file(ctx, name),
                )


class Qwen3OProjBias(WeightsRule):
    """A Qwen3-layer EAGLE-3 draft stores an `o_proj` bias, which vLLM cannot load."""

    id = "W021"
    name = "qwen3-o-proj-bias"
    since = "0.1.0"
    severity = Severity.WARNING
    applies_to = catalog.family("chain")

    def check(self, ctx: Context) -> Iterator[Hit]:
        if ctx.layer_config.get("model_type") != "qwen3":
            return
        for name in sorted(ctx.checkpoint.tensors):
            if name.endswith("self_attn.o_proj.bias"):
                yield Hit(
                    f"{name}: vLLM's Qwen3 attention has no o_proj bias and refuses this "
                    "checkpoint; retrain with attention_bias false or use Llama layers",
                    tensor=name,
                    file=weights_file(ctx, name),
                )


class DFlashMaskHidden(WeightsRule):
    """A DFlash-family checkpoint stores `mask_hidden`, which vLLM refuses."""

    id = "W022"
    name = "dflash-mask-hidden"
    since = "0.5.0"
    severity = Severity.WARNING
    applies_to = catalog.family("block")

    def check(self, ctx: Context) -> Iterator[Hit]:
        if "mask_hidden" in ctx.checkpoint.tensors:
            yield Hit(
                "mask_hidden is a P-EAGLE tensor; vLLM's DFlash loader refuses it. Remove it "
                "(DFlash embeds mask_token_id instead)",
                tensor="mask_hidden",
                file=weights_file(ctx, "mask_hidden"),
            )


class DSparkMarkovHeadVariant(WeightsRule):
    """A DSpark checkpoint uses the `gated` or `rnn` Markov head, which vLLM cannot build."""

    id = "W023"
    name = "dspark-markov-head-variant"
    since = "0.7.0"
    severity = Severity.WARNING
    applies_to = catalog.with_feature("markov-head")

    def check(self, ctx: Context) -> Iterator[Hit]:
        exp = expectations(ctx)
        for name in sorted(ctx.checkpoint.tensors):
            if name.startswith(("markov_head.gate_proj.", "markov_head.joint_proj.")):
                if exp is not None and name in exp.absent:
                    continue  # W002 reports it against the config
                variant = "gated" if "gate_proj" in name else "rnn"
                yield Hit(
                    f"{name} belongs to the {variant} Markov head; vLLM builds only the vanilla "
                    "head and refuses this checkpoint",
                    tensor=name,
                    file=weights_file(ctx, name),
                )
