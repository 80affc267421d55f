"""One broken checkpoint per H/W/D/V rule, built by the shared builder, run through the
validate engine; and clean checkpoints of every type that produce no finding at all."""

from __future__ import annotations

import json
import os
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from spec_format import catalog
from spec_format.report import Severity
from spec_format.rules import registry
from spec_format.safetensors import read_header
from spec_format.testing.builder import TensorData, build_checkpoint, tiny_config, write_safetensors
from tests.weights.conftest import check, findings, rule_ids

TYPES = list(catalog.current_types())


def verifier_config(**changes: Any) -> dict:
    """The verifier the tiny configs were built for (8 layers, hidden 64, vocab 256)."""
    config = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": 64,
        "num_hidden_layers": 8,
        "vocab_size": 256,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 32,
        "intermediate_size": 256,
        "rms_norm_eps": 1e-6,
        "rope_theta": 10000.0,
    }
    config.update(changes)
    return config


# -- helpers that damage a built checkpoint after the fact --------------------------------


def patch_config(**changes: Any) -> Callable[[Path], None]:
    def apply(path: Path) -> None:
        config = json.loads((path / "config.json").read_text())
        for key, value in changes.items():
            node = config
            *parents, last = key.split("__")
            for p in parents:
                node = node[p]
            node[last] = value
        (path / "config.json").write_text(json.dumps(config))

    return apply


def tensors_of(path: Path) -> dict[str, TensorData]:
    header = read_header(path)
    blob = path.read_bytes()
    return {
        n: TensorData(t.dtype, t.shape, blob[slice(*header.absolute_offsets(n))])
        for n, t in header.tensors.items()
    }


def shard_names(path: Path) -> list[str]:
    return sorted(p.name for p in path.glob("model-*.safetensors"))


def edit_index(fn: Callable[[dict], None]) -> Callable[[Path], None]:
    def apply(path: Path) -> None:
        index_path = path / "model.safetensors.index.json"
        index = json.loads(index_path.read_text())
        fn(index)
        index_path.write_text(json.dumps(index))

    return apply


def move_tensor_in_index(index: dict) -> None:
    wm = index["weight_map"]
    shards = sorted(set(wm.values()))
    name = next(n for n, s in wm.items() if s == shards[0])
    wm[name] = shards[1]


def copy_tensor_into_second_shard(path: Path) -> None:
    first, second = (path / s for s in shard_names(path)[:2])
    moved = tensors_of(first)
    name = sorted(moved)[0]
    target = tensors_of(second)
    target[name] = moved[name]
    write_safetensors(second, target, {"format": "pt"})


def drop_from_index(index: dict) -> None:
    index["weight_map"].pop(sorted(index["weight_map"])[0])


def delete_second_shard(path: Path) -> None:
    (path / shard_names(path)[1]).unlink()


def truncate_weights(path: Path) -> None:
    target = path / "model.safetensors"
    os.truncate(target, target.stat().st_size - 100)


def pad_header_front(path: Path) -> None:
    """Eight spaces in front of the header (offsets are relative to the data, so they hold)."""
    target = path / "model.safetensors"
    blob = target.read_bytes()
    (n,) = struct.unpack("<Q", blob[:8])
    target.write_bytes(struct.pack("<Q", n + 8) + b" " * 8 + blob[8:])


def header_is_an_array(path: Path) -> None:
    target = path / "model.safetensors"
    blob = target.read_bytes()
    (n,) = struct.unpack("<Q", blob[:8])
    target.write_bytes(blob[:8] + b"[]".ljust(n) + blob[8 + n :])


def symlink_loop(path: Path) -> None:
    (path / "model.safetensors").unlink()
    (path / "model.safetensors").symlink_to(path / "model.safetensors")


def add_stray_file(path: Path) -> None:
    write_safetensors(path / "model_old.safetensors", {"x": TensorData("F32", (2,), bytes(8))})


def flip_first_false(t2d):
    t2d = t2d.copy()
    t2d[list(t2d).index(False)] = True
    return t2d


def copy_layer_0(path: Path) -> None:
    """A converter that lost layer 1 and wrote layer 0's tensors in its place."""
    tensors = tensors_of(path / "model.safetensors")
    for name in list(tensors):
        if name.startswith("layers.1."):
            tensors[name] = tensors[name.replace("layers.1.", "layers.0.")]
    write_safetensors(path / "model.safetensors", tensors, {"format": "pt"})


def set_item(index: int, value: int):
    def apply(array):
        array = array.copy()
        array[index] = value
        return array

    return apply


def shuffled_t2d(t2d):
    import numpy as np

    other = np.zeros_like(t2d)
    other[np.random.default_rng(99).choice(len(t2d), int(t2d.sum()), replace=False)] = True
    return other


