"""The exact words migrate and fix give a user: refusals, problems and the reasons of
changes a test elsewhere only counts (mutation testing found them unpinned, issue 38)."""

from __future__ import annotations

import json

import pytest

from spec_format.base.errors import MigrationRefused
from spec_format.rewrites.fixing import fix
from spec_format.rewrites.migration import migrate
from spec_format.rewrites.migration.runner import MigrateOptions
from tests.common import ROOT

EAGLE1 = ROOT / "tests/fixtures/releases/0.1/eagle/llama-3.1-8b-eagle1-converter-0.1.0.json"
EAGLE3_05 = ROOT / "tests/migrate/fixtures/0.5/eagle3/top-level-model-type.json"
EAGLE3 = ROOT / "examples/qwen3-8b-eagle3/config.json"


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (
            {"architectures": ["LlamaForCausalLM"]},
            "no speculators_model_type: this is not a speculators config (a verifier's "
            "config.json, or an external EAGLE/DFlash checkpoint that needs `speculators "
            "convert` first)",
        ),
        (
            {"speculators_algorithm": "eagle", "draft_model": {}},
            "this is the pre-0.1 draft format (top-level version, speculators_algorithm, "
            "draft_model); no speculators release reads it and specfmt cannot migrate it. "
            "Re-create the config with speculators >= 0.1 (speculators convert)",
        ),
    ],
)
def test_what_is_no_speculators_config_is_refused_with_what_to_do(document, message):
    with pytest.raises(MigrationRefused) as refused:
        migrate(document)
    assert str(refused.value) == message


@pytest.mark.parametrize("to", ["0.1", "0.3"])
def test_an_eagle_layer_config_without_model_type_is_an_error_naming_the_fix(to):
    doc = json.loads(EAGLE1.read_text())
    del doc["transformer_layer_config"]["model_type"]
    result = migrate(doc, MigrateOptions(to=to))
    assert [p.to_dict() for p in result.problems] == [
        {
            "rule": "C002",
            "code": "layer-model-type-missing",
            "severity": "error",
            "message": "transformer_layer_config.model_type is required for eagle configs "
            '(AutoConfig.for_model needs it); add the verifier family, e.g. "llama"',
            "pointer": "/transformer_layer_config/model_type",
            "step": "explicit",
        }
    ]


def test_empty_verifier_architectures_are_filled_from_the_verifier_with_the_reason():
    doc = json.loads(EAGLE3_05.read_text())
    assert doc["speculators_config"]["verifier"]["architectures"] == []
    result = migrate(
        doc, MigrateOptions(to="0.9", verifier={"architectures": ["Qwen3ForCausalLM"]})
    )
    changes = [c.to_dict() for c in result.changes if c.pointer.endswith("/architectures")]
    assert changes == [
        {
            "step": "era",
            "op": "replace",
            "pointer": "/speculators_config/verifier/architectures",
            "before": [],
            "after": ["Qwen3ForCausalLM"],
            "why": "was empty (training of 0.4.0.dev33-0.7.0.dev19 built it from the draft's "
            "layer config); filled from --verifier",
        }
    ]


@pytest.mark.parametrize(
    ("version", "change"),
    [
        (
            None,
            {
                "op": "add",
                "after": "0.1.0",
                "why": "absent: stamped with the release of format 0.1, which the keys say",
            },
        ),
        (
            "banana",
            {
                "op": "replace",
                "before": "banana",
                "after": "0.1.0",
                "why": "'banana' names no format the keys allow: stamped with the release of "
                "format 0.1, which the keys say",
            },
        ),
    ],
)
def test_fix_stamps_a_missing_or_meaningless_version_saying_which(version, change):
    doc = json.loads(EAGLE3.read_text())
    if version is None:
        del doc["speculators_version"]
    else:
        doc["speculators_version"] = version
    stamped = [c.to_dict() for c in fix(doc).changes if c.pointer == "/speculators_version"]
    assert stamped == [{"step": "fix", "pointer": "/speculators_version", **change}]


def test_a_written_default_says_which_engines_read_its_absence_otherwise():
    import re

    doc = json.loads(EAGLE3_05.read_text())
    del doc["norm_before_residual"]
    result = migrate(doc, MigrateOptions(to="0.9"))
    (written,) = [c for c in result.changes if c.pointer == "/norm_before_residual"]
    assert (written.step, written.after) == ("explicit", False)
    # the newest covered vLLM release (the reader table grows): its reading of the absence
    assert re.fullmatch(r"speculators default; vllm==[0-9.]+ reads true when absent", written.why)
