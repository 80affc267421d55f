"""``specfmt convert`` of native MTP heads (a verifier checkpoint's ``mtp.*`` tensors): plans
on realistic (sharded, MoE) sources, fused experts byte for byte, refusals that write
nothing, converted heads that validate and run. The comparison with each speculators
release's own ``MTPConverter`` is in test_interop_dflash_mtp.py."""

from __future__ import annotations

import json

import numpy as np
import pytest

from spec_format.convert.plan import ConvertRefused
from spec_format.convert.run import load_source
from spec_format.convert.sources.native_mtp import SPECULATIVE_STEPS
from spec_format.testing.sources import (
    QWEN3_NEXT_80B,
    build_mtp_source,
    tiny_mtp_verifier_config,
)
from tests.convert.kinds_helpers import moves_by_source, plan_of, request, unexplained


def mtp(tmp_path, family="qwen3", name="src", **kwargs):
    config = tiny_mtp_verifier_config(family)
    return build_mtp_source(tmp_path / name, config, **kwargs).path, config


def test_qwen3_next_80b_head_from_shards(tmp_path):
    """Real Qwen3-Next-80B-A3B sizes (512 experts; weights are holes) over 4 shards: only
    mtp.* is taken, renamed, and the experts fused in index order, bytes not re-cast."""
    path = build_mtp_source(tmp_path / "q", QWEN3_NEXT_80B, data="sparse", shards=4).path
    plan = plan_of(path, request(QWEN3_NEXT_80B, "hf://Qwen/Qwen3-Next-80B-A3B-Instruct"))
    c = plan.config
    assert c["speculators_model_type"] == "mtp" and c["num_nextn_predict_layers"] == 1
    assert c["transformer_layer_config"] == QWEN3_NEXT_80B
    assert c["speculators_config"]["proposal_methods"][0]["speculative_tokens"] == SPECULATIVE_STEPS
    assert c["speculators_config"]["verifier"]["name_or_path"] == "Qwen/Qwen3-Next-80B-A3B-Instruct"
    assert unexplained(plan) == []
    source = load_source(path)
    moves = moves_by_source(plan)
    assert set(moves) == set(source.tensors)  # every source tensor mapped or dropped
    assert len({r.file for r in source.tensors.values()}) == 4
    for name in ("model.embed_tokens.weight", "lm_head.weight", "model.norm.weight"):
        assert moves[name].op == "drop" and "not its MTP head" in moves[name].reason
    assert moves["mtp.fc.weight"].target == "mtp_layers.0.input_proj.weight"
    assert moves["mtp.norm.weight"].target == "mtp_layers.0.final_layernorm.weight"
    assert moves["mtp.pre_fc_norm_hidden.weight"].target == "mtp_layers.0.hidden_layernorm.weight"
    assert moves["mtp.layers.0.mlp.shared_expert_gate.weight"].target == (
        "mtp_layers.0.mlp.shared_expert_gate.weight"
    )
    gate_up = moves["mtp.layers.0.mlp.experts.0.gate_proj.weight"]
    assert gate_up.target == "mtp_layers.0.mlp.experts.gate_up_proj" and gate_up.op == "cat"
    assert gate_up.shape == (512, 1024, 2048)
    p = "mtp.layers.0.mlp.experts."
    assert gate_up.sources[:4] == (
        f"{p}0.gate_proj.weight",
        f"{p}0.up_proj.weight",
        f"{p}1.gate_proj.weight",
        f"{p}1.up_proj.weight",
    )
    down = moves[f"{p}511.down_proj.weight"]
    assert (
        down.op == "stack" and len(down.sources) == 512 and down.sources[-1].startswith(f"{p}511.")
    )


def test_qwen35_text_config_becomes_the_layer_config(tmp_path):
    path, config = mtp(tmp_path, "qwen3_5_text", text_config=True)
    plan = plan_of(path, request(config, "org/qwen35"))
    nested = json.loads((path / "config.json").read_text())["text_config"]
    assert plan.config["transformer_layer_config"] == nested
    prov = {p.pointer: p for p in plan.provenance}
    assert prov["/transformer_layer_config/hidden_size"].detail == "text_config.hidden_size"


def test_without_verifier_the_source_names_the_architectures(tmp_path):
    path, _ = mtp(tmp_path)
    plan = plan_of(path, request())
    prov = {p.pointer: p for p in plan.provenance}
    assert plan.config["speculators_config"]["verifier"] == {
        "name_or_path": None,
        "architectures": ["Qwen3ForCausalLM"],
    }
    assert prov["/speculators_config/verifier/architectures"].origin == "source"
    assert any("no --verifier" in n for n in plan.notes)


