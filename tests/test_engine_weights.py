"""C020: what a named vLLM release's EAGLE-3 drafter can load (reader table ``weights``)."""

from __future__ import annotations

import json

import pytest
from conftest import ROOT

from spec_format.facts import disputes, readers
from spec_format.facts.engine_load import holds, predict
from spec_format.runner.validation import ValidateOptions, validate, validate_config
from spec_format.testing.builder import build_checkpoint, tiny_config

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
        assert weights["status"] in hits[0]
    else:
        assert hits == []


@pytest.mark.parametrize("engine", SERVING)
def test_four_aux_layers_on_qwen3_layers_load_where_that_class_sizes_fc_by_the_ids(engine):
    """0.24 on: the Qwen3-layer EAGLE-3 class sizes fc from the aux layer ids (per_class),
    the Llama-layer one for 3; before 0.24 both families build the Llama class."""
    weights = disputes.parse_engine(engine).data["models"]["eagle3"]["weights"]
    qwen3 = {**EAGLE3["transformer_layer_config"], "model_type": "qwen3"}
    config = {**EAGLE3, "transformer_layer_config": qwen3}
    config["eagle_aux_hidden_state_layer_ids"] = [1, 12, 23, 34]
    cls = weights["classes"]["qwen3"]
    hits = _c020(config, engine)
    if cls == "Eagle3Qwen3ForCausalLM":
        assert weights["per_class"][cls]["fc_aux_layers"] == "eagle_aux_hidden_state_layer_ids"
        assert hits == []
        # the Llama-layer class of the same release still sizes fc for 3
        llama = {**config, "transformer_layer_config": EAGLE3["transformer_layer_config"]}
        assert any("sizes fc for 3" in h for h in _c020(llama, engine))
    else:
        # (and their Llama layers build no q_norm/k_norm: the other hits)
        assert any("fc.weight takes 4" in h and "sizes fc for 3" in h for h in hits)


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
        assert all(tensor.split("{")[0] in h for h in hits)


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


# -- with the checkpoint's tensors (executed blocks: dropped tensors, layer norms) ---------


def _c020_dir(tmp_path, engine: str, overrides: dict | None = None, deep: bool = True, **kw):
    config = tiny_config("eagle3", overrides)
    build_checkpoint(tmp_path / "draft", config, **kw)
    report = validate(tmp_path / "draft", ValidateOptions(engines=(engine,), deep=deep))
    return [f for f in report.files[0].findings if f.rule in ("C020", "W025")]


QWEN3_LAYER = {"transformer_layer_config.model_type": "qwen3"}
QK = ("layers.0.self_attn.q_norm.weight", "layers.0.self_attn.k_norm.weight")


def test_a_qwen3_draft_0_33_builds_and_loads_reads_clean(tmp_path):
    assert (
        _c020_dir(tmp_path, "vllm==0.33.0", {"transformer_layer_config.model_type": "qwen3"}) == []
    )


def test_a_qwen3_draft_without_q_norm_is_left_at_initial_values(tmp_path):
    hits = _c020_dir(
        tmp_path, "vllm==0.33.0", {"transformer_layer_config.model_type": "qwen3"}, drop=QK
    )
    assert {h.severity.value for h in hits} == {"error"}
    assert sorted(QK) == sorted(h.message.split("has no ")[1].split(",")[0] for h in hits)
    assert all("initial value" in h.message and "qwen3 layers" in h.message for h in hits)
    assert all(h.pointer == "/transformer_layer_config/model_type" for h in hits)


def test_q_norm_on_a_llama_layer_fails_to_load(tmp_path):
    extra = {name: ("BF16", (32,)) for name in QK}
    hits = _c020_dir(tmp_path, "vllm==0.33.0", extra=extra)
    assert len(hits) == 2 and all("no such norm for llama layers" in h.message for h in hits)
    assert all("There is no module or parameter named" in h.message for h in hits)


def test_input_norm_the_release_skips_is_an_error_only_when_meant(tmp_path):
    """0.33 skips input_norm.weight unless it reads norm_before_fc as true."""
    stray = {"input_norm.weight": ("BF16", (192,))}
    assert _c020_dir(tmp_path / "a", "vllm==0.33.0", extra=stray) == []
    assert _c020_dir(tmp_path / "b", "vllm==0.33.0", {"norm_before_fc": True}) == []


def test_the_executed_prediction_names_skipped_and_initial_tensors():
    rel = readers.release("vllm", "0.33.0")
    weights = rel.data["models"]["eagle3"]["weights"]
    config = tiny_config("eagle3", {"transformer_layer_config.model_type": "qwen3"})
    names = {"fc.weight", "t2d", "d2t", "input_norm.weight", "layers.0.hidden_norm.weight"}
    load = predict(rel, weights, "eagle3", config, names)
    assert load.fails == [] and set(load.dropped) == {"t2d", "input_norm.weight"}
    assert set(load.initial) == set(QK)
    # a flag the reader passes on keeps the tensor, and the module is then built
    load = predict(rel, weights, "eagle3", {**config, "norm_before_fc": True}, names)
    assert set(load.dropped) == {"t2d"}


def test_qwen3_per_head_norms_across_releases():
    """Executed: 0.20 builds Llama layers for a Qwen3 draft (its q_norm/k_norm fail to load);
    0.25 and later build Eagle3Qwen3ForCausalLM, which loads them."""
    config = tiny_config("eagle3", QWEN3_LAYER)
    old = _c020(config, "vllm==0.20.0")
    assert len(old) == 2 and all("no such norm for qwen3 layers" in h for h in old)
    assert any("layers.0.self_attn.q_norm.weight" in h for h in old)
    assert "KeyError" in old[0] and "executed" in old[0]
    assert _c020(config, "vllm==0.25.0") == [] and _c020(config, "vllm==0.33.0") == []


def test_vocabulary_conditions_of_a_weights_block():
    """required_when/initial_when: reduced-vocab (0.30-0.34 DSpark) is a draft vocabulary below
    the layer config's, other-vocab (0.29) any other size; an unset one is the full vocabulary."""
    config = tiny_config("dspark")  # draft_vocab_size 64 of 256
    assert holds("reduced-vocab", config) and holds("other-vocab", config)
    for size, reduced, other in ((256, False, False), (300, False, True), (None, False, False)):
        edited = {**config, "draft_vocab_size": size}
        assert (holds("reduced-vocab", edited), holds("other-vocab", edited)) == (reduced, other)
    with pytest.raises(ValueError, match="unknown weights condition"):
        holds("larger-vocab", config)
