"""S006 on a base model's checkpoint: the MTP layers its config declares are looked for
among its tensors (the config half is in tests/rules/cases/S006.json)."""

from __future__ import annotations

import json

import pytest

from spec_format import ValidateOptions, validate
from spec_format.testing.builder import TensorData, write_safetensors

QWEN = {
    "architectures": ["Qwen3NextForCausalLM"],
    "model_type": "qwen3_next",
    "hidden_size": 64,
    "num_hidden_layers": 4,
    "mtp_num_hidden_layers": 1,
    "vocab_size": 256,
}
GLM = {
    "architectures": ["Glm4MoeForCausalLM"],
    "model_type": "glm4_moe",
    "hidden_size": 64,
    "num_hidden_layers": 4,
    "num_nextn_predict_layers": 1,
    "vocab_size": 256,
}


def _checkpoint(tmp_path, config, names):
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "config.json").write_text(json.dumps(config))
    write_safetensors(tmp_path / "model.safetensors", {n: TensorData("BF16", (4,)) for n in names})
    return tmp_path


def _messages(path):
    report = validate([str(path)], ValidateOptions())
    return [f.message for f in report.files[0].findings if f.rule == "S006"]


@pytest.mark.parametrize(
    ("config", "names", "says"),
    [
        (QWEN, ["model.norm.weight"], "no mtp.* tensor"),
        (GLM, ["model.layers.3.input_layernorm.weight"], "no model.layers.4.* tensor"),
        (
            QWEN,
            [
                "mtp.fc.weight",
                "mtp.layers.0.input_layernorm.weight",
                "mtp.layers.1.input_layernorm.weight",
            ],
            "holds 2 MTP layers",
        ),
    ],
    ids=["mtp-prefix-missing", "nextn-layer-missing", "more-layers-than-declared"],
)
def test_weights_half_names_what_the_checkpoint_lacks(tmp_path, config, names, says):
    messages = _messages(_checkpoint(tmp_path, config, names))
    assert len(messages) == 2  # the config half, then the weights half
    assert says in messages[1]


@pytest.mark.parametrize(
    ("config", "names"),
    [
        (QWEN, ["mtp.fc.weight", "mtp.layers.0.input_layernorm.weight"]),
        (GLM, ["model.layers.4.eh_proj.weight"]),
    ],
    ids=["mtp-prefix-present", "nextn-layer-present"],
)
def test_weights_half_is_quiet_when_the_layers_are_there(tmp_path, config, names):
    assert len(_messages(_checkpoint(tmp_path, config, names))) == 1


def test_a_config_file_alone_gets_the_config_half_only(tmp_path):
    path = _checkpoint(tmp_path, GLM, [])
    (path / "model.safetensors").unlink()
    assert len(_messages(path / "config.json")) == 1


# -- a quantized base model whose MTP layer is stored unquantized (vllm-project/vllm#37667) --
MTP_LINEAR = {"model.layers.4.eh_proj.weight": TensorData("BF16", (64, 128))}
BACKBONE = {
    "model.layers.3.mlp.down_proj.weight": TensorData("U8", (64, 32)),
    "model.layers.3.mlp.down_proj.weight_scale": TensorData("U8", (64, 2)),
    "model.layers.4.enorm.weight": TensorData("BF16", (64,)),
}


def _quantized(tmp_path, quant, tensors):
    tmp_path.mkdir(parents=True, exist_ok=True)
    config = {**GLM, "quantization_config": quant}
    (tmp_path / "config.json").write_text(json.dumps(config))
    write_safetensors(tmp_path / "model.safetensors", {**BACKBONE, **tensors})
    return _messages(tmp_path)


