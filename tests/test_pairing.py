"""The draft/verifier pairing (V006, V008-V013) judged against real verifier configs.

Verifier configs are the published ones of the example families, as transformers 4 and 5
save them (tests/data/verifiers/README.md). Each is put in a folder named after its
repository, as ``hf download ORG/NAME --local-dir NAME`` leaves it.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT
from hypothesis import given, settings
from hypothesis import strategies as st

from spec_format.base.report import Severity
from spec_format.facts import pairing
from spec_format.parsers.verifier import verifier_view
from spec_format.rules import registry
from spec_format.runner.validation import ValidateOptions, validate

DATA = ROOT / "tests" / "data" / "verifiers"
EXAMPLES = ROOT / "examples"
SPELLINGS = ("v4", "v5")

#: example -> the verifier its speculators_config.verifier names
PAIRS = {
    "gemma-4-31b-dflash": "gemma-4-31B-it",
    "gpt-oss-20b-eagle3": "gpt-oss-20b",
    "llama-3.1-8b-eagle3-0.2": "Llama-3.1-8B-Instruct",
    "llama-3.1-8b-eagle3-0.9": "Llama-3.1-8B-Instruct",
    "qwen3-32b-dflash2": "Qwen3-32B",
    "qwen3-8b-dflash": "Qwen3-8B",
    "qwen3-8b-dspark": "Qwen3-8B",
    "qwen3-8b-eagle3": "Qwen3-8B",
    "qwen3-8b-peagle": "Qwen3-8B",
    "qwen3-8b-xpress": "Qwen3-8B",
    "qwen3-next-80b-mtp": "Qwen3-Next-80B-A3B-Instruct",
}
#: the only V findings on real pairings, each a true fact about the published draft: the
#: Gemma-4 DFlash draft's rotary range is 131072 while gemma-4-31B-it serves 262144. (The
#: 0.2-era Llama draft's theta 10000 without llama3 scaling is what its training used, so
#: serving it so matches training: no V006.)
EXPECTED = {
    "gemma-4-31b-dflash": {"V008"},
}


def verifier_doc(name: str, spelling: str = "v4") -> dict[str, Any]:
    return json.loads((DATA / spelling / f"{name}.json").read_text())


def example(name: str) -> dict[str, Any]:
    return json.loads((EXAMPLES / name / "config.json").read_text())


def place(tmp_path: Path, folder: str, doc: Any) -> Path:
    path = tmp_path / "verifiers" / folder
    path.mkdir(parents=True, exist_ok=True)
    (path / "config.json").write_text(json.dumps(doc))
    return path


def v_findings(tmp_path: Path, draft: dict | Path, verifier: Path, **opts: Any) -> list:
    if isinstance(draft, dict):
        target = tmp_path / "draft" / "config.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(draft))
        draft = target
    report = validate([draft], ValidateOptions(verifier=str(verifier), **opts))
    found = [f for f in report.files[0].findings if f.rule[0] in "VI"]
    assert not [f for f in found if f.rule == "I012"], found  # never an internal error
    return found


def rules(found: list) -> set[str]:
    return {f.rule for f in found}


# -- reading: both spellings mean the same ---------------------------------------------


def _pairs_of_spellings() -> list[str]:
    return sorted(p.stem for p in (DATA / "v5").glob("*.json") if (DATA / "v4" / p.name).exists())


def _meaning(rope: pairing.Rope) -> tuple:
    return rope.theta, rope.kind, rope.scaling


@pytest.mark.parametrize("name", _pairs_of_spellings())
def test_transformers_4_and_5_configs_read_the_same(name):
    v4 = verifier_view(verifier_doc(name, "v4")).config
    v5 = verifier_view(verifier_doc(name, "v5")).config
    assert _meaning(pairing.rope_of(v4)) == _meaning(pairing.rope_of(v5))
    assert pairing.positional_range(v4)[0] == pairing.positional_range(v5)[0]
    assert pairing.quantization_of(v4) == pairing.quantization_of(v5)
    assert pairing.dtype_of(v4)[0] == pairing.dtype_of(v5)[0]


def test_real_rope_settings_are_read():
    llama = verifier_view(verifier_doc("Llama-3.1-8B-Instruct", "v5")).config
    rope = pairing.rope_of(llama)
    assert (rope.theta, rope.kind, rope.scaling["factor"]) == (500000.0, "llama3", 8.0)
    gemma = verifier_view(verifier_doc("gemma-3-27b-it", "v4")).config
    # text_config omits rope_theta: Gemma 3's default (1e6), linear factor 8 of its own
    assert _meaning(pairing.rope_of(gemma))[:2] == (1000000.0, "linear")
    assert pairing.positional_range(gemma)[0] == 131072  # default, already extended
    gemma5 = verifier_view(verifier_doc("gemma-3-27b-it", "v5")).config
    assert pairing.rope_of(gemma5).where == "rope_parameters.full_attention"
    oss = verifier_view(verifier_doc("gpt-oss-20b", "v4")).config
    assert pairing.positional_range(oss)[0] == 131072
    deepseek = verifier_view(verifier_doc("DeepSeek-V3", "v4")).config  # "type": "yarn"
    assert pairing.rope_of(deepseek).kind == "yarn"
    assert pairing.positional_range(deepseek)[0] == 163840
    assert pairing.quantization_of(deepseek).method == "fp8"
    kimi = verifier_view(verifier_doc("Kimi-K2-Instruct", "v4")).config
    assert pairing.positional_range(kimi)[0] == 131072


def test_missing_keys_take_the_model_types_defaults():
    rope = pairing.rope_of({"model_type": "gpt_oss"})
    assert (rope.theta, rope.kind, rope.scaling["factor"]) == (150000.0, "yarn", 32.0)
    assert pairing.positional_range({"model_type": "qwen3"})[0] == 32768
    assert pairing.rope_of({"model_type": "not-a-model"}).theta is None


# -- no false warning on real pairings -------------------------------------------------


@pytest.mark.parametrize("folder", ["repository", "elsewhere"])
@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.parametrize("name", sorted(PAIRS))
def test_real_pairings_have_only_the_true_findings(tmp_path, name, spelling, folder):
    """Wherever the verifier lies: in a folder named after its repository (as `hf download
    --local-dir NAME` leaves it) or anywhere else (a model cache, `target/`): what the
    pairing is follows from the configs, never from a folder name (V009 on gpt-oss did)."""
    verifier = PAIRS[name]
    if not (DATA / spelling / f"{verifier}.json").exists():
        pytest.skip(f"{verifier} has no {spelling} form (tests/data/verifiers/README.md)")
    where = verifier if folder == "repository" else "target"
    folder = place(tmp_path, where, verifier_doc(verifier, spelling))
    found = v_findings(tmp_path, EXAMPLES / name / "config.json", folder)
    assert rules(found) == EXPECTED.get(name, set()), [f"{f.rule} {f.message}" for f in found]
    assert not [f for f in found if f.severity is Severity.ERROR]


def test_the_old_view_was_the_false_v006():
    """Before the fix, rope_scaling never reached V006: llama3 vs 'default' on the 0.9 draft."""
    found = v_findings(
        Path("/nonexistent"),
        EXAMPLES / "llama-3.1-8b-eagle3-0.9" / "config.json",
        DATA / "v4" / "Llama-3.1-8B-Instruct.json",
    )
    assert "V006" not in rules(found)


# -- each rule: a real failure and its pass --------------------------------------------


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_v006_theta_mismatch_saved_by_transformers_5(tmp_path, spelling):
    doc = verifier_doc("Llama-3.1-8B-Instruct", spelling)
    node = doc.get("rope_parameters") or doc
    node["rope_theta"] = 1000000.0
    found = v_findings(
        tmp_path, example("llama-3.1-8b-eagle3-0.9"), place(tmp_path, "Llama-3.1-8B-Instruct", doc)
    )
    hits = [f for f in found if f.rule == "V006"]
    assert hits and "theta 500000" in hits[0].message and "theta 1e+06" in hits[0].message


def test_v006_scaling_factor_mismatch(tmp_path):
    doc = verifier_doc("gpt-oss-20b", "v5")
    doc["rope_parameters"]["factor"] = 16.0
    found = v_findings(tmp_path, example("gpt-oss-20b-eagle3"), place(tmp_path, "gpt-oss-20b", doc))
    assert "V006" in rules(found)


def test_v008_verifier_served_longer_than_the_draft(tmp_path):
    """Qwen3-8B with the YaRN block its model card gives for 131072 tokens."""
    doc = verifier_doc("Qwen3-8B")
    doc["rope_scaling"] = {
        "rope_type": "yarn",
        "factor": 4.0,
        "original_max_position_embeddings": 32768,
    }
    found = v_findings(tmp_path, example("qwen3-8b-eagle3"), place(tmp_path, "Qwen3-8B", doc))
    hit = next(f for f in found if f.rule == "V008")
    assert "40960" in hit.message and "131072" in hit.message and "--max-model-len" in hit.message


QUANTIZED = [
    ("llama-3.1-8b-eagle3-0.9", "Meta-Llama-3.1-8B-Instruct-AWQ-INT4", "'awq'"),
    ("llama-3.1-8b-eagle3-0.9", "Meta-Llama-3.1-8B-Instruct-quantized.w4a16", "compressed-tensors"),
    ("llama-3.1-8b-eagle3-0.9", "Meta-Llama-3.1-8B-Instruct-bnb-4bit", "bitsandbytes"),
    ("qwen3-8b-eagle3", "Qwen3-8B-FP8", "'fp8'"),
    ("qwen3-8b-dflash", "Qwen3-8B-AWQ", "'awq'"),
]


@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.parametrize(("draft", "verifier", "method"), QUANTIZED)
def test_v009_quantized_export_of_the_named_verifier(tmp_path, draft, verifier, method, spelling):
    folder = place(tmp_path, verifier, verifier_doc(verifier, spelling))
    found = v_findings(tmp_path, example(draft), folder)
    hit = next(f for f in found if f.rule == "V009")
    assert method in hit.message and "lowers acceptance" in hit.message
    assert "runs the draft unquantized, in" in hit.message
    assert "V010" not in rules(found)


def test_v009_not_for_a_verifier_released_quantized(tmp_path):
    """gpt-oss ships MXFP4 and DeepSeek-V3 FP8: the draft was trained against exactly that."""
    found = v_findings(
        tmp_path,
        example("gpt-oss-20b-eagle3"),
        place(tmp_path, "gpt-oss-20b", verifier_doc("gpt-oss-20b")),
    )
    assert not rules(found) & {"V009", "V010"}


@pytest.mark.parametrize(
    ("block", "text"),
    [
        ({"quant_method": "superquant", "bits": 3}, "'superquant'"),
        ({"bits": 4, "group_size": 128}, "with no quant_method"),
        (["awq"], "not an object"),
    ],
)
def test_v010_unknown_quantization_is_named(tmp_path, block, text):
    doc = dict(verifier_doc("Llama-3.1-8B-Instruct"), quantization_config=block)
    found = v_findings(
        tmp_path, example("llama-3.1-8b-eagle3-0.9"), place(tmp_path, "Llama-3.1-8B-Instruct", doc)
    )
    hit = next(f for f in found if f.rule == "V010")
    assert text in hit.message and "cannot tell what it does" in hit.message
    assert "V009" not in rules(found)


def test_v011_float16_verifier_for_a_bfloat16_draft(tmp_path):
    folder = place(
        tmp_path,
        "Meta-Llama-3.1-8B-Instruct-AWQ-INT4",
        verifier_doc("Meta-Llama-3.1-8B-Instruct-AWQ-INT4", "v5"),
    )
    found = v_findings(tmp_path, example("llama-3.1-8b-eagle3-0.9"), folder)
    hit = next(f for f in found if f.rule == "V011")
    assert "bfloat16" in hit.message and "runs in float16" in hit.message


def test_v011_not_for_a_float32_draft(tmp_path):
    """fp32 is the 0.2-era storage dtype, not the dtype the draft was trained against."""
    doc = dict(verifier_doc("Llama-3.1-8B-Instruct"), torch_dtype="float16")
    found = v_findings(
        tmp_path, example("llama-3.1-8b-eagle3-0.2"), place(tmp_path, "Llama-3.1-8B-Instruct", doc)
    )
    assert "V011" not in rules(found)


SPINQUANT_R1 = {
    "config_groups": {
        "R1": {
            "type": "hadamard",
            "apply": [
                {"targets": ["re:.*embed_tokens$", "re:.*o_proj$"], "location": "weight_output"}
            ],
        }
    }
}


@pytest.mark.parametrize("how", ["name", "quarot", "transform_config", "flag"])
def test_v012_rotated_export(tmp_path, how):
    doc = verifier_doc("Meta-Llama-3.1-8B-Instruct-quantized.w4a16")
    folder = "Llama-3.1-8B-Instruct-w4a16"
    if how == "name":
        folder = "Llama-3.1-8B-Instruct-SpinQuant-INT4"
    elif how == "quarot":  # the folder name of vllm-ascend#5974's export
        doc.pop("quantization_config")
        folder = "Llama-3.1-8B-Instruct-w8a8-QuaRot"
    elif how == "transform_config":
        doc["quantization_config"]["transform_config"] = SPINQUANT_R1
    else:
        doc["quantization_args"] = {"group_size": 32, "spinquant": True}  # a flag in a block
    found = v_findings(tmp_path, example("llama-3.1-8b-eagle3-0.9"), place(tmp_path, folder, doc))
    hit = next(f for f in found if f.rule == "V012")
    assert "another basis" in hit.message


def test_v012_not_for_online_rotations(tmp_path):
    """QuIP-style transforms inside each linear layer leave the residual stream unchanged."""
    doc = verifier_doc("Meta-Llama-3.1-8B-Instruct-quantized.w4a16")
    doc["quantization_config"]["transform_config"] = {
        "config_groups": {
            "v": {"type": "hadamard", "apply": [{"targets": ["Linear"], "location": "input"}]}
        }
    }
    found = v_findings(
        tmp_path, example("llama-3.1-8b-eagle3-0.9"), place(tmp_path, "Llama-3.1-8B-w4a16", doc)
    )
    assert "V012" not in rules(found)


def test_v013_another_size_than_the_named_verifier(tmp_path):
    doc = copy.deepcopy(verifier_doc("Qwen3-8B"))
    folder = place(tmp_path, "Qwen3-14B", doc)
    found = v_findings(tmp_path, example("qwen3-8b-eagle3"), folder)
    hit = next(f for f in found if f.rule == "V013")
    assert "8B" in hit.message and "14B" in hit.message


def test_v013_named_local_verifier_compared_in_full(tmp_path):
    named = place(tmp_path, "Llama-3.1-8B-Instruct", verifier_doc("Llama-3.1-8B-Instruct"))
    given = place(
        tmp_path,
        "Llama-3.1-8B-Instruct-AWQ",
        verifier_doc("Meta-Llama-3.1-8B-Instruct-AWQ-INT4"),
    )
    draft = example("llama-3.1-8b-eagle3-0.9")
    draft["speculators_config"]["verifier"]["name_or_path"] = str(named)
    found = v_findings(tmp_path, draft, given)
    hit = next(f for f in found if f.rule == "V013")
    assert "quantization" in hit.message and "'awq'" in hit.message
    # the same folder named and given: nothing to compare
    assert "V013" not in rules(v_findings(tmp_path, draft, named))


def test_every_pairing_rule_has_a_page_naming_the_failure():
    for rule in registry.RULES:
        if rule.id[0] == "V" and int(rule.id[1:]) >= 8:
            page = ROOT / "spec_format" / "rules" / "docs" / f"{rule.id}.md"
            text = page.read_text()
            assert "## Why it matters" in text and "Prevents:" in text, rule.id


# -- hostile verifier configs: read, never a traceback ---------------------------------

HOSTILE: list[Any] = [
    {"rope_parameters": [1, 2]},
    {"rope_parameters": "yarn"},
    {"rope_parameters": {"full_attention": 5, "sliding_attention": {"rope_theta": "x"}}},
    {"rope_parameters": {"full_attention": {"rope_type": ["yarn"], "factor": 1e400}}},
    {"rope_parameters": {}},
    {"rope_scaling": "llama3", "rope_theta": "big"},
    {"rope_scaling": {"type": "yarn", "factor": -4, "original_max_position_embeddings": 0}},
    {"rope_scaling": {"rope_type": "yarn", "factor": 10**400}},
    {"rope_scaling": {"rope_type": "dynamic", "factor": True}},
    {"max_position_embeddings": -1},
    {"max_position_embeddings": 10**400},
    {"max_position_embeddings": True, "model_type": ["llama"]},
    {"quantization_config": "awq"},
    {"quantization_config": {"quant_method": 5}},
    {"quantization_config": {"quant_method": "AWQ", "bits": "4"}},
    {"quantization_config": {"quant_method": "compressed-tensors", "config_groups": [1]}},
    {"quantization_config": {"quant_method": "compressed-tensors", "transform_config": []}},
    {
        "quantization_config": {
            "quant_method": "compressed-tensors",
            "transform_config": {"config_groups": {"R1": {"apply": [{"targets": "embed"}, 3]}}},
        }
    },
    {"compression_config": {"quant_method": "sparse-quantized"}},
    {"dtype": 16, "torch_dtype": ["bfloat16"]},
    {"text_config": [], "llm_config": "x"},
    {"text_config": {"text_config": {"rope_parameters": None}}},
    {"thinker_config": {"text_config": {"rope_scaling": {"factor": "8"}}}},
    {"language_config": {"model_type": "deepseek_v3"}},
    {"spinquant": "yes", "quantization_args": {"spinquant": []}},
    # shapes real configs have had
    {  # Phi-3 longrope (lists of factors)
        "rope_scaling": {"type": "longrope", "long_factor": [1.0] * 48, "short_factor": [1.0] * 48},
        "original_max_position_embeddings": 4096,
    },
    {"rope_scaling": {"type": "dynamic", "factor": 2.0}},  # Llama-2 era
    {"n_embd": 4096, "n_layer": 32, "n_head": 32, "hidden_size": None},  # GPT-2 spelling
    {  # Qwen2.5-VL, transformers 4
        "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]},
        "vision_config": {"depth": 32},
    },
    {  # Qwen2.5-VL, transformers 5
        "rope_parameters": {"mrope_section": [16, 24, 24], "rope_type": "default"},
        "rope_scaling": None,
    },
    {  # Llama-3.2-Vision: text config with cross-attention layers
        "text_config": {"cross_attention_layers": [3, 8], "rope_scaling": {"rope_type": "llama3"}},
    },
    {"rope_parameters": {"rope_theta": 500000.0}, "rope_theta": 10000.0},  # both spellings
]


@pytest.mark.parametrize("extra", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_verifier_configs_are_read(tmp_path, extra):
    doc = {**verifier_doc("Llama-3.1-8B-Instruct"), **extra}
    for key, value in extra.items():
        if value is None:
            doc.pop(key)
    found = v_findings(tmp_path, example("llama-3.1-8b-eagle3-0.9"), place(tmp_path, "v", doc))
    assert all(f.message for f in found)


def test_a_bare_config_reads_with_defaults_only(tmp_path):
    found = v_findings(
        tmp_path, example("qwen3-8b-eagle3"), place(tmp_path, "v", {"model_type": "qwen3"})
    )
    assert "V008" not in rules(found)  # qwen3's default 32768 < the draft's 40960


# -- which checkpoint a --verifier path names ------------------------------------------


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("hf://openai/gpt-oss-20b", "openai/gpt-oss-20b"),
        ("hf://openai/gpt-oss-20b@main/config.json", "openai/gpt-oss-20b"),
        (
            "/root/.cache/huggingface/hub/models--openai--gpt-oss-20b/snapshots/6cee5e81/"
            "config.json",
            "openai/gpt-oss-20b",
        ),
        ("models/gpt-oss-20b/config.json", "gpt-oss-20b"),
        ("gpt-oss-20b", "gpt-oss-20b"),
    ],
)
def test_identity_of_a_verifier_path(path, expected):
    assert pairing.identity(path) == expected
    assert pairing.same_checkpoint("openai/gpt-oss-20b", pairing.identity(path))


def test_a_released_quantized_verifier_in_the_hub_cache_is_the_named_one(tmp_path):
    snapshot = tmp_path / "hub" / "models--openai--gpt-oss-20b" / "snapshots" / "6cee5e81"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text(json.dumps(verifier_doc("gpt-oss-20b", "v5")))
    found = v_findings(tmp_path, example("gpt-oss-20b-eagle3"), snapshot)
    assert not rules(found)
    # the same config in a folder of another name is the same release: its model_type and
    # method say so (the folder name did, and V009 fired on a correct pairing)
    other = place(tmp_path, "verifier", verifier_doc("gpt-oss-20b", "v5"))
    assert not rules(v_findings(tmp_path, example("gpt-oss-20b-eagle3"), other))
    # re-quantized with another method, it is not the release: V009 asks, naming the method
    requantized = verifier_doc("gpt-oss-20b", "v5")
    requantized["quantization_config"] = {"quant_method": "awq", "bits": 4}
    again = place(tmp_path, "requantized", requantized)
    hit = next(f for f in v_findings(tmp_path, example("gpt-oss-20b-eagle3"), again))
    assert hit.rule == "V009" and "'awq'" in hit.message


@pytest.mark.parametrize(
    ("name", "tag"),
    [
        ("meta-llama/Llama-3.1-8B-Instruct", "8b"),
        ("Qwen/Qwen3-Next-80B-A3B-Instruct", "80b-a3b"),
        ("google/gemma-4-31B-it", "31b"),
        ("google/gemma-4-E2B-it", None),
        ("moonshotai/Kimi-K2-Instruct", None),
        ("Qwen/Qwen2.5-0.5B", "0.5b"),
    ],
)
def test_size_tag(name, tag):
    assert pairing.size_tag(name) == tag


# -- any JSON at the keys the pairing reads: read, never raised -------------------------

_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**400), max_value=10**400)
    | st.floats(allow_nan=False)
    | st.sampled_from(["yarn", "llama3", "default", "awq", "bfloat16", "embed_tokens", ""]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "rope_type",
                    "type",
                    "rope_theta",
                    "factor",
                    "original_max_position_embeddings",
                    "full_attention",
                    "quant_method",
                    "bits",
                    "config_groups",
                    "transform_config",
                    "apply",
                    "targets",
                    "weights",
                    "spinquant",
                ]
            ),
            inner,
            max_size=4,
        )
    ),
    max_leaves=12,
)
_KEYS = [
    "rope_parameters",
    "rope_scaling",
    "rope_theta",
    "partial_rotary_factor",
    "max_position_embeddings",
    "model_type",
    "quantization_config",
    "compression_config",
    "dtype",
    "torch_dtype",
    "quantization_args",
]


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(_KEYS), _JSON, max_size=6), st.text(max_size=20))
def test_pairing_readers_take_any_json(doc, name):
    pairing.rope_of(doc).describe()
    pairing.positional_range(doc)
    pairing.dtype_of(doc)
    quant = pairing.quantization_of(doc)
    if quant is not None:
        quant.describe()
    pairing.rotation_of(doc, name)
    pairing.size_tag(name)
    pairing.identity(name)


# -- V014: only reachable with a named engine release ----------------------------------


@pytest.mark.parametrize(
    ("version", "fires"), [("0.10.2", False), ("0.11.0", True), ("0.11.1", False)]
)
def test_v014_engine_quantizes_the_draft(version, fires):
    """vLLM 0.11.0 is not in the reader table yet (--engine refuses it), so the rule is run
    on a context naming it, as the engine would once the table covers it."""
    from spec_format.facts.readers import Release
    from spec_format.rules.base import Context
    from spec_format.rules.pairing import EngineQuantizesDraft

    info = verifier_view(verifier_doc("Meta-Llama-3.1-8B-Instruct-AWQ-INT4"))
    ctx = Context(
        config=example("llama-3.1-8b-eagle3-0.9"),
        config_path=EXAMPLES / "llama-3.1-8b-eagle3-0.9" / "config.json",
        model_type="eagle3",
        format_version="0.9",
        verifier=info.config,
        options={"verifier_info": info, "engines": (Release("vllm", version, {}),)},
    )
    hits = list(EngineQuantizesDraft().check(ctx))
    assert bool(hits) == fires
    if fires:
        assert "vllm==0.11.0" in hits[0].message and "vllm>=0.11.1" in hits[0].message
    unquantized = verifier_view(verifier_doc("Llama-3.1-8B-Instruct"))
    ctx.options["verifier_info"] = unquantized
    assert not list(EngineQuantizesDraft().check(ctx))
