"""Hostile checkpoints end to end: random damage to real tiny checkpoints and their configs
never makes the weights, data or verifier rules crash (exit 70) or hang."""

from __future__ import annotations

import json
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spec_format.facts import catalog
from spec_format.runner.validation import ValidateOptions, validate
from spec_format.testing.builder import build_checkpoint, tiny_config

TYPES = list(catalog.current_types())
JUNK = [None, -1, 0, 10**12, "64", [], {}, True, 3.5, [2, "x"], [10**9, -5]]
CONFIG_PATHS = [
    "draft_vocab_size",
    "target_hidden_size",
    "eagle_aux_hidden_state_layer_ids",
    "aux_hidden_state_layer_ids",
    "block_size",
    "markov_rank",
    "xpress_rank",
    "conv_group_size",
    "torch_dtype",
    "transformer_layer_config.hidden_size",
    "transformer_layer_config.vocab_size",
    "transformer_layer_config.num_hidden_layers",
    "transformer_layer_config.num_attention_heads",
    "transformer_layer_config.head_dim",
    "transformer_layer_config.model_type",
    "speculators_config.verifier.architectures",
]
DTYPES = ["BOOL", "I64", "I32", "U8", "F32", "BF16", "F16"]


def damage(tmp_path, seed: int):
    r = random.Random(seed)
    model_type = r.choice(TYPES)
    config = tiny_config(model_type)
    names = list(build_checkpoint(tmp_path / "probe", config, data="zeros").tensors)
    kwargs: dict = {"drop": r.sample(names, r.randint(0, 2))}
    rest = [n for n in names if n not in kwargs["drop"]]
    picked = r.sample(rest, min(len(rest), r.randint(0, 3)))
    kwargs["reshape"] = {
        n: tuple(r.randint(0, 70) for _ in range(r.randint(0, 3))) for n in picked[:1]
    }
    kwargs["retype"] = {n: r.choice(DTYPES) for n in picked[1:2]}
    kwargs["nan"] = picked[2:3]
    if r.random() < 0.3:
        kwargs["shards"] = r.randint(2, 3)
    built = build_checkpoint(tmp_path / "ckpt", config, **kwargs)
    for _ in range(r.randint(0, 3)):
        node, *path = r.choice(CONFIG_PATHS).split(".")
        target = config
        for part in [node, *path][:-1]:
            target = target.setdefault(part, {}) if isinstance(target, dict) else {}
        if isinstance(target, dict):
            target[([node, *path])[-1]] = r.choice(JUNK)
    (built.path / "config.json").write_text(json.dumps(config))
    verifier = {
        "hidden_size": r.choice([64, 32, "64"]),
        "num_hidden_layers": r.choice([8, 2, None]),
        "vocab_size": r.choice([256, 100]),
        "rope_theta": r.choice([10000.0, "x"]),
        "architectures": r.choice([["LlamaForCausalLM"], [], "x"]),
    }
    (tmp_path / "verifier.json").write_text(json.dumps(verifier))
    return built.path, tmp_path / "verifier.json"


@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(st.integers(0, 2**32))
def test_damaged_checkpoints_never_crash_the_rules(tmp_path_factory, seed):
    tmp_path = tmp_path_factory.mktemp("hostile")
    path, verifier = damage(tmp_path, seed)
    report = validate(
        [str(path)], ValidateOptions(deep=True, scan_weights=True, verifier=str(verifier))
    )
    assert report.exit_code in (0, 1, 3)
    for fr in report.files:
        for f in fr.findings:
            assert f.message and "UNKNOWN" not in f.message, f
