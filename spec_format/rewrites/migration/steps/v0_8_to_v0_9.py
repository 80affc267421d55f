"""0.8 -> 0.9: XPress arrives; nothing else changes.

speculators 0.9 added the ``xpress`` type; every other type's fields are the same as in
0.8. Downgrading refuses ``xpress``.
"""

from __future__ import annotations

from spec_format.rewrites.migration.records import Editor, StepOutput
from spec_format.rewrites.migration.steps._common import refuse_type

SOURCE = "0.8"
TARGET = "0.9"
TOUCHES = ()
STEP = f"{SOURCE}->{TARGET}"


def upgrade(doc, ctx) -> StepOutput:
    return Editor(doc, STEP).output()


def downgrade(doc, ctx) -> StepOutput:
    ed = Editor(doc, f"{TARGET}->{SOURCE}")
    refuse_type(ed, SOURCE)
    return ed.output()
