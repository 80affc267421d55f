"""The seed document's section 3, reproduced by ``specfmt inspect`` on a checkpoint with the
real shapes of Qwen3-8B EAGLE-3 against Qwen3-8B."""

from __future__ import annotations

import json

from spec_format.testing.builder import build_verifier
from tests.inspect_cmd.conftest import QWEN3_8B


def _economics(doc, gamma):
    return next(g for g in doc["economics"] if g["gamma"] == gamma)


def _point(econ, a):
    return next(p for p in econ["points"] if p["acceptance"] == a)


def test_qwen3_8b_eagle3_against_qwen3_8b_config(inspect_json, qwen3_8b_draft, qwen3_8b_config):
    doc = inspect_json(qwen3_8b_draft, "--verifier", qwen3_8b_config, "--acceptance", "0.78")
    assert doc["draft"]["compute_parameters"] == 399_523_840
    assert doc["target"]["parameters"] == 8_190_735_360
    assert doc["target"]["source"] == "config" and not doc["target"]["active"]
    assert round(doc["cost_ratio"], 4) == 0.0488 and doc["cost_ratio_source"] == "proxy"
    econ = _economics(doc, 3)
    assert econ["source"] == "speculative_tokens" and econ["draft_forwards_per_step"] == 3
    assert round(econ["break_even_acceptance"], 4) == 0.1279
    assert round(_point(econ, 0.78)["speedup"], 2) == 2.50


def test_text_output_states_the_numbers_and_what_they_mean(cli, qwen3_8b_draft, qwen3_8b_config):
    result = cli("inspect", qwen3_8b_draft, "--verifier", qwen3_8b_config, "-a", "0.78")
    assert result.exit_code == 0, result.output
    out = result.output
    assert "compute-relevant parameters: 399,523,840" in out
    assert "every tensor except the embed_tokens copy and the t2d/d2t vocabulary maps" in out
    assert "8,190,735,360 parameters" in out
    assert "c = 0.0488 (bandwidth-bound proxy" in out
    assert "a* = 0.1279" in out
    assert "2.50x" in out
    assert "32,000 of 151,936 verifier tokens" in out
    assert "BF16" in out and "2.0 GB" in out and "iB" not in out


def test_heavier_draft_needs_higher_acceptance(inspect_json, qwen3_8b_draft):
    doc = inspect_json(qwen3_8b_draft, "--cost-ratio", "0.30", "-a", "0.5")
    econ = _economics(doc, 3)
    assert doc["cost_ratio_source"] == "--cost-ratio" and doc["target"] is None
    assert round(econ["break_even_acceptance"], 4) == 0.5090
    assert _point(econ, 0.5)["speedup"] < 1.0


def test_same_target_count_from_the_verifier_safetensors_headers(
    inspect_json, qwen3_8b_draft, tmp_path
):
    verifier = build_verifier(tmp_path / "Qwen3-8B", QWEN3_8B, shards=5).path
    doc = inspect_json(qwen3_8b_draft, "--verifier", verifier, "-a", "0.78")
    assert doc["target"]["source"] == "header"
    assert doc["target"]["parameters"] == 8_190_735_360
    econ = _economics(doc, 3)
    assert round(econ["break_even_acceptance"], 4) == 0.1279
    assert round(_point(econ, 0.78)["speedup"], 2) == 2.50
    # the config alone in the same directory is counted from the config
    doc = inspect_json(qwen3_8b_draft, "--verifier", verifier / "config.json")
    assert doc["target"]["parameters"] == 8_190_735_360


def test_best_gamma_and_extra_gammas(inspect_json, qwen3_8b_draft, qwen3_8b_config):
    doc = inspect_json(
        qwen3_8b_draft, "--verifier", qwen3_8b_config, "-a", "0.78,0.9", "--gamma", "5"
    )
    assert [g["gamma"] for g in doc["economics"]] == [3, 5]
    c = doc["cost_ratio"]
    for econ in doc["economics"]:
        for p in econ["points"]:
            a = p["acceptance"]
            brute = max(range(1, 65), key=lambda g: (1 - a ** (g + 1)) / (1 - a) / (1 + g * c))
            assert p["best_gamma"] == brute
    assert json.dumps(doc)  # JSON-clean (no NaN)
