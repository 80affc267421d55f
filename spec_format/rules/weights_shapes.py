"""Weights rules (W) about tensor shapes: the generic check (W003) and the tensors whose
failures in the field deserve their own words: `fc` (W004), `lm_head` (W005),
`embed_tokens` (W006) and the EAGLE-3 first layer (W009).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from spec_format.facts import catalog
from spec_format.rules.base import Context, Hit
from spec_format.rules.weights import (
    WeightsRule,
    capped,
    contract_diff,
    expectations,
    fmt,
    mismatches,
    role_mismatch,
    show,
    tensor_hit,
)

#: roles a specific rule reports; the generic shape rule leaves them alone
_SPECIFIC_SHAPE_ROLES = frozenset({"fc", "lm_head", "embed", "t2d", "d2t", "first_qkv"})


class TensorShapeMismatch(WeightsRule):
    """A tensor's shape does not follow from the config."""

    id = "W003"
    name = "tensor-shape-mismatch"
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Hit]:
        hits = [
            tensor_hit(
                ctx,
                m.name,
                f"{m.name} has shape {fmt(m.actual)}, but the config implies "
                f"{m.expected.describe_shape()}; fix the config dimensions "
                f"({_symbols_used(m.expected)}) or the weights",
            )
            for m in mismatches(ctx, "wrong_shape")
            if m.expected.role not in _SPECIFIC_SHAPE_ROLES
        ]
        yield from capped(hits, "shape mismatches")


def _symbols_used(expected) -> str:
    names = []
    for text in expected.shape_text:
        for token in re.findall(r"[A-Za-z_]\w*", text):
            if token not in names and token not in ("if", "else", "and", "or", "not", "None"):
                names.append(token)
    return ", ".join(names) or "none"


class FcWidthMismatch(WeightsRule):
    """`fc.weight` does not have `A x Ht` input columns for the declared aux layers."""

    id = "W004"
    name = "fc-width-mismatch"
    since = "0.1.0"
    applies_to = catalog.aux_types()
    references = ("vllm-project/vllm#54526", "verl-project/verl-SpeCo#6", "sgl-project/sglang#8163")

    def check(self, ctx: Context) -> Iterator[Hit]:
        exp = expectations(ctx)
        for m in role_mismatch(ctx, "fc"):
            sym = exp.symbols
            A, Ht, H = sym.get("A"), sym.get("Ht"), sym.get("H")
            key = catalog.aux_key(ctx.model_type) or "aux layer ids"
            listed = ctx.config.get(key)
            if isinstance(listed, list):
                declared = f"{key} lists {len(listed)}"
            elif listed is None:
                where = "null" if key in ctx.config else "absent"
                declared = f"{key} is {where}, so readers assume {show(A)}"
            else:
                declared = f"{key} is not a list"
            actual = tuple(m.actual)
            parts = []
            if (
                len(actual) == 2
                and isinstance(Ht, int)
                and isinstance(A, int)
                and actual[1] % Ht == 0
                and actual[1] != A * Ht
            ):
                parts.append(
                    f"fc.weight takes {actual[1]} input columns = {actual[1] // Ht} x {Ht}, but "
                    f"{declared}; list the {actual[1] // Ht} aux layers the draft was trained on"
                )
            elif (
                len(actual) == 2
                and isinstance(H, int)
                and isinstance(A, int)
                and Ht != H
                and actual[1] == A * H
            ):
                parts.append(
                    f"fc.weight takes {actual[1]} = {A} x hidden_size columns, but "
                    f"target_hidden_size is {Ht}; remove target_hidden_size or fix it"
                )
            else:
                parts.append(
                    f"fc.weight has shape {fmt(actual)}, expected {m.expected.describe_shape()} "
                    f"(A={show(A)} aux layers from {key}, Ht={show(Ht)})"
                )
            if len(actual) == 2 and isinstance(H, int) and actual[0] != H:
                parts.append(f"its {actual[0]} rows should be hidden_size={show(H)}")
            yield tensor_hit(ctx, "fc.weight", "; ".join(parts))


class LmHeadRowsMismatch(WeightsRule):
    """`lm_head.weight` does not have `draft_vocab_size` rows."""

    id = "W005"
    name = "lm-head-rows-mismatch"
    since = "0.1.0"
    references = ("SafeAILab/EAGLE#249", "vllm-project/speculators#74")

    def check(self, ctx: Context) -> Iterator[Hit]:
        exp = expectations(ctx)
        for m in role_mismatch(ctx, "lm_head"):
            D, V, H = exp.symbols.get("D"), exp.symbols.get("V"), exp.symbols.get("H")
            actual = tuple(m.actual)
            if len(actual) == 2 and actual[0] != D:
                hint = (
                    " (that is the verifier's full vocabulary: slice it with t2d)"
                    if actual[0] == V and D != V
                    else ""
                )
                message = (
                    f"lm_head.weight has {actual[0]} rows, but draft_vocab_size is {show(D)}{hint}; the "
                    "head must have one row per draft token"
                )
            else:
                message = (
                    f"lm_head.weight has shape {fmt(actual)}, expected "
                    f"{m.expected.describe_shape()} (D={show(D)}, H={show(H)})"
                )
            yield tensor_hit(ctx, m.name, message)


class EmbedRowsMismatch(WeightsRule):
    """`embed_tokens.weight` does not have one row per verifier token."""

    id = "W006"
    name = "embed-rows-mismatch"
    since = "0.1.0"
    references = ("vllm-project/vllm#18906",)

    def check(self, ctx: Context) -> Iterator[Hit]:
        exp = expectations(ctx)
        for m in role_mismatch(ctx, "embed"):
            V, H = exp.symbols.get("V"), exp.symbols.get("H")
            yield tensor_hit(
                ctx,
                m.name,
                f"{m.name} has shape {fmt(m.actual)}, expected {m.expected.describe_shape()}: one "
                f"row per verifier token (vocab_size={show(V)}) of width hidden_size={show(H)}",
            )


class FirstLayerInputWidth(WeightsRule):
    """EAGLE-3 `layers.0` q/k/v projections do not take `2 x hidden_size` inputs."""

    id = "W009"
    name = "first-layer-input-width"
    since = "0.1.0"
    applies_to = catalog.family("chain")

    def check(self, ctx: Context) -> Iterator[Hit]:
        exp = expectations(ctx)
        H = exp.symbols.get("H") if exp else None
        diff = contract_diff(ctx)
        # a plain decoder layer only when every other tensor agrees with hidden_size: when
        # they disagree too, hidden_size itself is in doubt (W024 names the value)
        others_agree = diff is not None and all(
            m.expected.role == "first_qkv" for m in diff.wrong_shape
        )
        for m in role_mismatch(ctx, "first_qkv"):
            actual = tuple(m.actual)
            if len(actual) == 2 and isinstance(H, int) and actual[1] != 2 * H:
                message = (
                    f"{m.name} takes {actual[1]} inputs, but the EAGLE-3 first layer reads "
                    f"cat(embeddings, hidden) = 2 x hidden_size = {2 * H}"
                    + (
                        "; the layer looks like a plain decoder layer: export the EAGLE-3 model"
                        if actual[1] == H and others_agree
                        else "; check hidden_size against the weights"
                    )
                )
            else:
                message = (
                    f"{m.name} has shape {fmt(actual)}, expected {m.expected.describe_shape()}"
                )
            yield tensor_hit(ctx, m.name, message)
