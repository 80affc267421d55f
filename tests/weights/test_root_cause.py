"""One root cause, not a cascade (W024): a config value the weights contradict is one error
at its line, with the tensors it explains; their own shape findings are left out. Real
Qwen3-8B EAGLE-3 / DFlash sizes in the config, holes for the weights (nothing is read)."""

from __future__ import annotations

import json

import pytest

from spec_format.testing.builder import build_checkpoint, qwen3_8b_eagle3_config, tiny_config

from .conftest import check, findings


def _edited(tmp_path, config: dict, **tlc) -> object:
    path = build_checkpoint(tmp_path / "ckpt", config, data="sparse").path
    edited = json.loads((path / "config.json").read_text())
    edited["transformer_layer_config"].update(tlc)
    (path / "config.json").write_text(json.dumps(edited, indent=2))
    return path


@pytest.mark.parametrize("declared", [5120, 2048])
def test_an_edited_hidden_size_is_one_error_at_its_line(tmp_path, cli, declared):
    path = _edited(tmp_path, qwen3_8b_eagle3_config(), hidden_size=declared)
    report = check(path)
    weights = findings(report, "W")
    assert [f.rule for f in weights] == ["W024"], [f"{f.rule} {f.message}" for f in weights]
    (cause,) = weights
    assert cause.pointer == "/transformer_layer_config/hidden_size"
    assert f"hidden_size is {declared}, but the weights were written for 4096" in cause.message
    assert "set hidden_size to 4096" in cause.message
    # the text report puts it on the config line of hidden_size
    out = cli("validate", path).output
    line = next(
        i
        for i, text in enumerate((path / "config.json").read_text().splitlines(), 1)
        if '"hidden_size"' in text
    )
    assert f"config.json:{line}:" in out and "W024" in out and "W009" not in out


def test_the_first_layer_is_not_called_a_plain_decoder_layer_when_hidden_size_is_wrong(tmp_path):
    """Declared 8192 = the 2 x 4096 the first layer reads: the old W009 wording claimed a
    plain decoder layer. With W024 left out, W009 now says to check hidden_size."""
    path = _edited(tmp_path, qwen3_8b_eagle3_config(), hidden_size=8192)
    report = check(path, ignore=frozenset({"W024"}))
    w009 = [f.message for f in findings(report, "W009")]
    assert w009 and not any("plain decoder" in m for m in w009)
    assert all("check hidden_size against the weights" in m for m in w009)


def test_an_edited_intermediate_size_names_intermediate_size(tmp_path):
    path = _edited(tmp_path, qwen3_8b_eagle3_config(), intermediate_size=14336)
    (cause,) = findings(check(path), "W")
    assert cause.rule == "W024" and cause.pointer.endswith("/intermediate_size")
    assert "of 3 tensors" in cause.message and "mlp.down_proj.weight [4096, 12288]" in cause.message


def test_a_plain_decoder_layer_is_still_named_as_one(tmp_path):
    """Only the first layer's q/k/v are wrong (the model's own layer exported): no single
    config value explains them without breaking the rest, so W009 keeps its wording."""
    config = tiny_config("eagle3")
    path = build_checkpoint(
        tmp_path / "c",
        config,
        reshape={f"layers.0.self_attn.{p}_proj.weight": s for p, s in (("q", (128, 64)),)},
    ).path
    report = check(path)
    assert "W024" not in {f.rule for f in findings(report)}
    assert any("plain decoder layer" in f.message for f in findings(report, "W009"))


def test_a_matching_checkpoint_has_no_cause(tmp_path):
    path = build_checkpoint(tmp_path / "ok", qwen3_8b_eagle3_config(), data="sparse").path
    assert not findings(check(path), "W")
