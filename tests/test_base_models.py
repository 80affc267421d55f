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
