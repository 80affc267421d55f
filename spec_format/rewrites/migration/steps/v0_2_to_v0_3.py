"""0.2 -> 0.3: only greedy token proposals remain.

speculators 0.3 deleted the ``sampling``, ``static_tree`` and ``dynamic_tree`` proposal
types (no producer ever wrote them) and refuses a config that lists one. Upgrading removes
them, which loses their settings, so it needs ``--allow-lossy``; a config without a greedy
method cannot be upgraded at all. Downgrading keeps every key 0.2 reads (it reads every 0.3
config) but drops the trainer's class name ``Eagle3DraftModel`` from ``architectures``: no
0.2 release has that class, so no 0.2 writer wrote it, and the name dates the file to 0.3 or
later (a file re-saved by a newer release keeps its old stamp, so detection trusts the name
over the stamp). 0.2's own class, ``Eagle3Speculator``, is no replacement: it is what the
converters wrote, and stamped 0.2.0 it says the weights lost their decoder layer (M007).
Without the key, 0.2 loads its default, as it does for a hand-written file.
"""

from __future__ import annotations

from spec_format.base.errors import MigrationRefused
from spec_format.rewrites.migration.records import Editor, StepOutput, pointer

SOURCE = "0.2"
TARGET = "0.3"
TOUCHES = (
    "speculators_config.proposal_methods",
    "speculators_config.default_proposal_method",
    "architectures",
)
STEP = f"{SOURCE}->{TARGET}"
REMOVED = ("sampling", "static_tree", "dynamic_tree")


def upgrade(doc, ctx) -> StepOutput:
    ed = Editor(doc, STEP)
    methods = ed.get("/speculators_config/proposal_methods")
    if not isinstance(methods, list):
        return ed.output()
    kinds = [m.get("proposal_type") if isinstance(m, dict) else None for m in methods]
    if not any(k in REMOVED for k in kinds):
        return ed.output()
    if "greedy" not in kinds:
        raise MigrationRefused(
            "speculators_config.proposal_methods has no greedy method and 0.3 knows no other "
            "proposal type; add a greedy entry (speculative_tokens = the number of tokens the "
            "draft proposes) before migrating"
        )
    for i in reversed(range(len(methods))):
        if kinds[i] in REMOVED:
            ed.remove(
                pointer("speculators_config", "proposal_methods", i),
                f"proposal type {kinds[i]!r} was removed in 0.3, which refuses it",
                lossy=True,
            )
    default = ed.get("/speculators_config/default_proposal_method")
    if default in REMOVED:
        ed.set(
            "/speculators_config/default_proposal_method",
            "greedy",
            f"the default named the removed {default!r} method; greedy is the one left",
        )
    return ed.output()


#: the class name only 0.3 and later write (the trainer's model)
TRAINED_CLASS = "Eagle3DraftModel"


def downgrade(doc, ctx) -> StepOutput:
    ed = Editor(doc, f"{TARGET}->{SOURCE}")
    archs = ed.doc.get("architectures")
    if isinstance(archs, list) and TRAINED_CLASS in archs:
        why = (
            f"no 0.2 release has the class {TRAINED_CLASS} (0.3's trainer), and the name dates "
            "the file to 0.3 or later"
        )
        kept = [a for a in archs if a != TRAINED_CLASS]
        if kept:
            ed.set("/architectures", kept, why)
        else:
            ed.remove("/architectures", f"{why}; without the key 0.2 loads its default")
    return ed.output()
