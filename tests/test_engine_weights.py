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
    """A module is built when the model code has it and the config reader passes its flag."""
    rel = disputes.parse_engine(engine)
    optional = rel.data["models"]["eagle3"]["weights"]["optional"]
    pairs = (("norm_before_fc", "input_norm.weight"), ("fc_norm", "fc_norm.{i}.weight"))
    for flag, tensor in pairs:
        config = {**EAGLE3, flag: True}
        passed = rel.reading("eagle3", flag, config).value is True
        hits = _c020(config, engine)
        assert bool(hits) == (tensor not in optional or not passed), (engine, flag, hits)
        assert all(tensor in h for h in hits)


def test_the_model_builds_fc_norm_but_the_reader_drops_the_flag():
    """0.22-0.24: llama_eagle3.py builds fc_norm under the flag, the config reader ignores it."""
    hits = _c020({**EAGLE3, "fc_norm": True}, "vllm==0.23.0")
    assert hits and "never passes on" in hits[0]
    assert not _c020({**EAGLE3, "fc_norm": True}, "vllm==0.25.0")


def test_a_member_release_uses_its_groups_facts():
    member = readers.release("vllm", "0.10.1.1")
    assert member.representative == "0.10.1"
    assert _c020({**EAGLE3, "fc_norm": True}, "vllm==0.10.1.1")
    assert not _c020({**EAGLE3, "fc_norm": True}, "vllm==0.33.0")
