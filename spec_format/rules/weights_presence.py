"""Weights rules (W) about which tensors are there: a tensor the config calls for is
missing (W001), one it rules out is present (W002), the layer count disagrees (W010).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterator

from spec_format.facts import catalog
from spec_format.rules.base import Context, Hit
from spec_format.rules.weights import (
    WeightsRule,
    capped,
    condition_text,
    contract_diff,
    expectations,
    few,
    gaps,
    is_range,
    layer_counts,
    layer_prefix,
    left_out,
    left_to_layer_rule,
    tensor_hit,
    weights_file,
)


class MissingTensor(WeightsRule):
    """A tensor the config calls for is not in the checkpoint."""

    id = "W001"
    name = "missing-tensor"
    since = "0.1.0"
    references = ("vllm-project/speculators#1114", "vllm-project/vllm#43132")

    def check(self, ctx: Context) -> Iterator[Hit]:
        diff = contract_diff(ctx)
        if diff is None or not ctx.checkpoint.complete:
            return
        hits = []
        for t in diff.missing:
            if t.role in ("t2d", "d2t") or left_to_layer_rule(ctx, t.name):
                continue
            hits.append(Hit(_missing_message(ctx, t), tensor=t.name, file=weights_file(ctx)))
        yield from capped(hits, "missing tensors")


def _missing_message(ctx: Context, t) -> str:
    shape = t.describe_shape()
    chain = catalog.family("chain")
    if t.name.endswith(("q_norm.weight", "k_norm.weight")) and ctx.model_type in chain:
        return (
            f"{t.name} {shape} is missing: transformer_layer_config.model_type is 'qwen3', whose "
            "attention has per-head q/k norms; if the draft was trained with Llama layers, set "
            "model_type to 'llama', otherwise export the norms"
        )
    if t.role == "lm_head":
        return (
            f"{t.name} {shape} is missing; with draft_vocab_size < vocab_size the engine cannot "
            "borrow the verifier's head, export the draft's lm_head"
        )
    return (
        f"{t.name} {shape} is missing; the speculators library would silently initialise it "
        "at random, and an engine refuses the draft or leaves the weight at its initial value "
        "(--engine vllm==X says which for that release). Export it from the trained model"
    )


class UnexpectedTensor(WeightsRule):
    """The checkpoint holds a tensor that the format (for this config) does not have."""

    id = "W002"
    name = "unexpected-tensor"
    since = "0.1.0"
    references = ("vllm-project/speculators#1114",)

    def check(self, ctx: Context) -> Iterator[Hit]:
        diff = contract_diff(ctx)
        if diff is None:
            return

        def hits() -> Iterator[Callable[[], Hit]]:  # linear: every test is O(1) per tensor
            for absent in diff.ruled_out:
                if not left_out(ctx, absent.name):
                    yield lambda a=absent: tensor_hit(
                        ctx,
                        a.name,
                        _ruled_out_message(ctx, a),
                    )
            for name in diff.unexpected:
                if not left_out(ctx, name):
                    yield lambda n=name: tensor_hit(
                        ctx,
                        n,
                        _unexpected_message(ctx, n),
                    )

        yield from capped(hits(), "unexpected tensors")


def _ruled_out_message(ctx: Context, absent) -> str:
    name, condition = absent.name, absent.condition
    if name.endswith(("q_norm.weight", "k_norm.weight")) and "qwen3" in condition:
        return (
            f"{name} is present, but transformer_layer_config.model_type is not 'qwen3' and "
            "only Qwen3-style attention has per-head q/k norms; set model_type to 'qwen3' if "
            "the draft was trained with Qwen3 layers (vLLM then builds the right class)"
        )
    return (
        f"{name} is present, but the format writes it only when {condition_text(condition)}; "
        "fix the config flag to match the weights, or remove the tensor"
    )


def _unexpected_message(ctx: Context, name: str) -> str:
    if name.startswith("model."):
        return (
            f"{name} is not a {ctx.model_type} tensor: the names carry a 'model.' prefix from a "
            "wrapper's state dict; strip it when exporting"
        )
    if name.startswith("midlayer."):
        convert = ctx.command("convert", "-o", "OUT", "--verifier", "VERIFIER")
        quoted = (
            f"`specfmt convert {shlex.quote(convert[-1])} -o OUT --verifier VERIFIER`"
            if convert
            else "`specfmt convert CKPT -o OUT --verifier VERIFIER`"
        )
        return (
            f"{name} uses the original EAGLE-3 naming; convert the checkpoint with {quoted} "
            "(which maps midlayer.* to layers.0.*)"
        )
    return (
        f"{name} is not part of the {ctx.model_type} format; vLLM refuses to load unexpected "
        "tensors (the speculators library silently ignores them). Remove it, or fix the config "
        "if it belongs to a feature the config leaves off"
    )


class LayerCountMismatch(WeightsRule):
    """The number of decoder layers in the weights differs from `num_hidden_layers`."""

    id = "W010"
    name = "layer-count-mismatch"
    since = "0.1.0"
    references = ("vllm-project/speculators#812",)

    def check(self, ctx: Context) -> Iterator[Hit]:
        if expectations(ctx) is None:
            return
        declared, found = layer_counts(ctx)
        if declared is None or is_range(found, declared):
            return
        if not ctx.checkpoint.complete and len(found) < declared:
            return
        prefix, _, field = layer_prefix(ctx)
        if found and not is_range(found, len(found)):
            detail = f"layer indices {few(found)} (missing {few(gaps(found))})"
        else:
            detail = (
                f"{len(found)} layer{'s' if len(found) != 1 else ''} ({prefix}.0 .. {prefix}.{len(found) - 1})"
                if found
                else "no layers"
            )
        yield Hit(
            f"{field} is {declared} but the weights hold {detail}; set {field} to the number of "
            "layers the draft was trained with, or export the missing layers",
            file=weights_file(ctx),
        )
