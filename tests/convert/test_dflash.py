"""``specfmt convert`` of z-lab DFlash drafts: plans on realistic sources, refusals that write
nothing, and converted checkpoints that validate and run. The comparison with each
speculators release's own ``DFlashConverter`` is in test_interop_dflash_mtp.py."""

from __future__ import annotations

import json

import pytest

from spec_format.convert.plan import ConvertRefused
from spec_format.convert.sources import kinds
from spec_format.convert.sources.zlab_dflash import ZLAB_KEYS
from spec_format.facts import catalog
from spec_format.testing import safeailab
from spec_format.testing.builder import build_checkpoint, qwen3_8b_config, tiny_config
from spec_format.testing.sources import (
    QWEN3_8B_DFLASH,
    build_dense_verifier,
    build_mtp_source,
    build_zlab_dflash,
    tiny_dflash_verifier_config,
    tiny_mtp_verifier_config,
    zlab_dflash_config,
)
from tests.convert.kinds_helpers import moves_by_source, plan_of, request, unexplained

VERIFIER = tiny_dflash_verifier_config()
OFFSET = catalog.record("dflash").aux_offset


def zlab(tmp_path, overrides=None, name="src", **kwargs):
    return build_zlab_dflash(tmp_path / name, zlab_dflash_config(overrides), **kwargs).path


def test_qwen3_8b_b16_gets_the_release_converters_values(tmp_path):
    """Real Qwen3-8B-DFlash-b16 sizes (weights are holes): the values speculators'
    converter tests assert, every config value explained, every tensor copied."""
    path = build_zlab_dflash(tmp_path / "z", QWEN3_8B_DFLASH, data="sparse").path
    plan = plan_of(path, request(qwen3_8b_config(), "hf://Qwen/Qwen3-8B"))
    c = plan.config
    assert c["speculators_model_type"] == "dflash"
    assert c["aux_hidden_state_layer_ids"] == [2, 10, 18, 26, 34]
    assert (c["block_size"], c["mask_token_id"], c["draft_vocab_size"]) == (16, 151669, 151936)
    assert c["speculators_config"]["proposal_methods"][0]["speculative_tokens"] == 15
    assert c["speculators_config"]["verifier"] == {
        "name_or_path": "Qwen/Qwen3-8B",
        "architectures": ["Qwen3ForCausalLM"],
    }
    assert c["sample_from_anchor"] is False and c["dtype"] == "bfloat16"
    assert not set(ZLAB_KEYS) & set(c["transformer_layer_config"])
    assert "auto_map" not in c  # no remote code
    assert unexplained(plan) == []
    prov = {p.pointer: p for p in plan.provenance}
    assert prov["/aux_hidden_state_layer_ids"].origin == "source"
    assert "dflash_config.target_layer_ids + 1" in prov["/aux_hidden_state_layer_ids"].detail
    assert prov["/speculators_config/verifier/name_or_path"].origin == "flag"
    assert prov["/speculators_config/verifier/architectures"].origin == "verifier"
    assert prov["/block_size"].detail == "block_size"
    tensors = plan_source_tensors(path)
    assert set(moves_by_source(plan)) == tensors
    assert all(m.op == "copy" and m.sources == (m.target,) for m in plan.moves)
    assert plan.lossy == ()


def plan_source_tensors(path):
    from spec_format.convert.run import load_source

    return set(load_source(path).tensors)


def test_newer_layout_keeps_block_and_mask_inside_dflash_config(tmp_path):
    """Qwen3.5-era z-lab configs put block_size in dflash_config; older ones keep
    mask_token_id at the top level (InternLM/lmdeploy#4991): both are read."""
    path = zlab(
        tmp_path,
        {
            "block_size": None,
            "mask_token_id": 250,
            "dflash_config": {"block_size": 8, "target_layer_ids": [1, 3, 5]},
        },
    )
    plan = plan_of(path, request(VERIFIER, "org/verifier"))
    prov = {p.pointer: p.detail for p in plan.provenance}
    assert plan.config["block_size"] == 8 and prov["/block_size"] == "dflash_config.block_size"
    assert plan.config["speculators_config"]["proposal_methods"][0]["speculative_tokens"] == 7
    assert plan.config["mask_token_id"] == 250 and prov["/mask_token_id"] == "mask_token_id"


