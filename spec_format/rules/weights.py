"""Weights rules (W): the config against the tensor names, shapes and dtypes in the headers.

Every check compares the safetensors headers (read by :mod:`spec_format.checkpoint`, never
the tensor bytes) with the type's tensor contract (``schema/tensors/<type>.json``). The
generic rules (missing, unexpected, shape, dtype) cover every tensor; the rules for ``fc``,
``lm_head``, ``embed_tokens``, the vocabulary maps, the EAGLE-3 first layer and the layer
count explain the failures seen in the field in their own words, and the generic rules
leave those tensors to them. The consumer rules (W020+) warn about layouts the speculators
library loads but an engine refuses.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator

from spec_format import catalog
from spec_format.contract import (
    UNKNOWN,
    ContractDiff,
    ContractError,
    ExpectedSet,
    available_types,
    diff_tensors,
    expected_tensors,
)
from spec_format.report import Severity
from spec_format.rules.base import Context, Hit, Layer, Rule

CONTRACT_TYPES = tuple(available_types())
#: types that may reduce the draft vocabulary and then carry t2d/d2t
VOCAB_MAP_TYPES = catalog.vocab_map_types()
_DEFAULT_LAYERS = catalog.RepeatedLayers(
    "layers", "L", "transformer_layer_config.num_hidden_layers"
)
#: roles a specific rule reports; the generic shape rule leaves them alone
_SPECIFIC_SHAPE_ROLES = frozenset({"fc", "lm_head", "embed", "t2d", "d2t", "first_qkv"})
#: at most this many findings per rule and checkpoint; the last one says how many more
MAX_HITS = 25


# -- shared helpers --------------------------------------------------------------------


def expectations(ctx: Context) -> ExpectedSet | None:
    """The contract expanded for this config (cached on the context)."""
    key = "_weights_expected"
    if key not in ctx.options:
        try:
            ctx.options[key] = expected_tensors(ctx.config, ctx.model_type)
        except ContractError:
            ctx.options[key] = None
    return ctx.options[key]


def contract_diff(ctx: Context) -> ContractDiff | None:
    key = "_weights_diff"
    if key not in ctx.options:
        exp = expectations(ctx)
        ctx.options[key] = (
            None
            if exp is None or ctx.checkpoint is None
            else diff_tensors(exp, ctx.checkpoint.tensors)
        )
    return ctx.options[key]


def weights_file(ctx: Context, tensor: str | None = None) -> str:
    """The file a finding about ``tensor`` points at: its shard, or the weights entry point."""
    ckpt = ctx.checkpoint
    if tensor is not None and tensor in ckpt.tensors:
        return ckpt.display(ckpt.tensors[tensor].file)
    if ckpt.layout == "sharded":
        return ckpt.display("model.safetensors.index.json")
    return ckpt.display("model.safetensors")


def _capped(hits: Iterable[Hit | Callable[[], Hit]], what: str) -> Iterator[Hit]:
    """The first MAX_HITS hits, then one saying how many more there were. An item may be a
    callable that builds its hit: those past the cap are counted, never built."""
    rest = 0
    first_left_out: Hit | Callable[[], Hit] | None = None
    for n, hit in enumerate(hits):
        if n < MAX_HITS:
            yield hit() if callable(hit) else hit
        else:
            rest += 1
            first_left_out = first_left_out or hit
    if rest:
        left = first_left_out() if callable(first_left_out) else first_left_out
        yield Hit(f"... and {rest} more {what}", file=left.file)


def _layer_prefix(ctx: Context) -> tuple[str, str, str]:
    """(name prefix, symbol, config field) of the repeated layers of this type."""
    rec = catalog.record(ctx.model_type)
    layers = rec.layers if rec and rec.layers else _DEFAULT_LAYERS
    return layers.prefix, layers.symbol, layers.count


def _layer_index(name: str, prefix: str) -> int | None:
    # at most 18 digits: a hostile header's "layers.<5000 digits>.x" is no layer (and int()
    # of it would raise)
    m = re.match(rf"{prefix}\.(0|[1-9]\d{{0,17}})\.", name)
    return int(m.group(1)) if m else None


def layer_counts(ctx: Context) -> tuple[int | None, list[int]]:
    """(layers the config declares, layer indices found in the headers); computed once per
    context (rules ask per tensor)."""
    key = "_weights_layer_counts"
    if key not in ctx.options:
        exp = expectations(ctx)
        prefix, symbol, _ = _layer_prefix(ctx)
        declared = exp.symbols.get(symbol) if exp else None
        found = sorted(
            {i for n in ctx.checkpoint.tensors if (i := _layer_index(n, prefix)) is not None}
        )
        ctx.options[key] = (declared if isinstance(declared, int) else None), found
    return ctx.options[key]


def _left_to_layer_rule(ctx: Context, name: str) -> bool:
    """Tensors of layers beyond the smaller of (declared, found) are W010's to report."""
    declared, found = layer_counts(ctx)
    if declared is None or _is_range(found, declared):
        return False
    prefix, _, _ = _layer_prefix(ctx)
    index = _layer_index(name, prefix)
    return index is not None and index >= min(declared, len(found))


