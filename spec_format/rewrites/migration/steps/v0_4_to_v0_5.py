"""0.4 -> 0.5: DFlash arrives; EAGLE-1, independent and mlp leave; norm_before_fc.

speculators 0.5 added the ``dflash`` type and eagle3's ``norm_before_fc`` (false), stopped
writing the accidental transformers fields ``has_no_defaults_at_init`` and
``base_model_ep_plan`` (serialization noise, which every migration drops), and no longer
loads ``eagle``, ``independent`` or ``mlp`` configs, so those cannot be upgraded. Downgrading refuses
``dflash``, drops ``norm_before_fc`` (lossy when true), removes a top-level
``model_type``, which makes 0.4 and older fail to load, and removes a ``transformers_version``
of transformers 5 or later: every release up to 0.4 ran on transformers 4, so the version dates
the file to 0.5 or later (detection trusts it over the stamp, which a re-save never updates);
transformers writes its own on the next save.
"""

from __future__ import annotations

from spec_format.base.errors import MigrationRefused
from spec_format.rewrites.migration.records import Editor, StepOutput
from spec_format.rewrites.migration.steps._common import add_field, drop_field, refuse_type

SOURCE = "0.4"
TARGET = "0.5"
TOUCHES = ("norm_before_fc", "model_type", "transformers_version")
STEP = f"{SOURCE}->{TARGET}"
RETIRED = {
    "eagle": "EAGLE-1/HASS drafts have no loader from 0.5 on (the type was un-registered in "
    "0.5 and deleted in 0.7); keep the checkpoint at format 0.4 or re-train it as eagle3",
    "independent": "no release from 0.5 on knows it, and no release could read it back",
    "mlp": "the type was removed in 0.5 and no producer ever wrote weights for it",
}


def upgrade(doc, ctx) -> StepOutput:
    ed = Editor(doc, STEP)
    if ed.model_type in RETIRED:
        raise MigrationRefused(
            f"speculators_model_type {ed.model_type!r} cannot be migrated past 0.4: "
            f"{RETIRED[ed.model_type]}"
        )
    add_field(
        ed,
        ("eagle3",),
        "norm_before_fc",
        False,
        "0.5 declares the field; false keeps the 0.4 behaviour (no norm before fc)",
    )
    return ed.output()


def downgrade(doc, ctx) -> StepOutput:
    ed = Editor(doc, f"{TARGET}->{SOURCE}")
    refuse_type(ed, SOURCE)
    drop_field(
        ed,
        ("eagle3",),
        "norm_before_fc",
        False,
        "0.4 has no such field and never normalizes before fc",
    )
    if "model_type" in ed.doc and ed.model_type != "independent":
        ed.remove(
            "/model_type",
            "a top-level model_type makes 0.4 and older fail to load ('model_type' is a ClassVar)",
        )
    version = ed.doc.get("transformers_version")
    if transformers_5(version):
        ed.remove(
            "/transformers_version",
            f"every release up to 0.4 ran on transformers 4; transformers {version} dates the "
            "file to 0.5 or later",
        )
    return ed.output()


def transformers_5(version: object) -> bool:
    """Whether ``version`` names transformers 5 or later (what no release up to 0.4 ran on)."""
    major = version.split(".")[0] if isinstance(version, str) else ""
    return major.isdecimal() and len(major) <= 4 and int(major) >= 5
