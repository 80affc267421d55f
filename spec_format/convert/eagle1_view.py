"""EAGLE-1/EAGLE-2 drafts in their own layouts, seen as the speculators format last held them.

The layouts: SafeAILab's (and SGLang's) EAGLE-1 head, a plain language-model config with
``fc.weight`` of shape [hidden, 2 x hidden] (the token embedding and the verifier's last
hidden state fused) and one decoder layer; and vLLM's converted form, ``model_type: eagle``
with the language-model config nested under ``model`` and the tensors under ``model.``.
Nothing converts them: the speculators format held EAGLE-1 drafts up to 0.4
(``speculators_model_type: eagle``) and no current reader loads that line, while the engines
serve these layouts as they are. So the view is the 0.4 config such a draft would have,
without tensors: the verifier rules compare it with the target (hidden size, vocabulary,
positions, dtype, quantization), and what the layout itself lacks is said in the verdict.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from spec_format.parsers.checkpoint import TensorRecord
from spec_format.parsers.verifier import VerifierInfo
from spec_format.runner import source_readers
from spec_format.runner.source_readers import UNNAMED, SeenThrough

KIND = "eagle1"
#: the EAGLE-1 head classes SGLang and SafeAILab's code register
ARCHITECTURES = frozenset({"LlamaForCausalLMEagle", "EagleLlamaForCausalLM", "EAGLEModel"})
#: the format line that last held EAGLE-1 drafts
LAST_LINE = "0.4"
#: what the checks of the view say about the view, not about the draft: the speculators form
#: is retired (S003, C011, M004), and its bookkeeping keys are the view's own
OF_THE_VIEW = frozenset({"S003", "C011", "M004", "C009"})
_LM_KEYS_DROPPED = ("architectures", "auto_map", "torch_dtype", "transformers_version")


def read(
    config: Mapping[str, Any],
    tensors: Mapping[str, TensorRecord] | None,
    verifier: VerifierInfo | None,
    where: str,
) -> SeenThrough | None:
    found = _layout(config, tensors)
    if found is None:
        return None
    lm, prefix, what = found
    notes = _layout_problems(config, tensors, prefix)
    view = {
        "speculators_model_type": "eagle",
        "speculators_version": "0.4.0",
        "architectures": ["EagleSpeculator"],
        "transformer_layer_architecture": "LlamaDecoderLayer",
        "fusion_bias": _has(tensors, prefix + "fc.bias"),
        "layernorms": False,
        "speculators_config": {
            "algorithm": "eagle",
            "default_proposal_method": "greedy",
            "proposal_methods": [{"proposal_type": "greedy", "speculative_tokens": 5}],
            "verifier": {
                "architectures": list(verifier.architectures or []) if verifier else [],
                "name_or_path": UNNAMED,
            },
        },
        "transformer_layer_config": {
            k: v for k, v in lm.items() if k not in _LM_KEYS_DROPPED and v is not None
        },
    }
    dtype = lm.get("torch_dtype", config.get("torch_dtype"))
    if isinstance(dtype, str):
        view["torch_dtype"] = dtype
    return SeenThrough(
        kind=KIND,
        description=what,
        needs="",
        variant="eagle1-view",
        config=view,
        refused=(
            f"the speculators format held EAGLE-1 drafts only up to {LAST_LINE} (no current "
            "reader loads that line, and `specfmt convert` does not write it); engines that "
            "serve EAGLE-1 read this layout as it is"
        ),
        notes=tuple(notes),
        assumed=(f"the draft as a format {LAST_LINE} EAGLE-1 config",),
        of_the_view=OF_THE_VIEW,
    )


def _layout(
    config: Mapping[str, Any], tensors: Mapping[str, TensorRecord] | None
) -> tuple[Mapping[str, Any], str, str] | None:
    """(the language-model config, the tensor prefix, one line naming the layout)."""
    nested = config.get("model")
    if config.get("model_type") == "eagle" and isinstance(nested, Mapping):
        return nested, "model.", "vLLM's EAGLE-1 config (model_type eagle, the model nested)"
    if "hidden_size" not in config or not isinstance(config.get("hidden_size"), int):
        return None
    names = frozenset(tensors or ())
    if any(n.startswith("midlayer.") for n in names):
        return None  # EAGLE-3 (SafeAILab, SpecForge): convert's
    archs = config.get("architectures") or []
    fc = (tensors or {}).get("fc.weight")
    fused = fc is not None and tuple(fc.shape) == (config["hidden_size"], 2 * config["hidden_size"])
    if fused or (isinstance(archs, list) and ARCHITECTURES.intersection(archs)):
        return (
            config,
            "",
            "SafeAILab/SGLang EAGLE-1 head (fc fuses the embedding and the last hidden state)",
        )
    return None


def _has(tensors: Mapping[str, TensorRecord] | None, name: str) -> bool:
    return tensors is not None and name in tensors


def _layout_problems(
    config: Mapping[str, Any], tensors: Mapping[str, TensorRecord] | None, prefix: str
) -> list[str]:
    if tensors is None:
        return []
    out = []
    bias = _has(tensors, prefix + "fc.bias")
    if prefix and bias and config.get("eagle_fc_bias") is not True:
        out.append(
            f"{prefix}fc.bias is in the weights but eagle_fc_bias is not true: vLLM builds fc "
            "without a bias from this config and the trained bias is never loaded; set "
            '"eagle_fc_bias": true'
        )
    if not prefix and not bias:
        out.append(
            "fc has no bias (fc.bias absent): converters written for EAGLE heads that have one "
            "(TensorRT-LLM's EAGLE convert_checkpoint) fail on it"
        )
    own_head = any(n.endswith("lm_head.weight") for n in tensors)
    inner = config.get("model")
    layer = inner if isinstance(inner, Mapping) else config
    if not own_head and layer.get("tie_word_embeddings") is True:
        out.append(
            "tie_word_embeddings is true, but the draft has no head of its own (it takes the "
            "verifier's embedding and lm_head): SGLang's EAGLE draft class then makes lm_head "
            "the embedding module itself, and set_embed_and_head, which replaces both weights "
            "with the verifier's, fails (AttributeError: no attribute 'weight'); set it to false"
        )
    if not own_head:
        out.append(
            "no lm_head.weight: the head was trained against the verifier's frozen head, so a "
            "loader that expects the draft's own head fails or leaves it untrained; give it "
            "the verifier's lm_head.weight"
        )
    return out


source_readers.register(read)
