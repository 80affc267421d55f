"""Cross-field rules (X): relations between fields of one config.json that JSON Schema
cannot express (or that code generators cannot carry).

Each check returns its hits as a list or tuple, ``()`` when it finds nothing (the common
case, kept to a few dict reads); what depends only on the type and format version is
worked out once per pair (the cached helpers below), not per config."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

from spec_format.base.jsonload import json_int
from spec_format.base.report import Edit, Severity
from spec_format.facts import catalog, writers
from spec_format.facts.effective import effective
from spec_format.rules.base import Context, Hit, Layer, Rule
from spec_format.rules.version import dflash_bug

NO_HITS: tuple[Hit, ...] = ()


class _CrossFieldRule(Rule):
    abstract = True
    layer = Layer.CROSS_FIELD


@cache
def _aux_key(model_type: str) -> str | None:
    return catalog.aux_key(model_type)


@cache
def _is_block(model_type: str) -> bool:
    return model_type in catalog.family("block")


@cache
def _layer_families(model_type: str) -> tuple[str, ...]:
    rec = catalog.record(model_type)
    return rec.layer_families if rec else ()


@cache
def _default_layer(model_type: str, format_version: str) -> str | None:
    return catalog.default_layer(model_type, format_version)


class DefaultProposalMethodUnknown(_CrossFieldRule):
    """`default_proposal_method` names no entry of `proposal_methods`."""

    id = "X001"
    name = "default-proposal-method-unknown"
    since = "0.1.0"
    severity = Severity.ERROR
    references = ("vllm-project/speculators#562",)

    def check(self, ctx: Context) -> Sequence[Hit]:
        default = ctx.spec_config.get("default_proposal_method")
        if not isinstance(default, str):
            return NO_HITS
        methods = ctx.proposal_methods
        for m in methods:
            if m.get("proposal_type") == default:
                return NO_HITS
        types = [m.get("proposal_type") for m in methods]
        if not types:
            return NO_HITS
        return (
            Hit(
                f"default_proposal_method {default!r} is not among the proposal types "
                f"{types}; set it to {types[0]!r}",
                pointer="/speculators_config/default_proposal_method",
                edit=_set("/speculators_config/default_proposal_method", types[0]),
            ),
        )


class NormFlagsExclusive(_CrossFieldRule):
    """`norm_before_fc` and `fc_norm` are both true."""

    id = "X002"
    name = "norm-flags-exclusive"
    since = "0.7.0"
    severity = Severity.ERROR
    applies_to = catalog.family("chain")

    def check(self, ctx: Context) -> Sequence[Hit]:
        if ctx.config.get("norm_before_fc") is not True or ctx.config.get("fc_norm") is not True:
            return NO_HITS
        return (
            Hit(
                "norm_before_fc and fc_norm are both true but are mutually exclusive; keep "
                "the one whose weights the checkpoint holds (input_norm.weight or "
                "fc_norm.N.weight) and set the other to false",
                pointer="/fc_norm",
            ),
        )


class SpeculativeTokensBlockMismatch(_CrossFieldRule):
    """For block drafts, `speculative_tokens` does not match `block_size` and
    `sample_from_anchor`."""

    id = "X003"
    name = "speculative-tokens-block-mismatch"
    since = "0.5.0"
    severity = Severity.WARNING
    applies_to = catalog.family("block")
    references = ("vllm-project/vllm#41834", "vllm-project/vllm#50012", "vllm-project/vllm#54154")

    def check(self, ctx: Context) -> Sequence[Hit]:
        block = json_int(effective(ctx, "block_size"))
        if block is None or block < 1:
            return NO_HITS
        methods = ctx.proposal_methods
        tokens = json_int(methods[0].get("speculative_tokens")) if methods else None
        if tokens is None:
            return NO_HITS
        source = "" if "sample_from_anchor" in ctx.config else " (type default)"
        if not source or writers.dspark_anchor_missing(ctx.config) is None:
            anchor = effective(ctx, "sample_from_anchor") is True
        else:  # a dspark writer that left it out meant false (M005), as fix writes it (C001)
            anchor, source = writers.DSPARK_ANCHOR_MEANT, " (what its writer meant, M005)"
        expected = block if anchor else block - 1
        if tokens == expected:
            return NO_HITS
        if "M006" in ctx.options.get("running", ()) and dflash_bug(ctx):
            return NO_HITS  # the cause, a known writer bug, is M006's finding at the same place
        return (
            Hit(
                f"speculative_tokens is {tokens} but block_size {block} with "
                f"sample_from_anchor={str(anchor).lower()}{source} drafts {expected} tokens "
                f"per step; set speculative_tokens to {expected}, or fix block_size / "
                "sample_from_anchor to what the draft was trained with",
                pointer="/speculators_config/proposal_methods/0/speculative_tokens",
                edit=_set("/speculators_config/proposal_methods/0/speculative_tokens", expected),
            ),
        )


class DraftVocabExceedsVerifierVocab(_CrossFieldRule):
    """`draft_vocab_size` is larger than the verifier vocabulary."""

    id = "X004"
    name = "draft-vocab-exceeds-verifier-vocab"
    since = "0.1.0"
    severity = Severity.ERROR
    references = ("vllm-project/speculators#188",)

    def check(self, ctx: Context) -> Sequence[Hit]:
        draft = json_int(ctx.config.get("draft_vocab_size"))
        if draft is None:
            return NO_HITS
        verifier = json_int(ctx.layer_config.get("vocab_size"))
        if verifier is None or draft <= verifier:
            return NO_HITS
        return (
            Hit(
                f"draft_vocab_size {draft} is larger than transformer_layer_config.vocab_size "
                f"{verifier}; vocab_size must be the verifier's vocabulary and draft_vocab_size "
                "at most that",
                pointer="/draft_vocab_size",
            ),
        )


class AuxLayerIdsRequired(_CrossFieldRule):
    """Aux layer ids are missing or empty where engines require them."""

    id = "X005"
    name = "aux-layer-ids-required"
    since = "0.1.0"
    severity = Severity.ERROR
    applies_to = catalog.aux_types()
    references = ("vllm-project/vllm#50170", "sgl-project/sglang#37475", "z-lab/dflash#157")

    def check(self, ctx: Context) -> Sequence[Hit]:
        key = _aux_key(ctx.model_type)
        ids = ctx.config.get(key)
        if ids is None:
            if not _is_block(ctx.model_type):
                return NO_HITS
            state = "null" if key in ctx.config else "missing"
            return (
                Hit(
                    f"{key} is {state}; vLLM and speculators need the verifier layer ids the "
                    "draft was trained with (DFlash convention: id L = output of verifier layer "
                    "L-1)",
                    pointer=f"/{key}",
                ),
            )
        if ids != []:
            return NO_HITS
        return (
            Hit(
                f"{key} is an empty list; write the verifier layer ids the draft was trained "
                "with (readers treat [] as 'not set' and guess)",
                pointer=f"/{key}",
            ),
        )


class AuxLayerIdInvalid(_CrossFieldRule):
    """A DFlash-family aux layer id is 0."""

    id = "X006"
    name = "aux-layer-id-invalid"
    since = "0.5.0"
    severity = Severity.ERROR
    applies_to = catalog.family("block")
    references = (
        "vllm-project/vllm#40727",
        "vllm-project/vllm#42704",
        "NVIDIA/Model-Optimizer#2149",
    )

    def check(self, ctx: Context) -> Sequence[Hit]:
        key = _aux_key(ctx.model_type)
        ids = ctx.config.get(key)
        if not isinstance(ids, list) or 0 not in ids:  # `in` compares with ==, as below
            return NO_HITS
        return [
            Hit(
                f"{key}[{i}] is 0, but DFlash ids start at 1 (vLLM uses id - 1, so 0 "
                "reads the verifier's last layer); if these are z-lab target_layer_ids, "
                "add 1 to each",
                pointer=f"/{key}/{i}",
            )
            for i, v in enumerate(ids)
            if v == 0 and not isinstance(v, bool)
        ]


class AuxLayerIdsDuplicate(_CrossFieldRule):
    """The same verifier layer is listed twice among the aux layer ids."""

    id = "X007"
    name = "aux-layer-ids-duplicate"
    since = "0.1.0"
    severity = Severity.ERROR
    applies_to = catalog.aux_types()
    references = ("NVIDIA/Model-Optimizer#1271",)

    def check(self, ctx: Context) -> Sequence[Hit]:
        key = _aux_key(ctx.model_type)
        ids = ctx.config.get(key)
        if not isinstance(ids, list):
            return NO_HITS
        try:
            if len(set(ids)) == len(ids):  # no two equal entries, so no repeated layer
                return NO_HITS
        except TypeError:  # a list or object among them: look at each entry
            pass
        hits = []
        seen: set = set()
        for i, v in enumerate(ids):
            if not isinstance(v, int):
                continue
            if v in seen:
                hits.append(
                    Hit(
                        f"{key}[{i}] repeats layer {v}; list each verifier layer once",
                        pointer=f"/{key}/{i}",
                    )
                )
            seen.add(v)
        return hits


class AuxLayerIdsUnordered(_CrossFieldRule):
    """Aux layer ids are not in ascending order."""

    id = "X008"
    name = "aux-layer-ids-unordered"
    since = "0.1.0"
    severity = Severity.WARNING
    applies_to = catalog.aux_types()

    def check(self, ctx: Context) -> Sequence[Hit]:
        key = _aux_key(ctx.model_type)
        ids = ctx.config.get(key)
        if not isinstance(ids, list):
            return NO_HITS
        for v in ids:
            if not isinstance(v, int):
                return NO_HITS
        if ids == sorted(ids):  # integers: sorted equals the list exactly when no a > b follows
            return NO_HITS
        return (
            Hit(
                f"{key} {ids} is not ascending; producers write ids in ascending order, and "
                "fc's input blocks follow the list order: check it matches training",
                pointer=f"/{key}",
            ),
        )


class LayerModelTypeUnsupported(_CrossFieldRule):
    """`transformer_layer_config.model_type` names a decoder family the type's readers
    cannot build."""

    id = "X009"
    name = "layer-model-type-unsupported"
    since = "0.1.0"
    severity = Severity.ERROR
    references = ("vllm-project/vllm#43132", "vllm-project/vllm#44322")

    def check(self, ctx: Context) -> Sequence[Hit]:
        model_type = ctx.layer_config.get("model_type")
        if not isinstance(model_type, str):
            return NO_HITS
        allowed = _layer_families(ctx.model_type)
        if not allowed or model_type in allowed:
            return NO_HITS
        return (
            Hit(
                f"transformer_layer_config.model_type {model_type!r} cannot be built for "
                f"{ctx.model_type}; readers support {', '.join(allowed)}",
                pointer="/transformer_layer_config/model_type",
            ),
        )


class DFlashLayerModelTypeIgnored(_CrossFieldRule):
    """A DFlash-family config names a layer model_type other than qwen3."""

    id = "X010"
    name = "dflash-layer-model-type-ignored"
    since = "0.5.0"
    severity = Severity.INFO
    applies_to = catalog.family("block")

    def check(self, ctx: Context) -> Sequence[Hit]:
        model_type = ctx.layer_config.get("model_type")
        if not isinstance(model_type, str):
            return NO_HITS
        built = _default_layer(ctx.model_type, ctx.format_version)
        if not built or model_type == built:
            return NO_HITS
        return (
            Hit(
                f"transformer_layer_config.model_type is {model_type!r}, but {ctx.model_type} "
                "drafts are always built with Qwen3-style layers (q_norm/k_norm); the field "
                "is informational here",
                pointer="/transformer_layer_config/model_type",
            ),
        )


class MtpNextnLayers(_CrossFieldRule):
    """An MTP config declares more than one prediction layer."""

    id = "X011"
    name = "mtp-nextn-layers"
    since = "0.6.0"
    severity = Severity.ERROR
    applies_to = catalog.family("nextn")

    def check(self, ctx: Context) -> Sequence[Hit]:
        n = json_int(ctx.config.get("num_nextn_predict_layers"))
        if n is None or n == 1:
            return NO_HITS
        return (
            Hit(
                f"num_nextn_predict_layers is {n}; speculators supports exactly 1 MTP layer",
                pointer="/num_nextn_predict_layers",
            ),
        )


class DtypeConflict(_CrossFieldRule):
    """`dtype` and `torch_dtype` are both present with different values."""

    id = "X012"
    name = "dtype-conflict"
    since = "0.1.0"
    severity = Severity.ERROR
    references = ("huggingface/transformers#40808",)

    def check(self, ctx: Context) -> Sequence[Hit]:
        hits = []
        for prefix, obj in (("", ctx.config), ("/transformer_layer_config", ctx.layer_config)):
            if "torch_dtype" in obj and "dtype" in obj and obj["dtype"] != obj["torch_dtype"]:
                hits.append(
                    Hit(
                        f"dtype {obj['dtype']!r} and torch_dtype {obj['torch_dtype']!r} "
                        "disagree; keep one key with the dtype of the saved tensors",
                        pointer=f"{prefix}/torch_dtype",
                    )
                )
        return hits


class MaskTokenIdRequired(_CrossFieldRule):
    """`mask_token_id` is missing or null for a type whose readers require it."""

    id = "X013"
    name = "mask-token-id-required"
    since = "0.5.0"
    severity = Severity.ERROR
    applies_to = catalog.mask_token_types()

    def check(self, ctx: Context) -> Sequence[Hit]:
        if ctx.config.get("mask_token_id") is not None:
            return NO_HITS
        state = "null" if "mask_token_id" in ctx.config else "missing"
        return (
            Hit(
                f"mask_token_id is {state}; vLLM requires the mask token id the draft was "
                "trained with",
                pointer="/mask_token_id",
            ),
        )


class MaskTokenOutOfVocab(_CrossFieldRule):
    """`mask_token_id` is not a token of the verifier vocabulary."""

    id = "X014"
    name = "mask-token-out-of-vocab"
    since = "0.5.0"
    severity = Severity.ERROR
    applies_to = catalog.mask_token_types()

    def check(self, ctx: Context) -> Sequence[Hit]:
        mask = json_int(ctx.config.get("mask_token_id"))
        if mask is None:
            return NO_HITS
        vocab = json_int(ctx.layer_config.get("vocab_size"))
        if vocab is None or mask < vocab:
            return NO_HITS
        return (
            Hit(
                f"mask_token_id {mask} is outside the verifier vocabulary of {vocab} tokens",
                pointer="/mask_token_id",
            ),
        )


class LayerTypesLength(_CrossFieldRule):
    """`layer_types` does not have one entry per layer, or a sliding layer has no window."""

    id = "X015"
    name = "layer-types-length"
    since = "0.1.0"
    severity = Severity.ERROR

    def check(self, ctx: Context) -> Sequence[Hit]:
        tlc = ctx.layer_config
        types = tlc.get("layer_types")
        if not isinstance(types, list):
            return NO_HITS
        hits = []
        layers = json_int(tlc.get("num_hidden_layers"))
        if layers is not None and len(types) != layers:
            hits.append(
                Hit(
                    f"layer_types has {len(types)} entries but num_hidden_layers is {layers}; "
                    "write one attention kind per layer",
                    pointer="/transformer_layer_config/layer_types",
                )
            )
        if "sliding_attention" in types and tlc.get("sliding_window") is None:
            hits.append(
                Hit(
                    "layer_types contains sliding_attention but sliding_window is not set; set "
                    "the window size the draft was trained with",
                    pointer="/transformer_layer_config/sliding_window",
                )
            )
        return hits


class AttentionHeadsInconsistent(_CrossFieldRule):
    """Head counts and sizes do not fit together."""

    id = "X016"
    name = "attention-heads-inconsistent"
    since = "0.1.0"
    severity = Severity.ERROR

    def check(self, ctx: Context) -> Sequence[Hit]:
        tlc = ctx.layer_config
        heads = json_int(tlc.get("num_attention_heads"))
        if not heads:
            return NO_HITS
        kv = json_int(tlc.get("num_key_value_heads"))
        hidden = json_int(tlc.get("hidden_size"))
        hits = []
        if kv and heads % kv:
            hits.append(
                Hit(
                    f"num_key_value_heads {kv} does not divide num_attention_heads {heads}",
                    pointer="/transformer_layer_config/num_key_value_heads",
                )
            )
        if hidden and tlc.get("head_dim") is None and hidden % heads:
            theirs = _verifier_head_dim(ctx)
            advice = (
                f"set head_dim to {theirs} (the verifier's)"
                if theirs is not None
                else "set head_dim from the verifier's config"
            )
            hits.append(
                Hit(
                    f"head_dim is not set and hidden_size {hidden} is not divisible by "
                    f"num_attention_heads {heads}; {advice}",
                    pointer="/transformer_layer_config/head_dim",
                    edit=_set("/transformer_layer_config/head_dim", theirs),
                )
            )
        return hits


class RopeSpellingsDisagree(_CrossFieldRule):
    """The transformers-4 and transformers-5 RoPE spellings are both present and disagree."""

    id = "X017"
    name = "rope-spellings-disagree"
    since = "0.1.0"
    severity = Severity.ERROR
    references = ("pytorch/executorch#20149",)

    def check(self, ctx: Context) -> Sequence[Hit]:
        tlc = ctx.layer_config
        params = tlc.get("rope_parameters")
        if not isinstance(params, dict) or "rope_theta" not in params and "rope_type" not in params:
            return NO_HITS
        hits = []
        theta = tlc.get("rope_theta")
        if theta is not None and "rope_theta" in params and params["rope_theta"] != theta:
            hits.append(
                Hit(
                    f"rope_theta {theta} disagrees with rope_parameters.rope_theta "
                    f"{params['rope_theta']}; keep one spelling with the trained value",
                    pointer="/transformer_layer_config/rope_theta",
                )
            )
        scaling = tlc.get("rope_scaling")
        if isinstance(scaling, dict):
            a = scaling.get("rope_type", scaling.get("type"))
            b = params.get("rope_type")
            if a and b and a != b:
                hits.append(
                    Hit(
                        f"rope_scaling type {a!r} disagrees with rope_parameters.rope_type {b!r}",
                        pointer="/transformer_layer_config/rope_scaling",
                    )
                )
        return hits


class AlgorithmMismatch(_CrossFieldRule):
    """`speculators_config.algorithm` differs from `speculators_model_type`."""

    id = "X018"
    name = "algorithm-mismatch"
    since = "0.1.0"
    severity = Severity.WARNING

    def check(self, ctx: Context) -> Sequence[Hit]:
        algorithm = ctx.spec_config.get("algorithm")
        if algorithm == ctx.model_type or not isinstance(algorithm, str):
            return NO_HITS
        return (
            Hit(
                f"speculators_config.algorithm is {algorithm!r} but speculators_model_type is "
                f"{ctx.model_type!r}; make them equal",
                pointer="/speculators_config/algorithm",
            ),
        )


class LossyAcceptance(_CrossFieldRule):
    """The proposal accepts tokens other than the verifier's choice."""

    id = "X019"
    name = "lossy-acceptance"
    since = "0.1.0"
    severity = Severity.WARNING

    def check(self, ctx: Context) -> Sequence[Hit]:
        hits = []
        for i, method in enumerate(ctx.proposal_methods):
            k = method.get("verifier_accept_k", 1)
            if isinstance(k, int) and k > 1:
                hits.append(
                    Hit(
                        f"verifier_accept_k is {k}: tokens outside the verifier's top choice "
                        "are accepted and output quality changes; use 1 for lossless decoding",
                        pointer=f"/speculators_config/proposal_methods/{i}/verifier_accept_k",
                        edit=_set(f"/speculators_config/proposal_methods/{i}/verifier_accept_k", 1),
                    )
                )
                continue
            tol = method.get("accept_tolerance", 0.0)
            if isinstance(tol, (int, float)) and tol > 0 and k == 1:
                hits.append(
                    Hit(
                        f"accept_tolerance is {tol} but has no effect with verifier_accept_k 1; "
                        "set it to 0.0",
                        pointer=f"/speculators_config/proposal_methods/{i}/accept_tolerance",
                        edit=_set(
                            f"/speculators_config/proposal_methods/{i}/accept_tolerance", 0.0
                        ),
                    )
                )
        return hits


