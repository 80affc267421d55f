"""Reading --verifier: files, directories, multimodal text configs, and what is refused."""

from __future__ import annotations

import json

import pytest

from spec_format.base.errors import UsageError
from spec_format.parsers.verifier import load_verifier


def write(tmp_path, doc, name="config.json"):
    path = tmp_path / name
    path.write_text(json.dumps(doc) if not isinstance(doc, str) else doc)
    return path


def test_a_directory_or_its_config_json(tmp_path):
    write(
        tmp_path,
        {
            "architectures": ["Qwen3ForCausalLM"],
            "hidden_size": 4096,
            "num_hidden_layers": 36,
            "vocab_size": 151936,
        },
    )
    for path in (tmp_path, tmp_path / "config.json"):
        info = load_verifier(path)
        assert (info.hidden_size, info.num_hidden_layers, info.vocab_size) == (4096, 36, 151936)
        assert info.architectures == ["Qwen3ForCausalLM"] and info.text_key is None


@pytest.mark.parametrize("key", ["text_config", "llm_config", "language_config"])
def test_multimodal_configs_are_read_through_their_text_config(tmp_path, key):
    write(
        tmp_path,
        {
            "architectures": ["Gemma4ForConditionalGeneration"],
            "vision_config": {"hidden_size": 1152},
            key: {"hidden_size": 5376, "num_hidden_layers": 60, "vocab_size": 262144},
        },
    )
    info = load_verifier(tmp_path)
    assert info.hidden_size == 5376 and info.text_key == key
    assert info.where("hidden_size") == f"{key}.hidden_size"
    assert info.architectures == ["Gemma4ForConditionalGeneration"]  # from the top level


def test_top_level_fills_what_the_text_config_lacks(tmp_path):
    write(tmp_path, {"vocab_size": 32064, "thinker_config": {"text_config": {"hidden_size": 3584}}})
    info = load_verifier(tmp_path)
    assert (info.hidden_size, info.vocab_size) == (3584, 32064)


def test_gpt2_style_names(tmp_path):
    write(tmp_path, {"n_embd": 768, "n_layer": 12, "n_head": 12, "vocab_size": 50257})
    info = load_verifier(tmp_path)
    assert (info.hidden_size, info.num_hidden_layers) == (768, 12)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no config.json"),
        ("{oops", "not a readable JSON"),
        ("[1, 2]", "not a JSON object"),
        (json.dumps({"speculators_model_type": "eagle3"}), "draft config"),
    ],
)
def test_unusable_verifiers_are_usage_errors(tmp_path, content, message):
    if content is not None:
        write(tmp_path, content)
    with pytest.raises(UsageError, match=message):
        load_verifier(tmp_path)
