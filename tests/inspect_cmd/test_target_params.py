"""Target cost from the verifier: dense and mixture-of-experts configs, headers, hf://."""

from __future__ import annotations

import json
import math

import pytest

from spec_format.base.errors import UsageError
from spec_format.inspect.target_params import target_params
from spec_format.testing.builder import build_checkpoint, build_verifier, tiny_config

#: Qwen/Qwen3-30B-A3B's config.json (published: 30.5B parameters, 3.3B activated).
QWEN3_30B_A3B = {
    "architectures": ["Qwen3MoeForCausalLM"],
    "attention_bias": False,
    "decoder_sparse_step": 1,
    "head_dim": 128,
    "hidden_size": 2048,
    "intermediate_size": 6144,
    "max_position_embeddings": 40960,
    "mlp_only_layers": [],
    "model_type": "qwen3_moe",
    "moe_intermediate_size": 768,
    "norm_topk_prob": True,
    "num_attention_heads": 32,
    "num_experts": 128,
    "num_experts_per_tok": 8,
    "num_hidden_layers": 48,
    "num_key_value_heads": 4,
    "tie_word_embeddings": False,
    "vocab_size": 151936,
}

#: openai/gpt-oss-20b and -120b: the values that fix their size.
GPT_OSS = {
    "architectures": ["GptOssForCausalLM"],
    "attention_bias": True,
    "experts_per_token": 4,
    "head_dim": 64,
    "hidden_size": 2880,
    "intermediate_size": 2880,
    "model_type": "gpt_oss",
    "num_attention_heads": 64,
    "num_experts_per_tok": 4,
    "num_key_value_heads": 8,
    "sliding_window": 128,
    "tie_word_embeddings": False,
    "vocab_size": 201088,
}
GPT_OSS_20B = {**GPT_OSS, "num_hidden_layers": 24, "num_local_experts": 32}
GPT_OSS_120B = {**GPT_OSS, "num_hidden_layers": 36, "num_local_experts": 128}


def write(tmp_path, config, name="verifier"):
    folder = tmp_path / name
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config))
    return folder


def test_qwen3_moe_reports_active_parameters_with_the_formula(tmp_path):
    t = target_params(write(tmp_path, QWEN3_30B_A3B))
    assert t.total == 30_532_122_624  # 30.5B
    assert t.per_token == 3_353_032_704  # 3.3B activated
    assert t.experts.count == 128 and t.experts.routed == 8
    assert "active parameters per token = total - (1 - k/E) x expert parameters" in t.formula
    assert "num_experts_per_tok" in t.formula and "num_experts" in t.formula


@pytest.mark.parametrize(
    ("config", "total_b", "active_b"), [(GPT_OSS_20B, 20.91, 3.61), (GPT_OSS_120B, 116.83, 5.13)]
)
def test_gpt_oss_matches_the_published_counts(tmp_path, config, total_b, active_b):
    t = target_params(write(tmp_path, config))
    assert round(t.total / 1e9, 2) == total_b
    # the model card's active count leaves out the unembedding; ours keeps it, since a
    # decode step reads the whole lm_head
    unembedding = config["vocab_size"] * config["hidden_size"]
    assert round((t.per_token - unembedding) / 1e9, 2) == active_b
    assert t.experts.count_key == "num_local_experts"


def test_moe_from_headers_matches_the_config_formula(tmp_path):
    small = {
        **QWEN3_30B_A3B,
        "hidden_size": 64,
        "head_dim": 16,
        "num_hidden_layers": 3,
        "num_experts": 8,
        "num_experts_per_tok": 2,
        "moe_intermediate_size": 32,
        "vocab_size": 512,
    }
    built = build_verifier(tmp_path / "moe", small)
    from_header = target_params(built.path)
    from_config = target_params(built.path / "config.json")
    assert from_header.source == "header" and from_config.source == "config"
    assert (
        from_header.total
        == from_config.total
        == sum(math.prod(s) for _, s in built.tensors.values())
    )
    assert from_header.per_token == from_config.per_token < from_header.total
    assert "tensors named *.experts.*" in from_header.formula


def test_dense_families_and_ties(tmp_path):
    llama = {
        "model_type": "llama",
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "vocab_size": 128256,
        "tie_word_embeddings": False,
    }
    assert target_params(write(tmp_path, llama, "l31")).total == 8_030_261_248  # Llama-3.1-8B
    tied = {**llama, "tie_word_embeddings": True}
    assert target_params(write(tmp_path, tied, "tied")).total == 8_030_261_248 - 128256 * 4096


def test_multimodal_text_config_is_counted(tmp_path):
    doc = {"architectures": ["X"], "model_type": "wrapper", "text_config": dict(QWEN3_30B_A3B)}
    assert target_params(write(tmp_path, doc)).per_token == 3_353_032_704


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"model_type": "gemma3", "hidden_size": 8}, "not a decoder family specfmt can count"),
        ({**QWEN3_30B_A3B, "hidden_size": "2048"}, "hidden_size must be a non-negative integer"),
        ({**QWEN3_30B_A3B, "num_experts_per_tok": 200}, "is not between 1 and"),
        (
            {k: v for k, v in QWEN3_30B_A3B.items() if k != "num_experts_per_tok"},
            "says how many a token uses",
        ),
    ],
)
def test_unusable_verifier_configs_are_usage_errors(tmp_path, config, message):
    with pytest.raises(UsageError, match=message):
        target_params(write(tmp_path, config))


