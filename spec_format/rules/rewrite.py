"""Rewrite rules (R): what ``specfmt migrate`` and ``specfmt fix`` report but cannot rewrite.

``validate`` never raises these: the migration steps and ``fix`` emit them (the rule id and
the parameters of the message) while rewriting a config, and the rule words the message.
Problems that are also validation findings carry that rule's id instead (C002, C006, X012,
M007, M008), so ``specfmt explain`` shows the same page for both.
"""

from __future__ import annotations

from spec_format.base.report import Severity
from spec_format.rules.base import Layer, Rule


class _RewriteRule(Rule):
    abstract = True
    layer = Layer.REWRITE
    engine_emitted = True


class VerifierArchitecturesHardcoded(_RewriteRule):
    """A 0.3 EAGLE-3 training run recorded `LlamaForCausalLM` as the verifier, whatever it was."""

    id = "R001"
    name = "verifier-architectures-hardcoded"
    since = "0.3.0"
    severity = Severity.INFO
    template = (
        "0.3.0 training wrote verifier.architectures = [LlamaForCausalLM] whatever the "
        "verifier was; pass --verifier PATH to replace it with the real one"
    )


class MlpUnbuildable(_RewriteRule):
    """An `mlp` config migrated to 0.2-0.4 cannot be built on transformers 4.56 or newer."""

    id = "R002"
    name = "mlp-unbuildable"
    since = "0.2.0"
    severity = Severity.WARNING
    template = (
        "speculators 0.2-0.4 cannot build mlp configs on transformers >= 4.56 (the mlp "
        "torch_dtype field collides with the dtype property); read it with transformers < 4.56"
    )


class SlidingWindowIgnored(_RewriteRule):
    """A downgrade target would run the draft's sliding-window layers with full attention."""

    id = "R003"
    name = "sliding-window-ignored"
    since = "0.6.0"
    severity = Severity.WARNING
    template = {
        "dflash-0.5": (
            "the draft's layers use sliding-window attention (transformer_layer_config."
            "layer_types / use_sliding_window), which the 0.5 DFlash model does not apply; "
            "it would run them with full attention"
        ),
        "eagle-0.6": (
            "the draft's layers use sliding-window attention (transformer_layer_config."
            "layer_types / use_sliding_window), which EAGLE models before 0.7 do not apply; "
            "0.6 would run them with full attention"
        ),
    }


class RopeParametersInvalid(_RewriteRule):
    """`rope_parameters` is not an object, so a downgrade cannot respell it."""

    id = "R004"
    name = "rope-parameters-invalid"
    since = "0.8.0"
    severity = Severity.ERROR
    template = "{pointer} is not an object; fix it by hand"


class AuxLayerIdsImplicit(_RewriteRule):
    """`fix` could not make the EAGLE-3 aux layer ids explicit without the verifier."""

    id = "R005"
    name = "aux-layer-ids-implicit"
    since = "0.2.0"
    severity = Severity.INFO
    template = (
        "{key} is {state}, so readers derive (2, L//2, L-3) from the verifier; only the "
        "training run knows whether the draft was trained on those: pass the layers it was "
        "trained on with --aux-layer-ids (--verifier PATH shows the ones readers pick)"
    )


class AuxLayerIdsAssumed(_RewriteRule):
    """`fix --verifier` knows which layers readers would tap, but not which ones the draft was
    trained on: the default is reported as an assumption and never written."""

    id = "R006"
    name = "aux-layer-ids-assumed"
    since = "0.2.0"
    severity = Severity.WARNING
    template = (
        "{key} is {state}: with this verifier's {layers} layers every reader taps {ids} "
        "(2, L//2, L-3), an assumption only the training run can confirm, so it is not "
        "written; if the draft was trained on those layers, pass --aux-layer-ids {csv}, "
        "otherwise the layers it was trained on"
    )
