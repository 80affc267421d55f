"""Cross-field rules (X): relations between fields of one config.json that JSON Schema
cannot express (or that code generators cannot carry)."""

from __future__ import annotations

from collections.abc import Iterator

from spec_format import catalog
from spec_format.effective import effective
from spec_format.jsonload import json_int
from spec_format.report import Severity
from spec_format.rules.base import Context, Hit, Layer, Rule


class _CrossFieldRule(Rule):
    abstract = True
    layer = Layer.CROSS_FIELD


class DefaultProposalMethodUnknown(_CrossFieldRule):
    """`default_proposal_method` names no entry of `proposal_methods`.

    ## What it checks
    `speculators_config.default_proposal_method` equals the `proposal_type` of one entry in
    `speculators_config.proposal_methods`.

    ## Why it matters
    speculators 0.6 and later refuse to load such a config (`check_default_proposal_method`).

    ## Example
    ```json
    {"speculators_config": {"default_proposal_method": "tree", "proposal_methods": [{"proposal_type": "greedy"}]}}
    ```

    ## Use instead
    ```json
    {"speculators_config": {"default_proposal_method": "greedy", "proposal_methods": [{"proposal_type": "greedy"}]}}
    ```

    ## References
    vllm-project/speculators#562
    """

    id = "X001"
    name = "default-proposal-method-unknown"
    since = "0.1.0"
    severity = Severity.ERROR
    references = ("vllm-project/speculators#562",)

    def check(self, ctx: Context) -> Iterator[Hit]:
        default = ctx.spec_config.get("default_proposal_method")
        types = [m.get("proposal_type") for m in ctx.proposal_methods]
        if isinstance(default, str) and types and default not in types:
            yield Hit(
                f"default_proposal_method {default!r} is not among the proposal types "
                f"{types}; set it to {types[0]!r}",
                pointer="/speculators_config/default_proposal_method",
            )


class NormFlagsExclusive(_CrossFieldRule):
    """`norm_before_fc` and `fc_norm` are both true.

    ## What it checks
    At most one of the two EAGLE-3 input normalisations is enabled.

    ## Why it matters
    They are alternatives (one norm over the concatenation vs one per aux layer); speculators
    0.7 and later refuse the combination, and the weights can only match one of them.

    ## Example
    ```json
    {"norm_before_fc": true, "fc_norm": true}
    ```

    ## Use instead
    ```json
    {"norm_before_fc": true, "fc_norm": false}
    ```
    Keep the one whose weights the checkpoint holds (`input_norm.weight` for
    norm_before_fc, `fc_norm.N.weight` for fc_norm).
    """

    id = "X002"
    name = "norm-flags-exclusive"
    since = "0.7.0"
    severity = Severity.ERROR
    applies_to = catalog.family("chain")

    def check(self, ctx: Context) -> Iterator[Hit]:
        if ctx.config.get("norm_before_fc") is True and ctx.config.get("fc_norm") is True:
            yield Hit(
                "norm_before_fc and fc_norm are both true but are mutually exclusive; keep "
                "the one whose weights the checkpoint holds (input_norm.weight or "
                "fc_norm.N.weight) and set the other to false",
                pointer="/fc_norm",
            )