def test_final_layer_tap_is_kept_and_explained(tmp_path):
    """z-lab id L-1 (the last layer's output) becomes aux id L. The converter of
    speculators 0.8+ drops it (0.7 keeps it); specfmt keeps it so fc.weight keeps its inputs."""
    verifier = {**VERIFIER, "num_hidden_layers": 6}
    path = zlab(tmp_path, {"num_target_layers": 6})
    plan = plan_of(path, request(verifier, "org/verifier"))
    assert plan.config["aux_hidden_state_layer_ids"] == [2, 4, 6]
    assert any("speculators >= 0.8 drops it" in n for n in plan.notes)


def test_aux_layer_ids_flag_wins_and_must_fit_fc(tmp_path):
    path = zlab(tmp_path)
    plan = plan_of(path, request(VERIFIER, "org/v", aux=(3, 5, 7)))
    assert plan.config["aux_hidden_state_layer_ids"] == [3, 5, 7]
    prov = {p.pointer: p for p in plan.provenance}
    assert prov["/aux_hidden_state_layer_ids"][1:] == ("flag", "--aux-layer-ids")
    with pytest.raises(ConvertRefused, match=r"fc\.weight: shape \[64, 192\].*A\*Ht=128"):
        plan_of(path, request(VERIFIER, "org/v", aux=(3, 5)))


def test_vocabulary_maps_and_verifier_tensors_are_dropped_with_reasons(tmp_path):
    extra = {"t2d": ("BOOL", (256,)), "d2t": ("I64", (256,)), "lm_head.weight": ("BF16", (256, 64))}
    path = zlab(tmp_path, extra=extra)
    moves = moves_by_source(plan_of(path, request(VERIFIER, "org/v")))
    for name in extra:
        assert moves[name].op == "drop" and moves[name].target is None
    assert "full vocabulary" in moves["t2d"].reason
    assert "verifier's head" in moves["lm_head.weight"].reason


def test_allow_lossy_drops_an_unknown_tensor_and_says_so(tmp_path):
    path = zlab(tmp_path, extra={"layers.0.aux_gate.weight": ("BF16", (64,))})
    plan = plan_of(path, request(VERIFIER, "org/v", lossy=True))
    assert moves_by_source(plan)["layers.0.aux_gate.weight"].op == "drop"
    assert any("layers.0.aux_gate.weight" in item for item in plan.lossy)


REFUSALS = {
    "no-target-ids": (
        {"overrides": {"dflash_config": {"mask_token_id": 255}}},
        r"dflash_config\.target_layer_ids.*--aux-layer-ids",
    ),
    "no-block-size": ({"overrides": {"block_size": None}}, r"block_size"),
    "block-sizes-disagree": (
        {
            "overrides": {
                "dflash_config": {"block_size": 8, "mask_token_id": 1, "target_layer_ids": [1]}
            }
        },
        r"block_size is 4 but dflash_config\.block_size is 8",
    ),
    "no-mask-token": (
        {"overrides": {"dflash_config": {"target_layer_ids": [1, 3, 5]}}},
        r"dflash_config\.mask_token_id",
    ),
    "unknown-tensor": (
        {"extra": {"layers.0.aux_gate.weight": ("BF16", (64,))}},
        r"layers\.0\.aux_gate\.weight: .*--allow-lossy",
    ),
    "wrong-shape": (
        {"reshape": {"layers.1.mlp.up_proj.weight": (64, 64)}},
        r"layers\.1\.mlp\.up_proj\.weight: shape \[64, 64\].*\[I=128, H=64\]",
    ),
    "missing-tensor": (
        {"drop": ["layers.1.self_attn.q_norm.weight"]},
        r"layers\.1\.self_attn\.q_norm\.weight: missing",
    ),
    "fused-qkv": (
        {"extra": {"layers.0.self_attn.qkv_proj.weight": ("BF16", (256, 64))}},
        r"qkv_proj.*fused",
    ),
    "other-verifier-depth": ({"overrides": {"num_target_layers": 36}}, r"num_target_layers is 36"),
    "other-verifier-width": ({"verifier": {**VERIFIER, "hidden_size": 128}}, r"hidden_size is 64"),
}