@pytest.mark.parametrize(
    ("quant", "says"),
    [
        ({"quant_method": "quark", "exclude": ["lm_head"]}, "its exclude (lm_head) does not name"),
        ({"quant_method": "fp8"}, "it excludes nothing (exclude absent)"),
        (
            {"quant_method": "compressed-tensors", "ignore": ["lm_head", "re:.*gate$"]},
            'quantization_config.ignore ("model.layers.4.*")',
        ),
    ],
    ids=["quark-exclude", "nothing-excluded", "compressed-tensors-ignore"],
)
def test_an_unquantized_mtp_layer_the_quantization_does_not_exclude(tmp_path, quant, says):
    messages = _quantized(tmp_path, quant, MTP_LINEAR)
    assert len(messages) == 2 and "model.layers.4.*" in messages[1], messages
    assert says in messages[1] and "1 BF16 linear weight(s)" in messages[1]


@pytest.mark.parametrize(
    ("quant", "tensors"),
    [
        ({"quant_method": "quark", "exclude": ["lm_head", "model.layers.4.*"]}, MTP_LINEAR),
        (
            {"quant_method": "compressed-tensors", "ignore": ["re:model\\.layers\\.4\\."]},
            MTP_LINEAR,
        ),
        ({"quant_method": "quark", "exclude": ["model.layers.4"]}, MTP_LINEAR),
        (
            {"quant_method": "quark", "exclude": ["lm_head"]},
            {"model.layers.4.eh_proj.weight": TensorData("U8", (64, 64))},
        ),
        (
            {"quant_method": "quark", "exclude": ["lm_head"]},
            {**MTP_LINEAR, "model.layers.4.eh_proj.weight_scale": TensorData("BF16", (64,))},
        ),
        # a pattern whose backtracking explodes is not run: taken to exclude, at once
        ({"quant_method": "compressed-tensors", "ignore": ["re:(a|aa)*(x+)+$"]}, MTP_LINEAR),
    ],
    ids=[
        "excluded-glob",
        "excluded-regex",
        "excluded-module",
        "quantized-dtype",
        "with-scale",
        "hostile-regex",
    ],
)
def test_a_quantized_or_excluded_mtp_layer_is_quiet(tmp_path, quant, tensors):
    assert len(_quantized(tmp_path, quant, tensors)) == 1


# -- where the engines read the MTP layer count (schema/readers/reads/, mtp_n_predict) -------
#: Qwen3.6-35B-A3B as released: the MTP layer count only under text_config
QWEN35 = {
    "architectures": ["Qwen3_5MoeForConditionalGeneration"],
    "model_type": "qwen3_5_moe",
    "text_config": {
        "model_type": "qwen3_5_moe_text",
        "hidden_size": 2048,
        "num_hidden_layers": 40,
        "mtp_num_hidden_layers": 1,
        "vocab_size": 248320,
    },
}
#: the first covered release that reads it there (vllm#55369); the one before does not
FIXED, BROKEN = "vllm==0.30.0", "vllm==0.29.0"


def _unread(path, engine):
    report = validate([str(path)], ValidateOptions(engines=(engine,)))
    return [f for f in report.files[0].findings if "resolves n_predict" in f.message]


def test_a_count_only_under_text_config_is_unread_before_the_fix(tmp_path):
    path = _checkpoint(tmp_path / "m", QWEN35, ["mtp.fc.weight"])
    (found,) = _unread(path, BROKEN)
    assert found.severity.value == "error" and found.pointer == "/text_config/mtp_num_hidden_layers"
    assert found.message.startswith(
        f"{BROKEN} reads the MTP layer count of a 'qwen3_5_moe' model from the top-level "
        "mtp_num_hidden_layers, and this config states it only as "
        "text_config.mtp_num_hidden_layers: 1"
    )
    assert f"serve it with {FIXED} or later" in found.message
    assert _unread(path, FIXED) == []


def test_following_the_advice_removes_the_finding(tmp_path):
    """The written value: the count at the top level, where the old release reads it."""
    config = {**QWEN35, "mtp_num_hidden_layers": 1}
    path = _checkpoint(tmp_path / "m", config, ["mtp.fc.weight"])
    assert _unread(path, BROKEN) == []


def test_a_model_type_the_release_does_not_rewrite_is_not_judged(tmp_path):
    config = {**QWEN35, "model_type": "some_future_vlm"}
    path = _checkpoint(tmp_path / "m", config, ["mtp.fc.weight"])
    assert _unread(path, BROKEN) == []