class SpeculativeTokensBlockMismatch(_CrossFieldRule):
    """For block drafts, `speculative_tokens` does not match `block_size` and
    `sample_from_anchor`.

    ## What it checks
    DFlash family: `proposal_methods[0].speculative_tokens == block_size - 1`, or
    `== block_size` when `sample_from_anchor` is true.

    ## Why it matters
    vLLM drafts `speculative_tokens` positions with the query geometry of `block_size`; a
    mismatch loads fine and collapses acceptance (4.4 % instead of 34.7 % in one DSpark
    report). DFlash checkpoints written by speculators 0.5.0.dev46-dev71 carry an
    off-by-one `block_size`.

    ## Example
    ```json
    {"block_size": 8, "sample_from_anchor": false,
     "speculators_config": {"proposal_methods": [{"proposal_type": "greedy", "speculative_tokens": 8}]}}
    ```

    ## Use instead
    ```json
    {"block_size": 8, "sample_from_anchor": false,
     "speculators_config": {"proposal_methods": [{"proposal_type": "greedy", "speculative_tokens": 7}]}}
    ```
    `specfmt migrate` fixes the known off-by-one releases.

    ## References
    vllm-project/vllm#41834, vllm-project/vllm#50012, vllm-project/vllm#54154
    """

    id = "X003"
    name = "speculative-tokens-block-mismatch"
    since = "0.5.0"
    severity = Severity.WARNING
    applies_to = catalog.family("block")
    references = ("vllm-project/vllm#41834", "vllm-project/vllm#50012", "vllm-project/vllm#54154")

    def check(self, ctx: Context) -> Iterator[Hit]:
        block = json_int(effective(ctx, "block_size"))
        methods = ctx.proposal_methods
        tokens = json_int(methods[0].get("speculative_tokens")) if methods else None
        if block is None or tokens is None or block < 1:
            return
        anchor = effective(ctx, "sample_from_anchor") is True
        expected = block if anchor else block - 1
        if tokens != expected:
            source = "" if "sample_from_anchor" in ctx.config else " (type default)"
            yield Hit(
                f"speculative_tokens is {tokens} but block_size {block} with "
                f"sample_from_anchor={str(anchor).lower()}{source} drafts {expected} tokens "
                f"per step; set speculative_tokens to {expected}, or fix block_size / "
                "sample_from_anchor to what the draft was trained with",
                pointer="/speculators_config/proposal_methods/0/speculative_tokens",
            )


class DraftVocabExceedsVerifierVocab(_CrossFieldRule):
    """`draft_vocab_size` is larger than the verifier vocabulary.

    ## What it checks
    `draft_vocab_size <= transformer_layer_config.vocab_size`.

    ## Why it matters
    The draft vocabulary is a subset of the verifier's: `t2d` has one entry per verifier
    token and exactly `draft_vocab_size` of them true. A larger draft vocab usually means
    the two sizes were swapped (vocab_size must be the verifier's, not the draft's).

    ## Example
    ```json
    {"draft_vocab_size": 151936, "transformer_layer_config": {"vocab_size": 32000}}
    ```

    ## Use instead
    ```json
    {"draft_vocab_size": 32000, "transformer_layer_config": {"vocab_size": 151936}}
    ```

    ## References
    vllm-project/speculators#188
    """

    id = "X004"
    name = "draft-vocab-exceeds-verifier-vocab"
    since = "0.1.0"
    severity = Severity.ERROR
    references = ("vllm-project/speculators#188",)

    def check(self, ctx: Context) -> Iterator[Hit]:
        draft = json_int(ctx.config.get("draft_vocab_size"))
        verifier = json_int(ctx.layer_config.get("vocab_size"))
        if draft is not None and verifier is not None and draft > verifier:
            yield Hit(
                f"draft_vocab_size {draft} is larger than transformer_layer_config.vocab_size "
                f"{verifier}; vocab_size must be the verifier's vocabulary and draft_vocab_size "
                "at most that",
                pointer="/draft_vocab_size",
            )


