"""0.5 -> 0.6: P-EAGLE and MTP arrive; DFlash sliding windows; the default method must exist.

speculators 0.6 added the ``peagle`` and ``mtp`` types and DFlash's
``sliding_window_non_causal`` (false), and refuses a ``default_proposal_method`` that names
no configured proposal method (0.5 accepted anything), so upgrading points it at the greedy
method. Downgrading refuses ``peagle`` and ``mtp``, drops ``sliding_window_non_causal``
(lossy when true), and flags DFlash drafts with sliding-window layers, which 0.5 runs with
full attention.
"""

from __future__ import annotations

from spec_format.rewrites.migration.records import Editor, StepOutput
from spec_format.rewrites.migration.steps._common import (
    add_field,
    drop_field,
    layer_config,
    refuse_type,
    uses_sliding_window,
)

SOURCE = "0.5"
TARGET = "0.6"
TOUCHES = ("sliding_window_non_causal", "speculators_config.default_proposal_method")
STEP = f"{SOURCE}->{TARGET}"


def upgrade(doc, ctx) -> StepOutput:
    ed = Editor(doc, STEP)
    add_field(
        ed,
        ("dflash",),
        "sliding_window_non_causal",
        False,
        "0.6 declares the field; false keeps the 0.5 behaviour (causal masking); a vLLM "
        "version reads an absent key as non-causal",
    )
    spec = ed.doc.get("speculators_config")
    if isinstance(spec, dict) and isinstance(spec.get("proposal_methods"), list):
        kinds = [m.get("proposal_type") for m in spec["proposal_methods"] if isinstance(m, dict)]
        default = spec.get("default_proposal_method")
        if kinds and default not in kinds:
            ed.set(
                "/speculators_config/default_proposal_method",
                kinds[0],
                f"0.6 refuses a default_proposal_method ({default!r}) that names no "
                "configured method",
            )
    return ed.output()


def downgrade(doc, ctx) -> StepOutput:
    ed = Editor(doc, f"{TARGET}->{SOURCE}")
    refuse_type(ed, SOURCE)
    # the flag governs sliding-window layers only: without them any value means what 0.5 does
    inert = not uses_sliding_window(layer_config(ed))
    drop_field(
        ed,
        ("dflash",),
        "sliding_window_non_causal",
        ed.doc.get("sliding_window_non_causal") if inert else False,
        "0.5 has no such field and masks sliding-window layers causally"
        + ("; this draft has none, so the flag changed nothing" if inert else ""),
    )
    if ed.model_type == "dflash" and uses_sliding_window(layer_config(ed)):
        ed.problem(
            "R003",
            pointer="/transformer_layer_config/layer_types",
            lossy=True,
            variant="dflash-0.5",
        )
    return ed.output()
