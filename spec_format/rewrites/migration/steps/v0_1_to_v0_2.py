"""0.1 -> 0.2: EAGLE-3 gets explicit aux layer ids; transformers writes dtype.

speculators 0.2 added ``eagle_aux_hidden_state_layer_ids`` to eagle3 (null means the
consumer default ``[2, L//2, L-3]``, which is what every 0.1 draft used) and stopped pinning
transformers below 4.54, whose successors spell the parameter dtype ``dtype`` instead of
``torch_dtype``. Downgrading drops the aux ids (lossy unless null) and spells ``torch_dtype``
again, which is the only spelling transformers < 4.54 reads.
"""

from __future__ import annotations

from spec_format.rewrites.migration.records import Editor, StepOutput
from spec_format.rewrites.migration.steps._common import add_field, drop_field, respell_dtype

SOURCE = "0.1"
TARGET = "0.2"
TOUCHES = ("eagle_aux_hidden_state_layer_ids", "torch_dtype", "dtype")
STEP = f"{SOURCE}->{TARGET}"


def upgrade(doc, ctx) -> StepOutput:
    ed = Editor(doc, STEP)
    add_field(
        ed,
        ("eagle3",),
        "eagle_aux_hidden_state_layer_ids",
        None,
        "0.2 declares the field; null keeps the 0.1 behaviour (the consumer default "
        "[2, L//2, L-3] of the verifier's layer count)",
    )
    respell_dtype(ed, "dtype", "transformers >= 4.56 (used from 0.2 on) spells it dtype")
    if ed.model_type == "mlp":
        ed.problem("R002", pointer="/torch_dtype")
    return ed.output()


def downgrade(doc, ctx) -> StepOutput:
    ed = Editor(doc, f"{TARGET}->{SOURCE}")
    drop_field(
        ed,
        ("eagle3",),
        "eagle_aux_hidden_state_layer_ids",
        None,
        "0.1 has no such field and always uses the default [2, L//2, L-3]",
    )
    respell_dtype(
        ed, "torch_dtype", "0.1 runs on transformers < 4.54, which reads only torch_dtype"
    )
    return ed.output()
