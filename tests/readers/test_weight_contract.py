"""The executed weight-contract blocks of the reader table against the release's own drafter.

For every vLLM group whose ``models.eagle3.weights`` block says ``executed``, tiny EAGLE-3
drafts written by spec_format.testing (the plain draft, each optional norm, four aux layers, a
Qwen3 decoder layer with and without ``q_norm``/``k_norm``, per-head norms on a Llama layer, a
stray ``input_norm``) are loaded by the release itself (weights_probe.py: the release's
``EngineArgs``, registry, drafter class and ``DefaultModelLoader`` on CPU). What the rules
predict from the block (``spec_format.rules.engine_weights.predict``: C020, W025) must be what
happened: the same failure, the same tensors skipped without an error, the same modules left
at their initial value, the drafter class the block names for the decoder family.
"""

from __future__ import annotations

import json
import os
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
    "llama-with-qk-norm": ({}, {"extra": {n: ("BF16", (32,)) for n in QK}}),
    "stray-input-norm": ({}, {"extra": {"input_norm.weight": ("BF16", (192,))}}),
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


def _executed() -> list[str]:
    out = []
    for rid in readers.representatives():
        rel = readers.release(*rid.split("=="))
        block = rel.data.get("models", {}).get("eagle3", {}).get("weights") or {}
        if rel.name == "vllm" and block.get("status") == "executed":
            out.append(rid)
    return out


@cache
def _drafts(root: Path) -> dict[str, tuple[dict, Path, Path]]:
    """name -> (config, draft dir, verifier dir), written once under ``root``."""
    root = root / "weight-contract"
    out = {}
    for seed, (name, (overrides, kw)) in enumerate(CASES.items()):
        # a hub id: 0.33 refuses a local verifier in the draft (the probe passes it apart)
        config = tiny_config(
            "eagle3", {"speculators_config.verifier.name_or_path": "tiny/verifier", **overrides}
        )
        build_checkpoint(root / name, config, seed=seed, **kw)
        layer = config["transformer_layer_config"]
        verifier = root / f"verifier-{layer['model_type']}"
        verifier.mkdir(exist_ok=True)
        arch = "Qwen3ForCausalLM" if layer["model_type"] == "qwen3" else "LlamaForCausalLM"
        text = {k: layer[k] for k in VERIFIER_KEYS}
        text.update(num_hidden_layers=8, architectures=[arch], tie_word_embeddings=False)
        (verifier / "config.json").write_text(json.dumps(text), encoding="utf-8")
        out[name] = (config, root / name, verifier)
    return out


def _requests(rid: str, root: Path) -> dict[str, dict]:
    """What every executed release is asked: each draft with its verifier (weights_probe.py's
    request; the release's probe process answers them after its config readings)."""
    return {
        name: {"draft": str(draft), "verifier": str(verifier)}
        for name, (_, draft, verifier) in _drafts(root).items()
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
    """rid -> name -> what the release did (tests/readers/probes.py: every release the
    session's selected tests ask about, once, two at a time)."""

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


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("rid", _executed())
def test_the_release_loads_as_its_block_predicts(rid, case, drafts, answers):
    rel = readers.release(*rid.split("=="))
    weights = rel.data["models"]["eagle3"]["weights"]
    config, draft, _ = drafts[case]
    names = _header_names(draft)
    got = answers(rid)[case]
    where = f"schema/readers/vllm-{rel.version}.json models.eagle3.weights, case {case}"
    assert got["stage"] in (None, "load"), f"{where}: the release stopped at {got}"
    family = config["transformer_layer_config"]["model_type"]
    assert got["class"] == weights["classes"].get(family), f"{where}: built {got['class']}"
    load = predict(rel, weights, "eagle3", config, names)
    if load.fails:
        tensor = load.fails[0][0]
        expected = weights["shape_error"] if tensor == "fc.weight" else weights["unknown_tensor"]
        assert got["stage"] == "load", f"{where}: predicted a failure on {tensor}, it loaded"
        assert got["error"].startswith(expected.split("...")[0]), f"{where}: {got['error']}"
        if tensor != "fc.weight":
            module = tensor.rsplit(".", 1)[0]
            assert module in got["error"], f"{where}: {got['error']} does not name {module}"
        return
    assert got["stage"] is None, f"{where}: predicted a load, it failed: {got['error']}"
    assert set(got["dropped"]) == set(load.dropped), f"{where}: skipped {got['dropped']}"
    initial = {n.removeprefix("model.") for n in got["initial"]}
    assert initial == set(load.initial), f"{where}: left at initial values {initial}"
    assert set(got["loaded"]) == names - set(load.dropped), f"{where}: loaded {got['loaded']}"


def _header_names(draft) -> set[str]:
    data = draft.joinpath("model.safetensors").read_bytes()
    size = int.from_bytes(data[:8], "little")
    return set(json.loads(data[8 : 8 + size])) - {"__metadata__"}