def duplicate_target(d2t):
    d2t = d2t.copy()
    d2t[1] = d2t[0] - 1  # draft ids 0 and 1 both map to the same verifier id
    return d2t


# -- the table ------------------------------------------------------------------------------


@dataclass
class Case:
    id: str
    rule: str
    model_type: str = "eagle3"
    overrides: dict = field(default_factory=dict)
    build: dict = field(default_factory=dict)
    post: Callable[[Path], None] | None = None
    verifier: dict | None = None
    text: str = ""  # a phrase the message must contain


CASES = [
    # W: header against config
    Case(
        "missing-o-proj",
        "W001",
        build={"drop": ["layers.0.self_attn.o_proj.weight"]},
        text="initialise it at random",
    ),
    Case(
        "qwen3-norms-missing",
        "W001",
        overrides={"transformer_layer_config.model_type": "qwen3"},
        build={"drop": ["layers.0.self_attn.q_norm.weight"]},
        text="model_type",
    ),
    Case(
        "extra-tensor",
        "W002",
        build={"extra": {"midlayer.hidden_norm.weight": ("BF16", (64,))}},
        text="specfmt convert",
    ),
    Case(
        "flag-off-tensors-on",
        "W002",
        overrides={"fc_norm": True},
        post=patch_config(fc_norm=False),
        text="fc_norm is true",
    ),
    Case(
        "q-norm-on-llama",
        "W002",
        overrides={"transformer_layer_config.model_type": "qwen3"},
        post=patch_config(transformer_layer_config__model_type="llama"),
        text="set model_type to 'qwen3'",
    ),
    Case(
        "mlp-width",
        "W003",
        build={"reshape": {"layers.0.mlp.gate_proj.weight": (96, 64)}},
        text="I=128",
    ),
    Case(
        "fc-width-for-aux-count",
        "W004",
        overrides={"eagle_aux_hidden_state_layer_ids": [2, 4, 5, 6]},
        post=patch_config(eagle_aux_hidden_state_layer_ids=[2, 4, 5]),
        text="4 x 64",
    ),
    Case(
        "fc-width-null-aux",
        "W004",
        overrides={"eagle_aux_hidden_state_layer_ids": [1, 2, 4, 5]},
        post=patch_config(eagle_aux_hidden_state_layer_ids=None),
        text="readers assume 3",
    ),
    Case(
        "lm-head-rows",
        "W005",
        build={"reshape": {"lm_head.weight": (256, 64)}},
        text="slice it with t2d",
    ),
    Case(
        "embed-rows",
        "W006",
        build={"reshape": {"embed_tokens.weight": (64, 64)}},
        text="vocab_size=256",
    ),
    Case("t2d-length", "W007", build={"reshape": {"t2d": (200,)}}, text="[256]"),
    Case("d2t-length", "W007", model_type="dflash", build={"reshape": {"d2t": (60,)}}, text="[64]"),
    Case("missing-d2t", "W008", build={"drop": ["d2t"]}, text="acceptance collapses"),
    Case(
        "q-proj-not-2h",
        "W009",
        build={"reshape": {"layers.0.self_attn.q_proj.weight": (128, 64)}},
        text="2 x hidden_size = 128",
    ),
    Case(
        "extra-layer",
        "W010",
        model_type="dflash",
        overrides={"transformer_layer_config.num_hidden_layers": 3},
        post=patch_config(transformer_layer_config__num_hidden_layers=2),
        text="3 layers",
    ),
    Case("t2d-as-float", "W011", build={"retype": {"t2d": "F32"}}, text="t2d.bool()"),
    Case("mixed-dtypes", "W012", build={"retype": {"fc.weight": "F32"}}, text="fc.weight"),
    Case(
        "config-dtype",
        "W013",
        overrides={"torch_dtype": "float32"},
        build={"dtype": "BF16"},
        text="'bfloat16'",
    ),
    Case(
        "verifier-tensors",
        "W020",
        build={"extra": {"verifier_lm_head.weight": ("BF16", (64, 64))}},
        text="vLLM",
    ),
    Case(
        "qwen3-o-bias",
        "W021",
        overrides={
            "transformer_layer_config.model_type": "qwen3",
            "transformer_layer_config.attention_bias": True,
        },
    ),
    Case(
        "dflash-mask-hidden",
        "W022",
        model_type="dflash",
        build={"extra": {"mask_hidden": ("BF16", (1, 1, 192))}},
    ),
    Case("dspark-gated", "W023", model_type="dspark", overrides={"markov_head_type": "gated"}),
    Case(
        "hidden-size-edited",
        "W024",
        post=patch_config(transformer_layer_config__hidden_size=128),
        text="written for 64",
    ),
    # D: values (--deep, --scan-weights)
    Case("t2d-count", "D001", build={"mutate": {"t2d": flip_first_false}}, text="65 tokens"),
    Case("d2t-negative", "D002", build={"mutate": {"d2t": set_item(0, -1)}}, text="verifier id -1"),
    Case("d2t-past-vocab", "D002", build={"mutate": {"d2t": set_item(63, 256)}}, text="[0, 256)"),
    Case("d2t-not-increasing", "D003", build={"mutate": {"d2t": duplicate_target}}),
    Case("d2t-vs-t2d", "D004", build={"mutate": {"t2d": shuffled_t2d}}, text="disagree"),
    Case("nan-lm-head", "D010", build={"nan": ["lm_head.weight"]}, text="NaN"),
    Case("inf-fc", "D010", model_type="dflash", build={"inf": ["fc.weight"]}, text="1 Inf"),
    Case(
        "norm-at-init", "D011", build={"mutate": {"norm.weight": lambda a: a * 0 + 1}}, text="1.0"
    ),
    Case("fc-zeros", "D011", model_type="peagle", build={"mutate": {"fc.weight": lambda a: a * 0}}),
    Case(
        "layer-copied",
        "D011",
        model_type="dflash",
        post=copy_layer_0,
        text="layers.1 is a byte-identical copy of layers.0",
    ),
    # H: files of the checkpoint
    Case("truncated-data", "H014", post=truncate_weights, text="truncated"),
    Case("header-not-object", "H006", post=header_is_an_array),
    Case("leading-whitespace", "H015", post=pad_header_front),
    Case("symlink-loop", "H016", post=symlink_loop, text="symlink loop"),
    Case(
        "index-bad-shard-name",
        "H017",
        build={"shards": 2},
        post=edit_index(lambda i: i["weight_map"].update({"fc.weight": "../x.safetensors"})),
    ),
    Case(
        "missing-shard",
        "H018",
        build={"shards": 2},
        post=delete_second_shard,
        text="not in the checkpoint",
    ),
    Case(
        "tensor-in-wrong-shard", "H019", build={"shards": 2}, post=edit_index(move_tensor_in_index)
    ),
    Case("tensor-in-two-shards", "H020", build={"shards": 2}, post=copy_tensor_into_second_shard),
    Case("tensor-not-in-index", "H021", build={"shards": 2}, post=edit_index(drop_from_index)),
    Case("stray-file", "H022", post=add_stray_file, text="vLLM loads every"),
    # V: against the verifier
    Case(
        "verifier-hidden",
        "V001",
        verifier=verifier_config(hidden_size=128),
        text="hidden_size is 128",
    ),
    Case("verifier-vocab", "V002", verifier=verifier_config(vocab_size=512)),
    Case("aux-beyond", "V003", verifier=verifier_config(num_hidden_layers=4), text="4 layers"),
    Case("aux-final", "V004", verifier=verifier_config(num_hidden_layers=5)),
    Case(
        "kv-heads",
        "V005",
        verifier=verifier_config(num_key_value_heads=8),
        text="num_key_value_heads",
    ),
    Case("rope", "V006", verifier=verifier_config(rope_theta=1e6)),
    Case("architecture", "V007", verifier=verifier_config(architectures=["Qwen3ForCausalLM"])),
    Case(
        "multimodal-hidden",
        "V001",
        verifier={
            "architectures": ["Gemma3ForConditionalGeneration"],
            "text_config": verifier_config(hidden_size=96, architectures=None),
        },
        text="text_config.hidden_size",
    ),
]