def test_broken_verifier_headers_are_refused(tmp_path):
    built = build_verifier(
        tmp_path / "v",
        {
            **QWEN3_30B_A3B,
            "num_hidden_layers": 1,
            "hidden_size": 8,
            "head_dim": 4,
            "num_experts": 2,
            "num_experts_per_tok": 1,
            "moe_intermediate_size": 4,
            "vocab_size": 16,
        },
    )
    shard = built.files[0]
    shard.write_bytes(shard.read_bytes()[:-3])
    with pytest.raises(UsageError, match="cannot be counted"):
        target_params(built.path)


def test_remote_verifier_headers(tmp_path, monkeypatch):
    pytest.importorskip("huggingface_hub")
    import huggingface_hub.constants

    from tests.weights.fake_hub import FakeHub, running

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    small = {
        **QWEN3_30B_A3B,
        "hidden_size": 64,
        "head_dim": 16,
        "num_hidden_layers": 2,
        "num_experts": 4,
        "num_experts_per_tok": 2,
        "moe_intermediate_size": 32,
        "vocab_size": 300,
    }
    built = build_verifier(tmp_path / "v", small, shards=2)
    draft = build_checkpoint(tmp_path / "d", tiny_config("eagle3"))
    with running(FakeHub()) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
        hub.add("org/target", built.path)
        hub.add("org/draft", draft.path)
        remote = target_params("hf://org/target")
        from spec_format.inspect.run import InspectOptions, run_inspect

        freq = tmp_path / "counts.json"
        freq.write_text(json.dumps(list(range(256))))
        options = InspectOptions("hf://org/draft", verifier="hf://org/target", token_freq=freq)
        report = run_inspect(options)
    local = target_params(built.path)
    assert remote.source == "header" and remote.per_token == local.per_token
    assert report.target.per_token == local.per_token
    assert report.checkpoint == "hf://org/draft"
    mine = run_inspect(InspectOptions(str(draft.path), token_freq=freq))
    assert report.draft.compute == mine.draft.compute > 0
    assert report.coverage.out_of_draft_mass == mine.coverage.out_of_draft_mass > 0  # t2d by range


def test_dense_layers_of_a_sparse_schedule_use_the_dense_mlp(tmp_path):
    every = target_params(write(tmp_path, QWEN3_30B_A3B, "every"))
    half = target_params(write(tmp_path, {**QWEN3_30B_A3B, "decoder_sparse_step": 2}, "half"))
    H, E, I_e, I_d = 2048, 128, 768, 6144
    per_moe_layer = H * E + E * 3 * H * I_e
    assert half.total == every.total - 24 * per_moe_layer + 24 * 3 * H * I_d
    assert "MLP in 24 dense layers + router + 128 experts in 24 layers" in half.formula
    assert half.per_token == every.per_token - 24 * (H * E + 8 * 3 * H * I_e) + 24 * 3 * H * I_d


def test_a_verifier_that_does_not_fit_the_draft_is_noted(cli, tmp_path):
    draft = build_checkpoint(tmp_path / "d", tiny_config("eagle3")).path  # H = 64, V = 256
    verifier = write(tmp_path, QWEN3_30B_A3B)
    result = cli("inspect", draft, "--verifier", verifier)
    assert result.exit_code == 0, result.output
    assert "the verifier's hidden_size is 2,048 but the draft expects a hidden size of 64" in (
        result.output
    )
    assert "the verifier's vocab_size is 151,936" in result.output


def test_inspect_reports_active_parameters_and_names_the_formula(cli, tmp_path):
    draft = build_checkpoint(tmp_path / "d", tiny_config("eagle3")).path
    result = cli("inspect", draft, "--verifier", write(tmp_path, GPT_OSS_20B), "-f", "json")
    target = json.loads(result.output)["target"]
    assert target["active"] and target["parameters"] < target["total_parameters"]
    assert target["experts"] == {
        "count": 32,
        "per_token": 4,
        "parameters": target["experts"]["parameters"],
        "count_key": "num_local_experts",
        "per_token_key": "num_experts_per_tok",
    }
    text = cli("inspect", draft, "--verifier", tmp_path / "verifier").output
    assert "active parameters per token of 20,914,757,184 (mixture of experts)" in text
    assert "active parameters per token = total - (1 - k/E) x expert parameters" in text


def test_absurd_layer_counts_are_counted_without_a_loop(tmp_path):
    config = {**QWEN3_30B_A3B, "num_hidden_layers": 10**12, "decoder_sparse_step": 2}
    t = target_params(write(tmp_path, {**config, "mlp_only_layers": [1, 3, 4]}))
    dense = target_params(write(tmp_path, config, "no-list"))
    H, E, I_e, I_d = 2048, 128, 768, 6144
    assert dense.total - t.total == 2 * (H * E + E * 3 * H * I_e - 3 * H * I_d)  # layers 1 and 3


def test_whole_floats_count_as_the_integers_they_spell(tmp_path):
    """8.0 experts are 8, as JSON Schema, transformers and the V rules read a verifier."""
    as_floats = {**QWEN3_30B_A3B, "num_experts": 128.0, "num_experts_per_tok": 8.0}
    as_floats["hidden_size"] = float(as_floats["hidden_size"])
    t = target_params(write(tmp_path, as_floats))
    assert (t.total, t.per_token) == (30_532_122_624, 3_353_032_704)
    assert t.experts.count == 128 and t.experts.routed == 8


@pytest.mark.parametrize("experts", [1e20, 128.5, 10**30])
def test_experts_no_integer_holds_are_refused(tmp_path, experts):
    with pytest.raises(UsageError, match="is not a number of experts"):
        target_params(write(tmp_path, {**QWEN3_30B_A3B, "num_experts": experts}))
