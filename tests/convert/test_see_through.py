"""validate sees a third-party draft through convert (issue 35 part 5): S004 says what
convert needs or why it refuses, and every rule layer runs on the converted view, its
findings marked "as converted" and said of the source files (spec_format/runner/converted.py)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

import spec_format
from spec_format import ValidateOptions
from spec_format.testing import builder
from spec_format.testing.sources import (
    build_zlab_dflash,
    tiny_dflash_verifier_config,
    zlab_dflash_config,
)

IDS = {"eagle_aux_hidden_state_layer_ids": [2, 4, 5]}  # fit the tiny 8-layer verifier


def findings(path, verifier=None, **kw):
    options = ValidateOptions(verifier=str(verifier) if verifier else None, **kw)
    (report,) = spec_format.validate(path, options).files
    return report.findings


def rules(found) -> list[tuple[str, str, str | None, str | None]]:
    return sorted((f.rule, f.severity.value, f.pointer or None, f.tensor) for f in found)


def s004(found) -> str:
    (f,) = [f for f in found if f.rule == "S004"]
    return f.message


@pytest.fixture
def zlab_verifier(tmp_path) -> Path:
    path = tmp_path / "zlab-verifier"
    builder.build_verifier(path, tiny_dflash_verifier_config())
    return path


# -- each convert source's fixtures, seen through --------------------------------------------
def test_safeailab_that_converts_says_so_and_nothing_else(made):
    found = findings(made.source("src", IDS), made.verifier)
    assert rules(found) == [("S004", "error", None, None)]
    message = s004(found)
    assert "SafeAILab/EAGLE-3" in message
    src = made.source("src", IDS)
    assert f"`specfmt convert {src} -o OUT --verifier {made.verifier}" in message
    assert "` converts it; the findings marked 'as converted'" in message
    # the tiny source's 2048 positions are raised to the verifier's range: said
    assert "max_position_embeddings: the source's 2048" in message


def test_source_values_a_reader_takes_as_they_are_are_said(made):
    """The verdict says what convert replaces but SGLang or the training library would act
    on: another vocab_size than the verifier's (SpecForge#537), a tied flag with a head of
    draft_vocab_size rows, a base-model class in architectures (sglang#33966)."""
    odd = {**IDS, "vocab_size": 1001, "tie_word_embeddings": True}
    base = {"architectures": ["LlamaForCausalLM"]}
    src = made.source("src", odd | base, drop=("t2d", "d2t"))  # maps sized for 1000
    message = s004(findings(src, made.verifier))
    assert "vocab_size: the source's 1001 (vocab_size) is not the verifier vocabulary" in message
    assert "tie_word_embeddings: the source's true (tie_word_embeddings) is written false" in (
        message
    )
    assert "architectures: the source names LlamaForCausalLM (architectures)" in message
    plain = {**IDS, "vocab_size": 1000, "tie_word_embeddings": False}
    message = s004(findings(made.source("ok", plain), made.verifier))
    for said in ("vocab_size:", "tie_word_embeddings:", "architectures:"):
        assert said not in message


def test_aux_ids_in_the_output_of_layer_numbering_are_said(made):
    """Ids starting at 1 are SpecForge's and ModelOpt's output-of-layer numbering (SGLang
    shifts them, sglang#25454); vLLM reads them one layer early, and convert copies them."""
    message = s004(
        findings(made.source("src", {"eagle_aux_hidden_state_layer_ids": [1, 4, 5]}), made.verifier)
    )
    assert "eagle_aux_hidden_state_layer_ids: the source's [1, 4, 5] start at 1" in message
    assert "--aux-layer-ids 2,5,6" in message
    message = s004(findings(made.source("ok", IDS), made.verifier))
    assert "start at 1" not in message


def test_keys_only_under_eagle_config_name_the_vllm_releases_that_miss_them(made):
    """vLLM 0.18.0-0.21.0 reads norm_before_fc only at the top level, 0.11.1-0.21.0 the aux
    layer ids; convert moves them there, the checkpoint served as it is loses them."""
    nested = {"eagle_config": {**IDS, "norm_before_fc": True}}
    message = s004(findings(made.source("src", nested), made.verifier))
    assert "eagle_config.norm_before_fc: True only under eagle_config; vLLM 0.18.0-0.21.0" in (
        message
    )
    assert "eagle_config.eagle_aux_hidden_state_layer_ids: [2, 4, 5] only under" in message
    top = {**IDS, "norm_before_fc": False}
    assert "only under eagle_config" not in s004(findings(made.source("ok", top), made.verifier))


def test_zlab_dflash_that_converts_says_so_and_nothing_else(tmp_path, zlab_verifier):
    path = build_zlab_dflash(tmp_path / "z", zlab_dflash_config()).path
    found = findings(path, zlab_verifier)
    assert rules(found) == [("S004", "error", None, None)]
    assert "z-lab DFlash" in s004(found) and "converts it" in s004(found)


def test_converted_view_finds_the_cause_and_points_at_the_source_key(made):
    # AngelSlim-style: the draft's head_dim differs from the verifier's (Tencent/AngelSlim#5)
    shapes = {"hd": 8}
    src = made.source("src", {**IDS, "head_dim": 8}, sizes={**_tiny(), **shapes})
    found = findings(src, made.verifier)
    assert rules(found) == [
        ("S004", "error", None, None),
        ("V005", "warning", "/head_dim", None),
    ]
    (v005,) = [f for f in found if f.rule == "V005"]
    assert v005.message.startswith("as converted: transformer_layer_config.head_dim is 8")
    assert v005.file == str(src / "config.json")


def test_converted_tensor_findings_name_the_source_tensor(made):
    # one aux id more than fc.weight takes: convert refuses, the view reports the shape
    src = made.source("src", {"eagle_aux_hidden_state_layer_ids": [1, 4, 5, 6]})
    found = findings(src, made.verifier)
    assert "fc.weight [64, 192] takes 192 inputs, but 4 aux layer ids" in s004(found)
    assert rules(found) == [("S004", "error", None, None)]


def test_a_wrong_size_is_found_by_its_cause_on_the_converted_view(made):
    src = made.source("src", {**IDS, "head_dim": 8})  # shapes say 16: the layer's shapes break
    found = findings(src, made.verifier)
    (w024,) = [f for f in found if f.rule == "W024"]  # the cause, not four shape findings
    assert "head_dim is 8, but the weights were written for 16" in w024.message
    for f in found:
        if f.rule != "S004":
            assert f.message.startswith("as converted: ")


def test_a_renamed_tensor_keeps_its_source_name():
    from spec_format.base.report import Finding, Severity
    from spec_format.runner.converted import _on_source
    from spec_format.runner.source_readers import SeenThrough

    seen = SeenThrough(
        kind="safeailab-eagle3",
        description="",
        needs="",
        origins={
            "layers.0.self_attn.q_proj.weight": ("midlayer.self_attn.q_proj.weight",),
            "embed_tokens.weight": ("embed_tokens.weight",),
        },
    )
    shape = Finding("W003", "tensor-shape", Severity.ERROR, "q_proj is [2, 2]", "model.safetensors")
    renamed = _on_source(replace(shape, tensor="layers.0.self_attn.q_proj.weight"), seen, "c")
    assert renamed.tensor == "midlayer.self_attn.q_proj.weight"
    assert renamed.message.endswith("(source tensor midlayer.self_attn.q_proj.weight)")
    kept = _on_source(replace(shape, tensor="embed_tokens.weight"), seen, "c")
    assert kept.tensor == "embed_tokens.weight" and "source tensor" not in kept.message


def test_the_final_layer_tap_is_reported_on_the_source_list(made):
    # an aux id equal to the verifier's layer count (sgl-project/sglang#32334)
    found = findings(
        made.source(
            "src", {"eagle_config": {**IDS, "eagle_aux_hidden_state_layer_ids": [1, 4, 8]}}
        ),
        made.verifier,
    )
    (v004,) = [f for f in found if f.rule == "V004"]
    assert v004.pointer == "/eagle_config/eagle_aux_hidden_state_layer_ids/2"


def test_a_config_file_alone_is_seen_through(made):
    found = findings(made.source("src", {**IDS, "head_dim": 8}) / "config.json", made.verifier)
    assert rules(found) == [("S004", "error", None, None), ("V005", "warning", "/head_dim", None)]


def test_the_cli_says_the_same(made, cli):
    src = made.source("src", {**IDS, "head_dim": 8})
    result = cli("validate", src / "config.json", "--verifier", made.verifier)
    assert result.exit_code == 1
    assert "as converted: transformer_layer_config.head_dim is 8" in result.output


# -- what convert would refuse is named ------------------------------------------------------
def test_no_verifier_says_convert_needs_one(made):
    found = findings(made.source("src", IDS))
    assert rules(found) == [("S004", "error", None, None)]
    assert "would refuse it: --verifier is required" in s004(found)


def test_missing_aux_ids_are_named_and_the_view_takes_the_readers_default(made):
    found = findings(made.source("src"), made.verifier)
    message = s004(found)
    assert "would refuse it: no eagle_aux_hidden_state_layer_ids" in message
    assert "check the rest with aux layer ids [2, 4, 5] (the readers' default" in message
    assert rules(found) == [("S004", "error", None, None)]


def test_an_unknown_tensor_is_named_and_left_out_of_the_view(made):
    src = made.source("src", IDS, extra={"midlayer.extra.weight": ("float", (64,))})
    found = findings(src, made.verifier)
    message = s004(found)
    assert "would refuse it: tensor midlayer.extra.weight would be layers.0.extra.weight" in message
    assert "midlayer.extra.weight left out" in message
    assert rules(found) == [("S004", "error", None, None)]


def test_zlab_without_a_mask_token_names_it(tmp_path, zlab_verifier):
    config = zlab_dflash_config({"dflash_config": {"target_layer_ids": [1, 3, 5]}})
    found = findings(build_zlab_dflash(tmp_path / "z", config).path, zlab_verifier)
    assert "would refuse it: dflash_config.mask_token_id: missing" in s004(found)
    assert rules(found) == [("S004", "error", None, None)]


# -- broken third-party files: a finding, never a traceback ----------------------------------
BROKEN = {
    "eagle_config-a-list": {"eagle_config": []},
    "aux-ids-a-string": {"eagle_aux_hidden_state_layer_ids": "1,4,5"},
    "aux-ids-nested-junk": {"eagle_config": {"eagle_aux_hidden_state_layer_ids": [None, {}]}},
    "hidden-size-a-string": {**IDS, "hidden_size": "64"},
    "heads-zero": {**IDS, "num_attention_heads": 0},
    "rope-scaling-a-list": {**IDS, "rope_scaling": [1, 2]},
    "huge-number": {**IDS, "max_position_embeddings": 10**400},  # written as 1e400
    "draft-vocab-negative": {**IDS, "draft_vocab_size": -3},
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_broken_safeailab_config_gives_findings_not_a_bug(made, case):
    path = made.source("src", IDS)  # a valid checkpoint, then its config broken
    config = json.loads((path / "config.json").read_text())
    config.update(BROKEN[case])
    (path / "config.json").write_text(json.dumps(config).replace("1" + "0" * 400, "1e400"))
    found = findings(path, made.verifier)
    assert "I012" not in {f.rule for f in found}, [f.message for f in found]
    assert "S004" in {f.rule for f in found}


ZLAB_BROKEN = {
    "dflash_config-a-string": {"dflash_config": "x"},
    "target-ids-junk": {"dflash_config": {"mask_token_id": 255, "target_layer_ids": ["a"]}},
    "block-size-none": {"block_size": None},
    "vocab-a-list": {"vocab_size": [256]},
}


@pytest.mark.parametrize("case", sorted(ZLAB_BROKEN))
def test_broken_zlab_config_gives_findings_not_a_bug(tmp_path, zlab_verifier, case):
    path = build_zlab_dflash(tmp_path / "z", zlab_dflash_config()).path
    config = json.loads((path / "config.json").read_text())
    config.update(ZLAB_BROKEN[case])
    (path / "config.json").write_text(json.dumps(config))
    found = findings(path, zlab_verifier)
    assert "I012" not in {f.rule for f in found}, [f.message for f in found]
    assert "S004" in {f.rule for f in found}


def test_truncated_weights_of_a_third_party_draft(made):
    src = made.source("src", IDS)
    weights = src / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:200])
    found = findings(src, made.verifier)
    assert "I012" not in {f.rule for f in found}
    assert "S004" in {f.rule for f in found}


