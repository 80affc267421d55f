"""The executed weight-contract blocks of the reader table against the release's own drafter.

For every vLLM group and draft type whose ``models.<type>.weights`` block says ``executed``,
tiny drafts of that type written by spec_format.testing are loaded by the release itself
(weights_probe.py: the release's ``EngineArgs``, registry, draft class and
``DefaultModelLoader`` on CPU; one probe process per release loads the drafts of every type).
EAGLE-3 (``CASES``): the plain draft, each optional norm, four aux layers on a Llama and on a
Qwen3 decoder layer (each class sizes ``fc`` its own way), a Qwen3 decoder layer with and
without ``q_norm``/``k_norm``, per-head norms on a Llama layer, a stray
``input_norm``; the other types: ``TYPE_CASES``. What the rules predict from the block
(``spec_format.rules.engine_weights.predict``: C020, W025) must be what happened: the same
failure, the same tensors skipped without an error, the same modules left at their initial
value (less the block's ``unfilled``), the draft class the block names for the decoder family.
"""

from __future__ import annotations

import json
import os
import re
from functools import cache
from pathlib import Path

import pytest

from spec_format.facts import readers
from spec_format.rules.engine_weights import predict
from spec_format.testing.builder import build_checkpoint, tiny_config
from tests.readers import oracle, probes

pytestmark = pytest.mark.readers

QK = ("layers.0.self_attn.q_norm.weight", "layers.0.self_attn.k_norm.weight")
QWEN3 = {"transformer_layer_config.model_type": "qwen3"}
#: name -> (config overrides, builder keywords)
CASES = {
    "plain": ({}, {}),
    "fc-norm": ({"fc_norm": True}, {}),
    "norm-before-fc": ({"norm_before_fc": True}, {}),
    "four-aux": ({"eagle_aux_hidden_state_layer_ids": [1, 2, 4, 5]}, {}),
    "qwen3": (QWEN3, {}),
    "qwen3-without-qk-norm": (QWEN3, {"drop": QK}),
    # the Qwen3-layer class (0.24 on) sizes fc from the ids, the Llama one for three
    "qwen3-four-aux": ({**QWEN3, "eagle_aux_hidden_state_layer_ids": [1, 2, 4, 5]}, {}),
    "llama-with-qk-norm": ({}, {"extra": {n: ("BF16", (32,)) for n in QK}}),
    "stray-input-norm": ({}, {"extra": {"input_norm.weight": ("BF16", (192,))}}),
}
#: DFlash's tiny draft has two Qwen3 decoder layers (q_norm/k_norm whatever the family)
DFLASH_QK = tuple(f"layers.{i}.self_attn.{n}_norm.weight" for i in (0, 1) for n in "qk")
DFLASH_CASES = {
    "plain": ({}, {}),
    "four-aux": ({"aux_hidden_state_layer_ids": [1, 2, 4, 5]}, {}),
    "without-qk-norm": ({}, {"drop": DFLASH_QK}),
    "llama-layer": ({"transformer_layer_config.model_type": "llama"}, {}),
    "attention-bias": ({"transformer_layer_config.attention_bias": True}, {}),
    "shared-embed": ({}, {"drop": ("embed_tokens.weight",)}),
    "full-vocab": ({"draft_vocab_size": 256}, {}),
    "stray-input-norm": ({}, {"extra": {"input_norm.weight": ("BF16", (64,))}}),
}
#: P-EAGLE is served by the EAGLE-3 classes with parallel drafting (mask_hidden in a buffer)
PEAGLE_CASES = {
    **{k: v for k, v in CASES.items() if k not in ("llama-with-qk-norm", "stray-input-norm")},
    "without-mask-hidden": ({}, {"drop": ("mask_hidden",)}),
    "stray-input-norm": CASES["stray-input-norm"],
}
#: DSpark: the DFlash backbone plus a Markov head and an optional confidence head
DSPARK_CONFIDENCE = ("confidence_head.proj.weight", "confidence_head.proj.bias")
DSPARK_CASES = {
    "plain": ({}, {}),
    "four-aux": ({"aux_hidden_state_layer_ids": [1, 2, 4, 5]}, {}),
    "without-qk-norm": ({}, {"drop": DFLASH_QK}),
    "no-confidence-head": (
        {"enable_confidence_head": False, "confidence_head_with_markov": False},
        {},
    ),
    "confidence-head-missing": ({}, {"drop": DSPARK_CONFIDENCE}),
    "shared-embed": ({}, {"drop": ("embed_tokens.weight",)}),
    "full-vocab": ({"draft_vocab_size": 256}, {}),
    "stray-input-norm": ({}, {"extra": {"input_norm.weight": ("BF16", (64,))}}),
    # a reduced-vocabulary draft without its own head or d2t: 0.33 refuses it, 0.34 loads it
    # and leaves the parameter at its initial value
    "without-lm-head": ({}, {"drop": ("lm_head.weight",)}),
    "without-d2t": ({}, {"drop": ("d2t",)}),
}
#: DFlash2: DFlash plus grouped convolutions and a candidate selector (full vocabulary)
DFLASH2_CASES = {
    "plain": ({}, {}),
    "four-aux": ({"aux_hidden_state_layer_ids": [1, 2, 4, 5]}, {}),
    "without-qk-norm": ({}, {"drop": DFLASH_QK}),
    "shared-embed": ({}, {"drop": ("embed_tokens.weight",)}),
    "stray-input-norm": ({}, {"extra": {"input_norm.weight": ("BF16", (64,))}}),
    # layers without RoPE: the class the block's layer_fields names (0.34), or the plain one
    "no-rope-layers": ({"transformer_layer_config.no_rope_layers": [1]}, {}),
}
#: speculators_model_type -> name -> (config overrides, builder keywords)
TYPE_CASES = {
    "eagle3": CASES,
    "dflash": DFLASH_CASES,
    "peagle": PEAGLE_CASES,
    "dspark": DSPARK_CASES,
    "dflash2": DFLASH2_CASES,
}
VERIFIER_KEYS = (
    "model_type",
    "vocab_size",
    "hidden_size",
    "intermediate_size",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "rms_norm_eps",
    "max_position_embeddings",
)


