"""0.7 -> 0.8: DFlash2 arrives; transformers 5 only, so RoPE lives in rope_parameters.

speculators 0.8 added the ``dflash2`` type and requires transformers >= 5, which keeps the
layer config's RoPE in ``rope_parameters`` (``{rope_theta, rope_type, ...}``) instead of
``rope_theta`` + ``rope_scaling``; the values do not change. Downgrading refuses
``dflash2`` and writes ``rope_theta`` + ``rope_scaling`` back, because 0.7 may run on
transformers 4, which ignores ``rope_parameters`` and would fall back to the class default
RoPE.
"""

from __future__ import annotations

from spec_format.rewrites.migration.records import Editor, StepOutput
from spec_format.rewrites.migration.steps._common import (
    refuse_type,
    rope_from_parameters,
    rope_to_parameters,
)

SOURCE = "0.7"
TARGET = "0.8"
TOUCHES = (
    "transformer_layer_config.rope_theta",
    "transformer_layer_config.rope_scaling",
    "transformer_layer_config.rope_parameters",
)
STEP = f"{SOURCE}->{TARGET}"


def upgrade(doc, ctx) -> StepOutput:
    ed = Editor(doc, STEP)
    rope_to_parameters(ed, "transformers 5 (required from 0.8) keeps RoPE in rope_parameters")
    return ed.output()


def downgrade(doc, ctx) -> StepOutput:
    ed = Editor(doc, f"{TARGET}->{SOURCE}")
    refuse_type(ed, SOURCE)
    rope_from_parameters(
        ed, "0.7 may run on transformers 4, which reads only rope_theta and rope_scaling"
    )
    return ed.output()
