"""Shared pieces of the ``specfmt inspect`` tests: the real Qwen3-8B shapes."""

from __future__ import annotations

import json

import pytest

from spec_format.testing.builder import build_checkpoint, qwen3_8b_eagle3_config

#: Qwen/Qwen3-8B's config.json (the values that fix its size, as published).
QWEN3_8B = {
    "architectures": ["Qwen3ForCausalLM"],
    "attention_bias": False,
    "attention_dropout": 0.0,
    "bos_token_id": 151643,
    "eos_token_id": 151645,
    "head_dim": 128,
    "hidden_act": "silu",
    "hidden_size": 4096,
    "initializer_range": 0.02,
    "intermediate_size": 12288,
    "max_position_embeddings": 40960,
    "max_window_layers": 36,
    "model_type": "qwen3",
    "num_attention_heads": 32,
    "num_hidden_layers": 36,
    "num_key_value_heads": 8,
    "rms_norm_eps": 1e-06,
    "rope_scaling": None,
    "rope_theta": 1000000,
    "sliding_window": None,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "transformers_version": "4.51.0",
    "use_cache": True,
    "use_sliding_window": False,
    "vocab_size": 151936,
}


@pytest.fixture(scope="session")
def qwen3_8b_draft(tmp_path_factory):
    """RedHatAI/Qwen3-8B-speculator.eagle3's shapes, sparse (1.9 GB of holes)."""
    path = tmp_path_factory.mktemp("qwen3-8b-eagle3")
    return build_checkpoint(path, qwen3_8b_eagle3_config(), data="sparse").path


@pytest.fixture(scope="session")
def qwen3_8b_config(tmp_path_factory):
    """A directory holding only Qwen3-8B's config.json."""
    path = tmp_path_factory.mktemp("qwen3-8b")
    (path / "config.json").write_text(json.dumps(QWEN3_8B, indent=2))
    return path


@pytest.fixture
def inspect_json(cli):
    """Run ``specfmt inspect ... --format json``; return (exit code, parsed output)."""

    def run(*args):
        result = cli("inspect", *args, "--format", "json")
        assert result.exit_code == 0, result.output
        return json.loads(result.output)

    return run
