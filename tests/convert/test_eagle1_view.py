"""EAGLE-1 heads in their own layouts (spec_format/convert/eagle1_view.py): S004 names the
layout and what it lacks, and the verifier rules run on the format 0.4 config it would be.

The head is EAGLE-LLaMA3-Instruct-8B's (hidden 4096, fc [4096, 8192], one decoder layer
without input_layernorm, float16), written sparse; the verifiers are real configs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import spec_format
from spec_format import ValidateOptions
from spec_format.testing.builder import SINGLE_NAME, TensorData, write_safetensors
from tests.common import ROOT

VERIFIERS = ROOT / "tests" / "failures" / "verifiers"
H, FF, V, KV = 4096, 14336, 128256, 1024
LM = {
    "architectures": ["LlamaForCausalLM"],
    "hidden_act": "silu",
    "hidden_size": H,
    "intermediate_size": FF,
    "max_position_embeddings": 8192,
    "model_type": "llama",
    "num_attention_heads": 32,
    "num_hidden_layers": 1,
    "num_key_value_heads": 8,
    "rms_norm_eps": 1e-05,
    "rope_theta": 500000.0,
    "torch_dtype": "bfloat16",
    "vocab_size": V,
}


def head(prefix: str = "") -> dict[str, tuple[int, ...]]:
    shapes = {
        "fc.weight": (H, 2 * H),
        "embed_tokens.weight": (V, H),
        "layers.0.self_attn.q_proj.weight": (H, H),
        "layers.0.self_attn.k_proj.weight": (KV, H),
        "layers.0.self_attn.v_proj.weight": (KV, H),
        "layers.0.self_attn.o_proj.weight": (H, H),
        "layers.0.mlp.gate_proj.weight": (FF, H),
        "layers.0.mlp.up_proj.weight": (FF, H),
        "layers.0.mlp.down_proj.weight": (H, FF),
        "layers.0.post_attention_layernorm.weight": (H,),
    }
    return {prefix + k: v for k, v in shapes.items()}


def build(folder: Path, config: dict, shapes: dict[str, tuple[int, ...]]) -> Path:
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    tensors = {n: TensorData("BF16", s) for n, s in shapes.items()}
    write_safetensors(folder / SINGLE_NAME, tensors, {"format": "pt"})
    return folder


def verifier(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "config.json").write_bytes((VERIFIERS / f"{name}.json").read_bytes())
    return folder


def found(draft: Path, verifier: Path | None = None) -> dict[str, str]:
    options = ValidateOptions(verifier=str(verifier) if verifier else None)
    (report,) = spec_format.validate(draft, options).files
    return {f.rule: f.message for f in report.findings if f.severity.value != "note"}


def test_a_correct_head_is_named_and_nothing_else_is_said(tmp_path):
    """Its own verifier, bias and head present: S004 names the layout, no view finding."""
    shapes = head() | {"fc.bias": (H,), "lm_head.weight": (V, H)}
    draft = build(tmp_path / "draft", LM, shapes)
    got = found(draft, verifier(tmp_path, "Meta-Llama-3-8B-Instruct"))
    assert list(got) == ["S004"]
    assert got["S004"].startswith(
        "this is an EAGLE-1/2 draft (SafeAILab/SGLang EAGLE-1 head (fc fuses the embedding "
        "and the last hidden state)), not the speculators format: the speculators format "
        "held EAGLE-1 drafts only up to 0.4"
    )
    # the view's retirement and bookkeeping are not the draft's: not reported again
    assert "S003" not in got and "C011" not in got and "M004" not in got


def test_what_the_layout_lacks_is_said(tmp_path):
    draft = build(tmp_path / "draft", LM, head())
    message = found(draft)["S004"]
    assert "fc has no bias (fc.bias absent)" in message
    assert "no lm_head.weight" in message and "give it the verifier's lm_head.weight" in message


def test_a_tied_flag_without_a_head_of_its_own_is_said(tmp_path):
    """sgl-project/sglang#33964: SGLang aliases lm_head to the embedding, then replacing
    both with the verifier's fails; an untied config, or a head of its own, says nothing."""
    tied = LM | {"tie_word_embeddings": True}
    message = found(build(tmp_path / "tied", tied, head()))["S004"]
    assert "tie_word_embeddings is true, but the draft has no head of its own" in message
    for name, config, shapes in (
        ("untied", LM | {"tie_word_embeddings": False}, head()),
        ("own-head", tied, head() | {"lm_head.weight": (V, H)}),
    ):
        message = found(build(tmp_path / name, config, shapes))["S004"]
        assert "tie_word_embeddings is true" not in message


def test_the_verifier_rules_run_on_the_view(tmp_path):
    """A 4096-wide float16 head with 2048 positions beside the 70B FP8 target."""
    config = LM | {"max_position_embeddings": 2048, "torch_dtype": "float16"}
    draft = build(tmp_path / "draft", config, head() | {"fc.bias": (H,)})
    got = found(draft, verifier(tmp_path, "Meta-Llama-3.1-70B-Instruct-FP8"))
    assert {"S004", "V001", "V008", "V011"} <= set(got), got
    assert got["V001"].startswith("as converted: transformer_layer_config.hidden_size is 4096")
    assert "the verifier's hidden_size is 8192" in got["V001"]


@pytest.mark.parametrize("declared", [None, False, True])
def test_vllm_config_fc_bias_against_eagle_fc_bias(tmp_path, declared):
    config = {"model_type": "eagle", "model": LM}
    if declared is not None:
        config["eagle_fc_bias"] = declared
    shapes = head("model.") | {"model.fc.bias": (H,), "model.lm_head.weight": (V, H)}
    draft = build(tmp_path / "draft", config, shapes)
    message = found(draft)["S004"]
    assert "vLLM's EAGLE-1 config (model_type eagle, the model nested)" in message
    said = "model.fc.bias is in the weights but eagle_fc_bias is not true" in message
    assert said is (declared is not True)


def test_an_eagle3_head_and_a_plain_model_are_not_eagle1(tmp_path):
    plain = build(tmp_path / "plain", LM, {"embed_tokens.weight": (V, H)})
    assert "EAGLE-1" not in found(plain).get("S001", "") + found(plain).get("S004", "")
    eagle3 = head() | {"midlayer.self_attn.q_proj.weight": (H, 2 * H)}
    eagle3.pop("layers.0.self_attn.q_proj.weight")
    got = found(build(tmp_path / "eagle3", LM, eagle3))
    assert "EAGLE-1/2 draft" not in got.get("S004", "")