def test_allow_lossy_drops_an_unmapped_mtp_tensor(tmp_path):
    path, config = mtp(tmp_path, extra={"mtp.extra_norm.weight": (64,)})
    plan = plan_of(path, request(config, "org/v", lossy=True))
    assert moves_by_source(plan)["mtp.extra_norm.weight"].op == "drop"
    assert any("mtp.extra_norm.weight" in item for item in plan.lossy)


E = "mtp.layers.0.mlp.experts."
REFUSALS = {
    "second-layer": (
        "qwen3",
        {"extra": {"mtp.layers.1.input_layernorm.weight": (64,)}},
        r"mtp\.layers\.1\.\*.*num_nextn_predict_layers must be 1",
    ),
    "unmapped": (
        "qwen3",
        {"extra": {"mtp.extra_norm.weight": (64,)}},
        r"mtp\.extra_norm\.weight: .*--allow-lossy",
    ),
    "unknown-in-dense-layer": (
        "qwen3",
        {"extra": {"mtp.layers.0.mlp.router.weight": (4, 64)}},
        r"mtp\.layers\.0\.mlp\.router\.weight: .*--allow-lossy",
    ),
    "wrong-shape": (
        "qwen3",
        {"reshape": {"mtp.fc.weight": (64, 64)}},
        r"mtp\.fc\.weight: shape \[64, 64\].*\[H=64, 2\*H=128\]",
    ),
    "missing": (
        "qwen3",
        {"drop": ("mtp.pre_fc_norm_embedding.weight",)},
        r"mtp_layers\.0\.token_layernorm\.weight: missing",
    ),
    "expert-missing": (
        "qwen3_next",
        {"drop": (f"{E}2.up_proj.weight",)},
        r"experts\.2\.up_proj\.weight: missing",
    ),
    "expert-gap": (
        "qwen3_next",
        {"drop": tuple(f"{E}1.{p}_proj.weight" for p in ("gate", "up", "down"))},
        r"expert indices \[0, 2, 3\]",
    ),
    "expert-shape": (
        "qwen3_next",
        {"reshape": {f"{E}3.down_proj.weight": (64, 16)}},
        r"experts\.3\.down_proj\.weight: BF16 \[64, 16\].*\[64, 32\]",
    ),
    "other-verifier": (
        "qwen3",
        {"verifier": {"hidden_size": 128}},
        r"hidden_size is 64, but the verifier's hidden_size is 128",
    ),
    "no-mtp-layer-class": ("qwen3", {"config": {"model_type": "llama"}}, r"model_type is 'llama'"),
}


@pytest.mark.parametrize("case", list(REFUSALS))
def test_refusal_names_the_tensor_or_field_and_writes_nothing(tmp_path, cli, case):
    family, spec, message = REFUSALS[case]
    config = {**tiny_mtp_verifier_config(family), **spec.get("config", {})}
    build = {k: v for k, v in spec.items() if k not in ("verifier", "config")}
    path = build_mtp_source(tmp_path / "src", config, **build).path
    verifier = {**config, **spec.get("verifier", {})}
    (tmp_path / "verifier").mkdir()
    (tmp_path / "verifier" / "config.json").write_text(json.dumps(verifier))
    with pytest.raises(ConvertRefused, match=message):
        plan_of(path, request(verifier, str(tmp_path / "verifier")))
    out = tmp_path / "out"
    result = cli("convert", path, "-o", out, "--verifier", tmp_path / "verifier")
    assert result.exit_code == 2, result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src", "verifier"]


def test_fused_experts_hold_the_source_bytes(tmp_path, cli):
    """gate_up_proj[e] = cat(gate_e, up_e) and down_proj[e] = down_e, exactly (the real
    safetensors library reads both files)."""
    path, _ = mtp(tmp_path, "qwen3_next", shards=2)
    out = tmp_path / "out"
    result = cli("convert", path, "-o", out, "--verifier", path)
    assert result.exit_code == 0, result.output
    src = {}
    for shard in sorted(path.glob("*.safetensors")):
        src.update(load_bf16(shard))
    got = load_bf16(out / "model.safetensors")
    gate_up = np.stack(
        [
            np.concatenate([src[f"{E}{e}.gate_proj.weight"], src[f"{E}{e}.up_proj.weight"]])
            for e in range(4)
        ]
    )
    assert np.array_equal(got["mtp_layers.0.mlp.experts.gate_up_proj"], gate_up)
    down = np.stack([src[f"{E}{e}.down_proj.weight"] for e in range(4)])
    assert np.array_equal(got["mtp_layers.0.mlp.experts.down_proj"], down)
    assert np.array_equal(got["mtp_layers.0.input_proj.weight"], src["mtp.fc.weight"])
    assert not any(n.startswith(("model.", "lm_head")) for n in got)


