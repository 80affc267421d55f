"""One verifier loader for every command: validate, migrate and fix see the same verifier.

A multimodal verifier keeps its language model under one of several keys; each command must
find the same layer count there and the checkpoint's own architectures at the top level.
"""

from __future__ import annotations

import json

import pytest

from spec_format.parsers.verifier import TEXT_CONFIG_KEYS, load_verifier
from spec_format.testing.builder import DELETE, tiny_config

LAYERS = 28


def _nest(key: str, text: dict) -> dict:
    top: dict = {"architectures": ["Qwen2_5_VLForConditionalGeneration"], "model_type": "x"}
    node = top
    *parents, last = key.split(".")
    for part in parents:
        node = node.setdefault(part, {})
    node[last] = text
    return top


@pytest.fixture(params=TEXT_CONFIG_KEYS)
def multimodal_verifier(request, tmp_path):
    text = {
        "architectures": ["Qwen2ForCausalLM"],
        "hidden_size": 64,
        "num_hidden_layers": LAYERS,
        "vocab_size": 256,
    }
    folder = tmp_path / "verifier"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(_nest(request.param, text)))
    return folder


def test_loader_reads_text_config_and_top_level_architectures(multimodal_verifier):
    info = load_verifier(multimodal_verifier)
    assert info.num_hidden_layers == LAYERS
    assert info.architectures == ["Qwen2_5_VLForConditionalGeneration"]


def test_fix_and_migrate_see_the_verifier_validate_sees(cli, write_config, multimodal_verifier):
    draft = tiny_config(
        "eagle3",
        {
            "eagle_aux_hidden_state_layer_ids": DELETE,
            "speculators_config.verifier.architectures": [],
        },
    )
    path = write_config(draft)
    out = path.parent / "fixed.json"
    fixed = cli("fix", path, "--verifier", multimodal_verifier, "-o", out)
    assert fixed.exit_code == 0, fixed.output
    doc = json.loads(out.read_text())
    # the layers the verifier's readers would tap are named (R006), never written as a guess
    assert "eagle_aux_hidden_state_layer_ids" not in doc
    assert f"--aux-layer-ids 2,{LAYERS // 2},{LAYERS - 3}" in " ".join(fixed.output.split())
    assert doc["speculators_config"]["verifier"]["architectures"] == [
        "Qwen2_5_VLForConditionalGeneration"
    ]

    out = path.parent / "migrated.json"
    migrated = cli("migrate", path, "--to", "0.9", "--verifier", multimodal_verifier, "-o", out)
    assert migrated.exit_code == 0, migrated.output
    doc = json.loads(out.read_text())
    assert doc["speculators_config"]["verifier"]["architectures"] == [
        "Qwen2_5_VLForConditionalGeneration"
    ]