class AuxLayerIdsRequired(_CrossFieldRule):
    """Aux layer ids are missing or empty where engines require them.

    ## What it checks
    DFlash family: `aux_hidden_state_layer_ids` is a non-empty list. EAGLE family:
    `eagle_aux_hidden_state_layer_ids`, when present, is not an empty list (absent or null
    is reported by C001).

    ## Why it matters
    vLLM reads the DFlash ids unconditionally and speculators sizes `fc` from them. An empty
    list makes EAGLE readers fall back to a guessed default without a word; one guessed
    default cost 1.2 % acceptance instead of 58.9 %.

    ## Example
    ```json
    {"speculators_model_type": "dflash", "aux_hidden_state_layer_ids": null}
    ```

    ## Use instead
    ```json
    {"speculators_model_type": "dflash", "aux_hidden_state_layer_ids": [2, 10, 18, 26, 34]}
    ```
    (the ids the draft was trained with).

    ## References
    vllm-project/vllm#50170, sgl-project/sglang#37475, z-lab/dflash#157
    """

    id = "X005"
    name = "aux-layer-ids-required"
    since = "0.1.0"
    severity = Severity.ERROR
    applies_to = catalog.aux_types()
    references = ("vllm-project/vllm#50170", "sgl-project/sglang#37475", "z-lab/dflash#157")

    def check(self, ctx: Context) -> Iterator[Hit]:
        key = catalog.aux_key(ctx.model_type)
        ids = ctx.config.get(key)
        if ids == []:
            yield Hit(
                f"{key} is an empty list; write the verifier layer ids the draft was trained "
                "with (readers treat [] as 'not set' and guess)",
                pointer=f"/{key}",
            )
        elif ctx.model_type in catalog.family("block") and ids is None:
            state = "null" if key in ctx.config else "missing"
            yield Hit(
                f"{key} is {state}; vLLM and speculators need the verifier layer ids the "
                "draft was trained with (DFlash convention: id L = output of verifier layer "
                "L-1)",
                pointer=f"/{key}",
            )


class AuxLayerIdInvalid(_CrossFieldRule):
    """A DFlash-family aux layer id is 0.

    ## What it checks
    DFlash family: every aux layer id is at least 1 (negative ids are caught by the schema).

    ## Why it matters
    vLLM shifts DFlash ids by one (`target_layer_ids = [i - 1 ...]`), so id 0 becomes -1,
    which Python indexing silently wraps to the verifier's last layer.

    ## Example
    ```json
    {"aux_hidden_state_layer_ids": [0, 9, 17, 25, 33]}
    ```

    ## Use instead
    ```json
    {"aux_hidden_state_layer_ids": [1, 10, 18, 26, 34]}
    ```
    z-lab `target_layer_ids` must be shifted by +1 when converted.

    ## References
    vllm-project/vllm#40727, vllm-project/vllm#42704, NVIDIA/Model-Optimizer#2149
    """

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

    def check(self, ctx: Context) -> Iterator[Hit]:
        key = catalog.aux_key(ctx.model_type)
        ids = ctx.config.get(key)
        if not isinstance(ids, list):
            return
        for i, v in enumerate(ids):
            if v == 0 and not isinstance(v, bool):
                yield Hit(
                    f"{key}[{i}] is 0, but DFlash ids start at 1 (vLLM uses id - 1, so 0 "
                    "reads the verifier's last layer); if these are z-lab target_layer_ids, "
                    "add 1 to each",
                    pointer=f"/{key}/{i}",
                )


class AuxLayerIdsDuplicate(_CrossFieldRule):
    """The same verifier layer is listed twice among the aux layer ids.

    ## What it checks
    Aux layer ids are unique.

    ## Why it matters
    Duplicate taps waste fc capacity and usually come from a broken id generator
    (`build_target_layer_ids(4, 4)` gave `[1, 1, 1, 1]`); the draft was almost certainly
    not trained that way.

    ## Example
    ```json
    {"aux_hidden_state_layer_ids": [1, 1, 1, 1]}
    ```

    ## Use instead
    ```json
    {"aux_hidden_state_layer_ids": [1, 12, 23, 34]}
    ```

    ## References
    NVIDIA/Model-Optimizer#1271
    """

    id = "X007"
    name = "aux-layer-ids-duplicate"
    since = "0.1.0"
    severity = Severity.ERROR
    applies_to = catalog.aux_types()
    references = ("NVIDIA/Model-Optimizer#1271",)

    def check(self, ctx: Context) -> Iterator[Hit]:
        key = catalog.aux_key(ctx.model_type)
        ids = ctx.config.get(key)
        if not isinstance(ids, list):
            return
        seen: set = set()
        for i, v in enumerate(ids):
            if not isinstance(v, int):
                continue
            if v in seen:
                yield Hit(
                    f"{key}[{i}] repeats layer {v}; list each verifier layer once",
                    pointer=f"/{key}/{i}",
                )
            seen.add(v)