@cache
def _executed(model_type: str) -> tuple[str, ...]:
    out = []
    for rid in readers.representatives():
        rel = readers.release(*rid.split("=="))
        block = rel.data.get("models", {}).get(model_type, {}).get("weights") or {}
        if rel.name == "vllm" and block.get("status") == "executed":
            out.append(rid)
    return tuple(out)


@cache
def _drafts(root: Path) -> dict[tuple[str, str], tuple[dict, Path, Path]]:
    """(type, name) -> (config, draft dir, verifier dir), written once under ``root``."""
    root = root / "weight-contract"
    out = {}
    for model_type, cases in TYPE_CASES.items():
        for seed, (name, (overrides, kw)) in enumerate(cases.items()):
            # a hub id: 0.33 refuses a local verifier in the draft (the probe passes it apart)
            config = tiny_config(
                model_type,
                {"speculators_config.verifier.name_or_path": "tiny/verifier", **overrides},
            )
            draft = root / model_type / name
            build_checkpoint(draft, config, seed=seed, **kw)
            layer = config["transformer_layer_config"]
            verifier = root / f"verifier-{layer['model_type']}"
            verifier.mkdir(exist_ok=True)
            arch = "Qwen3ForCausalLM" if layer["model_type"] == "qwen3" else "LlamaForCausalLM"
            text = {k: layer[k] for k in VERIFIER_KEYS}
            text.update(num_hidden_layers=8, architectures=[arch], tie_word_embeddings=False)
            (verifier / "config.json").write_text(json.dumps(text), encoding="utf-8")
            out[model_type, name] = (config, draft, verifier)
    return out


def _requests(rid: str, root: Path) -> dict[tuple[str, str], dict]:
    """What a release is asked: each draft of every type whose block it executes, with its
    verifier (weights_probe.py's request; the release's probe process answers them after its
    config readings)."""
    return {
        key: {"draft": str(draft), "verifier": str(verifier)}
        for key, (_, draft, verifier) in _drafts(root).items()
        if rid in _executed(key[0])
    }


probes.ask(__name__, _requests)


