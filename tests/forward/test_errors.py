"""What a broken or unsupported checkpoint, verifier or input produces: one clear error
naming the field or tensor, never a traceback or a silently random weight."""

from __future__ import annotations

import json

import pytest
import torch
from forward_helpers import build, tiny_config
from safetensors.torch import save_file

from spec_format.base.errors import InputError, UsageError
from spec_format.forward import CheckpointError, ForwardOptions, UnsupportedError, run_forward


def forward(path, **kwargs):
    return run_forward(ForwardOptions(checkpoint=path, tokens=6, **kwargs))


def test_unsupported_rope_type_is_refused_by_name(tmp_path):
    config = tiny_config(
        "eagle3",
        {
            "transformer_layer_config.rope_scaling": {
                "rope_type": "longrope",
                "short_factor": [1.0],
                "long_factor": [1.0],
            },
        },
    )
    with pytest.raises(UnsupportedError, match="rope_type 'longrope'") as info:
        forward(build(tmp_path / "e", config))
    assert info.value.exit_code == 2


@pytest.mark.parametrize(
    "rope",
    [
        {"rope_type": "linear", "factor": 2.0},
        {"rope_type": "dynamic", "factor": 2.0},
        {
            "rope_type": "llama3",
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 64,
        },
        {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64},
        {"rope_type": "mrope", "mrope_section": [8, 4, 4]},
    ],
)
def test_supported_rope_types_run(tmp_path, rope):
    config = tiny_config(
        "eagle3", {"transformer_layer_config.rope_parameters": {**rope, "rope_theta": 10000.0}}
    )
    result = forward(build(tmp_path / "e", config))
    assert result.ok


def test_a_config_validate_rejects_is_refused_with_validates_findings(tmp_path):
    config = tiny_config("eagle3", {"transformer_layer_config.model_type": "mistral"})
    with pytest.raises(CheckpointError, match="X009 transformer_layer_config.model_type") as info:
        forward(_write(tmp_path, config))
    assert info.value.exit_code == 1


def test_unsupported_mtp_layer_type_is_refused_by_name(tmp_path):
    config = tiny_config("mtp", {"transformer_layer_config.model_type": "qwen3_next"})
    with pytest.raises(UnsupportedError, match="model_type 'qwen3_next' is not supported for mtp"):
        forward(_write(tmp_path, config))


def _write(tmp_path, config):
    """A config whose tensors cannot be derived by the builder (unsupported type): the
    refusal comes from the config, before any tensor is read."""
    path = tmp_path / "ckpt"
    path.mkdir()
    (path / "config.json").write_text(json.dumps(config))
    save_file({"fc.weight": torch.zeros(1)}, str(path / "model.safetensors"))
    return path


def test_missing_tensor_is_named(tmp_path):
    path = build(tmp_path / "e", tiny_config("eagle3"), drop=["layers.0.self_attn.o_proj.weight"])
    with pytest.raises(CheckpointError) as info:
        forward(path)
    assert "layers.0.self_attn.o_proj.weight" in str(info.value)
    assert info.value.exit_code == 1


def test_unexpected_tensor_is_named(tmp_path):
    path = build(
        tmp_path / "e", tiny_config("eagle3"), extra={"verifier_lm_head.weight": ("F32", (64, 64))}
    )
    with pytest.raises(CheckpointError, match="verifier_lm_head.weight"):
        forward(path)


@pytest.mark.parametrize(
    "model_type,tensor",
    [
        ("eagle3", "fc.weight"),
        ("dflash", "layers.1.mlp.down_proj.weight"),
    ],
)
def test_nan_weight_is_named(tmp_path, model_type, tensor):
    path = build(tmp_path / model_type, tiny_config(model_type), nan=[tensor])
    with pytest.raises(CheckpointError, match="NaN") as info:
        forward(path)
    assert f"{tensor}: contains NaN" in str(info.value)


def _verifier(directory, hidden, vocab=256, tied=False, seed=0):
    directory.mkdir(parents=True)
    (directory / "config.json").write_text(
        json.dumps(
            {
                "model_type": "qwen3",
                "hidden_size": hidden,
                "vocab_size": vocab,
                "tie_word_embeddings": tied,
            }
        )
    )
    g = torch.Generator().manual_seed(seed)
    tensors = {"model.embed_tokens.weight": torch.randn(vocab, hidden, generator=g) * 0.02}
    if not tied:
        tensors["lm_head.weight"] = torch.randn(vocab, hidden, generator=g) * 0.02
    save_file(tensors, str(directory / "model.safetensors"))
    return directory