def _gaps(found: list[int], limit: int = 10) -> list[int]:
    """The first ``limit`` numbers missing from sorted ``found`` (never builds the range)."""
    gaps: list[int] = []
    expected = 0
    for i in found:
        while expected < i and len(gaps) < limit:
            gaps.append(expected)
            expected += 1
        if len(gaps) >= limit:
            break
        expected = i + 1
    return gaps


def _few(numbers: list[int], limit: int = 10) -> str:
    shown = ", ".join(str(n) for n in numbers[:limit])
    return f"[{shown}{', ...' if len(numbers) > limit else ''}]"


def _is_range(found: list[int], count: int) -> bool:
    """``found == list(range(count))`` without building a list of ``count`` items."""
    return len(found) == count and (not found or (found[0] == 0 and found[-1] == count - 1))


def _left_out(ctx: Context, name: str) -> bool:
    """W002 leaves this tensor to another rule."""
    return _claimed_by_consumer_rule(ctx, name) or _left_to_layer_rule(ctx, name)


def _claimed_by_consumer_rule(ctx: Context, name: str) -> bool:
    if name.startswith("verifier_"):
        return True
    return ctx.model_type in catalog.family("block") and name == "mask_hidden"


def _show(value) -> str:
    """A symbol's value for a message: ``?`` when the config does not provide it."""
    return "?" if value is UNKNOWN or value is None else str(value)


def _fmt(shape) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


def _condition_text(condition: str) -> str:
    return condition if " " in condition or "(" in condition else f"{condition} is true"


class _WeightsRule(Rule):
    abstract = True
    layer = Layer.WEIGHTS
    severity = Severity.ERROR
    applies_to = CONTRACT_TYPES
    requires = frozenset({"weights"})


# -- presence ---------------------------------------------------------------------------


class MissingTensor(_WeightsRule):
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
            if t.role in ("t2d", "d2t") or _left_to_layer_rule(ctx, t.name):
                continue
            hits.append(Hit(_missing_message(ctx, t), tensor=t.name, file=weights_file(ctx)))
        yield from _capped(hits, "missing tensors")


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
        "at random and vLLM refuses to load. Export it from the trained model"
    )


class UnexpectedTensor(_WeightsRule):
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
                if not _left_out(ctx, absent.name):
                    yield lambda a=absent: Hit(
                        _ruled_out_message(ctx, a), tensor=a.name, file=weights_file(ctx, a.name)
                    )
            for name in diff.unexpected:
                if not _left_out(ctx, name):
                    yield lambda n=name: Hit(
                        _unexpected_message(ctx, n), tensor=n, file=weights_file(ctx, n)
                    )

        yield from _capped(hits(), "unexpected tensors")


def _ruled_out_message(ctx: Context, absent) -> str:
    name, condition = absent.name, absent.condition
    if name.endswith(("q_norm.weight", "k_norm.weight")) and "qwen3" in condition:
        return (
            f"{name} is present, but transformer_layer_config.model_type is not 'qwen3' and "
            "only Qwen3-style attention has per-head q/k norms; set model_type to 'qwen3' if "
            "the draft was trained with Qwen3 layers (vLLM then builds the right class)"
        )
    return (
        f"{name} is present, but the format writes it only when {_condition_text(condition)}; "
        "fix the config flag to match the weights, or remove the tensor"
    )


