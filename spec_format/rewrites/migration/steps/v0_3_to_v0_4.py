"""0.3 -> 0.4: EAGLE-3 gets embed_requires_grad.

speculators 0.4 added the training-only flag ``embed_requires_grad`` (false) to eagle3.
Downgrading drops it, which is lossy only when it is true.
"""

from __future__ import annotations

from spec_format.rewrites.migration.records import Editor, StepOutput
from spec_format.rewrites.migration.steps._common import add_field, drop_field

SOURCE = "0.3"
TARGET = "0.4"
TOUCHES = ("embed_requires_grad",)
STEP = f"{SOURCE}->{TARGET}"


def upgrade(doc, ctx) -> StepOutput:
    ed = Editor(doc, STEP)
    add_field(
        ed,
        ("eagle3",),
        "embed_requires_grad",
        False,
        "0.4 declares the field and always writes it; false is its default",
    )
    return ed.output()


def downgrade(doc, ctx) -> StepOutput:
    ed = Editor(doc, f"{TARGET}->{SOURCE}")
    drop_field(ed, ("eagle3",), "embed_requires_grad", False, "0.3 has no such field")
    return ed.output()
