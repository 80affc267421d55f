"""Consumer rules (C) that are not reader-table rows: nested keys speculators drops,
verifier blocks old trainers wrote wrong, obsolete keys, runtime support notes.

What each reader release reads, ignores or refuses is the reader table's (rules in
:mod:`spec_format.rules.engines`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from spec_format import catalog, versions
from spec_format.report import Severity
from spec_format.rules.base import Context, Hit, Layer, Rule


class _ConsumerRule(Rule):
    abstract = True
    layer = Layer.CONSUMER


class LayerModelTypeMissing(_ConsumerRule):
    """`transformer_layer_config.model_type` is missing.

    ## What it checks
    The layer config names its decoder family.

    ## Why it matters
    Without it each reader picks its own class: speculators 0.7 and later build Qwen3 layers
    for EAGLE-3, older releases Llama layers, vLLM assumes llama, and mtp defaults to
    Qwen2. A Qwen3 draft read as Llama fails on `k_norm` weights; the reverse drops them.

    ## Example
    ```json
    {"transformer_layer_config": {"hidden_size": 4096, "num_hidden_layers": 1}}
    ```

    ## Use instead
    ```json
    {"transformer_layer_config": {"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 1}}
    ```

    ## References
    vllm-project/speculators#620, vllm-project/vllm#43132
    """

    id = "C002"
    name = "layer-model-type-missing"
    since = "0.1.0"
    severity = Severity.WARNING
    references = ("vllm-project/speculators#620", "vllm-project/vllm#43132")

    def check(self, ctx: Context) -> Iterator[Hit]:
        if ctx.layer_config and "model_type" not in ctx.layer_config:
            options = catalog.buildable_layers(ctx.model_type) or ("qwen3",)
            yield Hit(
                "transformer_layer_config.model_type is missing: speculators >= 0.7 builds "
                "Qwen3 layers, older releases Llama, vLLM assumes llama; write the decoder "
                f"family the draft was trained with ({' or '.join(options)})",
                pointer="/transformer_layer_config/model_type",
            )


_NESTED = {
    "/speculators_config": ("algorithm", "proposal_methods", "default_proposal_method", "verifier"),
    "/speculators_config/verifier": ("name_or_path", "architectures"),
}
_PROPOSAL_KEYS = ("proposal_type", "speculative_tokens", "verifier_accept_k", "accept_tolerance")


class NestedKeyDropped(_ConsumerRule):
    """`speculators_config`, its `verifier` or a proposal method carries a key that
    speculators silently drops.

    ## What it checks
    Nested objects hold only the keys their classes declare.

    ## Why it matters
    Unlike the top level (which keeps unknown keys), these nested models ignore extra keys:
    the value is lost on load and gone after the next save, so a setting placed there
    never takes effect.

    ## Example
    ```json
    {"speculators_config": {"block_size": 8, "algorithm": "dflash"}}
    ```

    ## Use instead
    ```json
    {"block_size": 8, "speculators_config": {"algorithm": "dflash"}}
    ```
    """

    id = "C003"
    name = "nested-key-dropped"
    since = "0.1.0"
    severity = Severity.WARNING

    def check(self, ctx: Context) -> Iterator[Hit]:
        objects: list[tuple[str, Any, tuple[str, ...]]] = [
            ("/speculators_config", ctx.spec_config, _NESTED["/speculators_config"]),
            (
                "/speculators_config/verifier",
                ctx.spec_config.get("verifier"),
                _NESTED["/speculators_config/verifier"],
            ),
        ]
        objects += [
            (f"/speculators_config/proposal_methods/{i}", m, _PROPOSAL_KEYS)
            for i, m in enumerate(ctx.proposal_methods)
        ]
        for where, obj, known in objects:
            if not isinstance(obj, dict):
                continue
            for key in obj:
                if key not in known:
                    yield Hit(
                        f"{where[1:]}.{key} is not a field of that object: speculators drops "
                        "it silently on load; move it where it belongs or remove it",
                        pointer=f"{where}/{key}",
                    )


class AuxLayerCountNotThree(_ConsumerRule):
    """An EAGLE-3 draft taps a number of verifier layers other than three.

    ## What it checks
    eagle3/peagle: `len(eagle_aux_hidden_state_layer_ids) == 3`.

    ## Why it matters
    vLLM before #54598 (and several other engines) sized `fc` for exactly three aux layers
    and fail to load (`4096x16384` vs `4096x12288`) or, where weights load loosely, run a
    wrong projection.

    ## Example
    ```json
    {"eagle_aux_hidden_state_layer_ids": [2, 46, 91, 93]}
    ```

    ## Use instead
    Nothing to change in the file if the draft was trained with four layers: serve it with
    vLLM including #54598, and check other engines before deploying.

    ## References
    vllm-project/vllm#54526, vllm-project/vllm#54598, verl-project/verl-SpeCo#6
    """

    id = "C004"
    name = "aux-layer-count-not-three"
    since = "0.1.0"
    severity = Severity.INFO
    applies_to = catalog.family("chain")
    references = ("vllm-project/vllm#54526", "vllm-project/vllm#54598")

    def check(self, ctx: Context) -> Iterator[Hit]:
        ids = ctx.config.get("eagle_aux_hidden_state_layer_ids")
        if isinstance(ids, list) and ids and len(ids) != 3:
            yield Hit(
                f"{len(ids)} aux layers: vLLM older than #54598 and some other engines "
                "assume 3 and cannot load this fc",
                pointer="/eagle_aux_hidden_state_layer_ids",
            )


_OLD_ARCH_RELEASES = (
    "speculators 0.4-0.6 training wrote [] (0.3 wrote LlamaForCausalLM for every verifier)"
)


class VerifierArchitecturesEmpty(_ConsumerRule):
    """`speculators_config.verifier.architectures` is empty.

    ## What it checks
    The verifier block lists the verifier's architectures.

    ## Why it matters
    Readers use it to check that a draft is paired with a compatible target; drafts trained
    with speculators 0.4-0.6 wrote `[]` because the draft's own layer config was read
    instead of the verifier's.

    ## Example
    ```json
    {"verifier": {"name_or_path": "google/gemma-4-31B-it", "architectures": []}}
    ```

    ## Use instead
    ```json
    {"verifier": {"name_or_path": "google/gemma-4-31B-it", "architectures": ["Gemma4ForConditionalGeneration"]}}
    ```
    `specfmt migrate --verifier DIR` fills it from the verifier's config.json.
    """

    id = "C006"
    name = "verifier-architectures-empty"
    since = "0.1.0"
    severity = Severity.WARNING
    legacy_severity = Severity.INFO

    def check(self, ctx: Context) -> Iterator[Hit]:
        verifier = ctx.spec_config.get("verifier")
        if isinstance(verifier, dict) and verifier.get("architectures") == []:
            yield Hit(
                "verifier.architectures is empty, so no reader can check the draft's target "
                f"({_OLD_ARCH_RELEASES}); fill it from the verifier's config.json, for example "
                "with `specfmt migrate --verifier DIR`",
                pointer="/speculators_config/verifier/architectures",
            )


_LOCAL_PATH = re.compile(r"^(/|\./|\.\./|~|[A-Za-z]:\\|s3://|gs://|file://)")


class ObsoleteKey(_ConsumerRule):
    """The config carries a key that no current reader uses.

    ## What it checks
    Serialization noise (`has_no_defaults_at_init`, `base_model_ep_plan`) and removed
    training-only fields (`max_anchors`, `num_depths`, `down_sample_ratio`,
    `down_sample_ratio_min`).

    ## Why it matters
    Harmless to load, but they say the file was written by an older release whose other
    defaults may also differ; `specfmt migrate` drops them and reports why.

    ## Example
    ```json
    {"has_no_defaults_at_init": false, "base_model_ep_plan": null}
    ```

    ## Use instead
    Remove them, or run `specfmt migrate`.
    """

    id = "C009"
    name = "obsolete-key"
    since = "0.1.0"
    severity = Severity.INFO

    def check(self, ctx: Context) -> Iterator[Hit]:
        for key, noise in catalog.noise_keys().items():
            if key in ctx.config:
                yield Hit(f"{key} is {noise.why}; `specfmt migrate` drops it", pointer=f"/{key}")
        for key, until in versions.removed_fields(ctx.model_type).items():
            if key in ctx.config:
                yield Hit(
                    f"{key} is a field of {ctx.model_type} up to format {until}, removed after "
                    "it; no current reader uses it; `specfmt migrate` drops it",
                    pointer=f"/{key}",
                )


class AnchorSamplingSupport(_ConsumerRule):
    """A DFlash draft samples from the anchor position, which most readers do not support.

    ## What it checks
    dflash: `sample_from_anchor` is not true.

    ## Why it matters
    With anchor sampling, K draft tokens use K query positions instead of K + 1, a different
    query geometry; vLLM loads the flag only since #48639 and supports true for DFlash only
    with #54154 (open when this rule was written).

    ## Example
    ```json
    {"speculators_model_type": "dflash", "sample_from_anchor": true, "block_size": 8}
    ```

    ## Use instead
    Serve with a reader that supports anchor sampling for DFlash, or keep the trained layout
    and check acceptance after deploying.

    ## References
    vllm-project/vllm#48639, vllm-project/vllm#54154
    """

    id = "C010"
    name = "anchor-sampling-support"
    since = "0.7.0"
    severity = Severity.WARNING
    applies_to = ("dflash",)
    references = ("vllm-project/vllm#48639", "vllm-project/vllm#54154")

    def check(self, ctx: Context) -> Iterator[Hit]:
        if ctx.config.get("sample_from_anchor") is True:
            yield Hit(
                "sample_from_anchor is true: vLLM supports anchor sampling for dflash only "
                "with vllm-project/vllm#54154; older readers draft with the wrong layout",
                pointer="/sample_from_anchor",
            )