def run_case(tmp_path: Path, case: Case):
    path = build_checkpoint(
        tmp_path / "ckpt", tiny_config(case.model_type, case.overrides), **case.build
    ).path
    if case.post:
        case.post(path)
    options: dict[str, Any] = {"deep": True, "scan_weights": True}
    if case.verifier is not None:
        (tmp_path / "verifier").mkdir()
        (tmp_path / "verifier" / "config.json").write_text(json.dumps(case.verifier))
        options["verifier"] = str(tmp_path / "verifier")
    return check(path, **options)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.rule}-{c.id}")
def test_broken_variant_is_reported_by_its_rule(tmp_path, case):
    report = run_case(tmp_path, case)
    hits = [f for f in findings(report) if f.rule == case.rule]
    assert hits, f"{case.rule} not reported; got {sorted(rule_ids(report))}"
    assert all(f.message and f.file for f in hits)
    if case.text:
        assert any(case.text in f.message for f in hits), [f.message for f in hits]
    rule = registry.BY_ID[case.rule]
    expected_exit = (
        1 if any(f.severity is Severity.ERROR for fr in report.files for f in fr.findings) else 0
    )
    assert report.exit_code == expected_exit
    if rule.severity is Severity.ERROR:
        assert (
            report.exit_code == 1
        )  # a readable config: header problems are errors, not "unreadable"


