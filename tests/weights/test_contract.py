"""The tensor contracts: checked against what speculators 0.9.0 really writes, and the
machinery that reads them (expressions, symbols, expansion, diff, builder)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from spec_format.facts import catalog
from spec_format.facts.contract import (
    UNKNOWN,
    ExpressionError,
    available_types,
    diff_tensors,
    evaluate,
    expected_tensors,
    load_contract,
)
from spec_format.parsers.safetensors import read_header
from spec_format.testing.builder import build_checkpoint, tiny_config, to_bytes

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = json.loads(
    (Path(__file__).parent / "data" / "speculators_0_9_tensors.json").read_text()
)
TYPES = list(catalog.current_types())


def test_every_type_has_a_contract():
    assert sorted(available_types()) == sorted(TYPES)


@pytest.mark.parametrize(
    "path", sorted((ROOT / "schema" / "tensors").glob("*.json")), ids=lambda p: p.name
)
def test_contract_files_follow_their_meta_schema(path):
    meta = json.loads((ROOT / "schema" / "tensors" / "contract.schema.json").read_text())
    Draft202012Validator.check_schema(meta)
    if path.name in ("contract.schema.json", "symbols.json"):
        return
    errors = list(Draft202012Validator(meta).iter_errors(json.loads(path.read_text())))
    assert not errors, [e.message for e in errors]
    load_contract(path.stem)  # every expression compiles


@pytest.mark.parametrize("name", sorted(REFERENCE), ids=str)
def test_contract_matches_what_speculators_0_9_writes(name):
    """12 checkpoints saved by the released library (reference/speculators-0.9-tensors.md):
    the contract expects exactly their tensors, shapes and dtype families."""
    ref = REFERENCE[name]
    expected = expected_tensors(ref["config"])
    actual = {n: (d, tuple(s)) for n, (d, s) in ref["tensors"].items()}
    diff = diff_tensors(expected, actual)
    assert diff.ok, diff.format()
    assert {t.name for t in expected.required} <= set(actual)


def test_reference_covers_every_type():
    assert {r["config"]["speculators_model_type"] for r in REFERENCE.values()} == set(TYPES)


# -- expressions ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expr", "env", "value"),
    [
        ("A*Ht", {"A": 3, "Ht": 4096}, 12288),
        ("2*Kc*(H//Gc)", {"Kc": 2, "H": 64, "Gc": 16}, 16),
        ("D < V", {"D": 32000, "V": 151936}, True),
        (
            "H + r if confidence_head_with_markov else H",
            {"H": 64, "r": 8, "confidence_head_with_markov": False},
            64,
        ),
        ("model_type == 'qwen3'", {"model_type": "llama"}, False),
        ("A*Ht", {"A": 3}, UNKNOWN),
        ("r > 0 and markov_head_type == 'gated'", {"r": 0}, False),  # False and ? = False
        ("r > 0 and markov_head_type == 'gated'", {"r": 8}, UNKNOWN),
        ("fc_norm or norm_before_fc", {"norm_before_fc": True}, True),
        ("not fc_norm", {}, UNKNOWN),
        ("H // nH", {"H": 64, "nH": 0}, UNKNOWN),  # no ZeroDivisionError
        ("H * 2", {"H": "4096"}, UNKNOWN),  # a string dimension from a bad config
        ("true", {}, True),
        ("null", {}, None),
    ],
)
def test_expressions(expr, env, value):
    result = evaluate(expr, env)
    assert result is value if value in (UNKNOWN, True, False, None) else result == value


@pytest.mark.parametrize(
    "expr",
    [
        "__import__('os').system('true')",
        "H.real",
        "2**1000",
        "f(H)",
        "lambda: 1",
        "[x for x in H]",
        "H[0]",
        "1.5",
    ],
)
def test_expressions_cannot_run_code(expr):
    with pytest.raises(ExpressionError):
        evaluate(expr, {"H": 1})


# -- symbols and expansion ----------------------------------------------------------------


def test_symbols_follow_the_readers_defaults():
    config = tiny_config("eagle3", {"eagle_aux_hidden_state_layer_ids": None})
    del config["transformer_layer_config"]["head_dim"]
    del config["transformer_layer_config"]["num_key_value_heads"]
    sym = expected_tensors(config).symbols
    assert sym["A"] == 3  # null aux ids: readers assume three
    assert sym["hd"] == 64 // 4 and sym["nKV"] == 4  # H // nH, nKV = nH
    assert sym["Ht"] == 64


def test_target_hidden_size_is_used_for_the_fc_input():
    config = tiny_config("eagle3", {"target_hidden_size": 128})
    fc = expected_tensors(config).tensors["fc.weight"]
    assert fc.shape == (64, 3 * 128)


def test_flags_switch_tensors_on_and_off():
    plain = expected_tensors(tiny_config("eagle3"))
    normed = expected_tensors(
        tiny_config("eagle3", {"fc_norm": True, "transformer_layer_config.model_type": "qwen3"})
    )
    assert "fc_norm.0.weight" in plain.absent and "fc_norm.2.weight" in normed.tensors
    assert "layers.0.self_attn.q_norm.weight" in normed.tensors
    assert "layers.0.self_attn.q_norm.weight" in plain.absent


def test_a_wrongly_typed_config_leaves_symbols_unknown_instead_of_crashing():
    config = tiny_config(
        "dflash", {"transformer_layer_config.hidden_size": "64", "aux_hidden_state_layer_ids": 5}
    )
    exp = expected_tensors(config)
    assert exp.symbols["H"] is UNKNOWN and exp.symbols["A"] is UNKNOWN
    assert exp.tensors["fc.weight"].shape == (None, None)
    assert exp.tensors["fc.weight"].shape_matches((1, 2))  # nothing to judge


def test_absurd_layer_counts_do_not_expand(tmp_path):
    config = tiny_config("dflash", {"transformer_layer_config.num_hidden_layers": 10**9})
    start = time.perf_counter()
    exp = expected_tensors(config)
    assert time.perf_counter() - start < 0.5
    assert exp.match("layers.123456.self_attn.q_proj.weight") is not None  # a pattern
    assert exp.match("layers.01.self_attn.q_proj.weight") is None


def test_diff_reports_each_kind_of_difference():
    config = tiny_config("eagle3")
    actual = {t.name: ("BF16", t.shape) for t in expected_tensors(config).required}
    actual["t2d"] = ("F32", (256,))
    actual["d2t"] = ("I64", (64,))
    actual["fc.weight"] = ("BF16", (64, 256))
    del actual["norm.weight"]
    actual["midlayer.foo"] = ("BF16", (1,))
    actual["fc_norm.0.weight"] = ("BF16", (64,))
    diff = diff_tensors(expected_tensors(config), actual)
    assert [t.name for t in diff.missing] == ["norm.weight"]
    assert diff.unexpected == ["midlayer.foo"]
    assert [a.name for a in diff.ruled_out] == ["fc_norm.0.weight"]
    assert [m.name for m in diff.wrong_shape] == ["fc.weight"]
    assert [m.name for m in diff.wrong_dtype] == ["t2d"]
    text = diff.format()
    assert "fc.weight: [64, 256], expected [H=64, A*Ht=192]" in text
    assert "fc_norm.0.weight (only when fc_norm)" in text


def test_diff_accepts_torch_style_dtypes():
    from spec_format.facts.contract import torch_dtype_name

    assert torch_dtype_name("torch.bfloat16") == "BF16" and torch_dtype_name("bool") == "BOOL"


# -- the builder --------------------------------------------------------------------------


@pytest.mark.parametrize("model_type", TYPES)
def test_builder_writes_what_the_contract_expects_and_the_library_loads(tmp_path, model_type):
    import safetensors.torch

    built = build_checkpoint(tmp_path, tiny_config(model_type), seed=1)
    header = read_header(tmp_path / "model.safetensors")
    assert diff_tensors(expected_tensors(built.config), header.tensors).ok
    tensors = safetensors.torch.load_file(str(tmp_path / "model.safetensors"))
    assert {n: (str(t.dtype), tuple(t.shape)) for n, t in tensors.items()} == {
        n: ({"BF16": "torch.bfloat16", "I64": "torch.int64", "BOOL": "torch.bool"}[d], s)
        for n, (d, s) in built.tensors.items()
    }
    assert json.loads((tmp_path / "config.json").read_text()) == built.config
    if "t2d" in tensors:  # a valid vocabulary map
        t2d, d2t = tensors["t2d"], tensors["d2t"]
        import torch

        assert int(t2d.sum()) == len(d2t)
        assert torch.equal(t2d.nonzero().flatten(), torch.arange(len(d2t)) + d2t)


def test_builder_bf16_rounds_like_torch():
    import numpy as np
    import torch

    values = np.array(
        [1.0, -2.5, 3.14159, 1e-8, 65504.0, float("nan"), float("inf")], dtype=np.float32
    )
    ours = np.frombuffer(to_bytes(values, "BF16"), dtype="<u2")
    theirs = torch.from_numpy(values).to(torch.bfloat16).view(torch.int16).numpy().view("<u2")
    assert list(ours[:5]) == list(theirs[:5]) and list(ours[6:]) == list(theirs[6:])
    assert (ours[5] & 0x7F80) == 0x7F80 and (ours[5] & 0x7F)  # still a NaN


def test_builder_shards_and_sparse_files(tmp_path):
    built = build_checkpoint(tmp_path / "s", tiny_config("dflash"), shards=3)
    index = json.loads((tmp_path / "s" / "model.safetensors.index.json").read_text())
    assert set(index["weight_map"]) == set(built.tensors) and len(built.files) == 3
    big = tiny_config("eagle3", {"transformer_layer_config.vocab_size": 1 << 20})
    sparse = build_checkpoint(tmp_path / "sparse", big, data="sparse")
    path = sparse.files[0]
    assert path.stat().st_size > 100 * 1024 * 1024
    assert path.stat().st_blocks * 512 < 8 * 1024 * 1024  # holes, not data


def test_unknown_refuses_a_truth_value_saying_how_to_test_it():
    with pytest.raises(TypeError) as refused:
        bool(UNKNOWN)
    assert str(refused.value) == "UNKNOWN has no truth value; test `is UNKNOWN` first"