def _unexpected_message(ctx: Context, name: str) -> str:
    if name.startswith("model."):
        return (
            f"{name} is not a {ctx.model_type} tensor: the names carry a 'model.' prefix from a "
            "wrapper's state dict; strip it when exporting"
        )
    if name.startswith("midlayer."):
        return (
            f"{name} uses the original EAGLE-3 naming; convert the checkpoint with "
            "`specfmt convert CKPT -o OUT --verifier VERIFIER` (which maps midlayer.* to layers.0.*)"
        )
    return (
        f"{name} is not part of the {ctx.model_type} format; vLLM refuses to load unexpected "
        "tensors (the speculators library silently ignores them). Remove it, or fix the config "
        "if it belongs to a feature the config leaves off"
    )


class VocabMapMissing(_WeightsRule):
    """`draft_vocab_size` is smaller than the verifier vocabulary but `t2d`/`d2t` are missing."""

    id = "W008"
    name = "vocab-map-missing"
    since = "0.1.0"
    applies_to = VOCAB_MAP_TYPES
    references = ("NVIDIA-NeMo/Automodel#2447", "pytorch/executorch#20149")

    def check(self, ctx: Context) -> Iterator[Hit]:
        diff = contract_diff(ctx)
        if diff is None or not ctx.checkpoint.complete:
            return
        exp = expectations(ctx)
        missing = [t for t in diff.missing if t.role in ("t2d", "d2t")]
        if not missing:
            return
        names = " and ".join(t.name for t in missing)
        yield Hit(
            f"{names} {'is' if len(missing) == 1 else 'are'} missing although draft_vocab_size "
            f"({_show(exp.symbols.get('D'))}) < vocab_size ({_show(exp.symbols.get('V'))}); without d2t vLLM maps "
            "draft token i to verifier token i and acceptance collapses. Save t2d (bool [V]) and "
            "d2t (int64 [D]) into the checkpoint",
            tensor=missing[0].name,
            file=weights_file(ctx),
        )


class LayerCountMismatch(_WeightsRule):
    """The number of decoder layers in the weights differs from `num_hidden_layers`."""

    id = "W010"
    name = "layer-count-mismatch"
    since = "0.1.0"
    references = ("vllm-project/speculators#812",)

    def check(self, ctx: Context) -> Iterator[Hit]:
        if expectations(ctx) is None:
            return
        declared, found = layer_counts(ctx)
        if declared is None or _is_range(found, declared):
            return
        if not ctx.checkpoint.complete and len(found) < declared:
            return
        prefix, _, field = _layer_prefix(ctx)
        if found and not _is_range(found, len(found)):
            detail = f"layer indices {_few(found)} (missing {_few(_gaps(found))})"
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


# -- shapes -----------------------------------------------------------------------------


class TensorShapeMismatch(_WeightsRule):
    """A tensor's shape does not follow from the config."""

    id = "W003"
    name = "tensor-shape-mismatch"
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Hit]:
        diff = contract_diff(ctx)
        if diff is None:
            return
        hits = [
            Hit(
                f"{m.name} has shape {_fmt(m.actual)}, but the config implies "
                f"{m.expected.describe_shape()}; fix the config dimensions "
                f"({_symbols_used(m.expected)}) or the weights",
                tensor=m.name,
                file=weights_file(ctx, m.name),
            )
            for m in diff.wrong_shape
            if m.expected.role not in _SPECIFIC_SHAPE_ROLES
        ]
        yield from _capped(hits, "shape mismatches")


def _symbols_used(expected) -> str:
    names = []
    for text in expected.shape_text:
        for token in re.findall(r"[A-Za-z_]\w*", text):
            if token not in names and token not in ("if", "else", "and", "or", "not", "None"):
                names.append(token)
    return ", ".join(names) or "none"


def _role_mismatch(ctx: Context, role: str):
    diff = contract_diff(ctx)
    if diff is None:
        return []
    return [m for m in diff.wrong_shape if m.expected.role == role]


