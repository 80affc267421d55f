"""Rewrite rules (R): what ``specfmt migrate`` and ``specfmt fix`` report but cannot rewrite.

``validate`` never raises these: the migration steps and ``fix`` emit them (the rule id and
the parameters of the message) while rewriting a config, and the rule words the message.
Problems that are also validation findings carry that rule's id instead (C002, C006, X012,
M007, M008), so ``specfmt explain`` shows the same page for both.
"""

from __future__ import annotations

from spec_format.report import Severity
from spec_format.rules.base import Layer, Rule


class _RewriteRule(Rule):
    abstract = True
    layer = Layer.REWRITE
    engine_emitted = True


class VerifierArchitecturesHardcoded(_RewriteRule):
    """A 0.3 EAGLE-3 training run recorded `LlamaForCausalLM` as the verifier, whatever it was.

    ## What it checks
    `specfmt migrate` and `specfmt fix` report trained EAGLE-3 drafts
    (`architectures: ["Eagle3DraftModel"]`) stamped 0.3.0.dev37 ... 0.4.0.dev32 whose
    `speculators_config.verifier.architectures` is `["LlamaForCausalLM"]`.

    ## Why it matters
    Training of those builds wrote that list for every verifier, so readers that check the
    verifier's architecture (V007) compare against the wrong model family.

    ## Example
    ```json
    {"speculators_model_type": "eagle3", "architectures": ["Eagle3DraftModel"], "speculators_version": "0.3.0", "speculators_config": {"verifier": {"architectures": ["LlamaForCausalLM"]}}}
    ```

    ## Use instead
    `specfmt migrate --verifier PATH` (or `specfmt fix --verifier PATH`) writes the
    verifier's real architectures.
    """

    id = "R001"
    name = "verifier-architectures-hardcoded"
    since = "0.3.0"
    severity = Severity.INFO
    template = (
        "0.3.0 training wrote verifier.architectures = [LlamaForCausalLM] whatever the "
        "verifier was; pass --verifier PATH to replace it with the real one"
    )


class MlpUnbuildable(_RewriteRule):
    """An `mlp` config migrated to 0.2-0.4 cannot be built on transformers 4.56 or newer.

    ## What it checks
    `specfmt migrate` reports `mlp` configs that it moves from 0.1 to 0.2 or later.

    ## Why it matters
    Speculators 0.2-0.4 declare an mlp `torch_dtype` field that collides with the `dtype`
    property of transformers >= 4.56, so those releases fail to build the draft there.

    ## Example
    ```json
    {"speculators_model_type": "mlp", "speculators_version": "0.1.0", "torch_dtype": "bfloat16"}
    ```

    ## Use instead
    Read the migrated config with transformers < 4.56, or keep the draft at 0.1.
    """

    id = "R002"
    name = "mlp-unbuildable"
    since = "0.2.0"
    severity = Severity.WARNING
    template = (
        "speculators 0.2-0.4 cannot build mlp configs on transformers >= 4.56 (the mlp "
        "torch_dtype field collides with the dtype property); read it with transformers < 4.56"
    )


class SlidingWindowIgnored(_RewriteRule):
    """A downgrade target would run the draft's sliding-window layers with full attention.

    ## What it checks
    `specfmt migrate` to 0.5 (DFlash) or 0.6 (EAGLE-3 family) reports drafts whose
    `transformer_layer_config.layer_types` or `use_sliding_window` ask for sliding-window
    attention. The downgrade is lossy and needs `--allow-lossy`.

    ## Why it matters
    Those releases do not apply sliding windows to the draft's layers, so the served draft
    computes something other than what it was trained to compute.

    ## Example
    ```json
    {"speculators_model_type": "dflash", "transformer_layer_config": {"num_hidden_layers": 1, "layer_types": ["sliding_attention"], "sliding_window": 2048}}
    ```
    migrated with `specfmt migrate --to 0.5 --allow-lossy`.

    ## Use instead
    Serve the draft with a release that applies sliding windows (0.6 for DFlash, 0.7 for
    EAGLE-3), or retrain with full attention.
    """

    id = "R003"
    name = "sliding-window-ignored"
    since = "0.6.0"
    severity = Severity.WARNING
    template = {
        "dflash": (
            "the draft's layers use sliding-window attention (transformer_layer_config."
            "layer_types / use_sliding_window), which the 0.5 DFlash model does not apply; "
            "it would run them with full attention"
        ),
        "eagle": (
            "the draft's layers use sliding-window attention (transformer_layer_config."
            "layer_types / use_sliding_window), which EAGLE models before 0.7 do not apply; "
            "0.6 would run them with full attention"
        ),
    }


class RopeParametersInvalid(_RewriteRule):
    """`rope_parameters` is not an object, so a downgrade cannot respell it.

    ## What it checks
    `specfmt migrate` below 0.8 turns the transformers-5 `rope_parameters` object into
    `rope_theta` and `rope_scaling`; it reports a value that is not an object.

    ## Why it matters
    No transformers-4 spelling carries such a value; the RoPE settings of the draft would
    be lost or wrong.

    ## Example
    ```json
    {"speculators_model_type": "eagle3", "speculators_version": "0.9.0", "transformer_layer_config": {"rope_parameters": 10000}}
    ```

    ## Use instead
    ```json
    {"speculators_model_type": "eagle3", "speculators_version": "0.9.0", "transformer_layer_config": {"rope_parameters": {"rope_type": "default", "rope_theta": 10000.0}}}
    ```
    """

    id = "R004"
    name = "rope-parameters-invalid"
    since = "0.8.0"
    severity = Severity.ERROR
    template = "{pointer} is not an object; fix it by hand"


class AuxLayerIdsImplicit(_RewriteRule):
    """`fix` could not make the EAGLE-3 aux layer ids explicit without the verifier.

    ## What it checks
    `specfmt fix` on an EAGLE-3-family config whose `eagle_aux_hidden_state_layer_ids` is
    absent or null, run without `--verifier` (or with one that has no layer count).

    ## Why it matters
    Readers then derive the ids (2, L//2, L-3) from the verifier's layer count; writing them
    down keeps the config meaning the same whichever verifier it is paired with.

    ## Example
    ```json
    {"speculators_model_type": "eagle3", "eagle_aux_hidden_state_layer_ids": null}
    ```

    ## Use instead
    `specfmt fix --verifier PATH`, which writes `[2, L//2, L-3]` for the verifier's `L`
    layers.
    """

    id = "R005"
    name = "aux-layer-ids-implicit"
    since = "0.2.0"
    severity = Severity.INFO
    template = (
        "{key} is {state}, so readers derive (2, L//2, L-3) from the verifier; pass "
        "--verifier PATH to write the ids explicitly"
    )