def load_bf16(path):
    """The raw 16-bit words of each bf16 tensor (numpy has no bfloat16)."""
    import struct

    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        a, b = entry["data_offsets"]
        out[name] = np.frombuffer(raw[8 + n + a : 8 + n + b], dtype="<u2").reshape(entry["shape"])
    return out


def test_converted_head_validates_deep_and_runs_forward(tmp_path, cli):
    """A dense (Qwen3) MTP head: the one family specfmt's reference forward implements."""
    path, _ = mtp(tmp_path)
    out = tmp_path / "out"
    result = cli("convert", path, "-o", out, "--verifier", path)
    assert result.exit_code == 0, result.output
    result = cli("validate", "--deep", "--verifier", path, out, "-f", "json")
    assert result.exit_code == 0, result.output
    findings = json.loads(result.output)["files"][0]["findings"]
    assert [f for f in findings if f["severity"] == "error"] == []
    result = cli("forward", out, "--verifier", path, "-f", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["status"] == "ok" and report["stats"]["min_row_std"] > 0


def test_aux_layer_ids_are_refused_for_an_mtp_head(tmp_path):
    path, config = mtp(tmp_path)
    with pytest.raises(ConvertRefused, match=r"--aux-layer-ids: an MTP head taps no aux layers"):
        plan_of(path, request(config, "org/v", aux=(1, 2)))


def test_dry_run_prints_the_fusing_and_writes_nothing(tmp_path, cli):
    path, _ = mtp(tmp_path, "qwen3_next")
    out = tmp_path / "out"
    result = cli("convert", path, "-o", out, "--verifier", path, "--dry-run", "-f", "json")
    assert result.exit_code == 0, result.output
    assert not out.exists()
    report = json.loads(result.output)
    fused = {t["target"]: t for t in report["tensors"] if t["op"] in ("cat", "stack")}
    assert fused["mtp_layers.0.mlp.experts.gate_up_proj"]["shape"] == [4, 64, 64]
    assert len(fused["mtp_layers.0.mlp.experts.down_proj"]["sources"]) == 4
    assert report["config"]["speculators_model_type"] == "mtp"


def test_text_report_names_fused_sources_briefly(tmp_path, cli):
    """A fused move of Qwen3-Next-80B's 512 experts names a few sources and how many more
    (not 1,024 names on one line); ``-f json`` still lists every source."""
    path = build_mtp_source(tmp_path / "q", QWEN3_NEXT_80B, data="sparse", shards=4).path
    args = ("convert", path, "-o", tmp_path / "out", "--verifier", path, "--dry-run",
            "--verifier-name", "Qwen/Qwen3-Next-80B-A3B-Instruct")  # fmt: skip
    text = cli(*args).output
    tensor_lines = text.split("tensors:\n", 1)[1].splitlines()
    gate_up = next(
        line for line in tensor_lines if "-> mtp_layers.0.mlp.experts.gate_up_proj" in line
    )
    assert gate_up.count(" + ") == 4 and " + 1020 more -> " in gate_up
    data = json.loads(cli(*args, "-f", "json").output)
    fused = next(
        t for t in data["tensors"] if t["target"] == "mtp_layers.0.mlp.experts.gate_up_proj"
    )
    assert len(fused["sources"]) == 1024


def test_many_tensors_dropped_for_one_reason_print_as_one_line():
    """A verifier's whole body beside its MTP layer (about 75,000 tensors for Qwen3-Next) is
    one line with a count; a few drops keep a line each."""
    from spec_format.convert.plan import TensorMove
    from spec_format.convert.render import _tensor_lines

    body = [
        TensorMove((f"model.layers.{i}.mlp.weight",), None, "drop", "not the head")
        for i in range(75)
    ]
    few = [TensorMove(("lm_head.weight",), None, "drop", "the verifier's head")]
    lines = _tensor_lines(body + few)
    assert lines == [
        "  75 tensors dropped (not the head): model.layers.0.mlp.weight, "
        "model.layers.1.mlp.weight, ... (-f json lists all)",
        "  lm_head.weight: dropped (the verifier's head)",
    ]