def test_verifier_with_the_wrong_hidden_size_is_refused(tmp_path):
    path = build(tmp_path / "m", tiny_config("mtp"))  # mtp needs embed/lm_head from it
    verifier = _verifier(tmp_path / "verifier", hidden=128)
    with pytest.raises(CheckpointError, match="verifier hidden_size is 128") as info:
        forward(path, verifier=verifier)
    assert "64" in str(info.value)


def test_verifier_supplies_left_out_tensors(tmp_path):
    path = build(tmp_path / "m", tiny_config("mtp"))
    verifier = _verifier(tmp_path / "verifier", hidden=64)
    result = forward(path, verifier=verifier)
    assert result.weights["verifier"] == 2 and result.weights["random"] == 0
    assert not result.warnings


def test_tied_verifier_gives_its_embedding_as_lm_head(tmp_path):
    path = build(tmp_path / "m", tiny_config("mtp"))
    result = forward(path, verifier=_verifier(tmp_path / "v", hidden=64, tied=True))
    assert result.weights["verifier"] == 2


def test_without_verifier_left_out_tensors_are_random_with_a_loud_warning(tmp_path):
    path = build(tmp_path / "m", tiny_config("mtp"))
    result = forward(path)
    assert result.weights["random"] == 2
    (warning,) = result.warnings
    assert warning.startswith("SMOKE TEST ONLY") and "embed_tokens.weight" in warning


def test_bad_d2t_is_refused(tmp_path):
    path = build(tmp_path / "e", tiny_config("eagle3"))
    from safetensors.torch import load_file

    tensors = load_file(str(path / "model.safetensors"))
    tensors["d2t"] = torch.full((64,), 10_000, dtype=torch.int64)
    save_file(tensors, str(path / "model.safetensors"))
    with pytest.raises(CheckpointError, match="d2t maps 64 draft ids outside"):
        forward(path)


# ----------------------------------------------------------------------------- inputs, options


def test_inputs_file_with_the_wrong_width_is_refused(tmp_path):
    path = build(tmp_path / "e", tiny_config("eagle3"))
    bad = tmp_path / "in.safetensors"
    save_file(
        {"input_ids": torch.zeros(5, dtype=torch.int64), "hidden_states": torch.zeros(5, 64)},
        str(bad),
    )
    with pytest.raises(InputError, match=r"expected \[T, A\*Ht\] = \[T, 3\*64\] = \[5, 192\]"):
        forward(path, inputs=bad)


def test_inputs_file_is_used(tmp_path):
    path = build(tmp_path / "e", tiny_config("eagle3"))
    data = tmp_path / "in.safetensors"
    save_file(
        {"input_ids": torch.arange(5, dtype=torch.int64), "hidden_states": torch.ones(5, 192)},
        str(data),
    )
    result = forward(path, inputs=data)
    assert result.tokens == 5 and result.inputs == str(data)


@pytest.mark.parametrize(
    "model_type,options,message",
    [
        ("dflash", {"anchor": 6}, "outside the 6 input positions"),
        ("eagle3", {"anchor": 2}, "--anchor applies to the DFlash family"),
        ("dflash", {"steps": 2}, "--steps applies to eagle3 and peagle"),
        ("eagle3", {"device": "tpu"}, "--device must be one of"),
        ("eagle3", {"dtype": "int8"}, "--dtype must be one of"),
        ("eagle3", {"top_k": 0}, "--top-k must be at least 1"),
    ],
)
def test_bad_options_are_usage_errors(tmp_path, model_type, options, message):
    path = build(tmp_path / model_type, tiny_config(model_type))
    with pytest.raises(UsageError, match=message):
        forward(path, **options)


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_cuda_without_a_gpu_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="no CUDA device"):
        forward(build(tmp_path / "e", tiny_config("eagle3")), device="cuda")


def test_missing_checkpoint_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="no config.json"):
        forward(tmp_path / "nothing")