class FcWidthMismatch(_WeightsRule):
    """`fc.weight` does not have `A x Ht` input columns for the declared aux layers."""

    id = "W004"
    name = "fc-width-mismatch"
    since = "0.1.0"
    applies_to = catalog.aux_types()
    references = ("vllm-project/vllm#54526", "verl-project/verl-SpeCo#6", "sgl-project/sglang#8163")

    def check(self, ctx: Context) -> Iterator[Hit]:
        exp = expectations(ctx)
        for m in _role_mismatch(ctx, "fc"):
            sym = exp.symbols
            A, Ht, H = sym.get("A"), sym.get("Ht"), sym.get("H")
            key = catalog.aux_key(ctx.model_type) or "aux layer ids"
            listed = ctx.config.get(key)
            if isinstance(listed, list):
                declared = f"{key} lists {len(listed)}"
            elif listed is None:
                where = "null" if key in ctx.config else "absent"
                declared = f"{key} is {where}, so readers assume {_show(A)}"
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
                    f"fc.weight has shape {_fmt(actual)}, expected {m.expected.describe_shape()} "
                    f"(A={_show(A)} aux layers from {key}, Ht={_show(Ht)})"
                )
            if len(actual) == 2 and isinstance(H, int) and actual[0] != H:
                parts.append(f"its {actual[0]} rows should be hidden_size={_show(H)}")
            yield Hit("; ".join(parts), tensor="fc.weight", file=weights_file(ctx, "fc.weight"))


class LmHeadRowsMismatch(_WeightsRule):
    """`lm_head.weight` does not have `draft_vocab_size` rows."""

    id = "W005"
    name = "lm-head-rows-mismatch"
    since = "0.1.0"
    references = ("SafeAILab/EAGLE#249", "vllm-project/speculators#74")

    def check(self, ctx: Context) -> Iterator[Hit]:
        exp = expectations(ctx)
        for m in _role_mismatch(ctx, "lm_head"):
            D, V, H = exp.symbols.get("D"), exp.symbols.get("V"), exp.symbols.get("H")
            actual = tuple(m.actual)
            if len(actual) == 2 and actual[0] != D:
                hint = (
                    " (that is the verifier's full vocabulary: slice it with t2d)"
                    if actual[0] == V and D != V
                    else ""
                )
                message = (
                    f"lm_head.weight has {actual[0]} rows, but draft_vocab_size is {_show(D)}{hint}; the "
                    "head must have one row per draft token"
                )
            else:
                message = (
                    f"lm_head.weight has shape {_fmt(actual)}, expected "
                    f"{m.expected.describe_shape()} (D={_show(D)}, H={_show(H)})"
                )
            yield Hit(message, tensor=m.name, file=weights_file(ctx, m.name))


class EmbedRowsMismatch(_WeightsRule):
    """`embed_tokens.weight` does not have one row per verifier token."""

    id = "W006"
    name = "embed-rows-mismatch"
    since = "0.1.0"
    references = ("vllm-project/vllm#18906",)

    def check(self, ctx: Context) -> Iterator[Hit]:
        exp = expectations(ctx)
        for m in _role_mismatch(ctx, "embed"):
            V, H = exp.symbols.get("V"), exp.symbols.get("H")
            yield Hit(
                f"{m.name} has shape {_fmt(m.actual)}, expected {m.expected.describe_shape()}: one "
                f"row per verifier token (vocab_size={_show(V)}) of width hidden_size={_show(H)}",
                tensor=m.name,
                file=weights_file(ctx, m.name),
            )


class VocabMapLengthMismatch(_WeightsRule):
    """`t2d` is not `[vocab_size]` or `d2t` is not `[draft_vocab_size]`."""

    id = "W007"
    name = "vocab-map-length-mismatch"
    since = "0.1.0"
    applies_to = VOCAB_MAP_TYPES
    references = ("sgl-project/SpecForge#76", "vllm-project/speculators#1081")

    def check(self, ctx: Context) -> Iterator[Hit]:
        exp = expectations(ctx)
        for role, symbol, field in (("t2d", "V", "vocab_size"), ("d2t", "D", "draft_vocab_size")):
            for m in _role_mismatch(ctx, role):
                yield Hit(
                    f"{m.name} has shape {_fmt(m.actual)}, but it needs one entry per "
                    f"{'verifier' if role == 't2d' else 'draft'} token: [{_show(exp.symbols.get(symbol))}] "
                    f"({field}); rebuild the vocabulary maps for the current sizes",
                    tensor=m.name,
                    file=weights_file(ctx, m.name),
                )


class FirstLayerInputWidth(_WeightsRule):
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
        for m in _role_mismatch(ctx, "first_qkv"):
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
                    f"{m.name} has shape {_fmt(actual)}, expected {m.expected.describe_shape()}"
                )
            yield Hit(message, tensor=m.name, file=weights_file(ctx, m.name))


