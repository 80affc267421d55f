"""V017/V018 on inputs the rule cases do not cover: no or odd architectures, other engines."""

from __future__ import annotations

import json

import pytest

from spec_format.facts import reads
from spec_format.runner.validation import ValidateOptions, validate
from spec_format.testing.builder import tiny_config, tiny_verifier


def _findings(tmp_path, architectures, engines=("vllm==0.33.0",), model_type="eagle3"):
    tmp_path.mkdir(parents=True, exist_ok=True)
    draft = tmp_path / "draft.json"
    draft.write_text(json.dumps(tiny_config(model_type)), encoding="utf-8")
    verifier = tmp_path / "verifier"
    verifier.mkdir()
    config = tiny_verifier()
    if architectures is None:
        config.pop("architectures")
    else:
        config["architectures"] = architectures
    (verifier / "config.json").write_text(json.dumps(config), encoding="utf-8")
    report = validate([draft], ValidateOptions(verifier=str(verifier), engines=engines))
    return [f for f in report.files[0].findings if f.rule in ("V017", "V018")]


@pytest.mark.parametrize("architectures", [None, [], "LlamaForCausalLM", [None, 3]])
def test_no_usable_architecture_is_no_finding(tmp_path, architectures):
    assert _findings(tmp_path, architectures) == []


def test_the_first_architecture_the_registry_knows_decides(tmp_path):
    """vLLM picks the first architecture its registry supports: an unknown one before it
    does not make the pairing unknown."""
    assert _findings(tmp_path, ["MyLabForCausalLM", "Qwen3ForCausalLM"]) == []
    found = _findings(tmp_path / "b", ["MyLabForCausalLM", "Qwen2MoeForCausalLM"])
    assert [f.rule for f in found] == ["V017"]


def test_a_type_without_aux_hidden_states_is_not_checked(tmp_path):
    assert "mtp" not in reads.AUX_TYPES
    assert _findings(tmp_path, ["Qwen2MoeForCausalLM"], model_type="mtp") == []


def test_no_named_engine_is_no_finding(tmp_path):
    assert _findings(tmp_path, ["Qwen2MoeForCausalLM"], engines=()) == []


def test_the_first_release_that_can_is_named(tmp_path):
    first = reads.first_serving("eagle3", "Qwen2ForCausalLM")
    assert first is not None and first != "vllm==0.10.1"
    found = _findings(tmp_path, ["Qwen2ForCausalLM"], engines=("vllm==0.10.1",))
    assert [f.rule for f in found] == ["V017"] and first in found[0].message
