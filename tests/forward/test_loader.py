"""The strict loader on the shared tensor contract: layouts it accepts, diffs it reports,
and that the weights really are the file's (memory-mapped, not copied)."""

from __future__ import annotations

import json

import pytest
import torch
from forward_helpers import build, inputs, load, tiny_config
from safetensors.torch import load_file, save_file

from spec_format.forward import CheckpointError, ForwardOptions, run_forward


def test_sharded_checkpoint_gives_the_single_file_result(tmp_path):
    config = tiny_config("dflash")
    single = load(build(tmp_path / "single", config, seed=4))
    sharded = load(build(tmp_path / "sharded", config, seed=4, shards=3))
    assert (tmp_path / "sharded" / "model.safetensors.index.json").is_file()
    ids, hidden = inputs(single, 9)
    with torch.inference_mode():
        a = single.draft(ids, hidden, anchor=5)
        b = sharded.draft(ids, hidden, anchor=5)
    assert torch.equal(a.logits, b.logits)


def test_weights_are_the_files_own_values(tmp_path):
    path = build(tmp_path / "e", tiny_config("eagle3"), dtype="BF16")
    model = load(path, dtype=torch.bfloat16)
    stored = load_file(str(path / "model.safetensors"))
    for name, tensor in model.state_dict().items():
        assert torch.equal(tensor, stored[name]), name


def test_contract_diff_names_every_problem(tmp_path):
    path = build(
        tmp_path / "e",
        tiny_config("eagle3", {"fc_norm": False}),
        drop=["layers.0.self_attn.o_proj.weight"],
        reshape={"fc.weight": (64, 128)},
        retype={"d2t": "F32"},
        extra={"fc_norm.0.weight": ("F32", (64,)), "verifier_lm_head.weight": ("F32", (64, 64))},
    )
    with pytest.raises(CheckpointError) as info:
        run_forward(ForwardOptions(checkpoint=path, tokens=4))
    text = str(info.value)
    assert "the tensors do not match the eagle3 contract" in text
    assert "layers.0.self_attn.o_proj.weight" in text  # missing
    assert "verifier_lm_head.weight" in text  # unexpected
    assert "fc_norm.0.weight (only when fc_norm)" in text  # ruled out by the config
    assert "fc.weight: [64, 128]" in text  # wrong shape
    assert "d2t: F32" in text  # wrong dtype


def test_full_vocabulary_draft_ignores_identity_maps(tmp_path):
    """D == V: d2t/t2d are optional; the readers ignore them and so does the forward."""
    config = tiny_config("eagle3", {"draft_vocab_size": 256})
    path = build(
        tmp_path / "e",
        config,
        include_optional=["embed_tokens.weight", "lm_head.weight", "d2t", "t2d"],
        values={"d2t": [0] * 256, "t2d": [True] * 256},
    )
    result = run_forward(ForwardOptions(checkpoint=path, tokens=5))
    assert result.ok and all(row.draft_id == row.token_id for row in result.rows)


def test_dflash_full_vocabulary_takes_lm_head_from_the_verifier(tmp_path):
    """DFlash leaves embed_tokens and (with D == V) lm_head out; the verifier supplies them
    and the logits are those of the same weights stored in the draft."""
    config = tiny_config("dflash", {"draft_vocab_size": 256})
    full = build(tmp_path / "full", config, include_optional=True)
    stored = load_file(str(full / "model.safetensors"))
    lean = tmp_path / "lean"
    lean.mkdir()
    (lean / "config.json").write_text((full / "config.json").read_text())
    verifier_owned = ("embed_tokens.weight", "lm_head.weight")
    save_file(
        {k: v for k, v in stored.items() if k not in verifier_owned},
        str(lean / "model.safetensors"),
    )
    verifier = tmp_path / "verifier"
    verifier.mkdir()
    (verifier / "config.json").write_text(
        json.dumps({"model_type": "qwen3", "hidden_size": 64, "vocab_size": 256})
    )
    save_file(
        {
            "model.embed_tokens.weight": stored["embed_tokens.weight"],
            "lm_head.weight": stored["lm_head.weight"],
        },
        str(verifier / "model.safetensors"),
    )
    a = run_forward(ForwardOptions(checkpoint=full, tokens=8))
    b = run_forward(ForwardOptions(checkpoint=lean, tokens=8, verifier=verifier))
    assert b.weights == {"file": a.weights["file"] - 2, "verifier": 2, "random": 0}
    assert not b.warnings
    assert [r.prob for r in a.rows] == [r.prob for r in b.rows]


def test_reduced_vocabulary_draft_must_carry_its_lm_head(tmp_path):
    """D < V: lm_head is required by the contract (serving cannot derive it), verifier or not."""
    path = build(tmp_path / "e", tiny_config("eagle3"), drop=["lm_head.weight"])
    with pytest.raises(CheckpointError, match=r"missing \(1\):\n\s+lm_head.weight"):
        run_forward(ForwardOptions(checkpoint=path, tokens=4))
