"""0.6 -> 0.7: DSpark arrives; Eagle 3.1 flags; sample_from_anchor; training keys leave.

speculators 0.7 added the ``dspark`` type, eagle3/peagle ``norm_output`` and ``fc_norm``
(false), DFlash ``sample_from_anchor`` (false), removed the training-only
``dflash.max_anchors`` and ``peagle.num_depths`` / ``down_sample_ratio`` /
``down_sample_ratio_min``, and changed the layer config class eagle3/peagle assume when
``transformer_layer_config.model_type`` is missing from Llama to Qwen3, so the upgrade
writes ``"llama"`` where it is missing. Downgrading refuses ``dspark``, drops the new flags
(lossy when true), writes the removed fields back with their 0.6 defaults, writes
``"qwen3"`` where the model type is missing, and flags EAGLE drafts with sliding-window
layers, which 0.6 runs with full attention.
"""

from __future__ import annotations

from spec_format.rewrites.migration.records import Editor, StepOutput, pointer
from spec_format.rewrites.migration.steps._common import (
    EAGLE3_FAMILY,
    TLC,
    add_field,
    drop_field,
    layer_config,
    refuse_type,
    uses_sliding_window,
)

SOURCE = "0.6"
TARGET = "0.7"
TOUCHES = (
    "norm_output",
    "fc_norm",
    "sample_from_anchor",
    "max_anchors",
    "num_depths",
    "down_sample_ratio",
    "down_sample_ratio_min",
    "transformer_layer_config.model_type",
)
STEP = f"{SOURCE}->{TARGET}"
TRAINING_ONLY = {
    "dflash": {"max_anchors": 256},
    "peagle": {"num_depths": 8, "down_sample_ratio": 0.7, "down_sample_ratio_min": 0.2},
}


def _explicit_layer_model_type(ed: Editor, value: str, release: str) -> None:
    tlc = layer_config(ed)
    if ed.model_type in EAGLE3_FAMILY and tlc is not None and "model_type" not in tlc:
        ed.set(
            pointer(TLC, "model_type"),
            value,
            f"without it, {release} builds a {value} layer config by default while the other "
            "side of 0.6/0.7 assumes the other class; write it explicitly",
        )


def upgrade(doc, ctx) -> StepOutput:
    ed = Editor(doc, STEP)
    _explicit_layer_model_type(ed, "llama", "0.6 and older")
    for key in ("norm_output", "fc_norm"):
        add_field(
            ed,
            EAGLE3_FAMILY,
            key,
            False,
            f"0.7 declares {key}; false keeps the 0.6 behaviour",
        )
    add_field(
        ed,
        ("dflash",),
        "sample_from_anchor",
        False,
        "0.7 declares the field; false is what 0.6 DFlash did (the anchor is the bonus "
        "token, block_size - 1 speculative tokens)",
    )
    for key in TRAINING_ONLY.get(ed.model_type, {}):
        if key in ed.doc:
            ed.remove(
                pointer(key),
                "training-only hyper-parameter removed in 0.7 (0.7.0.dev62); no reader uses it",
            )
    return ed.output()


def downgrade(doc, ctx) -> StepOutput:
    ed = Editor(doc, f"{TARGET}->{SOURCE}")
    refuse_type(ed, SOURCE)
    _explicit_layer_model_type(ed, "qwen3", "0.7 and newer")
    for key, what in (
        ("norm_output", "feeds pre-norm states across steps"),
        ("fc_norm", "has no per-layer norm before fc"),
    ):
        drop_field(ed, EAGLE3_FAMILY, key, False, f"0.6 has no {key} and {what}")
    drop_field(
        ed,
        ("dflash",),
        "sample_from_anchor",
        False,
        "0.6 has no such field; its DFlash always treats the anchor as the bonus token",
    )
    mirrored = {"num_depths": _num_depths(ed)}
    for key, default in TRAINING_ONLY.get(ed.model_type, {}).items():
        ed.add_default(
            pointer(key),
            mirrored.get(key, default),
            "0.6 declares this training field and always writes it; restored with its 0.6 "
            "default" + (" (num_depths mirrors speculative_tokens)" if key in mirrored else ""),
        )
    if ed.model_type in EAGLE3_FAMILY and uses_sliding_window(layer_config(ed)):
        ed.problem(
            "R003", pointer="/transformer_layer_config/layer_types", lossy=True, variant="eagle-0.6"
        )
    return ed.output()


def _num_depths(ed: Editor) -> int:
    tokens = ed.get("/speculators_config/proposal_methods/0/speculative_tokens")
    mirrored = isinstance(tokens, int) and not isinstance(tokens, bool) and 1 <= tokens <= 16
    return tokens if mirrored else 8