def test_every_weights_rule_has_a_broken_variant():
    covered = {c.rule for c in CASES} | set(COVERED_ELSEWHERE)
    needed = {r.id for r in registry.RULES if r.id[0] in "HWDV"}
    assert needed <= covered, sorted(needed - covered)


#: header kinds that need hand-made bytes inside a checkpoint (see test_header_reader.py for
#: each one on its own); here the cases show they surface through the engine
COVERED_ELSEWHERE = {
    "H001": "test_checkpoint.py::test_header_errors_surface_as_findings",
    "H002": "test_checkpoint.py::test_header_errors_surface_as_findings",
    "H003": "test_checkpoint.py::test_header_errors_surface_as_findings",
    "H004": "test_checkpoint.py::test_header_errors_surface_as_findings",
    "H005": "test_checkpoint.py::test_header_errors_surface_as_findings",
    "H007": "test_checkpoint.py::test_header_errors_surface_as_findings",
    "H008": "test_checkpoint.py::test_header_errors_surface_as_findings",
    "H009": "test_checkpoint.py::test_header_errors_surface_as_findings",
    "H010": "test_checkpoint.py::test_header_errors_surface_as_findings",
    "H011": "test_checkpoint.py::test_header_errors_surface_as_findings",
    "H012": "test_checkpoint.py::test_header_errors_surface_as_findings",
    "H013": "test_checkpoint.py::test_header_errors_surface_as_findings",
    # pairing rules: against real verifier configs (tests/data/verifiers)
    "V008": "tests/test_pairing.py::test_v008_verifier_served_longer_than_the_draft",
    "V009": "tests/test_pairing.py::test_v009_quantized_export_of_the_named_verifier",
    "V010": "tests/test_pairing.py::test_v010_unknown_quantization_is_named",
    "V011": "tests/test_pairing.py::test_v011_float16_verifier_for_a_bfloat16_draft",
    "V012": "tests/test_pairing.py::test_v012_rotated_export",
    "V013": "tests/test_pairing.py::test_v013_another_size_than_the_named_verifier",
    "V014": "tests/test_pairing.py::test_v014_engine_quantizes_the_draft",
    # needs --engine vllm==X: against the reader table's executed weight blocks
    "W025": "tests/test_engine_weights.py::test_a_qwen3_draft_without_q_norm_is_left_at_initial_values",
}


@pytest.mark.parametrize("model_type", TYPES)
def test_clean_checkpoints_have_no_weights_findings(tmp_path, model_type):
    config = tiny_config(model_type)
    path = build_checkpoint(tmp_path / "ckpt", config).path
    archs = config["speculators_config"]["verifier"]["architectures"]
    (tmp_path / "verifier.json").write_text(json.dumps(verifier_config(architectures=archs)))
    report = check(path, deep=True, scan_weights=True, verifier=str(tmp_path / "verifier.json"))
    assert not findings(report, "H") and not findings(report, "W") and not findings(report, "D")
    assert not [f for f in findings(report, "V") if f.severity is Severity.ERROR]
    assert report.exit_code == 0, report.to_dict()
    assert not [n for n in report.notes if "--verifier" in n]  # the verifier was given


def test_missing_shard_silences_missing_tensor_guesses(tmp_path):
    case = Case("x", "H018", build={"shards": 2}, post=delete_second_shard)
    report = run_case(tmp_path, case)
    assert "W001" not in rule_ids(report) and "W008" not in rule_ids(report)


def test_one_layer_too_many_is_one_finding_not_one_per_tensor(tmp_path):
    case = next(c for c in CASES if c.id == "extra-layer")
    report = run_case(tmp_path, case)
    assert rule_ids(report, "W") == {"W010"}


def test_a_config_only_input_skips_weights_and_says_so(tmp_path):
    built = build_checkpoint(tmp_path / "ckpt", tiny_config("eagle3"), drop=["d2t"])
    report = check(built.config_path)
    assert not rule_ids(report)
    assert any("pass the checkpoint directory" in s for s in report.files[0].skipped)


def test_a_float_t2d_is_a_dtype_error_not_a_mixed_precision_warning(tmp_path):
    report = run_case(tmp_path, next(c for c in CASES if c.id == "t2d-as-float"))
    assert "W011" in rule_ids(report) and "W012" not in rule_ids(report)
    assert "D001" not in rule_ids(report)  # its 0.0/1.0 values still select D tokens