class AuxLayerIdsUnordered(_CrossFieldRule):
    """Aux layer ids are not in ascending order.

    ## What it checks
    Aux layer ids ascend.

    ## Why it matters
    The order of the ids is the order of the blocks of `fc`'s input; every producer writes
    them ascending. A shuffled list is either a hand edit (and then fc's blocks no longer
    match) or a draft trained in an unusual order that other tools may re-sort.

    ## Example
    ```json
    {"eagle_aux_hidden_state_layer_ids": [34, 2, 18]}
    ```

    ## Use instead
    ```json
    {"eagle_aux_hidden_state_layer_ids": [2, 18, 34]}
    ```
    Only if the draft was trained in that order; otherwise keep the trained order.
    """

    id = "X008"
    name = "aux-layer-ids-unordered"
    since = "0.1.0"
    severity = Severity.WARNING
    applies_to = catalog.aux_types()

    def check(self, ctx: Context) -> Iterator[Hit]:
        key = catalog.aux_key(ctx.model_type)
        ids = ctx.config.get(key)
        if not isinstance(ids, list) or not all(isinstance(v, int) for v in ids):
            return
        if any(a > b for a, b in zip(ids, ids[1:], strict=False)):
            yield Hit(
                f"{key} {ids} is not ascending; producers write ids in ascending order, and "
                "fc's input blocks follow the list order: check it matches training",
                pointer=f"/{key}",
            )


class LayerModelTypeUnsupported(_CrossFieldRule):
    """`transformer_layer_config.model_type` names a decoder family the type's readers
    cannot build.

    ## What it checks
    eagle3/peagle: `llama` or `qwen3`. mtp: `qwen3`, `qwen3_next`, `qwen3_5_text` or
    `qwen3_5_moe_text`. DFlash family: any value is accepted (speculators always builds
    Qwen3-style layers), noted when it is not `qwen3`.

    ## Why it matters
    vLLM raises `Unsupported model_type ... for Eagle3 speculator` and speculators a
    KeyError; a DFlash config saying `llama` still holds Qwen3 `q_norm`/`k_norm` weights,
    which confuses tools that trust the field.

    ## Example
    ```json
    {"speculators_model_type": "eagle3", "transformer_layer_config": {"model_type": "mistral"}}
    ```

    ## Use instead
    ```json
    {"speculators_model_type": "eagle3", "transformer_layer_config": {"model_type": "llama"}}
    ```

    ## References
    vllm-project/vllm#43132, vllm-project/vllm#44322
    """

    id = "X009"
    name = "layer-model-type-unsupported"
    since = "0.1.0"
    severity = Severity.ERROR
    references = ("vllm-project/vllm#43132", "vllm-project/vllm#44322")

    def check(self, ctx: Context) -> Iterator[Hit]:
        model_type = ctx.layer_config.get("model_type")
        if not isinstance(model_type, str):
            return
        rec = catalog.record(ctx.model_type)
        allowed = rec.layer_families if rec else ()
        if allowed and model_type not in allowed:
            yield Hit(
                f"transformer_layer_config.model_type {model_type!r} cannot be built for "
                f"{ctx.model_type}; readers support {', '.join(allowed)}",
                pointer="/transformer_layer_config/model_type",
            )