class ConvGroupSizeDividesHidden(_CrossFieldRule):
    """DFlash2: `conv_group_size` does not divide `hidden_size`."""

    id = "X020"
    name = "conv-group-size-divides-hidden"
    since = "0.8.0"
    severity = Severity.ERROR
    applies_to = catalog.with_feature("conv-selector")

    def check(self, ctx: Context) -> Sequence[Hit]:
        group = json_int(effective(ctx, "conv_group_size"))
        if not group:
            return NO_HITS
        hidden = json_int(ctx.layer_config.get("hidden_size"))
        if not hidden or not hidden % group:
            return NO_HITS
        return (
            Hit(
                f"conv_group_size {group} does not divide hidden_size {hidden}",
                pointer="/conv_group_size",
            ),
        )


def _set(pointer: str, value: Any) -> tuple[Edit, ...] | None:
    """The edit of a "set X to Y" hint (None when the value is not known)."""
    return None if value is None else (Edit.set(pointer, value),)


def _verifier_head_dim(ctx: Context) -> int | None:
    """The verifier's head size: its head_dim, else hidden_size / heads when whole."""
    verifier = ctx.verifier if isinstance(ctx.verifier, dict) else {}
    value = json_int(verifier.get("head_dim"))
    if value:
        return value
    hidden, heads = (
        json_int(verifier.get("hidden_size")),
        json_int(verifier.get("num_attention_heads")),
    )
    return hidden // heads if hidden and heads and hidden % heads == 0 else None