# -- dtypes -----------------------------------------------------------------------------


class DtypeFamilyMismatch(_WeightsRule):
    """A tensor is stored in the wrong kind of dtype (`t2d` not bool, `d2t` not int64, a
    weight stored as integers)."""

    id = "W011"
    name = "dtype-family-mismatch"
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Hit]:
        diff = contract_diff(ctx)
        if diff is None:
            return
        wanted = {"bool": "BOOL", "int64": "I64 (int64)", "float": "a float dtype (BF16, F16, F32)"}
        hits = []
        for m in diff.wrong_dtype:
            fix = {"t2d": "save t2d.bool()", "d2t": "save d2t.long()"}.get(
                m.expected.role or "", "store it as float"
            )
            hits.append(
                Hit(
                    f"{m.name} is stored as {m.actual}, but it must be {wanted[m.expected.dtype]}; {fix}",
                    tensor=m.name,
                    file=weights_file(ctx, m.name),
                )
            )
        yield from _capped(hits, "dtype mismatches")


def _float_weights(ctx: Context) -> dict[str, str]:
    """name -> dtype of the tensors the contract declares as float and that are stored as
    a float (a float ``t2d`` is W011's, not a weight)."""
    exp = expectations(ctx)
    if exp is None:
        return {}
    floats = exp.contract.dtype_families["float"]
    out = {}
    for name, t in ctx.checkpoint.tensors.items():
        expected = exp.match(name)
        if expected is not None and expected.dtype == "float" and t.dtype in floats:
            out[name] = t.dtype
    return out


def _float_dtypes(ctx: Context) -> Counter:
    return Counter(_float_weights(ctx).values())


class MixedFloatDtypes(_WeightsRule):
    """The weights mix float dtypes (some bf16, some fp32, ...)."""

    id = "W012"
    name = "mixed-float-dtypes"
    since = "0.1.0"
    severity = Severity.WARNING
    references = ("InternLM/lmdeploy#4991",)

    def check(self, ctx: Context) -> Iterator[Hit]:
        counts = _float_dtypes(ctx)
        if len(counts) < 2:
            return
        main, _ = counts.most_common(1)[0]
        odd = sorted(n for n, dtype in _float_weights(ctx).items() if dtype != main)
        summary = ", ".join(f"{n} {d}" for d, n in counts.most_common())
        example = ", ".join(odd[:3]) + (" ..." if len(odd) > 3 else "")
        yield Hit(
            f"the weights mix float dtypes ({summary}); cast everything to {main} before saving "
            f"(not {main}: {example})",
            tensor=odd[0],
            file=weights_file(ctx, odd[0]),
        )


class DtypeConfigMismatch(_WeightsRule):
    """The config's `torch_dtype`/`dtype` is not the dtype the weights are stored in."""

    id = "W013"
    name = "dtype-config-mismatch"
    since = "0.1.0"
    severity = Severity.WARNING

    def check(self, ctx: Context) -> Iterator[Hit]:
        exp = expectations(ctx)
        counts = _float_dtypes(ctx)
        if exp is None or not counts:
            return
        for key in ("torch_dtype", "dtype"):
            value = ctx.config.get(key)
            if isinstance(value, str):
                break
        else:
            return
        declared = exp.contract.config_dtypes.get(value.removeprefix("torch."))
        main, _ = counts.most_common(1)[0]
        if declared is None or declared == main:
            return
        names = {
            v: k
            for k, v in exp.contract.config_dtypes.items()
            if k in ("bfloat16", "float16", "float32", "float64")
        }
        yield Hit(
            f"{key} is {value!r} but the weights are stored as {main}; set {key} to "
            f"{names.get(main, main.lower())!r} (engines with dtype auto cast to the config's dtype)",
            pointer=f"/{key}",
        )


# -- consumers: layouts an engine refuses ------------------------------------------------


class VerifierTensorsInCheckpoint(_WeightsRule):
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


class Qwen3OProjBias(_WeightsRule):
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


class DFlashMaskHidden(_WeightsRule):
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


class DSparkMarkovHeadVariant(_WeightsRule):
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


__all__ = ["UNKNOWN", "contract_diff", "expectations", "weights_file"]