class DFlashLayerModelTypeIgnored(_CrossFieldRule):
    """A DFlash-family config names a layer model_type other than qwen3.

    ## What it checks
    DFlash family: `transformer_layer_config.model_type` is `qwen3`.

    ## Why it matters
    speculators builds Qwen3-style layers (with `q_norm`/`k_norm`) for every DFlash-family
    draft whatever this field says; the published gemma-4-31B DFlash says `llama` and holds
    Qwen3 weights. Tools that trust the field build the wrong layer.

    ## Example
    ```json
    {"speculators_model_type": "dflash", "transformer_layer_config": {"model_type": "llama"}}
    ```

    ## Use instead
    ```json
    {"speculators_model_type": "dflash", "transformer_layer_config": {"model_type": "qwen3"}}
    ```
    """

    id = "X010"
    name = "dflash-layer-model-type-ignored"
    since = "0.5.0"
    severity = Severity.INFO
    applies_to = catalog.family("block")

    def check(self, ctx: Context) -> Iterator[Hit]:
        model_type = ctx.layer_config.get("model_type")
        built = catalog.default_layer(ctx.model_type, ctx.format_version)
        if isinstance(model_type, str) and built and model_type != built:
            yield Hit(
                f"transformer_layer_config.model_type is {model_type!r}, but {ctx.model_type} "
                "drafts are always built with Qwen3-style layers (q_norm/k_norm); the field "
                "is informational here",
                pointer="/transformer_layer_config/model_type",
            )


class MtpNextnLayers(_CrossFieldRule):
    """An MTP config declares more than one prediction layer.

    ## What it checks
    mtp: `num_nextn_predict_layers == 1`.

    ## Why it matters
    speculators refuses anything else ("MTP currently supports 1 layer"); vLLM would build
    that many heads and find no weights for them.

    ## Example
    ```json
    {"speculators_model_type": "mtp", "num_nextn_predict_layers": 2}
    ```

    ## Use instead
    ```json
    {"speculators_model_type": "mtp", "num_nextn_predict_layers": 1}
    ```
    """

    id = "X011"
    name = "mtp-nextn-layers"
    since = "0.6.0"
    severity = Severity.ERROR
    applies_to = catalog.family("nextn")

    def check(self, ctx: Context) -> Iterator[Hit]:
        n = json_int(ctx.config.get("num_nextn_predict_layers"))
        if n is not None and n != 1:
            yield Hit(
                f"num_nextn_predict_layers is {n}; speculators supports exactly 1 MTP layer",
                pointer="/num_nextn_predict_layers",
            )


class DtypeConflict(_CrossFieldRule):
    """`dtype` and `torch_dtype` are both present with different values.

    ## What it checks
    At most one of the two spellings, or both equal.

    ## Why it matters
    transformers renamed `torch_dtype` to `dtype` in 4.56; with two different values it
    refuses the config, and older readers only see `torch_dtype`.

    ## Example
    ```json
    {"dtype": "bfloat16", "torch_dtype": "float32"}
    ```

    ## Use instead
    ```json
    {"dtype": "bfloat16"}
    ```
    (`torch_dtype` when the target reader uses transformers <= 4.55.)

    ## References
    huggingface/transformers#40808, vllm-project/vllm#28542
    """

    id = "X012"
    name = "dtype-conflict"
    since = "0.1.0"
    severity = Severity.ERROR
    references = ("huggingface/transformers#40808",)

    def check(self, ctx: Context) -> Iterator[Hit]:
        for prefix, obj in (("", ctx.config), ("/transformer_layer_config", ctx.layer_config)):
            if "dtype" in obj and "torch_dtype" in obj and obj["dtype"] != obj["torch_dtype"]:
                yield Hit(
                    f"dtype {obj['dtype']!r} and torch_dtype {obj['torch_dtype']!r} disagree; "
                    "keep one key with the dtype of the saved tensors",
                    pointer=f"{prefix}/torch_dtype",
                )