@pytest.fixture(scope="module")
def drafts():
    return _drafts(probes.directory())


def _ready(rid: str) -> bool:
    env = oracle.env_path(readers.release(*rid.split("==")))
    return (env / ".model-ok").is_file() and oracle.BASE_PYTHON.exists()


@pytest.fixture(scope="module")
def answers():
    """rid -> (type, name) -> what the release did (tests/readers/probes.py: every release
    the session's selected tests ask about, once, two at a time)."""

    def get(rid: str) -> dict:
        if not _ready(rid):
            reason = (
                f"no model layer for {rid} in {oracle.env_path(readers.release(*rid.split('==')))}"
            )
            reason += " (scripts/reader-envs.sh builds it)"
            if os.environ.get("CI") == "true":
                pytest.fail(reason)
            pytest.skip(reason)
        return probes.answers(__name__, rid)

    return get


@pytest.mark.parametrize(
    ("rid", "model_type", "case"),
    [
        pytest.param(rid, t, case, id=f"{rid}-{t}-{case}")
        for t, cases in TYPE_CASES.items()
        for rid in _executed(t)
        for case in cases
    ],
)
def test_the_release_loads_as_its_block_predicts(rid, model_type, case, drafts, answers):
    rel = readers.release(*rid.split("=="))
    weights = rel.data["models"][model_type]["weights"]
    config, draft, _ = drafts[model_type, case]
    names = _header_names(draft)
    got = answers(rid)[model_type, case]
    where = f"schema/readers/vllm-{rel.version}.json models.{model_type}.weights, case {case}"
    assert got["stage"] in (None, "load"), f"{where}: the release stopped at {got}"
    assert got["class"] == _class(rel, model_type, config), f"{where}: built {got['class']}"
    load = predict(rel, weights, model_type, config, names)
    if load.fails:
        tensor = load.fails[0][0]
        expected = weights["shape_error"] if tensor == "fc.weight" else weights["unknown_tensor"]
        if tensor not in names:
            expected = weights["required"][tensor]
        assert got["stage"] == "load", f"{where}: predicted a failure on {tensor}, it loaded"
        assert got["error"].startswith(expected.split("...")[0]), f"{where}: {got['error']}"
        if tensor != "fc.weight":
            # the error quotes the tensor, or the first module on its path the release lacks
            quoted = re.search(r"'([^']+)'", got["error"])
            named = quoted.group(1).removeprefix("model.") if quoted else None
            assert tensor.rsplit(".", 1)[0] in got["error"] or (named and named in tensor), (
                f"{where}: {got['error']} does not name {tensor} or a module of it"
            )
        return
    assert got["stage"] is None, f"{where}: predicted a load, it failed: {got['error']}"
    assert set(got["dropped"]) == set(load.dropped), f"{where}: skipped {got['dropped']}"
    # what the release fills from elsewhere, unless the block predicts it stays initial
    unfilled = set(weights.get("unfilled", {})) - set(load.initial)
    initial = {PARAMS.get(n, n) for n in (n.removeprefix("model.") for n in got["initial"])}
    initial -= unfilled
    assert initial == set(load.initial), f"{where}: left at initial values {initial}"
    assert set(got["loaded"]) == names - set(load.dropped), f"{where}: loaded {got['loaded']}"


#: parameter -> the draft tensor it holds, where the names differ (DSpark's d2t)
PARAMS = {"draft_id_to_target_id": "d2t"}


def _class(rel: readers.Release, model_type: str, config: dict) -> str | None:
    """The drafter class the table says the release builds: the one a non-empty layer field
    names (``layer_fields``), else the one of the decoder family."""
    layer = config["transformer_layer_config"]
    for name, row in rel.data["models"][model_type].get("layer_fields", {}).items():
        if layer.get(name) and "class" in row:
            return row["class"]
    return rel.data["models"][model_type]["weights"]["classes"].get(layer["model_type"])


def _header_names(draft) -> set[str]:
    data = draft.joinpath("model.safetensors").read_bytes()
    size = int.from_bytes(data[:8], "little")
    return set(json.loads(data[8 : 8 + size])) - {"__metadata__"}
