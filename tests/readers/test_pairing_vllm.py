"""The pairing facts vLLM decides, judged by vLLM's own code.

V008: the positional range is the one vLLM 0.13.0's ``_get_and_verify_max_len`` derives
(executed), for every real verifier config of tests/data/verifiers and for the rope
scalings real configs carry (YaRN from an original range, linear and dynamic factors,
Gemma 3's pre-scaled range). V014: the releases whose EAGLE-3 draft code takes the
verifier's quantization config, read from each installed release's source."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spec_format.facts import pairing
from spec_format.parsers.verifier import verifier_view
from tests.readers import probes
from tests.readers.oracle import BASE_PYTHON, VLLM_CACHE

pytestmark = pytest.mark.readers

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "verifiers"
RELEASE = "0.13.0"  # a release whose derivation takes the plain text config

VARIANTS = {
    "qwen3-yarn-131072": (
        "Qwen3-8B",
        {
            "rope_scaling": {
                "rope_type": "yarn",
                "factor": 4.0,
                "original_max_position_embeddings": 32768,
            }
        },
    ),
    "llama2-dynamic": (
        "Llama-3.1-8B-Instruct",
        {"rope_scaling": {"type": "dynamic", "factor": 2.0}},
    ),
    "llama-linear": (
        "Llama-3.1-8B-Instruct",
        {"rope_scaling": {"rope_type": "linear", "factor": 4.0}},
    ),
    "no-scaling": ("Llama-3.1-8B-Instruct", {"rope_scaling": None}),
}


def _docs() -> dict[str, dict]:
    docs = {f"v4-{p.stem}": json.loads(p.read_text()) for p in (DATA / "v4").glob("*.json")}
    for name, (base, change) in VARIANTS.items():
        docs[name] = {**json.loads((DATA / "v4" / f"{base}.json").read_text()), **change}
    return docs


def _requests(rid: str, root: Path) -> dict[str, dict]:
    """Each verifier config in a folder of its own, for the release's probe process."""
    out = {}
    for name, doc in _docs().items():
        folder = root / "positions" / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "config.json").write_text(json.dumps(doc))
        out[name] = {"positions": str(folder)}
    return out


probes.ask(__name__, _requests, releases=lambda: [f"vllm=={RELEASE}"])


def test_positional_range_is_what_vllm_derives():
    env = VLLM_CACHE / "envs" / RELEASE
    if not (env / ".ok").is_file() or not BASE_PYTHON.exists():
        pytest.skip(f"vLLM {RELEASE} reader env not built (scripts/reader-envs.sh)")
    docs = _docs()
    derived = probes.answers(__name__, f"vllm=={RELEASE}")
    assert set(derived) == set(docs)
    compared = 0
    for name, answer in derived.items():
        if "error" in answer:  # remote code (Kimi-K2): vLLM itself cannot read it
            assert "custom code" in answer["error"], (name, answer)
            continue
        ours = pairing.positional_range(verifier_view(docs[name]).config)[0]
        assert ours == answer["max_model_len"], (name, ours, answer)
        compared += 1
    assert compared >= len(docs) - 1


def test_releases_that_build_the_draft_with_the_verifiers_quantization():
    """V014's table against the draft model code of every installed vLLM release: inside
    the range the EAGLE-3 draft layer takes ``vllm_config.quant_config`` (the verifier's);
    before it no quantization config at all, after it ``get_draft_quant_config`` (its own)."""
    from packaging.version import Version

    (entry,) = pairing.table()["draft_built_with_verifier_quantization"]
    envs = sorted(
        (p for p in (VLLM_CACHE / "envs").glob("*") if (p / ".ok").is_file()),
        key=lambda p: Version(p.name),
    )
    if not envs:
        pytest.skip("no vLLM reader env built (scripts/reader-envs.sh)")
    seen = set()
    for env in envs:
        source = env / "src" / "vllm" / "model_executor" / "models" / "llama_eagle3.py"
        if not source.is_file():
            continue
        text = source.read_text()
        verifiers = "get_draft_quant_config" not in text and (
            "quant_config = vllm_config.quant_config" in text
        )
        version = Version(env.name)
        inside = Version(entry["from"]) <= version < Version(entry["before"])
        assert inside == verifiers, (env.name, entry)
        seen.add(inside)
    assert seen == {True, False}, "the reader envs do not span the range"