class MaskTokenIdRequired(_CrossFieldRule):
    """`mask_token_id` is missing or null for a type whose readers require it.

    ## What it checks
    DFlash family and peagle: `mask_token_id` is an integer.

    ## Why it matters
    vLLM reads `config_dict["mask_token_id"]` unconditionally for these types; the draft
    cannot be served without it.

    ## Example
    ```json
    {"speculators_model_type": "dflash", "mask_token_id": null}
    ```

    ## Use instead
    ```json
    {"speculators_model_type": "dflash", "mask_token_id": 151669}
    ```
    (the mask token the draft was trained with, usually a reserved token of the verifier's
    tokenizer).
    """

    id = "X013"
    name = "mask-token-id-required"
    since = "0.5.0"
    severity = Severity.ERROR
    applies_to = catalog.mask_token_types()

    def check(self, ctx: Context) -> Iterator[Hit]:
        value = ctx.config.get("mask_token_id")
        if value is None:
            state = "null" if "mask_token_id" in ctx.config else "missing"
            yield Hit(
                f"mask_token_id is {state}; vLLM requires the mask token id the draft was "
                "trained with",
                pointer="/mask_token_id",
            )


class MaskTokenOutOfVocab(_CrossFieldRule):
    """`mask_token_id` is not a token of the verifier vocabulary.

    ## What it checks
    `mask_token_id < transformer_layer_config.vocab_size`.

    ## Why it matters
    The mask token is embedded with the verifier's embedding table; an id past its end
    fails at the first draft step (or reads garbage on engines that do not bounds-check).

    ## Example
    ```json
    {"mask_token_id": 151936, "transformer_layer_config": {"vocab_size": 151936}}
    ```

    ## Use instead
    ```json
    {"mask_token_id": 151669, "transformer_layer_config": {"vocab_size": 151936}}
    ```
    """

    id = "X014"
    name = "mask-token-out-of-vocab"
    since = "0.5.0"
    severity = Severity.ERROR
    applies_to = catalog.mask_token_types()

    def check(self, ctx: Context) -> Iterator[Hit]:
        mask = json_int(ctx.config.get("mask_token_id"))
        vocab = json_int(ctx.layer_config.get("vocab_size"))
        if mask is not None and vocab is not None and mask >= vocab:
            yield Hit(
                f"mask_token_id {mask} is outside the verifier vocabulary of {vocab} tokens",
                pointer="/mask_token_id",
            )


class LayerTypesLength(_CrossFieldRule):
    """`layer_types` does not have one entry per layer, or a sliding layer has no window.

    ## What it checks
    `len(transformer_layer_config.layer_types) == num_hidden_layers`, and
    `sliding_window` is set when any layer is `sliding_attention`.

    ## Why it matters
    transformers refuses a length mismatch in recent versions and indexes past the end in
    older ones; a sliding layer without a window silently becomes full attention.

    ## Example
    ```json
    {"transformer_layer_config": {"num_hidden_layers": 5, "layer_types": ["full_attention"]}}
    ```

    ## Use instead
    ```json
    {"transformer_layer_config": {"num_hidden_layers": 5,
      "layer_types": ["full_attention", "full_attention", "full_attention", "full_attention", "full_attention"]}}
    ```
    """

    id = "X015"
    name = "layer-types-length"
    since = "0.1.0"
    severity = Severity.ERROR

    def check(self, ctx: Context) -> Iterator[Hit]:
        tlc = ctx.layer_config
        types = tlc.get("layer_types")
        layers = json_int(tlc.get("num_hidden_layers"))
        if isinstance(types, list) and layers is not None and len(types) != layers:
            yield Hit(
                f"layer_types has {len(types)} entries but num_hidden_layers is {layers}; "
                "write one attention kind per layer",
                pointer="/transformer_layer_config/layer_types",
            )
        if (
            isinstance(types, list)
            and "sliding_attention" in types
            and tlc.get("sliding_window") is None
        ):
            yield Hit(
                "layer_types contains sliding_attention but sliding_window is not set; set "
                "the window size the draft was trained with",
                pointer="/transformer_layer_config/sliding_window",
            )


