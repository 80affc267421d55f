"""C020: what a named vLLM release's EAGLE-3 drafter can load (reader table ``weights``)."""

from __future__ import annotations

import json

import pytest
from conftest import ROOT

from spec_format import disputes, readers
from spec_format.validation import ValidateOptions, validate_config

EAGLE3 = json.loads((ROOT / "examples" / "qwen3-8b-eagle3" / "config.json").read_text())
SERVING = [
    r
    for r in readers.representatives()
    if r.startswith("vllm==") and readers.release(*r.split("==")).serves("eagle3")
]


def _c020(config: dict, engine: str) -> list[str]:
    report = validate_config(config, ValidateOptions(engines=(engine,)))
    return [f.message for f in report.findings if f.rule == "C020"]


@pytest.mark.parametrize("engine", SERVING)
def test_a_draft_every_release_loads_has_no_finding(engine):
    assert _c020(EAGLE3, engine) == []


@pytest.mark.parametrize("engine", SERVING)
def test_four_aux_layers_fail_where_fc_is_sized_for_three(engine):
    weights = disputes.parse_engine(engine).data["models"]["eagle3"]["weights"]
    hits = _c020({**EAGLE3, "eagle_aux_hidden_state_layer_ids": [1, 12, 23, 34]}, engine)
    if weights["fc_aux_layers"] == 3:
        assert len(hits) == 1 and "sizes fc for 3" in hits[0] and "takes 4" in hits[0]
        assert "read-not-executed" in hits[0]
    else:
        assert hits == []


@pytest.mark.parametrize("engine", SERVING)
def test_norm_modules_the_release_never_builds(engine):
    optional = disputes.parse_engine(engine).data["models"]["eagle3"]["weights"]["optional"]
    for flag, tensor in (
        ("norm_before_fc", "input_norm.weight"),
        ("fc_norm", "fc_norm.{i}.weight"),
    ):
        hits = _c020({**EAGLE3, flag: True}, engine)
        assert bool(hits) == (tensor not in optional), (engine, flag, hits)
        assert all(tensor in h for h in hits)


def test_a_member_release_uses_its_groups_facts():
    member = readers.release("vllm", "0.10.1.1")
    assert member.representative == "0.10.1"
    assert _c020({**EAGLE3, "fc_norm": True}, "vllm==0.10.1.1")
    assert not _c020({**EAGLE3, "fc_norm": True}, "vllm==0.33.0")
