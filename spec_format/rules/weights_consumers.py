"""Weights rules (W020+) about layouts the speculators library loads but an engine refuses:
training-only verifier tensors, a Qwen3 `o_proj` bias, DFlash's `mask_hidden`, DSpark's
gated or rnn Markov head.
"""

from __future__ import annotations

from collections.abc import Iterator

from spec_format.base.report import Severity
from spec_format.facts import catalog
from spec_format.rules.base import Context, Hit
from spec_format.rules.weights import TensorNameRule, expectations


class VerifierTensorsInCheckpoint(TensorNameRule):
    """The checkpoint holds training-only `verifier_*` tensors."""

    id = "W020"
    name = "verifier-tensors-in-checkpoint"
    since = "0.1.0"
    severity = Severity.WARNING
    prefixes = ("verifier_",)
    says = (
        "{name} is a training-only tensor; vLLM fails to load a draft that holds it. "
        "Remove it (save_pretrained never writes it)"
    )


class Qwen3OProjBias(TensorNameRule):
    """A Qwen3-layer EAGLE-3 draft stores an `o_proj` bias, which vLLM cannot load."""

    id = "W021"
    name = "qwen3-o-proj-bias"
    since = "0.1.0"
    severity = Severity.WARNING
    applies_to = catalog.family("chain")
    suffixes = ("self_attn.o_proj.bias",)
    says = (
        "{name}: vLLM's Qwen3 attention has no o_proj bias and refuses this "
        "checkpoint; retrain with attention_bias false or use Llama layers"
    )

    def check(self, ctx: Context) -> Iterator[Hit]:
        if ctx.layer_config.get("model_type") == "qwen3":
            yield from super().check(ctx)


class DFlashMaskHidden(TensorNameRule):
    """A DFlash-family checkpoint stores `mask_hidden`, which vLLM refuses."""

    id = "W022"
    name = "dflash-mask-hidden"
    since = "0.5.0"
    severity = Severity.WARNING
    applies_to = catalog.family("block")
    names = ("mask_hidden",)
    says = (
        "{name} is a P-EAGLE tensor; vLLM's DFlash loader refuses it. Remove it "
        "(DFlash embeds mask_token_id instead)"
    )


class DSparkMarkovHeadVariant(TensorNameRule):
    """A DSpark checkpoint uses the `gated` or `rnn` Markov head, which vLLM cannot build."""

    id = "W023"
    name = "dspark-markov-head-variant"
    since = "0.7.0"
    severity = Severity.WARNING
    applies_to = catalog.with_feature("markov-head")
    prefixes = ("markov_head.gate_proj.", "markov_head.joint_proj.")
    says = (
        "{name} belongs to the {variant} Markov head; vLLM builds only the vanilla "
        "head and refuses this checkpoint"
    )

    def flags(self, ctx: Context, name: str) -> bool:
        exp = expectations(ctx)  # a tensor the config rules out: W002 reports it
        return super().flags(ctx, name) and (exp is None or name not in exp.absent)

    def words(self, name: str) -> str:
        return self.says.format(name=name, variant="gated" if "gate_proj" in name else "rnn")