class AttentionHeadsInconsistent(_CrossFieldRule):
    """Head counts and sizes do not fit together.

    ## What it checks
    `num_key_value_heads` divides `num_attention_heads`; without `head_dim`,
    `hidden_size` is divisible by `num_attention_heads`.

    ## Why it matters
    Grouped-query attention needs whole groups; the implied head_dim must be an integer.
    Engines fail while building the layer, after the GPU was allocated.

    ## Example
    ```json
    {"transformer_layer_config": {"num_attention_heads": 32, "num_key_value_heads": 6}}
    ```

    ## Use instead
    ```json
    {"transformer_layer_config": {"num_attention_heads": 32, "num_key_value_heads": 8}}
    ```
    (copy the head settings from the verifier's config).
    """

    id = "X016"
    name = "attention-heads-inconsistent"
    since = "0.1.0"
    severity = Severity.ERROR

    def check(self, ctx: Context) -> Iterator[Hit]:
        tlc = ctx.layer_config
        heads = json_int(tlc.get("num_attention_heads"))
        kv = json_int(tlc.get("num_key_value_heads"))
        hidden = json_int(tlc.get("hidden_size"))
        if heads and kv and heads % kv:
            yield Hit(
                f"num_key_value_heads {kv} does not divide num_attention_heads {heads}",
                pointer="/transformer_layer_config/num_key_value_heads",
            )
        if heads and hidden and tlc.get("head_dim") is None and hidden % heads:
            yield Hit(
                f"head_dim is not set and hidden_size {hidden} is not divisible by "
                f"num_attention_heads {heads}; set head_dim from the verifier's config",
                pointer="/transformer_layer_config/head_dim",
            )


class RopeSpellingsDisagree(_CrossFieldRule):
    """The transformers-4 and transformers-5 RoPE spellings are both present and disagree.

    ## What it checks
    When `rope_theta`/`rope_scaling` sit beside `rope_parameters`, the base and the scaling
    type agree.

    ## Why it matters
    transformers 4 readers (speculators 0.1-0.4) read `rope_theta`/`rope_scaling`,
    transformers 5 readers read `rope_parameters`: two values mean two engines run two
    different drafts from one file.

    ## Example
    ```json
    {"transformer_layer_config": {"rope_theta": 10000.0, "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0}}}
    ```

    ## Use instead
    Keep one spelling (`specfmt migrate` writes the one of the target release), with the
    value the draft was trained with.

    ## References
    huggingface/transformers#41250, pytorch/executorch#20149
    """

    id = "X017"
    name = "rope-spellings-disagree"
    since = "0.1.0"
    severity = Severity.ERROR
    references = ("pytorch/executorch#20149",)

    def check(self, ctx: Context) -> Iterator[Hit]:
        tlc = ctx.layer_config
        params = tlc.get("rope_parameters")
        if not isinstance(params, dict) or "rope_theta" not in params and "rope_type" not in params:
            return
        theta = tlc.get("rope_theta")
        if theta is not None and "rope_theta" in params and params["rope_theta"] != theta:
            yield Hit(
                f"rope_theta {theta} disagrees with rope_parameters.rope_theta "
                f"{params['rope_theta']}; keep one spelling with the trained value",
                pointer="/transformer_layer_config/rope_theta",
            )
        scaling = tlc.get("rope_scaling")
        if isinstance(scaling, dict):
            a = scaling.get("rope_type", scaling.get("type"))
            b = params.get("rope_type")
            if a and b and a != b:
                yield Hit(
                    f"rope_scaling type {a!r} disagrees with rope_parameters.rope_type {b!r}",
                    pointer="/transformer_layer_config/rope_scaling",
                )