@pytest.mark.parametrize("case", list(REFUSALS))
def test_refusal_names_the_field_or_tensor_and_writes_nothing(tmp_path, cli, case):
    spec, message = REFUSALS[case]
    build = {k: v for k, v in spec.items() if k not in ("overrides", "verifier")}
    path = zlab(tmp_path, spec.get("overrides"), **build)
    verifier = build_dense_verifier(tmp_path / "verifier", spec.get("verifier", VERIFIER)).path
    with pytest.raises(ConvertRefused, match=message):
        plan_of(path, request(spec.get("verifier", VERIFIER), str(verifier)))
    out = tmp_path / "out"
    result = cli("convert", path, "-o", out, "--verifier", verifier)
    assert result.exit_code == 2, result.output
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src", "verifier"]


def test_a_format_without_dflash_is_refused(tmp_path):
    with pytest.raises(ConvertRefused, match=r"format 0\.4 has no 'dflash'"):
        plan_of(zlab(tmp_path), request(VERIFIER, "org/v", line="0.4"))


def test_older_format_line(tmp_path):
    plan = plan_of(zlab(tmp_path), request(VERIFIER, "org/v", line="0.7"))
    assert plan.config["speculators_version"] == "0.7.0"
    assert unexplained(plan) == []


def test_each_checkpoint_is_claimed_by_exactly_one_kind(tmp_path):
    claims = {}
    z = zlab(tmp_path, name="z")
    m = build_mtp_source(tmp_path / "m", tiny_mtp_verifier_config("qwen3_next")).path
    e = safeailab.build_safeailab(
        tmp_path / "e", safeailab.safeailab_config(), safeailab.safeailab_shapes()
    )
    s = build_checkpoint(tmp_path / "s", tiny_config("dflash")).path
    for label, path in (("z", z), ("m", m), ("e", e), ("s", s)):
        from spec_format.convert.run import load_source

        src = load_source(path)
        claims[label] = [k.name for k in kinds() if k.detect(src.config, frozenset(src.tensors))]
    assert claims == {"z": ["zlab-dflash"], "m": ["native-mtp"], "e": ["safeailab-eagle3"], "s": []}


def test_converted_draft_validates_deep_and_runs_forward(tmp_path, cli):
    path = zlab(tmp_path)
    verifier = build_dense_verifier(tmp_path / "verifier", VERIFIER).path
    out = tmp_path / "out"
    result = cli("convert", path, "-o", out, "--verifier", verifier)
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == ["config.json", "model.safetensors"]
    result = cli("validate", "--deep", "--verifier", verifier, out, "-f", "json")
    assert result.exit_code == 0, result.output
    errors = [
        f for f in json.loads(result.output)["files"][0]["findings"] if f["severity"] == "error"
    ]
    assert errors == []
    result = cli("forward", out, "--verifier", verifier, "-f", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["status"] == "ok" and report["stats"]["nonfinite"] == 0
    assert report["stats"]["min_row_std"] > 0  # the verifier's head and embeddings were used


def test_every_config_field_has_one_origin_in_the_report(tmp_path, cli):
    """A field a later step writes again (fix over a format default: DFlash's
    sliding_window_non_causal) is listed once, with the origin that wrote its value."""
    path = zlab(tmp_path)
    verifier = build_dense_verifier(tmp_path / "verifier", VERIFIER).path
    result = cli("convert", path, "--dry-run", "--verifier", verifier, "-f", "json")
    assert result.exit_code == 0, result.output
    pointers = [p["pointer"] for p in json.loads(result.output)["provenance"]]
    assert len(pointers) == len(set(pointers)), sorted(p for p in pointers if pointers.count(p) > 1)
    origin = {p["pointer"]: p for p in json.loads(result.output)["provenance"]}
    assert origin["/sliding_window_non_causal"]["detail"].startswith("fix: ")