def _tiny():
    from spec_format.testing.safeailab import TINY

    return dict(TINY)


def test_vocabulary_maps_are_read_on_the_source_layout_with_deep(tmp_path):
    """verl-project/verl-SpeCo#67: a full-vocabulary SpecForge-layout draft whose d2t is the
    default arange; with --deep the view's D rules read the source's d2t (the engines read
    it as offsets whenever it is there), and the advice (a d2t of zeros) clears them."""
    from tests.failures import corpus

    draft, verifier = corpus.build_report("52-verl-speco-67", tmp_path / "a")
    found = findings(draft, verifier, deep=True)
    (d002,) = [f for f in found if f.rule == "D002"]
    assert d002.tensor == "d2t" and d002.message.startswith(
        "as converted: 75968 draft ids map outside [0, 151936): d2t[75968] = 75968 sends draft "
        "id 75968 to verifier id 151936; d2t is 0, 1, ..., the identity written as ids"
    )
    assert d002.message.endswith("needs a d2t of zeros")
    assert not [f for f in findings(draft, verifier) if f.rule.startswith("D")]
    fixed, verifier = corpus.build_report("52-verl-speco-67", tmp_path / "b", d2t=None)
    assert not [f for f in findings(fixed, verifier, deep=True) if f.rule.startswith("D")]