class AlgorithmMismatch(_CrossFieldRule):
    """`speculators_config.algorithm` differs from `speculators_model_type`.

    ## What it checks
    The two names agree.

    ## Why it matters
    Every producer writes the same name in both places; a different algorithm is a sign of
    a hand-edited or half-converted config (vLLM picks its method from
    `speculators_model_type`).

    ## Example
    ```json
    {"speculators_model_type": "dflash", "speculators_config": {"algorithm": "eagle3"}}
    ```

    ## Use instead
    ```json
    {"speculators_model_type": "dflash", "speculators_config": {"algorithm": "dflash"}}
    ```
    """

    id = "X018"
    name = "algorithm-mismatch"
    since = "0.1.0"
    severity = Severity.WARNING

    def check(self, ctx: Context) -> Iterator[Hit]:
        algorithm = ctx.spec_config.get("algorithm")
        if isinstance(algorithm, str) and algorithm != ctx.model_type:
            yield Hit(
                f"speculators_config.algorithm is {algorithm!r} but speculators_model_type is "
                f"{ctx.model_type!r}; make them equal",
                pointer="/speculators_config/algorithm",
            )


class LossyAcceptance(_CrossFieldRule):
    """The proposal accepts tokens other than the verifier's choice.

    ## What it checks
    `verifier_accept_k == 1` and `accept_tolerance == 0` in every proposal method.

    ## Why it matters
    Speculative decoding is only lossless when a draft token is accepted exactly when the
    verifier agrees; top-k acceptance changes the model's output distribution.

    ## Example
    ```json
    {"proposal_type": "greedy", "speculative_tokens": 3, "verifier_accept_k": 5, "accept_tolerance": 2.0}
    ```

    ## Use instead
    ```json
    {"proposal_type": "greedy", "speculative_tokens": 3, "verifier_accept_k": 1, "accept_tolerance": 0.0}
    ```
    Unless a lossy setting is intended and documented.
    """

    id = "X019"
    name = "lossy-acceptance"
    since = "0.1.0"
    severity = Severity.WARNING

    def check(self, ctx: Context) -> Iterator[Hit]:
        for i, method in enumerate(ctx.proposal_methods):
            k = method.get("verifier_accept_k", 1)
            tol = method.get("accept_tolerance", 0.0)
            if isinstance(k, int) and k > 1:
                yield Hit(
                    f"verifier_accept_k is {k}: tokens outside the verifier's top choice are "
                    "accepted and output quality changes; use 1 for lossless decoding",
                    pointer=f"/speculators_config/proposal_methods/{i}/verifier_accept_k",
                )
            elif isinstance(tol, (int, float)) and tol > 0 and k == 1:
                yield Hit(
                    f"accept_tolerance is {tol} but has no effect with verifier_accept_k 1; "
                    "set it to 0.0",
                    pointer=f"/speculators_config/proposal_methods/{i}/accept_tolerance",
                )


class ConvGroupSizeDividesHidden(_CrossFieldRule):
    """DFlash2: `conv_group_size` does not divide `hidden_size`.

    ## What it checks
    `hidden_size % conv_group_size == 0`.

    ## Why it matters
    Each dynamic kernel is shared by `conv_group_size` channels; the kernel projection has
    `hidden_size / conv_group_size` rows and cannot be built otherwise.

    ## Example
    ```json
    {"conv_group_size": 24, "transformer_layer_config": {"hidden_size": 4096}}
    ```

    ## Use instead
    ```json
    {"conv_group_size": 16, "transformer_layer_config": {"hidden_size": 4096}}
    ```
    """

    id = "X020"
    name = "conv-group-size-divides-hidden"
    since = "0.8.0"
    severity = Severity.ERROR
    applies_to = catalog.with_feature("conv-selector")

    def check(self, ctx: Context) -> Iterator[Hit]:
        group = json_int(effective(ctx, "conv_group_size"))
        hidden = json_int(ctx.layer_config.get("hidden_size"))
        if group and hidden and hidden % group:
            yield Hit(
                f"conv_group_size {group} does not divide hidden_size {hidden}",
                pointer="/conv_group_size",
            )
